"""Where ``se-gym validate``'s CPU goes, phase by phase, on the first N tasks of one suite.

    python benchmarks/validate_phases.py [--spec builtin:0] [--tasks 300] [--others docker ray]

Runs each phase of one suite's check (:func:`se_gym.validate.run.check_suite`) on its own, as
validate runs it (the same probes, judges and rounds), and prints a table: the CPU of this process,
of every process below it (sandbox workers, their programs and library servers, the second process;
Docker's containers are not counted) and the wall time of each phase, with the CPU per task.  The
second process makes the whole suite again (as validate's does) and judges its sample.  ``--others``
also times the other sandboxes' sampled verdicts and containment probes (and Ray's start and stop).
To compare two versions, run it from each checkout in turn (``PYTHONPATH=THAT_CHECKOUT``), alternating.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate_suite import TreeCPU  # noqa: E402


class Phases:
    """Rows of (phase, CPU of this process, CPU below it, wall), each since the previous mark."""

    def __init__(self):
        self.tree = TreeCPU(0.2)
        self.rows: list[tuple[str, float, float, float, int]] = []
        self._at = self._now()

    def _now(self) -> tuple[float, float, float]:
        t = os.times()
        return t.user + t.system, self.tree.so_far(), time.perf_counter()

    def mark(self, name: str, tasks: int) -> None:
        now = self._now()
        self.rows.append((name, now[0] - self._at[0], now[1] - self._at[1], now[2] - self._at[2], tasks))
        self._at = self._now()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="builtin:0")
    ap.add_argument("--tasks", type=int, default=300, help="the first N tasks of the suite")
    ap.add_argument("--others", nargs="*", default=[], help="other sandboxes to time (docker, ray)")
    args = ap.parse_args()

    import se_gym
    from se_gym.validate import probing, suites
    from se_gym.validate import run as vrun
    from se_gym.validate.config import ValidateConfig

    ph = Phases()
    config = ValidateConfig(specs=(args.spec,), sandboxes=("local",), progress=False)
    ref = suites.expand(config)[0]
    tasks, library, _ = suites.load(ref)
    full, tasks = len(tasks), tasks[: args.tasks]
    n = len(tasks)
    ph.mark("load the suite (cached)", n)
    dep, why = probing.judge_supports_dependence()
    judges = probing.make_judges(library, config.sandbox, config.wall_s, None, dep)
    sample = {i for i in range(n) if i % config.verdict_every == 0}
    tps = [probing.task_probes(tasks[i], library, dep, echo=i in sample) for i in range(n)]
    ph.mark("probe texts", n)
    items = [(tp.task, p, k, a) for tp in tps for (p, k), a in tp.answers.items()]
    owners = [m for m, tp in enumerate(tps) for _ in tp.answers]
    names = [probing.judge_name(judges, it[1], it[2]) for it in items]
    results: list[dict] = [{} for _ in tps]
    gated = "floor:hardcoded_example_gated"
    groups = [("sebench: the reference", lambda it, name: name == "sebench"),
              ("strict: floor probes the static gate refuses", lambda it, name: name == "strict" and it[2].startswith("floor:") and it[2] != gated),
              ("strict: the example hard-coded behind a library call", lambda it, name: it[2] == gated),
              ("strict: the echo probe (sample)", lambda it, name: it[2] == "echo_inputs"),
              ("strict + dependence: the reference, and the gated answer key (sample)", lambda it, name: name == probing.WITH_DEPENDENCE)]
    for label, pick in groups:
        idx = [i for i, (it, name) in enumerate(zip(items, names)) if pick(it, name)]
        for i, v in zip(idx, probing.judge_answers(judges, [items[i] for i in idx], config.retry_wall_s)):
            results[owners[i]][(items[i][1], items[i][2])] = v
        ph.mark(f"judge, {label} ({len(idx)})", n)
    more = []
    for m, tp in enumerate(tps):
        for (p, k), a in probing.second_forms(tp, results[m], library).items():
            tp.answers[(p, k)] = a
            more.append((m, (tp.task, p, k, a)))
    for (m, it), v in zip(more, probing.judge_answers(judges, [it for _, it in more], config.retry_wall_s)):
        results[m][(it[1], it[2])] = v
    ph.mark(f"judge, the reference's other container, both profiles ({len(more)})", n)
    envs = probing.make_envs(tasks, library, judges["strict"], config.visible_cases)
    for i in range(n):
        vrun._task_checks(tasks[i], library, tps[i], results[i], envs, i, config, dep, why)
    ph.mark("checks: oracle, floor, dependence, leakage (every observation)", n)
    for i in range(n):
        probing.digests(tasks[i], probing.prompts(envs, i), results[i], i in sample)
    probing.episode_order(tasks, library, judges["strict"])
    ph.mark("determinism: digests, prompts, seeded episodes", n)
    probing.close_judges(judges)
    with tempfile.TemporaryDirectory() as tmp:
        proc, _ = vrun.start_second_process(ref, library, config, [i for i in range(full) if i % config.verdict_every == 0], dep, Path(tmp))
        proc.communicate()
    ph.mark(f"the second process: the whole suite made again, its sample judged ({full} tasks)", full)
    if args.others:
        from se_gym.distributed.cluster import connect, shutdown

        owned = connect(None) if "ray" in args.others else False
        ph.mark("Ray: start", 1)
        picked = sorted(sample)[: config.sandbox_sample]
        answers_of = {i: probing.TaskProbes(tps[i].task, probing.sampled_answers(tps[i])) for i in picked}
        verdicts_of = {i: {pk: results[i][pk] for pk in probing.SAMPLED if pk in results[i]} for i in picked}
        for name in args.others:
            found = vrun._other_sandbox(name, library, config, picked, answers_of, verdicts_of, {i: {} for i in picked}, dep)
            ph.mark(f"{name}: {len(picked)} tasks' sampled verdicts again ({found.result})", 1)
            ph.mark(f"{name}: the containment probe ({vrun._contained(library, name).result})", 1)
        if owned:
            shutdown()
        ph.mark("Ray: stop", 1)
    ph.tree.stop()
    print(f"{args.spec}, the first {n} tasks of {full}; se_gym from {Path(se_gym.__file__).parent}; load {os.getloadavg()[0]:.1f}")
    print("| phase | this process CPU (s) | below it CPU (s) | wall (s) | CPU ms a task |")
    print("|---|---|---|---|---|")
    for name, own, below, wall, per in ph.rows:
        print(f"| {name} | {own:.2f} | {below:.2f} | {wall:.2f} | {f'{1000 * (own + below) / per:.2f}' if per > 1 else 'once a run'} |")
    print(f"| all | {sum(r[1] for r in ph.rows):.2f} | {sum(r[2] for r in ph.rows):.2f} | {sum(r[3] for r in ph.rows):.2f} | |")


if __name__ == "__main__":
    main()
