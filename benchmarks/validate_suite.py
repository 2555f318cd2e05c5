"""``se-gym validate`` on N minted libraries and the official files: wall time, CPU, the summary.

    python benchmarks/validate_suite.py [--libraries 10] [--official ../shared/sebench/single_test_dev.jsonl]
                                        [--sandboxes local docker ray] [--out DIR]

First builds (or reads from the cache) the built-in suite of every library, timed on its own: the
suites are what the env serves, built once per machine.  Then one ``validate`` run over all of them
(a fresh output folder: nothing resumed), timed, with this process's CPU and that of its waited-for
children (the sandbox workers and the programs they fork, the second process; Docker's containers
and Ray's workers are not children and are not counted).  Prints the machine's load before and
after (the machine may be shared), the one-screen summary and the time per suite.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path


def cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--libraries", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0, help="the first library's seed")
    shared = Path(os.environ.get("SE_GYM_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")
    ap.add_argument("--official", default=str(shared / "sebench" / "single_test_dev.jsonl"),
                    help="an official task file (skipped when absent; default: $SE_GYM_SHARED/sebench/single_test_dev.jsonl)")
    ap.add_argument("--sandboxes", nargs="+", default=["local", "docker", "ray"])
    ap.add_argument("--out", default=None, help="the report folder (default: a fresh temporary one)")
    args = ap.parse_args()

    from se_gym.tasks import builtin_tasks
    from se_gym.validate import ValidateConfig, validate
    from se_gym.validate.report import screen

    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
    t0 = time.perf_counter()
    for seed in range(args.seed, args.seed + args.libraries):
        t1 = time.perf_counter()
        builtin_tasks("train", seed=seed, progress=False)
        print(f"suite of library seed:{seed}: {time.perf_counter() - t1:.1f} s (built or read from the cache)", flush=True)
    print(f"suites ready: {time.perf_counter() - t0:.1f} s")

    specs = [f"builtin:{args.seed}"]
    if args.official and Path(args.official).is_file():
        specs.append(f"sebench:{args.official}")
    else:
        print(f"(no official file at {args.official}: skipped)")
    out = args.out or tempfile.mkdtemp(prefix="se-gym-validate-bench-")
    config = ValidateConfig(specs=tuple(specs), libraries=args.libraries, sandboxes=tuple(args.sandboxes), out=out, restart=True)
    load_before = os.getloadavg()
    c0, t0 = cpu_s(), time.perf_counter()
    report = validate(config)
    wall, cpu = time.perf_counter() - t0, cpu_s() - c0
    load_after = os.getloadavg()
    print()
    print(screen(report, f"{out}/report.json"))
    print()
    for s in report["suites"]:
        print(f"  {s['spec']:60s} {s['tasks']:5d} tasks {s['wall_s']:7.1f} s")
    n = report["summary"]["tasks"]
    print(f"validate: {n} tasks, wall {wall:.0f} s ({1000 * wall / n:.1f} ms a task), CPU {cpu:.0f} s of this process and its "
          f"waited-for children ({1000 * cpu / n:.1f} ms a task; {cpu / 2:.0f} s on 2 cores if nothing else ran)")
    print(f"load (1, 5, 15 min) before {load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f}, "
          f"after {load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f}")
    return int(report["summary"]["exit_status"])


if __name__ == "__main__":
    sys.exit(main())
