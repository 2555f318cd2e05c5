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
* :func:`open_check` and :func:`library_use` are the permissive ``strict`` gate (issue 31), used when
  :data:`PERMISSIVE_STRICT` is on (the default: it follows the out-of-process library): ordinary
  Python allowed, only what leads out of the answer's own objects refused; safe only because NumPy
  is out of the answer's process.
"""
from __future__ import annotations

import ast
import builtins
import re
import string
from dataclasses import dataclass

from ..library.writer import STRICT_SERVER
from .parsing import parse

# THE switch (issue 31): the permissive gate (ordinary Python allowed; see strict_check) is safe only
# where the answer's process holds no NumPy, so it follows the library's own switch: on with the
# out-of-process library (the default), off with SE_GYM_STRICT_SERVER=0 (NumPy in the answer's
# process: the closed gate, which forbids much ordinary Python because every reflective route leads
# to it).  The harness's run-time wall reads ALLOWED_MODULES, FORBIDDEN_BUILTINS and
# module_attributes from here, so it follows the switch too (set_permissive changes all three).
PERMISSIVE_STRICT = STRICT_SERVER

# pure-Python or C modules that cannot reach NumPy, the file system or the process
CLOSED_MODULES = frozenset(
    {"math", "cmath", "itertools", "functools", "collections", "operator", "heapq", "bisect", "copy",
     "string", "typing", "fractions", "decimal", "statistics", "random", "re", "numbers", "enum"}
)
# the permissive gate's: the same, plus modules honest answers use to structure code; `sys` holds only
# SYS_READ_ONLY (module_attributes), and `__future__` lets `from __future__ import annotations` run
OPEN_MODULES = CLOSED_MODULES | {"dataclasses", "abc", "contextlib", "textwrap", "collections.abc", "sys", "__future__",
                                 "json", "pprint", "struct", "array", "hashlib", "warnings"}
# issue 42's honest forms, round 6 (permissive gate only): modules the strict harness WRITES itself
# (harness.__sg_virtual), each holding exactly these names and no function of the real module (whose
# globals hold os, sys and the process): os and os.path's string functions and constants, a virtual
# clock (the same readings in both runs of the dependence check) and datetime's classes reading it, loggers
# that record nothing, and traceback's formatting of the exception alone (no frames: they lead to the harness's)
VIRTUAL_MODULES = {
    "os": frozenset({"path", "sep", "altsep", "extsep", "pathsep", "linesep", "curdir", "pardir", "devnull", "name",
                     "getenv", "cpu_count"}),
    "os.path": frozenset({"join", "split", "basename", "dirname", "splitext", "isabs", "normcase", "normpath",
                          "commonprefix", "sep", "extsep", "curdir", "pardir"}),
    "time": frozenset({"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time",
                       "process_time_ns", "sleep"}),
    "logging": frozenset({"getLogger", "basicConfig", "debug", "info", "warning", "warn", "error", "exception", "critical",
                          "fatal", "log", "disable", "captureWarnings", "Logger", "Handler", "NullHandler", "StreamHandler", "Formatter",
                          "NOTSET", "DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL"}),
    "traceback": frozenset({"format_exc", "print_exc", "format_exception", "format_exception_only", "print_exception"}),
    "datetime": frozenset({"date", "datetime", "time", "timedelta", "timezone", "tzinfo", "MINYEAR", "MAXYEAR", "UTC"}),
}
# why the rest of each is refused (the gate's message names it)
VIRTUAL_WHY = {
    "os": "strict's os holds path, its separators, getenv (an empty environment) and cpu_count: no process, file or environment",
    "os.path": "strict's os.path holds the string functions only: nothing that looks at the file system",
    "time": "strict's time is a virtual clock (time, perf_counter, monotonic, process_time, their _ns, sleep): "
            "the same readings in every run, so none tells the dependence check's two runs apart",
    "logging": "strict's logging records nothing: loggers, levels and handlers without files or threads",
    "traceback": "strict's traceback formats the exception alone: frames lead to the harness's",
    "datetime": "strict's datetime holds the date, time and timedelta classes, their now() and today() on the virtual clock",
}
# real modules with a fixed allow-list (C types that reach nothing; types' others build code or classes)
FIXED_ATTRIBUTES = {"types": frozenset({"SimpleNamespace", "MappingProxyType", "NoneType", "EllipsisType", "NotImplementedType"})}
# sys's streams: the harness's write-only ones (as print writes: output is not scored)
SYS_STREAMS = frozenset({"stdout", "stderr"})
OPEN_MODULES = OPEN_MODULES | set(VIRTUAL_MODULES) | set(FIXED_ATTRIBUTES)
# modules an honest answer may reach for that stay refused, and why (the gate's message says it)
REFUSED_WHY = {
    "inspect": "reflection: it reads frames, code objects and any object's members",
    "pathlib": "its paths open, list and stat files (os.path's string functions are allowed)",
    "subprocess": "it starts processes", "importlib": "it loads modules past the allow-list", "ctypes": "it reads memory",
    "threading": "threads would run beside the harness", "asyncio": "an event loop runs threads and sockets",
    "weakref": "its callbacks run after the cases", "gc": "it walks every object", "shutil": "it copies and removes files",
    "tempfile": "it makes files", "glob": "it lists files", "io": "it opens files", "socket": "it reaches the network",
    "builtins": "it holds __import__, exec and open", "signal": "a handler is handed the harness's frames",
    "pickle": "loading runs code", "marshal": "it makes code objects", "numpy": "the task is to use the library, not NumPy",
    "logging.handlers": "its handlers write files, sockets and mail (strict's logging records nothing)",
}
# the reason for any other module
OTHER_WHY = "strict allows the library and pure standard modules (computation only: no files, processes, network or reflection)"
SYS_READ_ONLY = frozenset({"maxsize", "float_info", "int_info", "hash_info", "version_info", "hexversion", "byteorder",
                           "maxunicode", "float_repr_style", "getrecursionlimit", "getsizeof"})
# what an answer may also take from `sys` under the permissive gate: the strict harness hands it out
# bounded (setrecursionlimit: at most harness.RECURSION_MAX; issue 42)
SYS_BOUNDED = frozenset({"setrecursionlimit"})
CLOSED_BUILTINS = frozenset(
    {"exec", "eval", "compile", "open", "getattr", "setattr", "delattr", "vars", "globals", "locals",
     "breakpoint", "input", "help", "memoryview", "importlib", "__import__", "classmethod", "staticmethod",
     "property", "super", "object"}
)
# the permissive gate's: code from strings, files, the namespaces' dicts, the debugger and stdin
OPEN_BUILTINS = frozenset(
    {"exec", "eval", "compile", "open", "vars", "globals", "locals", "breakpoint", "input", "help", "memoryview",
     "importlib", "__import__", "exit", "quit"}
)
ALLOWED_MODULES = OPEN_MODULES if PERMISSIVE_STRICT else CLOSED_MODULES
FORBIDDEN_BUILTINS = OPEN_BUILTINS if PERMISSIVE_STRICT else CLOSED_BUILTINS


def set_permissive(on: bool) -> None:
    """Set the switch and the run-time lists it selects, in this process (for a program that
    changes ``writer.STRICT_SERVER`` after import, as benchmarks/library_server.py does: the gate
    must follow where the library lives).

    Args:
        on: the permissive gate (the library out of process) or the closed one."""
    global PERMISSIVE_STRICT, ALLOWED_MODULES, FORBIDDEN_BUILTINS
    PERMISSIVE_STRICT = bool(on)
    ALLOWED_MODULES = OPEN_MODULES if on else CLOSED_MODULES
    FORBIDDEN_BUILTINS = OPEN_BUILTINS if on else CLOSED_BUILTINS
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


# reflection by string and the interpreter's internals: refused by the permissive gate too (a subset
# of FORBIDDEN_ATTRIBUTES: attrgetter, format_map, mro... are ordinary Python there)
OPEN_FORBIDDEN_ATTRIBUTES = frozenset(
    {"get_type_hints", "ForwardRef", "Formatter", "modules", "system", "popen", "environ", "load_module", "exec_module",
     "get_field", "vformat", "eval", "exec", "vars", "globals", "locals", "breakpoint", "input", "open", "builtins",
     "bltns", "sys", "types", "copyreg", "meta_path", "path_hooks", "path_importer_cache", "settrace", "setprofile",
     "gettrace", "getprofile", "get_objects", "get_referrers", "get_referents", "addaudithook", "loader", "spec",
     "get_source", "get_code", "find_spec", "dispatch_table", "getframe", "_getframe", "_current_frames",
     "_current_exceptions", "_getframemodulename", "currentframe", "FunctionType", "CodeType", "new_class",
     "make_dataclass", "methodcaller", "global_enum", "global_enum_repr", "global_str", "global_flag_repr"}
)
# attributes that lead out of an object to a namespace, a frame, code, every class, or a module
# (``print.__self__`` is builtins), and NumPy's protocol hooks: refused as attributes, as names, as
# keywords and class-pattern keywords, and inside string literals (getattr(f, "__globals__"),
# attrgetter, functools.update_wrapper's ``assigned``, "{0.__globals__}".format, type(...)'s dict)
DANGEROUS_DUNDERS = frozenset(
    {"__globals__", "__builtins__", "__code__", "__closure__", "__subclasses__", "__bases__", "__base__", "__mro__",
     "__dict__", "__import__", "__loader__", "__spec__", "__getattribute__", "__reduce__", "__reduce_ex__", "__self__",
     "__func__", "__wrapped__", "__defaults__", "__kwdefaults__", "__objclass__", "__traceback__", "__file__",
     "__path__", "__cached__", "__weakref__", "__subclasshook__", "__build_class__", "__annotate__"}
)
HOOK_PREFIXES = ("__array", "__dlpack")
FRAME_ATTRIBUTES = frozenset(
    {"ag_await", "ag_code", "ag_frame", "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name",
     "co_qualname", "co_lines", "co_positions", "co_linetable", "co_cellvars", "co_freevars", "cr_await", "cr_code",
     "cr_frame", "cr_origin", "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "gi_code", "gi_frame",
     "gi_yieldfrom", "tb_frame", "tb_next"}
)

_MODULE_ATTRS: dict[tuple[str, bool], frozenset[str]] = {}


def module_attributes(name: str, permissive: bool | None = None) -> frozenset[str]:
    """The allow-list of an allowed module (``strict``): its public names, minus those bound to
    modules outside the allowed ones (``enum.bltns``, ``typing.sys``...), to the forbidden
    builtins, or in the forbidden attributes.  Worked out once from the module itself, so a
    name a new Python adds is judged by what it is, not missed by a list.

    Args:
        name: the module's name.
        permissive: the permissive gate's list (None: :data:`PERMISSIVE_STRICT`); there ``sys``
            holds :data:`SYS_READ_ONLY` only, and ``abc.ABCMeta`` is kept (for ``metaclass=``).

    Returns:
        The names an answer may take from the module."""
    permissive = PERMISSIVE_STRICT if permissive is None else permissive
    if permissive and name in VIRTUAL_MODULES:
        return VIRTUAL_MODULES[name]
    if permissive and name in FIXED_ATTRIBUTES:
        return FIXED_ATTRIBUTES[name]
    got = _MODULE_ATTRS.get((name, permissive))
    if got is None:
        import builtins
        import importlib
        import types

        mods = OPEN_MODULES if permissive else CLOSED_MODULES
        refused = OPEN_FORBIDDEN_ATTRIBUTES if permissive else FORBIDDEN_ATTRIBUTES
        names = OPEN_BUILTINS | {"getattr", "setattr", "delattr"} if permissive else CLOSED_BUILTINS
        banned = {id(getattr(builtins, n)) for n in names if hasattr(builtins, n)}
        try:
            mod = importlib.import_module(name)
        except ImportError:
            mod = None
        out = set()
        for attr in dir(mod) if mod is not None else ():
            if attr.startswith("_") or attr in refused:
                continue
            v = getattr(mod, attr, None)
            if isinstance(v, types.ModuleType) and v.__name__ not in mods | {"collections.abc"}:
                continue
            if id(v) in banned or isinstance(v, type) and issubclass(v, type) and not (permissive and attr == "ABCMeta"):
                continue  # eval/exec/getattr... and metaclasses (they build classes with hooks)
            out.add(attr)
        if permissive and name == "sys":
            out &= SYS_READ_ONLY | SYS_BOUNDED | SYS_STREAMS
        got = _MODULE_ATTRS[(name, permissive)] = frozenset(out)
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


def _parsed(code: str):
    """The syntax tree of ``code``, or the one violation saying why there is none."""
    try:
        return parse(code)
    except SyntaxError as exc:
        return [Violation(exc.lineno or 0, f"syntax error: {exc.msg}")]
    except (ValueError, RecursionError, MemoryError) as exc:
        return [Violation(0, f"unparsable code: {exc}")]


def strict_check(code: str, package: str, linalg: str, permissive: bool | None = None) -> list[Violation]:
    """Everything the ``strict`` profile refuses in the answer's code.

    Args:
        code: the answer's code.
        package: the library's package name; linalg: its linear-algebra submodule.
        permissive: the permissive gate (:func:`open_check`) or the closed one; None:
            :data:`PERMISSIVE_STRICT`.

    Returns:
        The violations, in the order found (empty: allowed)."""
    if PERMISSIVE_STRICT if permissive is None else permissive:
        return open_check(code, package)
    tree = _parsed(code)
    if type(tree) is list:
        return tree
    allowed_mods = CLOSED_MODULES | {package, f"{package}.{linalg}"}
    out: list[Violation] = []

    def bad(node: ast.AST, what: str) -> None:
        out.append(Violation(getattr(node, "lineno", 0), what))

    # names bound to an allowed module by `import M [as N]`: their attributes are checked against
    # the module's allow-list (see module_attributes), as are the names of `from M import ...`
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in CLOSED_MODULES:
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
                elif mod in CLOSED_MODULES and a.name not in module_attributes(mod, False):
                    bad(node, f"import of {mod}.{a.name} is not allowed")
        elif isinstance(node, ast.Name):
            if node.id.startswith("__") and not (node.id in _ALLOWED_DUNDER_NAMES and isinstance(node.ctx, ast.Load)):
                bad(node, f"name {node.id} is not allowed")
            elif node.id in CLOSED_BUILTINS:
                bad(node, f"{node.id} is not allowed")
            elif node.id == "type" and id(node) not in one_arg_type:
                bad(node, "type is allowed only as type(x)")
        elif isinstance(node, ast.Attribute):
            a = node.attr
            recv = node.value
            if isinstance(recv, ast.Name) and recv.id in aliases and not a.startswith("_") and a not in module_attributes(aliases[recv.id], False):
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


# -- the permissive strict gate (PERMISSIVE_STRICT) -----------------------------------------------
_WORD = re.compile(r"\w+")
# the builtin classes: `type(int)(...)` is `type(...)`, the class builder
_BUILTIN_CLASSES = frozenset(n for n in dir(builtins) if isinstance(getattr(builtins, n), type))


def _dangerous_name(name: str) -> bool:
    """A dunder, hook or frame/code name no honest answer needs (attribute, name or string word)."""
    return name in DANGEROUS_DUNDERS or name.startswith(HOOK_PREFIXES) or name in FRAME_ATTRIBUTES


def _why(mod: str, part: bool = False) -> str:
    """Why a module (or, ``part``, one of its names) is refused: a clause for the gate's message."""
    why = VIRTUAL_WHY.get(mod) if part else REFUSED_WHY.get(mod) or REFUSED_WHY.get(mod.partition(".")[0]) or OTHER_WHY
    if part and why is None and mod == "sys":
        why = "strict's sys holds its read-only values, a bounded setrecursionlimit and write-only stdout and stderr"
    return f": {why}" if why else ""


def _module_of(node: ast.AST, modules: dict[str, str]) -> str | None:
    """The allowed module a receiver names: ``m`` bound by an import, or ``m.sub`` (``os.path``) on it."""
    if isinstance(node, ast.Name):
        return modules.get(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
        sub = f"{modules[node.value.id]}.{node.attr}"
        return sub if sub in OPEN_MODULES else None
    return None


def open_check(code: str, package: str) -> list[Violation]:
    """The permissive ``strict`` gate: what the task needs, and ordinary Python besides.

    Refused: imports outside :data:`OPEN_MODULES` and the library (``import PKG.sub as la`` is
    fine), a module's names outside its allow-list (:func:`module_attributes`), a module other
    than the library used as a value (``getattr(mod, name)`` would read past the allow-list), code
    from strings, files and namespaces (:data:`OPEN_BUILTINS`), the attributes that lead to
    namespaces, frames, code, every class or NumPy's hooks (:data:`DANGEROUS_DUNDERS`,
    :data:`FRAME_ATTRIBUTES`, :data:`OPEN_FORBIDDEN_ATTRIBUTES`) wherever they are named: as
    attributes, names, definitions, keywords, class-pattern keywords, or words of a string literal;
    classes built by metaclasses (``metaclass=`` other than ``ABCMeta``, ``type`` as a base or
    called with other than one argument).  Allowed: classes, decorators, dunder methods,
    dataclasses, typing, ``getattr``/``setattr`` (a literal name is checked), ``super()``,
    ``object``, private attributes, ``sys``'s read-only values, ``str.format`` templates.

    This gate is safe only where the answer's process holds no NumPy: a name built at run time
    (``getattr(f, "__glo" + "bals__")``) passes it, and then nothing in the process must be worth
    reaching (see docs/security.md).

    Args:
        code: the answer's code.
        package: the library's package name.

    Returns:
        The violations (empty: allowed)."""
    tree = _parsed(code)
    if type(tree) is list:
        return tree
    out: list[Violation] = []

    def bad(node: ast.AST, what: str) -> None:
        out.append(Violation(getattr(node, "lineno", 0), what))

    def library(mod: str) -> bool:
        return mod == package or mod.startswith(package + ".")

    def attribute(node: ast.AST, a: str, where: str = "attribute") -> None:
        if _dangerous_name(a) or a in OPEN_FORBIDDEN_ATTRIBUTES:
            bad(node, f"{where} {a} is not allowed")

    # names bound to a module other than the library: usable only as `name.attr`, attr on its list
    modules: dict[str, str] = {}
    nodes = list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if not library(a.name):
                    modules[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not library(node.module):
            for a in node.names:
                if f"{node.module}.{a.name}" in OPEN_MODULES:
                    modules[a.asname or a.name] = f"{node.module}.{a.name}"
    receivers = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
    one_arg_type = {id(n.func) for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id == "type" and len(n.args) == 1 and not n.keywords}
    for node in nodes:
        t = type(node)
        if t is ast.Import:
            for a in node.names:
                if not (library(a.name) or a.name in OPEN_MODULES):
                    bad(node, f"import of {a.name} is not allowed{_why(a.name)}")
        elif t is ast.ImportFrom:
            mod = node.module or ""
            if node.level or not (library(mod) or mod in OPEN_MODULES):
                bad(node, f"import from {'.' * node.level}{mod} is not allowed{'' if node.level else _why(mod)}")
                continue
            for a in node.names:
                if a.name == "*" and library(mod):
                    continue  # the library's public names: what `PKG.name` reaches anyway
                if a.name == "*" or a.name.startswith("_") and mod != "__future__":
                    bad(node, f"import of {mod}.{a.name} is not allowed")
                elif mod in OPEN_MODULES and f"{mod}.{a.name}" not in OPEN_MODULES and a.name not in module_attributes(mod, True):
                    bad(node, f"import of {mod}.{a.name} is not allowed{_why(mod, True)}")
        elif t is ast.Name:
            n = node.id
            if n in OPEN_BUILTINS or _dangerous_name(n):
                bad(node, f"{n} is not allowed")
            elif n in modules and id(node) not in receivers:
                bad(node, f"module {modules[n]} used as a value (only its attributes may be)")
            elif n == "type" and id(node) not in one_arg_type:
                bad(node, "type is allowed only as type(x)")
        elif t is ast.Attribute:
            mod = _module_of(node.value, modules)
            if mod is not None:
                if f"{mod}.{node.attr}" not in OPEN_MODULES and node.attr not in module_attributes(mod, True):
                    bad(node, f"{mod}.{node.attr} is not allowed{_why(mod, True)}")
                    continue
                if mod in VIRTUAL_MODULES:
                    continue  # (the harness's own object: logging.Formatter is not string.Formatter)
            attribute(node, node.attr)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            if _dangerous_name(node.name):
                bad(node, f"defining {node.name} is not allowed")
            if t is ast.ClassDef:
                for k in node.keywords:
                    v = k.value
                    abcmeta = (isinstance(v, ast.Name) and v.id == "ABCMeta"
                               or isinstance(v, ast.Attribute) and v.attr == "ABCMeta" and modules.get(getattr(v.value, "id", "")) == "abc")
                    if k.arg == "metaclass" and not abcmeta or k.arg != "metaclass" and not isinstance(v, ast.Constant):
                        bad(node, "class keywords other than metaclass=ABCMeta and constants are not allowed")
                for base in node.bases:
                    f = base.func if isinstance(base, ast.Call) else base
                    if isinstance(f, ast.Name) and f.id == "type" or isinstance(f, ast.Attribute) and f.attr == "ABCMeta":
                        bad(node, "a metaclass (a class derived from type) is not allowed")
        elif t is ast.arg:
            if _dangerous_name(node.arg):
                bad(node, f"argument name {node.arg} is not allowed")
        elif t is ast.keyword:
            if node.arg and _dangerous_name(node.arg):
                bad(node, f"keyword {node.arg} is not allowed")
        elif t is ast.MatchClass:
            for a in node.kwd_attrs:  # `case C(__globals__=g)` reads the attribute by its name
                attribute(node, a, "class-pattern keyword")
        elif t is ast.alias:
            if node.asname and _dangerous_name(node.asname):
                bad(node, f"name {node.asname} is not allowed")
        elif t in (ast.Global, ast.Nonlocal):
            for n in node.names:
                if _dangerous_name(n):
                    bad(node, f"name {n} is not allowed")
        elif t is ast.Constant and isinstance(node.value, str):
            for w in _WORD.findall(node.value):
                if _dangerous_name(w):
                    bad(node, f"the string names {w}, which is not allowed")
                    break
        elif t is ast.Call:
            f = node.func
            if isinstance(f, ast.Name) and f.id == "type" and len(node.args) != 1:
                bad(node, "type() with other than one argument is not allowed")
            elif (isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "type" and f.args
                  and (isinstance(f.args[0], ast.Call) or isinstance(f.args[0], ast.Name) and f.args[0].id in _BUILTIN_CLASSES)):
                bad(node, "type(<a class>)(...) builds classes: not allowed")
    return out


def _main_guard(node: ast.AST) -> bool:
    """``if __name__ == "__main__":`` (either order) at the module's top level."""
    if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1
            and isinstance(node.test.ops[0], ast.Eq)):
        return False
    sides = (node.test.left, node.test.comparators[0])
    return (any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
            and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides))


def _first_line(node: ast.stmt) -> int:
    """A statement's first line, its decorators' included."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])


def _bound(node: ast.stmt) -> set[str]:
    """The names a top-level import, class or function definition binds."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.split(".")[0] for a in node.names}
    return {node.name}


def without_refused_demo(code: str, package: str, refused: list[Violation], entry: str) -> str | None:
    """``code`` with what the permissive gate refuses skipped, where all of it is demo code: the
    body of a top-level ``if __name__ == "__main__":`` block, top-level classes and functions that
    hold refused code and whose names nothing else uses (a ``unittest.TestCase`` class), and the
    imports only such code uses (``import argparse`` for the block; an import nothing uses stays
    refused).  Each is replaced by ``pass`` (line numbers kept), so it never runs; the result is
    gated again and is what runs (honest forms, round 7: an answer's self-test with ``doctest``,
    ``unittest``, ``argparse``, ``sys.argv`` or ``sys.stdin`` was ``forbidden``).  None: something refused lies elsewhere (the verdict stays
    ``forbidden``), or the result would still be refused.

    Args:
        code: the answer's code.
        package: the library's package name.
        refused: :func:`open_check`'s violations of ``code``.
        entry: the entry function (never skipped: refused there, the answer stays ``forbidden``)."""
    tree = _parsed(code)
    if type(tree) is list or not refused:
        return None
    spans: list[tuple[int, int, int, int]] = []  # (line, col, end line, end col) replaced by `pass`
    blocks = [n for n in tree.body if _main_guard(n)]
    for n in blocks:
        spans.append((n.body[0].lineno, n.body[0].col_offset, n.body[-1].end_lineno, n.body[-1].end_col_offset))
    refused_lines = {v.line for v in refused}
    dead = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    top = [n for n in tree.body if isinstance(n, dead) and entry not in _bound(n) and "*" not in _bound(n)]
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    declared = {entry} | {name for n in ast.walk(tree) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}

    def span(n: ast.stmt) -> tuple[int, int]:
        return _first_line(n), n.end_lineno

    def uses(where: list[tuple[int, int]], outside: bool) -> set[str]:
        return {n.id for n in names if any(a <= n.lineno <= b for a, b in where) != outside}

    blocks_at = [(s[0], s[2]) for s in spans]
    dead_set = list(top)
    while True:  # the largest set of definitions nothing else uses (a test class and its `import unittest`)
        used = declared | uses(blocks_at + [span(n) for n in dead_set], outside=True)
        keep = [n for n in dead_set if not _bound(n) & used]
        if len(keep) == len(dead_set):
            break
        dead_set = keep
    skipped = [n for n in dead_set if any(_first_line(n) <= line <= n.end_lineno for line in refused_lines)]
    while True:  # ... of those, the refused ones and what uses what they bind
        freed = set().union(*(_bound(n) for n in skipped)) if skipped else set()
        more = [n for n in dead_set if n not in skipped and uses([span(n)], outside=False) & freed]
        if not more:
            break
        skipped += more
    # an import is skipped only where demo code uses it: an import nothing uses stays refused (its message says why)
    demo = blocks_at + [span(n) for n in skipped if not isinstance(n, (ast.Import, ast.ImportFrom))]
    skipped = [n for n in skipped if not isinstance(n, (ast.Import, ast.ImportFrom)) or _bound(n) & uses(demo, outside=False)]
    spans += [(_first_line(n), n.col_offset, n.end_lineno, n.end_col_offset) for n in skipped]
    covered = [(s[0], s[2]) for s in spans]
    if not all(any(a <= line <= b for a, b in covered) for line in refused_lines):
        return None
    lines = code.encode().splitlines(keepends=True)  # (the tree's columns count UTF-8 bytes)
    for line, col, end, end_col in sorted(spans, reverse=True):
        head, tail = lines[line - 1][:col], lines[end - 1][end_col:]
        lines[line - 1:end] = [head + b"pass" + b"\n" * (end - line) + tail]
    out = b"".join(lines).decode()
    return out if not open_check(out, package) else None


def _library_getattr(n: ast.Call, lib_names: set[str]) -> bool:
    """``getattr(PKG..., "name"[, default])``: a library attribute taken by a literal name."""
    f = n.func
    if not (isinstance(f, ast.Name) and f.id == "getattr" and len(n.args) in (2, 3) and not n.keywords):
        return False
    root = n.args[0]
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in lib_names and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str)


def star_names(library) -> frozenset[str]:
    """What ``from PKG import *`` binds in an answer: the library's top-level functions and its
    linear-algebra submodule (the client's public names).

    Args:
        library: a :class:`se_gym.library.Library`.

    Returns:
        The names."""
    return frozenset(v for k, v in library.names.items() if "." not in k) | {library.linalg}


def library_use(tree: ast.AST, entry: str, package: str, array_ctor: str | None = None,
                star_names: frozenset[str] | set[str] = frozenset()) -> str:
    """The permissive strict gate's rule for using the library, in place of the official one: the
    entry function exists and returns a value, and the library is named in code reachable from it
    (its body, and the module-level functions, classes and assignments it names, transitively).
    So a helper, a method or ``import PKG.sub as la`` may make the call.  As officially, one call
    to the array constructor alone is not a use (it computes nothing).

    Args:
        tree: the parsed answer.
        entry: the entry function's name.
        package: the library's package name.
        array_ctor: the array constructor's name (None: not checked).
        star_names: the names ``from PKG import *`` binds (the library's functions and submodule).

    Returns:
        "" when the rule holds, else why not (one line)."""
    body = getattr(tree, "body", [])
    defs: dict[str, list[ast.AST]] = {}
    lib_names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for tgt in targets:
                for n in ast.walk(tgt):
                    if isinstance(n, ast.Name):
                        defs.setdefault(n.id, []).append(node)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == package or a.name.startswith(package + "."):
                    lib_names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and (node.module == package or node.module.startswith(package + ".")):
            lib_names.update(a.asname or a.name for a in node.names if a.name != "*")
            if any(a.name == "*" for a in node.names):
                lib_names.update(star_names)  # `from PKG import *`: the library's own names, as bound
    fn = next((n for n in body if isinstance(n, ast.FunctionDef) and n.name == entry), None)
    if fn is None:
        return f"entry function {entry or '(none)'} not found"
    if not any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fn)):
        return f"the entry function {entry} returns no value"
    seen: set[int] = set()
    todo: list[ast.AST] = [fn]
    named, calls = False, []
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                named = named or n.id in lib_names
                todo.extend(defs.get(n.id, ()))
            elif isinstance(n, ast.Call):
                root = n.func
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in lib_names:
                    calls.append(_call_name(n.func))
                elif _library_getattr(n, lib_names):
                    # getattr(PKG, "name"): the library's function taken by its name (issue 42)
                    calls.append(f"{_call_name(n.args[0])}.{n.args[1].value}")
    if not named:
        return f"the entry function {entry} does not use {package}, directly or through the code it names"
    if array_ctor and len(calls) == 1 and array_ctor.lower() in calls[0].lower():
        return f"the only {package} call of {entry} is the array constructor"
    return ""
