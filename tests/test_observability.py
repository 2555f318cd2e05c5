"""Observability: training runs log per-step metrics (``--log tensorboard|wandb``, through
se_gym.metrics_log), and the judge's counters are published at ``GET /metrics`` (Prometheus text) by
``se-gym serve openenv`` and the sandbox server."""
from __future__ import annotations

import json
import os
import socket
import sys
import types
import urllib.request

import pytest

from conftest import need, need_module
from se_gym import metrics_log
from se_gym.library import mint
from se_gym.tasks import builtin_tasks

LIB = mint(0)
TASKS = builtin_tasks("single_test", seed=0)


def _ok(task) -> str:
    return f"```python\n{task.library_solution}\n```"


def _get_text(url: str) -> tuple[str, str]:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode(), r.headers["Content-Type"]


def _samples(text: str) -> dict[str, float]:
    """``name{labels}`` -> value, from exposition text (checked with the official parser when installed)."""
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        pass
    else:
        list(text_string_to_metric_families(text))  # raises on malformed text
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


# -- Prometheus text -----------------------------------------------------------------------------------
def test_counters_and_histograms_render_as_prometheus_text():
    from se_gym.prometheus import Counter, Histogram, render

    c = Counter("things_total", "Things by kind.", ("kind",), [("a",)])
    c.inc(1, "b")
    c.inc(2, 'odd "b"\\')
    h = Histogram("wait_seconds", "Waits.", buckets=(0.1, 1.0))
    h.observe(0.1)
    h.observe(0.5, times=2)
    h.observe(7.0)
    text = render(c, h)
    assert text == (
        "# HELP things_total Things by kind.\n# TYPE things_total counter\n"
        'things_total{kind="a"} 0\nthings_total{kind="b"} 1\nthings_total{kind="odd \\"b\\"\\\\"} 2\n'
        "# HELP wait_seconds Waits.\n# TYPE wait_seconds histogram\n"
        'wait_seconds_bucket{le="0.1"} 1\nwait_seconds_bucket{le="1"} 3\nwait_seconds_bucket{le="+Inf"} 4\n'
        "wait_seconds_sum 8.1\nwait_seconds_count 4\n"
    )
    _samples(text)
    with pytest.raises(ValueError):
        c.inc(-1, "a")


def test_the_judge_counts_verdicts_failures_and_latency():
    from se_gym.judge import Judge

    t = TASKS[0]
    with Judge(LIB) as judge:
        before = _samples(judge.metrics.render())
        assert before['se_gym_judge_verdicts_total{status="passed"}'] == 0  # every status exists from the start
        judge.judge_many([(_ok(t), t.test_cases, t.function_name), ("no code", t.test_cases, t.function_name),
                          (_ok(TASKS[1]), t.test_cases, t.function_name)])
        after = _samples(judge.metrics.render())
    assert after['se_gym_judge_verdicts_total{status="passed"}'] == 1
    assert after['se_gym_judge_verdicts_total{status="static_gate"}'] == 1
    assert sum(v for k, v in after.items() if k.startswith("se_gym_judge_verdicts_total")) == 3
    assert after["se_gym_judge_latency_seconds_count"] == 3 and after["se_gym_judge_latency_seconds_sum"] > 0
    assert after["se_gym_judge_infrastructure_failures_total"] == 0
    # a sandbox nobody answers: infrastructure failures, counted apart from wrong answers
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/run"
    with Judge(LIB, sandbox="http", http_url=dead) as judge:
        judge.judge_many([(_ok(t), t.test_cases, t.function_name)] * 2)
        down = _samples(judge.metrics.render())
    assert down["se_gym_judge_infrastructure_failures_total"] == 2
    assert down['se_gym_judge_verdicts_total{status="sandbox_error"}'] == 2


def test_the_sandbox_server_publishes_its_counters():
    from se_gym.sandbox import make_sandbox
    from se_gym.sandbox.server import SandboxServer

    with make_sandbox("local", workers=1) as box:
        server = SandboxServer(box, port=0).start()
        try:
            text, ctype = _get_text(server.url + "/metrics")
            assert ctype.startswith("text/plain; version=0.0.4")
            before = _samples(text)
            for code in ("print(1)", "raise SystemExit(3)"):
                req = urllib.request.Request(server.url + "/run", data=json.dumps({"code": code}).encode(), method="POST",
                                             headers={"Content-Type": "application/json"})
                urllib.request.urlopen(req, timeout=60).read()
            after = _samples(_get_text(server.url + "/metrics")[0])
        finally:
            server.stop()
    assert before['se_gym_sandbox_programs_total{status="ok"}'] == 0 and before["se_gym_sandbox_request_seconds_count"] == 0
    assert after['se_gym_sandbox_programs_total{status="ok"}'] == 1
    assert after['se_gym_sandbox_programs_total{status="error"}'] == 1
    assert after["se_gym_sandbox_request_seconds_count"] == 2 and after["se_gym_sandbox_errors_total"] == 0


def test_se_gym_serve_openenv_publishes_the_judge_counters(tmp_path):
    """A live ``se-gym serve openenv``: GET /metrics, two judged steps over openenv's own client, GET again."""
    need_module("openenv.core", "the 'openenv' extra (openenv-core) serves the endpoint")
    from se_gym.integrations.openenv import SEBenchAction, SEBenchClient
    from test_adapters_openenv import openenv_server

    with openenv_server(tmp_path / "server.log", "--max-turns", "2") as (_, url):
        text, ctype = _get_text(url + "/metrics")
        assert ctype.startswith("text/plain; version=0.0.4")
        before = _samples(text)
        t = TASKS[2]
        with SEBenchClient(base_url=url, message_timeout_s=120).sync() as env:
            env.reset(task_id=t.id)
            assert env.step(SEBenchAction(answer="```python\ndef solve(x):\n    return undefined_name\n```")).reward == 0.0
            assert env.step(SEBenchAction(answer=_ok(t))).reward == 1.0
        after = _samples(_get_text(url + "/metrics")[0])
    passed = 'se_gym_judge_verdicts_total{status="passed"}'
    assert before[passed] == 0 and after[passed] == 1
    assert sum(v for k, v in after.items() if k.startswith("se_gym_judge_verdicts_total")) == 2
    assert after["se_gym_judge_latency_seconds_count"] - before["se_gym_judge_latency_seconds_count"] == 2


# -- training metrics ---------------------------------------------------------------------------------
def _scalars(run_dir) -> dict[str, list[tuple[int, float]]]:
    """tag -> [(step, value)] of the event files in ``run_dir``, read by tensorboard's own reader
    (or, with only tensorboardX installed, through its copy of tensorboard's Event proto)."""
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        from tensorboardX.proto.event_pb2 import Event

        out: dict = {}
        for f in sorted(run_dir.glob("events.out.tfevents.*")):
            data, pos = f.read_bytes(), 0
            while pos < len(data):  # TFRecord: length (8), its crc (4), the record, its crc (4)
                n = int.from_bytes(data[pos:pos + 8], "little")
                e = Event.FromString(data[pos + 12:pos + 12 + n])
                pos += 16 + n
                for v in e.summary.value:
                    out.setdefault(v.tag, []).append((e.step, v.simple_value))
        return out
    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def _tiny_demo_config():
    from se_gym.demo import DemoConfig

    return DemoConfig(hidden=64, heads=2, layers=1, pretrain_examples=64, pretrain_batch=16, functions=2, train_per_function=1,
                      test_per_function=1, samples=2, sft_epochs=2, sft_batch=2, rl_iterations=2, rl_group=2, rl_ppo_epochs=1,
                      max_new_tokens=16)


def test_demo_with_log_tensorboard_writes_event_files_tensorboard_reads(tmp_path, monkeypatch, capsys):
    """``se-gym demo --log tensorboard`` (the demo's own code path, at a test's scale): one run folder per
    training under OUT/logs, each step's numbers under the metric's name."""
    need_module("torch")
    need(any(_importable(m) for m in ("tensorboard", "tensorboardX")), "tensorboard (or tensorboardX) is not installed (extra 'log')")
    from se_gym import demo
    from se_gym.cli import main

    monkeypatch.setattr(demo, "QUICK", _tiny_demo_config())  # --quick at a test's scale
    out = tmp_path / "demo"
    rc = main(["demo", "--quick", "--base", "wide", "--seeds", "0", "--device", "cpu", "--threads", "1", "--no-progress",
               "--out", str(out), "--log", "tensorboard"])
    assert rc == 0, capsys.readouterr().err
    logs = out / "logs"
    runs = {str(p.parent.relative_to(logs)) for p in logs.rglob("events.out.tfevents.*")}
    # the SFT runs train only when the judge accepted a sampled answer (the barely pre-trained base rarely writes one)
    accepted = any(r["reward"] >= 1 for r in json.loads((out / "seed0" / "rollouts.json").read_text()))
    assert runs == {"base", "seed0/rl_clip", "seed0/rl_noclip"} | ({"seed0/open_sft", "seed0/closed_sft"} if accepted else set())
    base = _scalars(logs / "base")
    assert {"loss", "lr", "epoch"} <= set(base)
    assert [s for s, _ in base["loss"]] == [1, 2, 3, 4]  # 64 examples in batches of 16: one point per optimizer step
    assert all(v > 0 for _, v in base["loss"]) and base["lr"][0][1] != base["lr"][-1][1]  # warm-up, then decay
    rl = _scalars(logs / "seed0" / "rl_clip")
    assert {"reward", "samples", "updated_on", "nonzero_adv"} <= set(rl)
    assert [s for s, _ in rl["reward"]] == [1, 2] and [v for _, v in rl["samples"]] == [4.0, 4.0]  # 2 iterations, 2 tasks x group 2
    assert all(0.0 <= v <= 1.0 for _, v in rl["reward"])
    # every tag written is in docs/observability.md's table of what each trainer logs
    from conftest import REPO

    doc = (REPO / "docs" / "observability.md").read_text(encoding="utf-8")
    table = {row.split("|")[1].strip(): row.split("|")[2] for row in doc.splitlines() if row.startswith("| ") and row.count("|") == 3}
    rl_row = next(v for k, v in table.items() if k.startswith("RL"))
    sft_row = next(v for k, v in table.items() if k.startswith("SFT"))
    assert not [t for t in rl if f"`{t}`" not in rl_row], "RL tags missing from the docs' table"
    assert not [t for t in base if f"`{t}`" not in sft_row], "SFT tags missing from the docs' table"


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


class _FakeWandb(types.ModuleType):
    """Stands in for wandb where it is not installed (it is not in the shared test venv, and the tests
    install nothing): records what se-gym asks of it, and writes an offline run folder as wandb does."""

    def __init__(self):
        super().__init__("wandb")
        self.runs = []

    def init(self, **kw):
        run = types.SimpleNamespace(kw=kw, axes=[], rows=[], finished=False)
        os.makedirs(os.path.join(kw["dir"], "wandb", "offline-run-fake"), exist_ok=True)
        run.define_metric = lambda name, step_metric=None: run.axes.append((name, step_metric))
        run.log = lambda row: run.rows.append(dict(row))
        run.finish = lambda: setattr(run, "finished", True)
        self.runs.append(run)
        return run


def test_log_wandb_writes_an_offline_run_with_a_step_axis_per_training(tmp_path, monkeypatch):
    """The wandb path with the real package when it is importable (offline: no network), else with a
    fake ``wandb`` module injected into ``sys.modules`` (wandb installs from PyPI, but the shared test
    venv does not have it and tests install nothing): a run folder under the log dir, offline mode,
    each training's metrics on its own step axis."""
    need_module("torch")
    from se_gym.training import miniature as mini
    from se_gym.training.policy import Policy
    from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer
    from se_gym.training.sft import SFTConfig, SFTExample, train_sft

    mini.build_tiny_model(tmp_path / "m", hidden=64, layers=1, heads=2)
    policy = Policy.from_pretrained(tmp_path / "m", device="cpu", dtype="float32")
    fake = None if _importable("wandb") else _FakeWandb()
    if fake is not None:  # (after transformers and accelerate are imported: they probe for wandb)
        monkeypatch.setitem(sys.modules, "wandb", fake)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    examples = [SFTExample(p, a) for p, a in mini.pretraining_corpus(8, seed=0)]
    with metrics_log.session("wandb", tmp_path / "logs"):
        metrics_log.set_run("sft")
        train_sft(policy, examples, SFTConfig(learning_rate=1e-3, batch_size=4, epochs=2, mixed_precision="no"), progress=False)
        metrics_log.set_run("rl")
        trainer = RLTrainer(policy, RLConfig(learning_rate=1e-3, group_size=2, max_new_tokens=8, mixed_precision="no"),
                            reward_fn=lambda ps, rs: [float(i % 2) for i in range(len(rs))])
        trainer.step([RLPrompt(p, p) for p, _ in mini.pretraining_corpus(2, seed=1)])
    assert metrics_log.active() is None
    (run_dir,) = (tmp_path / "logs" / "wandb").glob("offline-run-*")
    if fake is None:  # the real wandb wrote its run file (`wandb sync` uploads it)
        assert list(run_dir.glob("run-*.wandb"))
        return
    (run,) = fake.runs
    assert run.kw["mode"] == "offline" and run.kw["dir"] == str(tmp_path / "logs") and run.finished
    assert ("sft/*", "sft/step") in run.axes and ("rl/*", "rl/step") in run.axes
    sft_rows = [r for r in run.rows if "sft/step" in r]
    assert [r["sft/step"] for r in sft_rows] == [1, 2, 3, 4] and all({"sft/loss", "sft/lr", "sft/epoch"} <= set(r) for r in sft_rows)
    (rl_row,) = [r for r in run.rows if "rl/step" in r]
    assert rl_row["rl/step"] == 1 and rl_row["rl/reward"] == 0.5 and rl_row["rl/samples"] == 4


def test_missing_packages_are_one_line_errors_before_any_work(tmp_path, monkeypatch, capsys):
    from se_gym.cli import main

    for name in ("torch.utils.tensorboard", "tensorboardX", "wandb"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails as if not installed
    for kind, words in (("tensorboard", "needs the tensorboard package (pip install tensorboard) or tensorboardX"),
                        ("wandb", "needs the wandb package (pip install wandb)")):
        assert main(["demo", "--out", str(tmp_path / kind), "--log", kind]) == 2
        err = capsys.readouterr().err
        assert f"se-gym demo: error: --log {kind} {words}" in err and err.count("\n") == 1
        assert not (tmp_path / kind).exists()
    assert main(["experience", "--log", "tensorboard"]) == 2
    assert "--log needs --log-dir" in capsys.readouterr().err


def test_run_names_scopes_and_child_processes(tmp_path, monkeypatch):
    """Names of trainings (set_run, scope), numbers only, and the ablation's worker processes opening
    their own session with the parent's settings."""
    from se_gym import demo_ablation

    seen = []

    class Recorder(metrics_log.MetricsLogger):
        def __init__(self, kind, logdir, **kw):
            self.kind, self.logdir = kind, logdir

        def log(self, metrics, step, run="train"):
            seen.append((run, step, dict(metrics)))

        def close(self):
            seen.append("closed")

    monkeypatch.setattr(metrics_log, "MetricsLogger", Recorder)
    metrics_log.log({"x": 1}, 1)  # no session: nothing happens
    with metrics_log.session("tensorboard", tmp_path):
        metrics_log.log({"loss": 1.0}, 1)
        metrics_log.set_run("base")
        with metrics_log.scope("seed0/sft_selfplay"):
            metrics_log.set_run("round1/sft")
            metrics_log.log({"loss": 2.0}, 1)
            metrics_log.log({"valid": 3}, 1, run="rounds")
        metrics_log.log({"loss": 3.0}, 5)
        assert metrics_log.settings() == ("tensorboard", str(tmp_path))
        monkeypatch.setattr(demo_ablation, "_variant", lambda *a: metrics_log.log({"reward": 1.0}, 1) or "child")
        assert demo_ablation._variant_job(None, "out", None, None, "hf", None, None, 0, "rl_std", ("wandb", str(tmp_path / "w"))) == "child"
    assert seen == [("train", 1, {"loss": 1.0}), ("seed0/sft_selfplay/round1/sft", 1, {"loss": 2.0}),
                    ("seed0/sft_selfplay/rounds", 1, {"valid": 3}), ("base", 5, {"loss": 3.0}),
                    ("train", 1, {"reward": 1.0}), "closed", "closed"]


def test_only_finite_numbers_are_logged(tmp_path):
    need(_importable("tensorboard") or _importable("tensorboardX"), "tensorboard (or tensorboardX) is not installed (extra 'log')")
    torch = need_module("torch")
    logger = metrics_log.MetricsLogger("tensorboard", tmp_path)
    logger.log({"a": 1, "b": None, "c": "text", "d": float("nan"), "e": torch.tensor(2.5), "f": True, "g": {"h": 1}}, 3, "r")
    logger.close()
    assert _scalars(tmp_path / "r") == {"a": [(3, 1.0)], "e": [(3, 2.5)]}
