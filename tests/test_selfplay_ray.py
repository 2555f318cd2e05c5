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


def test_the_selfplay_ray_example_runs_rounds_on_a_local_cluster():
    """examples/selfplay_ray.py as a user runs it (a fresh interpreter, its own local Ray cluster, the
    tiny model): both rounds finish, each trained on the seeded buffer, and no Ray process is left."""
    import shutil
    import tempfile

    from _ray_helpers import wait_gone

    need_module("torch", "self-play trains with torch")
    here = Path(__file__).resolve().parent
    # Ray's temp dir (short: its socket paths are limited) marks the example's Ray processes
    temp = tempfile.mkdtemp(prefix="sgex", dir="/tmp")
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "RAY_ADDRESS")}
        env.update(PYTHONPATH=str(here.parent), RAY_TMPDIR=temp, RAY_USAGE_STATS_ENABLED="0", TOKENIZERS_PARALLELISM="false")
        done = subprocess.run([sys.executable, str(here.parent / "examples" / "selfplay_ray.py")], cwd=temp, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
        lines = done.stdout.splitlines()
        assert "seed tasks 6" in lines, done.stdout
        rounds = [ln for ln in lines if ln.startswith("round ")]
        assert [ln.split(":")[0] for ln in rounds] == ["round 1", "round 2"], done.stdout
        assert all("/4, trained on " in ln and "closed-book acc 0." in ln for ln in rounds), rounds
        left = wait_gone(temp)
        assert not left, f"Ray processes of the example left behind: {left}"
    finally:
        shutil.rmtree(temp, ignore_errors=True)
