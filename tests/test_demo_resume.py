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


def test_restart_discards_and_redoes_saying_which(tmp_path, caplog):
    caplog.set_level("INFO", logger="se_gym")
    out = tmp_path / "demo"
    Demo(out, QUICK).bind([0])
    (out / "seed0" / "eval.json").write_text("{}")  # a result of the quick run
    Demo(out, DemoConfig()).bind([0], restart=True)
    err = caplog.text  # logged (the se-gym command prints it on stderr)
    assert f"discarding {out / 'seed0'}" in err and f"discarding {out / 'base'}" in err
    assert not (out / "seed0" / "eval.json").exists()
    assert json.loads((out / "seed0" / "run.json").read_text())["config"]["demo"]["functions"] == 10
    Demo(out, DemoConfig()).bind([0])  # the same configuration resumes


def _args(*argv: str):
    import argparse

    from se_gym.demo import configure

    p = argparse.ArgumentParser()
    configure(p)
    return p.parse_args(list(argv))


def test_every_cpu_configuration_of_the_command_line_resolves():
    """`--quick` on a CPU crashed in dataclasses.replace (the small base and --quick both set
    pretrain_examples); each combination of the size flags now resolves to its documented scale."""
    from se_gym.demo import SMALL_BASE, demo_config

    plain = demo_config(_args(), "cpu")
    assert plain.hidden == SMALL_BASE["hidden"] and plain.pretrain_examples == SMALL_BASE["pretrain_examples"]
    quick = demo_config(_args("--quick"), "cpu")
    assert quick.hidden == SMALL_BASE["hidden"] and quick.pretrain_examples == SMALL_BASE["pretrain_examples"] // 2
    assert quick.functions == QUICK.functions and quick.sft_epochs == QUICK.sft_epochs
    assert demo_config(_args("--quick", "--base", "wide"), "cpu") == QUICK
    assert demo_config(_args("--base", "wide"), "cpu") == DemoConfig()
    assert demo_config(_args("--quick"), "cuda") == QUICK  # a GPU keeps the wide base
    assert demo_config(_args("--quick", "--threads", "2"), "cpu").threads == 2


def test_quick_demo_runs_to_its_table_on_a_cpu(tmp_path, monkeypatch, capsys):
    """`se-gym demo --quick --no-rl` end to end on a CPU, shrunk to a tiny scale (the real --quick
    pre-trains for minutes): the command's own path from flags to the printed table."""
    need_module("torch", "the demo command needs torch (pip install 'se-gym[train]')")
    import se_gym.demo as demo

    tiny = dict(hidden=32, layers=1, heads=1, pretrain_examples=256, pretrain_batch=32)
    monkeypatch.setattr(demo, "QUICK", DemoConfig(functions=2, train_per_function=2, test_per_function=1, samples=1,
                                                  sft_epochs=1, rl_iterations=1, max_new_tokens=16))
    monkeypatch.setattr(demo, "SMALL_BASE_QUICK", {**demo.SMALL_BASE_QUICK, **tiny})
    out = tmp_path / "demo"
    assert main(["demo", "--quick", "--no-rl", "--seeds", "0", "--device", "cpu", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "Closed-SFT" in printed and "Open-SFT" in printed and f"report: {out / 'report.md'}" in printed
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["hidden"] == 32 and results["config"]["functions"] == 2
    assert [s["seed"] for s in results["seeds"]] == [0]


def test_demo_closes_the_judge_pools_it_opens(tmp_path, caplog):
    from se_gym.demo import METHODS

    caplog.set_level("INFO", logger="se_gym")
    before = set(descendants(os.getpid()))
    with Demo(tmp_path, QUICK, progress=False, rl=False) as demo:
        demo.bind([0])
        (tmp_path / "seed0" / "eval.json").write_text(json.dumps({"seed": 0, "methods": {m: {} for m in METHODS}}))
        assert demo.run_seed(0, tmp_path / "base")["seed"] == 0  # an evaluated seed: read back
        assert "[judge] " in caplog.text  # its judge's pool did start (to say its isolation)...
        assert set(descendants(os.getpid())) - before == set()  # ...and is closed with the seed
        library, functions, *_ = demo.world(0)
        kept = demo.runner(library, functions)  # a runner handed out stays usable until the demo closes
        assert kept.scorer.judge.sandbox.run(["print(1)"])[0].stdout == "1\n"
        assert set(descendants(os.getpid())) - before
    assert set(descendants(os.getpid())) - before == set()
