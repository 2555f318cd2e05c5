"""Honest forms, rounds 7, 8 and 10 (issue 42): model-style honest answers (tests/_honest_round7_corpus.py,
tests/_honest_round8_corpus.py, tests/_honest_round10_corpus.py) judged under ``sebench`` and under
``strict`` with each task's reference and two secrets.

    PYTHONPATH=.:tests python benchmarks/honest_forms.py [--official-data DIR] [--round 7|8|10]

Prints, per group, how many answers each profile accepts, then every answer the two profiles judge
differently (strict under either secret), with strict's status and message: the honest forms
strict refuses (docs/security.md, Honest forms, rounds 7 and 8, list why each left one stays refused).
The official answers run where ../shared/sebench (or --official-data) holds parity_dev.jsonl.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _gate_corpus import block  # noqa: E402
from _honest_round7_corpus import BUILTIN, OFFICIAL  # noqa: E402
from _honest_round8_corpus import BUILTIN as BUILTIN8  # noqa: E402
from _honest_round8_corpus import OFFICIAL as OFFICIAL8  # noqa: E402
from _honest_round10_corpus import BUILTIN as BUILTIN10  # noqa: E402
from _honest_round10_corpus import OFFICIAL as OFFICIAL10  # noqa: E402
from se_gym.judge import Judge  # noqa: E402
from se_gym.tasks.spec import load_task_spec  # noqa: E402

SECRETS = ("3c" * 32, "a7" * 32)


def translated(lib, code: str) -> str:
    """``code`` translated to ``lib``, with round 10's placeholders for what the translator does not
    write (``LIBNAME("f")``: the quoted library name of ``np.f``; ``LIBATTR("f")``: that name;
    ``LIBSUB``: the linalg submodule; ``LIBPKG``: the package)."""
    import re

    text, mapping = lib.translate(code), lib.numpy_mapping()
    text = re.sub(r"""LIBNAME\(["']([\w.]+)["']\)""", lambda m: repr(mapping["np." + m.group(1)].rsplit(".", 1)[1]), text)
    text = re.sub(r"""LIBATTR\(["']([\w.]+)["']\)""", lambda m: mapping["np." + m.group(1)].rsplit(".", 1)[1], text)
    return text.replace("LIBSUB", mapping["np.linalg.det"].split(".")[1]).replace("LIBPKG", lib.package)


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


def builtin_items(rows: list[tuple]) -> list[tuple[str, tuple]]:
    """(name, library, judge item) per row ``(group, name, seed, split, number, code)``, each
    translated to its own seed's library (loaded once per seed and split)."""
    suites: dict[tuple, tuple] = {}
    out = []
    for group, name, seed, split, num, code in rows:
        if (seed, split) not in suites:
            tasks, lib = load_task_spec(f"builtin:{seed}", split, None, progress=False)
            suites[seed, split] = ({t.id.rsplit("/", 1)[1]: t for t in tasks}, lib)
        by, lib = suites[seed, split]
        out.append((f"[{group}] {name} (s{seed}/{split}/{num})", lib, by[num].judge_item(block(translated(lib, code)))))
    return out


def judge_builtin(title: str, rows: list[tuple]) -> None:
    """Judge built-in rows per library (one judge per library) and report them together."""
    items = builtin_items(rows)
    names, verdicts = [n for n, _, _ in items], [None] * len(items)
    for lib in {id(lib): lib for _, lib, _ in items}.values():
        at = [i for i, (_, lb, _) in enumerate(items) if lb is lib]
        for i, v in zip(at, judge_all(lib, [items[i][2] for i in at])):
            verdicts[i] = v
    report(title, names, verdicts)


def official_data(arg: str | None):
    """(official library, rows by task index), or None where parity_dev.jsonl is absent."""
    import os

    from _reward_redteam7_corpus import official_rows
    from se_gym.library import official

    root = Path(arg) if arg else Path(os.environ.get("SE_GYM_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "sebench"
    if not (root / "parity_dev.jsonl").exists():
        print(f"official answers skipped: no parity_dev.jsonl in {root}")
        return None
    return official(root / "api_doc.jsonl"), official_rows(root / "parity_dev.jsonl")


def judge_official(title: str, rows: list[tuple], olib, data) -> None:
    items = [(f"{name} (task {i})", (block(translated(olib, code)), data[i]["cases"], None, data[i]["expected"], data[i]["b_notolist"]))
             for name, i, code in rows]
    report(title, [n for n, _ in items], judge_all(olib, [it for _, it in items]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--official-data", default=None, help="folder of parity_dev.jsonl and api_doc.jsonl "
                    "(default: ../shared/sebench or $SE_GYM_SHARED/sebench)")
    ap.add_argument("--round", type=int, choices=(7, 8, 10), default=None, help="only this round's answers (default: all)")
    args = ap.parse_args()
    if args.round in (None, 7):  # (round 7's rows: seed 0's single_test, no seed or split of their own)
        judge_builtin("round 7, built-in single_test", [(g, name, 0, "single_test", num, code) for g, name, num, code in BUILTIN])
    if args.round in (None, 8):
        judge_builtin("round 8, built-in seeds 1-5 (single_test, multiple_test, train)", BUILTIN8)
    if args.round in (None, 10):
        judge_builtin("round 10, built-in seeds 6-9 (single_test, multiple_test, train)", BUILTIN10)
    official = official_data(args.official_data)
    if official is None:
        return
    if args.round in (None, 7):
        judge_official("round 7, official parity_dev", OFFICIAL, *official)
    if args.round in (None, 8) and OFFICIAL8:
        judge_official("round 8, official parity_dev", OFFICIAL8, *official)
    if args.round in (None, 10):
        judge_official("round 10, official parity_dev", OFFICIAL10, *official)


if __name__ == "__main__":
    main()
