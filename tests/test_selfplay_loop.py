"""The self-play round loop in this process (tiny real model, real judge): the CLI's resumability
(kill -9 mid-round, rerun: nothing lost, nothing counted twice), the learn stage of each regime on
judged samples, the curriculum and the configuration."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, need_module

LIBRARY = "seed:100"
FUNCTIONS = ("abs", "cumsum", "add")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    need_module("torch", "self-play trains with torch")
    from se_gym.library import from_spec
    from se_gym.llm import build_tiny_model
    from se_gym.selfplay import TaskBuffer, Validator
    from se_gym.selfplay.miniature import proposal_answer

    root = tmp_path_factory.mktemp("sp")
    tiny = build_tiny_model(root / "tiny", max_position_embeddings=512)
    lib = from_spec(LIBRARY)
    rng = random.Random(0)
    with Validator(lib) as v:
        outs = v.validate_texts([proposal_answer(lib, k, rng) for k in FUNCTIONS for _ in range(2)])
    tasks = [o.task for o in outs]
    assert len(tasks) == 6 and all(t is not None for t in tasks)
    TaskBuffer(tasks).save(root / "seed.jsonl")
    return {"model": str(tiny), "seed": str(root / "seed.jsonl"), "tasks": tasks, "root": root}


def _args(world, out):
    return ["selfplay", "--out", str(out), "--model", world["model"], "--library", LIBRARY, "--prompts", "miniature", "--regime", "sft+rl",
            "--rounds", "2", "--proposals", "4", "--samples", "2", "--functions", *FUNCTIONS, "--propose-max-tokens", "40",
            "--solve-max-tokens", "24", "--eval", "functions", "--min-tasks", "3", "--seed-tasks", world["seed"], "--no-progress"]


def _run(args, hold_at=None, **kw):
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    env.pop("SE_GYM_HOLD_AT", None)
    if hold_at:  # the run stops for good before this stage, so the kill below lands there, not wherever a poll sees it
        env["SE_GYM_HOLD_AT"] = hold_at
    return subprocess.Popen([sys.executable, "-m", "se_gym.cli", *args], env=env, cwd=REPO, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def _stamp(path: Path):
    st = path.stat()
    return st.st_ino, st.st_mtime_ns


def test_kill_mid_round_then_rerun_loses_nothing_and_counts_nothing_twice(world, tmp_path):
    out = tmp_path / "run"
    p = _run(_args(world, out), hold_at="round_001/learn")
    seen = []
    for line in p.stdout:  # until the run holds before round 1's learn stage (or ends, which fails below)
        seen.append(line)
        if line.startswith("[hold] before round_001/learn"):
            break
    assert seen and seen[-1].startswith("[hold]"), "".join(seen)[-2000:]
    assert (out / "round_001" / "solve.json").exists()
    os.killpg(p.pid, signal.SIGKILL)  # mid-round: round 1 has proposed, validated and solved, not learned
    p.wait()
    assert not (out / "round_001" / "DONE").exists()
    before = {f: _stamp(f) for f in (out / "round_001").glob("*.json")}
    assert set(f.name for f in before) >= {"propose.json", "validate.json", "solve.json"}
    p = _run(_args(world, out))
    text = p.communicate(timeout=900)[0]
    assert p.returncode == 0, text[-3000:]
    for f, stamp in before.items():  # what was done before the kill was reused, not redone
        assert _stamp(f) == stamp, f"{f.name} was rewritten"
    ends = [ln for ln in text.splitlines() if ln.startswith("[round ") and " valid " in ln]
    assert len(ends) == 2, text[-3000:]  # each round's last line splits its wall time by stage
    assert all(ln.split("; wall ", 1)[1].startswith("propose ") and "learn " in ln and "eval " in ln for ln in ends), ends
    log = [json.loads(ln) for ln in (out / "log.jsonl").read_text().splitlines()]
    assert [r["round"] for r in log] == [0, 1, 2]
    for r in log[1:]:
        assert r["proposed"] == 4 and r["valid"] + sum(r["rejected"].values()) == 4
        solve = json.loads((out / f"round_{r['round']:03d}" / "solve.json").read_text())
        assert len(solve["rows"]) == len(solve["train"]) * 2 * 2 == r["train_tasks"] * 4
    ids = [json.loads(ln)["id"] for ln in (out / "round_002" / "buffer.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 6 + sum(r["valid"] for r in log[1:])
    rows = (out / "suite" / "datasets" / "train" / "train.jsonl").read_text().splitlines()
    assert len(rows) == len(ids)
    # a third run redoes nothing
    done = _stamp(out / "round_002" / "DONE")
    p = _run(_args(world, out))
    assert "round 2:" in p.communicate(timeout=600)[0] and p.returncode == 0
    assert _stamp(out / "round_002" / "DONE") == done
    # another configuration is refused, with the differing setting named
    bad = _args(world, out)
    bad[bad.index("--samples") + 1] = "3"
    p = _run(bad)
    msg = p.communicate(timeout=300)[0]
    assert p.returncode == 2 and "samples" in msg


def test_learn_stage_of_each_regime_on_judged_samples(world, tmp_path):
    import torch

    from se_gym.selfplay.loop import SelfPlay, SelfPlayConfig
    from se_gym.selfplay.validate import Outcome

    torch.set_num_threads(1)
    tasks = world["tasks"][:3]
    for regime in ("sft", "rl", "sft+rl"):
        cfg = SelfPlayConfig(model=world["model"], library=LIBRARY, prompts="miniature", regime=regime, rounds=1, proposals=3,
                             functions=FUNCTIONS, samples=2, eval="none", sft_epochs=2, sft_lr=1e-3, rl_lr=1e-3, solve_max_tokens=24)
        sp = SelfPlay(cfg, tmp_path / regime, progress=False, log=lambda m: None)
        sp._load_policy(cfg.model)
        lib = sp.library
        rows = []
        for t in tasks:
            good = f"```python\n{t.library_solution}```"
            for book in ("open", "closed"):
                prompt = sp.prompts.solve(lib, t, book)
                rows += [{"task": t.id, "book": book, "sample": 0, "prompt": prompt, "response": good, "reward": 1.0},
                         {"task": t.id, "book": book, "sample": 1, "prompt": prompt, "response": "no code", "reward": 0.0}]
        solved = {"rows": rows, "train": [t.to_json() for t in tasks], "topped_up": 0}
        items = [{"functions": [t.functions[0]], "prompt": sp.prompts.propose(lib, t.functions[:1], []), "text": "Question: x"} for t in tasks]
        outcomes = [Outcome(None, None, task=t) for t in tasks[:2]] + [Outcome(None, "no_question")]
        rew = sp.rewards(items, outcomes, solved)
        assert rew["proposer"] == [0.0, 0.0, -1.0]  # gap: open 0.5 - closed 0.5 = 0 for both valid tasks; invalid -1
        before = [p.detach().clone() for p in sp.policy.model.parameters()]
        m = sp.learn(1, items, rew, solved)
        changed = any(not torch.equal(a, b) for a, b in zip(before, sp.policy.model.parameters()))
        assert m["updated"] and changed
        if "sft" in regime:
            assert m["sft_examples"] == 3  # the accepted open-book answers only
        if "rl" in regime:
            assert m["rl_nonzero_advantage"] == {"solve": 6, "propose": 3}


def test_a_rounds_log_line_splits_its_wall_time_by_stage():
    from se_gym.selfplay.loop import stage_times

    line = stage_times({"propose": 1.25, "validate": 0.5, "solve": 3.0, "rewards": 0.0, "learn": 10.0, "eval": 2.0})
    assert line == "propose 1.2 s, validate 0.5 s, solve 3.0 s, rewards 0.0 s, learn 10.0 s, eval 2.0 s, total 16.8 s"


def test_curriculum_covers_the_library_before_repeating():
    from se_gym.library import from_spec
    from se_gym.selfplay.prompts import Curriculum

    keys = list(from_spec("seed:0").names)
    c = Curriculum(keys, 3, seed=1)
    n = len(keys)
    full = [k for r in range(30) for g in c.draw(10, r) for k in g]
    assert set(full[:n]) == set(keys)  # the first pass shows every function once
    assert c.draw(10, 2) == Curriculum(keys, 3, seed=1).draw(10, 2)  # deterministic per round


def test_config_file_and_flags(tmp_path):
    import argparse

    from se_gym.errors import CLIError
    from se_gym.selfplay.cli import build_config, configure

    parser = argparse.ArgumentParser()
    configure(parser)
    (tmp_path / "c.json").write_text(json.dumps({"model": "m", "rounds": 5, "proposer_reward": "learnability", "books": ["open", "closed"]}))
    cfg = build_config(parser.parse_args(["--config", str(tmp_path / "c.json"), "--out", "x", "--rounds", "2"]))
    assert cfg.rounds == 2 and cfg.model == "m" and cfg.proposer_reward == "learnability"
    (tmp_path / "c.toml").write_text('model = "m"\nregime = "rl"\n')
    assert build_config(parser.parse_args(["--config", str(tmp_path / "c.toml"), "--out", "x"])).regime == "rl"
    (tmp_path / "bad.json").write_text(json.dumps({"modle": "m"}))
    with pytest.raises(CLIError, match="modle"):
        build_config(parser.parse_args(["--config", str(tmp_path / "bad.json"), "--out", "x"]))
    with pytest.raises(CLIError, match="gap reward needs both"):
        build_config(parser.parse_args(["--out", "x", "--model", "m", "--books", "open"]))


def test_the_cli_is_built_from_the_config_dataclasses(tmp_path):
    """One source: every SelfPlayConfig and SelfPlayRunOptions field is a flag with its help, and
    nothing given yields the dataclass defaults; --config may hold options of both."""
    import argparse
    import dataclasses

    from se_gym.errors import CLIError
    from se_gym.selfplay.cli import SelfPlayRunOptions, build_config, configure, run_options
    from se_gym.selfplay.loop import SelfPlayConfig

    parser = argparse.ArgumentParser()
    configure(parser)
    by_dest = {a.dest: a for a in parser._actions if a.option_strings}
    for cls in (SelfPlayConfig, SelfPlayRunOptions):
        for f in dataclasses.fields(cls):
            assert f.name in by_dest and by_dest[f.name].help.startswith(f.metadata["help"]), f.name
    assert build_config(parser.parse_args(["--out", "x"])) == SelfPlayConfig()
    assert run_options(parser.parse_args(["--out", "x"])) == SelfPlayRunOptions(out="x")
    # the spellings of before: store-true flags, --no-progress, nargs lists
    args = parser.parse_args(["--out", "x", "--no-progress", "--restart", "--record-tokens", "--books", "open", "closed",
                              "--functions", "abs", "add", "--eval", "builtin:3", "--eval-split", "single_train"])
    cfg, job = build_config(args), run_options(args)
    assert cfg.record_tokens and cfg.books == ("open", "closed") and cfg.functions == ("abs", "add")
    assert (cfg.eval, cfg.eval_split) == ("builtin:3", "single_train")
    assert not job.progress and job.restart
    (tmp_path / "c.toml").write_text('model = "m"\nout = "runs/x"\ngenerators = 3\n')
    args = parser.parse_args(["--config", str(tmp_path / "c.toml"), "--generators", "4"])
    assert build_config(args).model == "m" and run_options(args) == SelfPlayRunOptions(out="runs/x", generators=4)
    with pytest.raises(CLIError, match="--out is required"):
        run_options(parser.parse_args(["--model", "m"]))
    with pytest.raises(CLIError, match="eval must be"):
        build_config(parser.parse_args(["--out", "x", "--eval", "held-out"]))


def test_eval_is_a_task_spec_with_its_own_split(tmp_path, monkeypatch, caplog):
    """--eval builtin:N is the seed N (as in every other task spec), the split is --eval-split, and
    the tasks come from se_gym.tasks.spec.load_task_spec with the library's seed as the default;
    the old builtin:SPLIT still works, with one deprecation warning."""
    import logging

    import se_gym.tasks.spec as spec_mod
    from se_gym.library import from_spec
    from se_gym.selfplay import loop
    from se_gym.selfplay.loop import SelfPlayConfig, load_eval_tasks

    calls = []

    def fake_load(spec, split, library=None, default_seed=0, progress=True):
        calls.append((spec, split, library.source, default_seed))
        return [], library

    monkeypatch.setattr(spec_mod, "load_task_spec", fake_load)
    lib = from_spec("seed:7")
    load_eval_tasks("builtin", lib, SelfPlayConfig())
    load_eval_tasks("builtin:3", lib, SelfPlayConfig(eval="builtin:3", eval_split="single_train"))
    assert calls == [("builtin", "single_test", "seed:7", 7), ("builtin:3", "single_train", "seed:7", 7)]
    monkeypatch.setattr(loop, "_WARNED_EVAL", set())
    with caplog.at_level(logging.WARNING, logger="se_gym.selfplay.loop"):
        old = SelfPlayConfig(eval="builtin:multi_test")
        SelfPlayConfig(eval="builtin:multi_test")
    assert (old.eval, old.eval_split) == ("builtin", "multi_test")
    assert sum("deprecated" in r.getMessage() for r in caplog.records) == 1
    (tmp_path / "suite").mkdir()
    old = SelfPlayConfig(eval=f"sebench:{tmp_path / 'suite'}:single_train")
    assert (old.eval, old.eval_split) == (f"sebench:{tmp_path / 'suite'}", "single_train")


def test_backend_flags_need_ray(tmp_path):
    import argparse

    need_module("torch", "the selfplay command needs torch")
    from se_gym.errors import CLIError
    from se_gym.selfplay.cli import configure, run

    parser = argparse.ArgumentParser()
    configure(parser)
    base = ["--out", str(tmp_path / "o"), "--model", "m"]
    # without Ray the learner's model generates in this process: the flags would be silently ignored
    for extra in (["--backend", "vllm"], ["--backend-option", "dtype=float32"]):
        with pytest.raises(CLIError, match="need --ray-address"):
            run(parser.parse_args(base + extra))
    with pytest.raises(CLIError, match="KEY=VALUE"):
        run(parser.parse_args(base + ["--ray-address", "auto", "--backend-option", "dtype"]))
    assert not (tmp_path / "o").exists()  # refused before anything was written


def test_record_tokens_writes_the_solver_samples_as_token_trajectories(world, tmp_path):
    """A round with record_tokens writes round_001/trajectories.jsonl: one record per solver sample,
    with the ids the model was fed and sampled, which the RL loader reads back."""
    import torch
    from transformers import AutoTokenizer

    from se_gym.llm.base import encode_prompt
    from se_gym.selfplay.loop import SelfPlay, SelfPlayConfig
    from se_gym.training.trajectories import rl_batch
    from se_gym.trajectories import read_trajectories

    torch.set_num_threads(1)
    cfg = SelfPlayConfig(model=world["model"], library=LIBRARY, prompts="miniature", regime="sft", rounds=1, proposals=2,
                         functions=FUNCTIONS, samples=2, eval="functions", eval_limit=2, min_tasks=2, seed_tasks=world["seed"],
                         propose_max_tokens=16, solve_max_tokens=12, record_tokens=True)
    SelfPlay(cfg, tmp_path / "run", progress=False, log=lambda m: None).run_all()
    rnd = tmp_path / "run" / "round_001"
    solve = json.loads((rnd / "solve.json").read_text())
    records = read_trajectories(rnd / "trajectories.jsonl")
    assert len(records) == len(solve["rows"]) >= 8  # >= 2 tasks x 2 samples x 2 books
    tok = AutoTokenizer.from_pretrained(world["model"])
    for rec, row in zip(records, solve["rows"]):
        assert (rec["task_id"], rec["sample_index"], rec["book"], rec["reward"]) == (row["task"], row["sample"], row["book"], row["reward"])
        assert rec["prompt_ids"] == encode_prompt(tok, row["prompt"], None)  # a text prompt, as the engine fed it
        assert tok.decode(rec["completion_ids"], skip_special_tokens=True) == row["response"]
        assert rec["policy_version"] == 0 and rec["round"] == 1 and len(rec["completion_logprobs"]) == len(rec["completion_ids"])
    rl = rl_batch(records, tok.pad_token_id)
    assert rl["responses"][0, : len(records[0]["completion_ids"])].tolist() == records[0]["completion_ids"]
