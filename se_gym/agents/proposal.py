"""What a proposer writes, and how it is read: a question, test inputs, a reference solution.

The proposer's text has three parts (headers are matched case-insensitively)::

    Question: Given the list x, return the running total of its absolute values.
    Inputs:
    x=[1, -2, 3]
    x=[0, 5]
    ...
    Reference:
    ```python
    import zwc
    def solve(x):
        return zwc.cumsum(zwc.abs(x))
    ```

Inputs are SE-Bench's ``name=value, ...`` keyword form with plain Python literals only (numbers,
strings, booleans, None, and lists/tuples/dicts of them): the sandbox turns lists into the
library's arrays exactly as for any SE-Bench test.  The proposer never writes expected outputs;
the reference's printed results become them (see ``se_gym.selfplay.validate``).

Nothing here runs code: parsing is text and ``ast`` only.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import SEGymError
from ..judge.extract import extract_code

MIN_INPUTS = 8

_HEAD = re.compile(r"^\s*(?:#+\s*)?(question|inputs|test inputs|reference|reference solution)\s*:?\s*(.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class Proposal:
    """One proposed task as written (nothing checked yet beyond the text's shape).

    Attributes:
        question: the question.
        inputs: the test inputs, one ``name=value, ...`` line each.
        reference: the reference solution's Python source (the code of the last python block).
        functions: catalogue keys whose docs the proposer was shown.
        raw: the proposer's text as written.
        meta: anything else recorded with it (not compared).
    """

    question: str
    inputs: tuple[str, ...]
    reference: str  # Python source (the code of the last ```python block)
    functions: tuple[str, ...] = ()  # catalogue keys whose docs the proposer was shown
    raw: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict:
        """Every field, JSON-ready."""
        return {"question": self.question, "inputs": list(self.inputs), "reference": self.reference,
                "functions": list(self.functions), "raw": self.raw, "meta": dict(self.meta)}

    @classmethod
    def from_json(cls, d: dict) -> "Proposal":
        """The proposal :meth:`to_json` wrote.

        Args:
            d: the dict.
        """
        return cls(d["question"], tuple(d["inputs"]), d["reference"], tuple(d.get("functions", ())), d.get("raw", ""), dict(d.get("meta", {})))


class ProposalError(SEGymError, ValueError):
    """A proposal that cannot be read.

    Args:
        reason: the rejection reason it is counted under (``no_question``, ``bad_inputs``...).
        detail: what was wrong.
    """

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def render_proposal(question: str, inputs: list[str] | tuple[str, ...], reference: str) -> str:
    """The text form :func:`parse_proposal` reads (used for references shown to the proposer, and tests).

    Args:
        question: the question.
        inputs: the test input lines.
        reference: the reference solution's source.
    """
    body = reference.rstrip("\n")
    return f"Question: {question.strip()}\nInputs:\n" + "\n".join(inputs) + f"\nReference:\n```python\n{body}\n```"


def parse_proposal(text: str, functions: tuple[str, ...] = (), min_inputs: int = MIN_INPUTS) -> Proposal:
    """Read a proposer's answer.

    Args:
        text: what the proposer wrote.
        functions: the catalogue keys whose docs it was shown (kept with the proposal).
        min_inputs: the fewest test inputs a task may have.

    Raises:
        ProposalError: reason ``no_question``, ``no_reference``, ``bad_inputs`` or ``too_few_inputs``.
    """
    if not isinstance(text, str):
        raise ProposalError("no_question", f"a proposal must be text, got {type(text).__name__}")
    code = extract_code(text)
    before = text.split("```python", 1)[0] if code is not None else text
    parts: dict[str, list[str]] = {}
    current = None
    for line in before.splitlines():
        m = _HEAD.match(line)
        if m:
            name = m.group(1).lower()
            current = "question" if name == "question" else "inputs" if "input" in name else "reference"
            parts.setdefault(current, [])
            if m.group(2).strip():
                parts[current].append(m.group(2))
        elif current is not None:
            parts[current].append(line)
    question = " ".join(" ".join(parts.get("question", [])).split())
    if not question:
        raise ProposalError("no_question", "no 'Question:' text")
    if code is None or not code.strip():
        raise ProposalError("no_reference", "no ```python reference block")
    raw_inputs = [ln.strip() for ln in parts.get("inputs", []) if ln.strip()]
    raw_inputs = [ln[2:].strip() if ln.startswith(("- ", "* ")) else ln for ln in raw_inputs]
    inputs: list[str] = []
    for ln in raw_inputs:
        check_input(ln)
        if ln not in inputs:  # a repeated input tests nothing new
            inputs.append(ln)
    if len(inputs) < min_inputs:
        raise ProposalError("too_few_inputs", f"{len(inputs)} distinct test inputs, at least {min_inputs} needed")
    return Proposal(question, tuple(inputs), code, tuple(functions), text)


def _plain_literal(node: ast.AST) -> bool:
    """Numbers, strings, booleans, None, and lists/tuples/sets/dicts of them (``-3`` included)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, complex, str, bool, type(None))) and not isinstance(node.value, bytes)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float, complex)) and not isinstance(node.operand.value, bool)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_plain_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _plain_literal(k) for k in node.keys) and all(_plain_literal(v) for v in node.values)
    return False


def input_names(line: str) -> tuple[str, ...]:
    """The keyword names of one input line (``x1=[1], x2=2`` -> ``("x1", "x2")``).

    Args:
        line: one input line.

    Raises:
        ProposalError: not keyword arguments of plain literals.
    """
    try:
        tree = ast.parse(f"f({line})", mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ProposalError("bad_inputs", f"not keyword arguments: {line[:80]!r}") from None
    call = tree.body
    if not isinstance(call, ast.Call) or call.args or not call.keywords or any(k.arg is None for k in call.keywords):
        raise ProposalError("bad_inputs", f"inputs must be name=value pairs: {line[:80]!r}")
    for k in call.keywords:
        if not _plain_literal(k.value):
            raise ProposalError("bad_inputs", f"{k.arg} is not a plain literal: {line[:80]!r}")
    return tuple(k.arg for k in call.keywords)


def check_input(line: str) -> None:
    """Raise :class:`ProposalError` unless ``line`` is one input in SE-Bench's keyword form.

    Args:
        line: one input line.
    """
    input_names(line)
