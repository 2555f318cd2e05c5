"""Run-time library dependence (issue 42): a passing answer's results must come from the library.

The permissive strict gate only asks that the library be *named* where the entry function can reach
it; an answer could name it and compute its result in plain Python.  So, under ``strict``, every
answer that earns reward is run again against a **counterfactual library** (the library server's
counterfactual mode, se_gym/library/server.py), and so is the task's trusted reference solution:

1. The reference runs once with the real library, its server recording the *keys* of its
   computations (a library function's class, the values it returned and, where defined, a digest
   of the values it computed them from): which values the reference computes with the library.
   Cached per task for the judge's life.
2. World ``*``: the answer and the reference run again, their servers returning perturbed values
   for every computation whose key the reference recorded (a secret drawn once per judge sets the
   amounts; every other computation stays real).  The reference's outcomes in each world are kept
   with its record, so a later answer to the same task runs alone.  A case *depends* on the library where the
   reference's result changes.  On each such case the answer's result must equal the reference's
   counterfactual result (same comparison as scoring): it computed its result from the values
   the reference computes with the library, as the reference does, or from values equal to them.
   The reference's queries and conversions (``shape``, ``astype``, ``copy``...: *weak* classes,
   ``~`` in the record) are perturbed in ``*`` only where it computes nothing else; beside other
   computations they get world ``~`` of their own, for the cases ``*`` leaves unchanged.
3. Where it does not, and the reference uses several library functions, one world per function
   (only that function's values perturbed; its strong functions only, where it has any): an
   answer that did part of the reference's library work in Python still computes the rest from
   the library, and matches in that function's world.

A case the answer passes that depends on the library and matches in no world makes the verdict
``library_unused`` (reward 0; with ``reward="fraction"``, such cases earn nothing).  Without a
reference (an item with none, or one that fails its own tests) the rule is weaker: every
computation is perturbed and at least one case must change.  See docs/security.md for why
equality with the reference (not "the result changed") is the rule, and what it leaves open.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Generator, Sequence

from . import compare
from .harness import read_channel
from .types import SEBENCH_EXEC_ERROR, ErrorType, Status, Verdict

# a case's outcome in one run: ("v", canonical value) or ("e", why it has none)
Outcome = tuple
REFERENCE_CACHE = 4096  # references' records kept by a judge
REFERENCES_AHEAD = 64  # references prepared ahead of their check and not taken yet
# world "*" drawn again under other secrets where it changes none of the reference's results (see
# DependenceCheck._star)
REDRAWS = ("*2", "*3", "*4")
_INFRA = "infra"
# a reference's record run stopped at a limit (its wall clock or memory: a loaded machine can do
# that to a reference that passes): run once more, then infrastructure; never the weaker rule, and
# never kept (red-team round 8: one such run made its task judged by the weaker rule for the judge's life)
_LIMITED = "limited"
_LIMITS = frozenset({Status.TIMEOUT, Status.MEMORY_LIMIT})


def judge_secret(judge: Any) -> str:
    """The secret that sets the counterfactual library's amounts: one per judge, drawn on first use
    with ``os.urandom`` and sent only to library servers (never to a program).  One per judge, not
    per batch, so that a reference's counterfactual outcomes are kept with its record: the check
    of a later answer to the same task runs the answer only (see docs/security.md, wall 2c)."""
    with judge._reference_lock:
        secret = getattr(judge, "_dependence_secret", None)
        if secret is None:
            secret = judge._dependence_secret = os.urandom(32).hex()
    return secret


def reference_response(code: str) -> str:
    """A reference solution's code as an answer the judge reads."""
    return f"```python\n{code.rstrip()}\n```"


@dataclass
class _Reference:
    """A trusted reference solution, its record (real run) and its counterfactual runs."""

    key: tuple  # (code, entry, cases, expected): what its record is cached under
    pending: Any  # the judge's _Pending of it (None: it does not pass the gates)
    ok: bool = False
    why: str = ""
    values: list = field(default_factory=list)  # real outcomes per case
    keys: dict = field(default_factory=dict)  # class -> base64 of the recorded keys
    worlds: dict = field(default_factory=dict)  # world name -> outcomes per case (or "infra"/"forbidden")
    # world name -> the digest keys of its computations fed by a perturbation that its run in that
    # world perturbed (the server's "fed" report): an answer's fed computations are perturbed there only
    fed: dict = field(default_factory=dict)
    # per case, whether the reference passes it (None: every case): a reference that fails some of
    # its task's cases (a translation the library cannot run there) is used on the others
    passes: tuple | None = None

    def used(self, n: int) -> tuple:
        """Per case of ``n``, whether the reference speaks for it (it passes it)."""
        return self.passes or (True,) * n


@dataclass
class _Item:
    """An answer with reward, under check."""

    pending: Any  # the judge's _Pending (program, cases, verdict, values of its real run)
    ref: _Reference | None
    worlds: dict = field(default_factory=dict)  # world name -> outcomes per case (or "infra"/"forbidden")


def _failed(result: Any) -> bool:
    """The run, or its library server, failed (the server said nothing of its mode)."""
    return getattr(getattr(result, "status", None), "value", None) == "sandbox_error" or not getattr(result, "library_report", None)


def reference_key(p: Any) -> tuple:
    """What a pending's reference's record is kept under: (code, entry, cases, expected)."""
    return (p.reference, p.entry, tuple((c.input, c.output) for c in p.cases), tuple(p.expected))


def _is_result(run: Any) -> bool:
    return run is not None and not isinstance(run, bool)


def _same_program(p: Any, q: Any) -> bool:
    """Two pendings run the same program (the same source; the library mode aside)."""
    return bool(p.program) and str(p.program) == str(q.program)


def _stopped(result: Any) -> bool:
    """The run ended at one of the program's limits (its wall clock, its CPU, its library server's
    CPU, its memory): the worker says ``timeout``/``memory``."""
    return getattr(getattr(result, "status", None), "value", None) in ("timeout", "memory")


def outcomes(result: Any, n: int, answer: bool = False) -> list | str:
    """Per case, what a counterfactual or record run returned; ``"infra"`` when the run or its
    library server failed (no word from the server), ``"forbidden"`` when the wall refused something.
    ``answer``: an answer's run judged against a reference, where a run stopped at one of the
    program's limits is the answer's, word from its server or not (red-team round 9: its library
    server run out of the program's CPU says nothing, and that made the verdict infrastructure,
    reward None: a plain-Python answer that burns the library's CPU on a constant chose not to be
    counted, where the same run stopped at the wall clock was already ``library_unused``)."""
    if _failed(result) and not (answer and _stopped(result) and result.channel is not None):
        return _INFRA
    report = read_channel(result.channel, n, True)
    if report.forged or report.refused:
        return "forbidden"
    found = {c.index: c for c in report.cases}
    out: list[Outcome] = []
    for i in range(n):
        c = found.get(i)
        if c is None:
            out.append(("e", getattr(result.status, "value", "crash")))
        elif c.error is not None:
            out.append(("e", c.error[0]))
        elif c.rejected or not c.has_value:
            out.append(("e", c.rejected or "no value"))
        else:
            out.append(("v", c.value))
    return out


def same(x: Outcome, y: Outcome, abs_tol: float, rel_tol: float) -> bool:
    """Two outcomes agree: both raised, or equal values as the judge compares them (both ways)."""
    if x[0] == "e" or y[0] == "e":
        return x[0] == y[0] == "e"
    try:
        a, b = compare.decode_canonical(x[1]), compare.decode_canonical(y[1])
    except (ValueError, RecursionError):
        return x[1] == y[1]
    try:
        return compare.structural_ok(a, b, abs_tol, rel_tol) and compare.structural_ok(b, a, abs_tol, rel_tol)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return False


def _in_event_loop() -> bool:
    """Whether this thread runs an asyncio loop (where nothing may block on a run in flight)."""
    asyncio = sys.modules.get("asyncio")  # (not imported: no loop runs; importing it costs ~15 ms)
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _prepare_reference(judge: Any, p: Any) -> Any:
    return judge._prepare(-1, (reference_response(p.reference), p.cases, p.fname, list(p.expected)))


def digest_salt(judge: Any) -> str:
    """The salt of the digests in the keys (16 hex digits), drawn from the judge's secret: the
    record run and every counterfactual run of one judge share it, and no program sees it (with a
    public salt an answer could compute a digest and forge another input with the reference's)."""
    return hashlib.blake2b(judge_secret(judge).encode(), digest_size=8, person=b"se-gym-salt").hexdigest()


def _mode_arguments(judge: Any) -> dict:
    # what the record and counterfactual modes share: the digests' salt, and (a judge's
    # ``_dependence_arguments = False``) keys without the arguments beyond the digests, as before
    # issue 42's round 3 (only benchmarks/judge_throughput.py sets it, to measure their cost)
    shared = {"salt": digest_salt(judge)}
    if not getattr(judge, "_dependence_arguments", True):
        shared["arguments"] = False
    return shared


def record_mode(judge: Any) -> dict:
    """A record run's library mode (see server.py)."""
    return {"record": True, **_mode_arguments(judge)}


def record_ahead(judge: Any, p: Any, submit: Callable[[Any], Any]) -> None:
    """Prepare pending ``p``'s reference now and ``submit`` its record run, while ``p`` runs on
    another worker: if ``p`` passes, the check that follows finds the record made (one run less
    between the answer's run and its verdict).  Nothing when the record is kept or on its way.
    A record does not depend on the answer (its digests' salt is the judge's): one made for an answer
    that fails serves the next answer to the task."""
    key = reference_key(p)
    with judge._reference_lock:
        if key in judge._reference_records or key in judge._references_ahead:
            return
    prep = _prepare_reference(judge, p)
    run = submit(prep.program.with_library_mode(record_mode(judge))) if prep.verdict is None else None
    with judge._reference_lock:
        judge._references_ahead[key] = (prep, run)
        while len(judge._references_ahead) > REFERENCES_AHEAD:
            judge._references_ahead.popitem(last=False)


class DependenceCheck:
    """One batch's check (see the module docstring): :meth:`steps` yields the batches of programs
    to run and takes their results; then :meth:`verdicts` are the final ones.

    Args:
        judge: the Judge (its preparation, limits, tolerances and record cache).
        items: the batch's pendings whose verdict earned reward, each with ``reference`` (code or
            None) and ``values`` (its real run's outcomes per case).
    """

    def __init__(self, judge: Any, items: Sequence[Any]):
        self.judge = judge
        self.secret = judge_secret(judge)  # the judge's: sent only to library servers
        self.items: list[_Item] = []
        refs: dict[tuple, _Reference] = {}
        for p in items:
            ref = None
            if p.reference:
                key = reference_key(p)
                ref = refs.get(key)
                if ref is None:
                    ref = refs[key] = self._reference(key, p)
                if ref.why == "not run" and _is_result(p.record_run) and not _failed(p.record_run) and _same_program(p, ref.pending):
                    self._take_record(ref, p.record_run)  # the answer is the reference: its real run recorded
            self.items.append(_Item(p, ref))
        self.refs = list(refs.values())

    # -- references --------------------------------------------------------------------------
    def _reference(self, key: tuple, p: Any) -> _Reference:
        with self.judge._reference_lock:
            cached = self.judge._reference_records.get(key)
            if cached is not None:
                self.judge._reference_records.move_to_end(key)
                worlds = dict(cached[5])  # (copied under the lock: another batch may add to it)
                fed = dict(cached[6])
        if cached is not None:  # (its record, its program: prepared once, and its worlds' outcomes)
            ref = _Reference(key, cached[4])
            ref.ok, ref.why, ref.values, ref.keys = cached[:4]
            ref.passes = cached[7]
            ref.worlds, ref.fed = worlds, fed
            return ref
        with self.judge._reference_lock:
            prep, run = self.judge._references_ahead.pop(key, (None, None))
        if prep is None:
            prep = _prepare_reference(self.judge, p)
        if prep.verdict is not None:
            return _Reference(key, None, False, f"the reference does not pass the gates: {prep.verdict.detail}")
        ref = _Reference(key, prep)
        ref.why = "not run"
        if run is not None and (run.done() or not _in_event_loop()):  # (its record run, made while the answer ran: see record_ahead)
            try:
                result = run.result()
            except BaseException:  # (cancelled: step 1 runs it)
                result = None
            if _is_result(result) and not _failed(result):
                self._take_record(ref, result)
                if ref.why == _LIMITED:
                    ref.why = "not run"  # (step 1 runs it again)
        return ref

    def _take_record(self, ref: _Reference, result: Any) -> None:
        n = len(ref.pending.cases)
        got = outcomes(result, n)
        if got == _INFRA:
            ref.why = _INFRA
            return
        verdict = self.judge._finish_contained(ref.pending, result)
        if verdict.status in _LIMITS:
            ref.why = _LIMITED
            return
        try:
            record = json.loads(result.library_report).get("record")
        except (ValueError, AttributeError):
            record = None
        passes = tuple(bool(c.ok) for c in verdict.cases)
        if got == "forbidden" or not any(passes) or len(passes) != n or not isinstance(record, dict) \
                or verdict.status not in (Status.PASSED, Status.WRONG_ANSWER, Status.RUNTIME_ERROR):
            ref.ok, ref.why = False, f"the reference does not pass its own tests ({verdict.status.value}: {verdict.detail})"
            self.judge._warn_reference_fails(ref.why)
        else:
            # (red-team round 8: a reference failing one case of eight made its task judged by the
            # weaker rule, and an answer that told the runs apart by a constant sum earned 1.0 on 23
            # of the 130 official single_test_dev tasks; now it is used on the cases it passes)
            ref.ok, ref.why, ref.values, ref.keys = True, "", got, record
            ref.passes = None if all(passes) else passes
        with self.judge._reference_lock:
            cache = self.judge._reference_records
            cache[ref.key] = (ref.ok, ref.why, ref.values, ref.keys, ref.pending, {}, {}, ref.passes)
            while len(cache) > REFERENCE_CACHE:
                cache.popitem(last=False)

    def _keep_worlds(self) -> None:
        """The references' outcomes in each world, kept with their records: under the judge's one
        secret a reference's counterfactual run gives what it gave before (only runs that gave
        outcomes are kept: a failed one is run again next time)."""
        with self.judge._reference_lock:
            cache = self.judge._reference_records
            for r in self.refs:
                entry = cache.get(r.key)
                if entry is not None and r.ok:
                    kept = [w for w, out in r.worlds.items() if isinstance(out, list) and w in r.fed]
                    entry[5].update((w, r.worlds[w]) for w in kept)
                    entry[6].update((w, r.fed[w]) for w in kept)

    # -- the runs ----------------------------------------------------------------------------
    def _mode(self, keys: dict | None, fed: Any = None, world: str = "*") -> dict:
        """A counterfactual run's mode: ``fed`` True for a reference's run (the server reports the
        digest keys of the fed computations it perturbed), or those keys (an answer's run in the
        same world: its fed computations are perturbed there only; see server.py's modes).
        ``world``: a redrawn world ``*2``... runs under a secret of its own, derived from the judge's."""
        secret, world = self.secret, world.split(":", 1)[0]  # (``*2:FUNCTION``: a function's world under ``*2``'s secret)
        if world in REDRAWS:
            secret = hashlib.blake2b(f"{self.secret}/{world}".encode(), digest_size=32).hexdigest()
        mode = {"cf": secret, "keys": keys, **_mode_arguments(self.judge)}
        if fed is True:
            mode["fed_record"] = True
        elif isinstance(fed, dict):
            mode["fed"] = fed
        return mode

    def _answer_fed(self, ref: Any, world: str) -> Any:
        # (no usable reference: every computation perturbed, fed ones by their value as before)
        return ref.fed.get(world, {}) if ref is not None and ref.ok else None

    def _weak_world(self, r: _Reference) -> dict:
        """The keys of world ``~`` for reference ``r``: its queries and conversions, where it also
        computes other things (world ``*`` perturbs those only) and some case's result did not
        change in ``*`` (a shape of ``atleast_3d``'s output); else nothing."""
        weak = {c: k for c, k in r.keys.items() if c.startswith("~")}
        rstar = r.worlds.get("*")
        if not weak or len(weak) == len(r.keys) or not isinstance(rstar, list):
            return {}
        tol = self._tol()
        return weak if any(same(a, b, *tol) for a, b in zip(rstar, r.values)) else {}

    @classmethod
    def classes(cls, keys: dict) -> list[str]:
        """The classes that get a world of their own (step 3): :meth:`demanded`'s, each with its
        ``@`` keys (the server's keys of the same values by value alone, for computations fed by
        a perturbed one) in its world."""
        return sorted({c[:-1] if c.endswith(("@", "<")) else c for c in cls.demanded(keys)})

    @staticmethod
    def world(keys: dict, name: str) -> dict:
        # (with its "<" keys: what the function hands the answer's call-backs, piecewise's and a
        # vectorize'd callable's, perturbed in its world as in "*")
        return {c: k for c, k in keys.items() if c in (name, name + "@", name + "<")}

    @staticmethod
    def demanded(keys: dict) -> dict:
        """The recorded classes world ``*`` perturbs and that get a world of their own (step 3):
        the reference's computations, less its queries and conversions (``shape``, ``astype``,
        ``copy``...: classes the server marks with ``~``) where it computes anything else.  Those
        get world ``~`` only where ``*`` leaves a result unchanged: perturbed beside the rest (or
        in worlds of their own) they paid an answer that made only the conversion with the library
        (``ascontiguousarray(m)``, a loop bound from ``shape``) and the rest in Python: the
        reference's later computations, fed perturbed values, were not perturbed themselves."""
        strong = {c: k for c, k in keys.items() if not c.startswith("~")}
        return strong or dict(keys)

    def steps(self) -> Generator[list, list, None]:
        """Yields lists of programs; each is sent back the list of their results."""
        # 1. the references' records (those not cached yet)
        todo = [r for r in self.refs if r.pending is not None and r.why == "not run"]
        for _ in range(2):  # (a run stopped at a limit is made once more, then it is infrastructure)
            if not todo:
                break
            results = yield from self._run([r.pending.program.with_library_mode(record_mode(self.judge)) for r in todo])
            for r, res in zip(todo, results):
                self._take_record(r, res)
            todo = [r for r in todo if r.why == _LIMITED]
        for r in todo:
            r.why = _INFRA
        # 2. world "*": every recorded computation perturbed (every computation, without a reference);
        # the references first: their runs say which fed computations the answers' may match
        jobs: list[tuple[Any, str, Any]] = []
        for r in self.refs:
            if r.ok and "*" not in r.worlds:  # (cached for the judge's life)
                jobs.append((r, "*", r.pending.program.with_library_mode(self._mode(self.demanded(r.keys), True))))
        yield from self._worlds(jobs)
        jobs = []
        for it in self.items:
            if it.ref is not None and it.ref.why == _INFRA:
                continue
            if self._is_reference(it):
                continue  # the reference's own run in this world is its run (below)
            keys = self.demanded(it.ref.keys) if it.ref is not None and it.ref.ok else None
            jobs.append((it, "*", it.pending.program.with_library_mode(self._mode(keys, self._answer_fed(it.ref, "*")))))
        yield from self._worlds(jobs)
        self._as_reference("*")
        # 2b. world "*" again under other secrets, where it changed none of the reference's results
        # to another value (its outcomes a ranking or a threshold the perturbation happened not to
        # cross: the check then demanded nothing, and a plain-Python answer passed; or it raised
        # where it changed: an exception matches any; red-team round 5, official task 50)
        # (also where it changed some results but left others as they were: red-team round 9, a case
        # the perturbation left alone demanded nothing, and an answer using the library on one case
        # and Python on those earned 1.0; such a case is judged in the first redrawn world that moves it)
        jobs = []
        for r in self.refs:
            if r.ok and isinstance(r.worlds.get("*"), list) and (not self._changes(r, "*") or self._idle(r, "*")):
                jobs += [(r, w, r.pending.program.with_library_mode(self._mode(self.demanded(r.keys), True, w)))
                         for w in REDRAWS if w not in r.worlds]
        yield from self._worlds(jobs)
        jobs = []
        for it in self.items:
            for w in self._answer_redraws(it):
                mode = self._mode(self.demanded(it.ref.keys), self._answer_fed(it.ref, w), w)  # type: ignore[union-attr]
                jobs.append((it, w, it.pending.program.with_library_mode(mode)))
        yield from self._worlds(jobs)
        for w in REDRAWS:
            self._as_reference(w)
        # 2c. under a redrawn world that judges a case "*" left alone, one world per function of the
        # reference too, for answers that did not match there (as step 3 does for "*": an honest answer
        # that finishes a middle step in Python matches only in its next function's world)
        specs, wanted, tol = [], set(), self._tol()
        for it in self.items:
            ref = it.ref
            if ref is None or not ref.ok or self._is_reference(it) or len({c.rstrip("@<") for c in ref.keys}) < 2:
                continue
            redraws = self._idle_redraws(ref)
            for w in sorted(set(redraws.values())):
                out = it.worlds.get(w)
                if isinstance(out, list) and any(rw == w and not same(out[c], ref.worlds[w][c], *tol) for c, rw in redraws.items()):
                    for cls in self.classes(ref.keys):
                        specs.append((it, f"{w}:{cls}", self.world(ref.keys, cls)))
                        wanted.add((id(ref), f"{w}:{cls}", cls))
        jobs = [(r, name, r.pending.program.with_library_mode(self._mode(self.world(r.keys, cls), True, name)))
                for r in self.refs for (rid, name, cls) in sorted(wanted) if rid == id(r) and name not in r.worlds]
        yield from self._worlds(jobs)
        yield from self._worlds([(it, name, it.pending.program.with_library_mode(self._mode(keys, self._answer_fed(it.ref, name), name)))
                                 for it, name, keys in specs if name not in it.worlds])
        # 3. one world per library function of the reference, for answers that differ from it in "*";
        # and world "~" (its queries and conversions alone) where its result did not change in "*"
        # (the references' runs first, as in step 2)
        jobs, specs = [], []
        weak = {id(r): w for r in self.refs if r.ok and (w := self._weak_world(r))}
        for owner in [*self.refs, *[it for it in self.items if not self._is_reference(it)]]:
            ref = owner if isinstance(owner, _Reference) else owner.ref
            if ref is not None and id(ref) in weak and isinstance(owner.worlds.get("*"), list) and "~" not in owner.worlds:
                if owner is ref:
                    jobs.append((owner, "~", owner.pending.program.with_library_mode(self._mode(weak[id(ref)], True))))
                else:
                    specs.append((owner, "~", weak[id(ref)]))
        wanted: set = set()
        for it in self.items:
            ref = it.ref
            if ref is None or not ref.ok or len({c.rstrip("@") for c in ref.keys}) < 2 or not self._differs(it):
                continue
            for cls in self.classes(ref.keys):
                specs.append((it, cls, self.world(ref.keys, cls)))
                wanted.add((id(ref), cls))
        for r in self.refs:
            for cls in self.classes(r.keys) if r.ok else ():
                if (id(r), cls) in wanted and cls not in r.worlds:
                    jobs.append((r, cls, r.pending.program.with_library_mode(self._mode(self.world(r.keys, cls), True))))
        yield from self._worlds(jobs)
        yield from self._worlds([(it, w, it.pending.program.with_library_mode(self._mode(keys, self._answer_fed(it.ref, w))))
                                 for it, w, keys in specs])
        self._as_reference("~")
        self._keep_worlds()

    def _changes(self, r: _Reference, world: str) -> bool:
        """Whether some result of reference ``r`` changed to another *value* in ``world`` (one that
        raised there shows nothing an answer could match but by raising too)."""
        return any(u and self._moves(r, world, c) for c, u in enumerate(r.used(len(r.values))))

    def _star(self, ref: _Reference | None) -> str:
        """The world that stands for "*" for ``ref``'s answers: "*", or where it changes none of the
        reference's results to another value, the first redrawn one that changes some."""
        if ref is None or not ref.ok or self._changes(ref, "*"):
            return "*"
        return next((w for w in REDRAWS if self._changes(ref, w)), "*")

    def _idle(self, r: _Reference, world: str) -> list[int]:
        """The cases the reference passes whose value ``world`` left as it was."""
        out, tol = r.worlds.get(world), self._tol()
        if not isinstance(out, list):
            return []
        used = r.used(len(r.values))
        return [c for c, (a, b) in enumerate(zip(out, r.values)) if used[c] and b[0] == "v" and same(a, b, *tol)]

    def _moves(self, r: _Reference, world: str, c: int) -> bool:
        """Whether ``world`` changes the reference's result of case ``c`` to another value."""
        out = r.worlds.get(world)
        return isinstance(out, list) and out[c][0] == "v" and not same(out[c], r.values[c], *self._tol())

    def _redraw_for(self, r: _Reference | None, c: int) -> str | None:
        """For a case the world standing for "*" leaves as it was: the first other redrawn world that
        changes it to another value (None: none does, the case is independent)."""
        if r is None or not r.ok:
            return None
        sw = self._star(r)
        return next((w for w in REDRAWS if w != sw and self._moves(r, w, c)), None)

    def _idle_redraws(self, r: _Reference) -> dict[int, str]:
        """The cases the world standing for "*" leaves as they were, each with the redrawn world that
        judges it (those no redrawn world moves are left out: independent)."""
        return {c: w for c in self._idle(r, self._star(r)) if (w := self._redraw_for(r, c)) is not None}

    def _answer_redraws(self, it: _Item) -> list[str]:
        """The redrawn worlds an answer runs in: the one standing for "*", and those that judge a case
        it leaves as it was."""
        ref = it.ref
        if ref is None or not ref.ok or self._is_reference(it):
            return []
        want = {self._star(ref), *self._idle_redraws(ref).values()} - {"*"}
        return [w for w in REDRAWS if w in want and w not in it.worlds]

    def _is_reference(self, it: _Item) -> bool:
        """Whether the answer is its reference's very program (a passing reference, judged as an
        answer: ``se-gym validate``'s oracle): in every world its run is the reference's run, whose
        outcomes the check keeps and reuses for the judge's life, so it is not run again."""
        ref = it.ref
        return ref is not None and ref.ok and ref.pending is not None and _same_program(it.pending, ref.pending)

    def _as_reference(self, world: str) -> None:
        for it in self.items:
            if self._is_reference(it) and world in it.ref.worlds:  # type: ignore[union-attr]
                it.worlds[world] = it.ref.worlds[world]  # type: ignore[union-attr]

    def _worlds(self, jobs: list) -> Generator[list, list, None]:
        if not jobs:
            return
        results = yield from self._run([prog for _, _, prog in jobs])
        for (owner, world, _), res in zip(jobs, results):
            n = len(owner.pending.cases)
            # (an answer judged against a reference: there a stopped run's errors match nothing; the weaker
            # rule, without one, takes any change for use, an error too, so a stop there stays infrastructure)
            answer = isinstance(owner, _Item) and owner.ref is not None and owner.ref.ok
            owner.worlds[world] = outcomes(res, n, answer)
            if isinstance(owner, _Reference):
                try:
                    fed = json.loads(res.library_report).get("fed")
                except (ValueError, AttributeError, TypeError):
                    fed = None
                owner.fed[world] = fed if isinstance(fed, dict) else {}

    def _run(self, programs: list) -> Generator[list, list, list]:
        """Run ``programs``; those whose run or library server failed get one more try."""
        results = list((yield programs))
        again = [i for i, r in enumerate(results) if _failed(r)]
        if again:
            retried = yield [programs[i] for i in again]
            for i, r in zip(again, retried):
                results[i] = r
        return results

    # -- the rule ----------------------------------------------------------------------------
    def _tol(self) -> tuple[float, float]:
        return self.judge.abs_tol, self.judge.rel_tol

    def _differs(self, it: _Item) -> bool:
        """Whether, in world "*" (or the redrawn world that stands for it), the answer's result did not
        change as the reference's did on some case that depends on the library (the class worlds may
        then explain it).  Also where the answer's result did not change at all: an honest answer
        that finishes a middle step in Python (``floor`` of the library's ``cumsum``, then the
        library's ``count_nonzero``) may absorb the perturbation of its first step, and its last
        step, fed Python's values, is not the reference's fed one (red-team round 5: such answers
        were refused without their functions' worlds)."""
        ref = it.ref
        w = self._star(ref)
        star = it.worlds.get(w)
        rstar = ref.worlds.get(w) if ref is not None else None
        if not isinstance(star, list) or not isinstance(rstar, list):
            return False
        tol = self._tol()
        passed = [c.ok for c in it.pending.verdict.cases]
        used = ref.used(len(passed))
        for c, (r, a1, r1) in enumerate(zip(ref.values, star, rstar)):
            if passed[c] and used[c] and not same(r1, r, *tol) and not same(a1, r1, *tol):
                return True
        return False

    def verdicts(self) -> None:
        """Each checked answer's verdict, updated in place (``pending.verdict``)."""
        for it in self.items:
            it.pending.verdict = self._decide(it)

    def _decide(self, it: _Item) -> Verdict:
        p, ref, v = it.pending, it.ref, it.pending.verdict
        tol = self._tol()
        sw = self._star(ref)
        star = it.worlds.get(sw)
        if ref is not None and ref.why == _INFRA:
            return self._infra(v, "the reference's record run failed twice (its sandbox, or a limit its tests pass within)")
        if ref is not None and ref.ok and not isinstance(ref.worlds.get("*"), list):
            return self._infra(v, "the reference's counterfactual run failed twice")
        if star == "forbidden":
            return replace(v, reward=0.0, status=Status.FORBIDDEN, sebench_code=SEBENCH_EXEC_ERROR, error_type=ErrorType.OTHER,
                           detail="forbidden at run time, with the counterfactual library", extra={**v.extra, "dependence": {"ran": True}})
        if not isinstance(star, list) or any(not isinstance(w, list) and w != "forbidden" for w in it.worlds.values()):
            return self._infra(v, "the counterfactual run failed twice")
        n = len(p.cases)
        passed = [c.ok for c in v.cases] + [False] * n
        codes: list[str] = []
        if ref is None or not ref.ok:
            # no usable reference: every computation perturbed, and some case must change
            for c in range(n):
                if not passed[c]:
                    codes.append("failed")
                else:
                    codes.append("unchanged" if same(star[c], p.values[c], *tol) else "changed")
            ok = "changed" in codes
            info = {"ran": True, "reference": "none" if ref is None else "failed", "cases": codes, "worlds": 1}
            if ref is not None:
                info["reference_problem"] = ref.why
            why = "" if ok else "no result changed when the library's results did: they do not come from the library"
            return self._verdict(v, ok, codes, info, why)
        rstar = ref.worlds[sw]
        classes = [c for c in self.classes(ref.keys) if isinstance(ref.worlds.get(c), list) and isinstance(it.worlds.get(c), list)]
        rw, aw = ref.worlds.get("~"), it.worlds.get("~")
        # (a case depends on the library where the reference's result changes in "*", or in "~";
        # ``valued``: the answer matched a *value* of the reference's there, not only an exception)
        used = ref.used(n)  # (the cases the reference passes: it says nothing of the others)
        redraw = [self._redraw_for(ref, c) if used[c] and same(rstar[c], ref.values[c], *tol) else None for c in range(n)]
        dependent = any(used[c] and (not same(rstar[c], ref.values[c], *tol) or isinstance(rw, list) and not same(rw[c], ref.values[c], *tol)
                                     or redraw[c] is not None) for c in range(n))
        valued = False
        for c in range(n):
            if not passed[c]:
                codes.append("failed")
            elif not used[c]:
                codes.append("unreferenced")  # (the reference fails this case: it demands nothing here)
            elif same(rstar[c], ref.values[c], *tol):
                if isinstance(rw, list) and isinstance(aw, list) and not same(rw[c], ref.values[c], *tol):
                    # (its queries and conversions alone change it: a shape of atleast_3d's output)
                    code = "match:~" if same(aw[c], rw[c], *tol) else "unchanged" if same(aw[c], p.values[c], *tol) else "differs"
                    valued |= code == "match:~" and rw[c][0] == "v"
                    codes.append(code)
                elif redraw[c] is not None and isinstance(it.worlds.get(redraw[c]), list):
                    # ("*" left the reference's result alone here, a redrawn world does not: judged there)
                    w, aw2 = redraw[c], it.worlds[redraw[c]]
                    if same(aw2[c], ref.worlds[w][c], *tol):
                        code = "match:" + w
                    else:  # (or in one of its functions' worlds under that redraw: step 2c)
                        hit = next((k for k in (f"{w}:{cls}" for cls in self.classes(ref.keys))
                                    if self._moves(ref, k, c) and isinstance(it.worlds.get(k), list)
                                    and same(it.worlds[k][c], ref.worlds[k][c], *tol)), None)
                        code = ("match:" + hit if hit is not None else
                                "unchanged" if same(aw2[c], p.values[c], *tol) else "differs")
                    valued |= code.startswith("match")
                    codes.append(code)
                else:
                    codes.append("independent")  # even the reference's result does not depend on the library here
            elif rstar[c][0] == "e" and ref.values[c][0] == "v":
                # the reference raised here (a perturbed index out of range): any exception equals any
                # other, and an honest answer need not make the computation that raised (``arange`` of
                # every index where the answer takes the whole list): this case demands nothing, and
                # shows nothing (it is credited only beside a value matched)
                codes.append("raised")
            elif same(star[c], rstar[c], *tol):
                codes.append("match")
                valued |= rstar[c][0] == "v"
            else:
                hit = next((k for k in classes if not same(ref.worlds[k][c], ref.values[c], *tol)
                            and same(it.worlds[k][c], ref.worlds[k][c], *tol)), None)
                if hit is not None:
                    codes.append("match:" + hit)
                    valued |= ref.worlds[hit][c][0] == "v"
                else:
                    codes.append("unchanged" if same(star[c], p.values[c], *tol) else "differs")
        # Some case must match a value the reference computed from the counterfactual library, where
        # any depends on it (red-team round 5): cases that depend on nothing (independent) and
        # raising where the reference raises (any exception equals any other, a crash or a
        # timeout too: a detector that raises when the library's result is not the one it
        # computed in Python) show no use of the library.  With ``reward="fraction"`` a plain-Python
        # answer earned the share of its task's independent cases (up to 7/8 on official task 50).
        unproven = dependent and not valued
        ok = not any(code in ("unchanged", "differs") for code in codes) and not unproven
        if ref.passes is not None and not dependent:
            # (a reference whose passing cases depend on nothing: the weaker rule, on the answer's
            # run in "*", so that it never demands less than without the reference)
            unproven = not any(passed[c] and not same(star[c], p.values[c], *tol) for c in range(n))
            ok = not unproven
        info = {"ran": True, "reference": "used", "cases": codes, "worlds": 1 + len(classes)}
        if ref.passes is not None:
            info["reference_fails"] = [c for c in range(n) if not used[c]]
        if sw != "*":
            info["redrawn"] = sw
        if unproven:
            info["no_value_matched"] = True
        why = ""
        if unproven and ref.passes is not None and not dependent:
            why = "no result changed when the library's results did: they do not come from the library"
        elif unproven and not any(code in ("unchanged", "differs") for code in codes):
            why = ("no case's result matches a value the reference computes from the library's results "
                   "(only cases that do not depend on them, or exceptions): it does not show the library's use")
        elif not ok:
            c = next(i for i, code in enumerate(codes) if code in ("unchanged", "differs"))
            why = (f"case {c}: the result does not change when the library's results do (the reference's does): "
                   "it does not come from the library" if codes[c] == "unchanged" else
                   # (honest forms, round 7: say so where the answer's own check of the library stopped it)
                   f"case {c}: with the library's results changed the answer raised {star[c][1]} where the reference "
                   "returned a value: a check of the library's results against the answer's own computation (an "
                   "assert) cannot be told from code that detects the check" if star[c][0] == "e" and rstar[c][0] == "v" else
                   f"case {c}: the result changes with the library's results, but not as the reference's does: "
                   "it is not computed from them")
        return self._verdict(v, ok, codes, info, why)

    def _verdict(self, v: Verdict, ok: bool, codes: list[str], info: dict, why: str) -> Verdict:
        extra = {**v.extra, "dependence": info}
        if ok:
            return replace(v, extra=extra)
        credited = 0 if info.get("no_value_matched") else sum(code not in ("failed", "unchanged", "differs") for code in codes)
        reward = credited / len(codes) if self.judge.reward == "fraction" and codes else 0.0
        if v.status is not Status.PASSED:  # (fraction: a partly right answer keeps its status, less reward)
            return replace(v, reward=min(v.reward, reward), extra=extra)
        return replace(v, reward=reward, status=Status.LIBRARY_UNUSED, error_type=ErrorType.LIBRARY_UNUSED,
                       detail=f"library_unused: {why}", extra=extra)

    def _infra(self, v: Verdict, why: str) -> Verdict:
        return replace(v, reward=0.0, status=Status.SANDBOX_ERROR, sebench_code=SEBENCH_EXEC_ERROR, error_type=ErrorType.OTHER,
                       detail=f"sandbox error (not the answer's fault): {why} (the library dependence check)", infrastructure=True,
                       extra={**v.extra, "dependence": {"ran": False, "why": why}})


def run_sync(check: DependenceCheck, run: Callable[[list], list]) -> None:
    """Drive ``check`` with a blocking ``run(programs) -> results``."""
    steps = check.steps()
    try:
        programs = next(steps)
        while True:
            programs = steps.send(run(programs))
    except StopIteration:
        pass
    check.verdicts()


async def run_async(check: DependenceCheck, run: Callable[[list], Any]) -> None:
    """Drive ``check`` with an awaitable ``run(programs) -> results``."""
    steps = check.steps()
    try:
        programs = next(steps)
        while True:
            programs = steps.send(await run(programs))
    except StopIteration:
        pass
    check.verdicts()



def _key_sets(result: Any) -> dict | None:
    """A record run's keys per class, as sets of ints (None: no record)."""
    import base64

    try:
        record = json.loads(result.library_report).get("record")
    except (ValueError, AttributeError, TypeError):
        return None
    if not isinstance(record, dict):
        return None
    return {c: set(int.from_bytes(raw[i:i + 8], "little") for i in range(0, len(raw), 8))
            for c, b64 in record.items() for raw in [base64.b64decode(b64)]}


def _encode(keys: dict) -> dict:
    import base64

    return {c: base64.b64encode(b"".join(k.to_bytes(8, "little") for k in sorted(v))).decode() for c, v in keys.items() if v}


def input_dependence(judge: Any, items: Sequence[tuple]) -> list[tuple[str, str] | None]:
    """For untrusted references (self-play's proposals, red-team round 8): whether each one's results
    change when only its library computations that *differ between its cases* are perturbed.

    Judged as an answer without a reference (the weaker rule), a reference that computes in Python
    and adds ``sum([1]) - 1`` (or branches on a library call on a constant) changes when every
    computation is perturbed, and became a task whose check demanded that constant's perturbation:
    a plain-Python answer with the same constant call passed it, an honest one did not.  Here each
    case runs alone in record mode; a computation recorded in every case (same function, same
    values) does not depend on the input, and stays real.

    ``items``: ``(response, cases, expected)``; returns per item None (some result changes) or
    ``(reason, detail)`` with reason ``library_unused`` or ``sandbox_error``."""
    preps, spans = [], []
    for response, cases, expected in items:
        whole = judge._prepare(-1, (response, list(cases), None, list(expected)))
        single = [judge._prepare(-1, (response, [c], None, [e])) for c, e in zip(cases, expected)]
        spans.append((len(preps), len(cases)))
        preps += [whole, *single]
    runnable = [p for p in preps if p.verdict is None]
    results = dict(zip(map(id, runnable), judge._run([p.program.with_library_mode(record_mode(judge)) for p in runnable]))) if runnable else {}
    out: list = [None] * len(items)
    cf_jobs = []
    for k, (start, n) in enumerate(spans):
        whole, single = preps[start], preps[start + 1:start + 1 + n]
        runs = [results.get(id(p)) for p in (whole, *single)]
        if any(r is None or _failed(r) for r in runs):
            out[k] = ("sandbox_error", "a record run of the reference failed")
            continue
        sets = [_key_sets(r) for r in runs[1:]]
        if any(s is None for s in sets):
            out[k] = ("sandbox_error", "a record run of the reference reported no record")
            continue
        varying = {}  # per class, the keys some case records and another does not
        for c in set().union(*sets):
            per_case = [s.get(c, set()) for s in sets]
            if v := set().union(*per_case) - set.intersection(*per_case):
                varying[c] = v
        if not varying:
            out[k] = ("library_unused", "its library computations are the same for every input (made on constants): "
                      "its results do not come from the library's work on the input")
            continue
        keys = DependenceCheck.demanded(_encode(varying))
        mode = {"cf": judge_secret(judge), "keys": keys, "fed_record": True, **_mode_arguments(judge)}
        cf_jobs.append((k, outcomes(runs[0], n), whole.program.with_library_mode(mode)))
    if cf_jobs:
        tol = judge.abs_tol, judge.rel_tol
        for (k, real, _), res in zip(cf_jobs, judge._run([prog for *_, prog in cf_jobs])):
            got = outcomes(res, len(real)) if isinstance(real, list) else _INFRA
            if not isinstance(got, list) or not isinstance(real, list):
                out[k] = ("sandbox_error", "the reference's counterfactual run failed")
            elif not any(b[0] == "v" and not same(a, b, *tol) for a, b in zip(got, real)):
                out[k] = ("library_unused", "no result changes when only the library's computations on the input change "
                          "(those made on constants stay real): its results do not come from the library's work on the input")
    return out
