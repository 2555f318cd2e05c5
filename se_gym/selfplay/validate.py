"""Validating proposals: every rule a self-proposed task must pass, each rejection named.

A proposal becomes a task only if (in this order; the first rule broken is the reason counted):

1. it can be read (:func:`se_gym.selfplay.proposal.parse_proposal`): ``no_question``,
   ``no_reference``, ``bad_inputs`` (not ``name=value`` plain literals), ``too_few_inputs``;
2. the reference parses (``syntax_error``), defines an entry function (``no_entry_point``) whose
   parameters the inputs name (``inputs_mismatch``), and imports only the library
   (``imports_outside_library``);
3. the AST gate sees the library on the return path: the returned value depends on a library
   call (``library_not_on_return_path``);
4. ``se_gym.judge`` in the sandbox, strict profile, accepts it as a program: the official static
   gate (``static_gate``), no NumPy (``uses_numpy``), none of the strict profile's forbidden
   constructs (``forbidden``), and it runs on every input without error (``runtime_error``,
   ``resource_limit``, ``unconvertible_result``; ``sandbox_error`` is the infrastructure's fault);
5. it is deterministic: two runs in two sandbox processes with different ``PYTHONHASHSEED`` print
   the same results (``nondeterministic``);
6. its outputs are not all equal (``constant_outputs``);
6a. its results come from the library at run time (``library_unused``): run again against strict's
   counterfactual library (every library computation perturbed, :mod:`se_gym.judge.dependence`),
   some result changes; and again with only the computations that differ between its inputs
   perturbed (those made alike for every input, on constants, stay real), some result changes.
   A reference whose results do not depend on the library would let a library-free answer pass
   the dependence check that judges answers against it;
6b. its question gives no hidden case's expected output nor a line of its reference away
   (``leaks_solution``: ``se-gym validate``'s leakage check, :func:`se_gym.validate.checks.solution_leak`);
7. it is not a near-duplicate of a buffer task or of one accepted earlier in the batch
   (``duplicate``, see :mod:`se_gym.selfplay.dedup`).

The reference's printed results become the expected outputs.  Every accepted task's *label noise*
is measured against the NumPy oracle (:mod:`se_gym.selfplay.oracle`).
"""
from __future__ import annotations

import ast
import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..judge.types import Status
from .proposal import MIN_INPUTS, Proposal, ProposalError, input_names, parse_proposal

# every reason a proposal can be rejected for, in the order the rules are applied
REASONS = (
    "no_question", "no_reference", "bad_inputs", "too_few_inputs",
    "syntax_error", "no_entry_point", "inputs_mismatch", "imports_outside_library", "library_not_on_return_path",
    "static_gate", "uses_numpy", "forbidden", "runtime_error", "resource_limit", "unconvertible_result", "sandbox_error",
    "nondeterministic", "constant_outputs", "library_unused", "leaks_solution", "duplicate",
)
_STATUS_REASON = {
    Status.STATIC_GATE: "static_gate",
    Status.USES_NUMPY: "uses_numpy",
    Status.FORBIDDEN: "forbidden",
    Status.RUNTIME_ERROR: "runtime_error",
    Status.TIMEOUT: "resource_limit",
    Status.MEMORY_LIMIT: "resource_limit",
    Status.OUTPUT_LIMIT: "resource_limit",
    Status.SANDBOX_ERROR: "sandbox_error",
}


@dataclass
class Outcome:
    """What became of one proposal: a task, or the reason (and detail) it was rejected.

    Attributes:
        proposal: the proposal as read.
        reason: the first rule it broke (one of :data:`REASONS`), None when accepted.
        detail: what broke it, in words.
        task: the ``se_gym.tasks.Task`` it became (accepted only).
        outputs: its reference's printed result per input.
        noise: the share of inputs where the reference disagrees with the NumPy oracle.
    """

    proposal: Proposal
    reason: str | None = None
    detail: str = ""
    task: Any = None  # se_gym.tasks.Task when accepted
    outputs: tuple[str, ...] = ()
    noise: float | None = None  # share of cases where the reference disagrees with the NumPy oracle

    @property
    def accepted(self) -> bool:
        """It became a task (no rule broken)."""
        return self.reason is None

    def to_json(self) -> dict:
        """Every field, JSON-ready (the inverse of :meth:`from_json`)."""
        return {
            "proposal": self.proposal.to_json(), "reason": self.reason, "detail": self.detail,
            "task": self.task.to_json() if self.task is not None else None, "outputs": list(self.outputs), "noise": self.noise,
        }

    @classmethod
    def from_json(cls, d: dict) -> "Outcome":
        """An outcome from :meth:`to_json`'s dict.

        Args:
            d: the dict.
        """
        from ..tasks.record import Task

        return cls(Proposal.from_json(d["proposal"]), d.get("reason"), d.get("detail", ""),
                   Task.from_json(d["task"]) if d.get("task") else None, tuple(d.get("outputs", ())), d.get("noise"))


def dedup(outcomes: Sequence[Outcome], buffer: Any = None, threshold: float = 0.5) -> list[Outcome]:
    """Mark near-duplicates (of a buffer task, or of one accepted earlier in ``outcomes``) as
    rejected for ``duplicate``; returns ``outcomes`` (changed in place)."""
    from .dedup import DedupIndex

    index = DedupIndex(threshold)
    if buffer is not None:
        for t in buffer.tasks():
            index.add(t.query, [c.input for c in t.test_cases])
    for o in outcomes:
        if o.reason is not None:
            continue
        dup = index.find(o.proposal.question, o.proposal.inputs)
        if dup is not None:
            o.reason, o.detail, o.task = "duplicate", f"near-duplicate of task #{dup}", None
            continue
        index.add(o.proposal.question, o.proposal.inputs)
    return outcomes


def rejection_counts(outcomes: Iterable[Outcome]) -> dict[str, int]:
    """Rejected outcomes counted by reason, in the order of :data:`REASONS`.

    Args:
        outcomes: the outcomes.
    """
    c = Counter(o.reason for o in outcomes if o.reason is not None)
    return {r: c[r] for r in REASONS if c.get(r)}


# -- static rules (no execution) -------------------------------------------------------------------
def library_aliases(tree: ast.AST, package: str) -> tuple[set[str], list[str]]:
    """Names bound to the library (``import PKG [as X]``, ``from PKG[.sub] import f``) and the
    modules imported from anywhere else."""
    bound: set[str] = set()
    foreign: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == package or a.name.startswith(package + "."):
                    bound.add(a.asname or a.name.split(".")[0])
                else:
                    foreign.append(a.name)
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 0 and (mod == package or mod.startswith(package + ".")):
                bound.update(a.asname or a.name for a in node.names)
            else:
                foreign.append("." * node.level + mod)
    return bound, foreign


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _targets(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


def returns_library_value(tree: ast.Module, entry: str, package: str) -> bool:
    """True when the entry function's returned value depends on a library call: a ``return``
    whose expression calls the library, or names a variable assigned (directly or through other
    variables, loops, or local helper functions that return such a value) from a library call.
    A library call whose result is thrown away does not count."""
    bound, _ = library_aliases(tree, package)
    funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    lib_funcs: set[str] = set()  # local helpers whose return value is a library value

    def tainted_expr(expr: ast.AST, tainted: set[str]) -> bool:
        for n in ast.walk(expr):
            if isinstance(n, ast.Call):
                root = _root_name(n.func)
                if root in bound or (isinstance(n.func, ast.Name) and n.func.id in lib_funcs):
                    return True
            if isinstance(n, ast.Name) and n.id in tainted:
                return True
        return False

    def analyse(fn: ast.AST) -> bool:
        tainted: set[str] = set()
        changed = True
        while changed:  # a fixed point: assignments may come in any order (loops)
            changed = False
            for n in ast.walk(fn):
                pairs: list[tuple[list[str], ast.AST]] = []
                if isinstance(n, ast.Assign):
                    pairs = [(_targets(t), n.value) for t in n.targets]
                elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None:
                    pairs = [(_targets(n.target), n.value)]
                elif isinstance(n, (ast.For, ast.comprehension)):
                    pairs = [(_targets(n.target), n.iter)]
                elif isinstance(n, ast.NamedExpr):
                    pairs = [(_targets(n.target), n.value)]
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
                    # out.append(lib(...)) makes ``out`` a library value
                    if any(tainted_expr(a, tainted) for a in n.args):
                        pairs = [([n.func.value.id], n)]
                for names, value in pairs:
                    if tainted_expr(value, tainted):
                        new = set(names) - tainted
                        if new:
                            tainted |= new
                            changed = True
        return any(isinstance(n, ast.Return) and n.value is not None and tainted_expr(n.value, tainted) for n in ast.walk(fn))

    changed = True
    while changed:  # helpers calling helpers
        changed = False
        for name, fn in funcs.items():
            if name not in lib_funcs and name != entry and analyse(fn):
                lib_funcs.add(name)
                changed = True
    return entry in funcs and analyse(funcs[entry])


def signature_of(fn: ast.FunctionDef) -> str:
    return f"def {fn.name}({ast.unparse(fn.args)}):"


def static_check(proposal: Proposal, package: str) -> tuple[str, str, str] | tuple[None, str, str]:
    """``(reason, detail, signature)``; reason is None when every static rule holds."""
    try:
        tree = ast.parse(proposal.reference)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return "syntax_error", f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}", ""
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fn is None:
        return "no_entry_point", "the reference defines no top-level function", ""
    sig = signature_of(fn)
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    required = set(params[: len(params) - len(fn.args.defaults)]) if not fn.args.posonlyargs else set(params)
    for line in proposal.inputs:
        names = set(input_names(line))
        if not names <= set(params) or not required <= names:
            return "inputs_mismatch", f"input {line[:60]!r} does not match {sig}", sig
    bound, foreign = library_aliases(tree, package)
    if foreign:
        return "imports_outside_library", f"imports {foreign[0]} (only {package} is allowed)", sig
    if not bound:
        return "library_not_on_return_path", f"the reference never imports {package}", sig
    if not returns_library_value(tree, fn.name, package):
        return "library_not_on_return_path", f"no value returned by {fn.name} comes from a {package} call", sig
    return None, "", sig


# -- the validator ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ValidationConfig:
    """The validator's settings.

    Attributes:
        min_inputs: the fewest distinct test inputs a proposal must give.
        hash_seeds: the two ``PYTHONHASHSEED`` values the reference runs under (the determinism rule).
        wall_s: a reference run's wall-clock limit, seconds.
        cpu_s: its CPU limit, seconds (None: the wall limit).
        memory_mb: its memory limit, MB (None: the sandbox's default).
        dedup_threshold: the input overlap from which the same question is a near-duplicate.
        label_noise: measure each accepted task against the NumPy oracle.
    """

    min_inputs: int = MIN_INPUTS
    hash_seeds: tuple[int, int] = (1, 2)
    wall_s: float = 3.0
    cpu_s: float | None = None
    memory_mb: int | None = None
    dedup_threshold: float = 0.5
    label_noise: bool = True


def task_id(question: str, inputs: Sequence[str], reference: str) -> str:
    blob = "\x1f".join([question, *inputs, "\x1e", reference])
    return "sp-" + hashlib.sha256(blob.encode()).hexdigest()[:12]


class Validator:
    """Validates batches of proposals for one library through two strict judges whose sandboxes
    run under different hash seeds.  ``workers``: sandbox workers per judge.  ``sandbox``: a
    function making the sandbox for a hash seed (the Ray engine's: a pool on every node), owned and
    closed by the validator; default: a local one with ``workers`` workers.

    Args:
        library: the library (a spec such as ``seed:100``, or a ``Library``).
        config: the rules' settings.
        workers: sandbox workers per judge.
        sandbox: ``f(hash_seed) -> Sandbox`` (None: local sandboxes).
    """

    def __init__(self, library: Any, config: ValidationConfig = ValidationConfig(), workers: int = 1, sandbox: Any = None):
        from ..library import from_spec

        self.library = from_spec(library)
        self.config = config
        self.workers = workers
        self._make_sandbox = sandbox
        self._judges: list[Any] = []

    def judges(self) -> list[Any]:
        """The two strict judges, one per hash seed (made on first use)."""
        if not self._judges:
            from ..judge import Judge
            from ..judge.core import sandbox_preload
            from ..sandbox import Limits
            from ..sandbox.local import LocalSandbox

            lib = self.library
            path = [str(lib.materialize("strict", docs=False))]
            preload = sandbox_preload(lib)
            c = self.config
            limits = Limits(wall_s=c.wall_s, cpu_s=c.cpu_s or c.wall_s, **({"memory_mb": c.memory_mb} if c.memory_mb else {}))
            for seed in self.config.hash_seeds:
                if self._make_sandbox is not None:
                    box = self._make_sandbox(seed)
                else:
                    box = LocalSandbox(pythonpath=path, preload=preload, workers=self.workers, hash_seed=seed, pin_cpus=False)
                self._judges.append(Judge(lib, profile="strict", sandbox=box, limits=limits))
        return self._judges

    def close(self) -> None:
        """Close the judges' sandboxes (the validator makes new ones if used again)."""
        for j in self._judges:
            j.sandbox.close()
        self._judges = []

    def __enter__(self) -> "Validator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def parse(self, texts: Sequence[str], functions: Sequence[tuple[str, ...]] | None = None) -> list[Outcome | Proposal]:
        """Each text read as a :class:`Proposal`, or an :class:`Outcome` rejected for the reading rule it broke.

        Args:
            texts: proposals as written (``Question:`` / ``Inputs:`` / ``Reference:``).
            functions: per text, the catalogue keys it was asked about (None: none).
        """
        out: list[Outcome | Proposal] = []
        for i, text in enumerate(texts):
            fns = tuple(functions[i]) if functions else ()
            try:
                out.append(parse_proposal(text, fns, self.config.min_inputs))
            except ProposalError as exc:
                out.append(Outcome(Proposal("", (), "", fns, text if isinstance(text, str) else ""), exc.reason, exc.detail))
        return out

    def validate_texts(self, texts: Sequence[str], functions: Sequence[tuple[str, ...]] | None = None, buffer: Any = None) -> list[Outcome]:
        """Every rule, the duplicate check included, on written proposals; one outcome per text.

        Args:
            texts: proposals as written.
            functions: per text, the catalogue keys it was asked about (None: none).
            buffer: a :class:`~se_gym.selfplay.buffer.TaskBuffer` whose tasks count as seen (None: none).
        """
        return dedup(self.check_texts(texts, functions), buffer, self.config.dedup_threshold)

    def check_texts(self, texts: Sequence[str], functions: Sequence[tuple[str, ...]] | None = None) -> list[Outcome]:
        """Every rule but the duplicate check (see :meth:`check`) on written proposals.

        Args:
            texts: proposals as written.
            functions: per text, the catalogue keys it was asked about (None: none).
        """
        parsed = self.parse(texts, functions)
        props = [p for p in parsed if isinstance(p, Proposal)]
        done = iter(self.check(props))
        return [p if isinstance(p, Outcome) else next(done) for p in parsed]

    def validate(self, proposals: Sequence[Proposal], buffer: Any = None) -> list[Outcome]:
        """One outcome per proposal, in order; accepted ones carry a :class:`se_gym.tasks.Task`.

        Args:
            proposals: the proposals, read.
            buffer: a task buffer whose tasks count as seen for the duplicate check (None: none).
        """
        return dedup(self.check(proposals), buffer, self.config.dedup_threshold)

    def check(self, proposals: Sequence[Proposal]) -> list[Outcome]:
        """Every rule but the duplicate check (which needs the whole batch and the buffer, see
        :func:`dedup`): what a judge worker does with its share of a round's proposals.

        Args:
            proposals: the proposals, read.
        """
        from dataclasses import replace

        lib = self.library
        outcomes = [Outcome(p) for p in proposals]
        sigs: dict[int, str] = {}
        for i, o in enumerate(outcomes):
            try:
                reason, detail, sig = static_check(o.proposal, lib.package)
            except ProposalError as exc:
                reason, detail, sig = exc.reason, exc.detail, ""
            o.reason, o.detail = reason, detail
            sigs[i] = sig
        todo = [i for i, o in enumerate(outcomes) if o.reason is None]
        if todo:
            runs = [self._run(j, [outcomes[i] for i in todo], sigs) for j in self.judges()]
            for k, i in enumerate(todo):
                self._check_runs(outcomes[i], [r[k] for r in runs])
            self._check_dependence([outcomes[i] for i in todo if outcomes[i].reason is None])
        accepted = [(i, o) for i, o in enumerate(outcomes) if o.reason is None]
        for i, o in accepted:
            o.task = self._task(o, sigs[i])
        from ..validate.checks import solution_leak

        for i, o in accepted:
            leak = solution_leak(o.task)
            if leak:
                o.reason, o.detail, o.task = "leaks_solution", leak, None
        accepted = [(i, o) for i, o in accepted if o.reason is None]
        if accepted and self.config.label_noise:
            from .oracle import label_noise

            noises = label_noise(self.judges()[0], [o.task for _, o in accepted], [o.outputs for _, o in accepted])
            for (_, o), n in zip(accepted, noises):
                o.noise = n
                o.task = replace(o.task, metadata={**dict(o.task.metadata), "label_noise": n})
        return outcomes

    def _run(self, judge: Any, outcomes: Sequence[Outcome], sigs: dict) -> list[Any]:
        items = []
        for o in outcomes:
            cases = [{"input": s, "output": ""} for s in o.proposal.inputs]
            response = f"```python\n{o.proposal.reference.rstrip()}\n```"
            items.append((response, cases, None, [""] * len(cases)))
        return judge.judge_many(items)

    def _check_dependence(self, outcomes: Sequence[Outcome]) -> None:
        """Rule 6a: each reference, judged on its own outputs, passes strict's library dependence
        check without a reference (some result changes when every library computation is perturbed).
        Skipped where the judge has no dependence check (``SE_GYM_STRICT_SERVER=0``)."""
        judge = self.judges()[0]
        if not outcomes or not judge.dependence:
            return
        judge._warned_no_reference = True  # (on purpose: the reference is the program under check)
        items = []
        for o in outcomes:
            cases = [{"input": s, "output": out} for s, out in zip(o.proposal.inputs, o.outputs)]
            items.append((f"```python\n{o.proposal.reference.rstrip()}\n```", cases, None, None, None))
        for o, v in zip(outcomes, judge.judge_many(items)):
            if v.status is Status.PASSED:
                continue
            if v.status is Status.LIBRARY_UNUSED:
                o.reason, o.detail = "library_unused", v.detail
            else:
                o.reason, o.detail = ("sandbox_error" if v.infrastructure else _STATUS_REASON.get(v.status, "runtime_error")), v.detail
        # and its results must come from the library's work on the inputs: a computation made alike
        # for every input (on a constant) stays real (red-team round 8: a Python reference plus
        # ``sum([1]) - 1`` passed the rule above, and its task then paid the same trick in Python)
        from ..judge.dependence import input_dependence

        left = [(o, it) for o, it in zip(outcomes, items) if o.reason is None]
        for (o, _), why in zip(left, input_dependence(judge, [(it[0], it[1], [c["output"] for c in it[1]]) for _, it in left]) if left else ()):
            if why is not None:
                o.reason, o.detail = why

    def _check_runs(self, o: Outcome, verdicts: Sequence[Any]) -> None:
        for v in verdicts:
            if v.status not in (Status.PASSED, Status.WRONG_ANSWER):
                o.reason, o.detail = _STATUS_REASON.get(v.status, "runtime_error"), v.detail
                return
            if any(c.got is None for c in v.cases):
                o.reason, o.detail = "runtime_error", v.detail
                return
            # the strict harness could not convert a result (a function, a module...): it reports
            # "<why>" as the printed form, and no answer could ever match it structurally
            bad = next((c.got for c in v.cases if c.got.startswith("<") and c.got.endswith(">") and " " in c.got), None)
            if bad is not None:
                o.reason, o.detail = "unconvertible_result", bad[1:-1]
                return
        outs = [tuple(c.got for c in v.cases) for v in verdicts]
        if any(out != outs[0] for out in outs[1:]):
            k = next(i for i, (a, b) in enumerate(zip(outs[0], outs[1])) if a != b)
            o.reason, o.detail = "nondeterministic", f"input {k}: {outs[0][k]!r:.60} vs {outs[1][k]!r:.60} under another hash seed"
            return
        if len(set(outs[0])) <= 1:
            o.reason, o.detail = "constant_outputs", f"every input gives {outs[0][0]!r:.60}"
            return
        o.outputs = outs[0]

    def _task(self, o: Outcome, sig: str) -> Any:
        from ..tasks.record import Task, TestCase
        from .oracle import to_numpy, used_functions

        lib = self.library
        p = o.proposal
        cases = tuple(TestCase(i, out) for i, out in zip(p.inputs, o.outputs))
        used = used_functions(p.reference, lib) or p.functions
        return Task(
            id=task_id(p.question, p.inputs, p.reference),
            split="selfplay",
            source="selfplay",
            query=p.question,
            function_name=sig,
            test_cases=cases,
            example=cases[0],
            functions=tuple(used),
            reference_solution=to_numpy(p.reference, lib) or "",
            library_solution=p.reference,
            difficulty="single" if len(used) <= 1 else "multiple",
            metadata={"proposed_with": list(p.functions), **{k: v for k, v in p.meta.items() if isinstance(v, (str, int, float, bool))}},
        )
