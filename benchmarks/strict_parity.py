"""parity_dev under both profiles (issue 31): sebench's agreement with the official verdicts, and the
answers strict rejects that sebench accepts (with why), and the other way round.

    PYTHONPATH=. python benchmarks/strict_parity.py [--data /work/shared/sebench] [--dump FILE]

Prints figures (not a test).  ``--dump FILE``: also strict without the dependence check and strict with
it and each task's reference (benchmarks/dependence.py's), and every row's verdict under each (status,
SE-Bench code, reward, the check's findings) as JSON lines in FILE: two checkouts' files compared
row by row say which verdicts a change moved (issue 49: none may move without a reason).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from se_gym.judge import Judge
from se_gym.library import official


def _dump(path: Path, rows: list, items: list, lib, got: dict) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from dependence import _references  # (benchmarks/dependence.py: each task's reference)

    refs = _references(rows, lib)
    with Judge(lib, profile="strict", dependence=False) as judge:
        got["strict-nocheck"] = judge.judge_many(items)
    with Judge(lib, profile="strict") as judge:
        got["strict+refs"] = judge.judge_many([(*it, refs.get(r["task_index"])) for it, r in zip(items, rows)])
    with path.open("w") as f:
        for i in range(len(rows)):
            f.write(json.dumps({k: [v[i].status.value, v[i].sebench_code, v[i].reward, (v[i].dependence or {}).get("cases")]
                                for k, v in got.items()}) + "\n")
    for k, v in got.items():
        print(f"{k}: accepts {sum(x.passed for x in v)}/{len(rows)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("/work/shared/sebench"), help="folder of parity_dev.jsonl and api_doc.jsonl")
    ap.add_argument("--dump", type=Path, default=None, help="also strict with the check off and with references; each row's verdicts to this file")
    args = ap.parse_args()
    rows = [json.loads(line) for line in (args.data / "parity_dev.jsonl").read_text().splitlines() if line.strip()]
    items = [(r["response"], r["test_cases"], None, r["right_exe_result"].split("#")) for r in rows]
    lib = official(args.data / "api_doc.jsonl")
    got = {}
    for profile in ("sebench", "strict"):
        t = time.perf_counter()
        with Judge(lib, profile=profile) as judge:
            got[profile] = judge.judge_many(items)
        print(f"{profile}: accepts {sum(v.passed for v in got[profile])}/{len(rows)} ({time.perf_counter() - t:.1f} s)")
    if args.dump is not None:
        _dump(args.dump, rows, items, lib, got)
    agree = sum(v.sebench_code == r["verdict"] for v, r in zip(got["sebench"], rows))
    print(f"sebench agrees with the official verdicts on {agree}/{len(rows)} rows")
    for a, b in (("sebench", "strict"), ("strict", "sebench")):
        diff = [i for i, (x, y) in enumerate(zip(got[a], got[b])) if x.passed and not y.passed]
        print(f"accepted by {a}, rejected by {b}: {len(diff)}")
        for i in diff:
            v = got[b][i]
            print(f"  row {i} (task {rows[i]['task_index']}, {rows[i]['variant']}): {v.status.value} {v.detail[:120]!r}")


if __name__ == "__main__":
    main()
