"""The compatibility matrix's resolved column in the test command: each stack at the release its extra
pins or resolves to on the index today, its smoke test (own loader, a right and a wrong answer, GRPO
steps for TRL) in a venv holding that release; and the venvs the adapter and docs tests run in hold
that same release, so a new upstream release cannot leave them testing an older one unnoticed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, need


def test_every_stack_has_a_requirement_from_the_extras_or_a_pin():
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import compat
    finally:
        sys.path.pop(0)
    assert set(compat.STACKS) == {"trl", "verl", "skyrl-gym", "openenv", "verifiers-0.3", "verifiers-0.4", "nemo-gym", "gem", "ray"}
    assert compat.requirement("verifiers-0.4").startswith("verifiers>=") and compat.requirement("verl").startswith("verl>=")
    with pytest.raises(SystemExit, match="unknown stack"):
        compat.main(["--only", "nope"])


@pytest.mark.timeout(2400)
def test_the_resolved_column_passes_on_todays_releases(tmp_path):
    probe = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "trl"], capture_output=True, text=True, timeout=120)
    need(probe.returncode == 0 and "Available versions" in probe.stdout, "the package index is not reachable (the column resolves releases there)")
    out, rows_json = tmp_path / "compat.md", tmp_path / "rows.json"
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run(["bash", str(REPO / "scripts" / "compat.sh"), "--dir", str(tmp_path / "venvs"), "--out", str(out),
                           "--json", str(rows_json)], cwd=REPO, env=env, capture_output=True, text=True, timeout=2300)
    rows = json.loads(rows_json.read_text()) if rows_json.exists() else []
    failed = {r["stack"]: r.get("detail") for r in rows if not r["ok"]}
    assert proc.returncode == 0, f"failed: {failed}\n" + (proc.stdout + proc.stderr)[-4000:]
    assert len(rows) == 9 and all(r["ok"] and r["ran"] == r["version"] for r in rows), rows
    # the adapter and docs tests' venvs hold the resolved release (nothing had to be built for it)
    built = [f"{r['stack']} {r['version']} ({r['venv']})" for r in rows if not r["venv"].startswith("reused")]
    assert not built, f"the extras now resolve to releases the test venvs lack: {built}; update scripts/setup/integrations.sh"
    assert "<!-- compat:resolved:begin -->" in out.read_text()


def test_a_failed_smoke_runs_once_more_and_the_table_says_why_the_first_failed(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import compat
    finally:
        sys.path.pop(0)
    tries = {"gem": [{"ok": False, "detail": "AssertionError: port taken", "seconds": 1.0},
                     {"ok": True, "version": "0.1.0", "detail": {"rewards": [1.0]}, "seconds": 1.0}],
             "ray": [{"ok": False, "detail": "ImportError: gone", "seconds": 1.0}] * 2}
    monkeypatch.setattr(compat, "resolved_version", lambda stack: {"gem": "0.1.0", "ray": "2.60.0"}[stack])
    monkeypatch.setattr(compat, "venv_for", lambda stack, version, root, fresh: (Path(sys.executable), "reused x/y"))
    monkeypatch.setattr(compat, "smoke", lambda stack, python, work: tries[stack].pop(0))
    rows = compat.run_column("resolved", ["gem", "ray"], tmp_path, fresh=False)
    assert [r["ok"] for r in rows] == [True, False] and not tries["gem"] and not tries["ray"]
    assert rows[0]["first_try"] == "AssertionError: port taken"
    out = capsys.readouterr().out
    assert "gem 0.1.0: first try failed, once more: AssertionError: port taken" in out
    assert "ray 2.60.0: FAILED" in out and "ImportError: gone" in out
    assert "second try; the first: AssertionError: port taken" in compat.table(rows, "2026-12-06")
