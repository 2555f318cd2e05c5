"""The two-node Ray self-play tests (tests/selfplay_ray_cases.py) in a fresh interpreter with Ray's
token authentication off, like the throw-away cluster they start.  (In the full suite they once had
their actors cancelled before running: an earlier local ``ray.init()`` had left RAY_AUTH_MODE=token in
this process's environment, and a token-mode driver cannot place actors on a tokenless cluster.)"""
import os
import subprocess
import sys
from pathlib import Path

from conftest import need_module

need_module("ray", "self-play on Ray needs ray (bash scripts/setup/ray.sh)")


def test_selfplay_on_a_two_node_ray_cluster_in_its_own_process(tmp_path):
    here = Path(__file__).resolve().parent
    diag = tmp_path / "ray-diagnostics.txt"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(here / "selfplay_ray_cases.py")],
                          cwd=here.parent, capture_output=True, text=True, timeout=1500,
                          # RAY_AUTH_MODE: a Ray test before this one may have left "token" in this
                          # process's environment, and a token-mode driver has its actors cancelled
                          # by the tokenless test cluster
                          env={**os.environ, "SE_GYM_RAY_DIAG_FILE": str(diag), "RAY_AUTH_MODE": "disabled"})
    if proc.returncode != 0:
        # the nodes' own account first (memory kills, crashes), then pytest's: CI shows a short tail
        print(proc.stdout[-20000:], proc.stderr[-4000:], sep="\n")
        notes = diag.read_text() if diag.exists() else "(no diagnostics written)"
        raise AssertionError(f"Ray node logs:\n{notes[-3000:]}\n--- pytest tail:\n{proc.stdout[-1500:]}")
    assert " passed" in proc.stdout and "failed" not in proc.stdout, proc.stdout[-2000:]
