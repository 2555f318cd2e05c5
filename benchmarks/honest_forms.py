"""Honest forms, round 7 (issue 42): model-style honest answers (tests/_honest_round7_corpus.py)
judged under ``sebench`` and under ``strict`` with each task's reference and two secrets.

    PYTHONPATH=.:tests python benchmarks/honest_forms.py [--official-data DIR]

Prints, per group, how many answers each profile accepts, then every answer the two profiles judge
differently (strict under either secret), with strict's status and message: the honest forms
strict refuses (docs/security.md, Honest forms, round 7, lists why each left one stays refused).
The official answers run where ../shared/sebench (or --official-data) holds parity_dev.jsonl.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _gate_corpus import block  # noqa: E402
from _honest_round7_corpus import BUILTIN, OFFICIAL  # noqa: E402
from se_gym.judge import Judge  # noqa: E402
from se_gym.tasks.spec import load_task_spec  # noqa: E402

SECRETS = ("3c" * 32, "a7" * 32)


def judge_all(lib, items: list[tuple]) -> list[tuple]:
    """Per item: (sebench verdict, strict verdict under each secret)."""
    out = [Judge(lib, profile="sebench", workers=2)]
    with out[0] as judge:
        runs = [judge.judge_many(items)]
    for secret in SECRETS:
        with Judge(lib, profile="strict", workers=2) as judge:
            judge._dependence_secret = secret
            runs.append(judge.judge_many(items))
    return list(zip(*runs))


def report(title: str, names: list[str], verdicts: list[tuple]) -> None:
    sebench = sum(v[0].passed for v in verdicts)
    strict = sum(all(s.passed for s in v[1:]) for v in verdicts)
    print(f"{title}: {len(names)} answers; sebench accepts {sebench}, strict {strict}")
    for name, v in zip(names, verdicts):
        if any(s.passed != v[0].passed for s in v[1:]):
            s = next(s for s in v[1:] if s.passed != v[0].passed)
            print(f"  {'strict only' if s.passed else 'sebench only'}: {name}: {(s if not s.passed else v[0]).status.value} "
                  f"{(s if not s.passed else v[0]).detail[:200]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--official-data", default=None, help="folder of parity_dev.jsonl and api_doc.jsonl "
                    "(default: ../shared/sebench or $SE_GYM_SHARED/sebench)")
    args = ap.parse_args()
    tasks, lib = load_task_spec("builtin:0", "single_test", None, progress=False)
    by = {t.id.rsplit("/", 1)[1]: t for t in tasks}
    rows = [(f"[{group}] {name} ({num})", by[num].judge_item(block(lib.translate(code)))) for group, name, num, code in BUILTIN]
    report("built-in single_test", [n for n, _ in rows], judge_all(lib, [it for _, it in rows]))

    import os

    from _reward_redteam7_corpus import official_rows
    from se_gym.library import official

    root = Path(args.official_data) if args.official_data else Path(os.environ.get("SE_GYM_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "sebench"
    if not (root / "parity_dev.jsonl").exists():
        print(f"official answers skipped: no parity_dev.jsonl in {root}")
        return
    olib, data = official(root / "api_doc.jsonl"), official_rows(root / "parity_dev.jsonl")
    items = [(f"{name} (task {i})", (block(olib.translate(code)), data[i]["cases"], None, data[i]["expected"], data[i]["b_notolist"]))
             for name, i, code in OFFICIAL]
    report("official parity_dev", [n for n, _ in items], judge_all(olib, [it for _, it in items]))


if __name__ == "__main__":
    main()
