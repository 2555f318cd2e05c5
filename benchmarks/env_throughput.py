"""Steps per second of SEBench-v0 with oracle answers, single env and vector env (N = 1, 8, 64),
against the raw throughput of the sandbox running the same judge programs.

    python benchmarks/env_throughput.py [--seconds 5] [--workers N]

Uses ``gymnasium.utils.performance``: an action wrapper turns the sampled (random) action into the
task's oracle answer, so every step runs the full judge on a passing program.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym  # noqa: E402
from gymnasium.utils.performance import benchmark_init, benchmark_step, benchmark_vector_step  # noqa: E402

import se_gym  # noqa: E402,F401
from se_gym.envs.vector import SEBenchVectorEnv  # noqa: E402


def oracle(task) -> str:
    return f"```python\n{task.library_solution}\n```"


class OracleAnswers(gym.ActionWrapper):
    def action(self, action):
        return oracle(self.unwrapped.task)


class OracleVectorAnswers(gym.vector.VectorActionWrapper):
    def actions(self, actions):
        return [oracle(env.task) for env in self.env.unwrapped.envs]


def raw_sandbox_rate(env, n: int) -> float:
    """Programs/s of the judge's sandbox on the same harness programs, with no env or judge around it."""
    judge = env.judge
    tasks = env.tasks[:n]
    programs = [judge._prepare(i, (oracle(t), t.test_cases, t.function_name)).program for i, t in enumerate(tasks)]
    judge.sandbox.run(programs[:4])  # warm the pool
    t0 = time.perf_counter()
    judge.sandbox.run(programs)
    return len(programs) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=5)
    args = ap.parse_args()
    kw = {}

    init_s = benchmark_init(lambda: gym.make("SEBench-v0"), target_duration=args.seconds)
    print(f"env construction (cached suite): {init_s:8.1f} envs/s")

    env = OracleAnswers(gym.make("SEBench-v0", **kw))
    env.reset(seed=0)
    env.step(oracle(env.unwrapped.task))  # start the sandbox before timing
    single = benchmark_step(env, target_duration=args.seconds, seed=0)
    print(f"single env, oracle answers:      {single:8.1f} steps/s")
    raw = raw_sandbox_rate(env.unwrapped, 256)
    env.close()
    print(f"raw sandbox (same programs):     {raw:8.1f} programs/s")

    for n in (1, 8, 64):
        venv = OracleVectorAnswers(SEBenchVectorEnv(num_envs=n, **kw))
        venv.reset(seed=0)
        venv.step([""] * n)
        rate = benchmark_vector_step(venv, target_duration=args.seconds, seed=0)  # counts every sub-env step
        venv.close()
        print(f"vector env N={n:<3} oracle answers: {rate:8.1f} steps/s  ({rate / raw:5.0%} of raw sandbox)")


if __name__ == "__main__":
    main()
