"""``sandbox="ray"`` on a real 2-node Ray cluster on this machine (``ray start --head --num-cpus 1``
plus ``ray start --address ... --num-cpus 1``, each with its own temp dir and resources): the same
verdicts as ``sandbox="local"`` on 500 answers, a vector env of 16, the TRL reward and ``se-gym judge``
unchanged, back-pressure, a dead actor replaced, a stopped node hedged around, a killed node's share
judged elsewhere, and a node with another library refused.

Run through tests/test_ray_sandbox.py (a fresh interpreter with Ray's token auth off, like the
cluster).  The nodes are stopped by killing the process trees this module started.  Tests run in
file order and share the cluster: the node kill and the refused node come last.
"""
from __future__ import annotations

import ast
import os
import signal
import threading
import time

import pytest

from conftest import descendants, need_module

# the driver must use the throw-away cluster's auth mode (no token); Ray reads it when imported
os.environ["RAY_AUTH_MODE"] = "disabled"
RAY = need_module("ray", "bash scripts/setup/ray.sh")

from _ray_helpers import NodeCluster  # noqa: E402
from se_gym.library import mint  # noqa: E402

LIB = mint(0)


@pytest.fixture(scope="module")
def cluster():
    import logging

    from se_gym.distributed import package_runtime_env

    c = NodeCluster("sgrs", head_cpus=1)
    try:
        c.add_node("node2", cpus=1)
        RAY.init(address=c.address, runtime_env=package_runtime_env(), include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING)
        yield c
    finally:
        if RAY.is_initialized():
            RAY.shutdown()
        c.close()


def _node_id(resource: str) -> str:
    ids = [n["NodeID"] for n in RAY.nodes() if n["Alive"] and resource in n["Resources"]]
    assert len(ids) == 1, RAY.nodes()
    return ids[0]


def _within(seconds: float, fn, *args):
    """``fn(*args)``, failing the test instead of hanging when it has not returned in ``seconds``."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn(*args)), daemon=True)
    t.start()
    t.join(seconds)
    assert out, f"{getattr(fn, '__name__', fn)} did not return within {seconds} s"
    return out[0]


def _params(function_name: str) -> str:
    fn = ast.parse(function_name.strip() + "\n    pass").body[0]
    return ", ".join(a.arg for a in fn.args.args)


def _answers(n: int = 500) -> list[tuple]:
    """``n`` answers to the built-in suite: references, wrong ones (the reference's value in a list),
    crashing ones, and two that loop forever (timeouts)."""
    from se_gym.envs.sebench import resolve_tasks

    tasks, _ = resolve_tasks("builtin", "single_test", 0, LIB)
    absf, arr = LIB.qualified("abs"), LIB.qualified("array")  # (the entry function must call the library itself)
    items = []
    for i in range(n):
        t = tasks[i % len(tasks)]
        ref = t.library_solution
        wrapped = ref.replace("def solve(", "def _reference(", 1) + f"\n\n{t.function_name.strip()}\n    {absf}(1)\n"
        call = f"_reference({_params(t.function_name)})"
        code = {0: ref, 1: ref, 2: wrapped + f"    return [{call}]\n", 3: wrapped + f"    {call}\n    raise ValueError('crash {i}')\n    return 0\n",
                4: wrapped + f"    return {arr}({call}).tolist()\n"}[i % 5]
        if i in (7, 257):
            code = wrapped + "    while True:\n        pass\n    return 0\n"
        items.append((f"```python\n{code}\n```", t.test_cases, t.function_name))
    return items


@pytest.fixture(scope="module")
def answers():
    return _answers()


@pytest.fixture(scope="module")
def local_verdicts(answers):
    from se_gym.judge import Judge

    with Judge(LIB, profile="strict", sandbox="local", workers=2) as j:
        return j.judge_many(answers)


def test_500_verdicts_identical_to_local(cluster, answers, local_verdicts):
    from se_gym.judge import Judge

    statuses = {v.status.value for v in local_verdicts}
    assert {"passed", "wrong_answer", "runtime_error", "timeout"} <= statuses  # the mix this test is about
    with Judge(LIB, profile="strict", sandbox="ray", ray_address=cluster.address) as j:
        got = j.judge_many(answers)
        box = j.sandbox
        assert box.name == "ray" and len(box.nodes()) == 2
        assert len(box.stats.per_node) == 2  # both nodes judged a share
        assert box.stats.infra_retries == box.stats.failed == 0
    assert got == local_verdicts
    assert not any(v.infrastructure for v in got)


def test_vector_env_of_16_on_ray(cluster):
    from se_gym.envs.vector import SEBenchVectorEnv

    env = SEBenchVectorEnv(16, library=LIB, sandbox="ray", ray_address=cluster.address)
    try:
        env.reset(seed=0)
        right = [f"```python\n{e.task.library_solution}\n```" for e in env.envs]
        answers = [a if i % 4 else "```python\nimport numpy\ndef solve(x):\n    return x\n```" for i, a in enumerate(right)]
        _, rewards, terminated, _, infos = env.step(answers)
        assert list(rewards) == [0.0 if i % 4 == 0 else 1.0 for i in range(16)]
        assert all(terminated)
        box = env.judge.sandbox
        assert box.name == "ray" and len(box.stats.per_node) == 2
        env.reset(seed=1)
        _, rewards, _, _, _ = env.step([f"```python\n{e.task.library_solution}\n```" for e in env.envs])
        assert list(rewards) == [1.0] * 16
    finally:
        env.close()


def test_trl_reward_on_ray_unchanged(cluster):
    from se_gym.envs.sebench import resolve_tasks
    from se_gym.integrations.trl import SEBenchReward, dataset_rows

    tasks = resolve_tasks("builtin", "single_test", 0, LIB)[0][:12]
    rows = dataset_rows(tasks, LIB)
    completions = [[{"role": "assistant", "content": f"```python\n{t.library_solution}\n```" if i % 3 else "no code"}]
                   for i, t in enumerate(tasks)]
    reward = SEBenchReward(LIB, sandbox="ray")  # the adapter as it is: the cluster is the one this process joined
    try:
        got = reward(completions=completions, test_cases=[r["test_cases"] for r in rows], function_name=[r["function_name"] for r in rows])
        assert got == [1.0 if i % 3 else 0.0 for i in range(12)]
        assert reward.judge.sandbox.name == "ray"
    finally:
        reward.close()


def test_the_library_dependence_check_on_ray(cluster):
    """Strict's library dependence check (issue 42) on the cluster: a program's library mode travels
    with it to whichever node's worker runs it, and its server's word comes back."""
    from _dependence_corpus import backend_items, check_backend_verdicts
    from se_gym.judge import Judge
    from se_gym.tasks.spec import load_task_spec

    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    with Judge(lib, profile="strict", sandbox="ray", ray_address=cluster.address) as j:
        assert j.sandbox.library_modes
        check_backend_verdicts(j.judge_many(backend_items(tasks[0], lib) * 3))


def test_back_pressure_bounds_the_work_held_by_the_driver(cluster):
    from se_gym.distributed.sandbox import RaySandbox

    with RaySandbox(preload=(), window=16, depth=2, max_chunk=2) as box:
        out = box.run([f"print({i})" for i in range(300)])
        assert [r.stdout for r in out] == [f"{i}\n" for i in range(300)]
        assert box.peak_queued <= 16  # the queue never held more than its window...
        assert box.peak_inflight <= 2 * 2 * 2  # ...nor the actors more than depth chunks of max_chunk each
        assert box.last_stats.programs == 300 and len(box.last_stats.per_node) == 2


def test_a_dead_actor_is_replaced_and_its_share_run_again(cluster):
    from se_gym.distributed.sandbox import RaySandbox

    node2 = _node_id("node2")
    with RaySandbox(preload=(), hedge_after=3600) as box:  # (no hedging: the share comes back through the death)
        box.run(["print(0)"] * 4)
        pid = next(n["pid"] for n in box.nodes() if n["node"] == node2)
        procs = [pid] + descendants(pid)

        def killer():
            deadline = time.monotonic() + 60
            while node2 not in box.busy() and time.monotonic() < deadline:
                time.sleep(0.002)
            os.kill(pid, signal.SIGKILL)  # the actor alone: its node lives on

        threading.Thread(target=killer, daemon=True).start()
        out = _within(90, box.run, [f"import time\ntime.sleep(0.05)\nprint({i})" for i in range(40)])
        assert [r.stdout for r in out] == [f"{i}\n" for i in range(40)]
        assert box.last_stats.infra_retries >= 1 and box.last_stats.failed == 0 and box.stats.replaced == 1
        deadline = time.monotonic() + 60  # a new actor on the same node
        while len(box.nodes()) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [n["node"] for n in box.nodes()].count(node2) == 1 and pid not in [n["pid"] for n in box.nodes()]
        assert box.run(["print(1)"] * 8)[-1].stdout == "1\n"
    deadline = time.monotonic() + 20  # the dead actor's sandbox workers went with it
    while (left := [p for p in procs if os.path.exists(f"/proc/{p}") and "Z" not in open(f"/proc/{p}/stat").read().rsplit(")", 1)[1][:3]]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"processes of the killed actor left: {left}"


def test_a_stopped_node_does_not_hold_the_batch(cluster):
    from se_gym.distributed.sandbox import RaySandbox

    node2 = _node_id("node2")
    with RaySandbox(preload=(), hedge_after=1.0) as box:
        box.run(["print(0)"] * 4)  # both up
        pid = next(n["pid"] for n in box.nodes() if n["node"] == node2)
        stopped = [pid] + descendants(pid)
        results: list = []
        # the stopped actor takes its share and never answers: the batch ends on the other node
        for p in stopped:
            os.kill(p, signal.SIGSTOP)
        try:
            results = _within(90, box.run, [f"print({i})" for i in range(24)])
        finally:
            for p in stopped:
                os.kill(p, signal.SIGCONT)
        assert [r.stdout for r in results] == [f"{i}\n" for i in range(24)]
        assert box.last_stats.hedged >= 1 and box.last_stats.failed == 0


def test_judge_command_on_ray(cluster, answers, tmp_path):
    import json
    import subprocess
    import sys

    rows = tmp_path / "rows.jsonl"
    some = list(range(20, 40))
    rows.write_text("".join(json.dumps({"response": answers[k][0], "test_cases": [{"input": c.input, "output": c.output} for c in answers[k][1]]}) + "\n" for k in some))
    out = tmp_path / "verdicts.jsonl"
    proc = subprocess.run([sys.executable, "-m", "se_gym.cli", "judge", "--input", str(rows), "--out", str(out), "--library", "seed:0",
                           "--profile", "strict", "--sandbox", "ray", "--ray-address", cluster.address, "--quiet"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "RAY_AUTH_MODE": "disabled"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "se-gym judge: sandbox ray: 2 node(s), 2 workers" in proc.stderr
    got = [json.loads(line)["judge"] for line in out.read_text().splitlines()]
    from se_gym.judge import Judge

    with Judge(LIB, profile="strict", sandbox="local", workers=2) as j:  # (rows name no function: judged as such)
        want = j.judge_many([answers[k][:2] for k in some])
    assert [(v["status"], v["detail"]) for v in got] == [(v.status.value, v.detail) for v in want]


def test_strict_isolation_routes_give_nothing_on_ray(cluster):
    """Issue 42: the answer's own process on a Ray node holds no nonce, channel or results, and
    installs no signal handler: each route earns nothing; honest answers pass."""
    from _isolation_cases import backend_suite
    from se_gym.judge import Judge

    suite = backend_suite(LIB)
    # (the walls alone, as in test_strict_isolation: its controls compute in Python)
    with Judge(LIB, profile="strict", sandbox="ray", ray_address=cluster.address, reward="fraction", dependence=False) as j:
        got = j.judge_many([(answer, cases, "solve") for _, answer, cases, _ in suite])
    wrong = [f"{name}: {v.status.value} reward={v.reward} ({v.detail[:160]})" for (name, _, _, must), v in zip(suite, got)
             if v.passed != must or (not must and (v.reward > 0 or v.infrastructure))]
    assert not wrong, "\n".join(wrong)


def test_a_node_killed_mid_batch_loses_no_answer(cluster, answers, local_verdicts):
    from se_gym.distributed.sandbox import RaySandbox
    from se_gym.judge import Judge
    from se_gym.judge.core import sandbox_preload, sandbox_warmup

    node2 = _node_id("node2")
    some = [k for k in range(120) if k not in (7, 257)]  # (no 3-second timeouts)
    # no hedging: the lost share must come back through the actor's death
    box = RaySandbox(library=LIB, profile="strict", preload=sandbox_preload(LIB), warmup=sandbox_warmup(LIB), hedge_after=3600)
    killed = threading.Event()

    def killer():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if node2 in box.busy() and any(k.endswith(node2[:8]) for k in box.stats.per_node):
                cluster.kill("node2")  # mid-batch: it has answered and holds more
                killed.set()
                return
            time.sleep(0.002)

    try:
        with Judge(LIB, profile="strict", sandbox=box) as j:
            threading.Thread(target=killer, daemon=True).start()
            got = _within(150, j.judge_many, [answers[k] for k in some])
        assert killed.is_set(), "the second node was never killed"
        assert got == [local_verdicts[k] for k in some]
        assert not any(v.infrastructure for v in got)
        assert box.stats.infra_retries >= 1 and box.stats.failed == 0
    finally:
        box.close()


def test_a_node_with_another_library_is_refused(cluster, tmp_path):
    from se_gym.distributed.sandbox import NodeRefused, RaySandbox

    deadline = time.monotonic() + 60  # the node killed above: declared dead within seconds
    while any(n["Alive"] and "node2" in n["Resources"] for n in RAY.nodes()) and time.monotonic() < deadline:
        time.sleep(0.5)
    # a node whose library cache holds another copy (a stale or edited one) writes different files
    cache = tmp_path / "cache3"
    old = os.environ.get("SE_GYM_CACHE")
    os.environ["SE_GYM_CACHE"] = str(cache)
    try:
        folder = LIB.materialize("strict", docs=False)
    finally:
        os.environ.pop("SE_GYM_CACHE") if old is None else os.environ.__setitem__("SE_GYM_CACHE", old)
    core = folder / LIB.package / "__init__.py"  # (strict: a client package, without _core.py)
    core.write_text(core.read_text() + "\n# edited on this node\n")
    cluster.add_node("node3", cpus=1, env={"SE_GYM_CACHE": str(cache)})
    try:
        with pytest.raises(NodeRefused) as err:
            RaySandbox(library=LIB, profile="strict", preload=())
        msg = str(err.value)
        assert "\n" not in msg and msg.count(LIB.id) == 2, msg  # one line, naming both copies
        assert "library" in msg and msg.count("content") == 2
    finally:
        cluster.kill("node3")
