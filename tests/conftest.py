"""Shared test conventions.

A test that needs an optional piece (a module, a daemon, the official data) asks for it through
``need``/``need_module``.  On a developer's machine a missing piece skips with the reason; with
``SE_GYM_CI=1`` (set by scripts/test.sh, which installs every piece) it *fails*, so CI never goes
green by skipping.  ``legit_skip`` is for the rare skip that is right even in CI (say why).
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from _procs import descendants  # noqa: F401  (tests import it from here)

os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("SE_GYM_CI") == "1"


def missing(reason: str):
    """A required piece is absent: skip on a developer's machine, fail in CI."""
    if IN_CI:
        pytest.fail(f"SE_GYM_CI=1 and a required piece is missing: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def started_docker_judge(lib, **kwargs):
    """A strict Judge on the docker backend, its sandbox started here (one worker): a backend that
    cannot start is missing (skipped on a developer's machine, a failure in CI), not failing."""
    from se_gym.judge import Judge

    try:
        judge = Judge(lib, profile="strict", sandbox="docker", workers=1, **kwargs)
        judge.sandbox  # noqa: B018 - starts it
    except RuntimeError as exc:
        missing(f"docker backend unavailable: {exc}")
    return judge


def need(condition: bool, reason: str) -> None:
    if not condition:
        missing(reason)


def need_module(name: str, reason: str = ""):
    """Import ``name`` or skip/fail; returns the module."""
    try:
        return importlib.import_module(name)
    except Exception as exc:  # ImportError, or a broken install raising something else
        missing(f"{name} is not importable ({type(exc).__name__}: {exc}){': ' + reason if reason else ''}")


def legit_skip(reason: str) -> None:
    """A skip that is correct even in CI (the reason must say why)."""
    pytest.skip(reason, allow_module_level=True)


def child_venv(path: Path, install: tuple[str, ...] = ()) -> Path:
    """A venv at ``path`` (no pip) that sees this interpreter's packages by an explicit ``.pth`` listing
    the site-packages folders on this interpreter's path, after its own.  ``--system-site-packages``
    would not do: made from a venv's python it shows the *base* interpreter's packages, which on a
    fresh machine lack everything the test venv installed.  ``install``: local wheels installed
    (without dependencies) before the ``.pth`` is written, so that pip does not take a package
    of the same version seen through it (an editable se-gym) as already installed.  Returns the
    venv's python."""
    import subprocess
    import sys
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=300)
    python = path / "bin" / "python"
    if install:
        # without PYTHONPATH: a checkout on it (se_gym.egg-info beside the package) reads as installed
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        got = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", *install],
                             capture_output=True, text=True, timeout=900, env=env)
        assert got.returncode == 0, got.stderr[-3000:]
    own = Path(sysconfig.get_path("purelib", vars={"base": str(path), "platbase": str(path)}))
    parents = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
    # plain folder lines: the parents' own .pth files (an editable se-gym, say) are not processed
    (own / "_se_gym_parent_site.pth").write_text("".join(f"{p}\n" for p in parents))
    return python


def run_in_venv(python: Path, script: str, tmp_path: Path, *args: str, probe: str, what: str, timeout: int = 600) -> dict:
    """Run ``tests/<script> [args] OUT.json`` with the venv's ``python`` (the checkout on PYTHONPATH, cwd
    ``tmp_path``) after ``python -c probe`` shows the stack is there (else a skip naming the venv and
    ``what`` makes it); returns the JSON the script wrote."""
    import json
    import subprocess

    ok = python.exists() and subprocess.run([str(python), "-c", probe], capture_output=True).returncode == 0
    need(ok, f"{what} is not installed at {python} (scripts/setup/integrations.sh makes that venv)")
    out = tmp_path / "out.json"
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    proc = subprocess.run([str(python), str(REPO / "tests" / script), *args, str(out)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


def strict_server_module(lib, folder: Path, name: str):
    """The strict library's server module (``_server.py``, the counterfactual library's code) of
    ``lib``, written under ``folder`` and loaded in this process as ``name``."""
    out = lib.write(folder / "lib", profile="strict", with_docs=False)
    spec = importlib.util.spec_from_file_location(name, str(out / lib.package / "_server.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.load()
    return mod


@pytest.fixture(scope="module")
def init_dir(tmp_path_factory):
    """A freshly initialised tiny model (hidden 32, one layer, one head, 400 tokens), one per module."""
    import torch

    from se_gym.training import miniature as mini

    torch.set_num_threads(1)
    path = tmp_path_factory.mktemp("tiny") / "init"
    mini.build_tiny_model(path, seed=0, hidden=32, layers=1, heads=1, vocab=400)
    return path


@pytest.fixture(scope="module")
def docker_daemon():
    """A Docker daemon that answers: the one running, else one started with scripts/docker_daemon.sh
    (root and docker.io needed) and stopped after the module; missing (skip/fail) otherwise."""
    import shutil
    import subprocess

    try:
        import docker  # noqa: F401
    except ImportError:
        missing("docker SDK not installed (pip install 'se-gym[docker]')")
    script = REPO / "scripts" / "docker_daemon.sh"
    started = False
    answers = shutil.which("docker") is not None and subprocess.run(["docker", "info"], capture_output=True).returncode == 0
    if not answers:
        if os.geteuid() != 0 or shutil.which("dockerd") is None:
            missing("no Docker daemon answers and none can be started here (needs root and docker.io)")
        proc = subprocess.run(["bash", str(script), "start"], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            missing(f"could not start a Docker daemon: {proc.stderr.strip() or proc.stdout.strip()}")
        started = True
    yield
    if started:
        subprocess.run(["bash", str(script), "stop"], capture_output=True, timeout=120)


def _shared_roots() -> list[Path]:
    """Where ../shared may be: $SE_GYM_SHARED, beside this checkout, or beside the main checkout
    when this is a git worktree (whose .git is a file pointing into the main one's .git)."""
    if os.environ.get("SE_GYM_SHARED"):
        return [Path(os.environ["SE_GYM_SHARED"])]
    roots = [REPO.parent / "shared"]
    dotgit = REPO / ".git"
    if dotgit.is_file():
        text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            gitdir = (REPO / text.split(":", 1)[1].strip()).resolve()  # <main>/.git/worktrees/<name>
            if gitdir.parent.name == "worktrees":
                roots.append(gitdir.parent.parent.parent.parent / "shared")
    return roots


def shared_path(*parts: str) -> Path:
    """A file of the official data in ../shared (or $SE_GYM_SHARED); skip/fail when absent."""
    tried = [root.joinpath(*parts) for root in _shared_roots()]
    for path in tried:
        if path.exists():
            return path
    # The official data cannot be installed by the test command (it is not on PyPI and must not be
    # committed), so its absence skips even under SE_GYM_CI=1; scripts/test.sh says up front whether
    # it was found, so a CI log shows whether the parity evidence ran.
    legit_skip(f"official SE-Bench data not found at {' or '.join(map(str, tried))} "
               "(set SE_GYM_SHARED to the folder holding sebench/)")
