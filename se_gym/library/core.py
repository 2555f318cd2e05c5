"""The Library record, the minter, the official mapping, and writing a library to disk."""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from . import naming
from .catalogue import KEYS, entry

# the writer is the lower module (it never imports this one): the record calls down into it
from .writer import LibraryError, cached_package, write_package

# NumPy's constants, as the values a translation writes in their place
_CONSTANTS = {"pi": repr(math.pi), "e": repr(math.e), "inf": 'float("inf")', "nan": 'float("nan")', "newaxis": "None",
              "euler_gamma": "0.5772156649015329"}


# what a translation calls in place of NumPy's ``X.tolist()``: nested lists of plain Python numbers
# (NumPy's float64 is a float, and prints as one only once it is made one), read back from each
# element's print where it is none (the library's scalars print as NumPy's do)
TOLIST = """

def _se_gym_tolist(value):
    for kind in (bool, int, float, complex, str):
        if isinstance(value, kind):
            return kind(value)
    try:
        items = list(value)
    except TypeError:
        text = str(value)
        if text in ("True", "False"):
            return text == "True"
        for cast in (int, float, complex):
            try:
                return cast(text)
            except ValueError:
                pass
        return value
    return [_se_gym_tolist(v) for v in items]
"""


# methods of NumPy's arrays that the library's array refuses, and the NumPy function that does the same
# work with the array as its first argument (``reshape`` and ``transpose`` take their dimensions loose)
_METHODS = {"astype": "astype", "flatten": "ravel", "ravel": "ravel", "reshape": "reshape", "transpose": "transpose",
            "sum": "sum", "mean": "mean", "max": "max", "min": "min", "std": "std", "var": "var", "prod": "prod",
            "cumsum": "cumsum", "cumprod": "cumprod", "argmax": "argmax", "argmin": "argmin", "argsort": "argsort",
            "dot": "dot", "clip": "clip", "round": "round", "any": "any", "all": "all", "nonzero": "nonzero",
            "trace": "trace", "diagonal": "diagonal", "squeeze": "squeeze", "repeat": "repeat",
            "swapaxes": "swapaxes", "conj": "conj", "take": "take"}
_LOOSE = frozenset({"reshape", "transpose"})
# operators the library's array lacks, as the ufuncs NumPy's array runs for them
_BINARY = {ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor", ast.MatMult: "matmul"}
_UNARY = {ast.Invert: "invert", ast.USub: "negative"}
_CASTS = frozenset({"float", "int", "complex", "bool"})
# NumPy's scalar types, written as a dtype argument (``dtype=np.uint16``): their names
_DTYPES = frozenset({"bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "uintp",
                     "float16", "float32", "float64", "complex64", "complex128", "int_", "float_", "complex_"})


def _array_forms(code: str, package: str, mapping: Mapping[str, str]) -> str:
    """What NumPy's array does and the library's refuses, written with the library's functions.

    ``X.tolist()`` becomes ``_se_gym_tolist(X)`` (appended: :data:`TOLIST`).  Where ``X`` is an array
    (a library call's result, a name only ever bound to one, an expression over them: a syntactic
    guess, so that a Python number keeps its operators), ``X.reshape(2, 3)`` becomes the library's
    ``reshape(X, (2, 3))`` (the methods of :data:`_METHODS`), ``a & b``, ``a | b``, ``a ^ b``, ``a @ b``,
    ``~a`` and ``-a`` their ufuncs, and ``float(X)`` (``int``...) of an array bound to a name a conversion
    of ``_se_gym_tolist(X)``.
    Code that does not parse is returned as it is; so is code with nothing to change."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code

    def fn(np_name: str) -> ast.expr | None:
        q = mapping.get("np." + np_name)
        return ast.parse(q, mode="eval").body if q else None

    def qualified(node: ast.AST) -> bool:  # zwc.f or zwc.linalg.f
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id == package

    arrays: set[str] = set()

    def is_array(node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            f = node.func
            if qualified(f):
                return True
            return isinstance(f, ast.Attribute) and f.attr in _METHODS and is_array(f.value)
        if isinstance(node, ast.Name):
            return node.id in arrays
        if isinstance(node, ast.Subscript):
            return is_array(node.value)
        if isinstance(node, ast.Attribute):
            return node.attr == "T" and is_array(node.value)
        if isinstance(node, ast.BinOp):
            return is_array(node.left) or is_array(node.right)
        if isinstance(node, ast.UnaryOp):
            return is_array(node.operand)
        if isinstance(node, ast.Compare):
            return is_array(node.left) or any(is_array(c) for c in node.comparators)
        return False

    # names bound only by plain assignments, each of an array (a loop's or a tuple's target is not)
    bound: dict[str, list] = {}

    def bind(target: ast.AST, value: ast.AST | None, unpacked: tuple = (ast.Tuple, ast.List)) -> None:
        if isinstance(target, ast.Name):
            bound.setdefault(target.id, []).append(value)
        elif isinstance(target, unpacked):
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    bound.setdefault(n.id, []).append(None)

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                bind(t, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            bind(node.target, node.value)
        elif isinstance(node, (ast.For, ast.comprehension)):
            bind(node.target, None, ast.AST)  # (every name in a loop's target)
    changed = True
    while changed:
        changed = False
        for name, values in bound.items():
            if name not in arrays and all(v is not None and is_array(v) for v in values):
                arrays.add(name)
                changed = True
    uses_tolist = rewritten = False

    class Forms(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            nonlocal uses_tolist, rewritten
            array_call = is_array(node.func.value) if isinstance(node.func, ast.Attribute) else False
            # (a name bound to an array only: ``int(zwc.sum(x))`` or ``int(p[k])`` casts a NumPy scalar, which runs)
            cast = (isinstance(node.func, ast.Name) and node.func.id in _CASTS and len(node.args) == 1
                    and isinstance(node.args[0], ast.Name) and is_array(node.args[0]))
            self.generic_visit(node)
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "tolist" and not node.args and not node.keywords:
                uses_tolist = rewritten = True
                return ast.Call(ast.Name("_se_gym_tolist", ast.Load()), [f.value], [])
            if cast:
                uses_tolist = rewritten = True
                node.args = [ast.Call(ast.Name("_se_gym_tolist", ast.Load()), node.args, [])]
                return node
            if array_call and isinstance(f, ast.Attribute) and f.attr in _METHODS and (g := fn(_METHODS[f.attr])) is not None:
                args = list(node.args)
                if f.attr in _LOOSE and len(args) > 1 and not any(isinstance(a, ast.Starred) for a in args):
                    args = [ast.Tuple(args, ast.Load())]
                rewritten = True
                return ast.Call(g, [f.value, *args], node.keywords)
            return node

        def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
            nonlocal rewritten
            array = is_array(node)  # (before the operands are rewritten: is_array knows the NumPy forms)
            self.generic_visit(node)
            if array and type(node.op) in _BINARY and (g := fn(_BINARY[type(node.op)])) is not None:
                rewritten = True
                return ast.Call(g, [node.left, node.right], [])
            return node

        def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
            nonlocal rewritten
            array = is_array(node.operand)
            self.generic_visit(node)
            if array and type(node.op) in _UNARY and (g := fn(_UNARY[type(node.op)])) is not None:
                rewritten = True
                return ast.Call(g, [node.operand], [])
            return node

    tree = Forms().visit(tree)
    if not rewritten:
        return code
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n" + (TOLIST if uses_tolist else "")


def _numpy_aliases(code: str) -> str:
    """``import numpy as xp`` and ``import numpy.linalg as la`` written as ``np`` and ``np.linalg``
    (their uses ``xp.f``, ``la.f`` too), so the rest of the translation sees them (honest forms,
    round 10: they were left untranslated).  Code without them is returned as it is."""
    for alias in re.findall(r"^[ \t]*import\s+numpy\s+as\s+([A-Za-z_]\w*)\s*$", code, re.M):
        if alias != "np":
            code = re.sub(rf"^([ \t]*)import\s+numpy\s+as\s+{alias}\s*$", r"\1import numpy as np", code, flags=re.M)
            code = re.sub(rf"(?<![\w.]){alias}\.", "np.", code)
    for alias in re.findall(r"^[ \t]*import\s+numpy\.linalg\s+as\s+([A-Za-z_]\w*)\s*$", code, re.M):
        code = re.sub(rf"^([ \t]*)import\s+numpy\.linalg\s+as\s+{alias}\s*$", r"\1import numpy as np", code, flags=re.M)
        code = re.sub(rf"(?<![\w.]){alias}\.", "np.linalg.", code)
    return code


def _getattr_of(m: re.Match, mapping: Mapping[str, str]) -> str:
    """``getattr(np, "f")`` (or ``np.linalg``) written with the library's module and name."""
    path = "np." + (m.group(2)[1:] + "." if m.group(2) else "") + m.group(4)
    if path not in mapping:
        return m.group(0)
    module, _, name = mapping[path].rpartition(".")
    return f"getattr({module}, {m.group(3)}{name}{m.group(3)}{m.group(5)}"


def _without_from_numpy(code: str, package: str, mapping: Mapping[str, str]) -> str:
    """``from numpy[.linalg] import f [as g]``: the import dropped and each use of the name written
    as the library's qualified name (the official gate counts only calls through ``import PKG`` or
    ``from PKG import f``); names the library does not have keep their import."""
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module in ("numpy", "numpy.linalg"):
            prefix = "np." if node.module == "numpy" else "np.linalg."
            kept = []
            for a in node.names:
                if prefix + a.name in mapping:
                    names[a.asname or a.name] = mapping[prefix + a.name]
                else:
                    kept.append(a)
            node.names = kept
    if not names:
        return code

    class Uses(ast.NodeTransformer):
        def visit_ImportFrom(self, node: ast.ImportFrom) -> Any:
            return node if node.names else None

        def visit_Name(self, node: ast.Name) -> ast.AST:
            if isinstance(node.ctx, ast.Load) and node.id in names:
                return ast.copy_location(ast.parse(names[node.id], mode="eval").body, node)
            return node

    tree = Uses().visit(tree)
    if not any(isinstance(n, ast.Import) and any(a.name == package and not a.asname for a in n.names) for n in tree.body):
        # (after the ``from __future__`` imports, which must come first: honest forms, round 10)
        future = [i for i, n in enumerate(tree.body) if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
        tree.body.insert(future[-1] + 1 if future else 0, ast.Import(names=[ast.alias(name=package)]))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


@dataclass(frozen=True)
class Library:
    """An obfuscated library: which name stands for which NumPy function.

    Attributes:
        package: the package's name (``zwc``).
        linalg: the linalg submodule's name.
        array_type: the array class's name (``ZWCArray``).
        names: catalogue key (``"abs"``, ``"linalg.norm"``) -> the library's identifier (``"falekef"``);
            linalg entries live in the submodule ``linalg``.
        source: where it comes from (``seed:0`` or ``official:<path>``).
        official_docs: the official rewritten docs, key -> text (official libraries only).
    """

    package: str
    linalg: str
    array_type: str
    names: Mapping[str, str]
    source: str  # "seed:0" or "official:<path>"
    official_docs: Mapping[str, str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "names", MappingProxyType(dict(self.names)))

    # -- identity -------------------------------------------------------------------------
    @functools.cached_property
    def fingerprint(self) -> str:  # every env step's info names the library: compute once
        """A short hash of the names (every env step's info names the library)."""
        blob = json.dumps([self.package, self.linalg, self.array_type, sorted(self.names.items())])
        return hashlib.sha256(blob.encode()).hexdigest()[:10]

    @property
    def id(self) -> str:
        """A short stable identifier, e.g. ``seed0-3f9a0c21b4`` or ``official-6d1e...``."""
        kind = self.source.split(":", 1)[0]
        tag = f"seed{self.source.split(':', 1)[1]}" if kind == "seed" else kind
        return f"{tag}-{self.fingerprint}"

    # -- names ----------------------------------------------------------------------------
    def qualified(self, key: str) -> str:
        """``"abs"`` -> ``"zwc.falekef"``; ``"linalg.norm"`` -> ``"zwc.rfx.girayik"``.

        Args:
            key: the catalogue key.
        """
        e = entry(key)
        mid = f".{self.linalg}" if e.in_linalg else ""
        return f"{self.package}{mid}.{self.names[e.key]}"

    def numpy_mapping(self) -> dict[str, str]:
        """The official ``func_mapping`` form: ``{"np.abs": "zwc.falekef", ...}``."""
        return dict(self._numpy_mapping)

    @functools.cached_property
    def _numpy_mapping(self) -> dict[str, str]:  # translate() runs once per task: compute once
        return {entry(k).numpy_path: self.qualified(k) for k in self.names}

    def key_of(self, qualified_or_name: str) -> str:
        """Inverse of :meth:`qualified` (accepts ``zwc.rfx.x``, ``rfx.x`` or a bare name).

        Args:
            qualified_or_name: the library's name for a function.

        Raises:
            KeyError: not a name of this library.
        """
        name = qualified_or_name.rsplit(".", 1)[-1]
        for k, v in self.names.items():
            if v == name:
                return k
        raise KeyError(f"{qualified_or_name!r} is not a name of library {self.id}")

    def translate(self, numpy_code: str) -> str:
        """Mechanical translation of NumPy code to this library (``np.X`` -> library name).

        NumPy's constants become their values (the library has functions only), a scalar type given
        as a dtype its name, a name imported with ``from numpy[.linalg] import`` the library's
        qualified name, and what NumPy's array does and the library's refuses (``X.tolist()``, other
        methods, ``& | ^ @ ~ -``, ``float(X)``) the library's functions (see :func:`_array_forms`).

        Args:
            numpy_code: Python source written with NumPy (``import numpy as np``).

        Returns:
            The same program written with this library.
        """
        mapping = self._numpy_mapping

        def sub(m: re.Match) -> str:
            path = "np." + m.group(2)
            if path in mapping:
                return mapping[path]
            if m.group(2) == "ndarray":
                return f"{self.package}.{self.array_type}"
            if m.group(2) in _CONSTANTS:
                return _CONSTANTS[m.group(2)]
            if m.group(2) in _DTYPES and not m.string[m.end():].lstrip().startswith("("):
                return repr(m.group(2).rstrip("_"))  # dtype=np.uint16 -> dtype="uint16"
            return m.group(0)

        code = _numpy_aliases(numpy_code)
        code = re.sub(r"\bimport\s+numpy\s+as\s+np\b", f"import {self.package}", code)
        code = re.sub(r"\bgetattr\(\s*(np|numpy)((?:\.linalg)?)\s*,\s*(['\"])([A-Za-z_]\w*)\3\s*([,)])",
                      lambda m: _getattr_of(m, mapping), code)
        code = re.sub(r"\bimport\s+numpy\b(?!\.)", f"import {self.package}", code)
        code = re.sub(r"\b(np|numpy)\.((?:linalg\.)?[A-Za-z_]\w*)", sub, code)
        if re.search(r"^\s*from\s+numpy(\.linalg)?\s+import\b", code, re.M):
            code = _without_from_numpy(code, self.package, mapping)
        return _array_forms(code, self.package, mapping)

    # -- docs -----------------------------------------------------------------------------
    def doc(self, key: str) -> str:
        """The doc a model sees for one function (official text, or rewritten from NumPy's).

        Args:
            key: the catalogue key.
        """
        from .docs import rewrite_numpy_doc

        e = entry(key)
        if self.official_docs is not None and e.key in self.official_docs:
            return self.official_docs[e.key]
        made = self._docs_made
        if e.key not in made:
            made[e.key] = rewrite_numpy_doc(self, e.key)
        return made[e.key]

    @functools.cached_property
    def _docs_made(self) -> dict[str, str]:
        # rewriting NumPy's doc takes ~7 ms of regular expressions: an open-book prompt renders
        # the docs of its functions at every reset, so each is made once per library object
        return {}

    def docs(self) -> dict[str, str]:
        """Catalogue key -> the doc a model sees, for every function of the library."""
        return {k: self.doc(k) for k in self.names}

    # -- writing --------------------------------------------------------------------------
    def write(self, out_dir: str | os.PathLike, profile: str = "sebench", with_docs: bool = True) -> Path:
        """Write the importable package ``<out_dir>/<package>/`` and return ``out_dir``.

        ``out_dir`` must be absent, empty, or hold this same library (then it is rewritten).
        The package appears atomically: it is built in a temporary folder and renamed.

        Args:
            out_dir: the folder.
            profile: ``sebench`` or ``strict``.
            with_docs: give the functions their docstrings.
        """
        return write_package(self, Path(out_dir), profile, with_docs=with_docs)

    def materialize(self, profile: str = "sebench", docs: bool = True) -> Path:
        """Write the library once into the cache and return the folder to put on ``sys.path``.

        Args:
            profile: ``sebench`` or ``strict`` (the strict library refuses the ways around it).
            docs: give the functions their docstrings (False: the sandbox's copy, see ``se_gym.judge``).
        """
        return cached_package(self, profile, docs)

    def to_json(self) -> dict:
        """The library as JSON data (its id, names, source): what travels to other processes and nodes."""
        return {
            "id": self.id,
            "package": self.package,
            "linalg": self.linalg,
            "array_type": self.array_type,
            "source": self.source,
            "names": dict(self.names),
        }


def _check_identifier(what: str, value: str) -> str:
    if not isinstance(value, str) or not value.isidentifier() or value.startswith("_"):
        raise LibraryError(f"{what} must be a public Python identifier, got {value!r}")
    return value


def mint(
    seed: int,
    package: str | None = "zwc",
    linalg: str | None = None,
    array_type: str | None = None,
) -> Library:
    """A fresh library from ``seed``: every catalogue function gets a new pronounceable name.

    Deterministic across machines and Python versions.

    Args:
        seed: the seed.
        package: the package's name (None: minted from the seed too).
        linalg: the linalg submodule's name (None: minted from the seed).
        array_type: the array class's name (None: ``<PACKAGE>Array``, ``ZWCArray`` for ``zwc``).
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise LibraryError(f"seed must be a non-negative int, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise LibraryError(f"seed must be a non-negative int, got {seed}")
    forbidden = naming.forbidden_names()
    taken: set[str] = set()

    # three syllables and maybe a coda (6-7 letters, ~12M names): two seeds' libraries share
    # a name with probability ~0.7%
    def pick(key: str, syllables=(3, 3)) -> str:
        for attempt in range(10_000):
            name = naming.candidate(seed, key, attempt, syllables)
            if naming.allowed(name, taken, forbidden):
                taken.add(name)
                return name
        raise RuntimeError(f"could not mint a name for {key}")  # pragma: no cover

    package = _check_identifier("package", package) if package else pick("<package>", (1, 1))
    taken.add(package)
    if linalg:
        linalg = _check_identifier("linalg", linalg)
        taken.add(linalg)
    else:
        linalg = pick("<linalg>", (1, 1))
    array_type = _check_identifier("array_type", array_type or f"{package.upper()}Array")
    taken.add(array_type)
    names = {key: pick(key) for key in KEYS}
    return Library(package, linalg, array_type, names, source=f"seed:{seed}")


def official(path: str | os.PathLike) -> Library:
    """The exact SE-Bench library from its ``api_doc.jsonl`` (union of every ``func_mapping``).

    Args:
        path: the ``api_doc.jsonl`` file.
    """
    from ..jsonl import iter_jsonl

    path = Path(path)
    mapping: dict[str, str] = {}
    docs_by_name: dict[str, str] = {}
    for lineno, row in iter_jsonl(path, LibraryError, what="api_doc file"):
        where = f"{path}:{lineno}"
        for fld in ("curr_name", "func_mapping"):
            if fld not in row:
                raise LibraryError(f"{where}: missing field {fld!r}")
        try:
            fm = json.loads(row["func_mapping"]) if isinstance(row["func_mapping"], str) else row["func_mapping"]
        except json.JSONDecodeError as exc:
            raise LibraryError(f"{where}: field 'func_mapping' is not a JSON object ({exc.msg})") from None
        if not isinstance(fm, dict):
            raise LibraryError(f"{where}: field 'func_mapping' is not a JSON object")
        for np_name, lib_name in fm.items():
            if mapping.get(np_name, lib_name) != lib_name:
                raise LibraryError(f"{where}: field 'func_mapping' maps {np_name} to {lib_name}, earlier rows to {mapping[np_name]}")
            mapping[np_name] = lib_name
        if isinstance(row.get("rewritten_doc"), str):
            docs_by_name[row["curr_name"]] = row["rewritten_doc"]
    if not mapping:
        raise LibraryError(f"{path}: no rows with a func_mapping")
    packages = {v.split(".")[0] for v in mapping.values()}
    if len(packages) != 1:
        raise LibraryError(f"{path}: func_mapping names several packages {sorted(packages)}")
    package = packages.pop()
    linalgs = {v.split(".")[1] for k, v in mapping.items() if k.startswith("np.linalg.")}
    if len(linalgs) > 1:
        raise LibraryError(f"{path}: func_mapping names several linalg modules {sorted(linalgs)}")
    linalg = linalgs.pop() if linalgs else "linalg"
    names: dict[str, str] = {}
    for np_name, lib_name in mapping.items():
        try:
            key = entry(np_name).key
        except KeyError:
            raise LibraryError(f"{path}: func_mapping names {np_name}, which is not in the catalogue") from None
        names[key] = lib_name.rsplit(".", 1)[-1]
    docs = {k: docs_by_name[v] for k, v in names.items() if v in docs_by_name}
    return Library(package, linalg, f"{package.upper()}Array", names, source=f"official:{path}", official_docs=docs)


def from_spec(spec: str | Library | int | None) -> Library:
    """Resolve ``"seed:N"``, ``"official:PATH"``, an int seed, or a Library (None: seed 0).

    Args:
        spec: the library as given.

    Raises:
        LibraryError: none of those.
    """
    if isinstance(spec, Library):
        return spec
    if spec is None:
        return mint(0)
    if isinstance(spec, int) and not isinstance(spec, bool):
        return mint(spec)
    if isinstance(spec, str):
        kind, _, arg = spec.partition(":")
        if kind == "seed" and arg.isdigit():
            return mint(int(arg))
        if kind == "official" and arg:
            return official(arg)
    raise LibraryError(f"library must be 'seed:N', 'official:PATH', an int seed or a Library, got {spec!r}")
