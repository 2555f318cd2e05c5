"""The README's snippet for each training stack runs as written (in a fresh interpreter)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import REPO, need_module

README = (REPO / "README.md").read_text(encoding="utf-8")
SNIPPETS = dict(re.findall(r"<!-- readme-test: (\w+) -->\n```(?:python|bash)\n(.*?)\n```\n", README, flags=re.S))
NEEDS = {"verl": "pyarrow"}


def _run(name: str, tmp_path) -> str:
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", SNIPPETS[name]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_readme_snippet_runs(name, tmp_path):
    if name not in SNIPPETS:
        pytest.fail(f"README has no '<!-- readme-test: {name} -->' snippet")
    need_module(NEEDS[name], f"the README's {name} snippet needs it")
    out = _run(name, tmp_path)
    # the snippet's last line is a comment showing what it prints: the run must print that
    last = SNIPPETS[name].strip().splitlines()[-1]
    assert last.startswith("# ") and last[2:] in out, out
