"""Experience internalization that trains: the regimes on a tiny model, and the K-round cell's resume.

The tiny model is built from scratch here (random init, no pre-training), so it reads nothing: the
off-policy test's teacher is :class:`se_gym.experience.miniworld.ReaderTeacher`, the rule-based
stand-in for a stronger teacher model that reads the injected experience.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import REPO, need_module


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    need_module("torch", "the regimes train a model")
    need_module("transformers", "the regimes train a model")
    from se_gym.training import miniature as mini

    path = tmp_path_factory.mktemp("exp-tiny") / "model"
    mini.build_tiny_model(path, seed=0, hidden=64, layers=2)
    return path


def _world():
    from se_gym.experience import miniworld as mw

    library, groups, train, test = mw.world(0, 1, 3, 2, 1)
    return library, train[0], test


def test_offpolicy_regime_raises_closed_book_accuracy_on_its_train_tasks(tiny):
    import torch

    from se_gym.experience import Injector, PrincipleExtractor
    from se_gym.experience import miniworld as mw
    from se_gym.experience.episodes import accuracy, run_episodes
    from se_gym.experience.regimes import offpolicy, teacher_samples
    from se_gym.training.policy import Policy
    from se_gym.training.rl import PolicySampler
    from se_gym.training.sft import SFTConfig

    torch.manual_seed(0)
    library, train, _ = _world()
    policy = Policy.from_pretrained(tiny, device="cpu")
    prompter = mw.MiniPrompter()
    closed = lambda: accuracy(run_episodes(PolicySampler(policy), train, library, Injector("none"), prompter, max_new_tokens=32))
    before = closed()
    # experience from the student's own (failed) closed-book episodes, then the teacher with it in context
    eps = run_episodes(PolicySampler(policy), train, library, Injector("none"), prompter, max_turns=2, temperature=1.0, max_new_tokens=32)
    lessons = PrincipleExtractor(mw.mini_docs(library)).extract(eps)
    teacher = run_episodes(mw.ReaderTeacher(), train, library, Injector("global", lessons, budget=64), prompter, max_new_tokens=32)
    assert accuracy(teacher) == 1.0
    pairs = teacher_samples(teacher, prompter)
    assert all("Docs:" in s.pair.teacher_prompt and "Docs:" not in s.pair.student_prompt for s in pairs)
    metrics = offpolicy(policy, teacher, prompter, SFTConfig(learning_rate=3e-3, epochs=60, batch_size=8, warmup_ratio=0.1))
    assert metrics["accepted"] == len(train)
    after = closed()
    assert before == 0.0 and after >= 0.5, (before, after)


def test_onpolicy_regime_moves_the_student_towards_the_teacher_with_experience(tiny):
    import torch

    from se_gym.experience import Injector, PrincipleExtractor
    from se_gym.experience import miniworld as mw
    from se_gym.experience.episodes import run_episodes
    from se_gym.experience.regimes import onpolicy, onpolicy_pairs
    from se_gym.training.distill import OnPolicyConfig, OnPolicyDistiller
    from se_gym.training.policy import Policy

    torch.manual_seed(0)
    library, train, _ = _world()
    policy = Policy.from_pretrained(tiny, device="cpu")
    prompter = mw.MiniPrompter()
    distiller = OnPolicyDistiller(policy, OnPolicyConfig(learning_rate=3e-3, samples_per_prompt=1, max_new_tokens=24, batch_size=8, epochs=2))
    student = lambda: run_episodes(distiller.sampler, train, library, Injector("none"), prompter, max_turns=2, temperature=1.0, max_new_tokens=24)
    lessons = PrincipleExtractor(mw.mini_docs(library)).extract(student())
    inj = Injector("stepwise", lessons, budget=64)
    eps = student()
    pairs, responses = onpolicy_pairs(eps, inj, prompter)
    assert len(pairs) == sum(len(e.turns) for e in eps)
    assert all(p.student_prompt == t.prompt and "Docs:" not in p.student_prompt for p, t in zip(pairs, (t for e in eps for t in e.turns)))
    assert all("Docs:" in p.teacher_prompt for p in pairs)  # each function's lesson matches its question
    stats = onpolicy(distiller, student, inj, prompter, steps=4)
    assert stats["steps"] == 4 and stats["tokens"] > 0
    # the per-token KL to the frozen teacher with experience, on the student's own samples, went down
    assert stats["kl_last"] < stats["kl_first"], stats


def test_refuses_to_internalize_test_split_episodes(tiny):
    from se_gym.agents.base import ProtocolError
    from se_gym.experience import Injector
    from se_gym.experience import miniworld as mw
    from se_gym.experience.episodes import run_episodes
    from se_gym.experience.regimes import onpolicy_pairs, teacher_samples

    library, _, test = _world()
    eps = run_episodes(mw.ReaderTeacher(), test, library, Injector("none"), mw.MiniPrompter())
    with pytest.raises(ProtocolError):
        teacher_samples(eps, mw.MiniPrompter())
    with pytest.raises(ProtocolError):
        onpolicy_pairs(eps, Injector("none"), mw.MiniPrompter())


CELL_SCRIPT = """
import logging, sys, torch
logging.basicConfig(level=logging.INFO)  # (the loop's 'round k/K' lines are log records)
torch.set_num_threads(1)
from pathlib import Path
from se_gym.experience.loop import Cell, CellConfig
cfg = CellConfig(granularity="instance", injection="global", regime="offpolicy", iterations=2, functions_per_round=2, train_per_function=1,
                 test_per_function=1, samples=1, max_turns=1, sft_epochs=2, teacher="reader", base=sys.argv[2])
Cell(Path(sys.argv[1]), cfg, progress=False).execute()
"""


def test_cell_resumes_after_kill_9_between_rounds(tiny, tmp_path):
    out = tmp_path / "cell"
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    env.pop("SE_GYM_HOLD_AT", None)
    # the first run holds for good before round 1 (SE_GYM_HOLD_AT), so the kill lands between rounds
    err = tmp_path / "first.err"
    with open(err, "w") as f:  # (stderr to a file: a full pipe would stall the run before it holds)
        proc = subprocess.Popen([sys.executable, "-c", CELL_SCRIPT, str(out), str(tiny)], env={**env, "SE_GYM_HOLD_AT": "round1"}, cwd=REPO,
                                stdout=subprocess.PIPE, stderr=f, text=True)
    done0 = out / "round0" / "DONE"
    line = proc.stdout.readline()  # the hold's line, or "" when the run ended
    assert line.startswith("[hold] before round1"), line + err.read_text()[-2000:]
    assert done0.is_file()
    proc.send_signal(signal.SIGKILL)  # between rounds
    proc.wait()
    assert not (out / "round1" / "DONE").is_file()
    first = (out / "round0" / "round.json").read_text()
    stamp = done0.stat().st_mtime_ns
    again = subprocess.run([sys.executable, "-c", CELL_SCRIPT, str(out), str(tiny)], env=env, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "round 1/2" not in again.stderr and "round 2/2" in again.stderr  # round 0 was not redone
    assert done0.stat().st_mtime_ns == stamp and (out / "round0" / "round.json").read_text() == first
    rows = [json.loads(line) for line in (out / "rounds.jsonl").read_text().splitlines()]
    assert [r["round"] for r in rows] == [0, 1]
    assert set(rows[1]["retention"]) == {"round0", "round1"} and "collapse" in rows[1]
    assert (out / "round1" / "model" / "config.json").is_file()
    # the same folder with another configuration is refused, not mixed
    from se_gym.experience.loop import Cell, CellConfig
    from se_gym.storage import ConfigMismatch

    with pytest.raises(ConfigMismatch):
        Cell(out, CellConfig(iterations=2, base=str(tiny)))


def test_collapse_is_flagged_when_a_round_drops():
    from se_gym.experience.loop import flag_collapse, render_table

    rows = [{"round": 0, "heldout_closed": 0.5, "retention": {"round0": 1.0}},
            {"round": 1, "heldout_closed": 0.6, "retention": {"round0": 0.5, "round1": 1.0}},
            {"round": 2, "heldout_closed": 0.4, "retention": {"round0": 0.5, "round1": 1.0, "round2": 0.5}}]
    flagged = flag_collapse(rows)
    assert [r["collapse"] for r in flagged] == [False, False, True]
    assert [r["forgot"] for r in flagged] == [[], ["round0"], []]
    table = render_table({"principle-global-offpolicy": flagged}, {"principle-global-offpolicy": 12.0})
    assert "0.40 ↓" in table and "| r3 |" in table and "| 12 |" in table


def test_report_writes_the_table_curves_and_results(tmp_path):
    need_module("matplotlib", "the report draws the curves")
    from se_gym.experience.loop import flag_collapse, write_report

    rows = flag_collapse([{"round": 0, "heldout_closed": 0.5, "retention": {"round0": 1.0}},
                          {"round": 1, "heldout_closed": 0.25, "retention": {"round0": 0.0, "round1": 1.0}}])
    table = write_report(tmp_path, {"a-global-offpolicy": rows, "b-global-onpolicy": rows[:1]}, {"a-global-offpolicy": 3.0}, ["# title"])
    text = (tmp_path / "report.md").read_text()
    assert text.startswith("# title") and table in text and "![curves](curves.png)" in text
    assert "| b-global-onpolicy | 0.50 | – |" in table and "0.25 ↓" in table
    assert (tmp_path / "curves.png").stat().st_size > 1000
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["cells"]["a-global-offpolicy"][1]["collapse"] is True and saved["wall_s"] == {"a-global-offpolicy": 3.0}


def test_grid_has_the_eight_cells_and_the_oracle_arm():
    from se_gym.experience.loop import CellConfig, grid_cells

    names = [c.name for c in grid_cells(CellConfig(base="b"))]
    assert len(names) == len(set(names)) == 8
    assert {n.split("-")[0] for n in names} == {"instance", "principle"} and {n.split("-")[2] for n in names} == {"offpolicy", "onpolicy"}
    extra = [c.name for c in grid_cells(CellConfig(base="b"), oracle=True)][8:]
    assert extra == ["oracle-stepwise-offpolicy", "oracle-stepwise-onpolicy"]


def test_cli_errors_are_one_line(tmp_path):
    need_module("torch")
    from se_gym.cli import main

    assert main(["experience", "--out", str(tmp_path / "o"), "--iterations", "0"]) == 2
    assert main(["experience", "grid", "--out", str(tmp_path / "o"), "--extractor", "llm"]) == 2
    assert main(["experience", "grid", "--out", str(tmp_path / "o"), "--base", str(tmp_path)]) == 2
    assert main(["experience", "grid", "--out", str(tmp_path / "o"), "--backend", "vllm"]) == 2
    assert main(["experience", "--out", str(tmp_path / "o"), "--model", "m", "--teacher", "reader"]) == 2


def test_llm_extractors_run_on_a_real_backend(tmp_path_factory):
    """The LLM extractors through a real se_gym.llm backend (hf, the untrained tiny LLM: its text is noise,
    so this checks the plumbing and that noise never breaks the bank, not the lessons' quality)."""
    need_module("torch")
    from _llm_helpers import tiny_model_dir
    from se_gym.experience import Episode, Experience, LLMInstanceExtractor, LLMPrincipleExtractor
    from se_gym.experience import miniworld as mw
    from se_gym.experience.records import load_jsonl
    from se_gym.llm import make_generator

    eps = load_jsonl((REPO / "tests" / "data" / "experience_episodes.jsonl").read_text(encoding="utf-8"), Episode)
    library, _, _ = _world()
    with make_generator("hf", str(tiny_model_dir(tmp_path_factory))) as gen:
        inst = LLMInstanceExtractor(gen, library.package, max_words=12, max_tokens=24).extract(eps, iteration=2)
        current = [Experience("keep me", "principle", "lesson:keep")]
        princ = LLMPrincipleExtractor(gen, mw.mini_docs(library), batch=4, max_tokens=48).extract(eps, iteration=2, current=current)
    assert len(inst) <= len(eps)
    for e in inst:
        assert e.granularity == "instance" and len(e.text.split()) <= 13 and e.provenance.iteration == 2
        assert e.provenance.extractor.startswith("llm-instance:")
    # noise rarely parses as a list of lessons: then the current list is kept as it was
    assert princ == current or all(e.granularity == "principle" and len(e.text.split()) <= 33 for e in princ)
