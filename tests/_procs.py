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
