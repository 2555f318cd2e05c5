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
