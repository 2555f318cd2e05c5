"""Episodes per second through the OpenEnv server (`se-gym serve openenv`) with N concurrent
sessions, against `gym.make_vec("SEBench-v0", num_envs=N)` in the same run, both with oracle
answers (every episode runs the judge on a passing program; max_turns=1, so one step = one episode).

    python benchmarks/openenv_throughput.py [--sessions 16] [--episodes 256] [--rounds 3] [--url URL]

The server runs in its own process with its own sandbox pool (or is the one already running at
--url, say the OpenEnv container of sandbox/openenv; it must serve the default options and allow
--sessions sessions); the vector env runs in this process (its pool is started before timing).  Each round times both; the script prints every round and the
median.  Needs the 'openenv' extra.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import gymnasium as gym  # noqa: E402

import se_gym  # noqa: E402,F401
from se_gym.tasks import builtin_tasks  # noqa: E402


def oracle(task) -> str:
    return f"```python\n{task.library_solution}\n```"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(sessions: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "se_gym.cli", "serve", "openenv", "--port", str(port),
                             "--max-sessions", str(sessions)], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(url + "/health", timeout=2)
            return proc, url
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("the server exited")
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not come up")


async def openenv_round(url: str, sessions: int, episodes: int, tasks) -> float:
    from se_gym.integrations.openenv import SEBenchClient

    per = episodes // sessions
    clients = [SEBenchClient(base_url=url, message_timeout_s=300) for _ in range(sessions)]
    await asyncio.gather(*(c.connect() for c in clients))  # connecting is not an episode

    async def run(k: int, c) -> int:
        done = 0
        for j in range(per):
            i = (k * per + j) % len(tasks)
            r = await c.reset(index=i)
            r = await c.step({"answer": oracle(tasks[i])})
            assert r.done and r.reward == 1.0, r
            done += 1
        return done

    t0 = time.perf_counter()
    n = sum(await asyncio.gather(*(run(k, c) for k, c in enumerate(clients))))
    dt = time.perf_counter() - t0
    await asyncio.gather(*(c.close() for c in clients))
    return n / dt


def vector_round(venv, episodes: int) -> float:
    n = venv.num_envs
    steps = episodes // n
    t0 = time.perf_counter()
    for _ in range(steps):
        answers = [oracle(e.task) for e in venv.unwrapped.envs]
        _, rewards, terms, _, _ = venv.step(answers)
        assert rewards.min() == 1.0 and terms.all()
    return steps * n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=16)
    ap.add_argument("--episodes", type=int, default=256, help="episodes per round and side")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--url", default=None, help="time this running server (e.g. http://127.0.0.1:8000) instead of starting one")
    args = ap.parse_args()
    tasks = builtin_tasks("single_test", seed=0)
    if args.url:
        proc, url = None, args.url.rstrip("/")
        try:
            urllib.request.urlopen(url + "/health", timeout=5)
        except OSError as exc:
            raise SystemExit(f"no OpenEnv server answers at {url}/health ({exc})")
    else:
        proc, url = start_server(args.sessions)
    print(f"server: {url}{' (started here)' if proc else ' (given)'}", flush=True)
    venv = gym.make_vec("SEBench-v0", num_envs=args.sessions)
    try:
        venv.reset(seed=0)
        vector_round(venv, args.sessions)  # start the pool
        asyncio.run(openenv_round(url, args.sessions, args.sessions, tasks))  # and the server's
        oe, vec = [], []
        for r in range(args.rounds):
            oe.append(asyncio.run(openenv_round(url, args.sessions, args.episodes, tasks)))
            vec.append(vector_round(venv, args.episodes))
            print(f"round {r}: openenv {args.sessions} sessions {oe[-1]:7.1f} episodes/s | make_vec N={args.sessions} {vec[-1]:7.1f} episodes/s")
        mo, mv = statistics.median(oe), statistics.median(vec)
        print(f"median: openenv {mo:.1f} episodes/s, make_vec {mv:.1f} episodes/s, ratio {mo / mv:.2f} "
              f"(range openenv {min(oe):.1f}-{max(oe):.1f}, make_vec {min(vec):.1f}-{max(vec):.1f}; {os.cpu_count()} CPUs)")
    finally:
        venv.close()
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
