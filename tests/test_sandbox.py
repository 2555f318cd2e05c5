"""The sandbox contract and the local backend, against real processes (and real bubblewrap when it
works here; the rlimits-only fallback is exercised too)."""
from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from conftest import descendants, legit_skip, need
from se_gym.sandbox import ExecResult, ExecStatus, Limits, make_sandbox
from se_gym.sandbox.base import worker_fast_paths
from se_gym.sandbox.local import LocalSandbox, bwrap_status

SECRET = "se-gym-test-secret-4f1d"
os.environ["SE_GYM_SANDBOX_TEST_SECRET"] = SECRET  # must never reach a program
FAST = Limits(wall_s=2.0, cpu_s=2.0)


def _wait_until(condition, timeout: float) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` seconds pass; True if it held."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return bool(condition())


def _sandbox_procs(box) -> set[int]:
    """Host processes running as one of this sandbox's private program uids (other sandboxes may
    run on the machine at the same time)."""
    out = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid in box.program_uids:
                    out.add(int(name))
            except OSError:
                pass
    return out


def _our_tmp() -> set[str]:
    return {n for d in ("/tmp", "/dev/shm") if os.path.isdir(d) for n in os.listdir(d) if n.startswith("se-gym-sandbox-")}


@pytest.fixture(scope="module")
def box():
    with make_sandbox("local", workers=2) as sb:
        yield sb


@pytest.fixture(scope="module")
def weak_box():
    with LocalSandbox(workers=1, isolation="rlimits") as sb:
        yield sb


def test_contract_order_and_fields(box):
    progs = [f"import time; time.sleep({0.05 * (5 - i)}); print({i})" for i in range(6)]
    res = box.run(progs, FAST)
    assert [r.stdout for r in res] == [f"{i}\n" for i in range(6)]
    r = res[0]
    assert isinstance(r, ExecResult) and r.status is ExecStatus.OK and r.exit_code == 0 and r.signal is None
    assert r.backend == "local" and r.worker and r.channel == b"" and r.cpu_s is not None and not r.truncated
    assert box.run([], FAST) == []
    with pytest.raises(TypeError):
        box.run("print(1)")


def test_limits_validation():
    with pytest.raises(ValueError, match="wall_s"):
        Limits(wall_s=0)
    with pytest.raises(ValueError, match="unknown limit"):
        Limits.from_json({"wall": 1})
    assert Limits.from_json({"wall_s": 1}).wall_s == 1
    r = ExecResult(ExecStatus.OK, 0, None, "a", "", b"\x00\xff", 0.1, 0.0, False, "local", "w")
    assert ExecResult.from_json(r.to_json()) == r
    with pytest.raises(ValueError, match="sandbox must be one of local, docker, http, ray"):
        make_sandbox("nope")


def test_program_runs_as_main_with_channel(box):
    code = (
        "import os, sys\n"
        "os.write(3, b'RESULT')\n"
        "print(__name__, sys.argv, os.path.basename(__file__), sys.stdin.read() == '')\n"
        "print(sys.path[0] == os.getcwd() == os.path.dirname(__file__), sys.stdout is sys.__stdout__, sys.stdout.fileno())\n"
        "print('err', file=sys.stderr)\n"
    )
    r = box.run([code], FAST)[0]
    assert r.status is ExecStatus.OK, r.stderr
    # as in `python main.py`: the script's folder leads sys.path and is the current folder
    assert r.stdout == "__main__ ['main.py'] main.py True\nTrue True 1\n"
    assert r.stderr == "err\n" and r.channel == b"RESULT"


def test_errors_and_exit_codes(box):
    res = box.run(["raise ValueError('boom')", "import sys; sys.exit(3)", "import sys; sys.exit('bye')", "import os; os.abort()"], FAST)
    assert [r.status for r in res] == [ExecStatus.ERROR] * 4
    assert res[0].exit_code == 1 and res[0].stderr.startswith("Traceback") and "ValueError: boom" in res[0].stderr
    assert 'File "main.py", line 1' in res[0].stderr and "worker.py" not in res[0].stderr
    assert res[1].exit_code == 3 and res[2].exit_code == 1 and "bye" in res[2].stderr
    assert res[3].signal == 6 and res[3].exit_code is None


def test_uncaught_exceptions_and_warnings_print_as_python_main_py_prints_them(box, tmp_path):
    programs = [
        "def f(x):\n    return x.tolist()\nprint(f(3))",
        "try:\n    1/0\nexcept ZeroDivisionError as e:\n    raise ValueError('wrapped') from e",
        "e = RuntimeError('with note')\ne.add_note('a note')\nraise e",
        "raise ExceptionGroup('grp', [ValueError('a'), TypeError('b')])",
        "x = (1,\n  2 +\n  None)",
        "import sys\nsys.excepthook = lambda *a: print('own hook', a[0].__name__, file=sys.stderr)\nraise KeyError(1)",
        "x = 1\nprint(x is 1)",  # a compile-time SyntaxWarning: the worker leaves it to the child
    ]
    for code, got in zip(programs, box.run(programs, FAST)):
        (tmp_path / "main.py").write_text(code)
        want = subprocess.run([sys.executable, "-s", "main.py"], cwd=tmp_path, capture_output=True, text=True)
        # the one difference on purpose: our programs are compiled as "main.py", not a full path
        assert (got.stdout, got.stderr, got.exit_code) == (want.stdout, want.stderr.replace(f"{tmp_path}/", ""), want.returncode), code


def test_worker_never_imports_a_module_a_program_left_in_its_folder():
    """The programs' folder leads sys.path in the worker too (set there once, for every fork); the
    worker must import nothing from it (as root, that would run the program's code): what it needs
    later (termios, once a program outlives a tick; issue 42: imported then, it showed every later
    program that an earlier one ran longer than a tick) it imports before the first program, and
    nothing a program plants (termios, shutil, for a folder rmdir cannot remove) ever runs."""
    planted = (
        "import os, time\n"
        "for name in ('termios', 'shutil'):\n"
        "    with open(name + '.py', 'w') as f:\n"
        "        f.write('raise SystemExit(\"the planted module ran\")')\n"
        "os.makedirs('keep/inner')\n"
        "time.sleep(0.1)\n"
        "print('done')\n"
    )
    probe = "import sys; print('termios' in sys.modules, 'shutil' in sys.modules)"
    with make_sandbox("local", workers=1) as sb:  # a fresh worker: termios already, shutil not yet
        assert sb.run([probe], FAST)[0].stdout == "True False\n"
        r = sb.run([planted], FAST)[0]
        assert r.status is ExecStatus.OK and r.stdout == "done\n", r
        # the worker carried on, with what it took up from the standard library only
        assert sb.run([probe], FAST)[0].stdout == "True False\n" and sb.restarts == 0 and sb.retired == 0


def test_a_fresh_pool_keeps_its_first_workers():
    """bwrap --die-with-parent kills a worker when the *thread* that started it ends, so workers
    must be started by threads that live as long as the pool (here they once died at once and
    were replaced on first use)."""
    with make_sandbox("local", workers=2) as sb:
        time.sleep(0.3)  # not a wait for an event: time for a wrongly tied worker to die (it did within ms)
        res = sb.run(["print(1)"] * 4, FAST)
        assert sb.restarts == 0 and {r.worker for r in res} <= {"local-0.0", "local-1.0"}, [r.worker for r in res]


def test_every_program_gets_fresh_randomness(box):
    code = "import random; print(random.random(), random.getrandbits(64))"
    outs = [r.stdout for r in box.run([code] * 6, FAST)]
    assert all(outs) and len(set(outs)) == 6, outs


def test_wall_timeout_kills_group_and_grandchildren(box):
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"  # escapes the process group: the uid sweep must still get it
        "    time.sleep(60)\n"
        "time.sleep(60)\n"
    )
    before = _sandbox_procs(box)
    t = time.monotonic()
    r = box.run([code], Limits(wall_s=1.0, cpu_s=5))[0]
    assert r.status is ExecStatus.TIMEOUT and "wall" in r.detail
    assert time.monotonic() - t < 8
    # the sweep is asynchronous: wait for the condition itself (bounded), not a fixed time
    assert _wait_until(lambda: not (_sandbox_procs(box) - before), 10), _sandbox_procs(box) - before


def test_cpu_limit(box):
    r = box.run(["while True: pass"], Limits(wall_s=20, cpu_s=1))[0]
    assert r.status is ExecStatus.TIMEOUT and "cpu" in r.detail, (r.detail, r.signal)
    assert r.wall_s < 10


def test_memory_bombs(box):
    res = box.run(["x = bytearray(10**11)", "import numpy as np; a = np.ones(10**11)", "x = [0] * 10**10"], Limits(memory_mb=256))
    assert [r.status for r in res] == [ExecStatus.MEMORY] * 3, [(r.status, r.stderr[-200:]) for r in res]
    ok = box.run(["import numpy as np; a = np.ones(10**7); print(a.sum())"], Limits(memory_mb=256))[0]
    assert ok.status is ExecStatus.OK and ok.stdout == "10000000.0\n"


def test_output_flood(box):
    res = box.run(["while True: print('x' * 1000)", "import os\nwhile True: os.write(3, b'y' * 4096)"], Limits(output_bytes=50_000))
    for r in res:
        assert r.status is ExecStatus.OUTPUT_LIMIT and r.truncated
        assert len(r.stdout.encode()) + len(r.channel or b"") <= 50_000
    assert len(res[0].stdout) > 10_000


def test_fork_bomb_contained(box):
    before = _sandbox_procs(box)
    res = box.run(["import os\nwhile True:\n    os.fork()"] * 2, FAST)
    assert all(r.status is not ExecStatus.OK and r.status is not ExecStatus.SANDBOX_ERROR for r in res)
    assert box.run(["print('alive')"], FAST)[0].stdout == "alive\n"
    assert _sandbox_procs(box) - before == set()
    # the allowed extra process works
    r = box.run(["import os\npid = os.fork()\nif pid == 0: os._exit(7)\nprint(os.waitpid(pid, 0)[1] >> 8)"], FAST)[0]
    assert r.stdout == "7\n"


def test_filesystem_is_protected(box, tmp_path):
    target = tmp_path / "outside.txt"
    os.chmod(tmp_path, 0o777)  # even a world-writable host folder
    res = box.run([
        f"open({str(target)!r}, 'w').write('x')",
        "open('/etc/se_gym_probe', 'w').write('x')",
        "open('here.txt', 'w').write('x'); import os; print(os.listdir('.'))",
        "import tempfile; f = tempfile.NamedTemporaryFile(); print('tmp ok')",
        "print(open('/root/.bash_history').read())" if os.path.exists("/root/.bash_history") else "open('/root/x','w')",
    ], FAST)
    assert res[0].status is ExecStatus.ERROR and not target.exists()
    assert res[1].status is ExecStatus.ERROR and not os.path.exists("/etc/se_gym_probe")
    assert res[2].status is ExecStatus.OK and "here.txt" in res[2].stdout
    assert res[3].status is ExecStatus.OK
    assert res[4].status is ExecStatus.ERROR
    big = box.run(["open('big', 'wb').write(b'0' * (3 << 20))"], Limits(file_size_mb=1))[0]
    assert big.status is ExecStatus.ERROR and "File too large" in big.stderr


def test_environment_has_no_parent_secrets(box):
    code = (
        "import os\n"
        "print(dict(os.environ))\n"
        "print(open('/proc/self/environ', 'rb').read())\n"
        "try:\n"
        "    print(open(f'/proc/{os.getppid()}/environ', 'rb').read())\n"
        "except OSError as e:\n"
        "    print('denied', e.errno)\n"
    )
    r = box.run([code], FAST)[0]
    assert r.status is ExecStatus.OK
    assert SECRET not in r.stdout and "SE_GYM_SANDBOX_TEST_SECRET" not in r.stdout
    assert "denied" in r.stdout


def test_parent_cannot_be_killed(box):
    res = box.run([
        "import os, signal; os.kill(os.getppid(), signal.SIGKILL)",
        "import os, signal; os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)",
        "import os, signal; os.kill(-1, signal.SIGKILL); print('after')",
    ], FAST)
    assert res[0].status is ExecStatus.ERROR and "PermissionError" in res[0].stderr
    assert all(r.status is not ExecStatus.SANDBOX_ERROR for r in res)
    before = box.restarts
    assert [r.stdout for r in box.run(["print(1)"] * 4, FAST)] == ["1\n"] * 4
    assert box.restarts == before


def test_network_blocked_under_bwrap(box):
    need(bwrap_status()[0], f"bubblewrap does not work here: {bwrap_status()[1]} (scripts/setup/sandbox.sh installs it)")
    assert box.isolation()["level"] == "bwrap" and box.isolation()["network"] is False
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    try:
        r = box.run([f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=1); print('connected')"], FAST)[0]
    finally:
        srv.close()
    assert r.status is ExecStatus.ERROR and "connected" not in r.stdout


def test_dead_worker_is_replaced_and_program_retried():
    with LocalSandbox(workers=1) as sb:
        killed = []

        def killer(times: int) -> None:
            seen = None
            deadline = time.monotonic() + 20
            while len(killed) < times and time.monotonic() < deadline:
                t = sb._workers[0]
                if t is not None and t is not seen:
                    # kill it once the program runs (a process of the sandbox's program uids exists)
                    if sb.program_uids:
                        _wait_until(lambda: bool(_sandbox_procs(sb)), 10)
                    else:  # no private uid to watch (rlimits as non-root): give it time to start
                        time.sleep(0.3)
                    seen = t
                    t.kill()
                    killed.append(t.name)
                time.sleep(0.02)

        # killed once: the retry on a fresh worker answers
        th = threading.Thread(target=killer, args=(1,))
        th.start()
        r = sb.run(["import time; time.sleep(1.0); print('done')"], Limits(wall_s=5))[0]
        th.join()
        assert r.status is ExecStatus.OK and r.stdout == "done\n" and sb.restarts == 1
        # killed on every attempt: SANDBOX_ERROR after the one retry, and the pool still serves
        killed.clear()
        th = threading.Thread(target=killer, args=(2,))
        th.start()
        r = sb.run(["import time; time.sleep(3.0)"], Limits(wall_s=5))[0]
        th.join()
        assert r.status is ExecStatus.SANDBOX_ERROR and "attempt 2" in r.detail and sb.restarts == 3
        assert sb.run(["print('still here')"])[0].stdout == "still here\n"


def test_concurrent_batches_and_async(box):
    results: list[list[ExecResult]] = []
    threads = [threading.Thread(target=lambda k=k: results.append(box.run([f"print({k}*{i})" for i in range(5)], FAST))) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(tuple(r.stdout for r in rs) for rs in results) == sorted(tuple(f"{k * i}\n" for i in range(5)) for k in range(3))
    out = asyncio.run(box.run_async(["print('a')", "print('b')"], FAST))
    assert [r.stdout for r in out] == ["a\n", "b\n"]


def test_pythonpath_and_preload_of_a_minted_library():
    from se_gym.library import mint

    lib = mint(0)
    path = lib.materialize("sebench")
    abs_name = lib.qualified("abs")
    code = f"import {lib.package}\nprint({abs_name}({lib.package}.{lib.names['array']}([-1, 2])) if False else {abs_name}(-3))"
    with make_sandbox(pythonpath=[str(path)], preload=["numpy", lib.package], workers=1) as sb:
        r = sb.run([code], FAST)[0]
        assert r.status is ExecStatus.OK, r.stderr
        assert r.stdout.strip() == "3"
    with pytest.raises(RuntimeError, match="preload failed"):
        make_sandbox(preload=["no_such_module_xyz"], workers=1)
    with pytest.raises(ValueError, match="not a folder"):
        make_sandbox(pythonpath=["/no/such/dir"], workers=1)


def test_rlimits_fallback(weak_box):
    assert weak_box.isolation()["level"] == "rlimits"
    res = weak_box.run([
        "print(1)",
        "while True: pass",
        "import os\nwhile True:\n    os.fork()",
        "import os; print(dict(os.environ))",
        "import os, signal; os.kill(os.getppid(), signal.SIGKILL)",
        # median imports numpy.ma on first use, which the program uid may not be able to read
        "import numpy as np; print(np.median(np.arange(5.0)))",
        "import statistics, dataclasses, fractions, decimal; print(statistics.mean([1, 2]))",
    ], Limits(wall_s=1.5, cpu_s=1))
    assert res[0].stdout == "1\n"
    assert res[5].status is ExecStatus.OK and res[5].stdout == "2.0\n", res[5].stderr
    assert res[6].status is ExecStatus.OK and res[6].stdout == "1.5\n", res[6].stderr
    assert res[1].status is ExecStatus.TIMEOUT
    assert res[2].status not in (ExecStatus.OK, ExecStatus.SANDBOX_ERROR)
    assert res[3].status is ExecStatus.OK and SECRET not in res[3].stdout
    assert res[4].status is ExecStatus.ERROR and weak_box.restarts == 0


def test_rlimits_work_dirs_live_in_memory_where_they_can(weak_box):
    # made and removed for every program: /dev/shm (tmpfs) when there is one, not a disk's /tmp
    cwd = weak_box.run(["import os; print(os.getcwd())"])[0].stdout.strip()
    with open("/proc/mounts") as f:
        shm = any(line.split()[1:3] == ["/dev/shm", "tmpfs"] for line in f)
    st = os.statvfs("/dev/shm") if shm else None
    shm = shm and st.f_bavail * st.f_frsize >= 1 << 30  # not a container's small one
    assert cwd.startswith("/dev/shm/se-gym-sandbox-" if shm else tempfile.gettempdir()), cwd
    assert cwd.startswith(str(weak_box._tmp))


def test_close_is_idempotent_and_cleans_up():
    sb = make_sandbox(workers=2)
    own_tmp = sb._tmp
    assert own_tmp.name in _our_tmp()
    pids = [t.proc.pid for t in sb._workers]
    sb.run(["import time; time.sleep(0.1)"] * 3, FAST)
    sb.close()
    sb.close()
    assert sb.closed and not own_tmp.exists() and sb.program_uids and _sandbox_procs(sb) == set()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with pytest.raises(RuntimeError, match="closed"):
        sb.run(["print(1)"])


def test_outputs_past_one_read_come_back_whole(box):
    # the worker reads a finished program's pipes 64 KB at a time: several reads per stream, in order
    prog = ("import os, sys\nsys.stdout.write(''.join('%06d' % i for i in range(50_000)))\nsys.stdout.flush()\n"
            "sys.stderr.write('e' * 150_000)\nos.write(3, b'c' * 100_000)\n")
    r = box.run([prog], FAST)[0]
    assert r.status is ExecStatus.OK, r
    assert r.stdout == "".join("%06d" % i for i in range(50_000)) and r.stderr == "e" * 150_000
    assert r.channel == b"c" * 100_000 and not r.truncated


@pytest.mark.timeout(120)
def test_big_program_after_big_reply_does_not_deadlock():
    # one worker: while it writes a ~1 MB reply (output at the cap) it must not be sent a program
    # too big for its input pipe, or both sides wait on a full pipe for ever
    sb = make_sandbox(workers=1)
    try:
        big = "x = 1\n" + "# padding\n" * 20_000 + "print(x)\n"
        res = sb.run(['print("x" * 10 ** 6)', big, "print(2)"], FAST)
        assert [r.status for r in res] == [ExecStatus.OUTPUT_LIMIT, ExecStatus.OK, ExecStatus.OK]
        assert res[1].stdout == "1\n" and res[2].stdout == "2\n"
    finally:
        sb.close()


@pytest.mark.timeout(120)
def test_programs_sent_ahead_fit_in_the_worker_input_together():
    # several programs, each small enough to be sent ahead, but together more than the worker's
    # input pipe holds (4 bytes per character on the wire): sent all at once while the worker writes
    # a ~1 MB reply, both sides would wait on a full pipe for ever
    sb = make_sandbox(workers=1)
    try:
        limit = sb._workers[0].ahead_max
        wide = "# " + "\U0001F600" * (limit - 100) + "\nprint(1)\n"  # just under the limit alone
        res = sb.run(['print("x" * 10 ** 6)', wide, wide, wide, "print(2)"], FAST)
        assert [r.status for r in res] == [ExecStatus.OUTPUT_LIMIT] + [ExecStatus.OK] * 4, res
        assert [r.stdout for r in res[1:]] == ["1\n"] * 3 + ["2\n"]
    finally:
        sb.close()


def test_jobs_sent_ahead_depend_on_how_long_programs_run():
    """Short programs: up to 4 jobs are in a worker's hands (the next ones ready while the feeding
    thread waits for the GIL); slow ones: 2, so that fewer wait behind one while others idle."""
    def most_in_hand(programs):
        sb = make_sandbox(workers=1)
        in_hand, most = [0], [0]
        send, result = sb._send, sb._result

        def counting_send(slot, job):
            in_hand[0] += 1
            most[0] = max(most[0], in_hand[0])
            return send(slot, job)

        def counting_result(reply, worker):
            in_hand[0] -= 1
            return result(reply, worker)

        sb._send, sb._result = counting_send, counting_result
        try:
            res = sb.run(programs, FAST)
            assert all(r.status is ExecStatus.OK for r in res), res
        finally:
            sb.close()
        return most[0]

    assert most_in_hand(["print(1)"] * 40) == 4
    assert most_in_hand(["import time; time.sleep(0.08)"] * 8) == 2


def test_workers_are_pinned_to_one_cpu_each_unless_asked_not_to():
    cpus = sorted(os.sched_getaffinity(0))
    code = "import os; print(sorted(os.sched_getaffinity(0)))"
    with make_sandbox(workers=len(cpus)) as sb:
        seen = {r.stdout for r in sb.run([code] * 8, FAST)}
        assert sb.isolation()["pinned_cpus"] == cpus
        assert seen <= {f"[{c}]\n" for c in cpus}
    with make_sandbox(workers=len(cpus) + 1) as sb:  # more workers than CPUs: the scheduler places them
        assert sb.isolation()["pinned_cpus"] is None
        assert sb.run([code], FAST)[0].stdout == f"{cpus}\n"
    with make_sandbox(workers=1, pin_cpus=False) as sb:
        assert sb.run([code], FAST)[0].stdout == f"{cpus}\n"


# ---------------------------------------------------------------- the narrow view (issue 21), both namespace levels
def _levels():
    from se_gym.sandbox.local import unshare_status

    out = []
    if bwrap_status()[0]:
        out.append("bwrap")
    if unshare_status()[0]:
        out.append("unshare" if os.getuid() == 0 else "userns")
    return out


@pytest.fixture(scope="module", params=["bwrap", "unshare"])
def narrow_box(request):
    level = request.param if os.getuid() == 0 or request.param == "bwrap" else "userns"
    if level == "bwrap":
        need(bwrap_status()[0], f"bubblewrap does not work here: {bwrap_status()[1]}")
    else:
        from se_gym.sandbox.local import unshare_status

        need(unshare_status()[0], f"unshare does not work here: {unshare_status()[1]}")
    with LocalSandbox(workers=1, isolation=level) as sb:
        yield sb


def test_narrow_view_shows_only_the_interpreter_and_libraries(narrow_box, tmp_path):
    """Only system libraries, the interpreter and the library are in view, read-only: no host data
    (this checkout, the official data, earlier verdict files), no host sockets, no other home."""
    secret = tmp_path / "verdicts.jsonl"
    secret.write_text('{"expected": 42}')
    os.chmod(tmp_path, 0o755)
    os.chmod(secret, 0o644)
    sock_path = tmp_path / "host.sock"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(sock_path))
    srv.listen(1)
    os.chmod(sock_path, 0o777)
    home = os.path.expanduser("~")
    try:
        res = narrow_box.run([
            f"print(open({str(secret)!r}).read())",
            f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(sock_path)!r}); print('connected')",
            f"import os; print(os.path.exists({str(Path(__file__).resolve())!r}), os.path.exists('/work'), os.path.exists('/home'))",
            "open('/usr/se_gym_probe', 'w')",
            "open('/se_gym_probe', 'w')",
            "import numpy as np, numpy.ma, traceback, decimal, sqlite3; print(np.percentile([1, 2, 3], 50), np.median([3, 1, 2]))",
            f"import os; print(sorted(os.listdir({home!r})) if os.path.isdir({home!r}) else 'none')",
        ], FAST)
    finally:
        srv.close()
    assert res[0].status is ExecStatus.ERROR and "42" not in res[0].stdout
    assert res[1].status is ExecStatus.ERROR and "connected" not in res[1].stdout
    # /work and /home appear only as the path down to the interpreter where it lives below them (a
    # checkout's own venv): the checkout itself stays out of view
    below = [str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, sys.executable)]
    shown = [any(b.startswith(root + "/") for b in below) for root in ("/work", "/home")]
    assert res[2].stdout == f"False {shown[0]} {shown[1]}\n", res[2]
    assert res[3].status is ExecStatus.ERROR and res[4].status is ExecStatus.ERROR
    assert res[5].status is ExecStatus.OK and res[5].stdout == "2.0 2.0\n", res[5].stderr
    # of the home, only the folders leading to the interpreter (pyenv under /root) may appear
    seen = res[6].stdout.strip()
    pyhome = [p for p in (sys.prefix, sys.base_prefix) if os.path.realpath(p).startswith(os.path.realpath(home) + "/")]
    allowed = {os.path.relpath(os.path.realpath(p), os.path.realpath(home)).split("/")[0] for p in pyhome}
    assert seen == "none" or set(eval(seen)) <= allowed, seen


def test_no_user_namespaces_private_ipc_and_bounded_tmp(narrow_box):
    iso = narrow_box.isolation()
    assert iso["network"] is False and iso["no_new_privs"] is True and iso["worker_not_dumpable"] is True
    assert iso["hardening_errors"] == []
    userns = ("import ctypes; libc = ctypes.CDLL(None, use_errno=True)\n"
              "print(libc.unshare(0x10000000), ctypes.get_errno())")
    make_shm = ("import ctypes; libc = ctypes.CDLL(None, use_errno=True)\n"
                "print(libc.shmget(0x5e6e, 4096, 0o1666) >= 0)")
    find_shm = ("import ctypes; libc = ctypes.CDLL(None, use_errno=True)\n"
                "print(libc.shmget(0x5e6e, 0, 0o666) >= 0)")
    mq = ("import ctypes, platform; libc = ctypes.CDLL(None, use_errno=True)\n"
          "nr = {'x86_64': 240, 'aarch64': 180}[platform.machine()]\n"
          "print(libc.syscall(nr, b'se-gym-q', 0o102, 0o600, None), ctypes.get_errno())")
    res = narrow_box.run([userns, make_shm, find_shm, mq], FAST)
    assert res[0].stdout == "-1 1\n", res[0]  # EPERM
    assert res[1].stdout == "True\n" and res[2].stdout == "False\n", (res[1], res[2])  # gone with its program
    assert res[3].stdout == "-1 1\n", res[3]  # POSIX queues refused: they would outlive the program
    from se_gym.sandbox.local import TMP_MB

    fill = ("import os\nn = 0\ntry:\n    for i in range(1000):\n"
            "        with open('/tmp/f%d' % i, 'wb') as f:\n            f.write(b'0' * (8 << 20))\n        n += 8\n"
            "except OSError as e:\n    print(n, e.errno)\n")
    r = narrow_box.run([fill], Limits(wall_s=20, cpu_s=20, file_size_mb=8))[0]
    written, errno = map(int, r.stdout.split())
    assert written <= TMP_MB and errno == 28, r  # ENOSPC: the work dir's tmpfs is bounded
    # and the space came back for the next program
    r2 = narrow_box.run(["open('/tmp/g', 'wb').write(b'0' * (8 << 20)); print('ok')"], Limits(file_size_mb=8))[0]
    assert r2.stdout == "ok\n", r2


# the kernel's keyrings are shared by every process of a uid (and a session) and outlive them: a
# channel between programs, and past the judge (issue 31)
_KEYS = ("import ctypes, platform\nlibc = ctypes.CDLL(None, use_errno=True)\n"
         "add_key, request_key, keyctl = {'x86_64': (248, 249, 250), 'aarch64': (217, 218, 219)}[platform.machine()]\n"
         "def call(*a):\n    r = libc.syscall(*a)\n    return r, ctypes.get_errno() if r < 0 else 0\n")
_KEY_WRITER = _KEYS + (
    "out = []\n"
    "for ring in (-3, -4, -5):  # session, user, user session\n"
    "    r, e = call(add_key, b'user', b'se-gym-test-key', b'secret-4711', 11, ctypes.c_int(ring))\n"
    "    if r > 0:\n        call(keyctl, 15, r, 30)  # (KEYCTL_SET_TIMEOUT: gone in 30 s whatever happens)\n"
    "    out.append(e)\n"
    "out.append(call(keyctl, 0, ctypes.c_int(-3), 1)[1])  # KEYCTL_GET_KEYRING_ID, create\n"
    "out.append(call(keyctl, 1, None)[1])  # KEYCTL_JOIN_SESSION_KEYRING: a new one\n"
    "print(*out)\n")
_KEY_READER = _KEYS + (
    "buf = ctypes.create_string_buffer(64)\n"
    "k, e = call(request_key, b'user', b'se-gym-test-key', None, 0)\n"
    "n = call(keyctl, 11, k, buf, 64)[0] if k > 0 else 0  # KEYCTL_READ\n"
    "print(k > 0 and buf.raw[:n].decode(), e)\n")


def _keyrings_refused(sb) -> None:
    res = sb.run([_KEY_WRITER, _KEY_READER], FAST)
    assert res[0].stdout == "1 1 1 1 1\n", res[0]  # EPERM for each call
    assert res[1].stdout == "False 1\n", res[1]  # nothing found: the search itself is refused
    assert "kernel_keyrings" in sb.isolation() and sb.isolation()["kernel_keyrings"].startswith("refused")


def test_kernel_keyrings_are_refused(narrow_box):
    _keyrings_refused(narrow_box)


def test_kernel_keyrings_are_refused_with_rlimits_alone(weak_box):
    _keyrings_refused(weak_box)


def test_io_uring_and_userfaultfd_are_refused(narrow_box):
    """Kernel attack surface no program needs (both allowed to unprivileged processes here)."""
    code = ("import ctypes, platform\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "uring, uffd = {'x86_64': (425, 323), 'aarch64': (425, 282)}[platform.machine()]\n"
            "params = (ctypes.c_byte * 120)()\n"
            "print(libc.syscall(uring, 4, params), ctypes.get_errno(), libc.syscall(uffd, 1), ctypes.get_errno())\n")
    assert narrow_box.run([code], FAST)[0].stdout == "-1 1 -1 1\n"  # EPERM (UFFD_USER_MODE_ONLY asked)


def test_cleanup_survives_deep_and_locked_trees(narrow_box):
    deep = ("import os\nfor i in range(2500):\n    os.mkdir('d' * 100); os.chdir('d' * 100)\n"
            "open('f', 'w').write('x'); os.chmod('.', 0o500)\n"
            "os.chdir('/tmp/se-gym-run/run'); os.mkdir('locked'); open('locked/x', 'w').close(); os.chmod('locked', 0)\n"
            "print('made')")
    retired = narrow_box.retired
    res = narrow_box.run([deep, "import os; print(sorted(os.listdir('.')), sorted(os.listdir('/tmp')))"], Limits(wall_s=20, cpu_s=20))
    assert res[0].stdout == "made\n", res[0]
    # /tmp holds the run folder and nothing the program left; an interpreter installed under /tmp
    # (a venv in a checkout there) is bound into the view, so its top folder shows too
    import site
    import sysconfig

    own = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, os.path.dirname(sys.executable), *site.getsitepackages(),
                                         sysconfig.get_paths()["stdlib"])}
    under_tmp = sorted({Path(p).relative_to("/tmp").parts[0] for p in own if p.startswith("/tmp/")})
    assert res[1].stdout == f"['main.py'] {sorted(['se-gym-run', *under_tmp])}\n", res[1]
    assert narrow_box.retired == retired and narrow_box.restarts == 0


def test_remove_tree_of_a_tree_past_path_max(tmp_path):
    from se_gym.sandbox.worker import remove_tree

    top = tmp_path / "run"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    for _ in range(300):  # ~60 KB of path, fifteen times PATH_MAX
        os.mkdir("x" * 200, dir_fd=fd)
        nfd = os.open("x" * 200, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.symlink("/etc", "etc-link", dir_fd=fd)
    os.fchmod(fd, 0o500)
    os.close(fd)
    assert remove_tree(str(top)) and os.listdir(tmp_path) == [] and os.path.isdir("/etc")


def test_isolation_report_and_sandbox_info_say_what_holds_measured():
    from se_gym.sandbox import isolation_report

    weak = isolation_report("rlimits")
    assert weak["level"] == "rlimits" and weak["fix"] and weak["measured"]["network"] is True
    assert any(m.startswith("network: REACHABLE") for m in weak["missing"])
    assert "NO_NEW_PRIVS holds" in weak["holds"] and weak["measured"]["no_new_privs"] is True
    levels = _levels()
    need(bool(levels), "neither bubblewrap nor unshare works here")
    strong = isolation_report(levels[-1])
    assert strong["missing"] == [], strong["missing"]
    assert strong["measured"]["network"] is False and strong["measured"]["host_file_visible"] is False
    assert strong["isolation"]["no_new_privs"] is True and strong["isolation"]["worker_not_dumpable"] is True
    assert strong["measured"]["keyrings"] == "refused" and strong["isolation"]["kernel_keyrings"] == "refused (seccomp)"
    out = subprocess.run([sys.executable, "-m", "se_gym.cli", "sandbox", "info", "--isolation", "rlimits", "--workers", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "MISSING  network: REACHABLE" in out.stdout and "fix" in out.stdout
    assert out.stderr.count("WARNING: programs can reach the network") == 1  # once per run, on stderr


def test_programs_sharing_a_head_behave_as_whole_programs(box):
    """The worker caches the compiled head of programs that share everything but their last
    statement (a judge's harness): executing head then tail must be executing the whole program."""
    head = "import sys\ndef f(v):\n    return v * 2\n"
    res = box.run([
        head + "print(f(1), sys._getframe().f_lineno)\n",
        head + "print(f(2), sys._getframe().f_lineno)\n",  # same head, other tail: not the cached answer
        head + "print(f(3))\nraise ValueError('line 5')\n",
        "from __future__ import annotations\ndef g(a: undefined_name): pass\nprint(g.__annotations__)\n",
        "x = 1\n'not a docstring'\nprint(__doc__)\n",
        "x = 1\nfrom __future__ import annotations\n",
    ], FAST)
    assert [r.stdout for r in res[:2]] == ["2 4\n", "4 4\n"]
    assert res[2].stdout == "6\n" and 'File "main.py", line 5' in res[2].stderr and "ValueError: line 5" in res[2].stderr
    assert res[3].stdout == "{'a': 'undefined_name'}\n", res[3]
    assert res[4].stdout == "None\n"
    assert res[5].status is ExecStatus.ERROR and "SyntaxError" in res[5].stderr


def test_program_units_are_compiled_by_the_worker_or_left_to_the_program(box):
    """Program.units: the worker binds the code objects it compiled before the fork, None for what
    does not compile silently (an error, a warning: the program then meets them itself); a plain
    str gets nothing bound."""
    from se_gym.sandbox import Program

    show = ("print([None if c is None else (type(c).__name__, c.co_filename, c.co_flags & 0x1f0000)"
            " for c in __u], eval(__u[0]))")
    units = ("__u", (("6 * 7", "<e>", "eval"), ("x = (", "<bad>", "exec"), ("1 is 1", "<warns>", "eval"),
                     ("x = 1", "<s>", "exec")))
    res = box.run([Program(show, units), Program(show, units), show], FAST)
    assert res[0].stdout == res[1].stdout == "[('code', '<e>', 0), None, None, ('code', '<s>', 0)] 42\n", res[0]
    # code the caller compiled (and vouches for) is handed over as is
    import marshal

    given = Program(show, ("__u", (("1", "<e>", "eval", marshal.dumps(compile("6 * 7", "<e>", "eval"))),)))
    assert box.run([given], FAST)[0].stdout == "[('code', '<e>', 0)] 42\n"
    # so is the last statement's code, where it is the worker's own split (else it compiles the text)
    tail = marshal.dumps(compile("\nprint(x * 6)\n", "main.py", "exec", 0, True))
    tails = box.run([Program("x = 7\nprint(x)\n", tail=(6, tail)), Program("x = 7\nprint(x)\n", tail=(3, tail))], FAST)
    assert [r.stdout for r in tails] == ["42\n", "7\n"], tails
    assert res[2].status is ExecStatus.ERROR and "NameError" in res[2].stderr, res[2]
    bad = box.run([Program("print(__u)", ("__u", "not units")), Program("print(1)", ("no name", ()))], FAST)
    assert bad[0].status is ExecStatus.ERROR and "NameError" in bad[0].stderr and bad[1].stdout == "1\n"


def test_warmup_runs_once_in_the_worker_and_leaves_programs_as_they_were():
    """LocalSandbox(warmup=...): trusted code each worker runs before its first program; its
    errors and the modules it imported are reported, never fatal; programs see nothing of it."""
    warm = ["import warnings\nwarnings.warn('seen once?', UserWarning)\nwarm_name = 1",
            "import decimal\nraise ValueError('boom')"]
    with LocalSandbox(workers=1, warmup=warm) as sb:
        info = sb.worker_info["warmup"]
        assert info["errors"] == ["ValueError: boom"] and "decimal" in info["imported"], info
        r = sb.run(["import warnings\nwarnings.warn('seen once?', UserWarning)\nprint('warm_name' in globals())"], FAST)[0]
        assert r.stdout == "False\n" and "UserWarning: seen once?" in r.stderr, r


@pytest.mark.parametrize("level", ["bwrap", "unshare"])
def test_a_library_under_tmp_is_importable_and_left_alone(level):
    """Folders of the mount plan under the private /tmp (a venv or a library there) are importable
    and never taken for a program's leftovers (that retired the worker after every program)."""
    from se_gym.sandbox.local import unshare_status

    if level == "bwrap":
        need(bwrap_status()[0], f"bubblewrap does not work here: {bwrap_status()[1]}")
    else:
        level = "unshare" if os.getuid() == 0 else "userns"
        need(unshare_status()[0], f"unshare does not work here: {unshare_status()[1]}")
    lib = Path(tempfile.mkdtemp(prefix="se-gym-lib-", dir="/tmp"))
    try:
        os.chmod(lib, 0o755)
        (lib / "tmplib.py").write_text("VALUE = 41\n")
        with LocalSandbox(pythonpath=[str(lib)], preload=["numpy"], workers=1, isolation=level) as sb:
            res = sb.run(["import tmplib; print(tmplib.VALUE + 1)"] * 4, FAST)
            assert [r.stdout for r in res] == ["42\n"] * 4, res[0]
            assert sb.retired == 0 and sb.restarts == 0
        assert (lib / "tmplib.py").read_text() == "VALUE = 41\n"
    finally:
        shutil.rmtree(lib, ignore_errors=True)


def test_folders_of_killed_sandboxes_are_reclaimed():
    """A process killed with its sandbox open (no atexit) leaves its folder, in /dev/shm memory; the
    next sandbox on the machine removes the folders whose owner is gone, and no other."""
    code = ("import os, sys; sys.path.insert(0, %r)\n"
            "from se_gym.sandbox import make_sandbox\n"
            "box = make_sandbox('local', workers=1)\n"
            "print(box._tmp, flush=True)\n"
            "os.kill(os.getpid(), 9)\n") % str(Path(__file__).resolve().parents[1])
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    left = Path(p.stdout.strip().splitlines()[-1])
    assert left.is_dir() and (left / "owner").exists(), p.stderr
    with make_sandbox("local", workers=1) as sb:
        assert not left.exists()
        assert sb._tmp.is_dir()  # its own, alive, kept


@pytest.mark.perf_internals
def test_worker_heap_stays_in_huge_pages_while_programs_run():
    """The worker collapses its heap into 2 MB pages (fewer page-table entries for each fork to
    copy and each program's exit to drop) and keeps them: it runs no Python between a fork and
    the wait on the child, where a write would split its own huge page.  Programs that write all
    over the memory they share with it (and get it right) change nothing of that."""
    if not worker_fast_paths():
        legit_skip("SE_GYM_WORKER_FAST_PATHS=0: the worker runs its plain path")
    import platform

    with LocalSandbox(workers=1) as sb:
        mb, why = sb.worker_info.get("huge_pages_mb"), sb.worker_info.get("huge_pages_error")
        assert isinstance(mb, int) and mb >= 0, sb.worker_info
        if mb == 0:
            release = tuple(int(x) for x in platform.release().split(".")[:2] if x.isdigit())
            thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
            if release < (6, 1) or not thp.exists() or "[never]" in thp.read_text():
                legit_skip(f"no MADV_COLLAPSE here (kernel {platform.release()} or THP off): {why}")
            if why:  # the kernel refused (no free 2 MB page, a container's policy, ...): only speed is lost
                legit_skip(f"the kernel refused MADV_COLLAPSE here ({why}): speed only, verdicts are the same")
            pytest.fail(f"kernel {platform.release()} has MADV_COLLAPSE and refused nothing, yet no huge page was made")
        prog = ("import numpy as np, json, collections\n"
                "d = collections.Counter(str(i % 7) for i in range(3000))\n"
                "print(json.dumps(sorted(d.items())), int(np.arange(100).sum()))\n")
        want = '[["0", 429], ["1", 429], ["2", 429], ["3", 429], ["4", 428], ["5", 428], ["6", 428]] 4950\n'
        res = sb.run([prog] * 80, FAST)  # past the re-collapses (after 2, 10 and 42 programs)
        assert [r.stdout for r in res] == [want] * 80, res[0]
        workers = [p for p in descendants(sb._workers[0].proc.pid)
                   if b"worker.py" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert workers, "worker process not found"
        rollup = Path(f"/proc/{workers[-1]}/smaps_rollup").read_text()
        huge_kb = int(rollup.split("AnonHugePages:")[1].split()[0])
        assert huge_kb > 0, rollup
        # the heap itself: 38 programs after the last re-collapse, its 2 MB pages are still whole
        # (the worker writes nothing there while a child lives; select() once did: half of them split)
        heap, cur = None, None
        for line in Path(f"/proc/{workers[-1]}/smaps").read_text().splitlines():
            head = line.split()
            if head and "-" in head[0] and ":" not in head[0]:
                cur = head
            elif cur is not None and cur[-1] == "[heap]" and head[0] == "AnonHugePages:":
                lo, hi = (int(x, 16) for x in cur[0].split("-"))
                whole = (hi // (1 << 21) - -(-lo // (1 << 21))) * 2048  # KB in whole 2 MB pages
                heap = (int(head[1]), whole)
        if heap is not None and heap[1] >= 4096:
            assert heap[0] >= heap[1] - 2048, f"heap: {heap[0]} KB in 2 MB pages of {heap[1]} KB possible"


@pytest.mark.perf_internals
def test_worker_arenas_come_from_the_heap_and_each_program_gets_the_default_back():
    """The worker takes pymalloc's arenas from malloc, so that they lie in the heap it collapses
    into 2 MB pages; each program starts with CPython's own arena allocator (the worker puts it back
    for each fork and takes its own again once it has waited on the child).  Without
    that, memory a program releases would never go back: deep recursion allocating and releasing
    data-stack chunks over and over then dies past the memory limit (seen: SystemError at 256 MB)."""
    if not worker_fast_paths():
        legit_skip("SE_GYM_WORKER_FAST_PATHS=0: the worker runs its plain path")
    with LocalSandbox(workers=1) as sb:
        where = sb.worker_info.get("arenas")
        assert isinstance(where, str) and where, sb.worker_info
        if where != "heap":
            legit_skip(f"the worker's arenas stay where CPython maps them here: {where}")
        prog = ("import resource\n"
                "def f(n):\n    return 0 if n == 0 else f(n - 1) + 0\n"
                "for _ in range(30000):\n    f(200)\n"
                "print('ok', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)\n")
        r = sb.run([prog], Limits(memory_mb=256, wall_s=30.0, cpu_s=30.0))[0]
        assert r.status is ExecStatus.OK and r.stdout.split()[0] == "ok", r
        assert int(r.stdout.split()[1]) < 128, r.stdout  # MB at most: nothing piled up


def test_pool_lowers_the_switch_interval_while_work_is_out_and_puts_it_back():
    """A thread busy preparing answers would keep the GIL from the threads feeding the workers for
    CPython's 5 ms switch interval: the pool lowers it while programs are out (nested and
    concurrent uses share it) and puts back what was there, or what the user set meanwhile."""
    from se_gym.sandbox.pool import prompt_threads

    before = sys.getswitchinterval()
    assert before > 0.0005, "the test needs an interval above the pool's"
    seen = []
    with prompt_threads():
        seen.append(sys.getswitchinterval())
        with prompt_threads():
            seen.append(sys.getswitchinterval())
        seen.append(sys.getswitchinterval())  # the outer use still holds it
    assert seen == [0.0005] * 3 and sys.getswitchinterval() == before
    try:
        with prompt_threads():
            sys.setswitchinterval(0.01)  # the user's own choice, made meanwhile, stays
        assert sys.getswitchinterval() == 0.01
    finally:
        sys.setswitchinterval(before)
    # through a real run: lowered while the program runs, back afterwards
    sampled, stop = [], threading.Event()

    def sample():
        while not stop.is_set():
            sampled.append(sys.getswitchinterval())
            time.sleep(0.01)

    with LocalSandbox(workers=1) as sb:
        t = threading.Thread(target=sample)
        t.start()
        try:
            res = sb.run(["import time\ntime.sleep(0.3)\nprint('done')"], FAST)
        finally:
            stop.set()
            t.join()
    assert res[0].stdout == "done\n", res[0]
    assert 0.0005 in sampled and sys.getswitchinterval() == before, sorted(set(sampled))


def test_constructing_thread_hears_when_every_worker_is_launched():
    """notify_launched: the pool tells the thread constructing it once each worker's process has
    been started (before they are up), and also when launching one failed, before the error."""
    from se_gym.sandbox.pool import WorkerPool, notify_launched

    spawned: list[int] = []

    class Recording(LocalSandbox):
        def _spawn(self, slot):
            transport = super()._spawn(slot)
            spawned.append(slot)
            return transport

    seen: list[tuple[list[int], bool]] = []
    ready = threading.Event()
    with notify_launched(lambda: seen.append((sorted(spawned), ready.is_set()))):
        sb = Recording(workers=2)
        ready.set()
    try:
        assert seen == [([0, 1], False)]  # once: both workers' processes started, the constructor not yet back
        assert [r.stdout for r in sb.run(["print(6 * 7)"], FAST)] == ["42\n"]
    finally:
        sb.close()

    class NoWorker(WorkerPool):
        def _spawn(self, slot):
            raise OSError(f"no worker for slot {slot}")

        def isolation(self):
            return {}

    heard = []
    with notify_launched(lambda: heard.append(True)):
        with pytest.raises(OSError, match="no worker for slot"):
            NoWorker(2)._start()
    assert heard == [True]
    # outside the block, and in other threads, nothing is called
    done = []
    t = threading.Thread(target=lambda: done.append(LocalSandbox(workers=1).close()))
    with notify_launched(lambda: pytest.fail("called for another thread's pool")):
        t.start()
        t.join(60)
    assert done == [None]


class _CancelledUnderfoot(Future):
    """A cancelled future that says it is not done: the serving thread looks at ``done()``, and the
    caller's ``cancel()`` lands before ``set_result`` (what judge_many and run can do at any moment)."""

    def __init__(self):
        super().__init__()
        self.answered = threading.Event()
        self.cancel()

    def done(self):
        return False

    def set_result(self, result):
        self.answered.set()
        return super().set_result(result)


def test_a_cancel_between_look_and_answer_leaves_the_serving_thread_serving():
    from se_gym.sandbox.pool import _job

    with LocalSandbox(workers=1) as sb:
        job = _job("print(1)", FAST, FAST.to_json())
        job.future = _CancelledUnderfoot()
        sb._queue.put(job)
        assert job.future.answered.wait(30)  # run, and its answer refused
        # a bound, not a speed: a dead serving thread would leave this unanswered for ever
        assert sb.submit("print(2)", FAST).result(timeout=30).stdout == "2\n"
        assert all(t.is_alive() for t in sb._threads)


def test_close_with_queued_programs_starts_no_worker_and_answers_them():
    before = set(descendants(os.getpid()))
    sb = LocalSandbox(workers=1)
    futures = [sb.submit("import time; time.sleep(0.5); print('ran')", FAST) for _ in range(6)]
    sb.close()
    results = [f.result(timeout=0) for f in futures]  # every one answered by close()
    assert [(r.status, r.detail) for r in results] == [(ExecStatus.SANDBOX_ERROR, "sandbox closed")] * 6
    assert sb._spawned == 1  # no worker started after the close
    assert set(descendants(os.getpid())) - before == set()
    assert not any(t.is_alive() for t in sb._threads)


def test_a_failed_worker_start_does_not_disable_its_slot():
    """Each launch gets a fresh root folder: the one a failed start left behind was made again
    by the next start of the same slot (FileExistsError on every later start)."""
    from se_gym.sandbox.local import unshare_status

    user = os.getuid() != 0
    need(unshare_status(user)[0], f"unshare does not work here: {unshare_status(user)[1]}")
    with LocalSandbox(workers=1, isolation="userns" if user else "unshare") as sb:
        real, failed = sb._spawn, []

        def spawn(slot):
            transport = real(slot)
            if not failed:  # this launch dies before its hello: its start fails
                failed.append(transport.name)
                os.killpg(transport.proc.pid, 9)
            return transport

        sb._spawn = spawn
        old = sb._workers[0]
        os.killpg(old.proc.pid, 9)  # the next program needs a new worker, whose start fails
        old.proc.wait()
        sb.run(["print(0)"], FAST)  # (its one retry meets the failed start)
        assert failed
        assert [r.stdout for r in sb.run(["print(1)", "print(2)"], FAST)] == ["1\n", "2\n"]
        assert [r.stdout for r in sb.run(["print(3)"], FAST)] == ["3\n"]


def test_the_plain_worker_path_gives_the_same_results(monkeypatch):
    """SE_GYM_WORKER_FAST_PATHS=0: no arenas in the heap, no huge pages, os.fork: the same results."""
    prog = "import numpy as np, random\nprint(int(np.arange(10).sum()), len({random.random() for _ in range(3)}))\n"
    monkeypatch.setenv("SE_GYM_WORKER_FAST_PATHS", "0")
    with LocalSandbox(workers=1) as sb:
        info = sb.worker_info
        plain = sb.run([prog] * 3)
    assert info.get("huge_pages_mb") in (None, 0) and info.get("arenas") in (None, "default"), info
    assert [r.stdout.strip() for r in plain] == ["45 3"] * 3, plain
