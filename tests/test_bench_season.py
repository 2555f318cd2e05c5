"""`se-gym bench --season SECRET` and `se-gym bench verify` (issue 46): the libraries minted from a seed
derived from the organiser's secret, which reaches neither an agent (everything a spying agent is
given is searched for it) nor the published report; the report re-checked against its run folder."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from se_gym.bench.season import commitment, season_seed

ROOT = Path(__file__).resolve().parents[1]
AGENTS = str(ROOT / "tests" / "bench_agents.py")
EXAMPLE = str(ROOT / "examples" / "bench_my_agent.py") + ":CallMemoryAgent"
SECRET = "organisers-secret-5f1c9a7e2b"


def _cli(*argv, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "se_gym.cli", *argv], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, cwd=cwd)


def test_a_season_hides_its_seed_from_the_agents_and_the_report_and_verify_rechecks_it(tmp_path):
    out, spy = tmp_path / "season", tmp_path / "spy.txt"
    done = _cli("bench", "--season", SECRET, "--agent", f"{AGENTS}:SpyAgent", "--agent", EXAMPLE, "--tasks", "miniature", "--no-progress",
                "--seeds", "0", "1", "--out", str(out), env={"BENCH_SPY_FILE": str(spy)}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    seeds = [season_seed(SECRET, str(i)) for i in (0, 1)]
    secrets = [SECRET] + [str(s) for s in seeds] + [str(100 + s) for s in seeds]  # the miniature mints library 100 + seed
    seen = spy.read_text()
    assert "Task: " in seen and "train" in seen  # the spy saw observations and trajectories
    for s in secrets:
        assert s not in seen, s  # not in its options, observations, trajectories, argv or environment
    report_md, report_json = out / "season_report.md", out / "season_report.json"
    public = report_md.read_text() + report_json.read_text() + done.stdout
    for s in secrets:
        assert s not in public, s
    assert commitment(SECRET) in public and "SpyAgent" in public and "**Season**" in report_md.read_text()
    for path in out.rglob("*.json*"):  # the organiser's run folder holds the commitment, not the secret
        assert SECRET not in path.read_text(errors="replace"), path
    # the results are real: a memory that answers held-out questions of a library nobody saw before
    summary = json.loads(report_json.read_text())
    assert summary["agents"]["CallMemoryAgent"]["single_test"]["accuracy"] >= 0.5 and summary["season"] == commitment(SECRET)

    ok = _cli("bench", "verify", str(report_json), "--secret", SECRET)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "opens the season's commitment" in ok.stdout and ok.stdout.count("the library minted from the secret is the one tested") == 2
    wrong = _cli("bench", "verify", str(report_json), "--secret", "not-the-secret")
    assert wrong.returncode == 1 and "does not open" in wrong.stdout

    # tampering with one judged answer is caught
    test_file = out / "seed1" / "CallMemoryAgent" / "test.jsonl"
    lines = [json.loads(x) for x in test_file.read_text().splitlines()]
    row = next(r for ln in lines for r in ln["rows"] if r["reward"] == 0.0)
    row.update(reward=1.0, status="passed")
    test_file.write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    bad = _cli("bench", "verify", str(report_json))
    assert bad.returncode == 1 and "MISMATCH: the leaderboard recomputed" in bad.stdout and "changed since the report" in bad.stdout


def test_verify_catches_changed_agent_code_and_memory(tmp_path):
    agent_file = tmp_path / "my_agent.py"
    agent_file.write_text(Path(ROOT / "examples" / "bench_my_agent.py").read_text())
    out = tmp_path / "run"
    done = _cli("bench", "--agent", f"{agent_file}:CallMemoryAgent", "--tasks", "miniature", "--no-progress", "--limit", "4", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    report = tmp_path / "board.md"
    assert _cli("bench", "report", str(out), "--out", str(report)).returncode == 0
    assert _cli("bench", "verify", str(report.with_suffix(".json"))).returncode == 0
    agent_file.write_text(agent_file.read_text() + "\n# changed after the run\n")
    freeze = out / "seed0" / "CallMemoryAgent" / "result.json"
    result = json.loads(freeze.read_text())
    result["freeze"]["digest"] = "0" * 64
    freeze.write_text(json.dumps(result))
    bad = _cli("bench", "verify", str(report.with_suffix(".json")))
    assert bad.returncode == 1
    assert "differs from (or is missing) the code that ran" in bad.stdout and "memory at freeze digest differs" in bad.stdout
