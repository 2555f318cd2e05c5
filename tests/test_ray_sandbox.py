"""The 2-node Ray sandbox tests (tests/ray_sandbox_cases.py) in a fresh interpreter with Ray's token
authentication off, like the throw-away cluster they start (see tests/test_selfplay_ray.py: a Ray test
run before them in this process may have left RAY_AUTH_MODE=token in its environment)."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import need_module

need_module("ray", "the ray sandbox needs ray (bash scripts/setup/ray.sh)")


def test_ray_sandbox_on_a_two_node_cluster_in_its_own_process():
    here = Path(__file__).resolve().parent
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", str(here / "ray_sandbox_cases.py")],
                          cwd=here.parent, capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})
    assert proc.returncode == 0 and " passed" in proc.stdout and "failed" not in proc.stdout, (proc.stdout[-6000:], proc.stderr[-2000:])
