"""Several task sources in one run (two minted libraries and the official files): weights, each entry
judged with its own source's library through the trainers' own paths, and metrics per source."""
from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from conftest import need_module, shared_path
from se_gym.integrations.mix import MixError, Source, SourceMetrics, load_mixture, parse_sources, summarize


def _official() -> str:
    return f"sebench:{shared_path('sebench', 'single_test_dev.jsonl')}"


def _ok(task) -> str:
    return f"```python\n{task.library_solution}\n```"


def test_weights_seeds_and_each_entry_keeps_its_library():
    spec = f"builtin:0=2,builtin:1=1,{_official()}=1"
    mix = load_mixture(spec, split="single_test", seed=0, n=400, prompts=False)
    counts = Counter(d["source"] for d in mix)
    assert sum(counts.values()) == 400 and len(counts) == 3
    assert 160 <= counts["builtin:0"] <= 240 and 70 <= counts["builtin:1"] <= 130  # weights 2:1:1 (expected 200, 100, 100)
    libs = {d["source"]: d["library"].source for d in mix}
    assert libs["builtin:0"] == "seed:0" and libs["builtin:1"] == "seed:1" and libs[_official()].startswith("official:")
    assert all(d["task"].id.startswith({"builtin:0": "builtin/s0", "builtin:1": "builtin/s1"}.get(d["source"], "sebench/"))
               for d in mix)
    again = load_mixture(spec, split="single_test", seed=0, n=400, prompts=False)
    assert [d["task"].id for d in again] == [d["task"].id for d in mix]  # seeded
    other = load_mixture(spec, split="single_test", seed=1, n=400, prompts=False)
    assert [d["task"].id for d in other] != [d["task"].id for d in mix]
    # a source walks its own shuffle: no task twice before the source runs out
    first = [d["task"].id for d in mix if d["source"] == "builtin:1"]
    assert len(set(first)) == len(first)
    with pytest.raises(MixError, match="weight must be > 0"):
        parse_sources("builtin:0=0")
    with pytest.raises(MixError, match="must be a number"):
        parse_sources("builtin:0=lots")
    with pytest.raises(MixError, match="share a name"):
        load_mixture([Source("builtin:0"), Source("builtin:0")], split="single_test")


def test_a_mixed_verl_dataset_is_judged_per_row_library_with_metrics_per_source(tmp_path):
    """verl's reward loader path (compute_score with each row's extra_info) on a mixed parquet: a seed-0
    solution is right on its own row and wrong on a seed-1 row's library; per-source metrics."""
    pq = need_module("pyarrow.parquet", "the export extra (pyarrow) writes verl's parquet")
    from se_gym.integrations import verl as verl_reward
    from se_gym.integrations.export import to_verl_parquet

    mix = load_mixture(f"builtin:0=1,builtin:1=1,{_official()}=1", split="single_test", seed=0, n=12)
    to_verl_parquet(mix, tmp_path / "mix.parquet", library="seed:7")  # the rows' own libraries win
    rows = pq.read_table(tmp_path / "mix.parquet").to_pylist()
    assert [r["extra_info"]["source"] for r in rows] == [d["source"] for d in mix]
    assert [r["extra_info"]["library"] for r in rows] == [d["library"].source for d in mix]
    records = []
    for d, r in zip(mix, rows):
        builtin = d["source"].startswith("builtin")
        answer = _ok(d["task"]) if builtin else "```python\ndef solve(*a):\n    return None\n```"
        s = verl_reward.compute_score(r["data_source"], answer, r["reward_model"]["ground_truth"], r["extra_info"])
        records.append({"source": d["source"], "reward": s["score"], "passed": s["acc"] == 1.0, "tokens": len(answer.split())})
    per = summarize(records)
    assert per["builtin:0"]["pass_rate"] == 1.0 and per["builtin:1"]["pass_rate"] == 1.0 and per[_official()]["reward"] == 0.0
    assert set(per) == {"builtin:0", "builtin:1", _official()} and all(m["tokens"] > 0 for m in per.values())
    s0 = next(r for d, r in zip(mix, rows) if d["source"] == "builtin:0")
    s1 = next(r for d, r in zip(mix, rows) if d["source"] == "builtin:1")
    t0 = next(d["task"] for d in mix if d["source"] == "builtin:0")
    # the seed-0 solution against a seed-1 row: another library's names, wrong
    assert verl_reward.compute_score(s1["data_source"], _ok(t0), s0["reward_model"]["ground_truth"], s1["extra_info"])["score"] == 0.0


def test_trl_env_owned_mixture_switches_judges_and_logs_per_source():
    """SEBenchTaskEnv.factory(sources=...): a GRPO group plays one draw; each draw is judged with its
    source's library; the factory's SourceMetrics and SourceMetricsLog (TRL's log_metric) give reward,
    pass rate and tokens per source."""
    from se_gym.integrations.trl import SEBenchTaskEnv, SourceMetricsLog, close_environments

    make = SEBenchTaskEnv.factory(split="single_test", seed=0, group_size=2, sources="builtin:0=1,builtin:1=1")
    envs = [make() for _ in range(8)]
    try:
        for e in envs:
            e.reset(prompt=[{"role": "user", "content": ""}])
        assert [e.task.id for e in envs[::2]] == [e.task.id for e in envs[1::2]]  # groups of 2 share a draw
        assert {e.source for e in envs} == {"builtin:0", "builtin:1"}
        for i, e in enumerate(envs):  # even: right; odd: wrong
            e.submit(e.task.library_solution if i % 2 == 0 else "def solve(*a):\n    return None")
        assert [asyncio.run(e.get_reward()) for e in envs] == [1.0, 0.0] * 4
        assert all(e._judge.library.source == f"seed:{e.source[-1]}" for e in envs)
        summary = make.metrics.summary()
        assert set(summary) == {"builtin:0", "builtin:1"} and all(m["reward"] == 0.5 == m["pass_rate"] for m in summary.values())
        logged: dict = {}
        out = SourceMetricsLog()(completions=[""] * 8, completion_ids=[[0] * 7] * 8, environments=envs,
                                 log_metric=logged.__setitem__)
        assert out == [None] * 8
        assert logged["source/builtin:0/pass_rate"] == 0.5 and logged["source/builtin:1/tokens"] == 7.0
    finally:
        close_environments()


def test_source_metrics_count_infrastructure_apart():
    m = SourceMetrics()
    m.add("a", 1.0, True, 10)
    m.add("a", None, False, 12)
    m.add("b", 0.0, False)
    s = m.summary()
    assert s["a"] == {"n": 1.0, "reward": 1.0, "pass_rate": 1.0, "tokens": 11.0, "infrastructure": 1.0}
    assert s["b"]["reward"] == 0.0 and s["b"]["tokens"] != s["b"]["tokens"]  # NaN: no count
