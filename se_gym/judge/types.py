"""Records of the judge: test cases, per-case results and verdicts."""
from __future__ import annotations

import enum
from copy import deepcopy
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping

from ..choices import DEFAULT_PROFILE
from ..errors import SEGymError

_ABSENT = object()


class JudgeError(SEGymError, ValueError):
    """Bad input to the judge (one line naming the problem)."""


@dataclass(frozen=True)
class TestCase:
    """One test.

    Attributes:
        input: keyword-argument source (``x1=[1, 2], x2=[3]``).
        output: the printed form of the expected result (``[3, 8]``).
        canonical: se-gym's own expected output (the built-in suite), read the canonical way under every
            profile: a row NumPy wrapped over lines is one row, so a list answer and an array answer of
            the same values both pass.  False (official data): under ``sebench`` it is read as SE-Bench
            reads it, where a list never equals a wrapped row.
    """

    __test__ = False  # not a pytest class

    input: str
    output: str
    canonical: bool = field(default=False, compare=False)  # (how to read, not what: equal cases stay equal)

    def __post_init__(self):
        for name in ("input", "output"):
            if not isinstance(getattr(self, name), str):
                raise JudgeError(f"TestCase.{name} must be a str, got {type(getattr(self, name)).__name__}")

    @classmethod
    def coerce(cls, case: "TestCase | Mapping[str, Any]") -> "TestCase":
        """Accept a TestCase or the official dict ``{"input": ..., "output": ...}``.

        Args:
            case: the case.
        """
        if type(case) is dict:  # the usual case, without the Mapping check (an ABC's isinstance)
            inp, out = case.get("input", _ABSENT), case.get("output", _ABSENT)
            if type(inp) is str and type(out) is str:
                return cls(inp, out)
        if isinstance(case, TestCase):
            return case
        if isinstance(case, Mapping):
            missing = [k for k in ("input", "output") if k not in case]
            if missing:
                raise JudgeError(f"test case is missing field {missing[0]!r}")
            out = case["output"]
            return cls(case["input"], out if isinstance(out, str) else str(out))
        raise JudgeError(f"test case must be a TestCase or a dict, got {type(case).__name__}")

    def to_dict(self) -> dict:
        """The official dict form, ``{"input", "output"}``."""
        return {"input": self.input, "output": self.output}


class Status(str, enum.Enum):
    """What the judge decided about an answer (``passed``, ``wrong_answer``, ``timeout``, ...)."""
    PASSED = "passed"
    WRONG_ANSWER = "wrong_answer"
    STATIC_GATE = "static_gate"
    USES_NUMPY = "uses_numpy"
    FORBIDDEN = "forbidden"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    SANDBOX_ERROR = "sandbox_error"
    # strict (issue 42): every case passed, but a result that depends on the library (the reference's
    # does) did not come from it: it stayed the same, or changed otherwise than the reference's, when
    # the library's results changed (se_gym/judge/dependence.py)
    LIBRARY_UNUSED = "library_unused"


class ErrorType(str, enum.Enum):
    """The paper's error taxonomy (section on error analysis)."""

    ARRAY_ATTRIBUTE_HALLUCINATION = "array_attribute_hallucination"
    LIBRARY_FUNCTION_HALLUCINATION = "library_function_hallucination"
    PARAMETER_ERROR = "parameter_error"
    RETURN_VALUE_MISUNDERSTANDING = "return_value_misunderstanding"
    NATIVE_PYTHON_INCOMPATIBILITY = "native_python_incompatibility"
    # not one of the paper's: the library is named but the result is computed without it (strict)
    LIBRARY_UNUSED = "library_unused"
    OTHER = "other"


# official verdict codes of SE-Bench's judge
SEBENCH_WRONG, SEBENCH_RIGHT, SEBENCH_NUMPY, SEBENCH_EXEC_ERROR, SEBENCH_STATIC = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class CaseResult:
    """One test case's outcome.

    Attributes:
        got: the printed result (``None`` when it was not reached).
        expected: the expected printed form.
        ok: whether it passed.
    """

    got: str | None
    expected: str
    ok: bool


@dataclass(frozen=True)
class Verdict:
    """The judge's decision on one answer.

    Attributes:
        reward: 1.0 when every case passed (binary), or the share passed (fraction).
        status: what was decided (:class:`Status`).
        sebench_code: the official judge's verdict code (1 passed, 0 wrong, 2 NumPy, 3 no output, 4 gate).
        cases: each test case's outcome.
        exception: the exception's type, when the answer raised (``"AttributeError"``).
        exception_message: its message.
        error_type: the paper's error taxonomy (:class:`ErrorType`).
        detail: one line saying why.
        code: the code judged (the answer's last python block).
        function_name: the entry function called.
        wall_s: the program's time in the sandbox (not part of the verdict's identity).
        judge_s: the time spent judging it outside the sandbox (not part of its identity).
        infrastructure: the sandbox failed: the verdict says nothing about the answer.
        profile: the judge's profile.
        extra: more findings (forged records, refusals; not part of its identity).
    """
    reward: float
    status: Status
    sebench_code: int
    cases: tuple[CaseResult, ...] = ()
    exception: str | None = None  # e.g. "AttributeError"
    exception_message: str | None = None
    error_type: ErrorType | None = None
    detail: str = ""
    code: str | None = None
    function_name: str | None = None
    # measurements, not part of the verdict's identity: two judgements of the same answer compare equal
    wall_s: float = field(default=0.0, compare=False)  # time of the program in the sandbox
    judge_s: float = field(default=0.0, compare=False)  # time spent judging this item outside the sandbox
    infrastructure: bool = False
    profile: str = DEFAULT_PROFILE
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    @property
    def dependence(self) -> Mapping[str, Any] | None:
        """What the run-time library dependence check (strict, issue 42) found: ``{"ran": bool,
        "reference": "used" | "none" | "failed", "cases": [per-case finding], "worlds": int}``
        (findings: ``match``, ``match:FUNCTION``, ``match:~`` (in the world of the reference's
        queries and conversions), ``independent``, ``changed``, ``unchanged``, ``differs``,
        ``failed``); None when it was not asked (no reward, or not strict)."""
        return self.extra.get("dependence") if self.extra else None

    def to_dict(self) -> dict:
        """The verdict as plain data (what ``se-gym judge`` writes; :meth:`from_dict` reads it).

        The same dict, key for key, as ``dataclasses.asdict`` with the enums as their values, the
        cases as dicts and ``extra`` copied shallowly, built field by field: asdict deep-copies
        every field (``cases`` and ``extra`` too, to be replaced): ~55 us a verdict against ~4,
        most of the time ``se-gym judge`` spent writing its rows."""
        d = {}
        for name in _VERDICT_FIELDS:  # (in asdict's order: the four set below keep their places)
            v = getattr(self, name)
            d[name] = v if type(v) in _ATOMIC or name in _REPLACED else deepcopy(v)  # (asdict's copy of a leaf value)
        d["status"] = self.status.value
        d["error_type"] = self.error_type.value if self.error_type else None
        d["cases"] = [{"got": c.got, "expected": c.expected, "ok": c.ok} if type(c) is CaseResult and type(c.got) in _ATOMIC
                      and type(c.expected) in _ATOMIC and type(c.ok) in _ATOMIC else asdict(c) for c in self.cases]
        d["extra"] = dict(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Verdict":
        """The verdict :meth:`to_dict` wrote.

        Args:
            d: the dict.

        Raises:
            JudgeError: a field is missing or malformed.
        """
        try:
            return cls(
                reward=float(d["reward"]),
                status=Status(d["status"]),
                sebench_code=int(d["sebench_code"]),
                cases=tuple(CaseResult(c.get("got"), c["expected"], bool(c["ok"])) for c in d.get("cases", ())),
                exception=d.get("exception"),
                exception_message=d.get("exception_message"),
                error_type=ErrorType(d["error_type"]) if d.get("error_type") else None,
                detail=d.get("detail", ""),
                code=d.get("code"),
                function_name=d.get("function_name"),
                wall_s=float(d.get("wall_s", 0.0)),
                judge_s=float(d.get("judge_s", 0.0)),
                infrastructure=bool(d.get("infrastructure", False)),
                profile=d.get("profile", "strict"),
                extra=dict(d.get("extra") or {}),
            )
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise JudgeError(f"not a verdict record: {exc}") from None


# (Verdict.to_dict) the fields in declaration order (asdict's); values of these types are their own copy
_VERDICT_FIELDS = tuple(f.name for f in fields(Verdict))
_ATOMIC = frozenset({str, int, float, bool, type(None)})
_REPLACED = frozenset({"status", "error_type", "cases", "extra"})
