"""Sandbox throughput: the same N judge-like programs through a baseline that does what the official
sandbox does (a fresh ``python main.py`` per program, 2 in parallel, from a clean venv so that this
machine's start-up hooks do not slow it) and through every backend that is available here.  Prints
programs/s, p50/p99 latency and agreement with the baseline.

    python benchmarks/sandbox_throughput.py [-n 200] [--rounds 5] [--backends local,rlimits,docker,http]

Real answers (issue 15): the b and d variants of SE-Bench's parity_dev.jsonl (model-written answers,
right and wrong) repeated to -n answers, judged end to end by ``Judge.judge_many`` (a fresh judge:
start-up included) against a fresh ``python main.py`` of the official harness per answer, 2 at a
time, as SE-Bench's worker runs them:

    python benchmarks/sandbox_throughput.py --real ../shared/sebench [-n 2000] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from se_gym.library import mint  # noqa: E402
from se_gym.sandbox import ExecStatus, Limits, make_sandbox  # noqa: E402


def programs(n: int, timeouts: bool = False) -> tuple[list[str], str, str]:
    """Harness-like programs on a minted library: most right, some crash (like .tolist() on the array
    type), a few loop forever."""
    lib = mint(0)
    path = str(lib.materialize("sebench", docs=False))  # the judge's copy
    arr, absf, sumf, dot = (lib.qualified(k) for k in ("array", "abs", "sum", "dot"))
    out = []
    for i in range(n):
        body = f"    return {sumf}({absf}({arr}(x) - {i % 7}))"
        if i % 10 == 3:
            body = f"    return {arr}(x).tolist()"  # AttributeError, the paper's favourite
        if timeouts and i % 50 == 17:
            body = "    while True: pass"
        if i % 10 == 5:
            body = f"    a = {arr}(x)\n    return {dot}(a, a)"
        out.append(
            f"import {lib.package}\n\ndef solve(x):\n{body}\n\n"
            f"if __name__ == '__main__':\n"
            f"    results = [solve(x=[{i}, -2, 3]), solve(x=[1.5, {i % 5}])]\n"
            f"    print('====================')\n"
            f"    for r in results:\n        print(r)\n        print('#')\n"
        )
    return out, path, lib.package


def clean_python(folder: str) -> str:
    """A venv with nothing in it, for the baseline: its interpreter starts like the official image's
    (``site`` runs, finds no ``.pth`` file).  This machine's own site-packages holds start-up hooks
    (``.pth`` files of editable installs and of the machine's set-up) that cost ~45 ms per start
    here and would flatter every ratio against a bare ``python main.py``."""
    import venv

    venv.EnvBuilder(with_pip=False).create(folder)
    return str(Path(folder, "bin", "python"))


def baseline(progs: list[str], libpath: str, wall: float, python: str) -> tuple[list[tuple[ExecStatus, str]], list[float], float]:
    import site

    # NumPy from our site-packages, as plain path entries (their .pth files are not run)
    path = os.pathsep.join([libpath, *site.getsitepackages()])
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": path, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}

    def one(code: str) -> tuple[tuple[ExecStatus, str], float]:
        with tempfile.TemporaryDirectory() as d:
            Path(d, "main.py").write_text(code)
            t = time.perf_counter()
            try:
                p = subprocess.run([python, "main.py"], cwd=d, env=env, capture_output=True, text=True, timeout=wall)
                res = (ExecStatus.OK if p.returncode == 0 else ExecStatus.ERROR, p.stdout)
            except subprocess.TimeoutExpired:
                res = (ExecStatus.TIMEOUT, "")
            return res, time.perf_counter() - t

    t = time.perf_counter()
    with ThreadPoolExecutor(2) as ex:
        rs = list(ex.map(one, progs))
    return [r for r, _ in rs], [lat for _, lat in rs], time.perf_counter() - t


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def report(name: str, rate: float, lat: list[float], agree: int | None, n: int, ratios: list[float] | None) -> None:
    # the rounds' spread too: on a shared host one round can be 20% off its neighbours
    speed_s = f"  {statistics.median(ratios):5.1f}x baseline (rounds {min(ratios):.1f}-{max(ratios):.1f})" if ratios else ""
    agreement = f"  agreement {agree}/{n}" if agree is not None else ""
    print(f"{name:10} {rate:8.1f} programs/s  p50 {pct(lat, .5) * 1e3:7.1f} ms  p99 {pct(lat, .99) * 1e3:7.1f} ms{speed_s}{agreement}", flush=True)


def open_backend(name: str, libpath: str, preload: list[str], workers: int, limits: Limits):
    """(sandbox, things to close after it)."""
    if name == "local":
        return make_sandbox("local", pythonpath=[libpath], preload=preload, workers=workers), []
    if name == "rlimits":
        return make_sandbox("local", pythonpath=[libpath], preload=preload, workers=workers, isolation="rlimits"), []
    if name == "docker":
        return make_sandbox("docker", pythonpath=[libpath], preload=preload, workers=workers), []
    if name == "http":
        from se_gym.sandbox.server import SandboxServer

        inner = make_sandbox("local", pythonpath=[libpath], preload=preload, workers=workers)
        srv = SandboxServer(inner, "127.0.0.1", 0, limits).start()
        return make_sandbox("http", url=srv.url, workers=4, batch=False), [srv.stop, inner.close]
    raise ValueError("unknown backend")


class _Recorder:
    """Stands in for a backend without a result channel, only to collect the official harness
    programs the judge builds for the baseline (nothing is run)."""

    name = "http"  # older judges chose the official harness by this name; newer ones by has_channel
    has_channel = False

    def __init__(self):
        self.programs: list[str] = []
        self.runs = 0

    def run(self, programs, limits=None):
        from se_gym.sandbox.base import sandbox_error

        if not self.runs:  # (the judge tries infrastructure failures once more: the same programs again)
            self.programs += list(programs)
        self.runs += 1
        return [sandbox_error("record", "recorded only", channel=False) for _ in programs]

    def close(self):
        pass


def _tree_cpu() -> dict[int, float]:
    """CPU seconds (own + reaped children) of every process below us, read from /proc: the judge's
    workers and, through them, the programs they forked and reaped."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}

    def walk(pid: int) -> None:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return
        for t in tasks:
            try:
                kids = open(f"/proc/{pid}/task/{t}/children").read().split()
            except OSError:
                continue
            for k in map(int, kids):
                try:
                    f = open(f"/proc/{k}/stat").read().rsplit(")", 1)[1].split()
                    out[k] = sum(int(x) for x in f[11:15]) / tick  # utime stime cutime cstime
                except OSError:
                    continue
                walk(k)

    walk(os.getpid())
    return out


def _self_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def real_answers(shared: str, n: int, rounds: int, workers: int, profile: str, baseline_n: int = 150) -> None:
    import json

    from se_gym.judge import Judge
    from se_gym.library import official

    rows = [json.loads(line) for line in open(os.path.join(shared, "parity_dev.jsonl")) if line.strip()]
    rows = [r for r in rows if r["variant"][:1] in ("b", "d")]
    items = [(r["response"], r["test_cases"], None, r["right_exe_result"].split("#")) for r in rows]
    answers = [items[i % len(items)] for i in range(n)]
    lib = official(os.path.join(shared, "api_doc.jsonl"))
    libpath = str(lib.materialize("sebench", docs=False))
    rec = _Recorder()
    recorded = Judge(lib, profile="sebench", sandbox=rec).judge_many(items)  # the official programs, for the baseline
    progs = rec.programs
    # The official judge runs a program only for an answer that passes its gates (the others cost it
    # one parse): its cost per answer is its cost per program times the share of answers that run
    runs = [v.status.value == "sandbox_error" for v in recorded]  # (what the recorder answered)
    share_run = sum(runs[i % len(items)] for i in range(n)) / n
    print(f"{n} real answers ({len(items)} distinct: b and d variants of parity_dev.jsonl; {len(progs)} reach the "
          f"sandbox: {100 * share_run:.1f}% of the answers), profile {profile}, {os.cpu_count()} CPUs, workers={workers}", flush=True)
    venv_dir = tempfile.TemporaryDirectory(prefix="se-gym-baseline-")
    python = clean_python(venv_dir.name)
    ratios, rates, base_rates = [], [], []
    try:
        for r in range(rounds):
            # the baseline on a share of the distinct programs (its per-answer cost does not depend on
            # repetition), and the judge on all n answers from a fresh Judge: start-up included
            share = progs[r::rounds][:baseline_n]
            # half of it before the judge and half after: the machine's speed drifts within a minute,
            # and a round's ratio should not depend on which side of the drift each half ran
            half = len(share) // 2
            c0 = _children_cpu()
            _, _, bt = baseline(share[:half], libpath, 3.0, python)
            base_cpu = _children_cpu() - c0
            before = _tree_cpu()
            s0 = _self_cpu()
            t0 = time.perf_counter()
            with Judge(lib, profile=profile, workers=workers) as j:
                verdicts = j.judge_many(answers)
                level = j.sandbox.isolation().get("level")
                # (read before close: killed workers are not reaped by us, their CPU would be lost)
                after = _tree_cpu()
            dt = time.perf_counter() - t0
            judge_cpu = (_self_cpu() - s0 + sum(after.values()) - sum(before.get(p, 0.0) for p in after)) / n
            c0 = _children_cpu()
            _, _, bt2 = baseline(share[half:], libpath, 3.0, python)
            bt += bt2
            base_cpu = (base_cpu + _children_cpu() - c0) / len(share) * share_run  # per answer (see share_run)
            base_rate = len(share) / bt / share_run  # answers/s
            rate = n / dt
            agree = sum(v.sebench_code == rows[i % len(rows)]["verdict"] for i, v in enumerate(verdicts))
            infra = sum(v.status.value == "sandbox_error" for v in verdicts)
            print(f"round {r}: baseline {base_rate:6.1f} answers/s ({len(share)} programs, {len(share) / bt:.1f}/s)  judge {rate:7.1f} answers/s "
                  f"({level}, {dt:.1f} s)  ratio {rate / base_rate:5.1f}x  official agreement {agree}/{n}  infra {infra}", flush=True)
            # CPU per answer does not depend on what else runs on the machine (wall time does):
            # on an idle machine with as many cores as the baseline's 2 processes, the ratio of
            # the rates tends to the ratio of these (start-up included on the judge's side)
            print(f"round {r}: CPU per answer: baseline {base_cpu * 1e3:6.1f} ms  judge {judge_cpu * 1e3:5.2f} ms (own process "
                  f"+ workers + programs)  CPU ratio {base_cpu / judge_cpu:5.1f}x  load {os.getloadavg()[0]:.1f}", flush=True)
            ratios.append(rate / base_rate)
            rates.append(rate)
            base_rates.append(base_rate)
    finally:
        venv_dir.cleanup()
    print(f"real answers: judge {statistics.median(rates):.1f} answers/s, baseline {statistics.median(base_rates):.1f} answers/s, "
          f"speed-up {statistics.median(ratios):.1f}x (rounds {min(ratios):.1f}-{max(ratios):.1f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", metavar="SEBENCH_DIR", help="judge real answers (parity_dev.jsonl b and d variants) instead")
    ap.add_argument("--profile", default="sebench", choices=["sebench", "strict"], help="--real: the judge's profile")
    ap.add_argument("--baseline-n", type=int, default=150, help="--real: programs per round through the baseline (a sample: "
                    "its cost per answer does not depend on how many)")
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--backends", default="local,rlimits,docker,http")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5, help="rounds of (a 1/rounds share of the programs through the "
                    "baseline, then every program through each backend)")
    ap.add_argument("--timeouts", action="store_true", help="make 1 in 50 programs loop until the 3 s limit (dominates the rate)")
    args = ap.parse_args()
    if args.real:
        real_answers(args.real, args.n if args.n != 200 else 2000, min(args.rounds, 3) if args.rounds == 5 else args.rounds,
                     args.workers, args.profile, args.baseline_n)
        return
    progs, libpath, package = programs(args.n, args.timeouts)
    limits = Limits(wall_s=3.0, cpu_s=3.0)
    print(f"{args.n} programs ({sum('while True' in p for p in progs)} time out), {os.cpu_count()} CPUs, workers={args.workers}")
    venv_dir = tempfile.TemporaryDirectory(prefix="se-gym-baseline-")
    python = clean_python(venv_dir.name)
    boxes, closers = {}, []
    for name in args.backends.split(","):
        try:
            box, extra = open_backend(name, libpath, ["numpy", package], args.workers, limits)
        except Exception as exc:  # a backend missing here is reported, not fatal
            print(f"{name:10} unavailable: {str(exc).splitlines()[0]}")
            continue
        closers += [box.close, *extra]
        box.run(["pass"] * args.workers, limits)  # warm
        boxes[name] = box
    try:
        # This machine's speed drifts (a shared host), so the baseline and the backends take turns:
        # each round times a share of the programs through the baseline and then all of them through
        # each backend, and the speed-up is the median of the rounds' ratios.
        base: list = [None] * args.n
        base_lat: list[float] = []
        base_t = 0.0
        times: dict[str, list[float]] = {n: [] for n in boxes}
        ratios: dict[str, list[float]] = {n: [] for n in boxes}
        passes: dict[str, list] = {n: [] for n in boxes}
        for r in range(args.rounds):
            share = list(range(r, args.n, args.rounds))
            res, lat, t = baseline([progs[i] for i in share], libpath, limits.wall_s, python)
            for i, x in zip(share, res):
                base[i] = x
            base_lat += lat
            base_t += t
            for name, box in boxes.items():
                t0 = time.perf_counter()
                passes[name].append(box.run(progs, limits))
                dt = time.perf_counter() - t0
                times[name].append(dt)
                ratios[name].append((args.n / dt) / (len(share) / t))
        report("baseline", args.n / base_t, base_lat, None, args.n, None)
        for name, box in boxes.items():
            agree = min(sum((x.status, x.stdout if x.status is not ExecStatus.TIMEOUT else "") == b for x, b in zip(rs, base))
                        for rs in passes[name])
            lat = []  # latency of one program alone (the per-program overhead on a trivial program)
            for _ in range(50):
                t0 = time.perf_counter()
                box.run(["print(1)"], limits)
                lat.append(time.perf_counter() - t0)
            report(name, args.n / statistics.median(times[name]), lat, agree, args.n, ratios[name])
    finally:
        for close in closers:
            close()
        venv_dir.cleanup()
    print(f"(backends: median of {args.rounds} passes, speed-up: median of the rounds' ratios, agreement: the worst "
          "pass; latency: one trivial program submitted alone, end to end; baseline: latency per program)")


if __name__ == "__main__":
    main()
