"""The Judge: from (response, test cases) to a Verdict, in batches over one sandbox."""
from __future__ import annotations

import ast
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass, field, replace
from typing import Any

# one place for the option names
from ..choices import PROFILES, REWARDS, check
from ..prometheus import JudgeMetrics
from . import compare, dependence, gates
from .extract import entry_function, extract_code, function_name_of
from .gates import library_use, official_numpy_gate, official_static_gate, strict_check, walk
from .harness import STRICT_WARMUP, ChannelReport, channel_program, compiled_unit, official_program, read_channel, rewrite_inputs
from .options import JUDGE_DEFAULTS
from .parsing import parse
from .taxonomy import classify_exception, parse_traceback
from .types import (
    SEBENCH_EXEC_ERROR,
    SEBENCH_NUMPY,
    SEBENCH_RIGHT,
    SEBENCH_STATIC,
    SEBENCH_WRONG,
    CaseResult,
    ErrorType,
    JudgeError,
    Status,
    TestCase,
    Verdict,
)

# what the worker prints when a program's process could not be set up (se_gym/sandbox/worker.py):
# the worker alone decides that (it knows whether the set-up finished); a program printing it is
# faking an infrastructure failure
SETUP_FAILED = "se-gym sandbox: child set-up failed"

_NO_CODE = object()

# the judge's CPU for reading one answer's results (Judge(scoring_cpu_s=...)).  Every step is linear
# in the printed text (at most about 1 MB an answer: Limits.output_bytes); the costliest honest
# reading measured, five 200,000-character prints of lists of pairs, took 1.0 s on a busy 2-core
# machine.  What can exceed it is the official checker's re-reading of a string result (up to 40
# times, each "inf" in it growing by 9 characters a time): ~8 s for 200,000 characters
SCORING_CPU_S = 3.0

# (response, test_cases), (response, test_cases, function_name),
# (response, test_cases, function_name, expected) or (..., expected, reference): ``expected``
# (or None) overrides the printed forms the results are compared with (SE-Bench compares with
# ``right_exe_result.split("#")``); ``reference`` is the task's trusted solution written with the
# library (Task.library_solution), for strict's library dependence check (issue 42)
Item = Sequence[Any]
log = logging.getLogger(__name__)


def sandbox_preload(library: Any) -> list[str]:
    """The modules a judge's workers import before forking programs: NumPy, the library, and
    numpy.ma (unique, intersect1d... load it on first use; preloaded it costs no program anything)."""
    return ["numpy", "numpy.ma", library.package, f"{library.package}.{library.linalg}"]


# library functions a warm-up calls (those the library has), on arrays of the kinds answers use
_WARM_CALLS = ("abs", "sum", "mean", "max", "min", "sqrt", "exp", "round", "cumsum", "sort", "argmax", "where", "sign",
               "dot", "transpose", "reshape", "add", "subtract", "multiply", "divide", "maximum", "concatenate", "zeros",
               "ones", "arange", "linspace", "shape", "all", "any", "equal", "unique", "clip", "diff", "prod", "std")


def sandbox_warmup(library: Any, profile: str | None = None) -> list[str]:
    """Code each local worker runs once before its first program (LocalSandbox ``warmup``): build the
    library's arrays, call its common functions, print the results and encode a channel record, as
    answers and the harness do first.  Trusted code of ours, built from the library's names.

    Three rounds in-process (a function runs a few times before CPython specialises it, and then in
    the worker rather than in every fork); one round where ``profile`` is strict with the library
    server: each call is then a round trip to the zygote (1,263 for three rounds), the client's few
    functions run hundreds of times in one round, and the server's own warming is kept for ~14
    programs.  Measured, 4 alternating rounds of 520 answers at load 19: a start 0.38 -> 0.28 s of CPU
    (two workers and their zygotes), 10.67 -> 10.46 ms of CPU per verdict after it."""
    from se_gym.library.writer import STRICT_SERVER

    rounds = 1 if profile == "strict" and STRICT_SERVER else 3
    pkg, names = library.package, library.names
    calls = [f"{pkg}.{names[n]}" for n in _WARM_CALLS if n in names and "." not in names[n]]
    ctor = f"{pkg}.{names.get('array', 'array')}"
    return [f"""
import json
import {pkg}
enc = json.JSONEncoder(allow_nan=False).encode
values = ([1.5, -2.0, 3.25], [[1, 2], [3, 4]], [True, False, True], [1, 2, 3], [[0.5, 1e-05], [3e10, -1.0]], 2.5, 3)
for _ in range({rounds}):  # (enough: the first runs specialise the code, the first misses fill the cache)
    for v in values:
        a = {ctor}(v)
        for f in ({", ".join(calls)},):
            try:
                r = f(a)
                str(r)
                repr(r)
            except Exception:
                pass
        str(a), repr(a), str(v), str((v, 1))
        enc({{"n": "0" * 32, "i": 1, "p": str(a)}})
"""] + ([STRICT_WARMUP] if profile == "strict" else [])  # (the strict wall's tables: see harness.STRICT_WARMUP)


@dataclass
class _Pending:
    """One item between preparation and its verdict."""

    index: int
    code: str | None
    entry: str
    cases: tuple[TestCase, ...]
    t0: float
    expected: list[str] = field(default_factory=list)
    verdict: Verdict | None = None  # decided without running
    program: str = ""
    channelled: bool = False  # the program reports on the result channel (fd 3), not on stdout
    prep_s: float = 0.0
    extra: dict = field(default_factory=dict)
    fname: str | None = None  # the item's function name
    reference: str | None = None  # the item's reference solution (the dependence check's)
    values: list = field(default_factory=list)  # strict: each case's outcome in the real run (dependence.Outcome)
    # the reference itself as the answer (dependence): its real run is the reference's record run too
    record_run: Any = None


class Judge:
    """Judges answers against test cases.

    ``library``: a :class:`se_gym.library.Library` or a spec (``"seed:N"``, ``"official:PATH"``).
    ``profile``: ``"sebench"`` (the official judge, rule for rule) or ``"strict"`` (also refuses
    every known way around the library, and compares results structurally).
    ``sandbox``: a spec (:class:`se_gym.sandbox.SandboxSpec`: ``None``/``"local"``, ``"docker"``,
    ``"http://HOST:PORT"``, ``{"name": "ray", "address": "auto"}``, a backend of your own with its
    options; started lazily, owned and closed by the judge, given what its class declares it needs)
    or a :class:`se_gym.sandbox.Sandbox` (borrowed; give it this library's folder).  ``http_url`` and
    ``ray_address`` are the old spellings of the ``url`` and ``address`` options (deprecated).
    ``reward``: ``"binary"`` (1.0 when every case passes) or ``"fraction"`` (share of cases passed).
    ``scoring_cpu_s``: the judge's own CPU time (this process) allowed for reading one answer's
    results; past it the answer gets ``output_limit`` and the batch goes on (None: no limit).
    ``dependence``: strict's run-time library dependence check (issue 42, se_gym/judge/dependence.py):
    every answer that earns reward runs again against a counterfactual library, as does the item's
    reference, and a result that does not come from the library makes it ``library_unused``.  None
    (default): on under strict with the out-of-process library, where the sandbox can run it; False:
    off; True: on, or a JudgeError where it cannot be.  ``verdict.dependence`` says what it found.
    """

    def __init__(
        self,
        library: Any,
        profile: str = JUDGE_DEFAULTS.profile,
        sandbox: Any = JUDGE_DEFAULTS.sandbox,
        reward: str = "binary",
        strip_think: bool = True,
        limits: Any = None,
        workers: int | None = None,
        *,
        http_url: str | None = None,
        ray_address: str | None = None,
        abs_tol: float = compare.STRUCT_ABS_TOL,
        rel_tol: float = compare.STRUCT_REL_TOL,
        scoring_cpu_s: float | None = SCORING_CPU_S,
        dependence: bool | None = None,
    ):
        from se_gym.library import from_spec
        from se_gym.library.writer import uses_server

        check("profile", profile, PROFILES, JudgeError)
        check("reward", reward, REWARDS, JudgeError)
        self.library = from_spec(library)
        self.profile = profile
        self.reward = reward
        self.strip_think = strip_think
        self.workers = workers
        self.abs_tol, self.rel_tol = abs_tol, rel_tol
        if scoring_cpu_s is not None and not (isinstance(scoring_cpu_s, (int, float)) and scoring_cpu_s > 0):
            raise JudgeError(f"scoring_cpu_s must be a positive number of seconds or None, got {scoring_cpu_s!r}")
        self.scoring_cpu_s = scoring_cpu_s
        if dependence is not None and not isinstance(dependence, bool):
            raise JudgeError(f"dependence must be True, False or None, got {dependence!r}")
        if dependence and profile != "strict":
            raise JudgeError("dependence=True needs profile strict (sebench keeps the official rules)")
        if dependence and not uses_server("strict"):
            raise JudgeError("dependence=True needs the out-of-process library (SE_GYM_STRICT_SERVER=1): "
                             "the counterfactual library is a mode of its server")
        self.dependence = dependence if dependence is not None else (profile == "strict" and uses_server("strict"))
        self._dependence_asked = dependence is True
        self._reference_records: OrderedDict = OrderedDict()  # dependence: references' records, by task
        self._references_ahead: OrderedDict = OrderedDict()  # dependence: references prepared during their answers' runs
        self._reference_lock = threading.Lock()  # (judge_many may run on several threads at once)
        self._warned_no_reference = False
        self._warned_no_check = False
        self._warned_reference_fails = False
        self._limits = limits
        self._server_ok = True  # False: an http server not yet heard stating its library (strict asks again)
        self._start_lock = threading.Lock()
        self._starting: Future | None = None  # the sandbox starting in the background (start(), judge_many)
        self._generation = 0  # closes so far: a background start begun before the last one starts nothing
        self._owned = not callable(getattr(sandbox, "run", None))  # a spec (ours to start), not a Sandbox (borrowed)
        self.sandbox_spec = None  # (a borrowed Sandbox has none)
        self._declared: Any = type(sandbox)  # the sandbox's class: what it declares (se_gym.sandbox.base.Sandbox)
        if self._owned:
            from se_gym.registry import RegistryError
            from se_gym.sandbox.spec import sandbox_spec

            try:  # parsed once; a backend registered anywhere is accepted, with options it takes
                self.sandbox_spec = sandbox_spec(sandbox, http_url=http_url, ray_address=ray_address, where="Judge")
                self._declared = self.sandbox_spec.check()
            except RegistryError as exc:
                raise JudgeError(f"{exc} (or pass a Sandbox object)") from None
            self._backend, self._sandbox = self.sandbox_spec.name, None
        else:
            self._backend, self._sandbox = getattr(sandbox, "name", "custom"), sandbox
            self._check_server(sandbox)
        lib = self.library
        self.package, self.linalg, self.array_type = lib.package, lib.linalg, lib.array_type
        self.array_ctor = lib.names.get("array", "array")
        # what `from PKG import *` binds, for the permissive gate's library rule
        self._star_names = gates.star_names(lib)
        # strict reads a row NumPy wrapped over lines as one row: a list answer and an array answer
        # of the same values then both pass (officially a list never equals a wrapped print)
        self._checker = compare.OfficialChecker(self.array_type, numpy_wraps=profile == "strict")
        # se-gym's own expected outputs (TestCase.canonical) are read that way under sebench too
        self._canonical = self._checker if profile == "strict" else compare.OfficialChecker(self.array_type, numpy_wraps=True)
        self._case_codes: dict[tuple[str, str], bytes | None] = {}  # (case, filename) -> compiled_unit
        self.metrics = JudgeMetrics([s.value for s in Status])  # verdicts by status, infrastructure failures, latency (GET /metrics of the servers)

    # -- sandbox ------------------------------------------------------------------------------
    @property
    def sandbox(self):
        if self._sandbox is None:
            with self._start_lock:  # (judge_many may be starting it in the background)
                if self._sandbox is None:
                    self._sandbox = self._make_sandbox()
        return self._sandbox

    @property
    def http_url(self) -> str | None:
        """The ``url`` option of this judge's sandbox spec (the old ``http_url=``)."""
        return None if self.sandbox_spec is None else self.sandbox_spec.options.get("url")

    @property
    def ray_address(self) -> str | None:
        """The ``address`` option of this judge's sandbox spec (the old ``ray_address=``)."""
        return None if self.sandbox_spec is None else self.sandbox_spec.options.get("address")

    def _make_sandbox(self):
        # the spec gives the backend what its class declares: the library as a path (the sandbox's
        # copy has no docstrings: docs are prompt material, and a program that returned `f.__doc__`
        # would hand them to a closed-book agent through the verdict; it also keeps ~1 MB out of
        # every worker, and so out of every fork) or as an object, the warm-up, a quick start (the
        # first verdict need not wait for the slowest worker's start); numpy.ma is preloaded: some
        # NumPy functions (intersect1d...) load it on first use, and with it inspect/dis; loaded in
        # the worker, the strict wall need not let a program load them
        box = self.sandbox_spec.build(library=self.library, profile=self.profile, preload=sandbox_preload(self.library),
                                      warmup=sandbox_warmup(self.library, self.profile), workers=self.workers, quick_start=True)
        try:
            self._check_server(box)
        except JudgeError:
            box.close()
            raise
        return box

    def _check_server(self, box: Any) -> None:
        """Over http the programs run against the server's copy of the library: a se-gym server
        states it (id, profile, content hash, se-gym version), and it must be this judge's (a
        sebench copy under a strict judge lets through what strict refuses).  A server that states
        none (the official one) serves only the sebench profile.  A strict judge whose server does
        not answer yet asks again before it sends programs (self._server_ok)."""
        info_of = getattr(box, "server_info", None)
        if not callable(info_of):
            return  # not an http sandbox
        from se_gym.library.writer import identity_text, served_identity

        info, url = info_of(), getattr(box, "url", "the server")
        self._server_ok = info is not None or self.profile != "strict"
        if info is None:
            return
        fix = f"start it with `se-gym sandbox serve --library {self.library.source} --profile {self.profile}`"
        got = info.get("library") if info.get("server") == "se-gym" else None
        if got is None:
            if self.profile == "strict":
                raise JudgeError(f"profile strict needs a sandbox server that states its library; {url} states none "
                                 f"(an official /run server?): {fix}, or judge with profile sebench")
            return
        want = served_identity(self.library, self.profile)
        if not isinstance(got, dict) or any(got.get(k) != want[k] for k in ("content", "profile", "se_gym")):
            raise JudgeError(f"the sandbox server {url} serves {identity_text(got)}; this judge needs {identity_text(want)}: {fix}")

    def _run(self, programs: list[str]) -> list:
        """``sandbox.run`` for backends without ``submit``; an http server a strict judge has not
        heard state its library gets no program (each is a sandbox error: infrastructure)."""
        box = self.sandbox
        if not self._server_ok:
            self._check_server(box)
            if not self._server_ok:
                from se_gym.sandbox.base import sandbox_error

                why = f"{getattr(box, 'url', 'the server')} did not answer GET /health: not sent (a strict judge checks its library first)"
                return [sandbox_error(getattr(box, "name", "http"), why) for _ in programs]
        return box.run(programs, self.limits)

    def _has_channel(self) -> bool:
        """Whether the sandbox reports through the result channel, without starting one of ours
        whose answer is known (local and docker workers always have it): its workers can then start
        while the first answers are prepared."""
        from se_gym.sandbox.base import Sandbox

        declared = self._declared  # (a class that words has_channel itself is asked, not its declaration)
        if self._sandbox is None and self._owned and declared.channel is True and getattr(declared, "has_channel", None) is Sandbox.has_channel:
            return True
        return bool(getattr(self.sandbox, "has_channel", True))

    def _start_in_background(self, generation: int | None = None) -> Future | None:
        """Start our own pool sandbox in a thread (its workers boot in ~0.3 s: preparing answers
        meanwhile); None when there is nothing to start or the backend is not a pool.  For the local
        backend, returns once its workers have been launched: until then the start is Python code
        that our preparing would slow down (see sandbox.pool.notify_launched), while a docker
        start mostly waits on the daemon."""
        if self._sandbox is not None or not self._owned or not self._declared.pooled_start:
            return None
        if self._starting is not None:  # (start() began it: judge_many prepares answers meanwhile)
            return self._starting
        if generation is not None and generation != self._generation:  # (a judge_many begun before a close)
            closed: Future = Future()
            closed.set_exception(JudgeError("the judge was closed during this judgement"))
            return closed
        from se_gym.sandbox.pool import notify_launched

        started: Future = Future()
        launched = threading.Event()
        generation = self._generation if generation is None else generation

        def boot() -> None:
            try:
                with notify_launched(launched.set), self._start_lock:
                    if self._generation != generation:  # closed before this thread got here: start nothing
                        raise JudgeError("the judge was closed while its sandbox was starting")
                    if self._sandbox is None:
                        self._sandbox = self._make_sandbox()
                    box = self._sandbox
                started.set_result(box)
            except BaseException as exc:  # raised where the judge waits for it
                started.set_exception(exc)
            finally:
                launched.set()

        self._starting = started
        threading.Thread(target=boot, name="se-gym-judge-start", daemon=True).start()
        if self._declared.pooled_start == "launch":
            launched.wait()
        return started

    def start(self) -> "Judge":
        """Start this judge's own pool sandbox (local, docker) in the background now, so that it is
        up, or nearly, by the first judgement (the workers take ~0.1-0.2 s to start): returns once
        the workers are launched.  Does nothing for other backends or once started; a failure to
        start is raised by the first judgement."""
        self._start_in_background()
        return self

    @property
    def limits(self):
        if self._limits is None:
            from se_gym.sandbox import Limits

            self._limits = Limits()
        return self._limits

    def close(self) -> None:
        with self._start_lock:  # (a sandbox still starting in the background is closed too)
            self._generation += 1  # (and one whose start has not begun yet will not start)
            if self._owned and self._sandbox is not None:
                self._sandbox.close()
                self._sandbox = None
            self._starting = None

    def __enter__(self) -> "Judge":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public API ---------------------------------------------------------------------------
    def judge(self, response: str, test_cases: Iterable[Any], function_name: str | None = None,
              reference: str | None = None) -> Verdict:
        """One answer's verdict; ``reference``: the task's library solution (``Task.library_solution``),
        for strict's library dependence check (without it, the check's weaker rule and a warning)."""
        item = (response, test_cases, function_name) if reference is None else (response, test_cases, function_name, None, reference)
        return self.judge_many([item])[0]

    def judge_many(self, items: Iterable[Item]) -> list[Verdict]:
        """Judge many answers; every program runs in ONE sandbox batch (one retry batch for
        infrastructure failures).  On a pool sandbox (local, docker) the batch is streamed: the
        workers start, and programs run, while the next answers are prepared, and each verdict
        is made as soon as its program is done, while later ones run."""
        from se_gym.sandbox.pool import prompt_threads

        t0 = time.perf_counter()
        with prompt_threads():  # (the pool's threads get the GIL while we prepare answers)
            verdicts = self._judge_many(items)
        self.metrics.record(verdicts, time.perf_counter() - t0)
        return verdicts

    # answers submitted and not yet settled, at most: a batch of any size holds this many programs
    # and results at a time (the verdicts themselves are the output)
    stream_window = 4096

    def _judge_many(self, items: Iterable[Item]) -> list[Verdict]:
        pending: list[_Pending] = []
        todo: list[_Pending] = []
        futures: list[Future | None] = []
        starting: Future | None = None
        generation = self._generation  # (closed meanwhile: this call starts no sandbox of its own)
        submit = None
        again: list[int] = []  # infrastructure failures: one more try, at the end, as one batch
        settled = 0

        def settle(k: int) -> None:
            p, r = todo[k], futures[k].result()  # type: ignore[union-attr]
            futures[k] = None
            if _is_infra(r):
                again.append(k)
            else:
                p.verdict = self._finish_contained(p, r)
                if not self._to_check(p):
                    p.program, p.code, p.cases, p.expected, p.record_run = "", None, (), [], None  # done with: let them go

        try:
            for i, item in enumerate(items):
                p = self._prepare(i, item)
                pending.append(p)
                if p.verdict is not None:
                    p.code, p.cases, p.expected = None, (), []  # decided without running: let them go
                    continue
                todo.append(p)
                if submit is None:
                    if starting is None and len(todo) == 1:
                        starting = self._start_in_background(generation)
                    if starting is not None and len(todo) > self.stream_window:
                        futures_wait([starting])  # the window is full before the workers are up
                    if starting is None or starting.done():
                        submit = getattr(starting.result() if starting is not None else self.sandbox, "submit", None) or False
                        # what was prepared while the workers started
                        for q in todo[len(futures):-1] if submit else ():
                            futures.append(submit(q.program, self.limits))
                if submit:
                    futures.append(submit(p.program, self.limits))
                    while len(futures) - settled > self.stream_window:  # bounded memory: settle the oldest first
                        settle(settled)
                        settled += 1
            if not todo:
                return [p.verdict for p in pending]  # type: ignore[misc]
            if submit is None:
                submit = getattr(starting.result() if starting is not None else self.sandbox, "submit", None) or False
                for q in todo[len(futures):] if submit else ():
                    futures.append(submit(q.program, self.limits))
            if not submit:  # a backend without submit (http, a borrowed one): one batch
                results = self._run([p.program for p in todo])
                results = self._retry(todo, results, lambda programs, _limits: self._run(programs))
                for p, r in zip(todo, results):
                    p.verdict = self._finish_contained(p, r)
                self._check_dependence(todo)
                return [p.verdict for p in pending]  # type: ignore[misc]
            if self.dependence and len(todo) < getattr(self._sandbox, "workers", 1):
                # a batch that leaves workers idle (an env's step): the reference's record run, which
                # the check makes first if the answer passes, runs beside the answer's own run
                for p in todo:
                    if p.reference is not None and p.channelled and not p.record_run:
                        dependence.record_ahead(self, p, lambda program: submit(program, self.limits))
            for k in range(settled, len(todo)):
                settle(k)
            if again:
                retried = self.sandbox.run([todo[k].program for k in again], self.limits)
                for k, r in zip(again, retried):
                    todo[k].verdict = self._finish_contained(todo[k], r)
            self._check_dependence(todo)
        except BaseException:  # a bad item or an interrupt: what has not started never will
            for f in futures:
                if f is not None:
                    f.cancel()
            raise
        return [p.verdict for p in pending]  # type: ignore[misc]

    async def judge_many_async(self, items: Iterable[Item]) -> list[Verdict]:
        t0 = time.perf_counter()
        verdicts = await self._judge_many_async(items)
        self.metrics.record(verdicts, time.perf_counter() - t0)
        return verdicts

    async def _judge_many_async(self, items: Iterable[Item]) -> list[Verdict]:
        pending = [self._prepare(i, item) for i, item in enumerate(items)]
        todo = [p for p in pending if p.verdict is None]
        if todo:
            box = self.sandbox

            async def run(programs: list[str]) -> list:
                if self._server_ok:
                    return await box.run_async(programs, self.limits)
                import asyncio

                return await asyncio.to_thread(self._run, programs)  # (it asks the server first: a request)

            results = await run([p.program for p in todo])
            again = [i for i, r in enumerate(results) if _is_infra(r)]
            if again:
                retried = await run([todo[i].program for i in again])
                for i, r in zip(again, retried):
                    results[i] = r
            for p, r in zip(todo, results):
                p.verdict = self._finish_contained(p, r)
            check = self._dependence_check(todo)
            if check is not None:
                await dependence.run_async(check, run)
                self._checked(check)
        return [p.verdict for p in pending]  # type: ignore[misc]

    # -- the library dependence check (issue 42) -----------------------------------------------
    def _to_check(self, p: _Pending) -> bool:
        """Whether ``p``'s verdict goes through the dependence check (it earned reward)."""
        return self.dependence and p.verdict is not None and p.verdict.reward > 0 and bool(p.program)

    def _dependence_check(self, todo: list[_Pending]) -> dependence.DependenceCheck | None:
        """The check of a batch's answers that earned reward, or None (nothing to check, or a
        sandbox that cannot run it: their verdicts then say so)."""
        todo = [p for p in todo if self._to_check(p)]
        if not todo:
            return None
        box = self.sandbox
        why = ""
        if not getattr(box, "library_modes", False):
            why = f"the {getattr(box, 'name', 'custom')} sandbox runs no library servers' modes"
        elif not self._has_channel():
            why = "the sandbox has no result channel"
        if why:
            if self._dependence_asked:
                raise JudgeError(f"dependence=True: {why}")
            if not self._warned_no_check:
                self._warned_no_check = True
                log.warning("strict: the library dependence check does not run (%s): an answer that names the library and "
                            "computes in Python keeps its reward (pass dependence=True to make this an error)", why)
            for p in todo:
                p.verdict = replace(p.verdict, extra={**p.verdict.extra, "dependence": {"ran": False, "why": why}})
                p.program, p.code, p.cases, p.expected = "", None, (), []
            return None
        if not self._warned_no_reference and any(p.reference is None for p in todo):
            self._warned_no_reference = True
            log.warning("judging without reference solutions: the library dependence check only asks that some result "
                        "change with the library's (pass each task's library_solution as the item's fifth element, "
                        "or Judge.judge's reference=)")
        return dependence.DependenceCheck(self, todo)

    def _warn_reference_fails(self, why: str) -> None:
        """Once per judge: a reference failed its own tests, and its task is judged by the weaker rule."""
        if not self._warned_reference_fails:
            self._warned_reference_fails = True
            log.warning("a task's reference solution fails its own tests (%s): its answers get the library dependence "
                        "check's weaker rule (some result must change with the library's)", why[:200])

    def _check_dependence(self, todo: list[_Pending]) -> None:
        check = self._dependence_check(todo)
        if check is not None:
            dependence.run_sync(check, self._run)
            self._checked(check)

    def _checked(self, check: dependence.DependenceCheck) -> None:
        for it in check.items:
            p = it.pending
            p.program, p.code, p.cases, p.expected, p.values, p.record_run = "", None, (), [], [], None

    def _retry(self, todo, results, run):
        # the sandbox already replaced dead workers; an infrastructure failure gets one more try
        again = [i for i, r in enumerate(results) if _is_infra(r)]
        if again:
            retried = run([todo[i].program for i in again], self.limits)
            results = list(results)
            for i, r in zip(again, retried):
                results[i] = r
        return results

    # -- preparation --------------------------------------------------------------------------
    def _prepare(self, index: int, item: Item) -> _Pending:
        t0 = time.perf_counter()
        if isinstance(item, (str, bytes)) or not isinstance(item, Sequence) or len(item) not in (2, 3, 4, 5):
            raise JudgeError(f"item {index}: expected (response, test_cases[, function_name[, expected[, reference]]])")
        response, raw_cases = item[0], item[1]
        fname = item[2] if len(item) >= 3 else None
        override = item[3] if len(item) >= 4 else None
        reference = item[4] if len(item) == 5 else None
        if reference is not None and not isinstance(reference, str):
            raise JudgeError(f"item {index}: reference must be the solution's code (a str) or None, got {type(reference).__name__}")
        if override is not None and (isinstance(override, str) or not all(isinstance(e, str) for e in override)):
            raise JudgeError(f"item {index}: expected outputs must be a list of str")
        if not isinstance(response, str):
            raise JudgeError(f"item {index}: response must be a str, got {type(response).__name__}")
        if isinstance(raw_cases, (str, bytes, Mapping)) or not isinstance(raw_cases, Iterable):
            raise JudgeError(f"item {index}: test_cases must be a list of test cases")
        try:
            cases = tuple(TestCase.coerce(c) for c in raw_cases)
        except JudgeError as exc:
            raise JudgeError(f"item {index}: {exc}") from None
        if not cases:
            raise JudgeError(f"item {index}: no test cases")
        code = extract_code(response, self.strip_think)
        body = code if code is not None else ""
        entry = entry_function(body + f"import {self.package}\n")
        if self.profile == "strict" and function_name_of(fname):
            entry = function_name_of(fname) or entry
        elif self.profile == "strict" and reference and isinstance(reference, str):
            # (no name given: the reference's entry where the answer defines it at top level, not a
            # helper the answer happens to define first: honest forms, round 8)
            named = entry_function(reference)
            if named and named != entry and re.search(rf"^def {re.escape(named)}\(", body, re.M):
                entry = named
        p = _Pending(index, code, entry, cases, t0, list(override) if override is not None else [c.output for c in cases],
                     fname=fname, reference=reference or None)
        inputs = rewrite_inputs([c.input for c in cases], self.package, self.array_ctor)
        try:  # parse the answer once for both gates (the main block's test literals add nothing to them)
            tree = parse(body + f"import {self.package}\n")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None  # the gate parses the whole program and reports the error as officially
        # SE-Bench's own program: the gates read it only where the answer does not parse (they have
        # the tree otherwise), and it runs only on a backend without a result channel
        official = "" if tree is not None else self._official_program(p, body, inputs)
        nodes = walk(tree) if tree is not None else None  # one walk for both gates
        ok, why = official_static_gate(official, entry, self.package, self.array_ctor, tree=tree, nodes=nodes)
        if not ok and tree is not None and self.profile == "strict" and gates.PERMISSIVE_STRICT:
            # the permissive strict gate's own rule: the library reachable from the entry function
            # (a helper or `import PKG.sub as la` may call it), in place of the official one
            why = library_use(tree, entry, self.package, self.array_ctor, self._star_names)
            ok = not why
        if code is None:
            ok, why = False, "no ```python code block in the response"
        if not ok:
            p.verdict = self._early(p, Status.STATIC_GATE, SEBENCH_STATIC, why)
            return p
        if official_numpy_gate(official, tree=tree, nodes=nodes):
            p.verdict = self._early(p, Status.USES_NUMPY, SEBENCH_NUMPY, "the code imports numpy")
            return p
        if self.profile == "strict":
            bad = strict_check(body, self.package, self.linalg)
            demo = gates.without_refused_demo(body, self.package, bad, entry) if bad and gates.PERMISSIVE_STRICT else None
            if demo is not None:  # (refused only in a main block or imports for it: those never run)
                body, bad = demo, []
                tree = parse(body + f"import {self.package}\n")
                nodes = walk(tree)
            if bad:
                more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
                p.verdict = self._early(p, Status.FORBIDDEN, SEBENCH_EXEC_ERROR, f"forbidden: {bad[0]}{more}")
                return p
        if not self._has_channel():  # what the backend can do, not its name (issue 20)
            p.program = official or self._official_program(p, body, inputs)
        else:
            strict = self.profile == "strict"
            p.channelled = True
            p.program = channel_program(body, entry, inputs, self.package, strict, _imported(nodes, self.package) if strict else (),
                                        units=self._units(body + f"import {self.package}\n", nodes, entry, inputs))
        if self.dependence and p.reference is not None and p.channelled and self._records_reference(p):
            # the answer is the reference, whose record is not kept yet: its real run, its server
            # recording, is also the record run the dependence check would make of the reference
            # (the same program; recording changes no value the program sees), so it runs once
            p.program = p.program.with_library_mode(dependence.record_mode(self))
            p.record_run = True
        p.prep_s = time.perf_counter() - t0
        return p

    def _records_reference(self, p: _Pending) -> bool:
        """Whether ``p``'s answer is its reference's very code and the reference's record is not kept."""
        if p.code != extract_code(dependence.reference_response(p.reference or ""), self.strip_think):
            return False  # (the same code as the reference's prepared: the same program)
        with self._reference_lock:
            return dependence.reference_key(p) not in self._reference_records

    def _official_program(self, p: _Pending, body: str, inputs: list[str]) -> str:
        return official_program(body, p.entry, [{"input": s, "output": c.output} for s, c in zip(inputs, p.cases)], self.package)

    def _units(self, src: str, nodes: list | None, entry: str, inputs: list[str]) -> tuple:
        """The harness's units (harness.channel_program), compiled here where that is silent: the
        answer (its nodes are at hand) and each case, once per distinct case (a task's cases come
        back with every answer to it)."""
        units = [(src, "<answer>", "exec", compiled_unit(src, "<answer>", "exec", nodes) if nodes is not None else None)]
        cache = self._case_codes
        for i, inp in enumerate(inputs):
            case, name = f"{entry}({inp})", f"<test case {i}>"
            blob = cache.get((case, name), _NO_CODE)
            if blob is _NO_CODE:
                blob = compiled_unit(case, name, "eval") if len(case) <= 4096 else None
                if len(cache) >= 8192:
                    cache.clear()
                cache[(case, name)] = blob
            units.append((case, name, "eval", blob))
        return tuple(units)

    def _early(self, p: _Pending, status: Status, code: int, detail: str) -> Verdict:
        cases = tuple(CaseResult(None, e, False) for e in _paired(p))
        return Verdict(
            0.0, status, code, cases, None, None, ErrorType.OTHER, _one_line(detail), p.code, p.entry or None,
            0.0, time.perf_counter() - p.t0, False, self.profile,
        )

    # -- verdicts -----------------------------------------------------------------------------
    def _finish_contained(self, p: _Pending, r: Any) -> Verdict:
        """``_finish``, with anything a program's result makes it raise kept to that answer: a
        malformed result is the answer's runtime error, and the rest of the batch is judged."""
        if p.record_run is not None:
            p.record_run = r  # (the dependence check takes the reference's record from it)
        budget = self.scoring_cpu_s
        start = time.thread_time() if budget is not None else 0.0
        previous = compare.set_scoring_deadline(start + budget if budget is not None else None)
        try:
            return self._finish(p, r)
        except compare.ScoringBudgetExceeded:  # the answer's output, not the judge, is at fault
            spent = time.thread_time() - start
            return Verdict(
                0.0, Status.OUTPUT_LIMIT, SEBENCH_EXEC_ERROR, tuple(CaseResult(None, e, False) for e in _paired(p)),
                None, None, ErrorType.OTHER,
                f"output_limit: reading this answer's printed results took over {budget:g} s of the judge's CPU "
                f"(its limit per answer; stopped at {spent:.2f} s)", p.code, p.entry or None,
                float(getattr(r, "wall_s", 0.0) or 0.0) if isinstance(getattr(r, "wall_s", 0.0), (int, float)) else 0.0,
                time.perf_counter() - p.t0, False, self.profile, {"scoring_cpu_s": round(spent, 3)},
            )
        except Exception as exc:  # noqa: BLE001 - per-answer containment (issue 21)
            return Verdict(
                0.0, Status.RUNTIME_ERROR, SEBENCH_EXEC_ERROR, tuple(CaseResult(None, e, False) for e in _paired(p)),
                type(exc).__name__, _one_line(str(exc)), ErrorType.OTHER,
                _one_line(f"the program's result could not be judged: {type(exc).__name__}: {exc}"), p.code, p.entry or None,
                float(getattr(r, "wall_s", 0.0) or 0.0) if isinstance(getattr(r, "wall_s", 0.0), (int, float)) else 0.0,
                time.perf_counter() - p.t0, False, self.profile,
            )
        finally:
            compare.set_scoring_deadline(previous)

    def _finish(self, p: _Pending, r: Any) -> Verdict:
        from se_gym.sandbox import ExecStatus

        t1 = time.perf_counter()
        expected = _paired(p)
        base = dict(code=p.code, function_name=p.entry or None, wall_s=float(r.wall_s or 0.0), profile=self.profile)

        def done(reward, status, sebench, cases, detail, exc=(None, None), etype=None, infra=False, extra=None) -> Verdict:
            if etype is None and status is not Status.PASSED:
                etype = ErrorType.OTHER
            return Verdict(
                reward, status, sebench, tuple(cases), exc[0], exc[1], etype, _one_line(detail),
                infrastructure=infra, judge_s=p.prep_s + time.perf_counter() - t1, extra=extra or {}, **base,
            )

        blank = [CaseResult(None, e, False) for e in expected]
        if r.status is not ExecStatus.SANDBOX_ERROR and SETUP_FAILED in (r.stderr or ""):
            # only the worker knows whether the set-up failed; the program says so on its stderr
            return done(0.0, Status.FORBIDDEN, SEBENCH_EXEC_ERROR, blank, "forbidden: the program imitates a sandbox failure")
        if r.status is ExecStatus.SANDBOX_ERROR:
            return done(0.0, Status.SANDBOX_ERROR, SEBENCH_EXEC_ERROR, blank, f"sandbox error (not the answer's fault): {r.detail}", infra=True)
        if p.channelled and not r.channel and r.status in (ExecStatus.OK, ExecStatus.ERROR):
            # the harness announces itself on the channel before any answer code exists, so a program that
            # ended on its own with an empty or missing channel says the backend carried none (e.g.
            # has_channel left True by a backend without one); a program stopped at a limit may have lost it
            return done(0.0, Status.SANDBOX_ERROR, SEBENCH_EXEC_ERROR, blank,
                        f"sandbox error (not the answer's fault): backend {r.backend!r} says it carries the result channel "
                        "(has_channel) but returned none for this program", infra=True)
        limit_status = {ExecStatus.TIMEOUT: Status.TIMEOUT, ExecStatus.MEMORY: Status.MEMORY_LIMIT, ExecStatus.OUTPUT_LIMIT: Status.OUTPUT_LIMIT}
        if r.channel is None:
            return self._finish_stdout(p, r, done, blank, limit_status)
        report = read_channel(r.channel, len(p.cases), self.profile == "strict")
        extra = {"forged_records": report.forged} if report.forged else {}
        if report.refused:
            extra["refused"] = list(report.refused)
            return done(0.0, Status.FORBIDDEN, SEBENCH_EXEC_ERROR, blank, f"forbidden at run time: {report.refused[0]}", extra=extra)
        if r.status is ExecStatus.OUTPUT_LIMIT:
            # the worker cut the output at its cap, the channel's last record with it: what looks
            # malformed there is the cut, not a forgery (issue 42: results over 1 MB were forbidden)
            return done(0.0, Status.OUTPUT_LIMIT, SEBENCH_EXEC_ERROR, blank, f"output_limit: {r.detail or r.status.value}", extra=extra)
        if report.infrastructure and not report.forged:
            return done(0.0, Status.SANDBOX_ERROR, SEBENCH_EXEC_ERROR, blank, f"sandbox error (not the answer's fault): {report.infrastructure}",
                        infra=True)
        if report.forged:
            return done(0.0, Status.FORBIDDEN, SEBENCH_EXEC_ERROR, blank,
                        f"forbidden: the result channel holds {report.forged} record(s) the harness did not write ({report.problem})", extra=extra)
        if r.status in limit_status:
            exc = parse_traceback(r.stderr) if r.status is ExecStatus.MEMORY else (None, None)
            return done(0.0, limit_status[r.status], SEBENCH_EXEC_ERROR, blank, f"{limit_status[r.status].value}: {r.detail or r.status.value}", exc, extra=extra)
        if not report.complete:
            exc = parse_traceback(r.stderr)
            why = f"the program ended before the harness reported (exit code {r.exit_code}, signal {r.signal})"
            if exc[0]:
                why += f": {exc[0]}: {exc[1]}"
            return done(0.0, Status.RUNTIME_ERROR, SEBENCH_EXEC_ERROR, blank, why, exc,
                        classify_exception(*exc, self.package, self.array_type) if exc[0] else ErrorType.OTHER, extra=extra)
        return self._score(p, report, p.expected, done, extra)

    def _score(self, p: _Pending, report: ChannelReport, expected: list[str], done, extra) -> Verdict:
        strict = self.profile == "strict"
        first_error = next((c for c in report.cases if c.error is not None), None)
        printed = [c.printed if c.printed is not None else "" for c in report.cases]
        official_ok = self._official_cases(printed, expected, p.cases)
        cases, why = [], ""
        for c, exp, ok in zip(report.cases, _paired(p), official_ok + [False] * len(report.cases)):
            compare.check_budget()
            if c.error is not None:
                ok = False
            elif strict:
                if c.rejected:
                    ok, why = False, why or f"case {c.index}: {c.rejected}"
                elif not c.has_value:
                    ok, why = False, why or f"case {c.index}: no value reported"
                elif ok:
                    parsed, value = compare.expected_value(exp, self.array_type, numpy_wraps=True)
                    try:
                        got = compare.decode_canonical(c.value)
                        if isinstance(got, str) and got.strip() == exp.strip():
                            pass  # a string result whose text is exactly the expected print ('124212')
                        elif parsed and not compare.structural_ok(got, value, self.abs_tol, self.rel_tol):
                            ok, why = False, why or f"case {c.index}: structure or value differs from {exp!r:.80}"
                    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
                        ok, why = False, why or f"case {c.index}: the value cannot be compared ({type(exc).__name__})"
            cases.append(CaseResult(c.printed, exp, bool(ok)))
        if strict:  # (the dependence check compares them with the counterfactual run's)
            p.values = [("e", c.error[0]) if c.error is not None else ("e", c.rejected or "no value") if c.rejected or not c.has_value
                        else ("v", c.value) for c in report.cases]
        n_ok = sum(c.ok for c in cases)
        frac = n_ok / len(cases)
        reward_if_fail = frac if self.reward == "fraction" else 0.0
        if first_error is not None:
            etype, emsg, _ = first_error.error
            et = classify_exception(etype, emsg, self.package, self.array_type)
            return done(reward_if_fail, Status.RUNTIME_ERROR, SEBENCH_EXEC_ERROR, cases,
                        f"case {first_error.index} raised {etype}: {emsg}", (etype, emsg), et,
                        extra={**extra, "error_case": first_error.index})  # (multi-turn feedback shows a hidden case's error by type only)
        if all(official_ok) and len(official_ok) == len(expected) and n_ok == len(cases) and len(expected) == len(cases):
            return done(1.0, Status.PASSED, SEBENCH_RIGHT, cases, f"all {len(cases)} cases passed", extra=extra)
        sebench = SEBENCH_RIGHT if all(official_ok) and len(official_ok) == len(expected) else SEBENCH_WRONG
        if len(official_ok) < len(expected):
            sebench = SEBENCH_EXEC_ERROR  # the official judge fails on missing results
        bad = next(i for i, c in enumerate(cases) if not c.ok)
        why = why or f"case {bad}: got {cases[bad].got!r:.80}, expected {cases[bad].expected!r:.80}"
        return done(reward_if_fail, Status.WRONG_ANSWER, sebench, cases, why, etype=ErrorType.RETURN_VALUE_MISUNDERSTANDING, extra=extra)

    def _official_cases(self, printed: list[str], expected: list[str], cases: Sequence[TestCase]) -> list[bool]:
        """Per-case official verdicts, reading the printed results as the official judge reads
        its stdout (a result containing ``#`` or the separator shifts the pieces, as it does there);
        a canonical case (TestCase.canonical) is read the canonical way."""
        pieces = compare.official_pieces(compare.official_stdout(printed))
        return [self._checker_for(cases, i).equal(pieces[i], e) for i, e in enumerate(expected) if i < len(pieces)]

    def _checker_for(self, cases: Sequence[TestCase], i: int) -> compare.OfficialChecker:
        return self._canonical if i < len(cases) and cases[i].canonical else self._checker

    def _finish_stdout(self, p: _Pending, r, done, blank, limit_status) -> Verdict:
        """Backends without a result channel: the official stdout protocol (forgeable)."""
        expected = p.expected
        exc = parse_traceback(r.stderr)
        if r.status in limit_status:
            return done(0.0, limit_status[r.status], SEBENCH_EXEC_ERROR, blank, f"{limit_status[r.status].value}: {r.detail}")
        if r.stdout == "" or compare.SEPARATOR not in r.stdout:
            et = classify_exception(*exc, self.package, self.array_type) if exc[0] else ErrorType.OTHER
            return done(0.0, Status.RUNTIME_ERROR, SEBENCH_EXEC_ERROR, blank, f"no results printed: {exc[0]}: {exc[1]}", exc, et)
        pieces = compare.official_pieces(r.stdout)
        oks = [self._checker_for(p.cases, i).equal(pieces[i], e) for i, e in enumerate(expected) if i < len(pieces)]
        cases = [CaseResult(pieces[i] if i < len(pieces) else None, e, i < len(oks) and oks[i]) for i, e in enumerate(expected)]
        if len(oks) < len(expected):
            return done(0.0, Status.RUNTIME_ERROR, SEBENCH_EXEC_ERROR, cases, "fewer results printed than test cases", exc)
        n_ok = sum(oks)
        if n_ok == len(expected):
            return done(1.0, Status.PASSED, SEBENCH_RIGHT, cases, f"all {n_ok} cases passed (stdout protocol)")
        frac = n_ok / len(expected) if self.reward == "fraction" else 0.0
        return done(frac, Status.WRONG_ANSWER, SEBENCH_WRONG, cases, "wrong answer (stdout protocol)", etype=ErrorType.RETURN_VALUE_MISUNDERSTANDING)


def _imported(nodes: list[ast.AST] | None, package: str) -> list[str]:
    """The modules an answer imports (the strict harness loads them before its wall goes up);
    ``nodes``: the answer's parsed nodes (gates.walk)."""
    mods: set[str] = set()
    for node in nodes or ():
        if isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            mods.add(node.module)  # (__future__ too: the statement imports it at run time)
    return sorted(m for m in mods if m != package)


def _paired(p: _Pending) -> list[str]:
    """The expected printed form shown beside each test case."""
    return [p.expected[i] if i < len(p.expected) else "" for i in range(len(p.cases))]


def _is_infra(r: Any) -> bool:
    return getattr(getattr(r, "status", None), "value", None) == "sandbox_error"


def _one_line(s: str, limit: int = 300) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"
