"""se-gym rollout end to end on CPU: the tiny model through the hf backend, the real judge.

The one test double is ``OracleGenerator`` below: it answers every task with the task's own
library solution, standing in for a capable (8B) model that cannot run here, so that the path of
accepted trajectories (``--keep-correct``) carries real rows.  Everything else is real.
"""
from __future__ import annotations

import json

import pytest

from _rollout_helpers import build_tiny, cli, comparable, config, kill_after_rows, require_pipeline, rows
from se_gym.errors import CLIError
from se_gym.llm.rollout import read_done_keys


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    require_pipeline()
    return build_tiny(tmp_path_factory.mktemp("tiny"))


def test_read_done_keys_cuts_a_torn_last_line(tmp_path):
    path = tmp_path / "r.jsonl"
    good = json.dumps({"task_id": "t1", "sample_index": 0}) + "\n"
    path.write_text(good + '{"task_id": "t1", "sample_in', encoding="utf-8")
    assert read_done_keys(path) == {("t1", 0)}
    assert path.read_text(encoding="utf-8") == good  # appending now starts on a clean line
    path.write_text('{"query": "not a rollout row"}\n', encoding="utf-8")
    with pytest.raises(CLIError, match="not a rollout row"):
        read_done_keys(path)


def test_bad_input_gives_one_line_errors(tmp_path, capsys):
    from se_gym.cli import main

    out = str(tmp_path / "o.jsonl")
    assert main(["rollout", "--model", "m", "--tasks", "nowhere", "--out", out]) == 2
    err = capsys.readouterr().err
    from se_gym.tasks.spec import task_grammar

    assert "--tasks nowhere:" in err and task_grammar() in err and err.count("\n") == 1
    assert main(["rollout", "--model", "m", "--n", "0", "--out", out]) == 2
    assert "--n must be at least 1" in capsys.readouterr().err
    assert main(["rollout", "--model", "m", "--ray-address", "auto", "--out", out]) == 2
    assert "--ray-address needs --ray-actors" in capsys.readouterr().err
    assert main(["rollout", "--model", "m", "--library", "official:/no/such/file", "--out", out]) == 2
    assert "--library official:/no/such/file" in capsys.readouterr().err


def test_rows_hold_the_official_fields_verdict_prompt_and_params(tiny, tmp_path):
    from se_gym.llm.report import summarize
    from se_gym.llm.rollout import rollout

    out = tmp_path / "r.jsonl"
    stats = rollout(config(tiny, limit=3, n=2, enable_thinking=False), out, progress=False)
    got = rows(out)
    assert stats.rows_written == len(got) == 6 and stats.completion_tokens > 0
    assert [r["sample_index"] for r in got] == [0, 1] * 3
    for row in got:
        for key in ("query", "function_name", "test_cases", "right_exe_result", "example_output", "response"):
            assert key in row, key  # what SE-Bench's filter_correct_trajectory reads
        assert row["function_name"].startswith("def ")  # the verdict's own name did not overwrite it
        for key in ("reward", "status", "sebench_code", "error_type", "infrastructure", "cases", "exception", "detail"):
            assert key in row, key
        assert row["model"] == str(tiny) and row["backend"] == "hf" and row["book"] == "closed"
        assert row["params"]["enable_thinking"] is False and row["params"]["n"] == 2
        assert isinstance(row["prompt"], list) and row["prompt"][-1]["role"] == "user"
        assert row["completion_tokens"] <= 24
    (group,) = summarize([out])
    assert group.samples == 6 and group.tasks == 3

    # everything is there: a rerun does nothing
    again = rollout(config(tiny, limit=3, n=2, enable_thinking=False), out, progress=False)
    assert again.rows_written == 0 and again.samples_skipped == 6 and len(rows(out)) == 6


def test_open_book_prompt_holds_the_docs(tiny, tmp_path):
    from se_gym.llm.rollout import rollout

    closed, opened = tmp_path / "c.jsonl", tmp_path / "o.jsonl"
    rollout(config(tiny, limit=1, n=1), closed, progress=False)
    rollout(config(tiny, limit=1, n=1, book="open"), opened, progress=False)
    (c,), (o,) = rows(closed), rows(opened)
    assert len(o["prompt"][-1]["content"]) > len(c["prompt"][-1]["content"])
    assert o["book"] == "open"


def test_killed_rollout_resumes_without_loss_or_duplicates(tiny, tmp_path):
    from se_gym.llm.rollout import rollout

    args = ["rollout", "--model", str(tiny), "--backend", "hf", "--tasks", "builtin", "--limit", "12", "--n", "2",
            "--temperature", "1.0", "--max-tokens", "24", "--seed", "7", "--batch-size", "1", "--no-progress"]
    out = tmp_path / "killed.jsonl"
    written = kill_after_rows(args, out)
    assert 2 <= written.count(b"\n") < 24, "killed mid-way"
    with open(out, "ab") as fh:  # as if the kill had landed in the middle of a write
        fh.write(b'{"task_id": "cut sh')

    resumed = cli(args + ["--out", str(out)])
    assert resumed.wait(timeout=180) == 0
    got = rows(out)
    keys = [(r["task_id"], r["sample_index"]) for r in got]
    assert len(keys) == len(set(keys)) == 24

    reference = tmp_path / "reference.jsonl"  # the same run, never interrupted
    rollout(config(tiny, limit=12, n=2, temperature=1.0, max_tokens=24, seed=7, batch_size=1), reference, progress=False)
    assert [comparable(r) for r in got] == [comparable(r) for r in rows(reference)]


class OracleGenerator:
    """Test double for a capable model: answers with the task's library solution (see module doc)."""

    backend = "oracle"

    def __init__(self, solutions: dict[str, str]):
        self.solutions = solutions

    def generate(self, prompts, params):
        from se_gym.llm import Completion, Generation

        out = []
        for prompt in prompts:
            text = prompt[-1]["content"] if isinstance(prompt, list) else prompt
            code = next(code for query, code in self.solutions.items() if query in text)
            answer = f"Here it is.\n```python\n{code}\n```"
            completion = Completion(answer, (1, 2, 3), None, "stop", (1,))
            out.append(Generation(prompt, (completion,) * params.n, "oracle", "oracle", params))
        return out


def test_keep_correct_writes_accepted_trajectories(tiny, tmp_path):
    from se_gym.library import from_spec
    from se_gym.llm.rollout import load_tasks, rollout

    cfg = config(tiny, limit=4, n=2, model="oracle")
    tasks = load_tasks(cfg.tasks, cfg.split, from_spec(cfg.library), cfg.limit)
    oracle = OracleGenerator({t.query: t.library_solution for t in tasks})
    out, keep = tmp_path / "r.jsonl", tmp_path / "sft.jsonl"
    stats = rollout(cfg, out, keep_correct=keep, generator=oracle, progress=False)
    right = [r for r in rows(out) if r["reward"] == 1.0]
    assert right, "the library solutions should pass the judge"
    kept = rows(keep)
    assert stats.accepted == len(kept) == len(right)
    for row, src in zip(kept, right):
        assert row["response"] == src["response"] and row["query"] == src["query"]
        assert row["messages"][-1] == {"role": "assistant", "content": src["response"]}
        assert row["messages"][:-1] == src["prompt"]
        closed, opened = row["sft_prompts"]["closed"], row["sft_prompts"]["open"]
        assert src["query"].strip() in closed and len(opened) > len(closed)  # Closed-SFT / Open-SFT prompts
    # a rerun adds nothing to either file
    rollout(cfg, out, keep_correct=keep, generator=oracle, progress=False)
    assert len(rows(keep)) == len(kept)


def test_pipeline_modules_import_nothing_heavy():
    import subprocess
    import sys

    code = ("import sys, se_gym.llm.rollout, se_gym.llm.rollout_cli, se_gym.llm.eval_cli, se_gym.llm.report, "
            "se_gym.distributed; print(sorted(m for m in ('torch', 'ray', 'vllm', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_resume_with_another_configuration_is_refused_and_restart_redoes(tmp_path, caplog):
    """Issue 20.3: rows of two configurations never mix in one --out file."""
    from se_gym.library import from_spec
    from se_gym.llm.rollout import load_tasks, rollout
    from se_gym.storage import ConfigMismatch

    cfg = config(tmp_path, limit=2, n=1, model="oracle")
    tasks = load_tasks(cfg.tasks, cfg.split, from_spec(cfg.library), cfg.limit)
    oracle = OracleGenerator({t.query: t.library_solution for t in tasks})
    out = tmp_path / "r.jsonl"
    rollout(cfg, out, generator=oracle, progress=False)
    assert len(rows(out)) == 2 and (tmp_path / "r.jsonl.run.json").is_file()
    more = config(tmp_path, limit=2, n=2, model="oracle", split="single_test")
    with pytest.raises(ConfigMismatch, match=r"another configuration \(n: 1 -> 2\).*--restart"):
        rollout(more, out, generator=oracle, progress=False)
    assert len(rows(out)) == 2  # refused before a row was written
    caplog.set_level("INFO", logger="se_gym")
    rollout(more, out, generator=oracle, progress=False, restart=True)
    assert f"discarding {out}" in caplog.text  # logged (the se-gym command prints it on stderr)
    assert len(rows(out)) == 4 and {r["sample_index"] for r in rows(out)} == {0, 1}
    # a file with rows but no record of its configuration is not resumed either
    stray = tmp_path / "stray.jsonl"
    stray.write_text(json.dumps({"task_id": tasks[0].id, "sample_index": 0}) + "\n")
    with pytest.raises(ConfigMismatch, match="no record of the configuration"):
        rollout(cfg, stray, generator=oracle, progress=False)
