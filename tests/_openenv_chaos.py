"""Load and chaos clients for an OpenEnv SEBench server (`se-gym serve openenv`), shared by the
chaos test (tests/test_openenv_chaos.py) and the benchmark (benchmarks/openenv_throughput.py).

Each of N concurrent *loops* runs episodes (max_turns=1: reset, one step) on its own WebSocket
session, with openenv-core's own client.  Under chaos a share of the episodes goes wrong on
purpose: the step's task is cancelled mid-step (the client then closes that session politely),
the connection is dropped mid-step (``transport.abort()``: no close frame, as a killed process),
or the step is malformed (the session must answer with an error and keep serving).  Every other
step is an oracle answer (must give reward 1.0, passed) or a wrong one (reward 0.0,
wrong_answer); anything else is recorded in ``Tally.errors``.  A malformed step is followed by
an oracle step on the same session, checked and counted as judged.
"""
from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from _procs import descendants  # noqa: F401  (the benchmark imports it from here)


def oracle(task) -> str:
    return f"```python\n{task.library_solution}\n```"


def wrong(task) -> str:
    """The oracle returning a tuple ahead of its result: past every gate, a wrong answer."""
    body = task.library_solution.replace("return ", "return 'se-gym: a wrong answer', ")
    return f"```python\n{body}\n```"


# malformed steps and what the server must answer (openenv-core's error codes)
MALFORMED = [
    ({"answer": ""}, "VALIDATION_ERROR"),
    ({"answer": 12345}, "VALIDATION_ERROR"),
    ({"code": "print(1)"}, "VALIDATION_ERROR"),
    ({"answer": "x" * 200_001}, "VALIDATION_ERROR"),
    ("{not json", "INVALID_JSON"),
]


@dataclass
class Mix:
    """Shares of the chaos episodes; the rest are judged normally, ``wrong`` of them wrong answers."""

    cancel: float = 0.0
    kill: float = 0.0
    malformed: float = 0.0
    wrong: float = 0.5

    @classmethod
    def chaos(cls, wrong: float = 0.5) -> "Mix":
        return cls(cancel=0.1, kill=0.1, malformed=0.1, wrong=wrong)


@dataclass
class Tally:
    judged: int = 0  # episodes whose verdict was checked (oracle or wrong)
    cancelled: int = 0
    killed: int = 0
    malformed: int = 0
    sessions: int = 0  # WebSocket sessions opened
    latencies: list[float] = field(default_factory=list)  # seconds, send of a judged step to its reply
    done_at: list[float] = field(default_factory=list)  # time.monotonic() of each reply, as latencies
    started: float = 0.0  # time.monotonic() at the start of run_chaos
    errors: list[str] = field(default_factory=list)

    def error(self, what: str) -> None:
        if len(self.errors) < 50:
            self.errors.append(what)
        else:
            self.errors[-1] = f"... and more ({what})"


def client(url: str, timeout_s: float = 120):
    from se_gym.integrations.openenv import SEBenchClient

    return SEBenchClient(base_url=url, message_timeout_s=timeout_s)


async def judged_episode(env, tasks, i: int, good: bool, tally: Tally, where: str) -> None:
    """One checked episode: reset to task i, step an oracle (good) or a wrong answer."""
    r = await env.reset(index=i)
    if r.observation.task_id != tasks[i].id:
        tally.error(f"{where}: reset to {i} gave task {r.observation.task_id}, not {tasks[i].id}")
        return
    await checked_step(env, tasks[i], good, tally, where)


async def checked_step(env, task, good: bool, tally: Tally, where: str) -> None:
    t0 = time.perf_counter()
    r = await env.step({"answer": oracle(task) if good else wrong(task)})
    tally.latencies.append(time.perf_counter() - t0)
    tally.done_at.append(time.monotonic())
    obs = r.observation
    ok = (r.reward == 1.0 and obs.status == "passed") if good else (r.reward == 0.0 and obs.status == "wrong_answer")
    if not ok or not r.done or obs.infrastructure:
        tally.error(f"{where}: task {task.id} {'oracle' if good else 'wrong'} answer got reward {r.reward} "
                    f"status {obs.status} infrastructure {obs.infrastructure} done {r.done}")
    tally.judged += 1


async def chaos_loop(url: str, tasks, k: int, stop_at: float, mix: Mix, tally: Tally, seed: int = 0) -> None:
    """Episodes on one session after another until ``stop_at`` (time.monotonic); ends politely."""
    rng = random.Random(seed * 100_003 + k)
    where = f"loop {k}"
    while time.monotonic() < stop_at:
        env = client(url)
        try:
            await env.connect()
        except Exception as exc:  # noqa: BLE001 - recorded
            tally.error(f"{where}: connect failed at +{time.monotonic() - tally.started:.1f} s: {type(exc).__name__}: {exc}")
            await asyncio.sleep(0.5)
            continue
        tally.sessions += 1
        keep = True  # whether the session ends politely (close message and close frame)
        try:
            while keep and time.monotonic() < stop_at:
                roll, i = rng.random(), rng.randrange(len(tasks))
                if roll < mix.cancel:
                    await env.reset(index=i)
                    step = asyncio.ensure_future(env.step({"answer": oracle(tasks[i])}))
                    await asyncio.sleep(rng.uniform(0, 0.05))
                    step.cancel()  # the caller gives up mid-step; this session is out of step now
                    with contextlib.suppress(asyncio.CancelledError):
                        await step
                    tally.cancelled += 1
                    break
                if roll < mix.cancel + mix.kill:
                    await env.reset(index=i)
                    await env._send({"type": "step", "data": {"answer": oracle(tasks[i])}})
                    await asyncio.sleep(rng.uniform(0, 0.05))
                    env._ws.transport.abort()  # dropped mid-step: no close frame, as a killed process
                    env._ws, keep = None, False
                    tally.killed += 1
                    break
                if roll < mix.cancel + mix.kill + mix.malformed:
                    await env.reset(index=i)
                    payload, code = rng.choice(MALFORMED)
                    if isinstance(payload, str):
                        await env._ws.send(payload)
                    else:
                        await env._send({"type": "step", "data": payload})
                    reply = await env._receive()
                    if reply.get("type") != "error" or reply.get("data", {}).get("code") != code:
                        tally.error(f"{where}: malformed step {str(payload)[:40]!r} got {str(reply)[:200]}")
                    tally.malformed += 1
                    # the same session, the same episode: still serving
                    await checked_step(env, tasks[i], True, tally, f"{where} (after a malformed step)")
                    continue
                await judged_episode(env, tasks, i, rng.random() >= mix.wrong, tally, where)
        except Exception as exc:  # noqa: BLE001 - recorded
            tally.error(f"{where}: {type(exc).__name__}: {exc}")
        finally:
            if keep:
                with contextlib.suppress(Exception):
                    await env.close()


async def run_chaos(url: str, tasks, loops: int, duration_s: float, mix: Mix, seed: int = 0) -> tuple[Tally, float]:
    """``loops`` concurrent chaos loops for ``duration_s``; the tally and the seconds it took."""
    tally = Tally()
    t0 = tally.started = time.monotonic()
    await asyncio.gather(*(chaos_loop(url, tasks, k, t0 + duration_s, mix, tally, seed) for k in range(loops)))
    return tally, time.monotonic() - t0


async def judged_round(url: str, tasks, n: int, wrong_too: bool = True) -> Tally:
    """n new sessions at once, each with one oracle episode (and one wrong one)."""
    tally = Tally()

    async def one(k):
        async with client(url) as env:
            tally.sessions += 1
            i = k % len(tasks)
            await judged_episode(env, tasks, i, True, tally, f"session {k}")
            if wrong_too:
                await judged_episode(env, tasks, i, False, tally, f"session {k}")

    await asyncio.gather(*(one(k) for k in range(n)))
    return tally


# -- the server process, as /proc shows it ------------------------------------------------------
def threads(pid: int) -> int:
    return int(_status(pid)["Threads"])


def rss_mb(pid: int) -> float:
    return int(_status(pid)["VmRSS"].split()[0]) / 1024


def _status(pid: int) -> dict:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        out[k] = v.strip()
    return out
