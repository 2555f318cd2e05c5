"""``se-gym validate`` on N minted libraries and the official files: wall time, CPU, the summary.

    python benchmarks/validate_suite.py [--libraries 10] [--official ../shared/sebench/single_test_dev.jsonl]
                                        [--sandboxes local docker ray] [--out DIR]

First builds (or reads from the cache) the built-in suite of every library, timed on its own: the
suites are what the env serves, built once per machine.  Then one ``validate`` run over all of them
(a fresh output folder: nothing resumed), timed, with the CPU of this process and of every process
below it (the sandbox workers, the programs they fork and their library servers, the second process,
a local Ray; Docker's containers are not below it and are not counted): on a shared machine the wall
time says little, the CPU says what two idle cores would need.  Prints the machine's load before and
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


class TreeCPU:
    """CPU seconds of every process below this one, sampled from /proc twice a second.

    ``getrusage(RUSAGE_CHILDREN)`` misses the sandbox: its workers run in bubblewrap and are killed,
    not waited for, so what their programs and library servers spent never reaches us.  Each
    process is counted with its own time and its waited-for children's (``cutime``); a child seen
    alive and later gone was waited for by its parent, so its last seen time is taken off again.
    Docker's containers are not below this process and are not counted."""

    def __init__(self, every_s: float = 0.5):
        import threading

        self.root, self.every_s, self.hz = os.getpid(), every_s, os.sysconf("SC_CLK_TCK")
        self.seen: dict[tuple[int, str], dict] = {}  # (pid, start time) -> last sample
        self.tick = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        procs = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # fields[0] is the state; ppid, utime, stime, cutime, cstime, starttime are fields 4, 14-17, 22
            procs[int(name)] = (int(fields[1]), sum(int(x) for x in fields[11:13]), sum(int(x) for x in fields[13:15]), fields[19])
        below, grew = {self.root}, True
        while grew:
            grew = False
            for pid, (ppid, *_rest) in procs.items():
                if ppid in below and pid not in below:
                    below.add(pid)
                    grew = True
        self.tick += 1
        for pid in below - {self.root}:
            ppid, own, kids, start = procs[pid]
            parent = procs.get(ppid)
            self.seen[(pid, start)] = {"own": own, "kids": kids, "tick": self.tick, "parent": (ppid, parent[3] if parent else "")}

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self._sample()

    def so_far(self) -> float:
        """CPU seconds of the processes below this one until now (sampled now)."""
        self._sample()
        total = sum(s["own"] + s["kids"] for s in self.seen.values())
        for s in self.seen.values():  # a child gone before its parent's last sample was counted in the parent's cutime
            parent = self.seen.get(s["parent"])
            if parent is not None and s["tick"] < parent["tick"]:
                total -= s["own"] + s["kids"]
        return total / self.hz

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.so_far()


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
    own0 = resource.getrusage(resource.RUSAGE_SELF)
    tree = TreeCPU()
    t0 = time.perf_counter()
    report = validate(config)
    wall = time.perf_counter() - t0
    own1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = own1.ru_utime + own1.ru_stime - own0.ru_utime - own0.ru_stime + tree.stop()
    load_after = os.getloadavg()
    print()
    print(screen(report, f"{out}/report.json"))
    print()
    for s in report["suites"]:
        print(f"  {s['spec']:60s} {s['tasks']:5d} tasks {s['wall_s']:7.1f} s")
    n = report["summary"]["tasks"]
    print(f"validate: {n} tasks, wall {wall:.0f} s ({1000 * wall / n:.1f} ms a task); CPU {cpu:.0f} s of this process and every "
          f"process below it ({1000 * cpu / n:.1f} ms a task; {cpu / 2:.0f} s if spread over 2 idle cores)")
    print(f"load (1, 5, 15 min) before {load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f}, "
          f"after {load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f}")
    return int(report["summary"]["exit_status"])


if __name__ == "__main__":
    sys.exit(main())
