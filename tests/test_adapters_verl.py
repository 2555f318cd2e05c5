"""verl reward module on rows written by the parquet exporter (read back as verl's dataset reads them)."""
from __future__ import annotations

import pytest
from conftest import need_module

from se_gym.integrations import export
from se_gym.integrations import verl as verl_reward
from se_gym.library import mint
from se_gym.tasks import builtin_tasks, render_messages

LIB = mint(0)


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """Exported RL rows for 4 tasks, read back from parquet, with the responses to score."""
    pq = need_module("pyarrow.parquet", "the export extra (pyarrow) writes verl's parquet")
    tasks = builtin_tasks("train", seed=0)[:4]
    trajs = [{"task": t, "response": "", "prompt": render_messages(t, LIB, book="closed")} for t in tasks]
    path = tmp_path_factory.mktemp("verl") / "rl.parquet"
    assert export.to_verl_parquet(trajs, path, kind="rl", library=LIB, profile="strict") == 4
    table = pq.read_table(path).to_pylist()
    return tasks, table


def _ok(task):
    return f"```python\n{task.library_solution}\n```"


def test_compute_score_per_row_reads_exported_rows(rows):
    tasks, table = rows
    assert table[0]["extra_info"]["library"] == "seed:0" and table[0]["extra_info"]["profile"] == "strict"
    # right answer, no code, another task's answer, right answer with a think block
    responses = [_ok(tasks[0]), "I do not know.", _ok(tasks[0]), "<think>hmm</think>" + _ok(tasks[3])]
    scores = [
        verl_reward.compute_score(r["data_source"], resp, r["reward_model"]["ground_truth"], r["extra_info"])
        for r, resp in zip(table, responses)
    ]
    assert [s["score"] for s in scores] == [1.0, 0.0, 0.0, 1.0]
    assert [s["acc"] for s in scores] == [1.0, 0.0, 0.0, 1.0]
    assert all(s["infrastructure"] == 0.0 for s in scores)


def test_library_keyword_overrides_the_row(rows):
    tasks, table = rows
    r = table[0]
    # the same right answer is wrong against another library's names
    s = verl_reward.compute_score(r["data_source"], _ok(tasks[0]), r["reward_model"]["ground_truth"], r["extra_info"], library="seed:1")
    assert s["score"] == 0.0


def test_batched_variant_matches_per_row(rows):
    tasks, table = rows
    responses = [_ok(tasks[0]), _ok(tasks[1]), "```python\ndef solve(:\n```", _ok(tasks[2])]
    batch = verl_reward.compute_score_batch(
        data_sources=[r["data_source"] for r in table],
        solution_strs=responses,
        ground_truths=[r["reward_model"]["ground_truth"] for r in table],
        extra_infos=[r["extra_info"] for r in table],
    )
    single = [verl_reward.compute_score(r["data_source"], s, r["reward_model"]["ground_truth"], r["extra_info"]) for r, s in zip(table, responses)]
    assert batch == single
    assert [b["score"] for b in batch] == [1.0, 1.0, 0.0, 0.0]


def test_fraction_reward_and_bad_input(rows):
    tasks, table = rows
    r = table[1]
    frac = verl_reward.compute_score(r["data_source"], _ok(tasks[1]), r["reward_model"]["ground_truth"], r["extra_info"], reward="fraction")
    assert frac["score"] == 1.0
    with pytest.raises(ValueError, match="data_source"):
        verl_reward.compute_score("openai/gsm8k", "x", r["reward_model"]["ground_truth"], r["extra_info"])
    with pytest.raises(ValueError, match="ground_truth"):
        verl_reward.compute_score(r["data_source"], "x", "not json", r["extra_info"])
    with pytest.raises(ValueError, match="lengths"):
        verl_reward.compute_score_batch(["se_gym/sebench"], ["a", "b"], [r["reward_model"]["ground_truth"]])
