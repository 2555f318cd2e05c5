"""`se-gym bench` (issue 46) end to end on the miniature, the tasks judged for real: the stability pass
(an agent built to forget forgets), the unseen-function split (disjoint from train), stream orders
for --online, and the leaderboard's built-ins under the protocol."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from se_gym.bench import BenchConfig
from se_gym.bench.agents import agent_specs
from se_gym.bench.report import collect, render, summarize
from se_gym.bench.run import Bench, hold_out, observe, world
from se_gym.cli import main
from test_bench import _FakeModels, _ReaderModel  # a fake model that reads its context

ROOT = Path(__file__).resolve().parents[1]
AGENTS = str(ROOT / "tests" / "bench_agents.py")
EXAMPLE = str(ROOT / "examples" / "bench_my_agent.py") + ":CallMemoryAgent"
MINI = ["--tasks", "miniature", "--no-progress"]


def _rows(out: Path) -> dict:
    return summarize(collect([str(out)]))["agents"]


def test_an_agent_built_to_forget_forgets_and_one_that_accumulates_retains(tmp_path):
    out = tmp_path / "run"
    assert main(["bench", "--agent", f"{AGENTS}:ForgetfulAgent", "--agent", EXAMPLE, "--stability", *MINI, "--out", str(out)]) == 0
    rows = _rows(out)
    forgetful, keeper = rows["ForgetfulAgent"]["stability"], rows["CallMemoryAgent"]["stability"]
    assert forgetful["before"] >= 0.5 and forgetful["after"] == 0.0  # the second library's calls answer none of the first's questions
    assert forgetful["forgetting"] == pytest.approx(forgetful["before"]) and forgetful["retention"] == 0.0 and forgetful["ci95"][0] > 0
    assert keeper["forgetting"] <= 0.1 and keeper["retention"] >= 0.9
    assert forgetful["learn_accepted_first"] > 0 and forgetful["learn_accepted_second"] > 0  # both libraries were learned
    # the second library was learned for real, from the frozen save, and is another library
    sdir = out / "seed0" / "ForgetfulAgent" / "stability"
    learned = [json.loads(x) for x in (sdir / "learn.jsonl").read_text().splitlines()]
    first = json.loads((out / "seed0" / "world.json").read_text())
    result = json.loads((out / "seed0" / "ForgetfulAgent" / "result.json").read_text())
    assert sum(len(x["rows"]) for x in learned) == 24 and result["stability"]["library_fingerprint"] != first["library_fingerprint"]
    assert sum(r["reward"] == 1.0 for x in learned for r in x["rows"]) > 0  # it did learn something there
    md = render(summarize(collect([str(out)])))
    assert re.search(r"\| ForgetfulAgent \|.*\| 0%; forgot \+\d", md)


def test_the_unseen_function_split_is_disjoint_from_train():
    from se_gym.training import miniature as mini

    config = BenchConfig(tasks="miniature", unseen=3)
    w = world(config, 0)
    train_functions = {k for t in w.splits["train"] for k in t.functions}
    unseen = w.splits["unseen_test"]
    held = {k for t in unseen for k in t.functions}
    assert len(held) == 3 and len(unseen) == 9 and not held & train_functions
    assert w.unseen == {t.id for t in unseen} and not w.unseen & {t.id for t in w.splits["single_test"]}
    # structurally: no train observation, docs included, names a held-out function
    from se_gym.agents import Runner

    runner = Runner(scorer=None, renderer=w.renderer, progress=False)
    shown = "\n".join(o.prompt + "\n".join(o.docs) for o in observe(runner, w.splits["train"], "open", 1))
    assert all(w.library.qualified(k) not in shown for k in held)
    assert all(w.library.qualified(k) in shown for k in train_functions)
    assert all(mini.FUNCTIONS[k] for k in held)  # real miniature functions: the judge can check them
    # the same seed without --unseen: the world of before (the held-out questions are extra, train is untouched)
    assert [t.id for t in world(BenchConfig(tasks="miniature"), 0).splits["train"]] == [t.id for t in w.splits["train"]]


def test_holding_functions_out_of_a_suite_removes_them_from_train_structurally():
    from se_gym.tasks.record import Task

    def task(tid, split, *functions):
        return Task(tid, split, "test", "q", "def solve(x):", (("x=[1]", "1"),), ("x=[1]", "1"), functions, "")

    train = [task("t1", "train", "abs"), task("t2", "train", "sort", "abs"), task("t3", "train", "cumsum"), task("t4", "train", "diff")]
    tests = [task("s1", "single_test", "abs"), task("s2", "single_test", "cumsum"), task("m1", "multiple_test", "sort", "diff"),
             task("s3", "single_test", "unique")]
    kept, unseen, held = hold_out(train, tests, 0, seed=0)
    assert kept == train and unseen == {"s3"} and held == []  # "unique" is in no train task: unseen without holding anything out
    for seed in range(6):
        kept, unseen, held = hold_out(train, tests, 2, seed)
        seen = {k for t in kept for k in t.functions}
        assert len(held) == 2 and not seen & set(held)
        assert unseen == {t.id for t in tests if set(t.functions) - seen}


def test_online_streams_in_three_orders_report_their_spread(tmp_path):
    out = tmp_path / "run"
    assert main(["bench", "--agent", f"{AGENTS}:ScribblingAgent", "--online", "--orders", "3", "--batch-size", "4", *MINI,
                 "--out", str(out)]) == 0
    lines = [json.loads(x) for x in (out / "seed0" / "ScribblingAgent" / "test.jsonl").read_text().splitlines()]
    orders = {o: [r["task"] for ln in lines if ln["order"] == o for r in ln["rows"]] for o in range(3)}
    assert all(sorted(v) == sorted(orders[0]) and len(v) == 18 for v in orders.values())
    assert orders[1] != orders[0] and orders[2] != orders[1]  # other orders of the same questions
    row = _rows(out)["ScribblingAgent [online]"]
    assert row["order_spread"]["orders"] == 3 and len(row["order_spread"]["accuracy"]) == 3 and row["n"]["orders"] == 3
    assert "3 orders:" in render(summarize(collect([str(out)])))
    with pytest.raises(ValueError, match="orders > 1 needs --online"):
        BenchConfig(orders=3)


def test_an_interrupted_online_order_is_answered_again_from_the_frozen_save(tmp_path):
    out = tmp_path / "run"
    args = ["bench", "--agent", f"{AGENTS}:ScribblingAgent", "--online", "--orders", "2", "--batch-size", "4", *MINI, "--out", str(out)]
    assert main(args) == 0
    adir = out / "seed0" / "ScribblingAgent"
    lines = (adir / "test.jsonl").read_text().splitlines()
    kept = [ln for ln in lines if json.loads(ln)["order"] == 0] + [ln for ln in lines if json.loads(ln)["order"] == 1][:2]
    (adir / "test.jsonl").write_text("\n".join(kept) + "\n")  # as a kill mid-way through the second order leaves it
    (adir / "result.json").unlink()
    assert main(args) == 0
    again = [json.loads(x) for x in (adir / "test.jsonl").read_text().splitlines()]
    assert sorted((ln["order"], ln["batch"]) for ln in again) == sorted({(ln["order"], ln["batch"]) for ln in again})
    assert sum(len(ln["rows"]) for ln in again if ln["order"] == 1) == 18


def test_the_curated_memory_built_ins_under_the_protocol(tmp_path):
    config = BenchConfig(tasks="miniature", out=str(tmp_path / "run"), progress=False, unseen=2)
    agents = ["closed-book", "cheatsheet", "playbook"]
    specs = agent_specs(agents, [], defaults={"cheatsheet": {"k": 1, "header": "Docs:\n"}, "playbook": {"k": 1, "k_pitfalls": 0, "header": "Docs:\n"}})
    Bench(config, specs, models=_FakeModels()).run()
    rows = _rows(Path(config.out))
    for name in ("cheatsheet", "playbook"):
        assert rows[name]["gain"]["single_test"]["mean"] >= 0.5, name  # learned on train, closed book on held-out questions
        assert rows[name]["memory_changed"] == 0 and rows[name]["memory_entries"] > 0
        assert rows[name]["unseen"]["accuracy"] == 0.0  # nothing in train names the held-out functions
    sheet = json.loads((Path(config.out) / "seed0" / "cheatsheet" / "agent" / "memory_state.json").read_text())
    assert 1 <= len(sheet) <= 6 and all(e["helped"] >= 1 and e["hurt"] <= e["helped"] for e in sheet.values())  # curated: one entry a call


def test_the_playbook_tags_bullets_and_prunes_the_harmful():
    from se_gym.agents import Observation, Trajectory
    from se_gym.agents.curated import PlaybookAgent
    from se_gym.tasks.record import Task

    def traj(query, call, reward):
        task = Task("t-" + query[:5], "train", "test", query, "def solve(x):", (("x=[1]", "1"),), ("x=[1]", "1"), ("abs",), "")
        o = Observation(task, f"Task: {query}\ndef solve(x):\nAnswer:\n", "open", "train")
        return Trajectory(o, f"```python\ndef solve(x):\n    return {call}(x)\n```", reward, "passed" if reward else "wrong_answer")

    agent = PlaybookAgent(_ReaderModel(), k=2, k_pitfalls=1, prune_margin=1)
    agent.learn([traj("absolute value of each element", "zwc.good", 1.0), traj("absolute value of each element", "zwc.bad", 0.0)])
    sections = {b["section"]: b for b in agent.bullets}
    assert sections["calls"]["call"] == "zwc.good" and sections["calls"]["helpful"] == 1
    assert sections["pitfalls"]["call"] == "zwc.bad"
    # the call bullet fails three times when shown: harmful 3 > helpful 1 + margin 1, pruned
    agent.learn([traj("absolute value of each element", "zwc.good", 0.0)] * 3)
    assert all(b["call"] != "zwc.good" or b["section"] != "calls" for b in agent.bullets)


def test_the_learners_of_weights_under_the_protocol(tmp_path, capsys):
    from conftest import need_module

    need_module("torch", "the RL and experience learners train a model (pip install 'se-gym[train]')")
    need_module("transformers", "the RL and experience learners train a model (pip install 'se-gym[train]')")
    from se_gym.training import miniature as mini

    model = mini.build_tiny_model(tmp_path / "tiny", seed=0, hidden=32, layers=1)
    out = tmp_path / "run"
    opts = ["--agent-option", "max_new_tokens=8", "--agent-option", "mixed_precision=no"]
    rc = main(["bench", "--agent", "closed-rl", "--agent", "closed-sft-rl", "--agent", "experience", "--model", str(model), "--device", "cpu",
               "--limit", "2", "--learn-samples", "2", *opts, "--agent-option", "closed-rl/iterations=2",
               "--agent-option", "closed-sft-rl/rl_iterations=1", "--agent-option", "closed-sft-rl/sft_epochs=1",
               "--agent-option", "experience/iterations=2", "--agent-option", "experience/epochs=1", *MINI, "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    for name, passes in (("closed-rl", 2), ("closed-sft-rl", 2), ("experience", 2)):
        result = json.loads((out / "seed0" / name / "result.json").read_text())
        freeze = result["freeze"]
        assert result["book"] == "closed" and freeze["learns"] and freeze["passes"] == passes, name  # its own iterations
        assert freeze["memory_entries"] > 1000 and not result["memory_changed"], name  # parameters; unchanged during the test
        learned = [json.loads(x) for x in (out / "seed0" / name / "learn.jsonl").read_text().splitlines()]
        assert {x["pass"] for x in learned} == set(range(passes)) and sum(len(x["rows"]) for x in learned) == 2 * 2 * passes
    stages = [m.get("stage") for m in json.loads((out / "seed0" / "closed-sft-rl" / "freeze.json").read_text())["metrics"]]
    assert stages[0] == "sft" and stages[1] != "sft"  # Closed-SFT first, then the RL update
    bank = json.loads((out / "seed0" / "experience" / "agent" / "memory_state.json").read_text())
    assert bank["iteration"] == 2  # its lessons: part of the memory, hashed with the weights
