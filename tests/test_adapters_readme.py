"""The documented snippet for each training stack runs as written (in a fresh interpreter)."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, need, need_module

# the snippets stand in the README or in docs/ (docs/integrations/README.md has one per stack)
DOCS = "\n".join(p.read_text(encoding="utf-8") for p in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))])
SNIPPETS = {name: (lang, body) for name, lang, body in
            re.findall(r"<!-- readme-test: (\w+) -->\n```(python|bash)\n(.*?)\n```\n", DOCS, flags=re.S)}
NEEDS = {"verl": "pyarrow", "skyrl": "skyrl_gym", "openenv": "openenv.core", "verifiers": None}
# verifiers lives in its own venv (see scripts/setup/integrations.sh)
VF_PYTHON = Path(os.environ.get("SE_GYM_VERIFIERS_VENV", "/var/tmp/se-gym-venvs/verifiers")) / "bin" / "python"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(name: str, tmp_path) -> str:
    lang, body = SNIPPETS[name]
    # this interpreter and this checkout; a free port instead of the documented 8000
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # a script, not a symlink: a link to a venv's python outside the venv's bin/ finds no pyvenv.cfg and
    # runs as the base interpreter, without the venv's packages
    (bindir / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (bindir / "python").chmod(0o755)
    (bindir / "se-gym").write_text(f"#!/bin/sh\nexec {sys.executable} -m se_gym.cli \"$@\"\n")
    (bindir / "se-gym").chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", PATH=f"{bindir}:{os.environ['PATH']}")
    body = body.replace("8000", str(_free_port()))
    python = str(VF_PYTHON) if name == "verifiers" else sys.executable
    cmd = [python, "-c", body] if lang == "python" else ["bash", "-c", "set -e\n" + body]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_readme_snippet_runs(name, tmp_path):
    if name not in SNIPPETS:
        pytest.fail(f"neither README.md nor docs/ has a '<!-- readme-test: {name} -->' snippet")
    if NEEDS[name]:
        need_module(NEEDS[name], f"the README's {name} snippet needs it")
    else:
        need(VF_PYTHON.exists(), f"verifiers' venv {VF_PYTHON} is missing (scripts/setup/integrations.sh makes it)")
    out = _run(name, tmp_path)
    # the snippet's last line is a comment showing what it prints: the run must print that
    last = SNIPPETS[name][1].strip().splitlines()[-1]
    assert last.startswith("# ") and last[2:] in out, out
