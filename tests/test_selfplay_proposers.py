"""Self-play that keeps proposing: the rewards step with missing solve rates, the proposer agents
(built-in modes and a plug-in from a file outside the package) and rehearsal mixing."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from _selfplay_helpers import FUNCTIONS, LIBRARY
from _selfplay_helpers import selfplay as _selfplay


def _row(task, book, reward, infra=False):
    return {"task": task, "book": book, "sample": 0, "prompt": "p", "response": "r", "reward": reward, "infrastructure": infra}


@pytest.mark.parametrize("reward", ["gap", "learnability"])
def test_rewards_with_a_book_of_only_infrastructure_failures_are_no_signal_not_an_error(tmp_path, reward):
    """A task whose samples of one book all failed in the sandbox has no rate for that book: its
    proposer reward is None (no signal, counted), the others are as before, and the round goes on."""
    from se_gym.selfplay.validate import Outcome

    sp = _selfplay(tmp_path, proposer_reward=reward, rate_book="closed")
    tasks = [SimpleNamespace(id=i, functions=("abs",)) for i in ("a", "b")]
    outcomes = [Outcome(None, None, task=t) for t in tasks] + [Outcome(None, "no_question")]
    rows = [_row("a", "open", 1.0), _row("a", "closed", 1.0), _row("a", "closed", 0.0),  # gap and learnability: 0.5
            _row("b", "open", 1.0), _row("b", "closed", 0.0, infra=True), _row("b", "closed", 0.0, infra=True)]
    rew = sp.rewards([{}] * 3, outcomes, {"rows": rows})
    assert rew["proposer"] == [0.5, None, -1.0]
    assert rew["no_signal"] == 1
    summary = sp.summary(1, outcomes, {"rows": rows, "train": [], "topped_up": 0}, rew, {}, {"accuracy": None, "n": 0}, {}, 2)
    assert summary["no_signal"] == 1 and summary["proposer_reward_mean"] == -0.25  # None left out


RULES = '''
"""A rule-based proposer outside se_gym: one call of the shown function on eight fixed inputs."""
import json
from pathlib import Path

from se_gym.agents.proposal import Proposal
from se_gym.agents.proposer import ProposerAgent
from se_gym.training.miniature import FUNCTIONS


class RuleProposer(ProposerAgent):
    def __init__(self, learned=0):
        self.learned = learned

    def propose(self, docs, references):
        key, name = docs.functions[0], docs.names[0]
        base = 10 * self.learned  # new inputs once it has learned: the same question on them is a new task
        if FUNCTIONS[key][0] == 1:
            args, inputs = "x", [f"x={[base + i, -i - 1, 2 * i + 3]}" for i in range(8)]
        else:
            args, inputs = "x1, x2", [f"x1={[base + i, 2]}, x2={[3, -i]}" for i in range(8)]
        ref = f"import {docs.package}\\ndef solve({args}):\\n    return {name}({args})\\n"
        return Proposal(f"Apply {key} to the input.", tuple(inputs), ref)

    def learn(self, feedback):
        self.learned += sum(f.valid for f in feedback)
        return {"updated": True, "valid_seen": self.learned}

    def save(self, directory):
        Path(directory).mkdir(parents=True, exist_ok=True)
        (Path(directory) / "rules.json").write_text(json.dumps({"learned": self.learned}))

    @classmethod
    def load(cls, directory, setup):
        return cls(json.loads((Path(directory) / "rules.json").read_text())["learned"])
'''


def _cli(tmp_path, out, rounds, tiny, extra=()):
    """Argument list and environment of a small ``se-gym selfplay`` run with the rule-based plug-in."""
    import os

    from conftest import REPO

    if not (tmp_path / "plug" / "rules.py").is_file():
        (tmp_path / "plug").mkdir(exist_ok=True)
        (tmp_path / "plug" / "rules.py").write_text(RULES)
    args = ["selfplay", "--out", str(out), "--model", str(tiny), "--library", LIBRARY, "--prompts", "miniature", "--regime", "sft",
            "--rounds", str(rounds), "--proposals", "3", "--samples", "1", "--functions", *FUNCTIONS, "--solve-max-tokens", "8",
            "--min-tasks", "3", "--sft-epochs", "1", "--no-progress", "--proposer", str(tmp_path / "plug" / "rules.py") + ":RuleProposer",
            *extra]
    return args, {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}


def test_kill_9_in_each_stage_then_rerun_loses_nothing_and_counts_nothing_twice(tmp_path):
    """Round 1 killed (SIGKILL) just after each stage's file appears, rerun each time: every file is
    written once, and the plug-in proposer learned from the round once (its state is not doubled by a
    learn step redone after a kill)."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import need_module

    need_module("torch", "self-play trains with torch")
    from se_gym.llm import build_tiny_model

    tiny = build_tiny_model(tmp_path / "tiny", max_position_embeddings=512)
    out = tmp_path / "run"
    rnd = out / "round_001"
    args, env = _cli(tmp_path, out, 1, tiny, ("--eval", "functions", "--eval-limit", "2"))
    stamps: dict = {}
    for name in ("propose.json", "validate.json", "solve.json", "learn/DONE", "eval.json"):
        p = subprocess.Popen([sys.executable, "-m", "se_gym.cli", *args], env=env, cwd=tmp_path, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while not (rnd / name).exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)  # in the stage after ``name``
        p.wait()
        assert (rnd / name).exists(), f"{name} was never written"
        for f in [*rnd.glob("*.json"), *rnd.glob("learn/DONE")]:  # the stages' outputs (a killed learn step may redo its inside)
            st = f.stat()
            assert stamps.setdefault(f, (st.st_ino, st.st_mtime_ns)) == (st.st_ino, st.st_mtime_ns), f"{f.name} was rewritten"
    p = subprocess.run([sys.executable, "-m", "se_gym.cli", *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    log = [json.loads(ln) for ln in (out / "log.jsonl").read_text().splitlines()]
    assert [r["round"] for r in log] == [0, 1] and log[1]["valid"] == 3
    assert log[1]["losses"]["proposer"]["valid_seen"] == 3  # learned from once
    assert json.loads((rnd / "learn" / "proposer" / "rules.json").read_text()) == {"learned": 3}
    assert len((rnd / "buffer.jsonl").read_text().splitlines()) == 3


def test_a_plugin_proposer_from_a_file_outside_the_package_runs_rounds_through_the_cli(tmp_path):
    """``se-gym selfplay --proposer rules.py:RuleProposer``: its tasks are validated, solved and
    learned from; it learns from the feedback, is saved, and a second invocation loads it back."""
    import json
    import subprocess
    import sys

    from conftest import need_module

    need_module("torch", "self-play trains with torch")
    from se_gym.llm import build_tiny_model

    tiny = build_tiny_model(tmp_path / "tiny", max_position_embeddings=512)
    out = tmp_path / "run"
    for rounds in (1, 2):  # a new process for round 2: its proposer is the one round 1 saved
        args, env = _cli(tmp_path, out, rounds, tiny, ("--eval", "none"))
        p = subprocess.run([sys.executable, "-m", "se_gym.cli", *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    log = [json.loads(ln) for ln in (out / "log.jsonl").read_text().splitlines()]
    assert [r["valid"] for r in log[1:]] == [3, 3]
    assert [r["losses"]["proposer"]["valid_seen"] for r in log[1:]] == [3, 6]
    assert log[2]["diversity"]["functions"] == 3 and log[2]["coverage"] == 1.0


class _Engine:
    """Generation that records its calls (the policy proposer goes through the run's engine)."""

    def __init__(self):
        self.calls = []

    def generate(self, prompts, n, temperature, max_tokens, seed):
        self.calls.append((list(prompts), temperature, max_tokens))
        return [["Question: q"] * n for _ in prompts]

    def close(self):
        pass


def test_each_built_in_proposer_mode(tmp_path):
    from se_gym.agents.proposer import FrozenProposer, ModelProposer, PolicyProposer
    from se_gym.errors import CLIError

    engine = _Engine()
    sp = _selfplay(tmp_path, propose_temperature=0.7, propose_max_tokens=33)
    sp.engine = engine
    policy = sp._proposer_for(1)
    assert isinstance(policy, PolicyProposer) and policy.shares_policy
    docs = sp._docs(("abs",), "Docs:\nthe prompt\nWrite a task:\n")
    assert policy.propose_many([(docs, [])], 5) == ["Question: q"] and engine.calls == [([docs.prompt], 0.7, 33)]

    frozen = _selfplay(tmp_path / "f", proposer="frozen")._proposer_for(3)
    assert type(frozen) is FrozenProposer and frozen.model == "unused" and not frozen.shares_policy  # the starting model, every round
    teacher = _selfplay(tmp_path / "m", proposer="model:/models/teacher")._proposer_for(1)
    assert type(teacher) is ModelProposer and teacher.model == "/models/teacher"
    with pytest.raises(CLIError, match="proposer must be one of policy, frozen"):
        _selfplay(tmp_path / "x", proposer="frozn")


def test_a_model_proposer_generates_with_its_own_model(tmp_path):
    from conftest import need_module

    need_module("torch", "the model proposer generates with transformers")
    from se_gym.agents.proposer import ModelProposer
    from se_gym.llm import build_tiny_model

    tiny = build_tiny_model(tmp_path / "tiny", max_position_embeddings=512)
    sp = _selfplay(tmp_path, proposer=f"model:{tiny}", propose_max_tokens=6)
    agent = sp._proposer_for(1)
    docs = sp._docs(("abs",), sp.prompts.propose(sp.library, ("abs",), []))
    texts = agent.propose_many([(docs, []), (docs, [])], 1)
    assert isinstance(agent, ModelProposer) and len(texts) == 2 and all(isinstance(t, str) for t in texts)


@pytest.mark.parametrize("proposer, share, by_role", [("policy", 0.0, {"solve": 4, "propose": 0}),
                                                      ("policy", 0.5, {"solve": 4, "propose": 4}),
                                                      ("policy", 0.2, {"solve": 4, "propose": 1}),
                                                      ("frozen", 0.5, {"solve": 4, "propose": 0})])
def test_rehearsal_mixes_the_policys_own_valid_proposals_into_the_sft_step(tmp_path, monkeypatch, proposer, share, by_role):
    """Each SFT step trains on the accepted open-book answers plus, with rehearsal and the policy
    proposing, its own valid proposals of this round (prompt -> text) at the configured share."""
    import se_gym.training.sft as sft
    from se_gym.selfplay.validate import Outcome

    seen = []
    monkeypatch.setattr(sft, "train_sft", lambda policy, examples, config, progress=True: seen.append(list(examples)) or {"loss": [0.0]})
    sp = _selfplay(tmp_path, regime="sft", proposer=proposer, rehearsal=share)
    from se_gym.tasks.record import Task, TestCase

    case = TestCase("x=[1]", "1")
    tasks = [Task(f"t{i}", "train", "selfplay", f"question {i}", "def solve(x):", (case,), case, ("abs",), "") for i in range(2)]
    rows = [_row(t.id, "open", 1.0) for t in tasks for _ in range(2)] + [_row(t.id, "closed", 0.0) for t in tasks]
    items = [{"functions": ["abs"], "prompt": f"propose {i}", "text": f"proposal {i}"} for i in range(3)]
    outcomes = [Outcome(None, None, task=tasks[0]), Outcome(None, "no_question"), Outcome(None, None, task=tasks[1])]
    m = sp.learn(1, items, {"proposer": [0.0, -1.0, 0.0]}, {"rows": rows, "train": [t.to_json() for t in tasks]}, outcomes)
    assert m["sft_examples_by_role"] == by_role and m["sft_examples"] == sum(by_role.values())
    proposer_examples = [(e.prompt, e.response) for e in seen[0] if e.prompt.startswith("propose")]
    assert len(proposer_examples) == by_role["propose"]
    assert set(proposer_examples) <= {("propose 0", "proposal 0"), ("propose 2", "proposal 2")}  # the valid ones only
    if by_role["propose"] >= 2:
        assert set(proposer_examples) == {("propose 0", "proposal 0"), ("propose 2", "proposal 2")}


def test_every_selfplay_flag_has_help():
    import argparse

    from se_gym.selfplay.cli import configure

    parser = argparse.ArgumentParser()
    configure(parser)
    assert [a.option_strings for a in parser._actions if a.option_strings and not a.help] == []


def test_the_gap_curriculum_covers_first_then_follows_the_gap_then_composes():
    from se_gym.selfplay.prompts import Curriculum

    c = Curriculum(["a", "b", "c", "d"], 1, seed=0)
    assert sorted(k for g in c.prefer(4, 0, {}) for k in g) == ["a", "b", "c", "d"]  # nothing tried: each once
    rates = {"a": {"open": 1.0, "closed": 0.1}, "b": {"open": 1.0, "closed": 1.0}, "c": {"open": 0.5, "closed": 0.0}}
    counts = {k: 0 for k in "abcd"}
    for g in c.prefer(24, 1, rates):
        counts[g[0]] += 1
    # weights: a 0.9 (gap), b 0.1 (learned: the floor), c 0.5 (gap), d 1.0 (untried)
    assert counts == {"a": 9, "b": 1, "c": 5, "d": 9}
    assert c.prefer(24, 1, rates) == Curriculum(["a", "b", "c", "d"], 1, seed=0).prefer(24, 1, rates)  # deterministic
    learned = {k: {"open": 1.0, "closed": 0.9} for k in "abcd"}
    groups = c.prefer(4, 2, learned)
    assert all(len(g) == 2 for g in groups)  # every function learned: compose two


def test_function_rates_read_the_earlier_rounds_solver_samples(tmp_path):
    import json

    sp = _selfplay(tmp_path, curriculum="gap")
    (sp.rdir(1)).mkdir(parents=True)
    train = [{"id": "t1", "functions": ["abs"]}, {"id": "t2", "functions": ["abs", "add"]}]
    rows = [_row("t1", "open", 1.0), _row("t1", "closed", 0.0), _row("t2", "open", 0.0), _row("t2", "closed", 1.0, infra=True)]
    (sp.rdir(1) / "solve.json").write_text(json.dumps({"train": train, "rows": rows}))
    assert sp._function_rates(2) == {"abs": {"open": 0.5, "closed": 0.0}, "add": {"open": 0.0}}
    assert sp._function_rates(1) == {}  # only rounds before


@pytest.mark.parametrize("span, expected", [(1, {"now"}), (0, {"now", "r1", "r2"}), (2, {"now", "r2"})])
def test_rehearsal_rounds_choose_which_rounds_proposals_are_rehearsed(tmp_path, span, expected):
    import json

    from se_gym.agents.proposal import Proposal
    from se_gym.selfplay.validate import Outcome

    sp = _selfplay(tmp_path, regime="sft", rehearsal=0.5, rehearsal_rounds=span)
    task = SimpleNamespace(id="t", to_json=lambda: {"id": "t"})
    for q in (1, 2):
        sp.rdir(q).mkdir(parents=True)
        items = [{"functions": ["abs"], "prompt": f"p{q}", "text": f"r{q}"}, {"functions": ["abs"], "prompt": "bad", "text": "bad"}]
        outs = [Outcome(Proposal("q", (), ""), None, task=task).to_json(), Outcome(Proposal("q", (), ""), "no_question").to_json()]
        outs[0]["task"] = None  # read back without a task: only the reason counts here
        (sp.rdir(q) / "propose.json").write_text(json.dumps({"items": items}))
        (sp.rdir(q) / "validate.json").write_text(json.dumps({"outcomes": outs}))
    own = sp._rehearsal(3, [{"prompt": "pnow", "text": "now"}], [Outcome(None, None, task=task)])
    assert {x["text"] for x in own} == expected


def test_a_run_folder_bound_before_eval_split_still_resumes(tmp_path):
    """The default evaluation binds the folder as before --eval-split (eval 'builtin:single_test', no
    eval_split), so runs started before the task-spec grammar resume; another split is another run."""
    import json

    from se_gym.errors import CLIError
    from se_gym.storage import RUN_FILE

    sp = _selfplay(tmp_path, eval="builtin")
    bound = json.loads((sp.out / RUN_FILE).read_text())["config"]
    assert bound["eval"] == "builtin:single_test" and "eval_split" not in bound
    _selfplay(tmp_path, eval="builtin:single_test")  # the old spelling: the same run
    with pytest.raises(CLIError, match="eval_split"):
        _selfplay(tmp_path, eval="builtin", eval_split="multi_test")
