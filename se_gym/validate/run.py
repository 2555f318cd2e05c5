"""``validate(config)``: every check of every task of every suite, one report.

Per suite: the tasks are loaded (a built-in suite is built first if it is not cached), a second
process starts making them again (:mod:`se_gym.validate.replay`), and the probes are judged in
batches of ``config.chunk`` tasks, one ``Judge.judge_many`` per profile and round.  Per run: the
containment probe in every sandbox this machine has, and the first suite of each spec judged again
in those sandboxes.  ``config.suites_at_once`` suites are checked at once: those judged in the other
sandboxes (and the containment probes) in this process, first, the others each in a process of its
own (:mod:`se_gym.validate.lane`).  A finished suite's records are kept in ``OUT/suites/``; a rerun
with the same options skips it.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

from . import checks, data, probing, report, suites
from .checks import Result
from .config import ValidateConfig, ValidateError

log = logging.getLogger(__name__)


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


# -- containment ------------------------------------------------------------------------------------
def sandbox_available(name: Any) -> tuple[bool, str]:
    """Whether this machine can run the ``name`` sandbox (any sandbox spec; a missing one is reported,
    not failed): what its backend's class says of itself (:meth:`se_gym.sandbox.Sandbox.available`)."""
    from ..registry import RegistryError
    from ..sandbox.spec import SandboxSpec

    try:
        spec = SandboxSpec.parse(name)
        return spec.load().available(spec.options)
    except RegistryError as exc:
        return False, str(exc)


def probe_containment(library: Any, sandbox: Any, wall_s: float = 10.0) -> Result:
    """Run the containment probe once in ``sandbox`` (a name or a Sandbox): the program may neither
    connect to a socket this process listens on, nor read a file of this machine it was not given,
    nor write into a folder of it."""
    from ..judge import Judge
    from ..sandbox import Limits
    from .probes import CONTAINED, containment_answer

    with tempfile.TemporaryDirectory(prefix="se-gym-validate-") as tmp:
        os.chmod(tmp, 0o755)
        secret = Path(tmp) / "secret.txt"
        secret.write_text("se-gym validate: a program must not read this\n")
        os.chmod(secret, 0o644)
        target = Path(tmp) / "open"
        target.mkdir()
        os.chmod(target, 0o777)
        written = target / "written.txt"
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen(4)
            server.setblocking(False)
            answer = containment_answer(library, server.getsockname()[1], str(secret), str(written))
            with Judge(library, profile="sebench", sandbox=sandbox, limits=Limits(wall_s=wall_s, cpu_s=wall_s)) as judge:
                verdict = judge.judge(answer, [{"input": "x=1", "output": CONTAINED}])
            seen = []
            try:
                conn, _ = server.accept()
                conn.close()
                seen.append("a connection reached this machine's socket")
            except (BlockingIOError, OSError):
                pass
        if written.exists():
            seen.append("a file was written into this machine's folder")
    return checks.containment(verdict, seen)


# -- one suite ----------------------------------------------------------------------------------------
def _child_imports(ref: suites.SuiteRef) -> list[str]:
    """Modules the second process imports first: where a plug-in suite kind was registered."""
    from ..registry import RegistryError
    from ..tasks.spec import TASK_SUITES

    try:
        module = getattr(TASK_SUITES.load(ref.spec.partition(":")[0]), "__module__", "")
    except RegistryError:
        return []
    return [module] if module and module != "__main__" and not module.startswith("se_gym.") else []


def start_second_process(ref: suites.SuiteRef, library: Any, config: ValidateConfig, sample: Sequence[int], dependence: bool,
                         workdir: Path) -> tuple[subprocess.Popen, Path]:
    request = {"spec": ref.spec, "library": ref.library, "library_spec": library.source, "splits": list(config.splits),
               "limit": config.limit, "sample": list(sample), "visible_cases": config.visible_cases, "wall_s": config.wall_s,
               "cpu_s": config.cpu_s, "memory_mb": config.memory_mb, "retry_wall_s": config.retry_wall_s, "workers": config.workers, "sandbox": config.sandbox,
               "dependence": dependence, "imports": _child_imports(ref)}
    req, ans = workdir / "request.json", workdir / "answer.json"
    req.write_text(json.dumps(request), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = str((int(env.get("PYTHONHASHSEED", "0") or 0) + 7919) % 4294967295 or 1)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.Popen([sys.executable, "-m", "se_gym.validate.replay", str(req), str(ans)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, ans


def check_suite(ref: suites.SuiteRef, config: ValidateConfig, bar: Any = None, other_sandboxes: Sequence[str] = ()) -> dict[str, Any]:
    """Every check of every task of ``ref``: ``{"suite": {...}, "tasks": [records], "run_checks": [...]}``."""
    t0 = time.perf_counter()
    tasks, library, splits = suites.load(ref, config.splits, config.limit, progress=config.progress)
    dependence, why = probing.judge_supports_dependence()
    sample = [i for i in range(len(tasks)) if i % config.verdict_every == 0]
    run_checks: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="se-gym-validate-") as tmp:
        child = start_second_process(ref, library, config, sample, dependence, Path(tmp)) if config.second_process else None
        judges = probing.make_judges(library, config.sandbox, config.wall_s, config.workers, dependence,
                                      cpu_s=config.cpu_s, memory_mb=config.memory_mb)
        results: dict[int, dict[str, Result]] = {}
        mine: dict[int, dict[str, str]] = {}
        answers_of: dict[int, probing.TaskProbes] = {}
        verdicts_of: dict[int, dict] = {}
        failing: dict[int, dict] = {}  # the tasks whose oracle failed: their reference's verdicts
        picked = set(sample)

        def judged(idx: list[int]) -> tuple[list[probing.TaskProbes], list[dict]]:
            tps = [probing.task_probes(tasks[i], library, dependence, echo=i in picked) for i in idx]
            return tps, probing.judge_probes(judges, tps, library, config.retry_wall_s)

        def checked(idx: list[int], tps: list[probing.TaskProbes], got: list[dict]) -> None:
            for i, tp, verdicts in zip(idx, tps, got):
                results[i] = _task_checks(tasks[i], library, tp, verdicts, envs, i, config, dependence, why)
                mine[i] = probing.digests(tasks[i], probing.prompts(envs, i), verdicts, i in picked)
                if results[i]["oracle"].severity == "error" and results[i]["oracle"].result == "fail":
                    failing[i] = _oracle_verdicts(verdicts)
                if i in picked:
                    answers_of[i], verdicts_of[i] = tp, {pk: verdicts[pk] for pk in probing.SAMPLED if pk in verdicts}
            if bar is not None:
                bar.update(len(idx))

        try:
            envs = probing.make_envs(tasks, library, judges["strict"], config.visible_cases)
            chunks = [list(range(s, min(s + config.chunk, len(tasks)))) for s in range(0, len(tasks), config.chunk)]
            # the next batch is judged (its programs run in the sandbox) while this one's checks are made
            with ThreadPoolExecutor(1, thread_name_prefix="se-gym-validate") as pool:
                ahead = pool.submit(judged, chunks[0])
                for k, idx in enumerate(chunks):
                    tps, got = ahead.result()
                    if k + 1 < len(chunks):
                        ahead = pool.submit(judged, chunks[k + 1])
                    checked(idx, tps, got)
            order = probing.episode_order(tasks, library, judges["strict"])
            _data_or_ours(tasks, results, failing, judges["sebench"].sandbox, config.wall_s)
        finally:
            probing.close_judges(judges)
        # the same verdicts from the other sandboxes, on the first tasks of the sample
        for name in other_sandboxes:
            picked = sample[: config.sandbox_sample]
            found = _other_sandbox(name, library, config, picked, answers_of, verdicts_of, results, dependence)
            run_checks.append(report.run_record("determinism", f"{ref.spec}: {name} vs {config.sandbox} sandbox", found))
        theirs = _collect(child, len(tasks)) if child is not None else None
    for i in range(len(tasks)):
        if theirs is None:
            det = checks.not_run("determinism", "unsampled", "no second process (--no-second-process)")
        else:
            other = theirs["tasks"][i] if isinstance(theirs.get("tasks"), list) and i < len(theirs["tasks"]) else None
            det = checks.determinism(mine[i], other, i in sample) if "error" not in theirs else checks.failed("determinism", theirs["error"])
        results[i]["determinism"] = checks.merge([det, results[i].get("determinism", checks.PASS)])
    if theirs is not None and "error" not in theirs:
        run_checks.append(report.run_record("determinism", f"{ref.spec}: library", checks.PASS if theirs.get("library") == probing.library_digest(library)
                                            else checks.failed("determinism", "the library differs in another process")))
        run_checks.append(report.run_record("determinism", f"{ref.spec}: seeded episodes", checks.PASS if theirs.get("episode_order") == order
                                            else checks.failed("determinism", "a seeded env's episodes differ in another process")))
    records = [report.task_record(ref.spec, tasks[i], results[i]) for i in range(len(tasks))]
    info = {"spec": ref.spec, "library": library.source, "splits": splits, "tasks": len(tasks), "wall_s": round(time.perf_counter() - t0, 1)}
    return {"suite": info, "tasks": records, "run_checks": run_checks}


def _data_or_ours(tasks: Sequence[Any], results: dict, failing: dict[int, dict], sandbox: Any, wall_s: float) -> None:
    """The failed oracles the suite's own data explain become the data's warnings (see validate/data.py):
    each such task's NumPy reference runs once with NumPy, in ``sandbox``."""
    from ..sandbox import Limits

    runs = [(i, p) for i in sorted(failing) if (p := data.program(tasks[i])) is not None]
    if not runs:
        return
    got = sandbox.run([p for _, p in runs], Limits(wall_s=2 * wall_s, cpu_s=2 * wall_s))
    for (i, _), r in zip(runs, got):
        results[i]["oracle"] = data.classify(results[i]["oracle"], failing[i], tasks[i], data.outputs(r.stdout))


def _oracle_verdicts(verdicts: dict) -> dict:
    """(profile, form) -> the reference's verdict, from a task's (profile, probe) -> verdict."""
    return {(k[0], k[1].split(":", 1)[1]): v for k, v in verdicts.items() if k[1].startswith("oracle:")}


def _task_checks(task: Any, library: Any, tp: probing.TaskProbes, verdicts: dict, envs: dict, index: int, config: ValidateConfig,
                 dependence: bool, why: str) -> dict[str, Result]:
    oracle_v = _oracle_verdicts(verdicts)
    floor_v = {k[1].split(":", 1)[1]: v for k, v in verdicts.items() if k[1].startswith("floor:")}
    out = {
        "oracle": checks.oracle(oracle_v, bool(task.library_solution.strip())),
        "floor": checks.floor(floor_v),
        "dependence": data.dependence_of(task, checks.dependence(verdicts.get(("strict", "oracle:native")),
                                                                  verdicts.get(("strict", "answer_key_gated")), dependence, why)),
    }
    allowed = "\n".join(_docs(task, library))
    out["leakage"] = checks.leakage(task, probing.observations(envs, index, tp.answers, verdicts), config.visible_cases, allowed)
    return out


def _docs(task: Any, library: Any) -> list[str]:
    out = []
    for key in task.functions:
        try:
            out.append(library.doc(key))
        except KeyError:
            continue
    return out


def _other_sandbox(name: str, library: Any, config: ValidateConfig, picked: Sequence[int], answers_of: dict, verdicts_of: dict,
                   results: dict, dependence: bool) -> Result:
    """Judge the sampled probes of ``picked`` again in the ``name`` sandbox; a differing verdict
    fails that task's determinism check too."""
    items = [(answers_of[i].task, p, k, answers_of[i].answers[(p, k)]) for i in picked for (p, k) in verdicts_of[i]]
    owners = [i for i in picked for _ in verdicts_of[i]]
    got: list[Any] = [None] * len(items)
    judges = probing.make_judges(library, name, config.wall_s, None, dependence, cpu_s=config.cpu_s, memory_mb=config.memory_mb)
    names = [probing.judge_name(judges, it[1], it[2]) for it in items]
    try:
        # one sandbox at a time (a small Ray cluster has room for one): sebench's, then strict's (the
        # dependence judge borrows it, so it goes before strict's is closed)
        for name in sorted(judges, key=lambda n: (n == "strict", n != "sebench")):
            idx = [n for n, k in enumerate(names) if k == name]
            try:
                for n, v in zip(idx, probing.judge_answers({name: judges[name]}, [items[n] for n in idx], config.retry_wall_s)):
                    got[n] = v
            finally:
                if name != probing.WITH_DEPENDENCE:
                    judges[name].close()
    except Exception as exc:  # noqa: BLE001 - the sandbox did not start: the check could not run
        return checks.failed("infrastructure", f"the {name} sandbox failed: {type(exc).__name__}: {exc}")
    finally:
        probing.close_judges(judges)
    bad = []
    for i, it, v in zip(owners, items, got):
        ours = verdicts_of[i][(it[1], it[2])]
        if checks.verdict_digest(v) != checks.verdict_digest(ours):
            bad.append(i)
            detail = f"{it[1]} {it[2]}: {v.status.value} in the {name} sandbox, {ours.status.value} in {config.sandbox}"
            results[i]["determinism"] = checks.failed("determinism", detail)
    if bad:
        return checks.failed("determinism", f"{len(bad)} verdict(s) of {len(items)} differ (first: task {answers_of[bad[0]].task.id})")
    return Result("pass", None, f"{len(items)} verdicts of {len(picked)} tasks agree")


def _collect(child: tuple[subprocess.Popen, Path], n: int) -> dict[str, Any]:
    proc, answer = child
    try:
        _, err = proc.communicate(timeout=3600)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"error": "the second process did not finish within an hour"}
    if proc.returncode != 0 or not answer.is_file():
        last = (err or "").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return {"error": f"the second process failed: {last[0]}"}
    data = json.loads(answer.read_text(encoding="utf-8"))
    if len(data.get("tasks", ())) != n:
        return {"error": f"the second process made {len(data.get('tasks', ()))} tasks, this one {n}"}
    return data


# -- the whole run ----------------------------------------------------------------------------------
def validate(config: ValidateConfig) -> dict[str, Any]:
    """Run every check (see the module docstring); returns the report (also written to ``config.out``)."""
    from ..progress import bar as progress_bar
    from ..storage import write_text_atomic

    t0 = time.perf_counter()
    load_before = _load()
    refs = suites.expand(config)
    out = Path(config.out)
    done_dir = _run_dir(out, config)
    run_checks: list[dict[str, Any]] = []
    others = [s for s in dict.fromkeys(config.sandboxes) if s != config.sandbox]
    available = {}
    for name in dict.fromkeys([config.sandbox, *others]):
        ok, why = sandbox_available(name) if name != config.sandbox else (True, "")
        available[name] = ok
        if not ok:
            run_checks.append(report.run_record("containment", f"{name} sandbox", checks.not_run("containment", "unavailable", why)))
    ray_owned = False
    for name in [s for s in available if available[s] and _is_cluster(s)][:1]:  # (one cluster, joined by all of them)
        try:
            ray_owned = _start_ray()
        except Exception as exc:  # noqa: BLE001 - Ray is installed but does not start here: said, not fatal
            for other in [s for s in available if available[s] and _is_cluster(s)]:
                available[other] = False
                run_checks.append(report.run_record("containment", f"{other} sandbox", checks.not_run(
                    "containment", "unavailable", f"Ray did not start ({type(exc).__name__}: {str(exc)[:120]})")))
    # every suite's plan in the order of the report: the first suite of each spec kind is judged again
    # in the other sandboxes; the suites that need Ray (and the containment probes, after suite 0)
    # go first, so that Ray stops as soon as they are done
    plan: list[tuple[int, suites.SuiteRef, list[str]]] = []
    first_of_spec: set[str] = set()
    for n, ref in enumerate(refs):
        kind = ref.spec.partition(":")[0]
        plan.append((n, ref, [s for s in others if available.get(s)] if kind not in first_of_spec else []))
        first_of_spec.add(kind)
    special = [item for item in plan if item[0] == 0 or item[2]]  # this process's: Ray, docker, containment
    plain = [item for item in plan if not (item[0] == 0 or item[2])]
    clustered = {n for n, _, compare_in in plan if n == 0 or any(_is_cluster(s) for s in compare_in)}
    parts: list[dict[str, Any]] = [{} for _ in refs]
    contained: list[dict[str, Any]] = []
    lock = threading.Lock()
    failed: list[BaseException] = []
    ray_state = {"owned": ray_owned}
    running: set = set()  # the other lanes' processes

    def stop_ray() -> None:
        if ray_state["owned"]:
            ray_state["owned"] = False
            from ..distributed.cluster import shutdown

            shutdown()

    def lane(bar: Any, here: bool) -> None:
        """Check suites until none is left: in this process (``here``: the suites that need the other
        sandboxes first), or each in a process of its own (:mod:`se_gym.validate.lane`)."""
        while not failed:
            with lock:
                item = (special or plain or [None]).pop(0) if here else (plain or [None]).pop(0)
            if item is None:
                return
            n, ref, compare_in = item
            saved = done_dir / f"{n:03d}.json"
            if saved.is_file():
                part = json.loads(saved.read_text(encoding="utf-8"))
                bar.update(part["suite"]["tasks"])
            elif here:
                bar.set_postfix_str(ref.spec)
                part = check_suite(ref, config, bar, compare_in)
                write_text_atomic(saved, json.dumps(part))
            else:
                part = _check_elsewhere(ref, config, bar, saved, running)
            parts[n] = part
            if n == 0:
                library = suites.load(ref, config.splits, 1)[1]
                for name in [s for s in dict.fromkeys([config.sandbox, *others]) if available.get(s)]:
                    log.info("validate: probing the %s sandbox's walls", name)
                    contained.append(report.run_record("containment", f"{name} sandbox", _contained(library, name)))
            with lock:
                clustered.discard(n)
                if not clustered:
                    stop_ray()

    def guarded(bar: Any) -> None:
        try:
            lane(bar, False)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
            failed.append(exc)

    at_once = max(1, min(config.suites_at_once or min(2, os.cpu_count() or 1), len(refs)))
    try:
        bar = _LockedBar(progress_bar(total=None, desc="validate", unit="task", disable=not config.progress))
        try:
            # one suite per lane: one suite's pauses (its sandboxes starting, its second process
            # finishing, a batch's last programs) are another's time on the machine's cores; the
            # other lanes' suites are checked in processes of their own (their threads wait for them)
            lanes = [threading.Thread(target=guarded, args=(bar,), name=f"se-gym-validate-lane-{k}", daemon=True)
                     for k in range(1, at_once)]
            for t in lanes:
                t.start()
            try:
                lane(bar, True)
            except BaseException as exc:
                failed.append(exc)
                raise
            for t in lanes:
                t.join()
            if failed:
                raise failed[0]
        finally:
            bar.close()
    finally:
        for proc in list(running):  # (stopped early: the other lanes' suites stop too)
            proc.kill()
        with lock:
            stop_ray()
    run_checks += contained
    tasks = [rec for p in parts for rec in p["tasks"]]
    run_checks += [rec for p in parts for rec in p["run_checks"]]
    from .._version import __version__

    rep = {
        "schema": report.SCHEMA, "schema_version": report.SCHEMA_VERSION, "se_gym": __version__,
        "severity_policy": report.policy(), "config": asdict(config),
        "machine": {"cpus": os.cpu_count(), "load_before": load_before, "load_after": _load()},
        "suites": [p["suite"] for p in parts], "run_checks": run_checks, "tasks": tasks,
    }
    rep["summary"] = report.summarize(tasks, run_checks, time.perf_counter() - t0)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "report.json", json.dumps(rep, separators=(",", ":")))
    write_text_atomic(out / "summary.txt", report.screen(rep, str(out / "report.json")) + "\n")
    return rep


def _check_elsewhere(ref: suites.SuiteRef, config: ValidateConfig, bar: Any, saved: Path, running: set) -> dict[str, Any]:
    """``check_suite(ref)`` in a process of its own (:mod:`se_gym.validate.lane`), its progress
    passed on to ``bar``; its part of the report is written to ``saved`` and returned.  The process
    is in ``running`` while it runs (the run kills what is left there when it stops early)."""
    request = {"config": asdict(config), "spec": ref.spec, "library": ref.library, "imports": _child_imports(ref), "out": str(saved)}
    with tempfile.TemporaryDirectory(prefix="se-gym-validate-lane-") as tmp:
        req, err = Path(tmp) / "request.json", Path(tmp) / "stderr.txt"
        req.write_text(json.dumps(request), encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        bar.set_postfix_str(ref.spec)
        with open(err, "w", encoding="utf-8") as errors:
            proc = subprocess.Popen([sys.executable, "-m", "se_gym.validate.lane", str(req)], env=env, stdout=subprocess.PIPE,
                                    stderr=errors, text=True)
            running.add(proc)
            try:
                for line in proc.stdout:  # type: ignore[union-attr]
                    if line.strip().isdigit():
                        bar.update(int(line))
                proc.wait()
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            finally:
                running.discard(proc)
        if proc.returncode != 0 or not saved.is_file():
            last = err.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
            raise ValidateError(f"{ref.spec}: the lane checking it failed: {last[0]}")
    return json.loads(saved.read_text(encoding="utf-8"))


class _LockedBar:
    """A progress bar several lanes update (one at a time)."""

    def __init__(self, bar: Any):
        self._bar, self._lock = bar, threading.Lock()

    def update(self, n: int = 1) -> None:
        with self._lock:
            self._bar.update(n)

    def set_postfix_str(self, text: str) -> None:
        with self._lock:
            self._bar.set_postfix_str(text)

    def close(self) -> None:
        with self._lock:
            self._bar.close()


def _contained(library: Any, name: str) -> Result:
    try:
        return probe_containment(library, name)
    except Exception as exc:  # noqa: BLE001 - the sandbox did not start: nothing could be probed
        return checks.failed("infrastructure", f"the {name} sandbox failed: {type(exc).__name__}: {exc}")


def _is_cluster(name: Any) -> bool:
    """Whether the ``name`` sandbox runs on a cluster this process joins (its class's ``cluster``)."""
    from ..sandbox.spec import SandboxSpec

    return bool(SandboxSpec.parse(name).load().cluster)


def _start_ray() -> bool:
    """One local Ray for the whole run (its sandboxes' judges join it), when none is joined yet."""
    from ..distributed.cluster import connect

    return connect(None)


def _run_dir(out: Path, config: ValidateConfig) -> Path:
    """``OUT/suites``, bound to the options that change results (a rerun with others starts again)."""
    from ..storage import RunDir

    bound = {k: v for k, v in asdict(config).items() if k not in ("out", "restart", "progress", "workers", "chunk", "suites_at_once")}
    for name, default in (("sandbox_option", ()), ("cpu_s", None), ("memory_mb", None)):  # (added later: older runs resume)
        if bound[name] == default:
            del bound[name]
    try:
        run = RunDir(out, "validate", bound, restart=config.restart)
    except Exception as exc:  # ConfigMismatch and the like: one line
        raise ValidateError(str(exc)) from None
    return run.stage("suites")
