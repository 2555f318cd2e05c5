"""The library minter: names, determinism, runtime behaviour per profile, docs, bad input."""
from __future__ import annotations

import builtins
import importlib
import json
import keyword
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import legit_skip, need_module, shared_path
from se_gym.library import CATALOGUE, KEYS, LibraryError, entry, mint, official
from se_gym.library.docs import ENGLISH, code_mentions


# ---------------------------------------------------------------- names and determinism
def test_catalogue_covers_the_278_sebench_functions():
    assert len(CATALOGUE) == 278 == len(set(KEYS))
    assert sum(e.in_linalg for e in CATALOGUE) == 31
    for e in CATALOGUE:
        assert callable(e.target()), e.key


def test_minted_names_are_fresh_identifiers():
    lib = mint(0)
    names = list(lib.names.values())
    assert len(names) == len(set(names)) == 278
    numpy_names = {n.lower() for n in dir(np) + dir(np.linalg)}
    for name in names:
        assert re.fullmatch(r"[a-z]{6,7}", name), name
        assert not keyword.iskeyword(name) and not hasattr(builtins, name)
        assert name not in numpy_names
    assert lib.package == "zwc" and lib.array_type == "ZWCArray"
    assert lib.linalg.isidentifier() and lib.linalg not in names


def test_same_seed_same_library_and_golden_names():
    a, b = mint(7), mint(7)
    assert a == b and a.id == b.id
    # frozen expectations: a change here would silently rename every seed-0 library
    lib0 = mint(0)
    assert (lib0.names["array"], lib0.names["abs"], lib0.linalg) == ("wuboki", lib0.names["abs"], "nu")
    assert lib0.id == mint(0).id


def test_determinism_across_processes():
    code = "import json,se_gym; l=se_gym.mint(3); print(json.dumps(l.to_json(), sort_keys=True))"
    env = dict(os.environ, PYTHONHASHSEED="random")
    out = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout for _ in range(2)}
    assert len(out) == 1
    assert json.loads(out.pop()) == json.loads(json.dumps(mint(3).to_json(), sort_keys=True))


def test_different_seeds_give_different_libraries():
    base = set(mint(0).names.values())
    for seed in (1, 2, 3, 4):
        other = mint(seed)
        assert other.id != mint(0).id
        assert not base & set(other.names.values()), seed


def test_package_and_linalg_configurable_or_random():
    lib = mint(5, package=None)
    assert lib.package != "zwc" and lib.package.isidentifier()
    assert lib.array_type == lib.package.upper() + "Array"
    lib2 = mint(5, package="mylib", linalg="la", array_type="Tensorish")
    assert lib2.qualified("linalg.norm") == f"mylib.la.{lib2.names['linalg.norm']}"
    assert lib2.qualified("abs") == f"mylib.{lib2.names['abs']}"


@pytest.mark.parametrize("bad", ["0", 1.5, True, None, -1])
def test_bad_seed_is_a_one_line_error(bad):
    with pytest.raises(LibraryError) as exc:
        mint(bad)
    assert "\n" not in str(exc.value) and "seed" in str(exc.value)


def test_translate_numpy_code():
    lib = mint(0)
    code = "import numpy as np\n\ndef solve(x):\n    return np.linalg.norm(np.abs(np.array(x)))\n"
    out = lib.translate(code)
    assert "import zwc" in out and "np." not in out
    assert lib.qualified("linalg.norm") in out and lib.qualified("abs") in out and lib.qualified("array") in out


def test_translate_constants_tolist_and_from_imports():
    """Forms the official references use that a name-for-name translation left as NumPy (found by
    se-gym validate on the official dev file): constants, ``.tolist()``, ``from numpy... import``."""
    lib = mint(0)
    code = ("import numpy as np\nfrom numpy.linalg import norm as n2\n\n"
            "def solve(x):\n    return (np.abs(np.array(x)) * np.pi / n2(x)).tolist()\n")
    out = lib.translate(code)
    assert "numpy" not in out and "np." not in out and ".tolist" not in out and "3.141592653589793" in out
    assert lib.qualified("linalg.norm") + "(x)" in out and "_se_gym_tolist(" in out
    ns: dict = {}
    exec(compile(out.replace(f"import {lib.package}\n", ""), "<t>", "exec"), ns)  # the helper alone, on plain lists
    assert ns["_se_gym_tolist"]([[1, 2.5], (True, "a")]) == [[1, 2.5], [True, "a"]]


ARRAY_FORMS = """import numpy as np

def solve(x, k):
    a = np.array(x)
    mask = (a > 1) & (a < 4)
    flip = ~mask | (a == 0)
    both = a.reshape(2, 2) @ a.reshape(2, 2).T
    total = np.sum(a)
    counts = 0
    for v in x:
        counts = counts + (v & 1)
    return [np.where(mask, -a, a).astype(int).tolist(), flip.flatten().tolist(), both.tolist(),
            float(total), int(np.sum(a)), counts * k, np.array(x, dtype=np.int32).tolist()]
"""


def test_translate_writes_array_methods_and_operators_as_the_librarys_functions():
    """What NumPy's array does and the library's refuses (found by se-gym validate on the official
    file: ``.astype``, ``&``, ``@`` on a linalg result, ``dtype=np.uint16``, ``float`` of an array):
    written with the library's functions where the operand is an array, left alone on Python numbers."""
    lib = mint(0)
    out = lib.translate(ARRAY_FORMS)
    q = lib.qualified
    for key in ("bitwise_and", "bitwise_or", "invert", "matmul", "negative", "astype", "ravel", "reshape"):
        assert q(key) + "(" in out, (key, out)
    assert f"{q('reshape')}(a, (2, 2))" in out and "dtype='int32'" in out
    assert "counts + (v & 1)" in out and "counts * k" in out  # a loop's variable is no array: its operators stay
    assert "float(_se_gym_tolist(total))" in out and ".astype" not in out and " @ " not in out
    assert f"int({q('sum')}(a))" in out  # a NumPy scalar's cast runs: left as it is (the built-in references have many)


@pytest.mark.parametrize("profile", ["sebench", "strict"])
def test_translated_array_forms_pass_under_both_profiles(profile):
    from se_gym.judge import Judge
    from se_gym.judge.dependence import reference_response
    from se_gym.tasks.record import TestCase

    lib = mint(0)
    expected = "[[1, -2, -3, 4], [True, False, False, True], [[5, 11], [11, 25]], 10.0, 10, 4, [1, 2, 3, 4]]"
    with Judge(lib, profile=profile, dependence=False) as judge:
        v = judge.judge(reference_response(lib.translate(ARRAY_FORMS)), [TestCase("x=[1, 2, 3, 4], k=2", expected)], "solve")
    assert v.reward == 1.0, v.detail


ALIASED_FORMS = [
    # (NumPy code, the case's expected output): forms a model writes that the translator left as NumPy
    ("from __future__ import annotations\nfrom numpy import sum as total\n\n\ndef solve(x: list[float]) -> float:\n"
     "    return float(total(x))\n", "10.0"),
    ("import numpy as xp\n\n\ndef solve(x):\n    return float(xp.sum(xp.abs(x)))\n", "10.0"),
    ("import numpy as np\nimport numpy.linalg as la\n\n\ndef solve(x):\n    return float(la.norm(np.array(x)) ** 2)\n", "30.0"),
    ("import numpy as np\n\n\ndef solve(x):\n    f = getattr(np, 'sum')\n    g = getattr(np.linalg, \"norm\", None)\n"
     "    return float(f(x)) + 0 * float(g(np.array(x)))\n", "10.0"),
]


@pytest.mark.parametrize("code,expected", ALIASED_FORMS)
def test_translate_aliases_future_imports_and_getattr(code, expected):
    """``from __future__`` before the library's import, ``import numpy as xp`` and ``import
    numpy.linalg as la`` with their uses, ``getattr(np, "f")`` (honest forms, round 10: the first was
    a SyntaxError, the others left NumPy names); the translation passes under strict."""
    from se_gym.judge import Judge
    from se_gym.judge.dependence import reference_response
    from se_gym.tasks.record import TestCase

    lib = mint(0)
    out = lib.translate(code)
    assert "numpy" not in out and not re.search(r"\b(np|xp|la)\.", out), out
    with Judge(lib, profile="strict", dependence=False) as judge:
        v = judge.judge(reference_response(out), [TestCase("x=[1, 2, 3, 4]", expected)], "solve")
    assert v.reward == 1.0, (v.detail, out)


def test_translated_tolist_gives_plain_python_numbers():
    """NumPy's ``tolist`` gives plain numbers; the translation's stand-in did not for a float64 (a
    float subclass that prints as ``np.float64(...)`` in a list under NumPy 2: official task 228)."""
    lib = mint(0)
    out = lib.translate("import numpy as np\n\ndef solve(x):\n    return np.array(x).tolist()\n")
    ns: dict = {}
    exec(compile(out.replace(f"import {lib.package}\n", ""), "<t>", "exec"), ns)
    got = ns["_se_gym_tolist"]([np.float64(0.5), [np.complex128(1j), np.True_], np.int64(3)])
    assert got == [0.5, [1j, True], 3] and str(got) == "[0.5, [1j, True], 3]"
    assert [type(v) for v in (got[0], got[1][0], got[1][1], got[2])] == [float, complex, bool, int]


# ---------------------------------------------------------------- runtime behaviour
@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """The seed-0 library written under two package names, one per profile, importable side by side."""
    out = {}
    for profile in ("sebench", "strict"):
        lib = mint(0, package=f"zwc_{profile}", linalg="rfx", array_type="ZWCArray")
        root = tmp_path_factory.mktemp(profile)
        lib.write(root, profile=profile)
        sys.path.insert(0, str(root))
        out[profile] = (lib, importlib.import_module(lib.package))
    yield out
    for lib, _ in out.values():
        for name in [m for m in sys.modules if m == lib.package or m.startswith(lib.package + ".")]:
            del sys.modules[name]


def fn(libs, profile, key):
    lib, mod = libs[profile]
    obj = mod
    for part in lib.qualified(key).split(".")[1:]:
        obj = getattr(obj, part)
    return obj


V = [1.5, -2.0, 3.25, 0.5]
M = [[2.0, 1.0], [1.0, 3.0]]
I = [3, 1, 2, 5]
# Representative arguments per function where the generic candidates below do not fit.
SPECIAL = {
    "piecewise": (V, [[True, False, True, False], [False, True, False, True]], [lambda v: v * 2, lambda v: v - 1]),
    "vectorize": None,  # returns a callable; covered separately
    "choose": ([0, 1, 0], [[1, 2, 3], [4, 5, 6]]),
    "select": ([[True, False], [False, True]], [[1, 2], [3, 4]]),
    "put": None, "place": None, "putmask": None, "copyto": None,  # mutate in place; covered separately
    "empty": None, "empty_like": None,  # uninitialised memory
    "block": ([[1, 2], [3, 4]],),
    "ix_": ([0, 1], [1, 2]),
    "lexsort": ([[1, 2, 1], [3, 1, 2]],),
    "compress": ([True, False, True], [1, 2, 3]),
    "extract": ([True, False, True], [1, 2, 3]),
    "take": ([4, 5, 6], [0, 2]),
    "searchsorted": ([1, 3, 5], [2, 4]),
    "digitize": ([0.5, 1.5, 2.5], [1.0, 2.0]),
    "interp": ([1.5, 2.5], [1.0, 2.0, 3.0], [10.0, 20.0, 30.0]),
    "polyval": ([1.0, 2.0, 3.0], [0.0, 1.0, 2.0]),
    "polyfit": ([0.0, 1.0, 2.0, 3.0], [1.0, 3.0, 5.0, 7.0], 1),
    "histogram": (V,),
    "bincount": (I,),
    "unravel_index": (5, (2, 3)),
    "base_repr": (10, 3), "binary_repr": (5,),
    "full": ((2, 2), 7), "full_like": ([1, 2], 9),
    "insert": ([1, 2, 3], 1, 9), "delete": ([1, 2, 3], 1),
    "pad": ([1, 2], 1), "resize": ([1, 2, 3], (2, 2)), "reshape": ([1, 2, 3, 4], (2, 2)),
    "repeat": ([1, 2], 2), "tile": ([1, 2], 2), "roll": ([1, 2, 3], 1), "split": ([1, 2, 3, 4], 2),
    "broadcast_to": ([1, 2], (2, 2)), "expand_dims": ([1, 2], 0), "moveaxis": (M, 0, 1), "rollaxis": (M, 1),
    "swapaxes": (M, 0, 1), "partition": ([3, 1, 2], 1), "argpartition": ([3, 1, 2], 1),
    "percentile": (V, 50), "quantile": (V, 0.5), "astype": ([1.7, 2.2], "int64"),
    "tensordot": (M, M, 1), "linalg.tensordot": (M, M), "ldexp": ([1.0, 2.0], [1, 2]),
    "linalg.tensorinv": ([[2.0, 0.0], [0.0, 4.0]], 1), "linalg.tensorsolve": (M, [1.0, 2.0]),
    "linalg.matrix_power": (M, 3), "linalg.multi_dot": ([M, M, M],), "linalg.solve": (M, [1.0, 2.0]),
    "linalg.lstsq": (M, [1.0, 2.0]), "linalg.cross": ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), "cross": ([1, 2, 3], [4, 5, 6]),
    "linalg.vecdot": ([1.0, 2.0], [3.0, 4.0]), "linalg.outer": ([1.0, 2.0], [3.0, 4.0]),
    "arange": (1, 7, 2), "linspace": (0, 1, 5), "logspace": (0, 2, 3), "geomspace": (1, 100, 3),
    "eye": (3,), "identity": (2,), "tri": (3,), "zeros": (3,), "ones": ((2, 2),),
    "meshgrid": ([1, 2], [3, 4, 5]), "trapz": ([1.0, 2.0, 4.0],), "clip": (V, 0, 2), "where": ([True, False], [1, 2], [3, 4]),
    "heaviside": ([-1.0, 0.0, 2.0], 0.5), "frexp": (V,), "modf": (V,), "divmod": (I, 2), "nextafter": ([1.0], [2.0]),
    "gcd": (I, [6, 4, 8, 10]), "lcm": (I, [6, 4, 8, 10]), "bitwise_count": (I,), "left_shift": (I, 1),
    "right_shift": (I, 1), "bitwise_left_shift": (I, 1), "bitwise_right_shift": (I, 1),
    "convolve": ([1, 2, 3], [0, 1]), "correlate": ([1, 2, 3], [0, 1]), "isclose": (V, V), "allclose": (V, V),
    "array_equal": (V, V), "array_equiv": (V, V), "stack": ([[1, 2], [3, 4]],), "hstack": ([[1, 2], [3, 4]],),
    "vstack": ([[1, 2], [3, 4]],), "concatenate": ([[1, 2], [3, 4]],), "broadcast_arrays": ([1, 2], [[1], [2]]),
    "linalg.cholesky": (M,), "roots": ([1.0, -3.0, 2.0],), "unwrap": ([0.0, 3.5, 7.0],), "sort_complex": ([3, 1, 2],),
}
CANDIDATES = [(V,), (M,), (V, [0.5, 1.5, 2.5, 1.0]), (I,), (I, [1, 2, 3, 4])]


def _plain(x):
    """Comparable plain value of a NumPy or library result."""
    if hasattr(x, "shape") and type(x).__name__.endswith("Array") and not isinstance(x, np.ndarray):
        return _plain(np.asarray([*x]) if x.shape else x[()])  # iterate: works in both profiles
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _close(a, b):
    a, b = _plain(a), _plain(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float, complex)) and isinstance(b, (int, float, complex)):
        return a == b or (np.isnan(a) and np.isnan(b)) if isinstance(a, float) else abs(a - b) < 1e-9
    return a == b


def _args_for(e):
    if e.short in SPECIAL or e.key in SPECIAL:
        return [SPECIAL.get(e.key, SPECIAL.get(e.short))]
    return CANDIDATES


@pytest.mark.parametrize("profile", ["sebench", "strict"])
def test_every_function_matches_numpy(libs, profile):
    import warnings

    checked, skipped = 0, []
    for e in CATALOGUE:
        cands = _args_for(e)
        if cands == [None]:
            skipped.append(e.key)
            continue
        for args in cands:
            keep = e.short in ("piecewise", "block", "multi_dot")
            conv = [isinstance(a, list) and not keep for a in args]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    want = e.target()(*[np.array(a) if c else a for a, c in zip(args, conv)])
                except Exception:
                    continue
                arr = fn(libs, profile, "array")
                got = fn(libs, profile, e.key)(*[arr(a) if c else a for a, c in zip(args, conv)])
            assert _close(got, want), (e.key, got, want)
            checked += 1
            break
        else:
            pytest.fail(f"no representative input for {e.key}")
    assert checked == 278 - len(skipped)
    assert set(skipped) == {"vectorize", "put", "place", "putmask", "copyto", "empty", "empty_like"}


@pytest.mark.parametrize("profile", ["sebench", "strict"])
def test_mutating_and_callable_functions(libs, profile):
    arr = fn(libs, profile, "array")
    a = arr([1, 2, 3, 4])
    fn(libs, profile, "put")(a, [0, 2], [9, 8])
    assert [*a] == [9, 2, 8, 4]
    fn(libs, profile, "place")(a, a > 5, [0])
    assert [*a] == [0, 2, 0, 4]
    vec = fn(libs, profile, "vectorize")(lambda v: v * 10)
    assert [*vec(arr([1, 2]))] == [10, 20]
    assert fn(libs, profile, "empty")((2, 3)).shape == (2, 3)


def test_sebench_array_type_blocks_what_formats_md_says(libs):
    arr = fn(libs, "sebench", "array")
    a = arr([[1, 2], [3, 4]])
    for attr in ("tolist", "astype", "reshape", "flatten", "item", "real", "fill", "mean", "sum"):
        with pytest.raises(AttributeError):
            getattr(a, attr)
    for op in (lambda: a & a, lambda: a | a, lambda: ~a, lambda: -a, lambda: a @ a, lambda: a // 2, lambda: a % 2):
        with pytest.raises(TypeError):
            op()
    assert repr(a) == "ZWCArray([[1, 2], [3, 4]])" and str(a) == "[[1 2]\n [3 4]]"
    assert a.shape == (2, 2) and a.ndim == 2 and a.size == 4 and a.dtype == np.int64
    assert type(a + 1).__name__ == "ZWCArray" and type(2 * a).__name__ == "ZWCArray" and type(a > 1).__name__ == "ZWCArray"
    assert [*(a ** 2)[1]] == [9, 16] and (1 / arr([2.0]))[0] == 0.5
    row = a[0]
    assert type(row).__name__ == "ZWCArray" and a[0, 1] == 2 and type(a[0, 1]) is int
    a[0, 0] = 7
    assert [*a[0]] == [7, 2] and len(a) == 2
    assert [type(v) for v in arr([1.5, 2.5])] == [float, float]
    # the official holes, kept in this profile
    assert isinstance(a.T, np.ndarray) and isinstance(np.asarray(a), np.ndarray)
    assert isinstance(object.__getattribute__(a, "_data"), np.ndarray)
    s = fn(libs, "sebench", "sum")(a)
    assert isinstance(s, np.integer)  # NumPy scalars pass through, as officially
    fsum = fn(libs, "sebench", "sum")
    assert "np" in fsum.__globals__ or "_np" in fsum.__globals__  # function globals expose NumPy
    with pytest.raises(AttributeError):
        fsum.reduce  # noqa: B018 (the attribute read is what raises)


def test_strict_array_type_leaks_nothing(libs):
    """Under strict the package is a client of a library server (issue 31): nothing in it holds
    NumPy; its arrays are handles and its functions names sent to the server."""
    if os.environ.get("SE_GYM_STRICT_SERVER") == "0":
        legit_skip("SE_GYM_STRICT_SERVER=0: strict runs the in-process library")
    lib, mod = libs["strict"]
    arr = fn(libs, "strict", "array")
    a = arr([[1.0, 2.0], [3.0, 4.0]])
    assert type(a.T).__name__ == "ZWCArray" and [*a.T[0]] == [1.0, 3.0]
    assert a.dtype == "float64" and a.dtype == np.float64 and a.dtype == float and not isinstance(a.dtype, np.dtype)
    for attr in ("_data", "__dict__", "__array__", "__array_interface__", "tolist"):
        with pytest.raises(AttributeError):
            getattr(a, attr)
    client = sys.modules[mod.__name__ + "._client"]
    assert not any(isinstance(v, type(np)) and v.__name__.startswith("numpy") for v in vars(client).values())
    assert type(object.__getattribute__(a, "_h")) is int  # a handle, not data
    copy = np.asarray(a)  # without __array__ NumPy can only iterate the public sequence: a copy
    copy[0, 0] = 99.0
    assert a[0, 0] == 1.0
    s = fn(libs, "strict", "sum")(a)
    # a NumPy-like float64 that holds no NumPy (se_gym/library/scalars.py), read as a plain float
    assert isinstance(s, float) and type(s).__name__ == "float64" and not isinstance(s, np.generic)
    assert s == 10.0 and type(s.item()) is float and s.ndim == 0
    assert isinstance(np.float64(2) * a, type(a))  # NumPy defers operators to the array type
    f = fn(libs, "strict", "sum")
    for attr in ("__globals__", "__closure__", "__code__", "__wrapped__", "_call"):
        with pytest.raises(AttributeError):
            getattr(f, attr)
    with pytest.raises(TypeError):
        f(np.arange(3))  # NumPy's own objects are not plain data
    # nested arrays inside lists cross as handles
    cat = fn(libs, "strict", "concatenate")
    assert [*cat([arr([1, 2]), arr([3])])] == [1, 2, 3]
    # user callables receive library arrays, never raw ndarrays (the server calls back)
    seen = []
    pw = fn(libs, "strict", "piecewise")
    pw(arr([1.0, -1.0]), [arr([True, False]), arr([False, True])], [lambda v: seen.append(type(v).__name__) or v * 2, 0])
    assert seen and set(seen) == {"ZWCArray"}
    eig = fn(libs, "strict", "linalg.eigh")(arr([[2.0, 0.0], [0.0, 3.0]]))
    assert type(eig.eigenvalues).__name__ == "ZWCArray"


def test_written_package_is_a_plain_importable_package(tmp_path):
    lib = mint(11)
    lib.write(tmp_path / "out", profile="sebench")
    code = (
        f"import {lib.package}, {lib.package}.{lib.linalg} as la\n"
        f"a = {lib.qualified('array')}([[3.0, 0.0], [0.0, 4.0]])\n"
        f"print({lib.qualified('linalg.det')}(a))\nprint(repr(la.{lib.names['linalg.inv']}(a)).replace(chr(10), ''))\n"
        f"print({lib.package}.{lib.names['abs']}.__doc__.splitlines()[0])\n"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "out"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    lines = out.splitlines()
    # the official linalg submodule hands out raw ndarrays (its recorded verdicts show .tolist()
    # and @ working on linalg results); main-module functions wrap theirs
    assert lines[0] == "12.0" and lines[1].startswith("array([[0.33333333, 0.")
    assert lines[2].startswith(lib.qualified("absolute") + "(x, /")  # np.abs documents np.absolute


# ---------------------------------------------------------------- docs
def test_docs_never_name_the_numpy_function():
    lib = mint(0)
    shorts = sorted({e.short for e in CATALOGUE} | {"absolute", "trapezoid"})
    for key, doc in lib.docs().items():
        e = entry(key)
        assert not code_mentions(doc, shorts), (key, code_mentions(doc, shorts))
        if e.short not in ENGLISH:
            assert not re.search(rf"(?<![\w.]){re.escape(e.short)}(?!\w)", doc), key
        assert "ndarray" not in doc and not re.search(r"\bnumpy\b|\bnp\.", doc, re.I), key
        assert lib.names[key] in doc or "ZWCArray" in doc, key


def test_doc_uses_library_names_in_examples():
    lib = mint(0)
    doc = lib.doc("linalg.norm")
    assert f"import {lib.package}" in doc and lib.names["arange"] in doc and "ZWCArray(" in doc


# ---------------------------------------------------------------- official mapping
def _write_official_fixture(path: Path) -> None:
    rows = [
        {"original_name": "abs", "curr_name": "falekef", "docstring": "...", "rewritten_doc": "falekef(x)\n\nAbsolute value.",
         "func_mapping": json.dumps({"np.abs": "zwc.falekef", "np.array": "zwc.yitaf", "np.linalg.norm": "zwc.rfx.girayik"})},
        {"original_name": "norm", "curr_name": "girayik", "docstring": "...", "rewritten_doc": "girayik(x)\n\nNorm.",
         "func_mapping": json.dumps({"np.linalg.norm": "zwc.rfx.girayik", "np.sum": "zwc.cobodi"})},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_official_fixture(tmp_path):
    p = tmp_path / "api_doc.jsonl"
    _write_official_fixture(p)
    lib = official(p)
    assert lib.package == "zwc" and lib.linalg == "rfx" and lib.array_type == "ZWCArray"
    assert lib.qualified("abs") == "zwc.falekef" and lib.qualified("linalg.norm") == "zwc.rfx.girayik"
    assert lib.doc("abs").startswith("falekef(x)")
    assert lib.numpy_mapping() == {"np.abs": "zwc.falekef", "np.array": "zwc.yitaf", "np.linalg.norm": "zwc.rfx.girayik", "np.sum": "zwc.cobodi"}


def test_official_shared_file_reproduces_all_278_names():
    SHARED_API_DOC = shared_path("sebench", "api_doc.jsonl")
    lib = official(SHARED_API_DOC)
    expected = {}
    for line in SHARED_API_DOC.read_text().splitlines():
        expected.update(json.loads(json.loads(line)["func_mapping"]))
    assert lib.numpy_mapping() == expected and len(expected) == 278
    assert lib.qualified("abs") == "zwc.falekef"
    assert len(lib.official_docs) == 278


@pytest.mark.parametrize(
    "content, needle",
    [
        ("{not json\n", ":1: not valid JSON"),
        ('{"curr_name": "x"}\n', "missing field 'func_mapping'"),
        ('{"curr_name": "x", "func_mapping": "[1"}\n', "'func_mapping' is not a JSON object"),
        ('{"curr_name": "x", "func_mapping": "{\\"np.nothing\\": \\"zwc.x\\"}"}\n', "not in the catalogue"),
        ('{"curr_name": "a", "func_mapping": "{\\"np.abs\\": \\"zwc.a\\"}"}\n{"curr_name": "b", "func_mapping": "{\\"np.abs\\": \\"zwc.b\\"}"}\n', ":2:"),
        ("", "no rows"),
    ],
)
def test_official_malformed_input(tmp_path, content, needle):
    p = tmp_path / "api_doc.jsonl"
    p.write_text(content)
    with pytest.raises(LibraryError) as exc:
        official(p)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_official_unreadable(tmp_path):
    with pytest.raises(LibraryError, match="cannot read api_doc file"):
        official(tmp_path / "missing.jsonl")


def test_write_refuses_foreign_directory_and_writes_nothing(tmp_path):
    out = tmp_path / "occupied"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(LibraryError, match="not empty"):
        mint(0).write(out)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".se_gym")]
    done = mint(0).write(tmp_path / "lib")
    mint(0).write(done)  # the same library again is fine
    with pytest.raises(LibraryError, match="another library"):
        mint(1).write(done)


def test_cli_build_show_doc(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "se_gym.cli", "library", *a], capture_output=True, text=True)
    r = run("build", "--seed", "2", "--out", str(tmp_path / "lib"))
    assert r.returncode == 0, r.stderr
    rows = [json.loads(l) for l in (tmp_path / "lib" / "api_doc.jsonl").read_text().splitlines()]
    assert len(rows) == 278 and {"original_name", "curr_name", "rewritten_doc", "func_mapping"} <= set(rows[0])
    assert official(tmp_path / "lib" / "api_doc.jsonl").names == mint(2).names  # its docs read back as a library
    r = run("show", "--seed", "2")
    assert r.returncode == 0 and mint(2).id in r.stdout
    r = run("doc", "--seed", "2", "np.linalg.norm")
    assert r.returncode == 0 and mint(2).qualified("linalg.norm") in r.stdout
    r = run("build", "--seed", "3", "--out", str(tmp_path / "lib"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "another library" in r.stderr
    r = run("doc", "--seed", "2", "nonexistent_fn")
    assert r.returncode == 2 and "neither" in r.stderr


def test_the_docs_do_not_depend_on_what_the_process_imported():
    """SciPy rewrites np.sinc's docstring in place when scipy.signal is imported (dedented, a section
    added): a library's docs changed with it, so `se-gym validate` found "the library differs in
    another process" after any test that loaded a model (transformers imports scipy.stats)."""
    import subprocess
    import sys

    need_module("scipy", "scipy rewrites NumPy's docstrings: the case this test is about")
    code = ("import json, sys; from se_gym.library import from_spec\n"
            "if sys.argv[1] == 'scipy': import scipy.signal, scipy.stats\n"
            "print(json.dumps(from_spec('seed:0').doc('sinc')))\n")
    plain, after = (subprocess.run([sys.executable, "-c", code, arg], capture_output=True, text=True, check=True).stdout
                    for arg in ("plain", "scipy"))
    assert plain == after and "Array API Standard Support" not in plain and "SCIPY" not in plain
