"""The http backend against a real server on 127.0.0.1 (ephemeral port), both protocols."""
from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys

import pytest

from conftest import legit_skip
from se_gym.sandbox import ExecStatus, Limits, make_sandbox
from se_gym.sandbox.http import HttpSandbox, status_from_official
from se_gym.sandbox.server import SandboxServer

PROGRAMS = [
    "print('hello')",
    "import os; os.write(3, b'chan'); print(2 + 2)",
    "raise KeyError('k')",
    "while True: pass",
    "x = bytearray(10**11)",
]


@pytest.fixture(scope="module")
def server():
    with make_sandbox("local", workers=2) as box:
        srv = SandboxServer(box, "127.0.0.1", 0, Limits(wall_s=1.0, cpu_s=1.0)).start()
        yield srv
        srv.stop()


def _post(url: str, path: str, body: bytes) -> tuple[int, dict]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, json.loads(resp.read())


def test_official_protocol_raw(server):
    code, data = _post(server.url, "/run", json.dumps({"code": "print(6 * 7)"}).encode())
    assert code == 200 and data == {"stdout": "42\n", "stderr": ""}
    code, data = _post(server.url, "/run", json.dumps({"code": "import time; time.sleep(5)"}).encode())
    assert code == 200 and data == {"stdout": "", "stderr": "TLE"}
    code, data = _post(server.url, "/run", b"not json")
    assert code == 400 and "error" in data
    code, data = _post(server.url, "/run_batch", json.dumps({"programs": ["print(1)"], "limits": {"bogus": 1}}).encode())
    assert code == 400 and "unknown limit" in data["error"]


def test_official_client_mode(server):
    with HttpSandbox(server.url, workers=3, batch=False) as box:
        res = box.run(PROGRAMS, Limits(wall_s=1.0))
        assert [r.status for r in res] == [ExecStatus.OK, ExecStatus.OK, ExecStatus.ERROR, ExecStatus.TIMEOUT, ExecStatus.MEMORY]
        assert res[0].stdout == "hello\n" and res[1].stdout == "4\n"
        assert all(r.channel is None and r.exit_code is None and r.backend == "http" for r in res)
        assert box.isolation()["protocol"] == "official /run"


def test_batch_mode_has_the_channel(server):
    with HttpSandbox(server.url, batch_size=2) as box:
        assert box.batch and box.isolation()["channel"] is True
        res = box.run(PROGRAMS, Limits(wall_s=1.0, cpu_s=1.0))
        assert [r.status for r in res] == [ExecStatus.OK, ExecStatus.OK, ExecStatus.ERROR, ExecStatus.TIMEOUT, ExecStatus.MEMORY]
        assert res[1].channel == b"chan" and res[1].stdout == "4\n" and res[2].exit_code == 1
        assert res[0].backend == "http" and res[0].worker


def test_unreachable_server_is_sandbox_error():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with HttpSandbox(f"http://127.0.0.1:{port}", retries=1, batch=False) as box:
        res = box.run(["print(1)", "print(2)"])
        assert [r.status for r in res] == [ExecStatus.SANDBOX_ERROR] * 2 and "Connection" in res[0].detail
    with pytest.raises(ValueError, match="not an http"):
        HttpSandbox("ftp://x")


def test_status_reading():
    assert status_from_official("", "TLE") is ExecStatus.TIMEOUT
    assert status_from_official("1\n", "") is ExecStatus.OK
    assert status_from_official("", "Traceback (most recent call last):\n  ...\nValueError: x\n") is ExecStatus.ERROR
    assert status_from_official("", "Traceback (most recent call last):\n  ...\nMemoryError\n") is ExecStatus.MEMORY


def test_cli_serve_and_bad_port():
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "se_gym.cli", "sandbox", "serve", "--port", "99999", "--workers", "1"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2 and "error:" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


# ------------------------------------------------ the judge against the real `se-gym sandbox serve`
@pytest.fixture(scope="module")
def served_library():
    """`se-gym sandbox serve --library 3` in its own process (as a user runs it), on a free port."""
    from _procs import sandbox_server

    with sandbox_server("--library", "3", workers=2) as url:
        yield url


@pytest.mark.parametrize("protocol", ["batch", "official"])
def test_judge_against_the_real_server_in_both_protocols(served_library, protocol):
    """issue 20 item 1: an answer the local backend passes must pass over http, whichever protocol
    the client speaks; the judge picks its harness from what the backend can do (the channel)."""
    from se_gym.judge import Judge
    from se_gym.library import from_spec

    lib = from_spec(3)
    pkg, absf, sumf = lib.package, lib.qualified("abs"), lib.qualified("sum")
    right = f"```python\nimport {pkg}\ndef solve(x):\n    return {absf}(x)\n```"
    wrong = f"```python\nimport {pkg}\ndef solve(x):\n    return {sumf}(x)\n```"
    cases = [{"input": "x=[-1, 2]", "output": "[1, 2]"}, {"input": "x=np.array([-3])", "output": "[3]"}]
    items = [(right, cases), (wrong, cases)]
    with Judge(lib, profile="sebench", workers=1) as local:
        want = [v.status.value for v in local.judge_many(items)]
    assert want == ["passed", "wrong_answer"]
    box = HttpSandbox(served_library, workers=2, batch=protocol == "batch")
    assert box.has_channel is (protocol == "batch")
    with box, Judge(lib, profile="sebench", sandbox=box) as j:
        got = j.judge_many(items)
    assert [v.status.value for v in got] == want, [v.detail for v in got]
    # and the judge that makes its own http sandbox picks the batch protocol (the server says it is se-gym's)
    with Judge(lib, profile="sebench", sandbox="http", http_url=served_library + "/run") as j:
        assert j.sandbox.has_channel and [v.status.value for v in j.judge_many(items)] == want


# ------------------------------------------------ the handshake: the server states its library (issue 31)
_CUMSUM_CASES = [{"input": "x=[-1, 2]", "output": "[1, 3]"}]


def _cheat_and_right(lib):
    """For the cumulative sum of |x|: an answer that reaches NumPy through the sebench library's
    ``.T`` (a NumPy array there, so ``.cumsum().tolist()`` work; the strict library refuses), which
    a strict judge over a sebench server passed before the handshake, and an honest one."""
    pkg, absf, cumsum = lib.package, lib.qualified("abs"), lib.qualified("cumsum")
    cheat = f"```python\nimport {pkg}\ndef solve(x):\n    return {absf}(x).T.cumsum().tolist()\n```"
    right = f"```python\nimport {pkg}\ndef solve(x):\n    return {cumsum}({absf}(x))\n```"
    return cheat, right


def test_health_states_the_served_library(served_library):
    from se_gym import __version__
    from se_gym.library import from_spec
    from se_gym.library.writer import served_identity

    conn = http.client.HTTPConnection(*served_library.removeprefix("http://").split(":"), timeout=30)
    conn.request("GET", "/health")
    health = json.loads(conn.getresponse().read())
    assert health["version"] == __version__
    assert health["library"] == served_identity(from_spec(3), "sebench")
    assert health["library"]["profile"] == "sebench" and len(health["library"]["content"]) == 16


def test_a_strict_judge_refuses_a_server_of_another_profile_or_library(served_library):
    """`se-gym sandbox serve --library 3` serves the sebench copy: a strict judge over it would let
    NumPy through the library's own objects; it refuses the server in one line naming both sides.
    Another library, or a server that states none, is refused likewise."""
    from se_gym.judge import Judge, JudgeError
    from se_gym.library import from_spec

    lib = from_spec(3)
    cheat, _ = _cheat_and_right(lib)
    cases = _CUMSUM_CASES
    with Judge(lib, profile="strict", sandbox="http", http_url=served_library + "/run") as j:
        with pytest.raises(JudgeError) as err:
            j.judge(cheat, cases)
    msg = str(err.value)
    assert "\n" not in msg and "profile sebench" in msg and "profile strict" in msg and served_library in msg, msg
    with pytest.raises(JudgeError, match="profile strict"):  # a borrowed http sandbox: checked at once
        Judge(lib, profile="strict", sandbox=HttpSandbox(served_library, workers=1))
    other = from_spec(4)
    with Judge(other, profile="sebench", sandbox="http", http_url=served_library + "/run") as j:
        with pytest.raises(JudgeError) as err:
            j.judge(_cheat_and_right(other)[1], cases)
    assert f"library {lib.id}" in str(err.value) and f"library {other.id}" in str(err.value)


def test_a_server_that_states_no_library_serves_sebench_only_and_a_matching_one_serves_strict(server):
    """A server that states no library (as the official one) may serve the sebench profile, whose
    library the official server holds, not the strict one; a strict server of this library does."""
    from se_gym.judge import Judge, JudgeError
    from se_gym.judge.core import sandbox_preload
    from se_gym.library import from_spec
    from se_gym.library.writer import served_identity

    lib = from_spec(3)
    with pytest.raises(JudgeError, match="states none"):
        Judge(lib, profile="strict", sandbox=HttpSandbox(server.url, workers=1))
    Judge(lib, profile="sebench", sandbox=HttpSandbox(server.url, workers=1)).close()
    path = [str(lib.materialize("strict", docs=False))]
    with make_sandbox("local", workers=1, pythonpath=path, preload=sandbox_preload(lib)) as box:
        srv = SandboxServer(box, "127.0.0.1", 0, library=served_identity(lib, "strict")).start()
        try:
            cheat, right = _cheat_and_right(lib)
            with Judge(lib, profile="strict", sandbox="http", http_url=srv.url + "/run") as j:
                got = j.judge_many([(right, _CUMSUM_CASES), (cheat, _CUMSUM_CASES)])
            assert got[0].passed and got[1].status.value == "runtime_error", [v.detail for v in got]
        finally:
            srv.stop()


def test_a_strict_judge_sends_nothing_to_a_server_it_has_not_heard_state_its_library():
    """A server that does not answer yet gets no program from a strict judge (sandbox errors,
    infrastructure); once it answers, its library is checked before anything runs."""
    import socket

    from se_gym.judge import Judge, JudgeError
    from se_gym.library import from_spec
    from se_gym.library.writer import served_identity

    lib = from_spec(3)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    cheat, _ = _cheat_and_right(lib)
    with Judge(lib, profile="strict", sandbox="http", http_url=f"http://127.0.0.1:{port}/run") as j:
        v = j.judge(cheat, _CUMSUM_CASES)
        assert v.status.value == "sandbox_error" and v.infrastructure and "did not answer GET /health" in v.detail, v.detail
        with make_sandbox("local", workers=1) as box:
            srv = SandboxServer(box, "127.0.0.1", port, library=served_identity(lib, "sebench")).start()
            try:
                with pytest.raises(JudgeError, match="profile sebench"):
                    j.judge(cheat, _CUMSUM_CASES)
                assert j.sandbox.has_channel  # (batches: it is se-gym's server after all)
            finally:
                srv.stop()


def test_the_library_dependence_check_runs_over_http():
    """Strict's library dependence check (issue 42) against a se-gym server: each program's library
    mode travels in /run_batch to the server's workers, and their servers' word comes back."""
    from _dependence_corpus import backend_items, check_backend_verdicts
    from se_gym.judge import Judge
    from se_gym.judge.core import sandbox_preload
    from se_gym.library.writer import served_identity, uses_server
    from se_gym.tasks.spec import load_task_spec

    if not uses_server("strict"):
        legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")
    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    path = [str(lib.materialize("strict", docs=False))]
    with make_sandbox("local", workers=1, pythonpath=path, preload=sandbox_preload(lib)) as box:
        srv = SandboxServer(box, "127.0.0.1", 0, library=served_identity(lib, "strict")).start()
        try:
            with Judge(lib, profile="strict", sandbox="http", http_url=srv.url + "/run") as j:
                assert j.sandbox.library_modes
                check_backend_verdicts(j.judge_many(backend_items(tasks[0], lib)))
        finally:
            srv.stop()
