"""`se-gym serve openenv` driven by openenv-core's own client (WebSocket sessions) on 127.0.0.1."""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request

import pytest

from conftest import REPO, need_module
from se_gym.tasks import builtin_tasks

TASKS = builtin_tasks("single_test", seed=0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _wait_for(pred, what: str, limit_s: float = 120.0):
    """Poll until ``pred()`` is true (a bound for a hung server, not a speed assertion)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            if pred():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"gave up waiting for {what}")


@pytest.fixture(scope="module")
def server_log(tmp_path_factory):
    return tmp_path_factory.mktemp("openenv") / "server.log"


@contextlib.contextmanager
def openenv_server(log_path, *flags: str):
    """A live ``se-gym serve openenv`` on a free port (its output in ``log_path``): yields (process, url)
    once /health says healthy; stopped with SIGINT (killed after 30 s) on the way out."""
    log = open(log_path, "w+")
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "se_gym.cli", "serve", "openenv", "--host", "127.0.0.1", "--port", str(port), *flags],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(lambda: proc.poll() is not None or _get(url + "/health")["status"] == "healthy", "the server")
        assert proc.poll() is None, open(log_path).read()
        yield proc, url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def server(server_log):
    need_module("openenv.core", "the 'openenv' extra (openenv-core) is the package under test")
    with openenv_server(server_log, "--max-sessions", "32", "--max-turns", "2") as (_, url):
        yield url
    tail = open(server_log).read()
    assert tail.count("Traceback") == 0, tail[-3000:]  # the server logged no crash while serving


def _client(url):
    from se_gym.integrations.openenv import SEBenchClient

    return SEBenchClient(base_url=url, message_timeout_s=120)


def _ok(task):
    return f"```python\n{task.library_solution}\n```"


def test_schema_is_typed(server):
    schema = _get(server + "/schema")
    assert schema["action"]["properties"]["answer"]["type"] == "string"
    assert {"prompt", "messages", "task_id", "status", "feedback"} <= set(schema["observation"]["properties"])


def test_one_episode_with_feedback_and_state(server):
    from se_gym.integrations.openenv import SEBenchAction

    t = TASKS[3]
    with _client(server).sync() as env:
        r = env.reset(task_id=t.id)
        assert r.done is False and r.observation.task_id == t.id and t.query in r.observation.prompt
        st = env.state()
        assert st.task_id == t.id and st.turn == 0 and st.done is False and st.max_turns == 2
        r = env.step(SEBenchAction(answer="```python\ndef solve(x):\n    return undefined_name\n```"))
        assert r.done is False and r.reward == 0.0 and "attempt 1 of 2" in r.observation.feedback
        assert [m["role"] for m in r.observation.messages][-2:] == ["assistant", "user"]
        r = env.step(SEBenchAction(answer=_ok(t)))
        assert r.done is True and r.reward == 1.0 and r.observation.status == "passed"
        assert env.state().done is True
        with pytest.raises(RuntimeError, match="reset first"):
            env.step(SEBenchAction(answer=_ok(t)))
        r = env.reset(index=0)  # the next episode in the same session
        assert r.observation.task_id == TASKS[0].id and r.observation.turn == 0


def test_concurrent_sessions_are_isolated_and_batched(server):
    n = 16
    before = _get(server + "/se_gym/sessions")

    async def one(i):
        async with _client(server) as env:
            r = await env.reset(index=i)
            assert r.observation.task_id == TASKS[i].id
            r = await env.step({"answer": _ok(TASKS[i]) if i % 2 == 0 else _ok(TASKS[(i + 1) % n])})
            return r.reward, r.done, (await env.state()).task_id

    async def main():
        return await asyncio.gather(*(one(i) for i in range(n)))

    out = asyncio.run(main())
    assert [o[0] for o in out] == [1.0 if i % 2 == 0 else 0.0 for i in range(n)]
    assert [o[1] for o in out] == [i % 2 == 0 for i in range(n)]  # a wrong first answer gets a second turn
    assert [o[2] for o in out] == [TASKS[i].id for i in range(n)]
    after = _get(server + "/se_gym/sessions")
    judged = after["batches"] - before["batches"]
    assert 0 < judged < n  # 16 sessions' steps went to fewer sandbox batches
    _wait_for(lambda: _get(server + "/se_gym/sessions")["open"] == 0, "closed sessions to be released")


def test_bad_actions_get_clear_errors_and_the_session_keeps_serving(server):
    t = TASKS[5]

    async def main():
        async with _client(server) as env:
            await env.reset(task_id=t.id)
            for payload, words in [
                ({"answer": ""}, "VALIDATION_ERROR"),
                ({"answer": "   \n"}, "VALIDATION_ERROR"),
                ({"answer": "x" * 200_001}, "VALIDATION_ERROR"),
                ({"answer": 12345}, "VALIDATION_ERROR"),
                ({"answer": ["print(1)"]}, "VALIDATION_ERROR"),
                ({"code": "print(1)"}, "VALIDATION_ERROR"),
            ]:
                with pytest.raises(RuntimeError, match=words):
                    await env.step(payload)
            # the full error names the field and the rule
            await env._send({"type": "step", "data": {"answer": ""}})
            err = await env._receive()
            assert err["type"] == "error" and "answer is empty" in json.dumps(err["data"]["errors"])
            await env._send({"type": "step", "data": {"answer": 7}})
            err = await env._receive()
            assert err["data"]["errors"][0]["loc"][-1] == "answer" and "string" in err["data"]["errors"][0]["msg"].lower()
            r = await env.step({"answer": _ok(t)})  # same session, same episode: still serving
            return r.reward

    assert asyncio.run(main()) == 1.0
    assert _get(server + "/health")["status"] == "healthy"


def test_killed_client_leaves_no_session(server):
    code = textwrap.dedent(f"""
        import asyncio, sys, time
        sys.path.insert(0, {str(REPO)!r})
        from se_gym.integrations.openenv import SEBenchClient
        async def main():
            env = SEBenchClient(base_url={server!r})
            await env.connect()
            await env.reset(index=1)
            print("ready", flush=True)
            await asyncio.sleep(600)
        asyncio.run(main())
    """)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        assert _get(server + "/se_gym/sessions")["open"] >= 1
        child.kill()  # SIGKILL: no close message, the socket just dies
        child.wait()
        _wait_for(lambda: _get(server + "/se_gym/sessions")["open"] == 0, "the killed client's session to close")
    finally:
        if child.poll() is None:
            child.kill()
    with _client(server).sync() as env:  # and the server still serves
        assert env.reset(index=2).observation.task_id == TASKS[2].id


def _post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_plain_http_is_stateless_a_step_names_its_task(server):
    t, u = TASKS[4], TASKS[6]
    code, r = _post(server + "/reset", {"task_id": t.id})
    assert code == 200 and r["observation"]["task_id"] == t.id and t.query in r["observation"]["prompt"] and r["done"] is False
    code, r = _post(server + "/step", {"action": {"answer": _ok(t)}, "task_id": t.id})
    assert code == 200 and r["reward"] == 1.0 and r["done"] is True
    assert r["observation"]["status"] == "passed" and r["observation"]["task_id"] == t.id
    # a wrong answer to a task named by index: judged, and the episode ends with the request
    code, r = _post(server + "/step", {"action": {"answer": _ok(t)}, "index": 6})
    assert code == 200 and r["reward"] == 0.0 and r["done"] is True and r["observation"]["task_id"] == u.id
    assert "attempt 1 of 2" in r["observation"]["feedback"]  # what the next turn of a session would show
    # no task named: 400 with the way forward, not a 500
    code, r = _post(server + "/step", {"action": {"answer": _ok(t)}})
    assert code == 400 and "reset first" in r["detail"] and "task_id" in r["detail"] and "/ws" in r["detail"]
    code, r = _post(server + "/step", {"action": {"answer": _ok(t)}, "task_id": "no/such/task"})
    assert code == 400 and "no/such/task" in r["detail"]
    code, r = _post(server + "/reset", {"task_id": t.id, "index": 1})
    assert code == 400 and "not both" in r["detail"]
    code, r = _post(server + "/step", {"action": {"answer": ""}, "task_id": t.id})
    assert code == 422  # the typed action's own validation, as before
    assert _get(server + "/health")["status"] == "healthy"


def test_a_stateless_step_ends_its_own_episode_and_not_the_sessions_later_ones():
    """Issue 43.7: after one step naming its task, every later episode of that session (max_turns=2)
    reported done after its first answer (the stateless mark was never cleared)."""
    need_module("openenv.core", "the 'openenv' extra (openenv-core) is the package under test")
    from se_gym.integrations._common import Suite
    from se_gym.integrations.openenv import SEBenchAction, SEBenchEnvironment

    wrong = SEBenchAction(answer="```python\ndef solve(x):\n    return undefined_name\n```")
    env = SEBenchEnvironment(Suite.get({}), max_turns=2)
    try:
        r = env.step(wrong, task_id=TASKS[2].id)  # stateless: a one-answer episode of its own
        assert r.done is True and r.reward == 0.0 and r.task_id == TASKS[2].id
        with pytest.raises(Exception, match="reset first"):
            env.step(wrong)  # that episode ended with its request
        for index in (1, 3):  # the session's next episodes keep their two turns
            env.reset(index=index)
            r = env.step(wrong)
            assert r.done is False and r.turn == 1 and "attempt 1 of 2" in r.feedback
            r = env.step(SEBenchAction(answer=_ok(TASKS[index])))
            assert r.done is True and r.reward == 1.0
    finally:
        env.close()


# -- the environment the way OpenEnv finds it -------------------------------------------------------
ENV_DIR = REPO / "sandbox" / "openenv"


def _openenv_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "openenv.cli", *args], capture_output=True, text=True, timeout=120)


def test_openenv_validate_accepts_the_folder_and_the_server(server):
    local = _openenv_cli("validate", str(ENV_DIR), "--json", "--verbose")
    assert local.returncode == 0, local.stdout + local.stderr
    report = json.loads(local.stdout)
    assert report["passed"] and report["issues"] == [] and all(report["deployment_modes"].values())
    remote = _openenv_cli("validate", "--url", server)  # the running server against OpenEnv's runtime contract
    assert remote.returncode == 0, remote.stdout + remote.stderr
    assert json.loads(remote.stdout)["summary"]["failed_criteria"] == []


def test_autoenv_finds_se_gym_once_the_package_is_installed(server, tmp_path):
    import shutil

    # installed as pip installs it (into a folder of its own: the shared venv stays as it is), from
    # a copy (a build writes build/ and *.egg-info next to the sources)
    src, target = tmp_path / "src", tmp_path / "site"
    shutil.copytree(ENV_DIR, src, ignore=shutil.ignore_patterns("__pycache__"))
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target), str(src)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr[-3000:]
    t = TASKS[2]
    code = textwrap.dedent(f"""
        from openenv import AutoEnv
        info = AutoEnv.get_env_info("se_gym")
        print(info["package"], info["env_class"], info["action_class"], info["default_image"])
        env = AutoEnv.from_env("se-gym", base_url={server!r})         # the running server: no container
        assert type(env) is AutoEnv.get_env_class("se_gym")
        from se_gym_env import SEBenchAction
        with env.sync() as s:
            r = s.reset(task_id={t.id!r})
            r = s.step(SEBenchAction(answer={_ok(t)!r}))
            print(type(env).__name__, r.reward, r.done, r.observation.status)
    """)
    # a fresh TMPDIR: OpenEnv caches what it discovered in $TMPDIR/openenv_discovery_cache.json
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(target), str(REPO)]), TMPDIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split("\n")[:2] == ["openenv-se_gym_env SeGymEnv SEBenchAction se-gym-env:latest", "SeGymEnv 1.0 True passed"]


def test_clients_that_leave_mid_step_are_quiet_and_judging_goes_on(server, server_log):
    async def leave(i):
        env = _client(server)
        await env.connect()
        await env.reset(index=i)
        await env._send({"type": "step", "data": {"answer": _ok(TASKS[i])}})
        env._ws.transport.abort()  # the connection dies with the step in the server's hands

    async def main():
        await asyncio.gather(*(leave(i) for i in range(16)))

    asyncio.run(main())
    _wait_for(lambda: _get(server + "/se_gym/sessions")["open"] == 0, "the left sessions to close")
    with _client(server).sync() as env:
        env.reset(index=4)
        assert env.step({"answer": _ok(TASKS[4])}).reward == 1.0
    log = server_log.read_text()
    assert log.count("Traceback") == 0, log[-3000:]  # (was: four chained tracebacks per client)


def test_a_step_whose_client_left_is_not_judged(server):
    """Steps queued behind a running batch whose clients then leave are dropped, not judged."""
    t = TASKS[6]
    # the oracle that loops before its work: past the gates, it runs to the 3 s wall limit
    spin = _ok(t).replace(t.function_name, t.function_name + "\n    while True:\n        pass", 1)

    async def main():
        busy = _client(server)
        leavers = [_client(server) for _ in range(8)]
        await asyncio.gather(busy.connect(), *(e.connect() for e in leavers))
        await asyncio.gather(busy.reset(task_id=t.id), *(e.reset(index=i) for i, e in enumerate(leavers)))
        before = _get(server + "/se_gym/sessions")["judged"]
        await busy._send({"type": "step", "data": {"answer": spin}})  # a batch that runs to the 3 s limit
        await asyncio.sleep(0.5)
        for i, e in enumerate(leavers):  # queued behind it, then the connections die
            await e._send({"type": "step", "data": {"answer": _ok(TASKS[i])}})
            e._ws.transport.abort()
        r = await busy._receive()
        assert r["data"]["observation"]["status"] == "timeout", r
        await busy.close()
        return before

    before = asyncio.run(main())
    _wait_for(lambda: _get(server + "/se_gym/sessions")["open"] == 0, "the sessions to close")
    assert _get(server + "/se_gym/sessions")["judged"] - before == 1  # the spinning answer alone


def test_the_server_states_its_library_and_a_client_checks_it(server):
    """The handshake of the http backend, for OpenEnv (issue 31): the server states its library and
    profile, and a client that expects another gets one line naming both."""
    from se_gym.integrations.openenv import LibraryMismatch, check_server_library

    got = check_server_library(server, "seed:0", "strict")
    assert got["profile"] == "strict" and got["id"] == _get(server + "/se_gym/library")["library"]["id"]
    for library, profile in (("seed:0", "sebench"), ("seed:1", "strict")):
        with pytest.raises(LibraryMismatch, match=r"serves library .*profile strict.*; this client expects library"):
            check_server_library(server.replace("http://", "ws://"), library, profile)
    with pytest.raises(LibraryMismatch, match="states no library"):
        check_server_library(f"http://127.0.0.1:{_free_port()}", "seed:0", timeout_s=5)  # nobody listens there


def test_the_task_api_lists_splits_and_tasks_and_reset_picks_one(server):
    """OpenEnv's Task API (list_splits, num_tasks, list_tasks, get_task, get_task_range) on `se-gym serve
    openenv`, through the client's methods (plain HTTP beside the session), with OpenEnv's error codes;
    reset(split=..., index=...) plays the task a range named."""
    from se_gym.integrations.openenv import SEBenchAction, SEBenchRequestError

    assert _get(server + "/list_environments") == ["se_gym"]
    assert _get(server + "/se_gym/splits") == [{"name": "single_test", "type": "test"}]
    with _client(server).sync() as env:
        assert env.list_splits() == ["single_test"]
        assert env.num_tasks("single_test") == len(TASKS)
        listed = env.list_tasks("single_test")
        assert [t["id"] for t in listed] == [t.id for t in TASKS] and [t["index"] for t in listed[:3]] == [0, 1, 2]
        assert not [t for t in listed if set(t) != {"id", "index", "split", "function_name"}]  # no test case leaks
        rng = env.get_task_range("single_test", 2, 5)
        assert [t["id"] for t in rng] == [t.id for t in TASKS[2:5]] and env.get_task("single_test", 4) == rng[-1]
        assert [t["index"] for t in env.get_task_range("single_test", len(TASKS) - 2)] == [len(TASKS) - 2, len(TASKS) - 1]
        with pytest.raises(SEBenchRequestError, match="HTTP 400.*out of range"):
            env.get_task("single_test", len(TASKS))
        with pytest.raises(SEBenchRequestError, match="unknown split 'train'"):
            env.num_tasks("train")
        r = env.reset(split="single_test", index=rng[1]["index"])  # the task the range named
        assert r.observation.task_id == TASKS[3].id
        r = env.step(SEBenchAction(answer=_ok(TASKS[3])))
        assert r.reward == 1.0 and r.observation.status == "passed"
        # discovery changes no session: the episode is over, as it was before the calls
        env.list_tasks("single_test")
        assert env.state().done is True and env.state().task_id == TASKS[3].id


def test_a_named_but_unused_answer_gets_nothing(server_log, tmp_path):
    """Issue 42: the server judges each step with its task's reference (strict's library dependence
    check): the reference gets 1.0, an answer that names the library (on a constant) and computes in
    Python 0 (judged without the reference it would get 1.0).  Two train tasks with Python oracles."""
    need_module("openenv.core", "the 'openenv' extra (openenv-core) is the package under test")
    from _dependence_corpus import adapter_answers
    from se_gym.integrations.openenv import SEBenchAction
    from se_gym.library import mint

    tasks = builtin_tasks("train", seed=0)[:2]
    got = []
    with openenv_server(tmp_path / "server.log", "--split", "train") as (_, url), _client(url).sync() as env:
        for t, kind in ((tasks[0], "reference"), (tasks[1], "unused"), (tasks[1], "reference"), (tasks[0], "unused")):
            env.reset(task_id=t.id)
            r = env.step(SEBenchAction(answer=adapter_answers(t, mint(0))[kind]))
            got.append((r.reward, r.observation.status))
    assert got == [(1.0, "passed"), (0.0, "library_unused")] * 2
