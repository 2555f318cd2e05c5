"""The task record shared by the official loader, the built-in suite, the env and the agents."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import SEGymError
from ..judge.types import TestCase  # the judge owns the record; tasks sit above it

__all__ = ["Task", "TestCase", "TaskError", "as_test_case", "parse_row"]
# the official rows' version tag and required fields (the row format is read here and written by Task.to_official_row)
VERSION = "sebench-2602.04811"
_REQUIRED = ("query", "function_name", "test_cases")


class TaskError(SEGymError, ValueError):
    """Malformed task data (the message names the file, line and field when known)."""


def as_test_case(obj: Any) -> TestCase:
    """A TestCase from a TestCase, an ``{"input", "output"}`` mapping or an ``(input, output)`` pair.

    Args:
        obj: the case.

    Raises:
        TaskError: not one of those, or its input or output not text.
    """
    if isinstance(obj, TestCase):
        return obj
    if isinstance(obj, Mapping):
        inp, out = obj.get("input"), obj.get("output")
    elif isinstance(obj, (tuple, list)) and len(obj) == 2:
        inp, out = obj
    else:
        inp = out = None
    if not isinstance(inp, str) or not isinstance(out, str):
        raise TaskError(f"a test case needs string 'input' and 'output', got {str(obj)[:80]!r}")
    return TestCase(inp, out)


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Task:
    """One coding question: a story, a signature to complete, and tests.

    Attributes:
        id: unique within its suite.
        split: the split it belongs to.
        source: where it comes from (``builtin:seed=0``, ``sebench``).
        query: the question.
        function_name: the signature to complete (``def solve(x1, x2):``).
        test_cases: the tests.
        example: the test shown in the prompt.
        functions: catalogue keys of the functions it needs (``"abs"``, ``"linalg.norm"``).
        reference_solution: NumPy code that answers it.
        library_solution: the same program written against the task's library.
        difficulty: ``easy``, ``medium`` or ``hard``.
        metadata: anything else (frozen).
        version: the data's version tag.
    """

    id: str
    split: str
    source: str  # "builtin:seed=0" or "sebench"
    query: str
    function_name: str  # "def solve(x1, x2):"
    test_cases: tuple[TestCase, ...]
    example: TestCase
    functions: tuple[str, ...]
    reference_solution: str
    library_solution: str = ""
    difficulty: str = "medium"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    version: str = ""

    def __post_init__(self) -> None:
        cases, example = tuple(as_test_case(t) for t in self.test_cases), as_test_case(self.example)
        if self.source.startswith("builtin"):  # se-gym printed these outputs: read canonically (TestCase.canonical)
            # (TestCase(...) rather than dataclasses.replace: a quarter of the built-in suite's load time)
            cases = tuple(c if c.canonical else TestCase(c.input, c.output, True) for c in cases)
            example = example if example.canonical else TestCase(example.input, example.output, True)
        object.__setattr__(self, "test_cases", cases)
        object.__setattr__(self, "example", example)
        object.__setattr__(self, "functions", tuple(self.functions))
        object.__setattr__(self, "metadata", _freeze(dict(self.metadata)))

    # pickle (AsyncVectorEnv's workers, Ray, multiprocessing) refuses a mappingproxy: the metadata
    # travels as plain dicts and lists and is frozen again on arrival
    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "metadata": _thaw(self.metadata)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, metadata=_freeze(state["metadata"]))

    def judge_item(self, response: str) -> tuple:
        """The judge's item for an answer to this task (``Judge.judge_many``): its cases, function
        name and reference solution, which strict's library dependence check compares the answer's
        results with (issue 42).

        Args:
            response: the model's answer text (a fenced code block or bare code).
        """
        return (response, self.test_cases, self.function_name, None, self.library_solution or None)

    @property
    def entry_point(self) -> str:
        """The name of the function to complete (``solve``)."""
        head = self.function_name.strip()
        return head[4:].split("(", 1)[0].strip() if head.startswith("def ") else head.split("(", 1)[0]

    @property
    def expected(self) -> tuple[str, ...]:
        """The expected printed outputs, one per test case."""
        return tuple(t.output for t in self.test_cases)

    def to_json(self) -> dict[str, Any]:
        """Every field, JSON-ready (the inverse of :meth:`from_json`)."""
        return {
            "id": self.id,
            "split": self.split,
            "source": self.source,
            "query": self.query,
            "function_name": self.function_name,
            "test_cases": [{"input": t.input, "output": t.output} for t in self.test_cases],
            "example": {"input": self.example.input, "output": self.example.output},
            "functions": list(self.functions),
            "reference_solution": self.reference_solution,
            "library_solution": self.library_solution,
            "difficulty": self.difficulty,
            "metadata": _thaw(self.metadata),
            "version": self.version,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Task":
        """The task :meth:`to_json` wrote (a ``hash`` field is ignored).

        Args:
            data: the dict.
        """
        fields = dict(data)
        fields.pop("hash", None)
        return cls(**fields)

    @property
    def hash(self) -> str:
        """Content hash (sha256 of the canonical JSON), the same in every process."""
        blob = json.dumps(self.to_json(), sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    # -- the official row layout ----------------------------------------------------------
    def to_official_row(self) -> dict[str, Any]:
        """The fields of an SE-Bench JSONL row (plus ``se_gym`` with what the format lacks)."""
        cases = [{"input": t.input, "output": t.output} for t in self.test_cases]
        return {
            "query": self.query,
            "function_name": self.function_name,
            "test_cases": cases,
            "example": {"input": self.example.input, "output": self.example.output},
            "right_exe_result": "#".join(t.output for t in self.test_cases),
            "example_output": [self.reference_solution],
            "selected_functions": [k.rsplit(".", 1)[-1] for k in self.functions],
            "is_valid": True,
            "se_gym": {
                "id": self.id,
                "split": self.split,
                "source": self.source,
                "functions": list(self.functions),
                "library_solution": self.library_solution,
                "difficulty": self.difficulty,
                "metadata": _thaw(self.metadata),
                "version": self.version,
            },
        }

    @classmethod
    def from_official_row(
        cls,
        row: Mapping[str, Any],
        split: str,
        index: int = 0,
        source: str = "sebench",
        version: str = "",
        library: Any = None,
    ) -> "Task":
        """A Task from an official row.

        Args:
            row: the official row.
            split: its split.
            index: its place in the file (the id of a row without one).
            source: where it comes from (``sebench``, ``builtin:seed=N``).
            version: the data's version tag.
            library: fills ``library_solution`` by translating the NumPy reference (None: left empty).

        Raises:
            TaskError: naming the bad field.
        """
        return parse_row(row, split=split, index=index, source=source, version=version, library=library)


def _function_key(name: str) -> str | None:
    from ..library.catalogue import entry

    for candidate in (name, "linalg." + name.rsplit(".", 1)[-1]):
        try:
            return entry(candidate).key
        except KeyError:
            continue
    return None


def _case(value: Any, where: str, fld: str) -> TestCase:
    if not isinstance(value, Mapping):
        raise TaskError(f"{where}: field {fld!r} must be an object with 'input' and 'output', got {type(value).__name__}")
    for part in ("input", "output"):
        if not isinstance(value.get(part), str):
            raise TaskError(f"{where}: field {fld!r} needs a string {part!r}")
    return TestCase(value["input"], value["output"])


def parse_row(
    row: Mapping[str, Any],
    split: str,
    index: int = 0,
    source: str = "sebench",
    version: str = VERSION,
    library: Any = None,
    where: str | None = None,
) -> Task:
    """One official row -> Task.

    Args:
        row: the official row.
        split: its split.
        index: its place in the file (the id of a row without one).
        source: where it comes from (``sebench``, ``builtin:seed=N``).
        version: the data's version tag.
        library: fills ``library_solution`` by translating the NumPy reference (None: left empty).
        where: the row's place (file:line) for error messages.

    Raises:
        TaskError: naming ``where`` and the field.
    """
    where = where or f"{split} row {index}"
    if not isinstance(row, Mapping):
        raise TaskError(f"{where}: expected a JSON object, got {type(row).__name__}")
    for fld in _REQUIRED:
        if fld not in row:
            raise TaskError(f"{where}: missing field {fld!r}")
    if not isinstance(row["query"], str) or not row["query"].strip():
        raise TaskError(f"{where}: field 'query' must be a non-empty string")
    fn = row["function_name"]
    if not isinstance(fn, str) or not fn.strip().startswith("def ") or "(" not in fn:
        raise TaskError(f"{where}: field 'function_name' must look like 'def solve(x):', got {str(fn)[:60]!r}")
    cases_raw = row["test_cases"]
    if not isinstance(cases_raw, list) or not cases_raw:
        raise TaskError(f"{where}: field 'test_cases' must be a non-empty list")
    cases = tuple(_case(c, where, f"test_cases[{i}]") for i, c in enumerate(cases_raw))
    truth = row.get("right_exe_result")
    if isinstance(truth, str) and not isinstance(row.get("se_gym"), Mapping):
        # SE-Bench's judge compares with right_exe_result, not with the cases' outputs (which differ
        # on many official rows: other float digits, and some another value): judge as it does
        pieces = truth.split("#")
        if len(pieces) == len(cases):
            cases = tuple(TestCase(c.input, p) for c, p in zip(cases, pieces))
    example = _case(row["example"], where, "example") if row.get("example") is not None else cases[0]
    refs = row.get("example_output") or []
    if isinstance(refs, str):
        refs = [refs]
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise TaskError(f"{where}: field 'example_output' must be a list of strings")
    reference = refs[0] if refs else ""
    names = row.get("selected_functions") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TaskError(f"{where}: field 'selected_functions' must be a list of strings")
    keys = [_function_key(n) for n in names]
    metadata: dict[str, Any] = {}
    unknown = [n for n, k in zip(names, keys) if k is None]
    if unknown:  # kept, and said: the row stays usable, only its function tags are partial
        metadata["unknown_functions"] = unknown
    for extra in ("right_exe_result", "1func_query_id", "task_index", "is_valid"):
        if extra in row:
            metadata[extra] = row[extra]
    ident = row.get("task_index", row.get("1func_query_id", index))
    library_solution = library.translate(reference) if library is not None and reference else ""
    n = len(keys)
    extra = row.get("se_gym")
    if isinstance(extra, Mapping):  # a row written by se-gym: restore what the format lacks
        try:
            return Task(
                id=extra["id"], split=extra["split"], source=extra["source"], query=row["query"],
                function_name=fn.strip(), test_cases=cases, example=example, functions=tuple(extra["functions"]),
                reference_solution=reference, library_solution=extra.get("library_solution") or library_solution,
                difficulty=extra.get("difficulty", "medium"), metadata=extra.get("metadata") or {},
                version=extra.get("version", version),
            )
        except (KeyError, TypeError) as exc:
            raise TaskError(f"{where}: field 'se_gym' is malformed ({exc})") from None
    return Task(
        id=f"sebench/{split}/{ident}",
        split=split,
        source=source,
        query=row["query"],
        function_name=fn.strip(),
        test_cases=cases,
        example=example,
        functions=tuple(k for k in keys if k is not None),
        reference_solution=reference,
        library_solution=library_solution,
        difficulty="easy" if n <= 1 else ("medium" if n <= 3 else "hard"),
        metadata=metadata,
        version=version,
    )
