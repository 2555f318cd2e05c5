"""TRL reward function (and a real GRPOTrainer step on a tiny local model), JSONL and verl exports."""
from __future__ import annotations

import json

import pytest

from conftest import need_module
from se_gym.integrations import export
from se_gym.integrations.trl import SEBenchReward, dataset_rows
from se_gym.library import mint
from se_gym.tasks import builtin_tasks

LIB = mint(0)


@pytest.fixture(scope="module")
def tasks():
    return builtin_tasks("train", seed=0)[:4]


def _ok(task):
    return f"```python\n{task.library_solution}\n```"


def test_reward_function_scores_rows_of_its_dataset(tasks):
    rows = dataset_rows(tasks, LIB, book="open")
    assert [r["task_id"] for r in rows] == [t.id for t in tasks]
    assert rows[0]["prompt"][-1]["role"] == "user" and "Codebase Functions" in rows[0]["prompt"][-1]["content"]
    reward = SEBenchReward(LIB)
    try:
        completions = [_ok(tasks[0]), "no idea", [{"role": "assistant", "content": _ok(tasks[2])}], _ok(tasks[0])]
        scores = reward(
            prompts=[r["prompt"] for r in rows],
            completions=completions,
            test_cases=[r["test_cases"] for r in rows],
            function_name=[r["function_name"] for r in rows],
            task_id=[r["task_id"] for r in rows],
        )
        # row 3 gets the solution of task 0: wrong for task 3
        assert scores == [1.0, 0.0, 1.0, 0.0]
        assert reward.last_verdicts[1].status.value == "static_gate"
        with pytest.raises(ValueError, match="make_dataset"):
            reward(completions=["x"], test_cases=[])
    finally:
        reward.close()


def test_reward_function_passes_the_rows_reference(tasks):
    """Issue 42: TRL hands a reward function every dataset column; the rows carry the task's
    ``library_solution``, which strict's library dependence check runs beside the answer: a
    named-but-unused answer (the library on a constant, the result in Python) gets 0, the
    reference 1.0; without the column the unused one would get 1.0 (the check's weaker rule)."""
    from _dependence_corpus import adapter_answers

    rows = dataset_rows(tasks, LIB, book="closed")
    assert [r["library_solution"] for r in rows] == [t.library_solution for t in tasks]
    answers = [adapter_answers(t, LIB) for t in tasks]
    columns = {k: [r[k] for r in rows] for k in rows[0] if k != "prompt"}
    reward = SEBenchReward(LIB)
    try:
        ref = reward(prompts=[r["prompt"] for r in rows], completions=[a["reference"] for a in answers], **columns)
        unused = reward(prompts=[r["prompt"] for r in rows], completions=[a["unused"] for a in answers], **columns)
        assert ref == [1.0] * 4 and unused == [0.0] * 4
        assert {v.status.value for v in reward.last_verdicts} == {"library_unused"}
        without = {k: v for k, v in columns.items() if k != "library_solution"}
        assert reward(completions=[answers[0]["unused"]], **{k: v[:1] for k, v in without.items()}) == [1.0]
    finally:
        reward.close()


def test_rollout_jsonl_and_verl_parquet(tmp_path, tasks):
    pa = need_module("pyarrow.parquet", "pyarrow is not installed (extra 'export')")
    from se_gym.judge import Judge
    from se_gym.tasks import render_messages

    with Judge(LIB) as judge:
        verdicts = judge.judge_many([(_ok(t), t.test_cases, t.function_name) for t in tasks])
    trajs = [
        {"task": t, "response": _ok(t), "verdict": v, "prompt": render_messages(t, LIB, book="closed"), "sample": 0}
        for t, v in zip(tasks, verdicts)
    ]
    n = export.to_rollout_jsonl(trajs, tmp_path / "r.jsonl")
    rows = [json.loads(l) for l in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert n == len(rows) == len(tasks)
    assert {"query", "test_cases", "function_name", "response", "right_exe_result"} <= set(rows[0])
    assert rows[0]["reward"] == 1.0 and rows[0]["status"] == "passed" and rows[0]["sample"] == 0

    export.to_verl_parquet(trajs, tmp_path / "rl.parquet", kind="rl")
    table = pa.read_table(tmp_path / "rl.parquet").to_pylist()
    assert set(table[0]) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    assert table[0]["prompt"][-1]["role"] == "user" and table[0]["reward_model"]["style"] == "rule"
    truth = json.loads(table[0]["reward_model"]["ground_truth"])
    assert truth["function_name"] == tasks[0].function_name and len(truth["test_cases"]) == len(tasks[0].test_cases)
    assert truth["reference"] == tasks[0].library_solution  # (the reward's: strict's library dependence check)

    export.to_verl_parquet(trajs, tmp_path / "sft.parquet", kind="sft")
    sft = pa.read_table(tmp_path / "sft.parquet").to_pylist()
    assert sft[1]["response"] == _ok(tasks[1]) and tasks[1].query in sft[1]["prompt"]
    with pytest.raises(ValueError, match="kind"):
        export.verl_rows(trajs, kind="dpo")


def test_se_gym_judge_reads_the_reference_of_exported_rollout_rows(tmp_path, tasks):
    """Issue 42: rollout rows keep the task's library solution (under ``se_gym``); ``se-gym judge``
    under strict runs it beside each answer, so a named-but-unused answer is ``library_unused``."""
    from _dependence_corpus import adapter_answers
    from se_gym.cli import main

    answers = [adapter_answers(t, LIB) for t in tasks[:2]]
    export.to_rollout_jsonl([{"task": tasks[0], "response": answers[0]["unused"]},
                             {"task": tasks[1], "response": answers[1]["reference"]}], tmp_path / "r.jsonl")
    out = tmp_path / "judged.jsonl"
    assert main(["judge", "--input", str(tmp_path / "r.jsonl"), "--out", str(out), "--library", "seed:0",
                 "--profile", "strict", "--quiet"]) == 0
    assert [json.loads(line)["judge"]["status"] for line in out.read_text().splitlines()] == ["library_unused", "passed"]


def test_trl_grpo_trainer_uses_the_reward_on_a_tiny_local_model(tmp_path, tasks):
    """A real GRPOTrainer (TRL) on CPU with a tiny random model built locally: the reward
    function is called on its generations and logged.  (The tiny model cannot solve tasks; the
    point is the integration, not learning.)"""
    trl = need_module("trl", "trl is not installed (extra 'trl')")
    need_module("datasets", "datasets is not installed (extra 'hf')")
    from se_gym.integrations.trl import make_dataset
    from se_gym.llm.tiny import build_tiny_model

    model_dir = build_tiny_model(tmp_path / "tiny", d_model=64, n_head=2, n_layer=1)
    ds = make_dataset(tasks[:2], LIB, book="closed", conversational=False)
    reward = SEBenchReward(LIB)
    calls = []
    original = reward.judge.judge_many
    reward.judge.judge_many = lambda items: calls.append(len(items)) or original(items)
    cfg = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=2, num_generations=2,
        max_completion_length=16, max_steps=1, logging_steps=1, report_to=[], use_cpu=True,
        save_strategy="no", bf16=False, learning_rate=1e-5,
    )
    trainer = trl.GRPOTrainer(model=str(model_dir), reward_funcs=reward, args=cfg, train_dataset=ds)
    trainer.train()
    reward.close()
    assert calls and sum(calls) >= 2
    logged = {k for entry in trainer.state.log_history for k in entry}
    assert any(reward.__name__ in k for k in logged), logged


def test_adapters_accept_the_visible_cases_option():
    """The adapters' option list follows SEBench-v0's: visible_cases (multi-turn feedback's shown
    examples) reaches the env; an unknown option is still refused."""
    from se_gym.integrations._common import env_options, make_env

    assert env_options({"visible_cases": 2, "max_turns": 3})["visible_cases"] == 2
    env = make_env({"visible_cases": 0, "max_turns": 2})
    try:
        assert env.visible_cases == 0
    finally:
        env.close()
    with pytest.raises(ValueError, match="unknown SEBench-v0 option"):
        env_options({"visible_case": 2})
