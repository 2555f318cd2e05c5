"""se-gym eval: pass@k against hand values, grouping, infrastructure exclusion, the CLI."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from conftest import need_module
from se_gym.cli import main
from se_gym.llm.report import pass_at_k, read_rows, summarize, to_markdown


def test_pass_at_k_hand_values():
    # n=5, c=2, k=1: 1 - C(3,1)/C(5,1) = 1 - 3/5
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    # n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    # n=5, c=1, k=5: one right among all five drawn
    assert pass_at_k(5, 1, 5) == 1.0
    assert pass_at_k(5, 0, 5) == 0.0
    # n=10, c=3, k=4: 1 - C(7,4)/C(10,4) = 1 - 35/210
    assert pass_at_k(10, 3, 4) == pytest.approx(1 - 35 / 210)
    # large n stays exact against math.comb
    assert pass_at_k(200, 17, 10) == pytest.approx(1 - math.comb(183, 10) / math.comb(200, 10))
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def _row(task: str, reward: float, status: str = "right", error: str | None = None, infra: bool = False, **kw):
    row = {"task_id": task, "reward": reward, "status": status, "error_type": error, "infrastructure": infra,
           "split": "single_test", "book": "closed", "model": "m"}
    row.update(kw)
    return row


def _write(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_summary_counts_and_excludes_infrastructure(tmp_path):
    rows = [
        _row("a", 1.0), _row("a", 0.0, "wrong"), _row("a", 1.0),
        _row("b", 0.0, "error", "AttributeError"), _row("b", 0.0, "error", "AttributeError"),
        _row("b", 0.0, "infrastructure", "SandboxError", infra=True),  # the sandbox failed: not counted
        _row("a", 1.0, book="open"), _row("b", 1.0, book="open"),
    ]
    (closed, opened) = summarize([_write(tmp_path / "r.jsonl", rows)])
    assert (closed.book, opened.book) == ("closed", "open")
    assert closed.samples == 6 and closed.infrastructure == 1 and closed.judged == 5
    assert closed.accuracy == pytest.approx(2 / 5)
    # per task: a = 3 samples, 2 right; b = 2 judged samples, none right
    assert closed.pass_at[1] == pytest.approx((2 / 3 + 0) / 2)
    assert closed.pass_at[3] == pytest.approx(1.0)  # only task a has 3 judged samples
    assert closed.status == {"right": 2, "wrong": 1, "error": 2, "infrastructure": 1}
    assert closed.error_type == {"AttributeError": 2}
    assert opened.accuracy == 1.0 and opened.pass_at == {1: 1.0}
    text = to_markdown([closed, opened])
    assert "| r.jsonl | single_test | closed | m | 2 | 6 | 1 | 40.0 |" in text
    assert "AttributeError" in text


def test_configurable_k(tmp_path):
    rows = [_row("a", float(i < 2)) for i in range(4)]
    (group,) = summarize([_write(tmp_path / "r.jsonl", rows)], ks=[2, 3])
    assert set(group.pass_at) == {2, 3}
    assert group.pass_at[2] == pytest.approx(1 - math.comb(2, 2) / math.comb(4, 2))


def test_truncated_last_line_is_skipped(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(_row("a", 1.0)) + "\n" + '{"task_id": "a", "rew', encoding="utf-8")
    assert [n for n, _ in read_rows(path)] == [1]
    path.write_text('{"broken\n' + json.dumps(_row("a", 1.0)) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=":1:"):
        list(read_rows(path))


def test_cli_markdown_json_and_errors(tmp_path, capsys):
    a = _write(tmp_path / "a.jsonl", [_row("t", 1.0), _row("t", 0.0, "wrong")])
    b = _write(tmp_path / "b.jsonl", [_row("t", 0.0, "error", "NameError", model="other")])
    out = tmp_path / "summary.json"
    assert main(["eval", str(a), str(b), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| a.jsonl |" in text and "| b.jsonl |" in text and "pass@2 %" in text
    data = json.loads(out.read_text())
    assert [g["model"] for g in data["groups"]] == ["m", "other"]
    assert data["groups"][0]["accuracy"] == 0.5 and data["groups"][0]["pass_at_k"] == {"1": 0.5, "2": 1.0}

    assert main(["eval", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such rollout file" in capsys.readouterr().err
    _write(tmp_path / "raw.jsonl", [{"query": "q", "response": "r"}])
    assert main(["eval", str(tmp_path / "raw.jsonl")]) == 2
    assert "no verdict" in capsys.readouterr().err


def test_cli_plot(tmp_path):
    need_module("matplotlib", "--plot needs the 'plot' extra (matplotlib)")
    a = _write(tmp_path / "a.jsonl", [_row("t", 0.0, "error", "NameError"), _row("t", 1.0)])
    png = tmp_path / "errors.png"
    assert main(["eval", str(a), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_judge_output_chains_into_eval(tmp_path, capsys):
    """`se-gym judge` keeps the input row and nests its verdict under `judge`; `se-gym eval` reads it."""
    from se_gym.tasks import build_suite

    tasks = list(build_suite(0, sizes={"train": 0, "single_test": 2, "multiple_test": 0}, progress=False,
                             validate="inprocess").splits["single_test"])
    rows = []
    for t in tasks:
        cases = [{"input": c.input, "output": c.output} for c in t.test_cases]
        good = f"```python\n{t.library_solution}\n```"
        rows.append({"query": t.query, "task_id": t.id, "response": good, "test_cases": cases, "function_name": t.function_name})
        rows.append({"query": t.query, "task_id": t.id, "response": "no code at all", "test_cases": cases, "function_name": t.function_name})
    src = _write(tmp_path / "rollouts.jsonl", rows)
    judged = tmp_path / "verdicts.jsonl"
    assert main(["judge", "--input", str(src), "--out", str(judged), "--library", "seed:0", "--profile", "strict", "--quiet"]) == 0
    assert "se-gym judge: sandbox local, isolation " in capsys.readouterr().err  # the isolation in force, at start
    first = json.loads(judged.read_text().splitlines()[0])
    assert "reward" not in first and first["judge"]["reward"] == 1.0  # the verdict is nested
    capsys.readouterr()
    summary = tmp_path / "s.json"
    assert main(["eval", str(judged), "--json", str(summary)]) == 0
    group = json.loads(summary.read_text())["groups"][0]
    assert group["samples"] == 4 and group["accuracy"] == 0.5 and group["tasks"] == 2
    assert group["pass_at_k"]["1"] == 0.5 and group["pass_at_k"]["2"] == 1.0
