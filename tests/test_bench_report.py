"""`se-gym bench report` on hand-made run folders (issues 43 and 46): every number of the leaderboard
checked against a computation written here, on runs whose answers are chosen by hand."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from se_gym.bench import BenchConfig
from se_gym.bench.report import collect, render, summarize
from se_gym.errors import CLIError
from se_gym.storage import RunDir


def hand_run(out: Path, agents: dict, config: BenchConfig | None = None, tokens: dict | None = None, freeze: dict | None = None,
             stability: dict | None = None, unseen: dict | None = None) -> Path:
    """A bench run folder written by hand.

    ``agents``: label -> seed -> split -> task -> list of rewards (None: an infrastructure answer).
    ``tokens``: label -> per test line ``{"prompt_tokens", "completion_tokens", "cpu_s", "wall_s"}``.
    ``stability``: label -> seed -> task -> rewards of the re-test on the first library.
    ``unseen``: seed -> task ids of single_test that are on unseen functions.
    """
    config = config or BenchConfig(tasks="miniature")
    RunDir(out, "bench", config.run_config())
    for label, seeds in agents.items():
        spec = "closed-book" if label.startswith("closed-book") else f"tests/bench_agents.py:{label}"
        for seed, splits in seeds.items():
            sdir = out / f"seed{seed}"
            sdir.mkdir(parents=True, exist_ok=True)
            (sdir / "world.json").write_text(json.dumps({"seed": seed, "library": f"seed{100 + seed}-abc", "official": False,
                                                         "unseen_tasks": sorted((unseen or {}).get(seed, []))}))
            adir = sdir / label
            RunDir(adir, "bench/agent", {"spec": spec, "options": {}})
            lines = []
            for split, tasks in splits.items():
                rows = [{"task": t, "response": "", "status": "infrastructure" if r is None else ("passed" if r >= 1 else "wrong_answer"),
                         "reward": r, "detail": ""} for t, rewards in tasks.items() for r in rewards]
                extra = (tokens or {}).get(label, {"prompt_tokens": 0, "completion_tokens": 0, "cpu_s": 0.0, "wall_s": 0.0})
                lines.append({"split": split, "batch": 0, "rows": rows, **extra})
            (adir / "test.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
            fz = {"learns": label != "closed-book", "passes": 1, "wall_s": 0.0, "prompt_tokens": 0, "completion_tokens": 0, "cpu_s": 0.0,
                  "metrics": [], "digest": "d" * 64, "memory_entries": 1, "memory_bytes": 10, **((freeze or {}).get(label, {}))}
            result = {"seed": seed, "agent": label, "spec": spec, "book": "closed", "freeze": fz, "digest_after": "d" * 64, "memory_changed": False}
            st = (stability or {}).get(label, {}).get(seed)
            if st is not None:
                (adir / "stability").mkdir()
                rows = [{"task": t, "response": "", "status": "passed" if r >= 1 else "wrong_answer", "reward": r, "detail": ""}
                        for t, rewards in st.items() for r in rewards]
                (adir / "stability" / "test.jsonl").write_text(json.dumps({"split": "single_test", "batch": 0, "rows": rows}) + "\n")
                result["stability"] = {"library": "other", "digest": "e" * 64}
            (adir / "result.json").write_text(json.dumps(result))
    return out


def _rows(*outs) -> dict:
    return summarize(collect([str(o) for o in outs]))["agents"]


def test_pass_at_k_counts_an_infrastructure_answer_out_and_shows_the_count(tmp_path):
    # issue 43, defect 2: three samples per task, one of them an infrastructure failure
    out = hand_run(tmp_path / "run", {"CallMemoryAgent": {0: {"single_test": {"t1": [1.0, None, 0.0], "t2": [0.0, 0.0, 0.0], "t3": [1.0, 1.0, 1.0]}}}},
                   config=BenchConfig(tasks="miniature", samples=3))
    row = _rows(out)["CallMemoryAgent"]
    cell = row["single_test"]
    # accuracy over judged answers only: t1 1/2, t2 0, t3 1
    assert cell["accuracy"] == pytest.approx((0.5 + 0 + 1) / 3)
    # pass@3 needs 3 judged answers: t1 has 2, so pass@3 is over t2 and t3, and the count says so
    assert cell["pass@3"] == pytest.approx(0.5) and cell["pass@k_tasks"] == 2 and cell["infrastructure"] == 1
    md = render(summarize(collect([str(out)])))
    assert "infrastructure 1 (counted out)" in md and "pass@3: 50.0 (2 of 3 tasks)" in md


def _config_rows(tmp_path):
    a = hand_run(tmp_path / "a", {"CallMemoryAgent": {0: {"single_test": {"t1": [1.0], "t2": [1.0]}}}}, config=BenchConfig(tasks="miniature"))
    b = hand_run(tmp_path / "b", {"CallMemoryAgent": {0: {"single_test": {"t1": [0.0], "t2": [0.0]}}}},
                 config=BenchConfig(tasks="miniature", profile="strict"))
    c = hand_run(tmp_path / "c", {"CallMemoryAgent": {1: {"single_test": {"t1": [1.0], "t2": [0.0]}}}}, config=BenchConfig(tasks="miniature"))
    return a, b, c


def test_the_report_keys_rows_by_the_whole_configuration(tmp_path):
    # issue 43, defect 3: one agent label over two judge profiles is two rows, never one pooled accuracy
    a, b, c = _config_rows(tmp_path)
    rows = _rows(a, b, c)
    assert len(rows) == 2
    (sebench,) = [r for r in rows.values() if r["config"]["profile"] == "sebench"]
    (strict,) = [r for r in rows.values() if r["config"]["profile"] == "strict"]
    assert strict["single_test"]["accuracy"] == 0.0 and strict["seeds"] == 1
    # the same configuration in two folders (seeds 0 and 1) pools: 3 of 4
    assert sebench["single_test"]["accuracy"] == 0.75 and sebench["seeds"] == 2
    md = render(summarize(collect([str(a), str(b), str(c)])))
    assert "CallMemoryAgent (profile sebench)" in md and "CallMemoryAgent (profile strict)" in md


def test_the_same_seed_of_one_configuration_twice_is_refused(tmp_path):
    a, _, _ = _config_rows(tmp_path)
    again = hand_run(tmp_path / "again", {"CallMemoryAgent": {0: {"single_test": {"t1": [0.0], "t2": [0.0]}}}})
    with pytest.raises(CLIError, match="seed 0 of CallMemoryAgent .* twice"):
        _rows(a, again)


def _bootstrap_by_hand(diffs: dict, resamples: int = 20_000, seed: int = 7) -> tuple[float, float, float]:
    """The interval computed independently: plain Python, seeds drawn with replacement, then tasks."""
    rng = random.Random(seed)
    groups = list(diffs.values())
    means = []
    for _ in range(resamples):
        total = count = 0
        for _ in groups:
            g = groups[rng.randrange(len(groups))]
            for _ in g:
                total += g[rng.randrange(len(g))]
                count += 1
        means.append(total / count)
    means.sort()
    flat = [v for g in groups for v in g]
    return sum(flat) / len(flat), means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]
