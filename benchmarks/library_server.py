"""The strict profile's library server (issue 31): what crossing the process boundary costs.

Prints figures (not a test):
  calls     per-call round trip of the client (socketpair, JSON frames) against the same calls in
            the old in-process library, and the frames' codec (json's C encoder and scanner called
            directly) against json.dumps/loads and marshal
  programs  per-program cost in a local sandbox: the server path against the in-process path
            (wall per program; CPU split into the answer's process and its library server)
  real      the parity_dev answers judged under strict, server path and in-process path in
            alternating rounds: rows/s, CPU per executed program split by process (judge; worker,
            zygote and the servers' exits; answers; library servers), and the answers each path
            rejects that sebench accepts

A worker keeps its library server from one program to the next (reset in between; a fresh one
after an error, a call-back, a refused request or a program that left it busy), so the server's
fork and exit are paid rarely; its CPU per program is what it reports for that program (from the
program's socket to its word that it is idle again, the reset included).  The machine is shared:
say the load with the figures, and compare the two paths only within one run (they alternate).

    OMP_NUM_THREADS=1 python benchmarks/library_server.py [calls] [programs] [real] [--rounds N]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import marshal
import os
import sys
import time
from pathlib import Path


def _materialize(lib, server: bool) -> Path:
    from se_gym.library import writer

    old = writer.STRICT_SERVER
    writer.STRICT_SERVER = server
    try:
        return lib.materialize("strict", docs=False)
    finally:
        writer.STRICT_SERVER = old


def _import(path: Path, package: str, alias: str):
    """Import a written package under another name (both variants live in one process)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(alias, path / package / "__init__.py", submodule_search_locations=[str(path / package)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[alias] = mod
    spec.loader.exec_module(mod)
    return mod


def _per_call(fn, n: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6


def calls(lib, n: int) -> None:
    srv = _import(_materialize(lib, True), lib.package, "bench_server_lib")
    old = _import(_materialize(lib, False), lib.package, "bench_inproc_lib")
    print("per-call round trip (microseconds; client+server on this machine, in-process for comparison)")
    for name, mod in (("server", srv), ("in-process", old)):
        A = getattr(mod, lib.array_type)
        f = lambda k: getattr(mod, lib.names[k])
        small, big = A([1.0, 2.0, 3.0]), A(list(range(100_000)))
        row = {
            "sum(3)": _per_call(lambda: f("sum")(small), n),
            "add(3,1)": _per_call(lambda: f("add")(small, 1), n),
            "a+1": _per_call(lambda: small + 1, n),
            "a[0]": _per_call(lambda: small[0], n),
            "shape": _per_call(lambda: small.shape, n),
            "array(3)": _per_call(lambda: A([1, 2, 3]), n),
            "sum(1e5)": _per_call(lambda: f("sum")(big), max(10, n // 10)),
        }
        print(f"  {name:11s} " + "  ".join(f"{k}={v:.1f}" for k, v in row.items()))
    client = sys.modules["bench_server_lib._client"]
    a = getattr(srv, lib.array_type)(list(range(100_000)))
    print(f"  server      fetch of 1e5 ints (the harness's read) {_per_call(lambda: client.fetch(a), 20) / 1000:.2f} ms")
    print("frame bodies, encode+decode (microseconds)")
    dumps, loads = client._dumps, client._loads  # (the wire's codec)
    for label, msg in (("small call", ["call", [], "falekef", [{"h": 3}], {"axis": 0}]),
                       ("1e3 floats", ["ok", [i * 0.5 for i in range(1000)]]),
                       ("1e5 floats", ["ok", [i * 0.5 for i in range(100_000)]])):
        enc = json.JSONEncoder(separators=(",", ":")).encode
        k = 2000 if len(str(msg)) < 10_000 else 5
        best = lambda fn: min(_per_call(fn, k) for _ in range(5))  # (the least disturbed of 5 runs)
        w = best(lambda: loads(dumps(msg).encode()))
        j = best(lambda: json.loads(enc(msg).encode()))
        m = best(lambda: marshal.loads(marshal.dumps(msg)))
        print(f"  {label:11s} wire={w:.1f}  json.dumps/loads={j:.1f}  marshal={m:.1f}")


def programs(lib, n: int, rounds: int) -> None:
    from se_gym.sandbox.local import LocalSandbox

    prog = (f"import {lib.package}\na = {lib.qualified('array')}([1.0, 2.0, 3.0])\n"
            f"print({lib.qualified('sum')}(a), {lib.qualified('abs')}(a))\n")
    boxes = {}
    for server in (True, False):
        path = _materialize(lib, server)
        boxes[server] = LocalSandbox(pythonpath=[str(path)], workers=1,
                                     preload=["numpy", "numpy.ma", lib.package, f"{lib.package}.{lib.linalg}"])
    stats = {True: [0.0, 0.0, 0.0, 0], False: [0.0, 0.0, 0.0, 0]}
    try:
        for _ in range(rounds):
            for server, box in boxes.items():
                box.run([prog] * 5)
                t = time.perf_counter()
                results = box.run([prog] * n)
                s = stats[server]
                s[0] += time.perf_counter() - t
                s[1] += sum(r.cpu_s or 0 for r in results)
                s[2] += sum(r.server_cpu_s or 0 for r in results)
                s[3] += sum(r.ok for r in results)
    finally:
        for box in boxes.values():
            box.close()
    print(f"per-program cost, one worker, {rounds} alternating rounds of {n} programs (ms per program)")
    for server, (wall, cpu, scpu, ok) in stats.items():
        k = rounds * n
        print(f"  {'server' if server else 'in-process':11s} wall={wall / k * 1e3:.2f} answer_cpu={cpu / k * 1e3:.2f} "
              f"server_cpu={scpu / k * 1e3:.2f} ok={ok}/{k}")


def _tree_cpu() -> float:
    """CPU seconds of every live process below this one, with the children each has waited for
    (a worker's cutime holds its programs; a zygote's, its library servers)."""
    me, parents, cpu = os.getpid(), {}, {}
    tick = os.sysconf("SC_CLK_TCK")
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parents[int(name)] = int(fields[1])
        cpu[int(name)] = sum(int(x) for x in fields[11:15]) / tick
    total = 0.0
    for pid in cpu:
        p = parents.get(pid)
        while p and p != me:
            p = parents.get(p)
        if p == me:
            total += cpu[pid]
    return total


@contextlib.contextmanager
def program_cpu():
    """The CPU of every program the pools run meanwhile, by process: the list of (answer, its
    library server) seconds it yields grows as results come back."""
    from se_gym.sandbox import pool

    seen: list = []
    original = pool.WorkerPool._result

    def record(self, reply, worker):
        r = original(self, reply, worker)
        seen.append((r.cpu_s or 0.0, r.server_cpu_s or 0.0))
        return r

    pool.WorkerPool._result = record
    try:
        yield seen
    finally:
        pool.WorkerPool._result = original


def real(data: Path, rounds: int) -> None:
    from se_gym.library import official

    rows = [json.loads(line) for line in (data / "parity_dev.jsonl").read_text().splitlines() if line.strip()]
    items = [(r["response"], r["test_cases"], None, r["right_exe_result"].split("#")) for r in rows]
    lib = official(data / "api_doc.jsonl")
    with program_cpu() as seen:
        _real_rounds(rows, items, lib, seen, rounds)


def _real_rounds(rows, items, lib, seen, rounds) -> None:
    from se_gym.judge import Judge, gates
    from se_gym.library import writer

    with Judge(lib, profile="sebench") as j:
        accepted = [v.passed for v in j.judge_many(items)]
    figures = {True: [], False: []}
    verdicts = {}
    for _ in range(rounds):
        for server in (True, False):
            writer.STRICT_SERVER = server
            gates.set_permissive(server)  # (the strict gate follows where the library lives)
            seen.clear()
            with Judge(lib, profile="strict") as j:
                j.judge(*items[1][:2])  # start the pool
                seen.clear()
                c0, p0 = _tree_cpu(), time.process_time()
                t = time.perf_counter()
                got = j.judge_many(items)
                dt = time.perf_counter() - t
                judge_cpu = time.process_time() - p0
                children = _tree_cpu() - c0
            answer = sum(a for a, _ in seen)
            server_cpu = sum(s for _, s in seen)
            figures[server].append((len(rows) / dt, judge_cpu, children, answer, server_cpu, len(seen)))
            verdicts[server] = got
    writer.STRICT_SERVER = True
    gates.set_permissive(True)
    print(f"parity_dev under strict, {rounds} alternating rounds ({len(rows)} rows; CPU in ms per executed program)")
    for server, runs in figures.items():
        rates = ", ".join(f"{r[0]:.1f}" for r in runs)
        k = sum(r[5] for r in runs) or 1
        print(f"  {'server' if server else 'in-process':11s} rows/s: {rates}  judge_cpu={sum(r[1] for r in runs) / k * 1e3:.2f} "
              f"workers={sum(r[2] - r[3] - r[4] for r in runs) / k * 1e3:.2f} answers={sum(r[3] for r in runs) / k * 1e3:.2f} "
              f"library_servers={sum(r[4] for r in runs) / k * 1e3:.2f}")
    same = sum(a.passed == b.passed and a.status == b.status for a, b in zip(verdicts[True], verdicts[False]))
    print(f"  the two strict paths give the same status on {same}/{len(rows)} rows")
    for i, (a, b) in enumerate(zip(verdicts[True], verdicts[False])):
        if a.passed != b.passed or a.status != b.status:
            print(f"    row {i}: server {a.status.value} ({a.detail[:100]}); in-process {b.status.value} ({b.detail[:100]})")
    for server in (True, False):
        ok = [v.passed for v in verdicts[server]]
        lost = [(i, verdicts[server][i]) for i in range(len(rows)) if accepted[i] and not ok[i]]
        print(f"  {'server' if server else 'in-process':11s} accepts {sum(ok)}; sebench accepts {sum(accepted)}; "
              f"rejected here but accepted by sebench: {len(lost)}")
        for i, v in lost:
            print(f"    row {i} (task {rows[i]['task_index']}): {v.status.value}: {v.detail[:150]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", default=["calls", "programs"], choices=["calls", "programs", "real"])
    ap.add_argument("-n", type=int, default=2000, help="calls per figure (programs: n // 10 per round)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", default="/work/shared/sebench")
    args = ap.parse_args()
    from se_gym.library import mint

    lib = mint(0)
    if "calls" in args.parts:
        calls(lib, args.n)
    if "programs" in args.parts:
        programs(lib, max(20, args.n // 10), args.rounds)
    if "real" in args.parts:
        real(Path(args.data), args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
