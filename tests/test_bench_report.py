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


def test_the_gain_over_the_floor_and_its_interval_match_an_independent_computation(tmp_path):
    # two seeds; the floor right on some tasks too, so the gain is a paired difference, not an accuracy
    agent = {0: {"single_test": {"a": [1.0], "b": [1.0], "c": [0.0], "d": [1.0]}},
             1: {"single_test": {"a": [1.0], "b": [0.0], "c": [0.0], "d": [0.0], "e": [1.0]}}}
    floor = {0: {"single_test": {"a": [0.0], "b": [1.0], "c": [0.0], "d": [0.0]}},
             1: {"single_test": {"a": [0.0], "b": [0.0], "c": [0.0], "d": [0.0], "e": [0.0]}}}
    out = hand_run(tmp_path / "run", {"CallMemoryAgent": agent, "closed-book": floor})
    rows = _rows(out)
    gain = rows["CallMemoryAgent"]["gain"]["single_test"]
    diffs = {"0": [1, 0, 0, 1], "1": [1, 0, 0, 0, 1]}  # agent - floor, per seed and task, by hand
    assert gain["mean"] == pytest.approx(4 / 9) and gain["per_seed"] == pytest.approx({"0": 0.5, "1": 0.4})
    mean, low, high = _bootstrap_by_hand(diffs)
    assert gain["mean"] == pytest.approx(mean)
    assert gain["ci95"][0] == pytest.approx(low, abs=0.03) and gain["ci95"][1] == pytest.approx(high, abs=0.03)
    # one seed, differences 1, 1, 1, 0: the hand-computed interval of the bootstrap test, [0.25, 1.0]
    one = hand_run(tmp_path / "one", {"CallMemoryAgent": {0: {"single_test": {"a": [1.0], "b": [1.0], "c": [1.0], "d": [0.0]}}},
                                      "closed-book": {0: {"single_test": {"a": [0.0], "b": [0.0], "c": [0.0], "d": [0.0]}}}})
    assert _rows(one)["CallMemoryAgent"]["gain"]["single_test"]["ci95"] == pytest.approx([0.25, 1.0])
    # the table: sorted by gain, the floor at 0, gains per seed, the sample size
    md = render(summarize(collect([str(out)])))
    table = [ln for ln in md.splitlines() if ln.startswith("| CallMemoryAgent") or ln.startswith("| closed-book")]
    assert table[0].startswith("| CallMemoryAgent | **+44.4**") and "| +50.0, +40.0 |" in table[0] and table[0].endswith("| 4.5 × 2 × 1 |")
    assert table[1].startswith("| closed-book | 0 (the floor) |")
    assert list(rows) == ["CallMemoryAgent", "closed-book"]


def test_gain_is_only_against_the_floor_of_the_same_configuration(tmp_path):
    a = hand_run(tmp_path / "a", {"CallMemoryAgent": {0: {"single_test": {"a": [1.0]}}}})
    b = hand_run(tmp_path / "b", {"closed-book": {0: {"single_test": {"a": [0.0]}}}}, config=BenchConfig(tasks="miniature", profile="strict"))
    rows = _rows(a, b)
    assert "gain" not in rows["CallMemoryAgent"]
    assert "no closed-book run of this configuration" in render(summarize(collect([str(a), str(b)])))


def test_cost_columns_sum_the_lines_and_price_them(tmp_path):
    tokens = {"CallMemoryAgent": {"prompt_tokens": 1000, "completion_tokens": 200, "cpu_s": 1.5, "wall_s": 2.0, "gpu_s": 2.0},
              "closed-book": {"prompt_tokens": 100, "completion_tokens": 20, "cpu_s": 0.5, "wall_s": 1.0, "gpu_s": 0.0}}
    learn = {"CallMemoryAgent": {"prompt_tokens": 5000, "completion_tokens": 700, "cpu_s": 10.0, "wall_s": 12.0, "gpu_s": 12.0}}
    agents = {"CallMemoryAgent": {s: {"single_test": {"a": [1.0], "b": [0.0]}} for s in (0, 1)},
              "closed-book": {s: {"single_test": {"a": [0.0], "b": [0.0]}} for s in (0, 1)}}
    out = hand_run(tmp_path / "run", agents, tokens=tokens, freeze=learn)
    summary = summarize(collect([str(out)]), prices={"prompt": 2.0, "completion": 10.0})
    c = summary["agents"]["CallMemoryAgent"]["cost"]
    # one test line per seed: the per-seed mean equals one line; the learn phase from freeze.json
    assert c["test"]["prompt_tokens"] == 1000 and c["test"]["completion_tokens"] == 200 and c["test"]["cpu_s"] == 1.5
    assert c["learn"]["prompt_tokens"] == 5000 and c["learn"]["gpu_s"] == 12.0
    assert c["learn"]["dollars"] == pytest.approx((5000 * 2 + 700 * 10) / 1e6) and c["test"]["dollars"] == pytest.approx((1000 * 2 + 200 * 10) / 1e6)
    md = render(summary)
    assert "| CallMemoryAgent | 5,000 / 1,000 | 700 / 200 |" in md and "| 14 | 0.0210 |" in md  # GPU s 12 + 2; $ 0.017 + 0.004
    # the Pareto front: the floor is cheapest (gain 0), the agent gains more at a higher cost: both on it
    assert summary["pareto"] == ["closed-book", "CallMemoryAgent"]


def test_pareto_front_leaves_out_a_dominated_row():
    from se_gym.bench.report import pareto

    def row(gain, tokens):
        return {"book": "closed", "single_test": {"accuracy": 0.5}, "gain": {"single_test": {"mean": gain}},
                "cost": {"learn": {"prompt_tokens": tokens}, "test": {}}}

    rows = {"cheap": row(0.1, 10), "good": row(0.5, 100), "worse_and_dearer": row(0.3, 200), "best": row(0.6, 300)}
    assert pareto(rows) == ["cheap", "good", "best"]


def test_unseen_functions_and_forgetting_columns_on_a_hand_made_run(tmp_path):
    agents = {"CallMemoryAgent": {0: {"single_test": {"a": [1.0], "b": [1.0]}, "unseen_test": {"u1": [1.0], "u2": [0.0]}}},
              "closed-book": {0: {"single_test": {"a": [0.0], "b": [0.0]}, "unseen_test": {"u1": [0.0], "u2": [0.0]}}}}
    stability = {"CallMemoryAgent": {0: {"a": [1.0], "b": [0.0], "u1": [0.0], "u2": [0.0]}}}
    out = hand_run(tmp_path / "run", agents, stability=stability, unseen={0: ["u1", "u2"]})
    row = _rows(out)["CallMemoryAgent"]
    assert row["unseen"]["accuracy"] == 0.5 and row["gain"]["unseen"]["mean"] == 0.5
    assert row["single_test"]["tasks"] == 2  # the unseen questions are reported apart
    st = row["stability"]
    assert (st["before"], st["after"]) == (0.75, 0.25) and st["retention"] == pytest.approx(1 / 3) and st["forgetting"] == 0.5
    assert "33%; forgot +50.0" in render(summarize(collect([str(out)])))
