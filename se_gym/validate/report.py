"""The report of ``se-gym validate``: one record per task, the run's own checks, and a summary.

Schema (``schema: "se-gym/validate-report"``, ``schema_version: 1``)::

    {"schema", "schema_version", "se_gym", "severity_policy": {"version", "rules": {"CHECK/WHAT": SEVERITY}},
     "config": {...}, "machine": {"cpus", "load_before", "load_after"},
     "suites": [{"spec", "library", "splits", "tasks", "wall_s"}],
     "run_checks": [{"check", "subject", "result", "severity"?, "detail"?}],
     "tasks": [{"suite", "id", "split", "hash", "checks": {CHECK: {"result", "severity"?, "detail"?}}}],
     "summary": {"tasks", "checks": {CHECK: {"pass", "fail", "not_run"}}, "severity": {"error", "warning", "info"},
                 "errors", "exit_status", "wall_s"}}

A result is ``pass``, ``fail`` or ``not_run``; a fail or not_run carries its severity from the policy
(:data:`se_gym.validate.checks.SEVERITY`).  The exit status is 1 when anything has severity ``error``.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping

from .checks import CHECKS, POLICY_VERSION, RESULTS, SEVERITIES, SEVERITY

SCHEMA = "se-gym/validate-report"
SCHEMA_VERSION = 1


def task_record(suite: str, task: Any, checks: Mapping[str, Any]) -> dict[str, Any]:
    return {"suite": suite, "id": task.id, "split": task.split, "hash": task.hash,
            "checks": {name: checks[name].to_json() for name in CHECKS if name in checks}}


def run_record(check: str, subject: str, result: Any) -> dict[str, Any]:
    return {"check": check, "subject": subject, **result.to_json()}


def summarize(tasks: Iterable[Mapping[str, Any]], run_checks: Iterable[Mapping[str, Any]], wall_s: float) -> dict[str, Any]:
    by_check: dict[str, Counter] = {c: Counter() for c in CHECKS}
    severity: Counter = Counter()
    n = 0
    for rec in tasks:
        n += 1
        for name, r in rec["checks"].items():
            by_check.setdefault(name, Counter())[r["result"]] += 1
            if r.get("severity"):
                severity[r["severity"]] += 1
    runs: dict[str, Counter] = {}
    for rec in run_checks:
        runs.setdefault(rec["check"], Counter())[rec["result"]] += 1
        if rec.get("severity"):
            severity[rec["severity"]] += 1
    errors = severity["error"]
    return {
        "tasks": n,
        "checks": {c: {r: by_check[c][r] for r in RESULTS} for c in by_check},
        "run_checks": {c: {r: runs[c][r] for r in RESULTS} for c in runs},
        "severity": {s: severity[s] for s in SEVERITIES},
        "errors": errors,
        "exit_status": 1 if errors else 0,
        "wall_s": round(wall_s, 1),
    }


def policy() -> dict[str, Any]:
    return {"version": POLICY_VERSION, "rules": {f"{c}/{w}": s for (c, w), s in SEVERITY.items()}}


def defects(report: Mapping[str, Any], limit: int = 10) -> list[str]:
    """One line per defect (run checks first, then tasks; errors before warnings), at most ``limit``."""
    lines: list[tuple[int, str]] = []
    order = {s: i for i, s in enumerate(SEVERITIES)}
    for rec in report.get("run_checks", ()):
        if rec.get("severity") in ("error", "warning"):
            lines.append((order[rec["severity"]], f"{rec['severity']:7s} {rec['check']} [{rec['subject']}]: {rec.get('detail', '')}"))
    for rec in report.get("tasks", ()):
        for name, r in rec["checks"].items():
            if r.get("severity") in ("error", "warning"):
                lines.append((order[r["severity"]], f"{r['severity']:7s} {name} [{rec['id']}]: {r.get('detail', '')}"))
    lines.sort(key=lambda x: x[0])
    return [text for _, text in lines[:limit]]


def screen(report: Mapping[str, Any], path: str = "") -> str:
    """The one-screen summary: per check the results, the run's own checks, the first defects."""
    s = report["summary"]
    suites = report.get("suites", [])
    head = (f"se-gym validate: {s['tasks']} tasks in {len(suites)} suite(s), {s['wall_s']:.0f} s "
            f"(load {report.get('machine', {}).get('load_before', ['?'])[0]}, {report.get('machine', {}).get('cpus', '?')} CPUs)")
    lines = [head, "", f"{'check':12s} {'pass':>7s} {'fail':>7s} {'not run':>8s}"]
    for name, counts in s["checks"].items():
        lines.append(f"{name:12s} {counts['pass']:7d} {counts['fail']:7d} {counts['not_run']:8d}")
    notes = sorted({(name, r.get("detail", "")) for rec in report.get("tasks", ()) for name, r in rec["checks"].items()
                    if r["result"] == "not_run" and r.get("severity") == "info"})
    for name, detail in notes[:3]:
        lines.append(f"  {name}: not run ({detail})")
    lines.append("")
    quiet: dict[str, list[str]] = {}  # passing run checks other than containment: counted, not listed
    for rec in report.get("run_checks", ()):
        if rec["result"] == "pass" and rec["check"] != "containment":
            quiet.setdefault(rec["check"], []).append(rec["subject"].rsplit(": ", 1)[-1])
            continue
        mark = {"pass": "ok", "fail": "FAIL", "not_run": "not run"}[rec["result"]]
        lines.append(f"{rec['check']:12s} {rec['subject']:28s} {mark}{': ' + rec['detail'] if rec.get('detail') and rec['result'] != 'pass' else ''}")
    for check, subjects in quiet.items():
        kinds = ", ".join(sorted(set(subjects)))
        lines.append(f"{check:12s} {len(subjects)} run checks ok ({kinds})")
    sev = s["severity"]
    lines += ["", f"defects: {sev['error']} error, {sev['warning']} warning, {sev['info']} info"]
    per_suite = Counter(rec["suite"] for rec in report.get("tasks", ()) for r in rec["checks"].values() if r.get("severity") == "error")
    if len(suites) > 1 and per_suite:
        lines.append("  errors by suite: " + ", ".join(f"{name} {n}" for name, n in per_suite.most_common()))
    lines += ["  " + (d if len(d) <= 160 else d[:159] + "…") for d in defects(report)]
    if path:
        lines.append(f"report: {path}")
    lines.append(f"exit status {s['exit_status']}")
    return "\n".join(lines)
