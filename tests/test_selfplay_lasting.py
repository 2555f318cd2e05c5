"""Self-play that lasts (issue 45): the switches of se_gym.selfplay.curation (validation split, early
stopping on it, band filter, novelty, replay, role mixing), the verdict rule of the rounds, the demo's
self-play defaults, and kill -9 in every stage of a round that uses them all."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from _selfplay_helpers import FUNCTIONS, LIBRARY
from _selfplay_helpers import selfplay as _selfplay
from conftest import need_module


def _task(i, question=None, inputs=None, key="abs"):
    from se_gym.tasks.record import Task, TestCase

    inputs = inputs or [f"x=[{i}, {j}]" for j in range(8)]
    cases = tuple(TestCase(x, "1") for x in inputs)
    return Task(f"sp-{i:012d}", "selfplay", "selfplay", question or f"question {i}", "def solve(x):", cases, cases[0], (key,), "")


def _outcome(task):
    from se_gym.agents.proposal import Proposal
    from se_gym.selfplay.validate import Outcome

    return Outcome(Proposal(task.query, tuple(c.input for c in task.test_cases), "ref", task.functions), None, task=task)


def _row(task, book, reward):
    return {"task": task, "book": book, "sample": 0, "prompt": f"{book} prompt {task}", "response": "r", "reward": reward, "infrastructure": False}


# -- the pure pieces ---------------------------------------------------------------------------------
def test_the_validation_split_is_a_stable_share_spread_over_the_functions():
    from se_gym.selfplay.curation import validation_ids

    keys = ("abs", "cumsum", "add", "sort", "flip", "max")
    tasks = [_task(100 * k + i, key=key) for k, key in enumerate(keys) for i in range(2)] + [_task(999, key="diff")]
    held = validation_ids(tasks, 0.25, seed=0)
    assert len(held) == 3  # a quarter of 13
    by_fn = {key: {t.id for t in tasks if t.functions == (key,)} for key in (*keys, "diff")}
    assert all(len(ids - held) >= 1 for ids in by_fn.values())  # every function keeps a task to train on ...
    assert not by_fn["diff"] & held  # ... so a function's only task is never held out
    assert len({next(k for k, ids in by_fn.items() if i in ids) for i in held}) == 3  # spread: three functions, one each
    assert validation_ids(list(reversed(tasks)), 0.25, seed=0) == held  # the same tasks, the same split (a rerun, a resume)
    assert any(validation_ids(tasks, 0.25, seed=s) != held for s in range(1, 6))  # another seed holds out others
    assert validation_ids(tasks, 0.0, 0) == set()
    many = [_task(i, key=keys[i % 6]) for i in range(400)]
    assert 95 <= len(validation_ids(many, 0.25, seed=3)) <= 101


@pytest.mark.parametrize("rates, band_open, band, ok", [
    ({"open": 1.0, "closed": 0.0}, 0.5, (0.0, 0.75), True),
    ({"open": 0.25, "closed": 0.0}, 0.5, (0.0, 0.75), False),  # not solved with the docs: maybe a bad label
    ({"open": 1.0, "closed": 1.0}, 0.5, (0.0, 0.75), False),  # already known closed book: teaches nothing
    ({"open": 1.0, "closed": 0.0}, 0.0, (0.25, 0.75), False),  # below the band
    ({"open": 1.0}, 0.5, (0.0, 0.75), False),  # no closed-book rate (sandbox failures): not known to be in the band
    ({"open": 1.0}, 0.5, (0.0, 1.0), True),  # a band that asks nothing of the closed book
    (None, 0.0, (0.0, 1.0), True),  # no filter
])
def test_band_filter(rates, band_open, band, ok):
    from se_gym.selfplay.curation import in_band

    assert in_band(rates, band_open, band) is ok


def test_novelty_prefers_proposals_unlike_the_others_and_balances_functions():
    from se_gym.selfplay.curation import novelty_weights, pick

    same = {"question": "Given the list x, return 3 values.", "inputs": [f"x=[{j}, 1]" for j in range(8)], "functions": ["abs"]}
    items = [dict(same, question=same["question"].replace("3", str(k))) for k in range(3)]  # one question, numbers aside
    items.append({"question": "Another question.", "inputs": same["inputs"], "functions": ["abs"]})
    items.append({"question": "About cumsum.", "inputs": ["x=[1]"], "functions": ["cumsum"]})
    w = novelty_weights(items)
    assert w[0] == w[1] == w[2] == pytest.approx(0.05 / 4) and w[3] == pytest.approx(1 / 4) and w[4] == pytest.approx(1.0)
    repeats = [sum(1 for x in pick(items, 2, random.Random(s), w) if x in items[:3]) for s in range(200)]
    uniform = [sum(1 for x in pick(items, 2, random.Random(s)) if x in items[:3]) for s in range(200)]
    assert sum(repeats) / 200 < 0.15 < 1.0 < sum(uniform) / 200  # uniform replay: 1.2 of 2 are the repeated task
    seven = pick(items, 7, random.Random(0), w)
    assert len(seven) == 7 and all(x in seven for x in items)  # every candidate once before any twice


def test_epoch_picker_keeps_the_best_epoch_or_the_starting_weights():
    torch = need_module("torch", "the picker copies torch weights")
    from se_gym.selfplay.curation import EpochPicker

    model = torch.nn.Linear(2, 1)
    scripted = iter([0.2, 0.5, 0.4, 0.4, 0.9])
    picker = EpochPicker(model, lambda: next(scripted), patience=2)  # epoch 0 (the start) scores 0.2
    seen = []
    for epoch in range(1, 5):
        with torch.no_grad():
            model.weight.fill_(float(epoch))
        seen.append(picker.after_epoch(epoch))
        if seen[-1]:
            break
    assert seen == [False, False, True]  # best at epoch 1, then two epochs without a better score: stop
    assert picker.restore() == 1 and torch.all(model.weight == 1.0)
    assert picker.metrics() == {"scores": [0.2, 0.5, 0.4, 0.4], "best_epoch": 1, "best": 0.5}

    model = torch.nn.Linear(2, 1)
    start = model.weight.detach().clone()
    scores = iter([0.5, 0.5, 0.3, 0.5, 0.4])
    picker = EpochPicker(model, lambda: next(scores), patience=2)
    stops = []
    for epoch in (1, 2, 3, 4):
        with torch.no_grad():
            model.weight.add_(1.0)
        stops.append(picker.after_epoch(epoch))
    assert stops == [False] * 4  # patience counts only once an epoch has beaten the start: all epochs run
    assert picker.restore() == 0 and torch.equal(model.weight, start)  # nothing beat the start: no update

    picker = EpochPicker(model, lambda: 1.0, patience=2)
    assert picker.saturated and picker.restore() == 0  # a start that solves the whole split: nothing to train


def test_epoch_picker_with_a_proposal_check_keeps_no_epoch_that_writes_worse_than_the_start():
    """With ``check`` (the proposer's valid share with the current weights), a better-scoring epoch is
    kept only when its check is at least the start's; the start is checked, on its own weights, only
    once some epoch beats its score. Without ``check`` the same scores keep epoch 1."""
    torch = need_module("torch", "the picker copies torch weights")
    from se_gym.selfplay.curation import EpochPicker

    valid = {0.0: 0.9, 1.0: 0.6, 2.0: 0.9, 3.0: 1.0}  # the check's valid share per weights (epoch e has weights e)

    def run(check, floor=1.0):
        model = torch.nn.Linear(1, 1)
        with torch.no_grad():
            model.weight.fill_(0.0)
        scores = iter([0.2, 0.5, 0.5, 0.4, 0.4])
        checked = []

        def spy():
            checked.append(model.weight.item())
            return valid[model.weight.item()]

        picker = EpochPicker(model, lambda: next(scores), patience=2, check=spy if check else None, floor=floor)
        assert checked == []  # nothing checked until an epoch beats the start
        for epoch in (1, 2, 3, 4):
            with torch.no_grad():
                model.weight.fill_(float(epoch))
            if picker.after_epoch(epoch):
                break
        return picker, picker.restore(), model.weight.item(), checked

    picker, best, weight, checked = run(check=True)
    assert (best, weight) == (2, 2.0)  # epoch 1 scored better but wrote worse (0.6 < 0.9): epoch 2 (same score) is kept
    assert checked == [0.0, 1.0, 2.0]  # the start (on its own weights), epoch 1, epoch 2; epochs 3-4 scored no better
    assert picker.metrics()["propose_check"] == {"valid": {"0": 0.9, "1": 0.6, "2": 0.9}, "refused": [1]}
    picker, best, weight, checked = run(check=False)
    assert (best, weight, checked) == (1, 1.0, []) and "propose_check" not in picker.metrics()
    picker, best, weight, checked = run(check=True, floor=0.6)
    assert (best, weight, checked) == (1, 1.0, [0.0, 1.0])  # with a floor of 0.6, epoch 1's 0.6 is enough


def test_the_proposal_check_counts_the_policys_valid_tasks_on_proposal_prompts(tmp_path):
    """``_propose_check``: the policy (through the engine, at the run's proposal temperature) writes
    ``propose_check`` tasks from the curriculum's proposal prompts with the round's own seed; the real
    validator counts the valid ones (here every other text has seven inputs)."""
    from se_gym.selfplay.loop import LocalEngine, _seed

    sp = _selfplay(tmp_path, functions=("cumsum",), propose_check=4, propose_temperature=0.7, val_share=0.25)
    name = sp.library.qualified("cumsum")
    calls = []

    class Engine(LocalEngine):
        def push(self, model, path=None):
            calls.append(("push", model))

        def generate(self, prompts, n, temperature, max_tokens, seed):
            calls.append((len(prompts), temperature, seed))
            out = []
            for i, _ in enumerate(prompts):
                inputs = "\n".join(f"x=[{10 * i + j}, {j}]" for j in range(8 if i % 2 == 0 else 7))
                out.append([f"Question: Running totals of x, case {i}.\nInputs:\n{inputs}\nReference:\n```python\n"
                            f"import {sp.library.package}\ndef solve(x):\n    return {name}(x)\n```"])
            return out

    sp.engine = Engine(sp.library, sp.validation)
    sp.policy = type("P", (), {"model": "weights"})()
    try:
        assert sp._propose_check(3) == 0.5
    finally:
        sp.engine.close()
    assert calls == [("push", "weights"), (4, 0.7, _seed(0, 3, "propose-check"))]


def test_train_sft_stops_when_after_epoch_says_so(init_dir):
    from se_gym.training.policy import Policy
    from se_gym.training.sft import SFTConfig, SFTExample, train_sft

    policy = Policy.from_pretrained(init_dir)
    calls = []
    m = train_sft(policy, [SFTExample("a", "b"), SFTExample("c", "d")], SFTConfig(learning_rate=1e-3, epochs=5, batch_size=2),
                  progress=False, after_epoch=lambda e: calls.append((e, policy.model.training)) or e == 2)
    assert calls == [(1, False), (2, False)] and m["epochs"] == 2  # scored in eval mode; stopped after epoch 2


# -- the learn step --------------------------------------------------------------------------------
def _round_split(share, r, n=3):
    """``n`` tasks about abs of which the validation split of round ``r`` holds exactly one: (held, the others)."""
    from se_gym.selfplay.curation import validation_ids
    from se_gym.selfplay.loop import _seed

    tasks = [_task(i) for i in range(n)]
    held = validation_ids(tasks, share, _seed(0, r, "validation"))
    assert len(held) == 1, held  # (share 0.34 of 3 tasks: one, whatever the offset below 0.98)
    return [t for t in tasks if t.id in held][0], [t for t in tasks if t.id not in held]


@pytest.mark.parametrize("novelty", [False, True])
def test_learn_mixes_roles_and_never_trains_on_validation_or_out_of_band_tasks(tmp_path, monkeypatch, novelty):
    """Round 2: its fresh tasks are a validation task, an in-band one and one the solver already knows;
    a task replayed from round 1 is trained on whatever its rates (the band is for new tasks).  The SFT
    step gets the in-band and replayed tasks' accepted answers plus the policy's own valid proposals of
    rounds 1-2 at the 50% share, never those of the validation or the out-of-band task."""
    import se_gym.training.sft as sft
    from se_gym.selfplay.loop import _write

    torch = need_module("torch", "the learn step's early stopping copies torch weights")
    from types import SimpleNamespace

    seen, scored = [], []

    def fake_sft(policy, examples, config, progress=True, after_epoch=None):
        seen.append(list(examples))
        after_epoch(1)  # one epoch, scored on the validation split
        return {"loss": [0.0]}

    monkeypatch.setattr(sft, "train_sft", fake_sft)
    import se_gym.selfplay.curation as curation

    weighed = []  # the pools --novelty weighs (none without it)
    real_weights = curation.novelty_weights
    monkeypatch.setattr(curation, "novelty_weights", lambda pool: weighed.append(len(pool)) or real_weights(pool))
    sp = _selfplay(tmp_path, rounds=2, regime="sft", rehearsal=0.5, rehearsal_rounds=0, novelty=novelty, val_share=0.34,
                   band_open=0.5, band=(0.0, 0.75))
    sp.policy = SimpleNamespace(model=torch.nn.Linear(1, 1))
    sp._accuracy = lambda tasks, push=False: scored.append([t.id for t in tasks]) or {"accuracy": 0.5 * len(scored)}
    val, (good, known) = _round_split(0.34, 2)
    old = _task(9999)  # round 1's only task: never held out
    sp.rdir(1).mkdir(parents=True)
    _write(sp.rdir(1) / "propose.json", {"items": [{"functions": ["abs"], "prompt": "propose r1", "text": "old proposal"}]})
    _write(sp.rdir(1) / "validate.json", {"outcomes": [_outcome(old).to_json()]})
    _write(sp.rdir(1) / "solve.json", {"train": [old.to_json()], "rows": [_row(old.id, "open", 1.0), _row(old.id, "closed", 0.0)]})
    fresh = [val, good, known]
    items = [{"functions": ["abs"], "prompt": f"propose {t.id}", "text": f"proposal {t.id}"} for t in fresh]
    outcomes = [_outcome(t) for t in fresh]
    sp.rdir(2).mkdir()
    _write(sp.rdir(2) / "validate.json", {"outcomes": [o.to_json() for o in outcomes]})
    rows = []
    for t, closed in ((val, 0.0), (good, 0.0), (known, 1.0), (old, 1.0)):
        rows += [_row(t.id, "open", 1.0), _row(t.id, "closed", closed)]
    solved = {"rows": rows, "train": [t.to_json() for t in (good, known, old, val)]}
    m = sp.learn(2, items, {"proposer": [0.0, 1.0, 0.0]}, solved, outcomes)
    assert m["sft_tasks"] == sorted([good.id, old.id])  # not the validation task, not the known one
    assert m["band"] == {"fresh": 2, "out_of_band": 1}
    assert m["sft_examples_by_role"] == {"solve": 2, "propose": 2} and m["rehearsal_pool"] == 2
    proposer = {e.response for e in seen[0] if e.prompt.startswith("propose")}
    assert proposer == {f"proposal {good.id}", "old proposal"}
    solver = sorted(e.prompt for e in seen[0] if not e.prompt.startswith("propose"))
    assert solver == sorted(sp.prompts.solve(sp.library, t, "closed") for t in (good, old))  # trained under the closed-book prompt
    assert sp._val_ids(2) == {val.id} and sp._val_ids(1) == set()
    assert scored == [[val.id], [val.id]]  # the start and epoch 1, on the validation split only (never the test split)
    assert m["val"] == {"scores": [0.5, 1.0], "best_epoch": 1, "best": 1.0, "n": 1} and m["updated"]
    assert weighed == ([2] if novelty else [])  # --novelty: the rehearsed proposals are picked by their novelty


@pytest.mark.parametrize("propose_check", [0, 8])
def test_the_learn_step_with_a_proposal_check_keeps_the_start_when_the_epoch_writes_worse(tmp_path, monkeypatch, propose_check):
    """``--propose-check N``: the round's only better-scoring epoch writes fewer valid tasks than the start
    (0.5 against 0.75 of N), so the learn step keeps the start (no update); without it the epoch is kept."""
    from types import SimpleNamespace

    import se_gym.training.sft as sft

    torch = need_module("torch", "the learn step's early stopping copies torch weights")

    def fake_sft(policy, examples, config, progress=True, after_epoch=None):
        after_epoch(1)
        return {"loss": [0.0]}

    monkeypatch.setattr(sft, "train_sft", fake_sft)
    (tmp_path / "rules.py").write_text(RULES)
    sp = _selfplay(tmp_path, regime="sft", val_share=0.34, propose_check=propose_check, proposer=f"{tmp_path / 'rules.py'}:SharedRules")
    sp.policy = SimpleNamespace(model=torch.nn.Linear(1, 1))
    accs = iter([0.0, 1.0])  # the start, epoch 1 (on the validation split)
    sp._accuracy = lambda tasks, push=False: {"accuracy": next(accs)}
    checks = iter([0.75, 0.5])
    monkeypatch.setattr(sp, "_propose_check", lambda r: next(checks))
    val, (good, known) = _round_split(0.34, 1)
    fresh = [val, good, known]
    outcomes = [_outcome(t) for t in fresh]
    from se_gym.selfplay.loop import _write

    sp.rdir(1).mkdir(parents=True)
    _write(sp.rdir(1) / "validate.json", {"outcomes": [o.to_json() for o in outcomes]})
    rows = [_row(t.id, b, 1.0) for t in fresh for b in ("open", "closed")]
    m = sp.learn(1, [{"functions": ["abs"], "prompt": "p", "text": "t"}] * 3, {"proposer": [0.0] * 3},
                 {"rows": rows, "train": [t.to_json() for t in fresh]}, outcomes)
    assert m["val"]["scores"] == [0.0, 1.0]
    if propose_check:
        assert not m["updated"] and m["val"]["best_epoch"] == 0
        assert m["val"]["propose_check"] == {"valid": {"0": 0.75, "1": 0.5}, "refused": [1]}
    else:
        assert m["updated"] and m["val"]["best_epoch"] == 1 and "propose_check" not in m["val"]


def test_the_curriculum_is_a_swappable_task_selection_function(tmp_path):
    from se_gym.selfplay import loop

    loop.CURRICULA["first"] = lambda sp, n, r: [(sp.curriculum.keys[0],)] * n
    try:
        sp = _selfplay(tmp_path, curriculum="first")
        assert loop.CURRICULA[sp.config.curriculum](sp, 3, 1) == [("abs",)] * 3
    finally:
        del loop.CURRICULA["first"]
    from se_gym.errors import CLIError

    with pytest.raises(CLIError, match="curriculum must be one of cover, gap"):
        _selfplay(tmp_path / "x", curriculum="first")


# -- the rounds' verdict and the demo's defaults ------------------------------------------------------
def _rounds(valid, accs):
    rows = [{"round": 0, "acc_mean": accs[0][0], "acc_sd": accs[0][1]}]
    for k, (v, (m, sd)) in enumerate(zip(valid, accs[1:]), 1):
        rows.append({"round": k, "valid_rate": v, "acc_mean": m, "acc_sd": sd})
    return rows


def test_the_sustained_rule():
    from se_gym.selfplay.experiment import sustained

    assert sustained(_rounds([0.9, 0.8, 0.85, 0.9], [(0, 0), (0.5, 0.1), (0.6, 0.1), (0.55, 0.1), (0.6, 0.1)]))[0]  # a dip within one sd
    assert not sustained(_rounds([0.9, 0.79, 0.85], [(0, 0), (0.5, 0.1), (0.6, 0.1), (0.6, 0.1)]))[0]  # one round under 80% valid
    assert not sustained(_rounds([0.9] * 4, [(0, 0), (0.5, 0.1), (0.8, 0.1), (0.6, 0.1), (0.8, 0.1)]))[0]  # round 3 fell > one sd
    assert not sustained(_rounds([0.9] * 3, [(0, 0), (0.9, 0.0), (0.85, 0.1), (0.85, 0.05)]))[0]  # last below the best of rounds 1-3


def test_demo_selfplay_defaults_on_a_cpu_the_small_base_six_rounds_and_the_best_setting():
    from se_gym.demo import DemoOptions, demo_config, selfplay_config
    from se_gym.selfplay.experiment import DEFAULT_SETTING, SETTINGS

    o = DemoOptions(selfplay=True)
    assert demo_config(o, "cpu").hidden == 64  # the small base: minutes on a CPU, not hours
    assert demo_config(o, "cuda").hidden == 256
    cfg = selfplay_config(o)
    assert cfg.rounds >= 6 and cfg.setting == DEFAULT_SETTING
    assert selfplay_config(DemoOptions(selfplay=True, rounds=10, setting="plain")).rounds == 10
    from dataclasses import fields

    choices = next(f for f in fields(DemoOptions) if f.name == "setting").metadata["choices"]
    assert tuple(choices) == tuple(SETTINGS)


def test_the_round_table_pools_the_rejection_reasons_over_seeds():
    """The per-round table says why proposals were rejected: the reasons of every seed's round, summed."""
    from se_gym.selfplay.experiment import per_round, render_rounds

    def seed(rejected):
        return {"rounds": {"sft_selfplay": [{"round": 0, "closed_book_acc": 0.0},
                                            {"round": 1, "valid": 12 - sum(rejected.values()), "proposed": 12, "valid_rate": 0.5,
                                             "rejected": rejected, "closed_book_acc": 0.5}]}}

    rows = per_round([seed({"too_few_inputs": 2, "bad_inputs": 1}), seed({"too_few_inputs": 1}), seed({})], "sft_selfplay")
    assert rows[1]["rejected"] == {"too_few_inputs": 3, "bad_inputs": 1} and rows[1]["valid"] == 32
    table = render_rounds(rows, [])
    assert "| rejected (SFT run) |" in table.splitlines()[0]
    assert "| 32/36 (89%) | too_few_inputs 3, bad_inputs 1 |" in table


def test_the_default_setting_writes_the_proposals_and_the_fresh_pool_at_temperature_0_7(tmp_path, monkeypatch):
    """The demo's default setting (``checked``, built on ``cool``) samples the policy's proposals, and the fresh pool it rehearses,
    at temperature 0.7 (``fresh``, the setting before it: 1.0); the validator is the same."""
    from se_gym.selfplay import loop
    from se_gym.selfplay.experiment import DEFAULT_SETTING, SETTINGS, MiniSelfPlay, MiniSelfPlayConfig

    assert SETTINGS["cool"] == {**SETTINGS["fresh"], "propose_temperature": 0.7}
    assert DEFAULT_SETTING == "checked" and SETTINGS["checked"] == {**SETTINGS["cool"], "propose_check": 24, "propose_floor": 0.9}
    made = []

    def run_all(self):
        made.append(self.config)
        return [{"round": 0}]

    monkeypatch.setattr(loop.SelfPlay, "run_all", run_all)
    exp = MiniSelfPlay(tmp_path / "exp", MiniSelfPlayConfig(), progress=False)
    for regime in ("sft", "rl"):
        exp.selfplay(0, tmp_path / "base", ["abs", "cumsum"], regime, tmp_path / "exp" / "seed0")
    assert [c.propose_temperature for c in made] == [0.7, 0.7]
    assert made[0].proposer == "policy" and made[0].min_inputs == 8 and made[0].rehearsal_samples == 48
    exp.cfg = MiniSelfPlayConfig(setting="fresh")
    exp.selfplay(0, tmp_path / "base", ["abs", "cumsum"], "sft", tmp_path / "exp" / "seed1")
    assert made[-1].propose_temperature == 1.0

    temps = []

    class Engine(loop.LocalEngine):
        def generate(self, prompts, n, temperature, max_tokens, seed):
            temps.append(temperature)
            return [["Question: q"] * n for _ in prompts]

    sp = _selfplay(tmp_path, propose_temperature=SETTINGS[DEFAULT_SETTING]["propose_temperature"], rehearsal=0.5, rehearsal_samples=3)
    sp.engine = Engine(sp.library, sp.validation)
    try:
        sp._proposer_for(1).propose_many([(sp._docs(("abs",), "Docs:\nWrite a task:\n"), [])], 1)
        assert sp._rehearsal_samples(1) == {"written": 3, "valid": []}
    finally:
        sp.engine.close()
    assert temps == [0.7, 0.7]  # the round's proposals, then the fresh pool


# -- kill -9 in every stage of a round that uses every switch ----------------------------------------
RULES = '''
"""Writes valid tasks by rule and counts as the policy (so rehearsal mixes its proposals into the update)."""
from se_gym.agents.proposal import Proposal
from se_gym.agents.proposer import ProposerAgent
from se_gym.training.miniature import FUNCTIONS


class SharedRules(ProposerAgent):
    shares_policy = True

    def propose_many(self, requests, seed):
        out = []
        for i, (docs, refs) in enumerate(requests):
            key, name = docs.functions[0], docs.names[0]
            base = seed % 1000 + 50 * i
            if FUNCTIONS[key][0] == 1:
                args, inputs = "x", [f"x={[base + j, -j - 1, 2 * j + 3]}" for j in range(8)]
            else:
                args, inputs = "x1, x2", [f"x1={[base + j, 2]}, x2={[3, -j]}" for j in range(8)]
            ref = f"import {docs.package}\\ndef solve({args}):\\n    return {name}({args})\\n"
            out.append(Proposal(f"Apply {key} to the input, case {base}.", tuple(inputs), ref))
        return out

    def propose(self, docs, references):
        return self.propose_many([(docs, references)], 0)[0]
'''


def test_kill_9_in_each_stage_with_every_switch_then_rerun_gives_the_uninterrupted_result(tmp_path):
    """Round 2 (validation split, replay, role mixing with novelty and fresh samples, band filter, early stopping) is
    killed with SIGKILL just after each stage's file appears and rerun each time: no stage file is
    rewritten, and the finished log equals that of a run never killed (wall times aside)."""
    from conftest import REPO

    need_module("torch", "self-play trains with torch")
    from se_gym.llm import build_tiny_model

    tiny = build_tiny_model(tmp_path / "tiny", max_position_embeddings=512)
    (tmp_path / "plug").mkdir()
    (tmp_path / "plug" / "rules.py").write_text(RULES)
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}

    def args(out):
        return [sys.executable, "-m", "se_gym.cli", "selfplay", "--out", str(out), "--model", str(tiny), "--library", LIBRARY,
                "--prompts", "miniature", "--rounds", "2", "--proposals", "4", "--samples", "1", "--functions", *FUNCTIONS,
                "--solve-max-tokens", "8", "--min-tasks", "3", "--sft-epochs", "2", "--no-progress", "--eval", "functions",
                "--eval-limit", "2", "--proposer", str(tmp_path / "plug" / "rules.py") + ":SharedRules", "--val-share", "0.4",
                "--replay-tasks", "2", "--rehearsal", "0.5", "--rehearsal-rounds", "0", "--novelty", "--band", "0", "0.75",
                "--rehearsal-samples", "4", "--propose-check", "2"]

    ref = subprocess.run(args(tmp_path / "ref"), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert ref.returncode == 0, ref.stdout[-2000:] + ref.stderr[-3000:]
    out = tmp_path / "run"
    rnd = out / "round_002"
    stamps: dict = {}
    for name in ("propose.json", "validate.json", "solve.json", "rehearsal.json", "learn/DONE", "eval.json"):
        p = subprocess.Popen(args(out), env=env, cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while not (rnd / name).exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        assert (rnd / name).exists(), f"{name} was never written"
        for f in [*rnd.glob("*.json"), *rnd.glob("learn/DONE")]:
            st = f.stat()
            assert stamps.setdefault(f, (st.st_ino, st.st_mtime_ns)) == (st.st_ino, st.st_mtime_ns), f"{f.name} was rewritten"
    p = subprocess.run(args(out), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]

    def log(path):
        rows = [json.loads(ln) for ln in (path / "log.jsonl").read_text().splitlines()]
        for r in rows:
            r.pop("wall_s", None)
            r.get("losses", {}).pop("wall_s", None)
            r.get("eval", {}).pop("wall_s", None)
        return rows

    got, want = log(out), log(tmp_path / "ref")
    assert got == want
    r2 = got[2]
    assert r2["valid"] == 4 and r2["validation_tasks"] >= 1 and r2["replayed"] >= 1
    assert r2["losses"]["sft_examples_by_role"]["propose"] > 0 and "val" in r2["losses"]
    assert r2["losses"]["rehearsal_samples"] == {"written": 4, "valid": 4}  # the proposer's extra tasks, all valid by rule
    assert r2["losses"]["rehearsal_pool"] >= 4 + 1
    from se_gym.library import from_spec
    from se_gym.selfplay.curation import validation_ids
    from se_gym.selfplay.loop import SelfPlayConfig, _seed, load_eval_tasks

    held = set()
    for q in (1, 2):
        outs = json.loads((out / f"round_00{q}" / "validate.json").read_text())["outcomes"]
        tasks = [_task_json(o["task"]) for o in outs if o["task"]]
        held |= validation_ids(tasks, 0.4, _seed(0, q, "validation"))
    solved = {t["id"] for q in (1, 2) for t in json.loads((out / f"round_00{q}" / "solve.json").read_text())["train"]}
    assert held and held <= solved and len(held) == r2["validation_tasks"]  # every validation task was solved (for its rates) ...
    assert not held & (set(r2["losses"]["sft_tasks"]) | set(got[1]["losses"].get("sft_tasks", [])))  # ... and never trained on
    cfg = SelfPlayConfig(model="unused", library=LIBRARY, prompts="miniature", functions=FUNCTIONS, eval="functions")
    test = load_eval_tasks("functions", from_spec(LIBRARY), cfg)  # the held-out test split it was evaluated on
    shown = {(t.query, tuple(c.input for c in t.test_cases)) for t in test}
    val = [_task_json(o["task"]) for q in (1, 2) for o in json.loads((out / f"round_00{q}" / "validate.json").read_text())["outcomes"]
           if o["task"] and o["task"]["id"] in held]
    assert not {t.id for t in test} & held and not {(t.query, tuple(c.input for c in t.test_cases)) for t in val} & shown


def _task_json(d):
    from se_gym.tasks.record import Task

    return Task.from_json(d)


def test_the_rounds_are_evaluated_on_the_experiments_test_questions(tmp_path):
    """A round's closed-book accuracy (the loop's ``--eval functions``) and the experiment's final
    table are on one question set: the world's held-out test questions for the seed."""
    from se_gym.selfplay.experiment import MiniSelfPlay, MiniSelfPlayConfig
    from se_gym.selfplay.loop import SelfPlayConfig, load_eval_tasks

    exp = MiniSelfPlay(tmp_path, MiniSelfPlayConfig(), progress=False)
    for seed in (0, 1):
        library, functions, train, test = exp.world(seed)
        cfg = SelfPlayConfig(model="unused", library=f"seed:{100 + seed}", prompts="miniature", functions=tuple(functions),
                             eval="functions", seed=seed)
        assert [t.id for t in load_eval_tasks("functions", library, cfg)] == [t.id for t in test]
        assert [t.id for t in load_eval_tasks("miniature", library, cfg)] == [t.id for t in test]  # (the old spelling)
        assert not {t.id for t in train} & {t.id for t in test}


class _Stop(Exception):
    pass


def _stop_before_learning(sp, monkeypatch, answers):
    """Runs ``sp``'s rounds up to the learn step with generation stubbed (no model: every prompt gets
    ``answers``, bodies of ``solve(x)``); the proposer, validator and judge stay real."""
    from se_gym.selfplay.loop import LocalEngine

    class Engine(LocalEngine):
        def generate(self, prompts, n, temperature, max_tokens, seed):
            return [[f"```python\nimport {sp.library.package}\ndef solve(x):\n    {a}\n```" for a in answers][:n] for _ in prompts]

    sp.engine = Engine(sp.library, sp.validation)
    monkeypatch.setattr(sp, "_load_policy", lambda path: None)
    monkeypatch.setattr(sp, "learn", lambda *a, **k: (_ for _ in ()).throw(_Stop()))


def test_solving_a_proposed_task_judges_answers_against_the_proposals_reference(tmp_path, monkeypatch):
    """The solve stage hands the judge each task's own reference (``Task.judge_item``), so strict's
    library dependence check compares an answer with the proposal's reference: an answer that takes
    the library's running totals but overwrites the first with ``x[0]`` (right in the real run) changes
    under the counterfactual library, which the no-reference rule accepts, but not as the reference
    does."""
    from se_gym.selfplay.loop import _read

    (tmp_path / "rules.py").write_text(RULES)
    sp = _selfplay(tmp_path, functions=("cumsum",), proposals=2, min_tasks=0, regime="sft",
                   proposer=f"{tmp_path / 'rules.py'}:SharedRules")
    name = sp.library.qualified("cumsum")
    _stop_before_learning(sp, monkeypatch, [f"y = {name}(x)\n    return y", f"y = {name}(x)\n    y[0] = x[0]\n    return y"])
    try:
        with pytest.raises(_Stop):
            sp.round(1)
    finally:
        sp.engine.close()
    rows = _read(sp.rdir(1) / "solve.json")["rows"]
    assert len({r["task"] for r in rows}) == 2
    got = {(r["sample"], r["reward"]) for r in rows}
    assert got == {(0, 1.0), (1, 0.0)}, rows  # the library's answer passes; the overwritten one is library_unused


def _round_two_solved(tmp_path, monkeypatch, **kw):
    """Round 1 written by hand (four cumsum tasks, one of them its validation split, all in the buffer),
    then round 2 run up to its learn step; returns (round 2's solve.json, round 1's tasks, the held id)."""
    from se_gym.selfplay.buffer import TaskBuffer
    from se_gym.selfplay.loop import _read, _write

    (tmp_path / "rules.py").write_text(RULES)
    sp = _selfplay(tmp_path, functions=("cumsum",), proposals=2, regime="sft", val_share=0.25,
                   proposer=f"{tmp_path / 'rules.py'}:SharedRules", **kw)
    old = [_task(i, key="cumsum") for i in range(4)]
    sp.rdir(1).mkdir(parents=True)
    _write(sp.rdir(1) / "validate.json", {"outcomes": [_outcome(t).to_json() for t in old]})
    _write(sp.rdir(1) / "solve.json", {"train": [t.to_json() for t in old], "rows": [_row(t.id, b, 0.5) for t in old for b in ("open", "closed")]})
    TaskBuffer(old).save(sp.rdir(1) / "buffer.jsonl")
    (held,) = sp._val_ids(1)
    _stop_before_learning(sp, monkeypatch, [f"return {sp.library.qualified('cumsum')}(x)"])
    try:
        with pytest.raises(_Stop):
            sp.round(2)
    finally:
        sp.engine.close()
    return _read(sp.rdir(2) / "solve.json"), {t.id for t in old}, held


@pytest.mark.parametrize("replay", [0, 2])
def test_replay_solves_earlier_rounds_tasks_again_never_their_validation_split(tmp_path, monkeypatch, replay):
    """Round 2 with ``--replay-tasks``: that many of round 1's buffer tasks are solved (and so trained
    on) again beside the round's new ones, never one of round 1's validation split; without it, none."""
    solved, old, held = _round_two_solved(tmp_path, monkeypatch, min_tasks=0, replay_tasks=replay)
    train = {t["id"] for t in solved["train"]}
    again = train & old
    assert solved["replayed"] == len(again) == replay
    assert held not in again
    assert len(train - again) == 2  # the round's own two tasks (one may be its validation split: solved, not trained on)


@pytest.mark.parametrize("curriculum", ["cover", "learnability"])
def test_the_top_up_never_trains_on_an_earlier_rounds_validation_split(tmp_path, monkeypatch, curriculum):
    """A round topped up from the buffer (``--min-tasks``), by either curriculum's top-up (uniform, or
    the learnability sampler's), takes every earlier task but round 1's validation task."""
    solved, old, held = _round_two_solved(tmp_path, monkeypatch, min_tasks=8, curriculum=curriculum)
    assert {t["id"] for t in solved["train"]} & old == old - {held}
    assert solved["topped_up"] == 3
