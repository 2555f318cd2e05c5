"""Process-tree helpers shared by tests/conftest.py and tests/_openenv_chaos.py (which the benchmark
benchmarks/openenv_throughput.py imports too, without pytest)."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (through each of its threads' children lists)."""
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            kids = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        except OSError:
            kids = []
        for kid in map(int, kids):
            out += [kid] + descendants(kid)
    return out


LIBRARY_SERVER_NAMES = ("se-gym-zygote", "se-gym-libsrv")  # (sandbox/worker.py names them so)


def workers_only(pids: list[int]) -> list[int]:
    """``pids`` without the strict library's zygotes and servers (one zygote per worker; a server per
    program or kept between programs, so their number moves while the pool does not)."""
    out = []
    for pid in pids:
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if name not in LIBRARY_SERVER_NAMES:
            out.append(pid)
    return out


@contextmanager
def sandbox_server(*args: str, workers: int = 1):
    """``se-gym sandbox serve ARGS`` in its own process (as a user runs it) on a free port, once it
    answers ``GET /health``: yields its URL; stopped (SIGTERM, then SIGKILL) after."""
    import http.client
    import socket
    import subprocess
    import sys
    import time

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([sys.executable, "-m", "se_gym.cli", "sandbox", "serve", *args, "--workers", str(workers),
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, proc.stderr.read()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the server did not come up"
            time.sleep(0.2)  # polling a port that is not open yet: there is no event to wait on
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
