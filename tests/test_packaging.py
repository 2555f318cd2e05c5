"""A non-editable install (a wheel) works: built from this checkout, installed into a fresh environment
outside it, it imports from the environment (not from the checkout), runs the CLI, and judges answers
through the local backend, the http backend (its own server), and the docker backend when Docker
answers (a missing daemon skips locally and fails in CI)."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, child_venv

PROBE = r'''
import json, sys, se_gym
from se_gym.judge import Judge
from se_gym.tasks import build_suite
assert "{venv}" in se_gym.__file__, se_gym.__file__
task = build_suite(0, sizes={{"train": 0, "single_test": 1, "multiple_test": 0}}, progress=False, validate="inprocess").splits["single_test"][0]
good = "```python\n" + task.library_solution + "\n```"
backend = sys.argv[1]
opts = {{}}
if backend == "http":  # se-gym's own server, from the installed package, serving this library
    from se_gym.library import mint
    from se_gym.sandbox import make_sandbox
    from se_gym.sandbox.server import SandboxServer
    box = make_sandbox("local", pythonpath=[str(mint(0).materialize("sebench", docs=False))], workers=1)
    server = SandboxServer(box, "127.0.0.1", 0).start()
    opts["http_url"] = server.url + "/run"
with Judge("seed:0", profile="sebench", sandbox=backend, workers=1, **opts) as j:
    print(json.dumps([j.judge(good, task.test_cases).status.value, j.judge("no code", task.test_cases).status.value]))
'''


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    # build with this environment's setuptools when it can make wheels itself (>= 70.1, or with `wheel`);
    # otherwise let pip fetch a build environment from the configured index
    import importlib.util

    import setuptools

    own = tuple(int(x) for x in setuptools.__version__.split(".")[:2]) >= (70, 1) or importlib.util.find_spec("wheel") is not None
    isolation = ["--no-build-isolation"] if own else []
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", str(dist), str(REPO)],
                           capture_output=True, text=True, timeout=900, cwd=root)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = dist.glob("se_gym-*.whl")
    venv = root / "venv"
    # the dependencies (numpy, gymnasium...) come from this interpreter's site-packages; the venv's own
    # site-packages comes first, so se_gym is the wheel's even where an editable se-gym is installed there
    child_venv(venv, install=(str(wheel),))
    return wheel, venv


def test_wheel_holds_the_package_and_its_data(installed):
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    ours = {str(p.relative_to(REPO)) for p in (REPO / "se_gym").rglob("*.py") if "__pycache__" not in p.parts}
    assert ours <= names, sorted(ours - names)[:5]
    assert "se_gym/py.typed" in names
    assert not any(n.startswith("tests/") for n in names)


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", OMP_NUM_THREADS="1")
    return subprocess.run(list(args), capture_output=True, text=True, timeout=900, cwd=cwd, env=env)


def test_cli_runs_from_the_installed_wheel(installed, tmp_path):
    _, venv = installed
    out = _run(venv, str(venv / "bin" / "se-gym"), "--help", cwd=tmp_path)
    assert out.returncode == 0 and "doctor" in out.stdout and "judge" in out.stdout, out.stderr


@pytest.mark.parametrize("backend", ["local", "http", "docker"])
def test_every_backend_judges_from_the_installed_wheel(installed, backend, tmp_path, request):
    _, venv = installed
    if backend == "docker":
        # conftest's docker_daemon: starts one when none answers (root), stops it after the module
        request.getfixturevalue("docker_daemon")
    out = _run(venv, str(venv / "bin" / "python"), "-c", PROBE.format(venv=venv), backend, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == '["passed", "static_gate"]', out.stdout
