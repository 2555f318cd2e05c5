"""Static checks made before anything runs (the first of the strict judge's walls, issue 21).

* :func:`official_static_gate` and :func:`official_numpy_gate` are SE-Bench's (verdicts 4 and 2),
  applied to the official harness program, with the official quirks (FORMATS.md, steps 3-4).
* :func:`strict_check` is the ``strict`` profile's extra gate on the answer's code: every way we
  know to reach NumPy, the interpreter's internals or the judge's own state is refused before
  running.  The policy is an allow-list of imports and a deny-list of names and attributes:

  - imports: only the library package (and its linalg submodule) and the pure-Python modules in
    :data:`ALLOWED_MODULES`; no imported name may start with ``_``; an allowed module is an
    allow-list of attributes (:func:`module_attributes`): ``from M import a`` and ``M.a`` both need
    ``a`` on it, so the modules they re-export (``enum.bltns``, ``typing.sys``) stay out;
  - names: none starting with ``__`` (``__import__``, ``__builtins__``, dunder methods...) except
    reading ``__name__`` and defining ``__init__``; none of :data:`FORBIDDEN_BUILTINS`
    (``exec``, ``eval``, ``compile``, ``open``, ``getattr``, ``setattr``, ``vars``, ``globals``,
    ``locals``, ``breakpoint``, ``input``, ``help``, ...);
  - attributes: none starting with ``_``; none reaching frames or code objects (``f_*``, ``co_*``,
    ``gi_*``, ``cr_*``, ``ag_*``, ``tb_*``); none of :data:`FORBIDDEN_ATTRIBUTES`
    (``format_map``, ``attrgetter``, ``methodcaller``, ``get_type_hints``, ``mro``...);
  - ``str.format`` only on a literal whose fields name no attributes or items (``"{0.x}"``
    reads attributes by string); ``type`` only called as ``type(x)`` (not aliased, its result
    called with one argument only, not a base class) and no class keywords (metaclasses build classes with NumPy hooks).
"""
from __future__ import annotations

import ast
import string
from dataclasses import dataclass

from .parsing import parse

# pure-Python or C modules that cannot reach NumPy, the file system or the process
ALLOWED_MODULES = frozenset(
    {"math", "cmath", "itertools", "functools", "collections", "operator", "heapq", "bisect", "copy",
     "string", "typing", "fractions", "decimal", "statistics", "random", "re", "numbers", "enum"}
)
FORBIDDEN_BUILTINS = frozenset(
    {"exec", "eval", "compile", "open", "getattr", "setattr", "delattr", "vars", "globals", "locals",
     "breakpoint", "input", "help", "memoryview", "importlib", "__import__", "classmethod", "staticmethod",
     "property", "super", "object"}
)
FORBIDDEN_ATTRIBUTES = frozenset(
    {"format_map", "attrgetter", "methodcaller", "get_type_hints", "ForwardRef", "Formatter", "mro",
     "modules", "system", "popen", "environ", "load_module", "exec_module",
     # string-keyed reflection and the interpreter's own objects, by whatever module re-exports them
     "get_field", "vformat", "eval", "exec", "getattr", "setattr", "delattr", "vars", "globals", "locals",
     "breakpoint", "input", "open", "builtins", "bltns", "sys", "types", "copyreg", "warnings", "contextlib",
     "meta_path", "path_hooks", "path_importer_cache", "settrace", "setprofile", "gettrace", "getprofile",
     "get_objects", "get_referrers", "get_referents", "addaudithook", "loader", "spec", "get_source",
     "get_code", "find_spec", "dispatch_table", "getframe", "currentframe", "NamedTupleMeta", "EnumMeta",
     "EnumType", "ABCMeta", "GenericAlias", "FunctionType", "CodeType", "new_class"}
)
_FRAME_PREFIXES = ("f_", "co_", "gi_", "cr_", "ag_", "tb_")
_ALLOWED_DUNDER_NAMES = frozenset({"__name__"})
_ALLOWED_DUNDER_DEFS = frozenset({"__init__"})


_MODULE_ATTRS: dict[str, frozenset[str]] = {}


def module_attributes(name: str) -> frozenset[str]:
    """The allow-list of an allowed module (``strict``): its public names, minus those bound to
    modules outside :data:`ALLOWED_MODULES` (``enum.bltns``, ``typing.sys``...), to the forbidden
    builtins, or in :data:`FORBIDDEN_ATTRIBUTES`.  Worked out once from the module itself, so a
    name a new Python adds is judged by what it is, not missed by a list."""
    got = _MODULE_ATTRS.get(name)
    if got is None:
        import builtins
        import importlib
        import types

        banned = {id(getattr(builtins, n)) for n in FORBIDDEN_BUILTINS if hasattr(builtins, n)}
        try:
            mod = importlib.import_module(name)
        except ImportError:
            mod = None
        out = set()
        for attr in dir(mod) if mod is not None else ():
            if attr.startswith("_") or attr in FORBIDDEN_ATTRIBUTES:
                continue
            v = getattr(mod, attr, None)
            if isinstance(v, types.ModuleType) and v.__name__ not in ALLOWED_MODULES | {"collections.abc"}:
                continue
            if id(v) in banned or isinstance(v, type) and issubclass(v, type):
                continue  # eval/exec/getattr... and metaclasses (they build classes with hooks)
            out.add(attr)
        got = _MODULE_ATTRS[name] = frozenset(out)
    return got


# -- official gates -------------------------------------------------------------------------------
# Fields that never hold a node worth visiting: names, flags and constants, and the expression
# contexts and operators (Load, Add, Eq...: the gates and the compile check never look at them).
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "name", "attr", "arg", "module", "asname", "level", "kind",
                          "conversion", "is_async", "simple", "tag", "type_comment"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = tuple(f for f in cls._fields if f not in _LEAF_FIELDS or (f, cls.__name__) == ("name", "TypeAlias"))  # (3.12: a Name)
    if cls in (ast.Constant, ast.MatchSingleton):
        names = tuple(f for f in names if f != "value")  # (a constant, not a node)
    _CHILD_FIELDS[cls] = names
    return names


def walk(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node`` but the expression contexts and operators, in ``ast.walk``'s
    (breadth-first) order, as a list: one pass that both official gates share, at a fraction of
    ``ast.walk``'s generator cost (the gates were most of the judge's own time per answer).  Each
    node class's fields that can hold nodes are listed once: a Name, the commonest node, has none."""
    out = [node]
    append, AST, fields = out.append, ast.AST, _CHILD_FIELDS
    for n in out:  # (the list grows while we go: breadth-first)
        names = fields.get(type(n))
        if names is None:
            names = _child_fields(type(n))
        for name in names:
            v = getattr(n, name, None)
            if type(v) is list:  # (the usual container: a body, arguments, elements)
                for x in v:
                    if isinstance(x, AST):
                        append(x)
            elif isinstance(v, AST):
                append(v)
    return out


def _call_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return f"{_call_name(func.value)}.{func.attr}"
    return "unknown"


def official_static_gate(program: str, entry: str, package: str = "zwc", array_ctor: str = "yitaf", tree: ast.AST | None = None,
                         nodes: list[ast.AST] | None = None) -> tuple[bool, str]:
    """SE-Bench's verdict-4 gate on the harness program: ``(passed, reason)``.

    The entry function must call the library through a name bound by ``import PKG [as X]`` or
    ``from PKG import f`` (``import PKG.sub`` does not bind one), contain a ``return <value>``, and
    not have as its only library call the array constructor.  ``tree``: the parsed answer plus the
    harness's ``import PKG`` line, when the caller has it (the harness's main block defines and
    imports nothing, so the verdict is the same and the test-case literals need not be parsed);
    ``nodes``: ``walk(tree)``, when the caller has it."""
    if tree is None and nodes is None:
        try:
            tree = parse(program)
        except SyntaxError as exc:
            return False, f"syntax error: {exc.msg} (line {exc.lineno})"
        except (ValueError, RecursionError, MemoryError) as exc:
            return False, f"unparsable code: {exc}"
    if nodes is None:
        nodes = walk(tree)
    bound: set[str] = set()
    Import, ImportFrom, FunctionDef = ast.Import, ast.ImportFrom, ast.FunctionDef
    for node in nodes:  # (type(...) is: parsed nodes are of the node classes themselves, never subclasses)
        t = type(node)
        if t is Import:
            for a in node.names:
                if a.name == package:
                    bound.add(a.asname or a.name)
        elif t is ImportFrom and node.module == package:
            for a in node.names:
                bound.add(a.asname or a.name)
    if not bound:
        return False, f"no import of {package}"
    fn = next((n for n in nodes if type(n) is FunctionDef and n.name == entry), None)
    if fn is None:
        return False, f"entry function {entry or '(none)'} not found"

    def is_lib_call(n: ast.AST) -> bool:
        if not isinstance(n, ast.Call):
            return False
        f = n.func
        if isinstance(f, ast.Name):
            return f.id in bound
        if isinstance(f, ast.Attribute):
            while isinstance(f, ast.Attribute):
                f = f.value
            return isinstance(f, ast.Name) and f.id in bound
        return False

    in_fn = walk(fn)
    calls = [n for n in in_fn if is_lib_call(n)]
    if not calls:
        return False, f"the entry function {entry} calls no {package} function"
    if not any(isinstance(n, ast.Return) and n.value is not None for n in in_fn):
        return False, f"the entry function {entry} returns no value"
    if len(calls) == 1 and array_ctor.lower() in _call_name(calls[0].func).lower():
        return False, f"the only {package} call of {entry} is the array constructor"
    return True, ""


def official_numpy_gate(program: str, tree: ast.AST | None = None, nodes: list[ast.AST] | None = None) -> bool:
    """True when the program imports NumPy (``import numpy...``, ``from numpy... import``,
    ``__import__("numpy...")``): the official verdict 2.  ``tree``, ``nodes``: as for the static gate."""
    if tree is None and nodes is None:
        try:
            tree = parse(program)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    Import, ImportFrom, Call = ast.Import, ast.ImportFrom, ast.Call
    for node in nodes if nodes is not None else walk(tree):
        t = type(node)  # (parsed nodes are of the node classes themselves, never subclasses)
        if t is Import and any(a.name == "numpy" or a.name.startswith("numpy.") for a in node.names):
            return True
        if t is ImportFrom and node.module and (node.module == "numpy" or node.module.startswith("numpy.")):
            return True
        if (
            t is Call and isinstance(node.func, ast.Name) and node.func.id == "__import__"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            and node.args[0].value.startswith("numpy")
        ):
            return True
    return False


# -- strict gate ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Violation:
    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}"


def _format_fields_safe(fmt: str) -> bool:
    try:
        for _, field, spec, _ in string.Formatter().parse(fmt):
            if field is not None and ("." in field or "[" in field):
                return False
            if spec and ("{" in spec and not _format_fields_safe(spec)):
                return False
    except ValueError:
        return False
    return True


def strict_check(code: str, package: str, linalg: str) -> list[Violation]:
    """Everything the ``strict`` profile refuses in the answer's code (empty list: allowed)."""
    try:
        tree = parse(code)
    except SyntaxError as exc:
        return [Violation(exc.lineno or 0, f"syntax error: {exc.msg}")]
    except (ValueError, RecursionError, MemoryError) as exc:
        return [Violation(0, f"unparsable code: {exc}")]
    allowed_mods = ALLOWED_MODULES | {package, f"{package}.{linalg}"}
    out: list[Violation] = []

    def bad(node: ast.AST, what: str) -> None:
        out.append(Violation(getattr(node, "lineno", 0), what))

    # names bound to an allowed module by `import M [as N]`: their attributes are checked against
    # the module's allow-list (see module_attributes), as are the names of `from M import ...`
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in ALLOWED_MODULES:
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
    # `type` only as `type(x)`: called by any other name or with three arguments it makes classes,
    # with NumPy's protocol hooks if it likes
    one_arg_type = {
        id(n.func) for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "type" and len(n.args) == 1 and not n.keywords
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name not in allowed_mods:
                    bad(node, f"import of {a.name} is not allowed")
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level or mod not in allowed_mods and mod != "__future__":
                bad(node, f"import from {'.' * node.level}{mod} is not allowed")
            for a in node.names:
                if a.name == "*" or a.name.startswith("_") and mod != "__future__":
                    bad(node, f"import of {mod}.{a.name} is not allowed")
                elif mod in ALLOWED_MODULES and a.name not in module_attributes(mod):
                    bad(node, f"import of {mod}.{a.name} is not allowed")
        elif isinstance(node, ast.Name):
            if node.id.startswith("__") and not (node.id in _ALLOWED_DUNDER_NAMES and isinstance(node.ctx, ast.Load)):
                bad(node, f"name {node.id} is not allowed")
            elif node.id in FORBIDDEN_BUILTINS:
                bad(node, f"{node.id} is not allowed")
            elif node.id == "type" and id(node) not in one_arg_type:
                bad(node, "type is allowed only as type(x)")
        elif isinstance(node, ast.Attribute):
            a = node.attr
            recv = node.value
            if isinstance(recv, ast.Name) and recv.id in aliases and not a.startswith("_") and a not in module_attributes(aliases[recv.id]):
                bad(node, f"{aliases[recv.id]}.{a} is not allowed")
            elif a.startswith("_"):
                bad(node, f"private attribute .{a} is not allowed")
            elif a.startswith(_FRAME_PREFIXES):
                bad(node, f"attribute .{a} (interpreter internals) is not allowed")
            elif a in FORBIDDEN_ATTRIBUTES:
                bad(node, f"attribute .{a} is not allowed")
            elif a == "format":
                recv = node.value
                if not (isinstance(recv, ast.Constant) and isinstance(recv.value, str) and _format_fields_safe(recv.value)):
                    bad(node, "str.format is allowed only on a literal without attribute or item fields")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name.startswith("__") and node.name not in _ALLOWED_DUNDER_DEFS:
                bad(node, f"defining {node.name} is not allowed")
            if isinstance(node, ast.ClassDef):
                if node.keywords:
                    bad(node, "class keywords (metaclass=...) are not allowed")
                for base in node.bases:
                    if isinstance(base, ast.Call):
                        f = base.func
                        if isinstance(f, ast.Name) and f.id == "type":
                            bad(node, "a class derived from type(...) is not allowed")
        elif isinstance(node, ast.arg):
            if node.arg.startswith("__"):
                bad(node, f"argument name {node.arg} is not allowed")
        elif isinstance(node, ast.keyword):
            if node.arg and node.arg.startswith("__"):
                bad(node, f"keyword {node.arg} is not allowed")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                if n.startswith("__"):
                    bad(node, f"name {n} is not allowed")
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "type" and len(node.args) != 1:
                bad(node, "type() with other than one argument is not allowed")
            elif isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "type" and (len(node.args) != 1 or node.keywords):
                bad(node, "type(x)(...) is allowed only with one argument (type(type) builds classes)")
    return out
