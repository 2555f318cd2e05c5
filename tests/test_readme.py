"""Every code block of README.md and of docs/**/*.md runs as written (python blocks in a fresh interpreter, bash blocks with
`se-gym` on PATH), each in an empty working directory.  A block that cannot run here says so, with the
reason, in the line just above it:

    <!-- readme-test: parse-only: needs a GPU and an 8B model -->

(then it is only parsed: compile() for python, `bash -n` for bash).  A block annotated with a stack's
name (`<!-- readme-test: NAME -->`) is run by that section's own test, tests/test_adapters_readme.py,
in the environment the stack needs (verifiers has a venv of its own); here it is only parsed, and the
test checks that its runner knows the name.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass

import pytest

from conftest import REPO

ANNOTATION = re.compile(r"<!--\s*readme-test:\s*(.*?)\s*-->")


@dataclass(frozen=True)
class Block:
    doc: str  # the file, relative to the checkout
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    parse_only: str | None  # the reason, when the block is only parsed
    runner: str | None = None  # NAME of a block that tests/test_adapters_readme.py runs

    @property
    def id(self) -> str:
        return f"{self.doc}:L{self.line}-{self.lang}"


def blocks(text: str, doc: str = "README.md") -> list[Block]:
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        fence = lines[i].strip()
        if lines[i].startswith("```") and fence in ("```python", "```bash"):
            start, body = i, []
            i += 1
            while i < len(lines) and lines[i].rstrip() != "```":
                body.append(lines[i])
                i += 1
            assert i < len(lines), f"{doc}:{start + 1}: code block never closed"
            note = ANNOTATION.search(lines[start - 1]) if start else None
            reason = None
            if note and note.group(1).startswith("parse-only"):
                reason = note.group(1).partition(":")[2].strip()
                assert reason, f"{doc}:{start}: parse-only needs a reason (parse-only: WHY)"
            runner = note.group(1) if note and reason is None else None
            out.append(Block(doc, start + 1, fence[3:], "\n".join(body) + "\n", reason, runner))
        i += 1
    return out


DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
README_BLOCKS = [b for d in DOCS for b in blocks(d.read_text(encoding="utf-8"), str(d.relative_to(REPO)))]


def test_the_readme_has_runnable_blocks():
    assert README_BLOCKS and any(b.parse_only is None for b in README_BLOCKS)


def _env(tmp_path) -> dict:
    shim = tmp_path / ".bin"
    shim.mkdir()
    (shim / "se-gym").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m se_gym.cli "$@"\n')
    (shim / "se-gym").chmod(0o755)
    return dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", PATH=f"{shim}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.mark.parametrize("block", README_BLOCKS, ids=lambda b: b.id)
def test_readme_block(block: Block, tmp_path):
    if block.runner is not None:
        from test_adapters_readme import NEEDS

        assert block.runner in NEEDS, f"{block.doc}:{block.line}: no test runs blocks named {block.runner!r}"
    if block.parse_only is not None or block.runner is not None:
        if block.lang == "python":
            compile(block.code, f"{block.doc}:{block.line}", "exec")
        else:
            proc = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr
        return
    work = tmp_path / "work"
    work.mkdir()
    cmd = [sys.executable, "-c", block.code] if block.lang == "python" else ["bash", "-euo", "pipefail", "-c", block.code]
    # its own process group, output to files: whatever the block leaves running in the background (a
    # server) is killed when the block's shell ends, and cannot hold the test open through a pipe
    with open(tmp_path / "out.txt", "w+") as out, open(tmp_path / "err.txt", "w+") as err:
        proc = subprocess.Popen(cmd, cwd=work, env=_env(tmp_path), stdout=out, stderr=err, text=True, start_new_session=True)
        try:
            proc.wait(timeout=1200)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    assert proc.returncode == 0, f"{block.doc}:{block.line} ({block.lang}) failed:\n{stdout[-1500:]}\n{stderr[-3000:]}"


def test_the_readme_stays_a_newcomers_page():
    """Results and histories live in docs/; the README is what a newcomer reads first."""
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO)))
def test_relative_links_resolve(doc):
    text = doc.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (doc.parent / target).exists(), f"{doc.relative_to(REPO)} links to {target}, which does not exist"


def test_the_cli_reference_is_current():
    from se_gym.cli_reference import reference

    assert (REPO / "docs" / "cli.md").read_text(encoding="utf-8") == reference(), \
        "docs/cli.md is stale: python -m se_gym.cli_reference > docs/cli.md"
