"""The strict profile's library server (issue 31): what crossing the process boundary costs.

Prints figures (not a test):
  calls     per-call round trip of the client (socketpair, JSON frames) against the same calls in
            the old in-process library, and the frames' codec (json's C encoder and scanner called
            directly) against json.dumps/loads and marshal
  programs  per-program cost in a local sandbox: the server path against the in-process path
            (wall per program; CPU split into the answer's process and its library server)
  real      the parity_dev answers judged under strict, server path and in-process path in
            alternating rounds: rows/s, CPU per executed program split by process (judge; worker,
            zygote and the servers' exits; answers; library servers), library servers forked per
            executed program, and the answers each path rejects that sebench accepts
  compare   the parity_dev answers judged under strict by this tree and by another checkout of
            se-gym (--baseline PATH, e.g. main before a change), each round a fresh process per
            tree, the trees alternating: rows/s, CPU per executed program split by process,
            library servers forked per executed program (the baseline's: sampled), and the rows
            whose status differs

A worker keeps its library server from one program to the next (reset in between; a fresh one
after an error, a call-back, a refused request or a program that left it busy), so the server's
fork and exit are paid rarely; its CPU per program is what it reports for that program (from the
program's socket to its word that it is idle again, the reset included).  The machine is shared:
say the load with the figures, and compare the two paths only within one run (they alternate).

    OMP_NUM_THREADS=1 python benchmarks/library_server.py [calls] [programs] [real] [--rounds N]
    OMP_NUM_THREADS=1 python benchmarks/library_server.py compare --baseline /path/to/main-checkout [--rounds N]
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
    """The CPU of every program the pools run meanwhile, by process: the list it yields grows as
    results come back, one (answer's CPU seconds, its library server's, whether that server was
    forked for it: None from a worker that does not say) per program."""
    from se_gym.sandbox import pool

    seen: list = []
    original = pool.WorkerPool._result

    def record(self, reply, worker):
        r = original(self, reply, worker)
        seen.append((r.cpu_s or 0.0, r.server_cpu_s or 0.0, reply.get("server_forked")))
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
                got, dt, judge_cpu, children = _timed(j, items, seen)
            answer = sum(a for a, _, _ in seen)
            server_cpu = sum(s for _, s, _ in seen)
            forks = sum(bool(f) for _, _, f in seen)
            figures[server].append((len(rows) / dt, judge_cpu, children, answer, server_cpu, len(seen), forks))
            verdicts[server] = got
    writer.STRICT_SERVER = True
    gates.set_permissive(True)
    print(f"parity_dev under strict, {rounds} alternating rounds ({len(rows)} rows; CPU in ms per executed program)")
    for server, runs in figures.items():
        rates = ", ".join(f"{r[0]:.1f}" for r in runs)
        k = sum(r[5] for r in runs) or 1
        print(f"  {'server' if server else 'in-process':11s} rows/s: {rates}  judge_cpu={sum(r[1] for r in runs) / k * 1e3:.2f} "
              f"workers={sum(r[2] - r[3] - r[4] for r in runs) / k * 1e3:.2f} answers={sum(r[3] for r in runs) / k * 1e3:.2f} "
              f"library_servers={sum(r[4] for r in runs) / k * 1e3:.2f} server_forks={sum(r[6] for r in runs)}/{k}")
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


def _timed(j, items: list, seen: list, started=None) -> tuple:
    """The verdicts of ``items`` by judge ``j`` (its pool started first), the seconds they took, the
    judge's CPU seconds and its children's (workers, zygotes, programs, servers)."""
    j.judge(*items[1][:2])  # start the pool
    seen.clear()
    if started is not None:
        started()
    c0, p0 = _tree_cpu(), time.process_time()
    t = time.perf_counter()
    got = j.judge_many(items)
    dt = time.perf_counter() - t
    return got, dt, time.process_time() - p0, _tree_cpu() - c0


def _judge_once(data: Path) -> dict:
    """One strict judging of parity_dev by the se_gym this process imported (see compare)."""
    import threading

    from se_gym.judge import Judge
    from se_gym.library import official

    rows = [json.loads(line) for line in (data / "parity_dev.jsonl").read_text().splitlines() if line.strip()]
    items = [(r["response"], r["test_cases"], None, r["right_exe_result"].split("#")) for r in rows]
    lib = official(data / "api_doc.jsonl")
    servers: set = set()
    done = threading.Event()

    def sample():  # the library servers alive (a tree without server_forked: its forks, at least)
        while not done.wait(0.002):
            for pid in _tree_pids():
                try:
                    if Path(f"/proc/{pid}/comm").read_text().strip() == "se-gym-libsrv":
                        servers.add(pid)
                except OSError:
                    pass

    watcher = threading.Thread(target=sample, daemon=True)
    with program_cpu() as seen, Judge(lib, profile="strict") as j:
        got, dt, judge_cpu, children = _timed(j, items, seen, watcher.start)
        done.set()
        watcher.join()
    forks = [f for _, _, f in seen]
    return {"rows_s": len(rows) / dt, "judge_cpu": judge_cpu, "children_cpu": children, "programs": len(seen),
            "program_cpu": sum(a for a, _, _ in seen), "server_cpu": sum(s for _, s, _ in seen),
            "forks": sum(bool(f) for f in forks) if any(f is not None for f in forks) else None,
            "servers_seen": len(servers), "status": [v.status.value for v in got], "accepted": sum(v.passed for v in got)}


def _tree_pids() -> list[int]:
    me, parents = os.getpid(), {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    parents[int(name)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except OSError:
                pass
    out = []
    for pid in parents:
        p = parents.get(pid)
        while p and p != me:
            p = parents.get(p)
        if p == me:
            out.append(pid)
    return out


def compare(data: Path, baseline: Path, rounds: int) -> None:
    import subprocess

    here = Path(__file__).resolve().parents[1]
    trees = {"this tree": here, "baseline": baseline.resolve()}
    runs: dict = {k: [] for k in trees}
    for _ in range(rounds):
        for label, tree in trees.items():
            out = subprocess.run([sys.executable, __file__, "_once", "--tree", str(tree), "--data", str(data)],
                                 capture_output=True, text=True, check=True)
            runs[label].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"parity_dev under strict: this tree ({here}) against {baseline}, {rounds} alternating rounds "
          "(a fresh process each; CPU in ms per executed program)")
    for label, rs in runs.items():
        k = sum(r["programs"] for r in rs) or 1
        forks = "n/a" if any(r["forks"] is None for r in rs) else f"{sum(r['forks'] for r in rs)}/{k}"
        rates = ", ".join(f"{r['rows_s']:.1f}" for r in rs)
        print(f"  {label:9s} rows/s: {rates}  "
              f"judge={sum(r['judge_cpu'] for r in rs) / k * 1e3:.2f} "
              f"workers={sum(r['children_cpu'] - r['program_cpu'] - r['server_cpu'] for r in rs) / k * 1e3:.2f} "
              f"programs={sum(r['program_cpu'] for r in rs) / k * 1e3:.2f} "
              f"library_servers={sum(r['server_cpu'] for r in rs) / k * 1e3:.2f}  "
              f"server forks={forks}, servers seen={sum(r['servers_seen'] for r in rs)} (sampled), accepted={rs[-1]['accepted']}")
    a, b = runs["this tree"][-1]["status"], runs["baseline"][-1]["status"]
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    print(f"  status differs on {len(diff)} rows" + (": " + ", ".join(f"{i} ({a[i]} / {b[i]})" for i in diff[:20]) if diff else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", default=["calls", "programs"], choices=["calls", "programs", "real", "compare", "_once"])
    ap.add_argument("-n", type=int, default=2000, help="calls per figure (programs: n // 10 per round)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", default="/work/shared/sebench")
    ap.add_argument("--baseline", type=Path, help="compare: another checkout of se-gym (its repository root)")
    ap.add_argument("--tree", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if "_once" in args.parts:  # (compare's child: the se_gym of --tree, not the installed one)
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, args.tree)
        for name in [m for m in sys.modules if m == "se_gym" or m.startswith("se_gym.")]:
            del sys.modules[name]
        import se_gym

        assert Path(se_gym.__file__).resolve().is_relative_to(Path(args.tree).resolve()), se_gym.__file__
        print(json.dumps(_judge_once(Path(args.data))))
        return 0
    from se_gym.library import mint

    lib = mint(0)
    if "calls" in args.parts:
        calls(lib, args.n)
    if "programs" in args.parts:
        programs(lib, max(20, args.n // 10), args.rounds)
    if "real" in args.parts:
        real(Path(args.data), args.rounds)
    if "compare" in args.parts:
        if args.baseline is None:
            ap.error("compare needs --baseline PATH")
        compare(Path(args.data), args.baseline, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
