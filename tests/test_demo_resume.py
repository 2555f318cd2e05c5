"""Resume safety of the demo (issue 20.3): a folder made with another configuration is refused before any
work, naming the differences; --restart discards and redoes it, saying so.  And what a run leaves
running (issue 33.5): no judge's sandbox workers."""
from __future__ import annotations

import json
import os

from conftest import descendants, need_module

from se_gym.cli import main
from se_gym.demo import QUICK, Demo, DemoConfig
from se_gym.storage import ConfigMismatch


def test_quick_then_full_in_the_same_folder_is_refused_naming_the_differences(tmp_path, capsys):
    need_module("torch", "the demo command needs torch (pip install 'se-gym[train]')")
    out = tmp_path / "demo"
    Demo(out, QUICK, rl=False).bind([0, 1, 2])  # what `se-gym demo --quick --no-rl` leaves before it trains
    # on a CPU the plain demo picks the small base (minutes instead of hours): refused, naming that too
    assert main(["demo", "--out", str(out), "--device", "cpu", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "hidden: 256 -> 64" in err and "pretrain_batch: 64 -> 32" in err and err.count("\n") == 1
    assert main(["demo", "--out", str(out), "--device", "cpu", "--base", "wide", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "was made with another configuration" in err and "pretrain_examples: 51200 -> 102400" in err
    assert "hidden" not in err and "--restart" in err and err.count("\n") == 1
    # the seed folders are bound too, not only the base: a seed's results never mix configurations
    (out / "base" / "run.json").unlink()
    Demo(out, DemoConfig(), rl=True).bind([], restart=False)  # base rebound with the full configuration
    try:
        Demo(out, DemoConfig()).bind([0])
        raise AssertionError("seed0 made by --quick was accepted by the full demo")
    except ConfigMismatch as exc:
        assert "seed0" in str(exc) and "functions: 6 -> 10" in str(exc)


def test_restart_discards_and_redoes_saying_which(tmp_path, capsys):
    out = tmp_path / "demo"
    Demo(out, QUICK).bind([0])
    (out / "seed0" / "eval.json").write_text("{}")  # a result of the quick run
    Demo(out, DemoConfig()).bind([0], restart=True)
    err = capsys.readouterr().err
    assert f"discarding {out / 'seed0'}" in err and f"discarding {out / 'base'}" in err
    assert not (out / "seed0" / "eval.json").exists()
    assert json.loads((out / "seed0" / "run.json").read_text())["config"]["demo"]["functions"] == 10
    Demo(out, DemoConfig()).bind([0])  # the same configuration resumes


def test_demo_closes_the_judge_pools_it_opens(tmp_path, capsys):
    from se_gym.demo import METHODS

    before = set(descendants(os.getpid()))
    with Demo(tmp_path, QUICK, progress=False, rl=False) as demo:
        demo.bind([0])
        (tmp_path / "seed0" / "eval.json").write_text(json.dumps({"seed": 0, "methods": {m: {} for m in METHODS}}))
        assert demo.run_seed(0, tmp_path / "base")["seed"] == 0  # an evaluated seed: read back
        assert "[judge] " in capsys.readouterr().err  # its judge's pool did start (to say its isolation)...
        assert set(descendants(os.getpid())) - before == set()  # ...and is closed with the seed
        library, functions, *_ = demo.world(0)
        kept = demo.runner(library, functions)  # a runner handed out stays usable until the demo closes
        assert kept.scorer.judge.sandbox.run(["print(1)"])[0].stdout == "1\n"
        assert set(descendants(os.getpid())) - before
    assert set(descendants(os.getpid())) - before == set()
