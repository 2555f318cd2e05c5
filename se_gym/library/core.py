"""The Library record, the minter, the official mapping, and writing a library to disk."""
from __future__ import annotations

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


# what a translation calls in place of NumPy's ``X.tolist()``: nested lists of Python numbers,
# read back from each element's print (the library's scalars print as NumPy's do)
TOLIST = """

def _se_gym_tolist(value):
    if isinstance(value, (bool, int, float, complex, str)):
        return value
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


def _without_tolist(code: str) -> str:
    """``X.tolist()`` -> ``_se_gym_tolist(X)`` (and the function appended); code that does not parse
    is returned as it is."""
    import ast

    class Calls(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "tolist" and not node.args and not node.keywords:
                return ast.Call(ast.Name("_se_gym_tolist", ast.Load()), [f.value], [])
            return node

    try:
        tree = Calls().visit(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n" + TOLIST


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
        tree.body.insert(0, ast.Import(names=[ast.alias(name=package)]))
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

        NumPy's constants become their values (the library has functions only), a name imported
        with ``from numpy[.linalg] import`` becomes the library's qualified name, and
        ``X.tolist()``, a method of NumPy's arrays that the library's array refuses, becomes a call
        of a plain-Python function appended to the code (:data:`TOLIST`) that makes the same lists.

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
            return m.group(0)

        code = re.sub(r"\bimport\s+numpy\s+as\s+np\b", f"import {self.package}", numpy_code)
        code = re.sub(r"\bimport\s+numpy\b(?!\.)", f"import {self.package}", code)
        code = re.sub(r"\b(np|numpy)\.((?:linalg\.)?[A-Za-z_]\w*)", sub, code)
        if re.search(r"^\s*from\s+numpy(\.linalg)?\s+import\b", code, re.M):
            code = _without_from_numpy(code, self.package, mapping)
        return _without_tolist(code) if ".tolist(" in code else code

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
