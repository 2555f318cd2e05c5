"""A local Ray cluster owned by one test module, and the checks that it leaves nothing behind."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that mention ``text`` (Ray puts its temp dir in theirs)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = next((ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith("State:")), "")
        except OSError:
            continue
        if text.encode() in raw and "Z" not in state.split(":", 1)[-1][:3]:  # zombies hold nothing
            found.append(pid + ": " + raw.replace(b"\0", b" ")[:120].decode(errors="replace"))
    return found


def wait_gone(text: str, seconds: float = 20.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := processes_mentioning(text)) and time.monotonic() < deadline:
        time.sleep(0.25)
    return left


@contextmanager
def local_cluster(prefix: str, module, num_cpus: int = 2):
    """Start this process's own Ray cluster (se_gym.distributed.connect), yield its temp dir; on the
    way out stop it and check that no Ray process and no variable Ray set (RAY_AUTH_MODE=token, ...)
    is left: a later driver or child inheriting them has its actors cancelled."""
    import ray

    from se_gym.distributed import connect, shutdown

    # short path: Ray's unix sockets live under the temp dir and have a ~107 character limit
    temp = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    env = dict(os.environ)
    assert connect(num_cpus=num_cpus, _temp_dir=temp)
    # the test module is not importable inside Ray workers: ship what it defines by value
    ray.cloudpickle.register_pickle_by_value(module)
    yield temp
    shutdown()
    left = wait_gone(temp)
    shutil.rmtree(temp, ignore_errors=True)
    assert not left, f"Ray processes left behind: {left}"
    changed = {k for k in set(env) | set(os.environ) if env.get(k) != os.environ.get(k) and k.startswith(("RAY_", "PYTHONBREAKPOINT"))}
    assert not changed, f"left in the environment after shutdown: {sorted(changed)}"


# -- a cluster of several nodes on this machine, each started by `ray start` ----------------------------
def process_tree(marker: str) -> list[int]:
    """Pids of live processes whose command line mentions ``marker`` (a node's temp dir), and their
    descendants (the sandbox workers of an actor do not mention it)."""
    procs = {}
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{p}/cmdline").read_bytes()
            stat = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, ValueError, IndexError):
            continue
        if stat[0] != "Z":  # zombies hold nothing
            procs[int(p)] = (int(stat[1]), cmd)
    out = {p for p, (_, c) in procs.items() if marker.encode() in c}
    grew = True
    while grew:
        grew = False
        for p, (pp, _) in procs.items():
            if pp in out and p not in out:
                out.add(p)
                grew = True
    return sorted(out)


def signal_tree(marker: str, sig: int) -> int:
    pids = process_tree(marker)
    for p in pids:
        try:
            os.kill(p, sig)
        except OSError:
            pass
    return len(pids)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ray_start(args: list[str], marker: str, env: dict, tries: int = 3) -> None:
    """``ray start ARGS`` with this interpreter's Ray; a node that misses Ray's fixed 30 s to register
    (a loaded machine) is killed and started again."""
    import signal
    import subprocess
    import sys

    for _ in range(tries):
        p = subprocess.run([sys.executable, "-m", "ray.scripts.scripts", "start", *args], capture_output=True, text=True, timeout=400, env=env)
        if p.returncode == 0:
            return
        signal_tree(marker, signal.SIGKILL)
        time.sleep(2)
    raise AssertionError(f"ray start failed {tries} times: {(p.stderr or p.stdout)[-1500:]}")


class NodeCluster:
    """A head node and more nodes of one throw-away cluster on this machine (no auth token, bound to
    127.0.0.1, short health checks so a killed node is declared dead within seconds).  Every node
    has its own temp dir; :meth:`close` kills the process trees of the nodes this object started
    (never ``ray stop``, which stops every Ray on the machine) and checks that none is left."""

    def __init__(self, prefix: str, head_cpus: int = 1):
        import signal  # noqa: F401 - (used by close)

        self.root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))  # short: Ray's socket paths are limited
        self.env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        self.env.update(RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: dict[str, str] = {}  # name -> temp dir (the marker of its processes)
        fast = '{"health_check_period_ms": 1000, "health_check_failure_threshold": 3, "health_check_timeout_ms": 1000}'
        self._start("head", ["--head", f"--port={self.port}", f"--num-cpus={head_cpus}", "--include-dashboard=false",
                             f"--system-config={fast}"])

    def _start(self, name: str, args: list[str], env: dict | None = None) -> str:
        folder = str(self.root / name)
        self.nodes[name] = folder
        ray_start([*args, f"--temp-dir={folder}", "--node-ip-address=127.0.0.1", "--disable-usage-stats"], folder, {**self.env, **(env or {})})
        return folder

    def add_node(self, name: str, cpus: int = 1, env: dict | None = None) -> str:
        """One more node with ``cpus`` CPUs and a resource named ``name`` (to tell it apart)."""
        return self._start(name, [f"--address={self.address}", f"--num-cpus={cpus}", f'--resources={{"{name}": 1}}'], env)

    def kill(self, name: str) -> int:
        import signal

        return signal_tree(self.nodes[name], signal.SIGKILL)

    def close(self) -> None:
        import signal

        for name in reversed(list(self.nodes)):
            signal_tree(self.nodes[name], signal.SIGKILL)
        deadline = time.monotonic() + 20
        while (left := [p for f in self.nodes.values() for p in process_tree(f)]) and time.monotonic() < deadline:
            time.sleep(0.25)
        shutil.rmtree(self.root, ignore_errors=True)
        assert not left, f"Ray processes of the test cluster still alive: {left}"
