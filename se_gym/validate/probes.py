"""The answers ``se-gym validate`` sends to the judge for one task: the reference in its forms, the
floor probes, and the program that probes the sandbox's walls.

Every probe is an answer text (a fenced python block, as a model would write it), so it goes through
the whole judge: extraction, gates, harness, sandbox and comparison.
"""
from __future__ import annotations

import ast
import json
from typing import Any

from ..judge.extract import fenced
from ..judge.parsing import parse  # (takes turns with the judge's: judge/parsing.py)

# the reference in the form it is written, and the other container where the expected output allows it
FORMS = ("native", "list", "array")
# floor probes: none of them may earn any reward under the strict profile
FLOORS = ("empty", "empty_block", "signature", "return_none", "hardcoded_example", "numpy_reference", "answer_key",
          "hardcoded_example_gated")
# floor probes that get past the official static gate (they call the library), so a program runs
GATED = ("hardcoded_example_gated",)
# a probe for multi-turn feedback: passes the first case, raises with its arguments on the others
ECHO = "echo_inputs"
# the answer key with a library call thrown away: only a library-dependence check can refuse it
ANSWER_KEY_GATED = "answer_key_gated"

_AS_LIST = '''

def _se_gym_as_list(value):
    if isinstance(value, (str, bytes, dict)):
        return value
    try:
        items = list(value)
    except TypeError:
        return value
    return [_se_gym_as_list(v) for v in items]
'''


def _entry(tree: ast.Module, entry: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry), None)


class _WrapReturns(ast.NodeTransformer):
    """``return X`` -> ``return WRAP(X)`` in one function (not in the functions it defines)."""

    def __init__(self, wrap: ast.expr):
        self.wrap = wrap

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node  # a nested function's returns are its own

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]
    visit_Lambda = visit_FunctionDef  # type: ignore[assignment]

    def visit_Return(self, node: ast.Return) -> ast.AST:
        if node.value is not None:
            node.value = ast.Call(func=self.wrap, args=[node.value], keywords=[])
        return node


def reference_form(code: str, entry: str, form: str, package: str, array_ctor: str) -> str | None:
    """The reference ``code`` returning a list (``form="list"``), the library's array (``"array"``),
    or as written (``"native"``); None when the code does not parse or lacks ``entry``."""
    if form == "native":
        return code
    try:
        tree = parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    fn = _entry(tree, entry)
    if fn is None:
        return None
    wrap = "_se_gym_as_list" if form == "list" else f"{package}.{array_ctor}"
    visitor = _WrapReturns(parse(wrap, mode="eval").body)
    fn.body = [visitor.visit(stmt) for stmt in fn.body]
    return ast.unparse(ast.fix_missing_locations(tree)) + ("\n" + _AS_LIST if form == "list" else "\n")


def literal(expected: str, array_type: str) -> str:
    """A Python literal of a printed expected output (the value a hard-coded answer returns)."""
    from ..judge.compare import expected_value

    ok, value = expected_value(expected, array_type, numpy_wraps=True)
    text = repr(value) if ok else repr(expected.strip())
    try:  # a value whose repr is not a literal (inf, nan): return the printed text instead
        ast.literal_eval(parse(text, mode="eval"))
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        text = repr(expected.strip())
    return text


def _signature(task: Any) -> str:
    head = task.function_name.strip()
    return head if head.endswith(":") else head + ":"


def _harmless_call(library: Any) -> str | None:
    """A library call that cannot fail and is not the array constructor (the official gate wants one)."""
    for key in ("abs", "absolute", "sign", "square"):
        if key in library.names and "." not in library.names[key]:
            return f"{library.package}.{library.names[key]}(1)"
    return None


def floor_answers(task: Any, library: Any) -> dict[str, str]:
    """name -> answer text of each floor probe (see :data:`FLOORS`); probes not derivable are left out."""
    sig, pkg = _signature(task), library.package
    example = literal(task.example.output, library.array_type)
    table = "[" + ", ".join(literal(c.output, library.array_type) for c in task.test_cases) + "]"
    out = {
        "empty": "",
        "empty_block": "```python\n```",
        "signature": fenced(sig),
        "return_none": fenced(f"{sig}\n    return None"),
        "hardcoded_example": fenced(f"{sig}\n    return {example}"),
        # every expected output, handed back in the order the harness calls: plain Python, no library
        "answer_key": fenced(f"_se_gym_calls = [0]\n_se_gym_key = {table}\n\n{sig}\n"
                             "    _se_gym_calls[0] += 1\n    return _se_gym_key[_se_gym_calls[0] - 1]"),
    }
    if task.reference_solution.strip():
        out["numpy_reference"] = fenced(task.reference_solution)
    call = _harmless_call(library)
    if call is not None:
        out["hardcoded_example_gated"] = fenced(f"import {pkg}\n\n{sig}\n    {call}\n    return {example}")
    return out


def answer_key_gated(task: Any, library: Any) -> str | None:
    """The answer key with a library call whose result is thrown away: passes every gate, and every
    case, unless the judge checks that the results depend on the library."""
    call = _harmless_call(library)
    if call is None:
        return None
    sig = _signature(task)
    table = "[" + ", ".join(literal(c.output, library.array_type) for c in task.test_cases) + "]"
    return fenced(f"import {library.package}\n_se_gym_calls = [0]\n_se_gym_key = {table}\n\n{sig}\n    {call}\n"
                  "    _se_gym_calls[0] += 1\n    return _se_gym_key[_se_gym_calls[0] - 1]")


def echo_answer(task: Any, library: Any) -> str | None:
    """Passes the first case (the visible example), then raises with its own arguments in the message
    on every other case: multi-turn feedback must not show that message (a hidden case's input)."""
    call = _harmless_call(library)
    if call is None:
        return None
    try:
        fn = parse(_signature(task) + "\n    pass").body[0]
    except SyntaxError:
        return None
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]  # type: ignore[attr-defined]
    args = "(" + ", ".join(f"repr({n})" for n in names) + ("," if len(names) == 1 else "") + ")"
    first = literal(task.test_cases[0].output, library.array_type)
    return fenced(f"import {library.package}\n_se_gym_calls = [0]\n\n{_signature(task)}\n    {call}\n"
                  f"    _se_gym_calls[0] += 1\n    if _se_gym_calls[0] == 1:\n        return {first}\n"
                  f"    raise ValueError(' '.join({args}))")


# -- the containment probe ------------------------------------------------------------------------
CONTAINED = "net=refused;read=refused;write=refused"


def containment_answer(library: Any, port: int, secret: str, target: str) -> str:
    """A program that tries to reach a socket this process listens on, read a host file and write
    into a host folder; it returns what it managed (:data:`CONTAINED` when every wall held)."""
    call = _harmless_call(library) or f"{library.package}.{library.names.get('array', 'array')}([1]).shape"
    return fenced(f"""import {library.package}

def solve(x):
    {call}
    got = []
    try:
        import socket
        s = socket.create_connection(("127.0.0.1", {port}), timeout=2)
        s.sendall(b"se-gym validate probe")
        s.close()
        got.append("net=open")
    except Exception:
        got.append("net=refused")
    try:
        with open({json.dumps(secret)}) as f:
            f.read()
        got.append("read=open")
    except Exception:
        got.append("read=refused")
    try:
        with open({json.dumps(target)}, "w") as f:
            f.write("x")
        got.append("write=open")
    except Exception:
        got.append("write=refused")
    return ";".join(got)
""")
