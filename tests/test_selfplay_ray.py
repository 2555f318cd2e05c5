"""The two-node Ray self-play tests (tests/selfplay_ray_cases.py) in a fresh interpreter: in the full
suite, Ray state left in this process by earlier Ray tests made their actors be cancelled before they
ran (they pass alone); a process of their own gives them the clean driver they assume."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import need_module

need_module("ray", "self-play on Ray needs ray (bash scripts/setup/ray.sh)")


def test_selfplay_on_a_two_node_ray_cluster_in_its_own_process():
    here = Path(__file__).resolve().parent
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(here / "selfplay_ray_cases.py")],
                          cwd=here.parent, capture_output=True, text=True, timeout=1500, env=dict(os.environ))
    assert proc.returncode == 0, (proc.stdout[-4000:], proc.stderr[-2000:])
    assert " passed" in proc.stdout and "failed" not in proc.stdout, proc.stdout[-2000:]
