"""Verdicts/s of ``sandbox="ray"`` on 1 and 2 nodes against ``sandbox="local"``, in one run, on a
throw-away 2-node Ray cluster on this machine (``ray start --head --num-cpus 1`` and a second
``ray start --address ... --num-cpus 1``), then a paper estimate for N real nodes.

Both nodes share this machine's cores (with the driver and Ray's own daemons), so the 2-node figure
shows the Ray sandbox's overhead, not its scaling.  The estimate uses what is measured here: the
CPU time a verdict costs in a sandbox worker, the driver's time per answer (preparing it and making
its verdict), and Ray's cost per actor call.

    OMP_NUM_THREADS=1 python benchmarks/ray_sandbox_throughput.py [-n 400] [--rounds 2]
"""
from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ["RAY_AUTH_MODE"] = "disabled"  # the throw-away cluster has no token (read when Ray is imported)


def answers(lib, n: int) -> list[tuple]:
    """Real answers to the built-in suite: 3 in 4 the reference, 1 in 4 a wrong one (its value in a list)."""
    from se_gym.envs.sebench import resolve_tasks

    tasks, _ = resolve_tasks("builtin", "single_test", 0, lib)
    absf = lib.qualified("abs")
    out = []
    for i in range(n):
        t = tasks[i % len(tasks)]
        code = t.library_solution
        if i % 4 == 3:
            args = t.function_name.strip()[len("def solve("):-2]
            code = code.replace("def solve(", "def _ref(", 1) + f"\n\n{t.function_name.strip()}\n    {absf}(1)\n    return [_ref({args})]\n"
        out.append((f"```python\n{code}\n```", t.test_cases, t.function_name))
    return out


def timed(judge, items, rounds: int) -> tuple[float, list, float]:
    """Best verdicts/s over ``rounds`` (after one warm-up batch), the verdicts, and this process's
    CPU seconds per answer in the best batch (preparing, making verdicts, and, on Ray, submitting)."""
    judge.judge_many(items[:16])
    best, verdicts, cpu = 0.0, [], 0.0
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        verdicts = judge.judge_many(items)
        rate = len(items) / (time.perf_counter() - t)
        if rate > best:
            best, cpu = rate, (time.process_time() - c) / len(items)
    return best, verdicts, cpu


class Echo:
    def ping(self, x):
        return x


def ray_call_cost(ray, calls: int = 300) -> tuple[float, float]:
    """Seconds per actor call: one at a time (latency), and 32 in flight (the driver's cost)."""
    actor = ray.remote(num_cpus=0)(Echo).remote()
    ray.get(actor.ping.remote(0))
    t = time.perf_counter()
    for i in range(calls):
        ray.get(actor.ping.remote(i))
    serial = (time.perf_counter() - t) / calls
    t = time.perf_counter()
    ray.get([actor.ping.remote(i) for i in range(calls)])
    piped = (time.perf_counter() - t) / calls
    ray.kill(actor)
    return serial, piped


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=400, help="answers per batch (default 400)")
    ap.add_argument("--rounds", type=int, default=2, help="timed batches per configuration, the best is shown (default 2)")
    args = ap.parse_args()
    import ray

    from _ray_helpers import NodeCluster
    from se_gym.distributed import RaySandbox, package_runtime_env
    from se_gym.judge import Judge
    from se_gym.judge.core import sandbox_preload, sandbox_warmup
    from se_gym.library import mint

    lib = mint(0)
    items = answers(lib, args.n)
    print(f"machine: {os.cpu_count()} cores; {args.n} answers (3/4 references, 1/4 wrong) of the built-in suite, strict profile; "
          f"best of {args.rounds} batches", flush=True)
    with Judge(lib, profile="strict", sandbox="local", workers=2) as j:
        local_rate, want, _ = timed(j, items, args.rounds)
    exec_s = statistics.mean(v.wall_s for v in want)  # a worker's time per program (wall: an upper bound when cores are shared)
    print(f"local  (2 workers, this machine's 2 cores):            {local_rate:7.1f} verdicts/s", flush=True)

    cluster = NodeCluster("sgbench", head_cpus=1)
    rates = {}
    try:
        cluster.add_node("node2", cpus=1)
        ray.init(address=cluster.address, runtime_env=package_runtime_env(), include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING)
        options = dict(library=lib, profile="strict", preload=sandbox_preload(lib), warmup=sandbox_warmup(lib))
        for nodes in (1, 2):
            with RaySandbox(actors=nodes, **options) as box, Judge(lib, profile="strict", sandbox=box) as j:
                rates[nodes], got, driver_s = timed(j, items, args.rounds)
                assert got == want, "the ray sandbox judged differently from the local one"
                split = ", ".join(f"{n['where']}: {n['workers']} worker" for n in box.nodes())
                print(f"ray    ({nodes} node{'s' if nodes > 1 else ' '} of 1 CPU each: {split}): {rates[nodes]:7.1f} verdicts/s "
                      f"({box.stats.chunks} actor calls for {box.stats.programs} programs)", flush=True)
        serial, piped = ray_call_cost(ray)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.close()
    print("(both nodes share this machine's 2 cores with the driver and Ray's daemons: the ray figures show overhead, not scaling)")
    print(f"\nmeasured: {1e3 * exec_s:.1f} ms of a worker per program (wall time, with the cores shared), {1e3 * driver_s:.2f} ms of "
          f"the driver's CPU per answer on 2 nodes (preparing it, making its verdict, Ray's submit and fetch), Ray actor call "
          f"{1e3 * serial:.2f} ms alone / {1e3 * piped:.2f} ms when pipelined")
    chunk = 8 * 16  # max_chunk programs per worker x 16 workers: a full chunk on a 16-CPU node
    ceiling = 1 / driver_s  # (Ray's per-call cost is already in it, spread over the chunk's programs)
    print(f"paper estimate, N nodes of 16 CPUs (one worker per CPU): min(N x 16 / {1e3 * exec_s:.1f} ms, one driver's ceiling "
          f"1 / {1e3 * driver_s:.2f} ms = {ceiling:.0f}/s); Ray adds {1e3 * piped / chunk:.3f} ms per answer at full chunks of {chunk}")
    for n in (1, 2, 4, 8, 16, 64):
        workers = n * 16 / exec_s
        print(f"  N={n:3d}: {min(workers, ceiling):9.0f} verdicts/s ({'the nodes' if workers < ceiling else 'the driver'} bound; nodes alone: {workers:.0f}/s)")
    print("  past the driver's ceiling, judge from several processes (one Judge each, e.g. one per vector env or server replica): "
          "they share the cluster's nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
