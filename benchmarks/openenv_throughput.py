"""The OpenEnv server (`se-gym serve openenv`) at N concurrent sessions, plain and under chaos,
beside `gym.make_vec("SEBench-v0", num_envs=N)` in the same run: episodes/s, p50/p99 step latency
and memory per session.

    python benchmarks/openenv_throughput.py [--sessions 16,64,256,1024] [--seconds 15] [--url URL]

Every judged episode is one oracle answer (max_turns=1: reset, one step, reward 1.0 checked).
Each OpenEnv measurement runs 5 + N/64 s of warm-up (connecting N sessions, their first
episodes), then ``--seconds``; its figures count the steps answered after the warm-up.
Under chaos (the chaos test's clients, tests/_openenv_chaos.py) a tenth of the episodes is
cancelled mid-step, a tenth dropped mid-step (connection aborted) and a tenth malformed (then
answered right on the same session); episodes/s and latencies count the judged episodes only,
and every wrong verdict, error reply or failed connection is an error.  Step latency is the
client's send of a step to its reply; for make_vec it is the time of one vector step (N answers).

Queueing bound: N clients that each wait for their verdict (a closed loop) wait N / X on
average at throughput X (Little's law); the issue's goal is p99 <= N / X_judge + 0.5 s, with
X_judge the make_vec throughput at the same N (the judge alone, no server).

Memory per session: the server's RSS with N idle sessions open (connected and reset) less its
RSS with none, over N (its env, socket and buffers); for make_vec, the Python memory
(tracemalloc) that building and resetting the vector env takes, over N (it includes one copy of
the tasks and library, which the server has before its first session).

The server runs in its own process with its own sandbox pool (or is the one already running at
--url; then no memory, thread or log figures); the vector env runs in this process, after the
server's measurements, so the two never share the cores.  Needs the 'openenv' extra.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import gymnasium as gym  # noqa: E402

import se_gym  # noqa: E402,F401
from _openenv_chaos import Mix, client, descendants, judged_round, oracle, rss_mb, run_chaos, threads  # noqa: E402
from se_gym.tasks import builtin_tasks  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> dict:
    import json

    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def start_server(max_sessions: int, log) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "se_gym.cli", "serve", "openenv", "--port", str(port),
                             "--max-sessions", str(max_sessions)], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(url + "/health", timeout=2)
            return proc, url
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("the server exited") from None
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not come up")


def wait_closed(url: str, limit_s: float = 120) -> None:
    end = time.monotonic() + limit_s
    while get(url + "/se_gym/sessions")["open"] and time.monotonic() < end:
        time.sleep(0.2)


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def server_memory(url: str, pid: int, n: int, tasks) -> tuple[float, int]:
    """(KB of server RSS per idle session, threads per session) with n sessions open."""
    wait_closed(url)
    time.sleep(1)
    rss0, th0 = rss_mb(pid), threads(pid)

    async def main():
        envs = [client(url) for _ in range(n)]
        await asyncio.gather(*(e.connect() for e in envs))
        await asyncio.gather(*(e.reset(index=k % len(tasks)) for k, e in enumerate(envs)))
        await asyncio.sleep(1)
        out = (rss_mb(pid) - rss0) * 1024 / n, (threads(pid) - th0) / n
        await asyncio.gather(*(e.close() for e in envs))
        return out

    out = asyncio.run(main())
    wait_closed(url)
    return out


def vector_run(n: int, seconds: float) -> dict:
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    venv = gym.make_vec("SEBench-v0", num_envs=n)
    try:
        venv.reset(seed=0)
        per_env_kb = tracemalloc.get_traced_memory()[0] / 1024 / n
        tracemalloc.stop()
        answers = lambda: [oracle(e.task) for e in venv.unwrapped.envs]  # noqa: E731
        venv.step(answers())  # start the pool
        steps, lat = 0, []
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds or steps < 2:
            a = answers()
            t1 = time.perf_counter()
            _, rewards, terms, _, _ = venv.step(a)
            lat.append(time.perf_counter() - t1)
            assert rewards.min() == 1.0 and terms.all()
            steps += 1
        took = time.perf_counter() - t0
    finally:
        venv.close()
    return {"eps": steps * n / took, "p50": pct(lat, 0.5), "p99": pct(lat, 0.99), "kb": per_env_kb, "steps": steps}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", default="16,64,256,1024", help="comma-separated N")
    ap.add_argument("--seconds", type=float, default=15.0, help="time of each measurement")
    ap.add_argument("--url", default=None, help="time this running server (e.g. http://127.0.0.1:8000) instead of starting one")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sessions.split(",")]
    tasks = builtin_tasks("single_test", seed=0)
    log = tempfile.NamedTemporaryFile("w+", prefix="se-gym-openenv-bench-", suffix=".log", delete=False)
    if args.url:
        proc, url = None, args.url.rstrip("/")
        try:
            urllib.request.urlopen(url + "/health", timeout=5)
        except OSError as exc:
            raise SystemExit(f"no OpenEnv server answers at {url}/health ({exc})") from None
    else:
        # room for the sessions whose clients left and that the server has not closed yet
        proc, url = start_server(2 * max(sizes), log)
    print(f"server: {url}{' (started here, log ' + log.name + ')' if proc else ' (given)'}; "
          f"{os.cpu_count()} CPUs (shared with whatever else runs here); {args.seconds:g} s per measurement", flush=True)
    oracle_only = Mix(wrong=0.0)
    rows = []
    try:
        asyncio.run(judged_round(url, tasks, 16))  # start the server's pool
        if proc:
            wait_closed(url)
            base = {"rss": rss_mb(proc.pid), "threads": threads(proc.pid), "children": len(descendants(proc.pid))}
        for n in sizes:
            row = {"n": n}
            if proc:
                row["kb"], row["threads"] = server_memory(url, proc.pid, n, tasks)
            for mode, mix in (("plain", oracle_only), ("chaos", Mix.chaos(wrong=0.0))):
                # the figures count the steps answered in the window after the warm-up (connecting
                # N sessions and their first episodes), up to the end of the run
                warm = 5 + n / 64
                tally, took = asyncio.run(run_chaos(url, tasks, n, warm + args.seconds, mix))
                lo, hi = tally.started + warm, tally.started + took
                lat = [x for x, t in zip(tally.latencies, tally.done_at) if t >= lo]
                row[mode] = {"eps": len(lat) / (hi - lo), "p50": pct(lat, 0.5), "p99": pct(lat, 0.99),
                             "errors": len(tally.errors), "judged": len(lat), "sessions": tally.sessions,
                             "chaos": tally.cancelled + tally.killed + tally.malformed}
                for e in tally.errors[:3]:
                    print(f"  error (N={n} {mode}): {e}", flush=True)
                wait_closed(url)
            row["vec"] = vector_run(n, args.seconds)
            rows.append(row)
            report(row)
        print()
        print("   N | openenv plain eps/s p50 s p99 s err | openenv chaos eps/s p50 s p99 s err (chaos eps.) | "
              "make_vec eps/s p50 s p99 s | bound N/X_vec+0.5 s | KB/session server, make_vec")
        for row in rows:
            p, c, v = row["plain"], row["chaos"], row["vec"]
            print(f"{row['n']:>4} | {p['eps']:19.1f} {p['p50']:5.2f} {p['p99']:5.2f} {p['errors']:3d} | "
                  f"{c['eps']:19.1f} {c['p50']:5.2f} {c['p99']:5.2f} {c['errors']:3d} ({c['chaos']:5d}) | "
                  f"{v['eps']:14.1f} {v['p50']:5.2f} {v['p99']:5.2f} | {row['n'] / v['eps'] + 0.5:18.2f} | "
                  f"{row.get('kb', float('nan')):7.0f}, {v['kb']:6.0f}")
        if proc:
            wait_closed(url)
            time.sleep(2)
            end = {"rss": rss_mb(proc.pid), "threads": threads(proc.pid), "children": len(descendants(proc.pid))}
            log.flush()
            tracebacks = Path(log.name).read_text().count("Traceback")
            print(f"server after all runs vs after warm-up: RSS {base['rss']:.0f} -> {end['rss']:.0f} MB, threads "
                  f"{base['threads']} -> {end['threads']}, worker processes {base['children']} -> {end['children']}; "
                  f"tracebacks in its log: {tracebacks}")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=60)
        log.close()


def report(row: dict) -> None:
    n, v = row["n"], row["vec"]
    for mode in ("plain", "chaos"):
        r = row[mode]
        print(f"N={n:<5} openenv {mode}: {r['eps']:7.1f} episodes/s, step p50 {r['p50']:.2f} s p99 {r['p99']:.2f} s, "
              f"{r['judged']} judged after the warm-up, {r['sessions']} sessions, {r['chaos']} chaos episodes, {r['errors']} errors "
              f"(Little: mean wait N/X {n / r['eps'] if r['eps'] else float('nan'):.2f} s)", flush=True)
    mem = f"; server {row['kb']:.0f} KB and {row['threads']:.2f} threads per open session" if "kb" in row else ""
    print(f"N={n:<5} make_vec:      {v['eps']:7.1f} episodes/s, step p50 {v['p50']:.2f} s p99 {v['p99']:.2f} s "
          f"({v['steps']} steps), {v['kb']:.0f} KB per sub-env{mem}", flush=True)


if __name__ == "__main__":
    main()
