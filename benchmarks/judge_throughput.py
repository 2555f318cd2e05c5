"""The judge's speed on real answers, both profiles, both strict library modes (issue 49).

Prints figures (not a test).  Three parts, each in alternating rounds within one run (the machine
is shared: only ratios between paths measured side by side mean anything; the load is printed):

  warm      one long-lived Judge per path, started and warmed, then per round and per path: all
            the answers as one batch (verdicts/s; CPU per verdict of the judge, its workers,
            zygotes, library servers and programs, read from /proc), two batches of 64 and 32
            single answers (each verdict's latency from its batch's start).  Per path: verdicts/s
            and per core (the cores it may use), verdicts per CPU-second, core-hours per million
            verdicts, p50/p99 latency at batch 1 and 64, the ratio to sebench (per round), and a
            digest of the verdicts (identical in every round, and before and after a change).
  cold      fresh processes in turn: ``python -c pass`` (the interpreter's own start), ``se-gym
            judge`` on one answer (wall to its verdict row on disk, and to its exit) and
            ``gym.make("SEBench-v0")`` + reset + one step (wall to the step's reward), per profile;
            ``--before DIR`` runs the same from another checkout's se_gym in the same rounds.
  pipeline  SE-Bench's own judge, cold: its ``src/filter_correct_trajectory.py`` (8 threads) against
            its Flask worker (``src/evaluation/worker.py``: a fresh ``python main.py`` per answer),
            against ``se-gym judge`` on the same answers from a fresh process, start-up included;
            ``--runs`` pairs, the ratio's median.  ``--sebench-repo``: a checkout of thunlp/SE-Bench.

Paths: ``sebench``; ``strict`` with its library server (``SE_GYM_STRICT_SERVER=1``, the default);
``strict-inproc`` (the in-process library, ``SE_GYM_STRICT_SERVER=0``; sebench has no server);
the strict paths run without the dependence check; ``--dependence`` adds ``strict+dep``, strict
with it (a second, counterfactual run of each passing answer and of its task's reference: each
answer carries its task's reference, parity_dev's ``b_notolist`` translation as
benchmarks/dependence.py picks it, with a comment line of its own so that no answer is its very program,
whose outcomes the check would reuse; the references' records are made in the warm-up);
``--argument-keys-off`` adds ``strict+dep-args-off``, the same check with the counterfactual keys
as before issue 42's round 3 (without the arguments beyond the digests: what they cost);
``--paths a,b`` runs only the named paths.  The answers:
parity_dev's model-written variants (b and d: the library translations and the wrong ones; 520 rows).

    OMP_NUM_THREADS=1 python benchmarks/judge_throughput.py [warm] [cold] [pipeline] [--rounds N]
        [--dependence] [--argument-keys-off] [--paths P,...] [--before DIR] [--sebench-repo DIR] [--runs N]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from sandbox_throughput import _self_cpu, _tree_cpu, clean_python, pct  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def load_rows(data: Path) -> list[dict]:
    rows = [json.loads(line) for line in (data / "parity_dev.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in rows if r["variant"][:1] in ("b", "d")]


def items_of(rows: list[dict], refs: dict[int, str] | None = None) -> list[tuple]:
    """The judge's items; with ``refs`` (task -> reference code) each carries its task's reference."""
    items = [(r["response"], r["test_cases"], None, r["right_exe_result"].split("#")) for r in rows]
    if refs is None:
        return items
    return [(*it, refs.get(r["task_index"])) for it, r in zip(items, rows)]


def references(data: Path, lib) -> dict[int, str]:
    """Per task, the reference the dependence check uses: its first ``b_notolist`` (else
    ``b_notolist_np``) translation that strict accepts with the check off (benchmarks/dependence.py)."""
    from se_gym.judge import Judge
    from se_gym.judge.extract import extract_code

    rows = [json.loads(line) for line in (data / "parity_dev.jsonl").read_text().splitlines() if line.strip()]
    cands = [r for name in ("b_notolist", "b_notolist_np") for r in rows if r["variant"] == name]
    with Judge(lib, profile="strict", dependence=False) as j:
        got = j.judge_many(items_of(cands))
    refs: dict[int, str] = {}
    for r, v in zip(cands, got):
        if v.passed and r["task_index"] not in refs:
            # (a line of its own: every passing answer here is some task's b_notolist text, and the check
            # reuses a reference's outcomes for an answer that is its very program, so without it the
            # second runs an ordinary answer pays would not be measured)
            refs[r["task_index"]] = "# the task's reference\n" + extract_code(r["response"])
    return refs


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def load_line() -> str:
    return "load " + "/".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


# -- warm ----------------------------------------------------------------------------------------
def library_mode(server: bool) -> None:
    """Where strict's library lives (what SE_GYM_STRICT_SERVER sets at start-up): the writer's
    switch (read when the library is written for a judge) and the strict gate that follows it
    (read when an answer is prepared).  Set before each path's work in the alternating rounds."""
    from se_gym.judge import gates
    from se_gym.library import writer

    writer.STRICT_SERVER = server
    if hasattr(gates, "set_permissive"):
        gates.set_permissive(server)


class Route:
    """One judging path: a long-lived Judge, its library mode, and what its rounds measured."""

    def __init__(self, name: str, profile: str, server: bool, dependence: bool, lib, workers: int | None):
        from se_gym.judge import Judge

        self.name, self.profile, self.server = name, profile, server
        library_mode(server)
        # (strict's default runs the dependence check: off here unless this path asks for it)
        kwargs = {"dependence": dependence} if profile == "strict" else {}
        self.judge = _timed(Judge)(lib, profile=profile, workers=workers, **kwargs)
        self.judge.done_at = {}
        self.rates: list[float] = []
        self.cpu_per_verdict: list[float] = []
        self.lat1: list[float] = []
        self.lat64: list[float] = []
        self.digests: set[str] = set()
        self.passed = 0
        self.agree = 0  # rows whose SE-Bench code is the official verdict

    def close(self) -> None:
        self.judge.close()


def _timed(judge_cls):
    """A Judge that notes when each verdict of a batch is made (index -> perf_counter): decided
    without running (a gate) when the answer is prepared, else when its result is read."""

    class Timed(judge_cls):
        done_at: dict[int, float] = {}

        def _prepare(self, index, item):
            p = super()._prepare(index, item)
            if p.verdict is not None:
                self.done_at[index] = time.perf_counter()
            return p

        def _finish_contained(self, p, r):
            v = super()._finish_contained(p, r)
            if p.index >= 0:  # (-1: a reference's run, for the dependence check)
                self.done_at[p.index] = time.perf_counter()
            return v

        def _checked(self, check):  # the dependence check's verdicts: made when it ends
            super()._checked(check)
            now = time.perf_counter()
            for it in check.items:
                self.done_at[it.pending.index] = now

    return Timed


def all_up(judge, timeout: float = 120.0) -> None:
    """Wait until every worker of the judge's pool is up: a judge's pool serves once its first worker
    is, and the others' start (NumPy's import, the warm-up) would otherwise be counted in a round."""
    box = judge.sandbox
    end = time.monotonic() + timeout
    while any(w is None for w in getattr(box, "_workers", ())) and time.monotonic() < end:
        time.sleep(0.05)


def _latencies(judge, batch: list[tuple]) -> list[float]:
    judge.done_at = {}
    t0 = time.perf_counter()
    judge.judge_many(batch)
    end = time.perf_counter()
    return [judge.done_at.get(i, end) - t0 for i in range(len(batch))]


def digest(verdicts) -> str:
    h = hashlib.sha256()
    for v in verdicts:
        h.update(f"{v.status.value}|{v.sebench_code}|{v.reward}\n".encode())
    return h.hexdigest()[:12]


def warm(data: Path, rounds: int, dependence: bool, workers: int | None, singles: int, argument_keys_off: bool = False,
         only: set | None = None) -> dict[str, Route]:
    from se_gym.library import official

    rows = load_rows(data)
    lib = official(data / "api_doc.jsonl")
    # each answer with its task's reference (what the env and se-gym judge pass): the dependence
    # check uses it; the other paths ignore it
    dependence = dependence or argument_keys_off
    items = items_of(rows, references(data, lib) if dependence else None)
    specs = [("sebench", "sebench", True, False), ("strict", "strict", True, False), ("strict-inproc", "strict", False, False)]
    if dependence:
        specs += [("strict+dep", "strict", True, True)]
    if argument_keys_off:  # (the same check with keys as before issue 42's round 3: what its argument keys cost)
        specs += [("strict+dep-args-off", "strict", True, True)]
    if only:
        specs = [s for s in specs if s[0] in only]
    paths: dict[str, Route] = {}
    try:
        for name, profile, server, dep in specs:
            try:
                paths[name] = Route(name, profile, server, dep, lib, workers)
                if name == "strict+dep-args-off":
                    paths[name].judge._dependence_arguments = False
            except TypeError as exc:  # a Judge without the dependence check
                print(f"{name}: unavailable here ({exc}): the dependence check has not landed in this checkout")
        for path in paths.values():  # start and warm each: the first batch is not measured (with the
            library_mode(path.server)  # dependence check: the references' records, kept for the judge's life)
            path.judge.judge_many(items if path.name.startswith("strict+dep") else items[:64])
            all_up(path.judge)
        print(f"warm: {len(items)} real answers (parity_dev b and d variants), {rounds} alternating rounds, "
              f"{cores()} cores; {load_line()}", flush=True)
        for r in range(rounds):
            for path in paths.values():
                library_mode(path.server)
                j = path.judge
                before, s0, t0 = _tree_cpu(), _self_cpu(), time.perf_counter()
                verdicts = j.judge_many(items)
                dt = time.perf_counter() - t0
                after = _tree_cpu()
                cpu = _self_cpu() - s0 + sum(after.values()) - sum(before.get(p, 0.0) for p in after)
                path.rates.append(len(items) / dt)
                path.cpu_per_verdict.append(cpu / len(items))
                path.digests.add(digest(verdicts))
                path.passed = sum(v.passed for v in verdicts)
                path.agree = sum(v.sebench_code == row["verdict"] for v, row in zip(verdicts, rows))
                for k in range(2):
                    start = (r * 2 + k) * 64 % len(items)
                    path.lat64 += _latencies(j, (items * 2)[start:start + 64])
                for k in range(singles):
                    path.lat1 += _latencies(j, [items[(r * singles + k) * 7 % len(items)]])
            line = "  ".join(f"{p.name} {p.rates[-1]:.0f}/s {p.cpu_per_verdict[-1] * 1e3:.2f} ms CPU" for p in paths.values())
            print(f"round {r}: {line}; {load_line()}", flush=True)
        report_warm(paths, len(items), rows)
        return paths
    finally:
        for path in paths.values():
            path.close()
        library_mode(True)


def report_warm(paths: dict[str, Route], n: int, rows: list[dict]) -> None:
    base = paths.get("sebench")
    k = cores()
    print("\n| path | verdicts/s | per core | CPU ms / verdict | verdicts per CPU-s | core-h / 1M verdicts | "
          "p50 / p99 batch 1 (ms) | p50 / p99 batch 64 (ms) | x sebench (wall, CPU) | accepts | digest |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for p in paths.values():
        rate, cpu = statistics.median(p.rates), statistics.median(p.cpu_per_verdict)
        if base is not None:
            wall_x = statistics.median(a / b for a, b in zip(p.rates, base.rates))
            cpu_x = statistics.median(b / a for a, b in zip(p.cpu_per_verdict, base.cpu_per_verdict))
            ratio = f"{wall_x:.2f} / {cpu_x:.2f}"
        else:
            ratio = "-"
        digests = ",".join(sorted(p.digests)) + ("" if len(p.digests) == 1 else " (VARIES)")
        print(f"| {p.name} | {rate:.0f} ({min(p.rates):.0f}-{max(p.rates):.0f}) | {rate / k:.0f} | {cpu * 1e3:.2f} | "
              f"{1 / cpu:.0f} | {cpu * 1e6 / 3600:.2f} | {pct(p.lat1, .5) * 1e3:.1f} / {pct(p.lat1, .99) * 1e3:.1f} | "
              f"{pct(p.lat64, .5) * 1e3:.0f} / {pct(p.lat64, .99) * 1e3:.0f} | {ratio} | {p.passed}/{n} | {digests} |")
    print(f"(median over rounds, range in brackets; per core: verdicts/s / {k}; core-hours from CPU per verdict; "
          f"x sebench: the per-round ratio's median, of verdicts/s and of verdicts per CPU-s; {load_line()})")
    if base is not None:
        print(f"sebench's codes agree with the official verdicts on {base.agree}/{n} of these rows "
              "(all 780 parity_dev rows: benchmarks/strict_parity.py)")


# -- cold ----------------------------------------------------------------------------------------
_ENV_SCRIPT = """
import time, sys
import gymnasium as gym
import se_gym
env = gym.make("SEBench-v0", profile=sys.argv[1])
obs, info = env.reset(seed=0)
answer = "```python\\n" + env.unwrapped.task.library_solution + "\\n```"
obs, reward, term, trunc, info = env.step(answer)
print("verdict", reward, info["verdict"].status.value, flush=True)
env.close()
"""


def _spawn_until(cmd: list[str], env: dict, marker: bytes | None, out_file: Path | None, cwd: str) -> tuple[float, float]:
    """(seconds to the verdict, seconds to the exit) of a fresh process: the verdict is the line
    starting with ``marker`` on its stdout, or the first row written to ``out_file`` (its mtime)."""
    t_wall = time.time()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    first = None
    if marker is not None:
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith(marker):
                first = time.perf_counter() - t0
                break
    out, err = proc.communicate(timeout=300)
    total = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:4]} failed ({proc.returncode}): {err.decode(errors='replace')[-800:]}")
    if out_file is not None:
        first = out_file.stat().st_mtime_ns / 1e9 - t_wall
    return (first if first is not None else total), total


def compile_trees(others: list[str]) -> None:
    """se_gym as installed, here and in ``others``: with its bytecode cached (a machine that sets
    PYTHONDONTWRITEBYTECODE, as this one does, would otherwise compile se_gym's ~100 modules again at
    every start: ~0.2 s, no part of se-gym's own start-up)."""
    import se_gym

    for tree in (str(Path(se_gym.__file__).parent), *(str(Path(t) / "se_gym") for t in others)):
        subprocess.run([sys.executable, "-m", "compileall", "-q", tree], check=True, capture_output=True)


def cold(data: Path, runs: int, before: str | None) -> None:
    rows = load_rows(data)
    tmp = Path(tempfile.mkdtemp(prefix="se-gym-cold-"))
    one = tmp / "one.jsonl"
    one.write_text(json.dumps(rows[1]) + "\n")
    api = str(data / "api_doc.jsonl")
    trees = {"now": None} if before is None else {"now": None, "before": before}
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cases: dict[str, list] = {}

    def env_of(tree):
        return {**base_env, "PYTHONPATH": tree} if tree else base_env

    compile_trees([t for t in trees.values() if t])
    try:
        for r in range(runs):
            t = _spawn_until([sys.executable, "-c", "print('verdict')"], base_env, b"verdict", None, str(tmp))
            cases.setdefault("python -c pass", []).append(t)
            for tree_name, tree in trees.items():
                for profile in ("sebench", "strict"):
                    out = tmp / f"out-{tree_name}-{profile}-{r}.jsonl"
                    cmd = [sys.executable, "-c", "import sys; from se_gym.cli import main; sys.exit(main())", "judge", "--input", str(one),
                           "--out", str(out), "--library", f"official:{api}", "--profile", profile, "--quiet"]
                    cases.setdefault(f"se-gym judge, 1 answer, {profile} [{tree_name}]", []).append(
                        _spawn_until(cmd, env_of(tree), None, out, str(tmp)))
                    cmd = [sys.executable, "-c", _ENV_SCRIPT, profile]
                    cases.setdefault(f"gym.make + reset + step, {profile} [{tree_name}]", []).append(
                        _spawn_until(cmd, env_of(tree), b"verdict", None, str(tmp)))
            print(f"cold round {r} done; {load_line()}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    interp = statistics.median(t for t, _ in cases.pop("python -c pass"))
    print(f"\ncold start, {runs} alternating rounds (medians; wall; {load_line()}); the interpreter's own start "
          f"(python -c, this venv): {interp * 1e3:.0f} ms")
    print("| case | to the verdict (ms) | over the interpreter (ms) | to the exit (ms) | range to the verdict (ms) |")
    print("|---|---|---|---|---|")
    for name, ts in cases.items():
        first = [a for a, _ in ts]
        print(f"| {name} | {statistics.median(first) * 1e3:.0f} | {(statistics.median(first) - interp) * 1e3:.0f} | "
              f"{statistics.median(b for _, b in ts) * 1e3:.0f} | {min(first) * 1e3:.0f}-{max(first) * 1e3:.0f} |")


# -- SE-Bench's own pipeline ---------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"SE-Bench's worker exited (exit status {proc.returncode}; its log is worker.log)")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("SE-Bench's worker did not start listening")


def pipeline(data: Path, runs: int, repo: Path, threads: int, limit: int | None = None) -> None:
    """SE-Bench's filter script + Flask worker against ``se-gym judge``, both cold, alternating."""
    import site

    from se_gym.library import official

    compile_trees([])
    src = repo / "src"
    if not (src / "filter_correct_trajectory.py").is_file() or not (src / "evaluation" / "worker.py").is_file():
        raise SystemExit(f"{repo}: not a checkout of thunlp/SE-Bench (src/filter_correct_trajectory.py, src/evaluation/worker.py)")
    rows = load_rows(data)[:limit]
    official_share = {k: sum(r["verdict"] == c for r in rows) / len(rows) for k, c in
                      (("Acc", 1), ("Exe_error", 3), ("Result_error", 0), ("Without_zwc", 4), ("Numpy", 2))}
    tmp = Path(tempfile.mkdtemp(prefix="se-gym-pipeline-"))
    answers = tmp / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    lib = official(data / "api_doc.jsonl")
    libpath = str(lib.materialize("sebench", docs=False))  # SE-Bench's zwc is not published: the official names, our copy
    # the worker's `python main.py`: a bare venv's interpreter (like the official image's, no start-up
    # hooks), NumPy and the library as plain path entries
    bare = clean_python(str(tmp / "venv"))
    import numpy

    # (NumPy's own folder too: a venv may see it through a .pth file, which plain path entries skip)
    path_env = os.pathsep.join([libpath, str(Path(numpy.__file__).parents[1]), *site.getsitepackages()])
    worker_env = {"PATH": f"{Path(bare).parent}:/usr/bin:/bin", "PYTHONPATH": path_env, "OMP_NUM_THREADS": "1",
                  "OPENBLAS_NUM_THREADS": "1", "HOME": str(tmp)}
    port = _free_port()
    work = tmp / "worker-cwd"
    work.mkdir()
    # SE-Bench's app object as it is; `flask run` instead of its __main__ only to choose the port
    # (its app.run hard-codes 8111); threaded, as app.run is by default
    # (its log, a line per request, to a file: a pipe nobody reads fills, and the server then hangs)
    log = open(tmp / "worker.log", "wb")
    flask = subprocess.Popen([sys.executable, "-m", "flask", "--app", f"{src / 'evaluation' / 'worker.py'}:app", "run",
                              "--host", "127.0.0.1", "--port", str(port), "--with-threads"],
                             cwd=str(work), env=worker_env, stdout=subprocess.DEVNULL, stderr=log)
    ratios, theirs, ours = [], [], []
    filter_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        _wait_port(port, flask)
        print("the official verdicts of these answers: " + ", ".join(f"{k} {v:.3f}" for k, v in official_share.items()))
        print(f"pipeline: {len(rows)} answers; SE-Bench {repo} (filter script, {threads} threads, Flask worker on "
              f"port {port}); se-gym judge --profile sebench; {runs} alternating pairs; {load_line()}", flush=True)
        for r in range(runs):
            for ours_first in ((True, False) if r % 2 == 0 else (False, True)):
                if ours_first:
                    out = tmp / f"ours-{r}.jsonl"
                    t = time.perf_counter()
                    subprocess.run([sys.executable, "-c", "import sys; from se_gym.cli import main; sys.exit(main())", "judge",
                                    "--input", str(answers), "--out", str(out), "--library", f"official:{data / 'api_doc.jsonl'}",
                                    "--profile", "sebench", "--quiet"], check=True, capture_output=True, env=filter_env)
                    ours.append(time.perf_counter() - t)
                    got = [json.loads(line)["judge"]["sebench_code"] for line in out.read_text().splitlines()]
                    agree = sum(g == row["verdict"] for g, row in zip(got, rows))
                else:
                    t = time.perf_counter()
                    p = subprocess.run([sys.executable, str(src / "filter_correct_trajectory.py"), "--input_path", str(answers),
                                        "--num_workers", str(threads), "--host", "127.0.0.1", "--port", str(port)],
                                       cwd=str(src), capture_output=True, text=True, env=filter_env)
                    theirs.append(time.perf_counter() - t)
                    if p.returncode != 0:
                        raise RuntimeError(f"SE-Bench's filter script failed: {p.stderr[-800:]}")
                    stats = {k: v.strip() for k, _, v in (line.partition(":") for line in p.stdout.splitlines()) if v}
                    acc = ", ".join(f"{k} {float(stats[k]):.3f}" for k in official_share if k in stats)
                    # under heavy load its 3 s limit cuts programs short: its verdicts are then not the official ones
                    same = all(abs(float(stats.get(k, -1)) - v) < 5e-4 for k, v in official_share.items())
                    acc += "; its verdicts are the official ones" if same else "; NOT the official verdicts (its 3 s limit, under load)"
            ratios.append(theirs[-1] / ours[-1])
            print(f"pair {r}: SE-Bench {theirs[-1]:.2f} s ({acc}), se-gym judge {ours[-1]:.2f} s "
                  f"(official agreement {agree}/{len(rows)}), {ratios[-1]:.1f}x; {load_line()}", flush=True)
    finally:
        flask.terminate()
        try:
            flask.wait(timeout=10)
        except subprocess.TimeoutExpired:
            flask.kill()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nSE-Bench's own pipeline vs se-gym judge, cold, {len(rows)} answers, {runs} pairs: SE-Bench median "
          f"{statistics.median(theirs):.2f} s, se-gym {statistics.median(ours):.2f} s, speed-up median "
          f"{statistics.median(ratios):.1f}x (pairs {min(ratios):.1f}-{max(ratios):.1f}x); {load_line()}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", help="which parts: any of warm, cold, pipeline")
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("SE_GYM_SHARED", "/work/shared")) / "sebench",
                    help="folder of parity_dev.jsonl and api_doc.jsonl")
    ap.add_argument("--rounds", type=int, default=3, help="warm: alternating rounds")
    ap.add_argument("--singles", type=int, default=32, help="warm: single answers per round and path (batch-1 latency)")
    ap.add_argument("--workers", type=int, default=None, help="warm: sandbox workers (default: one per CPU)")
    ap.add_argument("--dependence", action="store_true", help="warm: also strict with the dependence check (where it has landed)")
    ap.add_argument("--argument-keys-off", action="store_true",
                    help="warm: also strict with the dependence check keyed as before issue 42's round 3 (its arguments' cost)")
    ap.add_argument("--paths", default=None, help="warm: only these paths (comma-separated names)")
    ap.add_argument("--runs", type=int, default=5, help="cold: rounds; pipeline: pairs")
    ap.add_argument("--before", default=None, help="cold: also run this checkout's se_gym (a folder holding se_gym/) in the same rounds")
    ap.add_argument("--sebench-repo", type=Path, default=None, help="pipeline: a checkout of github.com/thunlp/SE-Bench")
    ap.add_argument("--threads", type=int, default=8, help="pipeline: the filter script's --num_workers")
    ap.add_argument("--limit", type=int, default=None, help="pipeline: only the first N answers (a quick check)")
    args = ap.parse_args()
    unknown = sorted(set(args.parts) - {"warm", "cold", "pipeline"})
    if unknown:
        ap.error(f"unknown part(s) {unknown}: choose from warm, cold, pipeline")
    args.parts = args.parts or ["warm", "cold"]
    if not (args.data / "parity_dev.jsonl").exists():
        print(f"no parity data in {args.data}", file=sys.stderr)
        return 1
    if "warm" in args.parts:
        warm(args.data, args.rounds, args.dependence, args.workers, args.singles, args.argument_keys_off,
             set(args.paths.split(",")) if args.paths else None)
    if "cold" in args.parts:
        cold(args.data, args.runs, args.before)
    if "pipeline" in args.parts:
        if args.sebench_repo is None:
            print("pipeline needs --sebench-repo (a checkout of github.com/thunlp/SE-Bench)", file=sys.stderr)
            return 1
        pipeline(args.data, args.runs, args.sebench_repo, args.threads, args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
