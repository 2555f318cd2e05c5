"""``se-gym bench verify``: a report re-checked against its run folders (see :mod:`se_gym.bench.season`)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

from ..errors import CLIError
from .season import commitment, provenance, sha256_file


def verify(report: str | os.PathLike, run_dirs: Sequence[str] = (), secret: str | None = None) -> list[str]:
    """Re-check ``report`` (a ``.json`` written by ``se-gym bench report`` or a season) against its run
    folders: the leaderboard recomputed from them, the results digests, the memory digests, the agents'
    code (its files as they are now), and with ``secret`` the commitment and every seed's library.

    Args:
        report: the report file.
        run_dirs: the run folders (default: those the report names).
        secret: the season's secret, once revealed.

    Returns:
        One line per check, each starting ``ok`` or ``MISMATCH``.

    Raises:
        CLIError: the report is not a report, or a run folder is missing.
    """
    from .report import summarize_runs

    path = Path(report)
    if path.suffix != ".json":
        path = path.with_suffix(".json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CLIError(f"{report}: not a readable report ({exc})") from None
    if "provenance" not in data or "agents" not in data:
        raise CLIError(f"{path}: not a se-gym bench report (no provenance)")
    recorded = data["provenance"]
    dirs = list(run_dirs) or list(recorded)
    if len(dirs) != len(recorded):
        raise CLIError(f"the report was made from {len(recorded)} run folder(s); give as many (--run), in the same order")
    for d in dirs:
        if not (Path(d) / "run.json").is_file():
            raise CLIError(f"{d}: no run folder there (give it with --run)")
    lines = []
    summary = summarize_runs(dirs, prices=data.get("prices"))
    same = json.dumps(summary["agents"], sort_keys=True) == json.dumps(data["agents"], sort_keys=True)
    lines.append(("ok" if same else "MISMATCH") + ": the leaderboard recomputed from the run folders "
                 + ("equals the report's" if same else "differs from the report's"))
    now = provenance(dirs)
    for (old_dir, old), (new_dir, new) in zip(recorded.items(), now.items()):
        ok = old["results_sha256"] == new["results_sha256"]
        lines.append(("ok" if ok else "MISMATCH") + f": judged answers and results of {new_dir} " + ("unchanged" if ok else "changed since the report"))
        differ = 0
        for key, rec in old["agents"].items():
            cur = new["agents"].get(key)
            if cur is None:
                lines.append(f"MISMATCH: {key} of {new_dir} is missing")
                differ += 1
                continue
            for field in ("memory_at_freeze", "memory_after_test"):
                if rec[field] != cur[field]:
                    lines.append(f"MISMATCH: {key}: the {field.replace('_', ' ')} digest differs")
                    differ += 1
            code = rec.get("code") or {}
            if code.get("sha256"):
                source = Path(code.get("source", ""))
                current = sha256_file(source) if source.is_file() else None
                same_code = current == code["sha256"]
                lines.append(("ok" if same_code else "MISMATCH") + f": {key}: agent code {code['class']} "
                             + ("is the code that ran" if same_code else "differs from (or is missing) the code that ran"))
        if not differ:
            lines.append(f"ok: the memory digests of {len(old['agents'])} (seed, agent) pair(s) in {new_dir} match the report")
    if secret is not None:
        season = data.get("season")
        if season is None:
            lines.append("MISMATCH: --secret given, but the report is not a season's")
        else:
            ok = commitment(secret) == season
            lines.append(("ok" if ok else "MISMATCH") + ": the secret " + ("opens" if ok else "does not open") + " the season's commitment")
            if ok:
                lines += _check_libraries(dirs, secret)
    return lines


def _check_libraries(run_dirs: Sequence[str], secret: str) -> list[str]:
    """Each seed's library re-minted from the secret and compared with the one the run recorded."""
    from dataclasses import replace

    from .config import BenchConfig
    from .run import world

    out = []
    for d in run_dirs:
        config = json.loads((Path(d) / "run.json").read_text(encoding="utf-8"))["config"]
        for wpath in sorted(Path(d).glob("seed*/world.json")):
            recorded = json.loads(wpath.read_text(encoding="utf-8"))
            cfg = replace(BenchConfig(tasks=config["tasks"], out=str(d), progress=False), season=secret)
            fp = world(cfg, int(recorded["seed"]), tasks=False).library.fingerprint
            ok = fp == recorded.get("library_fingerprint")
            out.append(("ok" if ok else "MISMATCH") + f": seed {recorded['seed']} of {d}: the library minted from the secret "
                       + ("is the one tested" if ok else "is not the one tested"))
    return out


__all__ = ["verify"]
