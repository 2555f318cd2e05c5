"""Build the default built-in suite and print timings and the oracle's scores.

    python benchmarks/build_suite.py [--seed 0] [--judge]

Prints: build time (generation + in-process validation), counts, functions covered, cached
load time, and with --judge the share of library solutions the judge accepts per split and
profile (one judge_many call per split and profile).
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--judge", action="store_true", help="score the oracle through se_gym.judge too")
    args = ap.parse_args()
    os.environ.setdefault("SE_GYM_CACHE", tempfile.mkdtemp(prefix="se_gym_bench_"))
    from se_gym.tasks import build_suite, builtin_tasks

    t0 = time.perf_counter()
    suite = build_suite(args.seed, progress=True)
    build_s = time.perf_counter() - t0
    m = suite.manifest
    print(f"build (generate + in-process check + judge validation, both profiles): {build_s:.1f} s")
    print(f"counts: {dict(m['counts'])}; functions covered: {m['functions_covered']} / {m['functions_requested']}")
    print(f"regenerated: {{{', '.join(k + ': ' + str(v['regenerated']) for k, v in m['validation']['stats'].items())}}}")
    builtin_tasks("train", seed=args.seed)  # fills the cache
    t0 = time.perf_counter()
    for split in suite.splits:
        builtin_tasks(split, seed=args.seed)
    print(f"cached load of all three splits: {time.perf_counter() - t0:.2f} s")
    if args.judge:
        from se_gym.judge import Judge

        for profile in ("strict", "sebench"):
            for split, tasks in suite.splits.items():
                t0 = time.perf_counter()
                with Judge(suite.library, profile) as judge:
                    verdicts = judge.judge_many([(f"```python\n{t.library_solution}\n```", list(t.test_cases)) for t in tasks])
                ok = sum(v.reward == 1 for v in verdicts)
                print(f"judge oracle {profile:7s} {split:13s}: {ok}/{len(tasks)} = {ok / len(tasks):.1%} "
                      f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
