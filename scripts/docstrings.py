"""How much of se_gym's public API says what it is, read from the source with ``ast``.

    python scripts/docstrings.py            # coverage of the public API and of the whole package
    python scripts/docstrings.py --missing  # and every public name that lacks a docstring or Args:

The *public API* is every name listed in an ``__all__`` of the package: the functions and classes
those names resolve to (following ``from .x import name`` to the module that defines them), and the
public methods and properties of those classes.  A function or method that takes arguments (besides
``self`` / ``cls``) *says what they are* when its docstring has an ``Args:`` section; a class whose
constructor takes arguments does so in its own docstring (``Args:``, or ``Attributes:`` as Google
style has it for a dataclass's fields) or its ``__init__``'s.  A dataclass's fields are its arguments;
a config dataclass whose every field carries its help (``metadata={"help": ...}``) says what they are.

The *whole package* line counts every function and method whose name is not private, wherever it
is, the way issue 48 counted them (33% of public methods and 26% of public functions without a
docstring, 29 of 514 documented ones with an ``Args:`` section).  tests/test_docstrings.py asserts
the public API is complete, apart from an allow-list of files other work is still changing.
"""
from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from house import ROOT, _modules  # noqa: E402  (one reading of the package's files: scripts/house.py's)

SECTION = "Args:"


@dataclass(frozen=True)
class Item:
    """One public function, class, method or property.

    Args:
        name: ``module:qualname``.
        kind: ``function``, ``class``, ``method`` or ``property``.
        path: the file that defines it, relative to the checkout.
        line: where it starts.
        documented: it has a docstring.
        needs_args: it (or a class's constructor) takes arguments.
        says_args: the docstring (a class's or its ``__init__``'s) has an ``Args:`` section.
    """

    name: str
    kind: str
    path: str
    line: int
    documented: bool
    needs_args: bool
    says_args: bool

    @property
    def complete(self) -> bool:
        """Documented, and its arguments said where it takes any."""
        return self.documented and (self.says_args or not self.needs_args)


def _takes_arguments(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> bool:
    args = fn.args
    named = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if method and named and named[0] in ("self", "cls"):
        named = named[1:]
    return bool(named or args.vararg or args.kwarg)


def _has_args(doc: str | None, sections: tuple[str, ...] = (SECTION,)) -> bool:
    return bool(doc) and any(line.strip() in sections for line in doc.splitlines())


def _decorators(node: ast.AST) -> set[str]:
    return {ast.unparse(d).split("(")[0].rsplit(".", 1)[-1] for d in getattr(node, "decorator_list", [])}


def _is_dataclass(cls: ast.ClassDef) -> bool:
    return "dataclass" in _decorators(cls)


def _class_items(module: str, cls: ast.ClassDef, rel: str) -> list[Item]:
    doc = ast.get_docstring(cls)
    init = next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__init__"), None)
    fields = [n for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
              and "ClassVar" not in ast.unparse(n.annotation)] if _is_dataclass(cls) else []
    needs = (init is not None and _takes_arguments(init, True)) or bool(fields)
    # a config dataclass whose every field carries its help (``field(metadata={"help": ...})``, what the
    # CLIs print for --help) says what each is there
    helped = bool(fields) and all(n.value is not None and "help" in ast.unparse(n.value) for n in fields)
    # a class may say what its constructor takes as Google style does for a dataclass's fields too
    says = helped or _has_args(doc, (SECTION, "Attributes:")) or (init is not None and _has_args(ast.get_docstring(init)))
    items = [Item(f"{module}:{cls.name}", "class", rel, cls.lineno, bool(doc), needs, says)]
    for node in cls.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name.startswith("_"):
            continue
        decorators = _decorators(node)
        if "setter" in decorators or "deleter" in decorators or "overload" in decorators:
            continue
        kind = "property" if {"property", "cached_property"} & decorators else "method"
        mdoc = ast.get_docstring(node)
        items.append(Item(f"{module}:{cls.name}.{node.name}", kind, rel, node.lineno, bool(mdoc),
                          kind == "method" and _takes_arguments(node, True), _has_args(mdoc)))
    return items


def _function_item(module: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, rel: str) -> Item:
    doc = ast.get_docstring(fn)
    return Item(f"{module}:{fn.name}", "function", rel, fn.lineno, bool(doc), _takes_arguments(fn, False), _has_args(doc))


class _Package:
    """The parsed package: each module's top-level definitions, imports and ``__all__``."""

    def __init__(self, root: Path):
        self.root = root
        self.paths = _modules(root)
        self.trees = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in self.paths.items()}

    def rel(self, module: str) -> str:
        return str(self.paths[module].relative_to(self.root.parent))

    def exported(self, module: str) -> list[str]:
        names: list[str] = []
        for node in self.trees[module].body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                try:
                    names += list(ast.literal_eval(node.value))
                except ValueError:
                    continue
        return names

    def resolve(self, module: str, name: str, depth: int = 0) -> tuple[str, ast.AST] | None:
        """The module defining ``name`` as seen from ``module``, and its node (None: not a def or class)."""
        if depth > 8:
            return None
        tree = self.trees[module]
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                return module, node
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) != name:
                        continue
                    target = self._absolute(module, node)
                    if target in self.trees:
                        return self.resolve(target, alias.name, depth + 1)
                    sub = f"{target}.{alias.name}"
                    if sub in self.trees:  # a submodule, not a function or class
                        return None
        return None

    def _absolute(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        package = module.split(".") if self.paths[module].name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(package[: len(package) - node.level + 1])
        return f"{base}.{node.module}" if node.module else base


def public_api(root: Path = ROOT) -> list[Item]:
    """Every function, class, method and property the ``__all__`` lists of the package at ``root`` name.

    Args:
        root: the ``se_gym`` folder.

    Returns:
        One :class:`Item` per definition (a name exported twice is counted once), sorted by name.
    """
    pkg = _Package(root)
    seen: dict[str, Item] = {}
    for module in pkg.paths:
        for name in pkg.exported(module):
            found = pkg.resolve(module, name)
            if found is None:
                continue
            where, node = found
            items = _class_items(where, node, pkg.rel(where)) if isinstance(node, ast.ClassDef) else [_function_item(where, node, pkg.rel(where))]
            for item in items:
                seen.setdefault(item.name, item)
    return sorted(seen.values(), key=lambda i: i.name)


def whole_package(root: Path = ROOT) -> list[Item]:
    """Every function and method of the package at ``root`` whose name is not private (issue 48's count).

    Args:
        root: the ``se_gym`` folder.

    Returns:
        One :class:`Item` per function (top level or nested in a class), sorted by name.
    """
    pkg = _Package(root)
    out = []
    for module, tree in pkg.trees.items():
        rel = pkg.rel(module)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                out.append(_function_item(module, node, rel))
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                out += [i for i in _class_items(module, node, rel) if i.kind == "method"]
    return sorted(out, key=lambda i: i.name)


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def summary(items: list[Item]) -> dict[str, str]:
    """Counts by kind: how many lack a docstring, and how many of those taking arguments say what they are.

    Args:
        items: what :func:`public_api` or :func:`whole_package` returned.

    Returns:
        ``{"functions": ..., "methods": ..., "properties": ..., "classes": ..., "args": ..., "documented": ...}``
        as printable text.
    """
    out = {}
    for kind, plural in (("function", "functions"), ("method", "methods"), ("property", "properties"), ("class", "classes")):
        mine = [i for i in items if i.kind == kind]
        if mine:
            out[plural] = f"{_share(sum(not i.documented for i in mine), len(mine))} without a docstring"
    needing = [i for i in items if i.needs_args and i.documented]
    out["args"] = f"{_share(sum(i.says_args for i in needing), len(needing))} of the documented ones taking arguments have Args:"
    documented = [i for i in items if i.documented and i.kind in ("function", "method")]
    out["documented"] = f"{sum(i.says_args for i in documented)} of {len(documented)} documented functions and methods have Args:"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--missing", action="store_true", help="list every public name without a docstring or Args:")
    parser.add_argument("--root", type=Path, default=ROOT, help="the se_gym folder to read (default: this checkout's)")
    args = parser.parse_args(argv)
    api = public_api(args.root)
    print(f"public API (names in an __all__): {len(api)} definitions, {sum(i.complete for i in api)} complete")
    for key, text in summary(api).items():
        print(f"  {key}: {text}")
    print("whole package (every function and method not named _x):")
    for key, text in summary(whole_package(args.root)).items():
        print(f"  {key}: {text}")
    if args.missing:
        for item in api:
            if not item.complete:
                why = "no docstring" if not item.documented else "no Args:"
                print(f"{item.path}:{item.line}: {item.name} ({item.kind}): {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
