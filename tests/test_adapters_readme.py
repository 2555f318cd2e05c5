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
NEEDS = {"gem": None, "trl_cpu": "trl", "verl": "pyarrow", "skyrl": "skyrl_gym", "skyrl_rows": "skyrl_gym", "openenv": "openenv.core", "verifiers": None, "verifiers03": None}
# verifiers lives in venvs of its own (see scripts/setup/integrations.sh): 0.4.x, what the extra installs
# today, runs the README's snippet; 0.3.1 the classic API's in verifiers.md
VF03_VENV = Path(os.environ.get("SE_GYM_VERIFIERS_VENV", "/var/tmp/se-gym-venvs/verifiers"))
OWN_PYTHONS = {"gem": Path(os.environ.get("SE_GYM_GEM_VENV", str(VF03_VENV.parent / "gem"))) / "bin" / "python"}
VF_PYTHONS = {"verifiers": Path(os.environ.get("SE_GYM_VERIFIERS04_VENV", str(VF03_VENV.parent / "verifiers04"))) / "bin" / "python",
              "verifiers03": VF03_VENV / "bin" / "python"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(name: str, tmp_path, port: int | None = None) -> str:
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
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", PATH=f"{bindir}:{os.environ['PATH']}",
               OPENAI_API_KEY="none")
    body = body.replace("8000", str(port or _free_port()))
    python = str({**VF_PYTHONS, **OWN_PYTHONS}.get(name, sys.executable))
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
        own = {**VF_PYTHONS, **OWN_PYTHONS}[name]
        need(own.exists(), f"the {name} venv {own} is missing (scripts/setup/integrations.sh makes it)")
    if name in VF_PYTHONS:  # the snippets ask a model: a scripted server that answers each task right stands at the port
        from _openai_stub import openai_stub, solutions_script
        from se_gym.tasks import builtin_tasks

        with openai_stub(solutions_script(builtin_tasks("single_test", seed=0))) as url:
            out = _run(name, tmp_path, port=int(url.rsplit(":", 1)[1].split("/")[0]))
    else:
        out = _run(name, tmp_path)
    # the snippet's last line is a comment showing what it prints: the run must print that
    last = SNIPPETS[name][1].strip().splitlines()[-1]
    assert last.startswith("# ") and last[2:] in out, out
