"""Where the strict profile's time goes, on real answers (issue 49): per process and per request.

Prints figures (not a test).  Two passes over parity_dev's model-written answers (b and d variants):

  cpu    warm judges, alternating rounds of the same batch: ``sebench``, ``strict`` (library server)
         and ``strict-inproc`` (SE_GYM_STRICT_SERVER=0).  CPU per executed program, split by process
         from /proc: the judge (its preparation of answers, its reading of results, and the rest: the
         pool's threads and the frames to the workers), the workers, the zygotes, the library
         servers (live ones and those reaped by their zygote) and the answers' processes.
  trace  one warm strict judge under ``strace -f`` (the answers' and servers' own system calls,
         so the counts are exact and the times are not): per executed program, the forks by
         process, the answer's and the server's reads and writes on their socket (a round trip is
         one request and one reply), the server's resets (a program served by a kept server) and
         the fresh servers forked, and context switches.

  reset  the library server's reset between two programs, timed alone in this process.
  stages each strict program's two processes (the harness's and the answer's) by stage, timed from
         inside them (a copy of this checkout's se_gym whose harness notes its CPU time and page
         faults at each stage): the medians over parity_dev's executed programs.

    OMP_NUM_THREADS=1 python benchmarks/strict_profile.py [cpu] [trace] [reset] [stages] [--rounds N] [--trace-n N]

The machine is shared: CPU per program is less disturbed by other load than wall time, but still
moves with it; compare the paths within one run only, and give the load with the figures.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from judge_throughput import all_up, items_of, library_mode, load_line, load_rows  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK")
REPO = Path(__file__).resolve().parents[1]


def _proc(pid: int) -> tuple[str, int, float, float] | None:
    """(comm, parent, own CPU s, reaped children's CPU s) of a process, or None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    comm = raw[raw.index(b"(") + 1 : raw.rindex(b")")].decode(errors="replace")
    fields = raw.rsplit(b")", 1)[1].split()
    return comm, int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK, (int(fields[13]) + int(fields[14])) / _TICK


def _descendants() -> dict[int, tuple[str, int, float, float]]:
    me, table = os.getpid(), {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (info := _proc(int(name))) is not None:
            table[int(name)] = info
    out = {}
    for pid, info in table.items():
        p = info[1]
        while p and p != me and p in table:
            p = table[p][1]
        if p == me:
            out[pid] = info
    return out


def classify(tree: dict[int, tuple[str, int, float, float]]) -> dict[str, float]:
    """CPU seconds by kind of process below us: workers (own), answers (reaped by the workers),
    zygotes (own), library servers (live ones' own, and those the zygotes reaped), bwrap."""
    out = collections.Counter()
    for pid, (comm, parent, own, reaped) in tree.items():
        if comm == "se-gym-zygote":
            out["zygote"] += own
            out["library server"] += reaped
        elif comm == "se-gym-libsrv":
            out["library server"] += own + reaped
        elif comm == "bwrap":
            out["bwrap"] += own
        elif tree.get(parent, ("",))[0] == "bwrap" or comm.startswith("python"):
            out["worker"] += own
            out["answer"] += reaped
    return out


def _profiled(judge_cls):
    """A Judge that sums its own CPU (this thread's) in preparing answers and in reading results."""

    class Profiled(judge_cls):
        prep_cpu = 0.0
        finish_cpu = 0.0

        def _prepare(self, index, item):
            t = time.thread_time()
            try:
                return super()._prepare(index, item)
            finally:
                self.prep_cpu += time.thread_time() - t

        def _finish_contained(self, p, r):
            t = time.thread_time()
            try:
                return super()._finish_contained(p, r)
            finally:
                self.finish_cpu += time.thread_time() - t

    return Profiled


def cpu_pass(data: Path, rounds: int) -> None:
    from se_gym.judge import Judge
    from se_gym.library import official

    rows = load_rows(data)
    items = items_of(rows)
    lib = official(data / "api_doc.jsonl")
    specs = [("sebench", "sebench", True), ("strict", "strict", True), ("strict-inproc", "strict", False)]
    judges, sums = {}, {name: collections.Counter() for name, _, _ in specs}
    try:
        for name, profile, server in specs:
            library_mode(server)
            judges[name] = _profiled(Judge)(lib, profile=profile)
            judges[name].judge_many(items[:64])  # started and warm
            all_up(judges[name])
        for r in range(rounds):
            for name, profile, server in specs:
                library_mode(server)
                j = judges[name]
                j.prep_cpu = j.finish_cpu = 0.0
                t0, c0, before = time.perf_counter(), time.process_time(), classify(_descendants())
                verdicts = j.judge_many(items)
                after = classify(_descendants())
                s = sums[name]
                s["wall"] += time.perf_counter() - t0
                s["judge"] += time.process_time() - c0
                s["judge: preparing answers"] += j.prep_cpu
                s["judge: reading results"] += j.finish_cpu
                for k in after:
                    s[k] += after[k] - before.get(k, 0.0)
                s["executed"] += sum(v.wall_s > 0 for v in verdicts)
                s["answers"] += len(items)
            print(f"round {r} done; {load_line()}", flush=True)
    finally:
        for j in judges.values():
            j.close()
        library_mode(True)
    kinds = ["judge: preparing answers", "judge: reading results", "judge: threads and frames", "worker", "zygote",
             "library server", "answer", "bwrap"]
    print(f"\nCPU per executed program (ms), {rounds} alternating rounds of {len(items)} answers "
          f"({sums['strict']['executed'] // rounds} executed per round under strict); {load_line()}")
    print("| process | " + " | ".join(n for n, _, _ in specs) + " |")
    print("|---|" + "---|" * len(specs))
    for k in kinds + ["total"]:
        cells = []
        for name, _, _ in specs:
            s = sums[name]
            if k == "judge: threads and frames":
                v = s["judge"] - s["judge: preparing answers"] - s["judge: reading results"]
            elif k == "total":
                v = s["judge"] + sum(s[x] for x in ("worker", "zygote", "library server", "answer", "bwrap"))
            else:
                v = s[k]
            cells.append(f"{v / max(1, s['executed']) * 1e3:.2f}")
        print(f"| {k} | " + " | ".join(cells) + " |")
    print("| verdicts/s (wall) | " + " | ".join(f"{sums[n]['answers'] / sums[n]['wall']:.0f}" for n, _, _ in specs) + " |")


# -- trace ---------------------------------------------------------------------------------------
_CHILD = """
import json, os, sys, time
sys.path.insert(0, {bench!r})
from judge_throughput import all_up, items_of, load_rows
from pathlib import Path
from se_gym.judge import Judge
from se_gym.library import official
data = Path({data!r})
items = items_of(load_rows(data))[: {n}]
with Judge(official(data / "api_doc.jsonl"), profile="strict") as j:
    j.judge_many(items[:32])  # started and warm
    all_up(j)
    os.stat("/se-gym-trace-begin") if os.path.exists("/se-gym-trace-begin") else None
    t0 = time.time()
    verdicts = j.judge_many(items)
    t1 = time.time()
print(json.dumps({{"t0": t0, "t1": t1, "executed": sum(v.wall_s > 0 for v in verdicts), "n": len(items)}}))
"""

_LINE = re.compile(rb"^(\d+\.\d+) (\w+)\((.*?)\)\s+= (-?\d+|\?)")


def trace_pass(data: Path, n: int) -> None:
    strace = shutil.which("strace")
    if strace is None:
        print("trace: strace is not installed here (apt-get install strace)")
        return
    out = Path(tempfile.mkdtemp(prefix="se-gym-strace-"))
    code = _CHILD.format(bench=str(Path(__file__).resolve().parent), data=str(data), n=n)
    calls = "clone,clone3,fork,vfork,execve,prctl,read,write,sendmsg,recvmsg,sendto,recvfrom,wait4,waitid,kill"
    try:
        p = subprocess.run([strace, "-f", "-ff", "-qq", "-ttt", "-e", f"trace={calls}", "-o", str(out / "t"),
                            sys.executable, "-c", code], capture_output=True, text=True, timeout=3600)
        if p.returncode != 0:
            print(f"trace: the traced judge failed: {p.stderr[-1000:]}")
            return
        meta = json.loads(p.stdout.strip().splitlines()[-1])
        report_trace(out, meta)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def report_trace(folder: Path, meta: dict) -> None:
    """Counts per executed program, by kind of process, in the traced batch's time window."""
    t0, t1, k = meta["t0"], meta["t1"], max(1, meta["executed"])
    kind: dict[int, str] = {}
    parent: dict[int, int] = {}
    counts: dict[int, collections.Counter] = {}
    first_call: dict[int, bytes] = {}
    for f in folder.glob("t.*"):
        pid = int(f.suffix[1:])
        c = counts.setdefault(pid, collections.Counter())
        for raw in f.read_bytes().splitlines():
            m = _LINE.match(raw)
            if not m:
                continue
            ts, call, args, ret = float(m.group(1)), m.group(2).decode(), m.group(3), m.group(4)
            first_call.setdefault(pid, raw.split(b" ", 1)[1])
            if call == "execve":  # (the judge's own, and bwrap's probe of /bin/true, name nothing)
                if args.split(b",", 1)[0].endswith(b'bwrap"'):
                    kind[pid] = "bwrap"
                elif b"worker.py" in args:
                    kind[pid] = "worker"
            if call == "prctl" and b"PR_SET_NAME" in args:
                kind[pid] = "zygote" if b"se-gym-zygote" in args else "library server" if b"se-gym-libsrv" in args else kind.get(pid, "")
            if call in ("clone", "clone3", "fork", "vfork") and ret.lstrip(b"-").isdigit() and int(ret) > 0:
                parent[int(ret)] = pid
                if t0 <= ts <= t1:
                    c["forks" if b"CLONE_THREAD" not in args else "threads"] += 1
            if t0 <= ts <= t1:
                c[call] += 1
    # the rest: a program's first traced call is the worker's child set-up (PR_SET_DUMPABLE: the
    # workers' children live in a PID namespace of their own, so fork's return value does not name
    # them here); a bwrap's helpers are its children that did not exec; the others are the judge's
    # threads (its own, its pool's)
    for pid in counts:
        if pid in kind:
            continue
        if first_call.get(pid, b"").startswith(b"prctl(PR_SET_DUMPABLE"):
            kind[pid] = "answer"
        elif kind.get(parent.get(pid, -1)) == "bwrap":
            kind[pid] = "bwrap"
        else:
            kind[pid] = "judge"
    by = collections.defaultdict(collections.Counter)
    procs = collections.Counter()
    for pid, c in counts.items():
        by[kind[pid]].update(c)
        if sum(c.values()):
            procs[kind[pid]] += 1
    print(f"\nstrace of one warm strict judge, {meta['n']} answers ({meta['executed']} executed); per executed program "
          f"(system calls in the batch's window; strace slows every call, so no times here)")
    cols = ["forks", "read", "write", "recvmsg", "sendmsg", "wait4", "kill"]
    print("| process | processes seen | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for name in ("judge", "worker", "zygote", "library server", "answer", "bwrap"):
        c = by.get(name, collections.Counter())
        print(f"| {name} | {procs[name]} | " + " | ".join(f"{c[x] / k:.1f}" for x in cols) + " |")
    servers = procs["library server"]
    print(f"library servers active in the window: {servers} (a fresh one per {k / max(1, servers):.1f} programs); "
          f"round trips per program, from the servers' reads: {(by['library server']['read'] + by['library server']['recvmsg']) / k:.1f}")


def reset_pass(data: Path, n: int = 2000) -> None:
    """The library server's reset between two programs, timed in this process (the server module of
    the strict library, loaded as its zygote loads it)."""
    import importlib.util

    from se_gym.library import official, writer

    writer.STRICT_SERVER = True
    folder = official(data / "api_doc.jsonl").materialize("strict", docs=False)
    path = next(folder.glob("*/_server.py"))
    spec = importlib.util.spec_from_file_location("se_gym_profile_server", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.load()
    module.reset()
    t = time.thread_time()
    for _ in range(n):
        module.reset()
    print(f"\nthe library server's reset(): {(time.thread_time() - t) / n * 1e6:.1f} us of CPU (in this process, {n} times; {load_line()})")


# -- stages ----------------------------------------------------------------------------------------
# where each strict program's two processes spend their CPU, timed from inside them: a copy of this
# checkout's se_gym whose harness writes, at each stage, its process's page faults so far (from
# /proc/self/stat, opened before the wall) and CPU time to stderr; the stages' medians over a batch
_MARK = """    __pf = __import__("os").open("/proc/self/stat", 0)
    __pr, __pw, __pt = __import__("os").pread, __import__("os").write, __import__("time").process_time_ns
    def _mark(tag):
        d = __pr(__pf, 1024, 0).rsplit(b")", 1)[1].split()
        __pw(2, ("@%%s %%s %%d\\n" %% (tag, d[7].decode(), __pt())).encode())
"""
# (anchor in the harness's text, mark put before it; "+" after it)
_MARKS = [
    ("    _write, _read, _close = os.write, os.read, os.close\n", "+" + _MARK + '    _mark("H0")\n'),
    ("    for m in MODS:  # what the answer imports", '    _mark("H1")\n'),
    ("    r = w = -1\n    try:\n        r, w = os.pipe()", '    _mark("H2")\n'),
    ("    status = _waitpid(pid, 0)[1]\n", '+    _mark("H3")\n'),
    ("    lines = []\n    for rec in recs:\n", '    _mark("H4")\n'),
    ("    _write, _read, _exit = _os.write, _os.read, _os._exit\n", "+" + _MARK + '    _mark("A0")\n'),
    ("    # what the worker left loaded and no answer needs", '    _mark("A1")\n'),
    ("    ours = {_id(c) for c in units if _type(c) is not _list}", '    _mark("A2")\n'),
    ("    wall(w, TAG, ours, ROOTS, _write, dumps, served)\n", '    _mark("A3")\n'),
    ('    g["__builtins__"] = safe  # (after the wall', '    _mark("A4")\n'),
    ("    # -- after the cases: nothing of the answer's runs any more", '    _mark("A5")\n'),
    ("    for flush in _flushes:", '    _mark("A6")\n'),
]
_STAGES = [("harness: its fork to its first line (the worker's set-up, the program's load)", None, "H0"),
           ("harness: start, compile, the answer's imports", "H0", "H1"), ("harness: the library client, pipe, fork", "H1", "H2"),
           ("harness: waiting for the answer (the fork's cost included)", "H2", "H3"),
           ("harness: checking the report, reading arrays", "H3", "H4"),
           ("answer: its filter (seccomp)", "A0", "A1"), ("answer: dropping modules", "A1", "A2"),
           ("answer: its builtins and import", "A2", "A3"), ("answer: the wall's set-up", "A3", "A4"),
           ("answer: the answer and its cases", "A4", "A5"), ("answer: its report", "A5", "A6")]
_STAGES_CHILD = """
import importlib, json, os, sys
sys.path.insert(0, {bench!r})
from pathlib import Path
from judge_throughput import all_up, items_of, load_rows
sys.path.insert(0, {tree!r})  # (the marked copy before this checkout, which se-gym's install finds first)
for m in [m for m in sys.modules if m == "se_gym" or m.startswith("se_gym.")]:
    del sys.modules[m]
importlib.invalidate_caches()
import se_gym
from se_gym.judge import Judge
from se_gym.library import official
assert se_gym.__file__.startswith({tree!r}), se_gym.__file__
data = Path({data!r})
items = items_of(load_rows(data))
with Judge(official(data / "api_doc.jsonl"), profile="strict", dependence=False) as j:
    j.judge_many(items[:32])
    all_up(j)
    ps = [p for p in (j._prepare(i, it) for i, it in enumerate(items)) if p.verdict is None]
    res = j._run([p.program for p in ps])
print(json.dumps([r.stderr or "" for r in res]))
"""


def stages_pass(data: Path) -> None:
    import statistics

    tmp = Path(tempfile.mkdtemp(prefix="se-gym-stages-"))
    try:
        shutil.copytree(REPO / "se_gym", tmp / "se_gym", ignore=shutil.ignore_patterns("__pycache__"))
        harness = tmp / "se_gym" / "judge" / "harness.py"
        text = harness.read_text()
        for anchor, mark in _MARKS:
            if text.count(anchor) != 1:
                print(f"stages: the harness has changed (no single {anchor.strip()[:50]!r}): update _MARKS")
                return
            text = text.replace(anchor, anchor + mark[1:] if mark.startswith("+") else mark + anchor)
        harness.write_text(text)
        code = _STAGES_CHILD.format(tree=str(tmp), bench=str(Path(__file__).resolve().parent), data=str(data))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=3600)
        if p.returncode != 0:
            print(f"stages: the judge failed: {p.stderr[-1500:]}")
            return
        outs = json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    per: dict[str, list] = collections.defaultdict(list)
    full = 0
    for err in outs:
        m = {}
        for line in err.splitlines():
            if line.startswith("@"):
                tag, faults, ns = line[1:].split()
                m[tag] = (int(faults), int(ns))
        if all(t in m for _, a, b in _STAGES for t in (a, b) if t):
            full += 1
            for name, a, b in _STAGES:
                start = m[a] if a else (0, 0)  # (a process's CPU clock starts at its fork)
                per[name].append((m[b][0] - start[0], (m[b][1] - start[1]) / 1e3))
    print(f"\nstrict's two processes by stage, timed from inside ({full} of {len(outs)} programs ran every stage: those "
          f"that reached their report); medians; {load_line()}")
    print("| stage | CPU us | page faults |\n|---|---|---|")
    for name, _, _ in _STAGES:
        v = per.get(name) or [(0, 0.0)]
        print(f"| {name} | {statistics.median(x[1] for x in v):.0f} | {statistics.median(x[0] for x in v):.0f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", help="which parts: any of cpu, trace, reset, stages")
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SE_GYM_SHARED", "/work/shared")) / "sebench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--trace-n", type=int, default=200, help="answers in the traced batch")
    args = ap.parse_args()
    unknown = sorted(set(args.parts) - {"cpu", "trace", "reset", "stages"})
    if unknown:
        ap.error(f"unknown part(s) {unknown}: choose from cpu, trace, reset, stages")
    args.parts = args.parts or ["cpu", "trace", "reset", "stages"]
    if "cpu" in args.parts:
        cpu_pass(args.data, args.rounds)
    if "trace" in args.parts:
        trace_pass(args.data, args.trace_n)
    if "reset" in args.parts:
        reset_pass(args.data)
    if "stages" in args.parts:
        stages_pass(args.data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
