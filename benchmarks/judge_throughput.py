"""Judge throughput on the official parity rows (prints figures; not a test).

    OMP_NUM_THREADS=1 python benchmarks/judge_throughput.py [--profile sebench|strict] [--workers N]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/work/shared/sebench")
    ap.add_argument("--profile", default="sebench", choices=("sebench", "strict"))
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    data = Path(args.data)
    if not (data / "parity_dev.jsonl").exists():
        print(f"no parity data in {data}", file=sys.stderr)
        return 1
    from se_gym.judge import Judge
    from se_gym.library import official

    rows = [json.loads(line) for line in (data / "parity_dev.jsonl").read_text().splitlines() if line.strip()]
    items = [(r["response"], r["test_cases"], None, r["right_exe_result"].split("#")) for r in rows]
    with Judge(official(data / "api_doc.jsonl"), profile=args.profile, workers=args.workers) as j:
        j.judge(*items[1][:2])  # start the pool
        t = time.perf_counter()
        verdicts = j.judge_many(items)
        dt = time.perf_counter() - t
    ran = sum(v.wall_s > 0 for v in verdicts)
    agree = sum(v.sebench_code == r["verdict"] for v, r in zip(verdicts, rows))
    print(f"profile={args.profile} rows={len(rows)} executed={ran} seconds={dt:.2f} rows/s={len(rows) / dt:.1f} "
          f"executed/s={ran / dt:.1f} agree={agree}/{len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
