"""Process-tree helpers shared by tests/conftest.py and tests/_openenv_chaos.py (which the benchmark
benchmarks/openenv_throughput.py imports too, without pytest)."""
from __future__ import annotations

import os
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
