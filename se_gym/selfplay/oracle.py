"""The NumPy oracle of a self-proposed task, and its label noise.

se-gym knows which NumPy function every library name stands for, so a reference solution written
against the library can be translated back to NumPy (an AST rewrite of imports and attribute
names) and run on the same inputs.  Where the two disagree, the task's expected outputs (the
reference's printed results) are not what NumPy would say: *label noise*, measured per task as the
share of its test inputs where the reference and the oracle differ (the official tolerant
comparison; an oracle that fails counts as a disagreement).  No other self-play system can
measure this, because none knows the ground truth of its library.
"""
from __future__ import annotations

import ast
import json
from typing import Any, Sequence


class _ToNumpy(ast.NodeTransformer):
    def __init__(self, library: Any):
        self.lib = library
        self.pkg_alias: set[str] = set()  # names bound to the package
        self.la_alias: set[str] = set()  # names bound to its linalg submodule
        self.by_name = {v: k for k, v in library.names.items()}

    def _np_attr(self, name: str, linalg: bool) -> str:
        from ..library import entry

        key = self.by_name.get(name)
        if key is None:
            return name
        e = entry(key)
        if e.in_linalg != linalg:
            return name
        return e.short

    def visit_Import(self, node: ast.Import) -> ast.AST:
        pkg, la = self.lib.package, self.lib.linalg
        names = []
        for a in node.names:
            if a.name == pkg or (a.name.startswith(pkg + ".") and a.asname is None):
                bound = a.asname or pkg
                self.pkg_alias.add(bound)
                names.append(ast.alias("numpy", bound))
            elif a.name == f"{pkg}.{la}":
                self.la_alias.add(a.asname)
                names.append(ast.alias("numpy.linalg", a.asname))
            else:
                names.append(a)
        node.names = names
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        pkg, la = self.lib.package, self.lib.linalg
        if node.level or node.module not in (pkg, f"{pkg}.{la}"):
            return node
        linalg = node.module != pkg
        names = []
        for a in node.names:
            bound = a.asname or a.name
            if not linalg and a.name == la:
                self.la_alias.add(bound)
                names.append(ast.alias("linalg", bound))
            elif not linalg and a.name == self.lib.array_type:
                names.append(ast.alias("ndarray", bound))
            else:
                names.append(ast.alias(self._np_attr(a.name, linalg), bound))
        return ast.ImportFrom("numpy.linalg" if linalg else "numpy", names, 0)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        v = node.value
        if isinstance(v, ast.Name) and v.id in self.pkg_alias:
            if node.attr == self.lib.linalg:
                node.attr = "linalg"
            elif node.attr == self.lib.array_type:
                node.attr = "ndarray"
            else:
                node.attr = self._np_attr(node.attr, False)
        elif isinstance(v, ast.Name) and v.id in self.la_alias:
            node.attr = self._np_attr(node.attr, True)
        elif isinstance(v, ast.Attribute) and v.attr == "linalg" and isinstance(v.value, ast.Name) and v.value.id in self.pkg_alias:
            node.attr = self._np_attr(node.attr, True)
        return node


def to_numpy(reference: str, library: Any) -> str | None:
    """The reference with every library name replaced by its NumPy function (None if unparsable)."""
    try:
        tree = ast.parse(reference)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    t = _ToNumpy(library)
    # imports first, so aliases are known before attributes are rewritten
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            t.visit_Import(node)
    tree = t.visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def used_functions(reference: str, library: Any) -> tuple[str, ...]:
    """Catalogue keys of the library functions the reference names, in order of first use."""
    try:
        tree = ast.parse(reference)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    by_name = {v: k for k, v in library.names.items()}
    seen: list[str] = []
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else node.name if isinstance(node, ast.alias) else None
        key = by_name.get(name) if name else None
        if key and key not in seen:
            seen.append(key)
    return tuple(seen)


_RUNNER = '''
import json
{code}
__out = []
for __src in {cases!r}:
    try:
        __out.append(str(eval("{entry}(" + __src + ")")))
    except BaseException as __e:
        __out.append(None)
print("@@ORACLE@@" + json.dumps(__out))
'''


def oracle_program(numpy_code: str, entry: str, inputs: Sequence[str]) -> str:
    return _RUNNER.format(code=numpy_code, cases=list(inputs), entry=entry)


def label_noise(judge: Any, tasks: Sequence[Any], outputs: Sequence[Sequence[str]]) -> list[float | None]:
    """Per task, the share of inputs where its reference's printed result differs from the NumPy
    oracle's (None when the oracle could not be built or run: unknown, not zero).  Runs in the
    judge's sandbox, as one batch."""
    from ..judge.compare import OfficialChecker

    checker = OfficialChecker(judge.array_type)
    programs, idx = [], []
    for i, t in enumerate(tasks):
        if t.reference_solution:
            programs.append(oracle_program(t.reference_solution, t.entry_point, [c.input for c in t.test_cases]))
            idx.append(i)
    out: list[float | None] = [None] * len(tasks)
    if not programs:
        return out
    results = judge.sandbox.run(programs, judge.limits)
    for i, r in zip(idx, results):
        marker = next((ln for ln in (r.stdout or "").splitlines() if ln.startswith("@@ORACLE@@")), None)
        if marker is None:
            continue
        try:
            got = json.loads(marker[len("@@ORACLE@@"):])
        except ValueError:
            continue
        ref = outputs[i]
        if len(got) != len(ref):
            continue
        bad = sum(1 for g, e in zip(got, ref) if g is None or not checker.equal(g, e))
        out[i] = bad / len(ref)
    return out
