"""`se-gym bench` (issue 34): agents from files and services benchmarked under the protocol (learn on
train, freeze, test closed book), the protocol enforced and reported, the bootstrap interval, the
freeze hash, and resume after kill -9.  The agents here need no model: the miniature's tasks are
judged for real, which is what these tests are about."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from se_gym.agents import ProtocolError, Trajectory
from se_gym.bench import bootstrap_ci
from se_gym.bench.agents import agent_specs
from se_gym.bench.report import collect, render, summarize
from se_gym.cli import main
from se_gym.errors import CLIError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = str(ROOT / "examples" / "bench_my_agent.py") + ":CallMemoryAgent"
AGENTS = str(ROOT / "tests" / "bench_agents.py")
MINI = ["--tasks", "miniature", "--no-progress"]


def _bench(tmp_path, *argv, name="run") -> tuple[int, Path]:
    out = tmp_path / name
    return main(["bench", *argv, *MINI, "--out", str(out)]), out


def _summary(out: Path) -> dict:
    return summarize(collect([str(out)]))["agents"]


def test_bootstrap_interval_on_hand_computed_data():
    # one seed, tasks 1,1,1,0: a resample's mean is k/4 with k ~ Binomial(4, 3/4); P(0) = 1/256 < 2.5% <
    # P(<= 1/4) = 13/256, and P(4/4) = 81/256 > 2.5%: the 95% interval is [0.25, 1.0] around 0.75
    assert bootstrap_ci({0: [1, 1, 1, 0]}) == pytest.approx((0.75, 0.25, 1.0))
    # two seeds, one all right and one all wrong: the seeds are resampled too, so the interval is [0, 1]
    assert bootstrap_ci({0: [1, 1], 1: [0, 0]}) == pytest.approx((0.5, 0.0, 1.0))
    assert bootstrap_ci({0: [1, 1, 1], 1: [1]}) == pytest.approx((1.0, 1.0, 1.0))
    # resampling tasks only within a seed would give a zero-width interval here
    assert bootstrap_ci({0: [1] * 5, 1: [0] * 5})[1:] == pytest.approx((0.0, 1.0))


def test_freeze_hash_follows_the_memory_and_frozen_agents_refuse_to_learn(tmp_path):
    sys.path.insert(0, str(ROOT / "examples"))
    from bench_my_agent import CallMemoryAgent

    from se_gym.agents import Observation
    from se_gym.tasks.record import Task

    task = Task("t1", "train", "test", "Return the sum of x.", "def solve(x):", (("x=[1]", "1"),), ("x=[1]", "1"), ("sum",), "")
    agent = CallMemoryAgent()
    empty = agent.state_digest()
    assert empty == CallMemoryAgent().state_digest() and len(empty) == 64
    agent.learn([Trajectory(Observation(task, "p", "open", "train"), "answer", 1.0, "passed")])
    learned = agent.state_digest()
    assert learned != empty and agent.memory_size() == (1, len(json.dumps(agent.notes, sort_keys=True)))
    again = CallMemoryAgent().load(agent.save(tmp_path / "a"))
    assert again.state_digest() == learned  # saved and loaded: the same memory, the same hash
    agent.freeze()
    with pytest.raises(ProtocolError, match="frozen"):
        agent.learn([Trajectory(Observation(task, "p", "open", "train"), "answer", 1.0, "passed")])
    assert agent.state_digest() == learned
    test_task = Task("t2", "single_test", "test", "q", "def solve(x):", (("x=[1]", "1"),), ("x=[1]", "1"), ("sum",), "")
    with pytest.raises(ProtocolError, match="split"):
        CallMemoryAgent().learn([Trajectory(Observation(test_task, "p", "closed", "single_test"), "a", 1.0)])


def test_an_agent_in_a_file_outside_the_package_is_benchmarked_through_the_cli(tmp_path, capsys):
    rc, out = _bench(tmp_path, "--agent", EXAMPLE)
    printed = capsys.readouterr().out
    assert rc == 0, printed
    row = _summary(out)["CallMemoryAgent"]
    # its memory of accepted calls answers most held-out questions closed book; one entry per accepted train answer
    assert row["single_test"]["accuracy"] >= 0.5 and row["single_test"]["tasks"] == 18
    assert row["memory_entries"] == json.loads((out / "seed0" / "CallMemoryAgent" / "freeze.json").read_text())["memory_entries"] > 0
    assert row["memory_changed"] == 0 and "| CallMemoryAgent |" in printed and "unchanged" in printed
    # the agents saw no tests and no solutions
    rows = [json.loads(x) for x in (out / "seed0" / "CallMemoryAgent" / "learn.jsonl").read_text().splitlines()]
    assert sum(len(r["rows"]) for r in rows) == 24


def test_an_agent_that_learns_from_the_test_split_is_refused_and_reported(tmp_path, capsys):
    rc, out = _bench(tmp_path, "--agent", f"{AGENTS}:CheatingAgent", "--agent", f"{AGENTS}:ScribblingAgent", "--batch-size", "1")
    printed = capsys.readouterr().out
    assert rc == 0
    rows = _summary(out)
    cheat, scribble = rows["CheatingAgent"], rows["ScribblingAgent"]
    assert cheat["protocol_refusals"] == 18 and cheat["single_test"]["accuracy"] == 0.0  # each attempt: refused, scored wrong
    assert cheat["memory_changed"] == 0  # nothing got in
    assert "refused attempts to learn during the test phase" in printed and "CheatingAgent 18" in printed
    assert scribble["memory_changed"] == 1 and "**memory changed during test**" in printed
    # the online setting: the same change is allowed and reported in its own words
    rc, out2 = _bench(tmp_path, "--agent", f"{AGENTS}:ScribblingAgent", "--online", name="online")
    printed = capsys.readouterr().out
    assert rc == 0 and "| ScribblingAgent [online] |" in printed and "| – (online) | in 1 of 1 run(s) |" in printed


def test_an_agent_that_raises_is_an_agent_error_and_the_run_goes_on(tmp_path, capsys):
    rc, out = _bench(tmp_path, "--agent", f"{AGENTS}:FlakyAgent", "--agent", EXAMPLE)
    assert rc == 0
    rows = _summary(out)
    flaky = rows["FlakyAgent"]
    sums = sum(1 for line in (out / "seed0" / "FlakyAgent" / "test.jsonl").read_text().splitlines()
               for r in json.loads(line)["rows"] if r["status"] == "agent_error")
    assert flaky["agent_errors"] == sums == 6 and flaky["statuses"]["agent_error"] == sums  # one per function: isolated
    assert 0 < flaky["single_test"]["accuracy"] < rows["CallMemoryAgent"]["single_test"]["accuracy"]  # the rest were answered


@pytest.mark.parametrize("argv, message", [
    (["--agent", "no/such/file.py:Agent"], "no file"),
    (["--agent", "no_such_module_xyz:Agent"], "cannot import 'no_such_module_xyz'"),
    (["--agent", f"{AGENTS}:NotAnAgent"], "not a subclass of se_gym.agents.base.Agent"),
    (["--agent", EXAMPLE, "--agent-option", "colour=blue"], "unknown option 'colour'; CallMemoryAgent takes: min_overlap"),
    (["--agent", "se_gym.bench.http:HTTPAgent"], "missing option 'url'"),
    (["--agent", "closed-book"], "give --model"),
    (["--agent", "expl"], "did you mean 'expel'"),
])
def test_bad_agents_are_one_line_errors_before_any_work(tmp_path, capsys, argv, message):
    rc, out = _bench(tmp_path, *argv)
    err = capsys.readouterr().err
    assert rc == 2 and message in err and err.count("\n") == 1, err
    assert not list(out.glob("seed0/*/learn.jsonl"))


def test_agent_options_go_to_every_agent_or_to_one_label():
    specs = agent_specs(["expel", "doc-memory", "expel"], ["k=1", "expel#2/k=3", "doc-memory/header=Docs"],
                        table={"expel": {"insights": "llm"}}, defaults={"expel": {"max_new_tokens": 32}})
    assert [s.label for s in specs] == ["expel", "doc-memory", "expel#2"]
    assert dict(specs[0].options) == {"max_new_tokens": 32, "insights": "llm", "k": 1}
    assert dict(specs[1].options) == {"k": 1, "header": "Docs"}
    assert dict(specs[2].options) == {"max_new_tokens": 32, "k": 3}
    with pytest.raises(CLIError, match="no agent labelled 'open'"):
        agent_specs(["expel"], ["open/k=1"])


class _Service(BaseHTTPRequestHandler):
    """A non-Python agent in miniature: the example's memory behind the HTTP protocol."""

    calls: list = []
    notes: list = []

    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):
        import re

        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append((self.path, body))
        words = lambda text: set(re.findall(r"[a-z]+", text.lower()))  # noqa: E731
        if self.path == "/reset":
            type(self).notes = []
            reply = {}
        elif self.path == "/act":
            answers = []
            for o in body["observations"]:
                q = words(o["query"])
                if o["docs"]:
                    doc = max(o["docs"], key=lambda d: len(q & words(d.split(":", 1)[1])))
                    args = o["function_name"].split("(", 1)[1].rsplit(")", 1)[0]
                    answers.append(f"```python\n{o['function_name']}\n    return {doc.split('(', 1)[0]}({args})\n```")
                else:
                    best = max(self.notes, key=lambda n: len(q & set(n[0])), default=[[], ""])
                    answers.append(best[1])
            reply = {"answers": answers, "prompt_tokens": [len(o["prompt"].split()) for o in body["observations"]]}
        elif self.path == "/learn":
            for t in body["trajectories"]:
                if t["reward"] == 1.0:
                    type(self).notes.append([sorted(words(t["query"])), t["response"]])
            reply = {"metrics": {"notes": len(self.notes)}}
        elif self.path == "/state":
            reply = {"memory": self.notes}
        else:
            self.send_error(404)
            return
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_the_http_agent_protocol_with_a_service_written_here(tmp_path, capsys):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        rc, out = _bench(tmp_path, "--agent", f"http:http://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
    assert rc == 0, capsys.readouterr()
    paths = [p for p, _ in _Service.calls]
    assert paths[0] == "/reset" and paths.count("/reset") == 1 and paths.count("/learn") == 1
    learned = [t for p, b in _Service.calls if p == "/learn" for t in b["trajectories"]]
    assert len(learned) == 24 and {t["split"] for t in learned} == {"train"}  # only train trajectories reach /learn
    test_obs = [o for p, b in _Service.calls if p == "/act" for o in b["observations"] if o["split"] != "train"]
    assert len(test_obs) == 18 and all(not o["docs"] and "Docs:" not in o["prompt"] for o in test_obs)  # closed book
    row = _summary(out)["http"]
    assert row["single_test"]["accuracy"] >= 0.5 and row["memory_entries"] > 0 and row["memory_changed"] == 0
    assert row["prompt_tokens_per_answer"] > 0  # what the service reported


def test_paper_rows_only_beside_official_runs():
    summary = {"agents": {"expel": {"book": "closed", "single_test": {"accuracy": 0.5, "ci95": [0.4, 0.6]}, "prompt_tokens_per_answer": 10.0,
                                    "learn_wall_s": 1.0, "learn_tokens": 5, "test_wall_s": 2.0, "memory_entries": 3, "memory_bytes": 30, "memory_changed": 0,
                                    "online": False, "protocol_refusals": 0, "statuses": {"passed": 1}}},
               "official": False}
    assert "paper" not in render(summary)
    md = render({**summary, "official": True})
    assert "the paper's" in md and "| ExpeL (paper) | 47.1 | 15.5 |" in md and "| Closed-SFT-RL (paper) | 54.4 | 17.9 |" in md


def test_resume_after_kill_9_loses_nothing_and_counts_nothing_twice(tmp_path):
    out, counts = tmp_path / "run", tmp_path / "answers.txt"
    cmd = [sys.executable, "-m", "se_gym.cli", "bench", "--agent", f"{AGENTS}:SlowAgent", *MINI, "--batch-size", "2", "--out", str(out)]
    env = {**os.environ, "BENCH_COUNT_FILE": str(counts), "BENCH_SLOW_S": "0.3", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    test_file = out / "seed0" / "SlowAgent" / "test.jsonl"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if test_file.is_file() and len(test_file.read_text().splitlines()) >= 3:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its sandbox workers, mid-test-phase
        proc.wait(30)
    done_before = len(test_file.read_text().splitlines())
    assert 3 <= done_before < 9
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [json.loads(x) for x in test_file.read_text().splitlines()]
    keys = [(r["split"], r["batch"]) for r in lines]
    assert len(keys) == len(set(keys)) == 9  # 18 questions in batches of 2, each judged once
    assert sorted(r["task"] for line in lines for r in line["rows"]) == sorted({r["task"] for line in lines for r in line["rows"]})
    learn_lines = [json.loads(x) for x in (out / "seed0" / "SlowAgent" / "learn.jsonl").read_text().splitlines()]
    assert len(learn_lines) == 12 and sum(len(x["rows"]) for x in learn_lines) == 24  # the learn phase was not redone
    asked = counts.read_text().splitlines()
    # the rerun asked only what the kill left unanswered: at most the batch in flight was asked twice
    assert len([a for a in asked if not a.startswith("train")]) <= 18 + 2
    assert len([a for a in asked if a.startswith("train")]) == 24
    row = _summary(out)["SlowAgent"]
    assert row["single_test"]["tasks"] == 18 and sum(row["statuses"].values()) == 18


def test_agents_see_no_tests_solutions_or_functions():
    from se_gym.agents import Runner
    from se_gym.bench import BenchConfig
    from se_gym.bench.run import observe, world

    w = world(BenchConfig(tasks="miniature"), 0)
    runner = Runner(scorer=None, renderer=w.renderer, progress=False)
    for o in observe(runner, w.splits["single_test"][:3], "closed", 2):
        t = o.task
        assert t.query and t.function_name and not (t.test_cases or t.library_solution or t.reference_solution or t.functions)
    shown = observe(runner, w.splits["train"][:1], "open", 1)[0]
    assert shown.docs and shown.docs[0] in shown.prompt  # the docs are rendered from the real task


class _ReaderModel:
    """A fake model that can read its context: it calls the function of the doc line whose description
    matches the task best, or else copies the library call of the first answer shown in the prompt,
    or else answers with a name it makes up (a closed-book guess)."""

    tokenizer = None

    def __init__(self):
        self.prompts = []

    def sample(self, prompts, n, temperature, max_new_tokens):
        import re

        out = []
        for p in prompts:
            self.prompts.append(p)
            task = next(line for line in p.splitlines() if line.startswith("Task: "))
            sig = p[p.index("def solve("):].split("\n", 1)[0]
            args = sig.split("(", 1)[1].rsplit(")", 1)[0]
            words = set(re.findall(r"[a-z]+", task.lower()))
            docs = re.findall(r"^(\w+\.\w+)\(.*?\): (.*)$", p, flags=re.M)
            shown = re.findall(r"return (\w+\.\w+)\(", p)
            if docs:
                call = max(docs, key=lambda d: len(words & set(re.findall(r"[a-z]+", d[1]))))[0]
            else:
                call = shown[0] if shown else "lib.guess"
            out.append([f"```python\n{sig}\n    return {call}({args})\n```"] * n)
        return out


class _FakeModels:
    def __init__(self):
        self.model = _ReaderModel()

    def shared(self, label):
        return self.model

    def tokenizer(self):
        return None

    def close(self):
        pass


def test_the_built_in_memory_agents_under_the_protocol_with_a_model_that_reads_its_context(tmp_path):
    from se_gym.bench import BenchConfig
    from se_gym.bench.run import Bench

    config = BenchConfig(tasks="miniature", out=str(tmp_path / "run"), progress=False)
    agents = ["closed-book", "open-book", "expel", "memory", "doc-memory"]
    specs = agent_specs(agents, [], defaults={"expel": {"k": 1}, "memory": {"k": 1, "use_docs": False},
                                              "doc-memory": {"k": 1, "header": "Docs:\n"}})
    Bench(config, specs, models=_FakeModels()).run()
    rows = summarize(collect([config.out]))["agents"]
    acc = {a: rows[a]["single_test"]["accuracy"] for a in agents}
    assert acc["closed-book"] == 0.0 and acc["open-book"] == 1.0  # the floor and the ceiling
    assert acc["doc-memory"] >= 0.8 and acc["expel"] >= 0.5 and acc["memory"] >= 0.5  # memory from the learn phase, closed book
    assert rows["closed-book"]["memory_entries"] is None and rows["closed-book"]["learn_wall_s"] == 0.0  # learns nothing
    assert rows["doc-memory"]["memory_entries"] == 6 and rows["expel"]["memory_entries"] > 6  # 6 docs; experiences + insights
    # memory costs context: more prompt tokens per answer than the floor
    assert rows["expel"]["prompt_tokens_per_answer"] > rows["doc-memory"]["prompt_tokens_per_answer"] > rows["closed-book"]["prompt_tokens_per_answer"]
    assert rows["open-book"]["book"] == "open" and "not closed book" in render(summarize(collect([config.out])))
    assert all(r["memory_changed"] == 0 for r in rows.values())


def test_memory_built_ins_show_past_solutions_in_the_layout_the_base_is_pretrained_on():
    """The quick run's memory and expel put retrieved train solutions before the closed prompt exactly
    as the experience base's pre-training examples do (``miniature.memory_corpus``): ``with_memory(
    memory_context(past problems), closed prompt)``; expel's insights come after those entries."""
    from se_gym.agents import Runner
    from se_gym.agents.registry import AGENTS
    from se_gym.bench import BenchConfig
    from se_gym.bench.config import bench_demo_config, quick_agent_options
    from se_gym.bench.run import observe, world
    from se_gym.tasks.prompts import memory_context, with_memory
    from se_gym.training import miniature as mini

    w = world(BenchConfig(tasks="miniature"), 0)
    runner = Runner(scorer=None, renderer=w.renderer, progress=False)
    train, test = w.splits["train"], w.splits["single_test"][0]
    learned = [Trajectory(o, mini.answer(w.library, t.functions[0]), 1.0, "passed")  # what the judge accepts
               for o, t in zip(observe(runner, train, "open", 1), train)]
    seen = observe(runner, [test], "closed", 1)[0]
    assert seen.prompt == mini.closed_prompt(test.query, test.functions[0])  # the pre-training's closed prompt
    options = quick_agent_options(bench_demo_config())
    for name in ("memory", "expel"):
        agent = AGENTS.load(name)(_ReaderModel(), **options[name])
        agent.learn(learned)
        past = [(e.key, e.value) for e in agent.memory.search(test.query, 2, kind="experience")]
        assert len(past) == 2 and all(key in {t.query for t in train} for key, _ in past)
        expected = memory_context(past)
        if name == "expel":
            (insight,) = agent.relevant_insights(test.query)
            expected += f"\n\nInsight: {insight}"
        assert agent.prompts([seen])[0] == with_memory(expected, seen.prompt)


def test_quick_runs_the_memory_built_ins_on_the_base_that_reads_experience():
    from se_gym.bench import BenchConfig
    from se_gym.bench.agents import check
    from se_gym.bench.config import bench_demo_config
    from se_gym.bench.run import resolve
    from se_gym.demo import experience_base_config

    assert bench_demo_config() == experience_base_config(quick=True)
    config, defaults = resolve(BenchConfig(quick=True))
    assert {"closed-book", "open-book", "expel", "memory", "doc-memory", "closed-sft"} <= set(config.agent)
    for spec in agent_specs(config.agent, [], defaults=defaults):  # every built-in takes its quick options
        check(spec, has_model=True)


def test_the_report_gives_the_memory_size_as_the_mean_over_seeds(tmp_path):
    from se_gym.bench import BenchConfig
    from se_gym.bench.run import Bench

    config = BenchConfig(tasks="miniature", seeds=(0, 1), limit=2, out=str(tmp_path / "run"), progress=False)
    Bench(config, agent_specs(["doc-memory", "closed-book"], []), models=_FakeModels()).run()
    for seed, (entries, size) in ((0, (2, 100)), (1, (5, 400))):  # hand-made sizes per seed
        path = tmp_path / "run" / f"seed{seed}" / "doc-memory" / "result.json"
        result = json.loads(path.read_text())
        result["freeze"].update(memory_entries=entries, memory_bytes=size)
        path.write_text(json.dumps(result))
    summary = summarize(collect([config.out]))
    row = summary["agents"]["doc-memory"]
    assert (row["memory_entries"], row["memory_bytes"]) == (3.5, 250.0)  # not the last seed's (5, 400)
    assert summary["agents"]["closed-book"]["memory_entries"] is None
    assert "| 4, 250 |" in render(summary) and "| –, 0 |" in render(summary)


def test_the_command_logs_each_line_once_and_quiet_hides_them(tmp_path):
    # a program of its own: in pytest the root logger already has handlers, which hides a doubled one
    def run(*flags):
        argv = [sys.executable, "-m", "se_gym.cli", *flags, "bench", "--agent", EXAMPLE, *MINI, "--limit", "2",
                "--out", str(tmp_path / f"run{len(flags)}")]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)

    done = run()
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("seed 0: agent CallMemoryAgent done in") == 1
    quiet = run("-q")
    assert quiet.returncode == 0 and "agent CallMemoryAgent" not in quiet.stderr


def test_closed_sft_without_torch_is_a_one_line_error_naming_the_extra(monkeypatch):
    from se_gym.bench.agents import Models

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(CLIError, match=r"agent closed-sft trains weights and needs torch .*se-gym\[train\]"):
        Models("some/model", "hf").trainable("closed-sft")


def test_closed_sft_learns_weights_and_is_tested_closed_book(tmp_path, capsys):
    from conftest import need_module

    need_module("torch", "closed-sft trains a model (pip install 'se-gym[train]')")
    need_module("transformers", "closed-sft trains a model (pip install 'se-gym[train]')")
    from se_gym.training import miniature as mini

    model = mini.build_tiny_model(tmp_path / "tiny", seed=0, hidden=32, layers=1)
    rc, out = _bench(tmp_path, "--agent", "closed-sft", "--model", str(model), "--device", "cpu", "--limit", "2",
                     "--agent-option", "epochs=1", "--agent-option", "max_new_tokens=8", "--agent-option", "mixed_precision=no")
    assert rc == 0, capsys.readouterr().err
    result = json.loads((out / "seed0" / "closed-sft" / "result.json").read_text())
    freeze = result["freeze"]
    assert result["book"] == "closed" and freeze["learns"] and freeze["memory_entries"] > 1000  # parameters
    assert len(freeze["digest"]) == 64 and not result["memory_changed"]
    assert freeze["prompt_tokens"] > 0  # counted with the model's tokenizer


def test_quick_with_a_given_model_answers_on_the_demo_s_thread_count(tmp_path, capsys):
    from conftest import need_module

    torch = need_module("torch", "--quick answers with a torch model (pip install 'se-gym[train]')")
    need_module("transformers", "--quick answers with a torch model (pip install 'se-gym[train]')")
    from se_gym.bench.config import bench_demo_config
    from se_gym.training import miniature as mini

    model = mini.build_tiny_model(tmp_path / "tiny", seed=0, hidden=32, layers=1)
    threads = torch.get_num_threads()
    torch.set_num_threads(bench_demo_config().threads + 1)
    try:
        rc, _ = _bench(tmp_path, "--quick", "--model", str(model), "--agent", "closed-book", "--limit", "2", "--device", "cpu")
        assert rc == 0, capsys.readouterr().err
        assert torch.get_num_threads() == bench_demo_config().threads  # as with the base --quick builds
    finally:
        torch.set_num_threads(threads)


def test_a_config_file_gives_agents_options_and_pass_at_k_comes_with_samples(tmp_path, capsys):
    config = tmp_path / "bench.toml"
    config.write_text(f'agent = ["{EXAMPLE}"]\ntasks = "miniature"\nsamples = 2\nlimit = 4\n'
                      "[agent_options.CallMemoryAgent]\nmin_overlap = 99\n")
    out = tmp_path / "run"
    assert main(["bench", "--config", str(config), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    row = _summary(out)["CallMemoryAgent"]
    # min_overlap 99: nothing ever matches (neither a doc nor the memory): every answer is empty, 2 samples each
    assert row["single_test"]["accuracy"] == 0.0 and row["single_test"]["k"] == 2 and row["single_test"]["pass@2"] == 0.0
    assert "single_test pass@2: 0.0" in printed
    assert json.loads((out / "seed0" / "CallMemoryAgent" / "run.json").read_text())["config"]["options"] == {"min_overlap": 99}
    # another option for the same folder is refused, naming it
    assert main(["bench", "--config", str(config), "--out", str(out), "--no-progress", "--agent-option", "min_overlap=2"]) == 2
    assert "min_overlap: 99 -> 2" in capsys.readouterr().err


def test_expel_turns_rejected_and_accepted_answers_into_voted_insights(tmp_path):
    from se_gym.agents import ExpeLAgent, Observation
    from se_gym.tasks.record import Task

    model = _ReaderModel()
    task = Task("t1", "train", "test", "Return the running total of x.", "def solve(x):", (("x=[1]", "1"),), ("x=[1]", "1"), ("cumsum",), "")
    obs = Observation(task, "Task: Return the running total of x.\ndef solve(x):\nAnswer:\n", "open", "train")
    good, bad = "```python\ndef solve(x):\n    return zwc.qux(x)\n```", "```python\ndef solve(x):\n    return zwc.abs(x)\n```"
    agent = ExpeLAgent(model, k=1)
    agent.learn([Trajectory(obs, bad, 0.0, "wrong_answer"), Trajectory(obs, good, 1.0, "passed")])
    agent.learn([Trajectory(obs, bad, 0.0, "wrong_answer"), Trajectory(obs, good, 1.0, "passed")])
    assert agent.insights == {"For a task like 'Return the running total of x.', call zwc.qux.": 2,  # found twice: upvoted
                              "zwc.abs did not solve 'Return the running total of x.'.": 2}
    held_out = dataclasses.replace(task, id="t2", split="single_test", query="Give the running total of x.")
    test = Observation(held_out, "Task: Give the running total of x.\ndef solve(x):\nAnswer:\n", "closed", "single_test")
    prompt = agent.prompts([test])[0]
    assert "Insight: For a task like" in prompt and "Accepted answer:\n" + good in prompt and prompt.endswith(test.prompt)
    again = ExpeLAgent(model).load(agent.save(tmp_path / "a"))
    assert again.insights == agent.insights and again.state_digest() == agent.state_digest()


class _Killed(BaseException):
    """A kill at a chosen point (BaseException: nothing in the run catches it)."""


def test_a_kill_between_saving_the_agent_and_recording_the_pass_does_not_learn_it_twice(tmp_path, monkeypatch):
    # issue 43, defect 4: the pass is recorded with the agent in one atomic step
    import se_gym.bench.run as run_module
    from se_gym.bench import BenchConfig
    from se_gym.bench.run import Bench

    specs = agent_specs([EXAMPLE], [])
    whole = BenchConfig(tasks="miniature", out=str(tmp_path / "whole"), progress=False)
    Bench(whole, specs).run()
    uninterrupted = json.loads((tmp_path / "whole" / "seed0" / "CallMemoryAgent" / "freeze.json").read_text())

    real = run_module.write_json_atomic

    def killed_at_learned(path, data, *args, **kwargs):
        if Path(path).name.endswith("learned.json"):
            raise _Killed()
        return real(path, data, *args, **kwargs)

    cut = BenchConfig(tasks="miniature", out=str(tmp_path / "cut"), progress=False)
    monkeypatch.setattr(run_module, "write_json_atomic", killed_at_learned)
    with pytest.raises(_Killed):
        Bench(cut, specs).run()
    monkeypatch.setattr(run_module, "write_json_atomic", real)
    Bench(cut, specs).run()  # the rerun
    resumed = json.loads((tmp_path / "cut" / "seed0" / "CallMemoryAgent" / "freeze.json").read_text())
    assert uninterrupted["memory_entries"] > 0
    assert (resumed["memory_entries"], resumed["digest"]) == (uninterrupted["memory_entries"], uninterrupted["digest"])


def test_the_test_phase_answers_with_an_agent_loaded_fresh_from_the_frozen_save(tmp_path):
    # issue 43, defect 5: state kept outside memory_state() never crosses a test batch
    rc, out = _bench(tmp_path, "--agent", f"{AGENTS}:HoardingAgent", "--batch-size", "2")
    assert rc == 0
    lines = [json.loads(x) for x in (out / "seed0" / "HoardingAgent" / "test.jsonl").read_text().splitlines()]
    marks = [re.search(r"test batches before this one: (\d+)", r["response"]).group(1) for line in lines for r in line["rows"]]
    assert len(marks) == 18 and set(marks) == {"0"}
    assert _summary(out)["HoardingAgent"]["single_test"]["accuracy"] >= 0.5  # it still answers from its frozen memory
