"""The strict profile's library server: the one process of a program that holds NumPy.

Copied verbatim into every strict library as ``_server.py`` (the writer prepends ``ARRAY_NAME``
and ``TABLE``, the library's function names and the NumPy path each stands for).  The sandbox
worker forks one from a zygote that imported NumPy and this module, and keeps it for its next
programs while it stays fit (``serve(fd)``, then ``reset()``); run as a script (``python _server.py FD``) it serves a client that had no worker
(the library imported outside the sandbox).

A server may serve several programs of one worker in turn (``serve`` then ``reset``): every handle
is dropped between them, NumPy's global state is put back as ``load`` left it, and no function
hands out uninitialised memory (``empty`` and ``empty_like`` give zeros, ``pad``'s ``"empty"`` mode
pads with zeros, a ufunc's or ``clip``'s ``where=`` without ``out=`` leaves zeros), so nothing of an earlier
program shows.  ``serve`` says whether the server is still fit for reuse: after an error, a
call-back or a refused request it is not, and the worker forks a fresh one.

It speaks only the library's API (see ``client.py`` for the wire): a function from ``TABLE``, the
array type's attributes, indexing, ``len``, iteration, its operators and comparisons, ``repr``/
``str``, and the data of an array for the harness.  Every request is checked: an unknown
operation, function, attribute, handle or value is the library's ``TypeError``; nothing else is
ever looked up by name.  Results go back as plain data or handles; errors as a type name and text.
"""
import base64
import builtins
import hashlib
import inspect
import json
import operator
import os
import struct
import sys
import warnings

import numpy as np

try:
    TABLE  # noqa: B018 - set by the writer
except NameError:  # pragma: no cover - used directly from se_gym (tests)
    ARRAY_NAME, TABLE = "ZWCArray", {}

MAX_FRAME = 64 << 20  # bytes of one request
MAX_HANDLES = 1 << 20
# (red-team round 6) the share of the server's address-space room that the program's arrays may hold,
# and that one result may take, in every mode: the counterfactual library's keys and perturbed copies
# (several times a result's size) must always fit in the rest, so that no allocation fails in one mode
# and not in another (a program that could tell the modes apart by it: docs/security.md, round 6)
HOLD_SHARE = 12
_ROOM = [None, -1]  # (bytes the program's arrays may hold, or None: no limit; the pid it was read in)
_HEAD = struct.Struct(">I")
_CHUNK = 16384  # bytes asked of one read: a whole frame, as a rule


def _not_plain(obj):
    raise TypeError(f"a result of type {type(obj).__name__} cannot be returned")


def _json_codec():
    """The frames' JSON, with json's C encoder and scanner called directly: what json.dumps and
    json.loads add around them (an encoder and its checks made per call, the bytes' encoding
    guessed, whitespace matched) was half of a small frame's cost."""
    make = json.encoder.c_make_encoder
    if make is None:  # (no C accelerator: the pure-Python json)
        dumps = json.JSONEncoder(separators=(",", ":"), default=_not_plain).encode
    else:
        enc = make(None, _not_plain, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)

        def dumps(msg):
            return "".join(enc(msg, 0))
    scan = json.scanner.make_scanner(json.JSONDecoder())

    def loads(body):
        text = body.decode("utf-8")
        try:
            obj, end = scan(text, 0)
        except StopIteration:
            raise ValueError("not JSON") from None
        if end != len(text):
            raise ValueError("not one JSON value")
        return obj

    return dumps, loads


_dumps, _loads = _json_codec()
_TYPES = {"int": int, "float": float, "bool": bool, "complex": complex, "str": str, "object": object, "bytes": bytes}
_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv, "pow": operator.pow,
        "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
_ATTRS = ("shape", "dtype", "size", "ndim", "T")
_ERRORS = ("TypeError", "ValueError", "IndexError", "KeyError", "ZeroDivisionError", "OverflowError",
           "FloatingPointError", "ArithmeticError", "MemoryError", "NotImplementedError", "RuntimeError", "AttributeError")


class Refused(TypeError):
    """A request outside the library's API."""


class _Gone(Exception):
    """The program's connection ended while the server waited on it inside a call-back."""


def _resolve(path):
    for option in path.split("|"):
        obj = np
        try:
            for part in option.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        return obj
    return None


FUNCTIONS = {}  # filled by load(): library name -> NumPy callable
_STATE = {}  # NumPy's global state as load() left it (what reset() puts back)


def _pad(array, pad_width, mode="constant", **kwargs):
    # mode "empty" leaves the padding uninitialised: zeros instead
    return np.pad(array, pad_width, "constant" if isinstance(mode, str) and mode == "empty" else mode, **kwargs)


def _where_call(fn, nin, nout, args, kwargs):
    """A call of a ufunc (or of ``clip``, one in disguise) with ``nin`` inputs and ``nout``
    outputs; where ``where=`` leaves outputs it has no ``out=`` for, those start as zeros (NumPy
    would leave them uninitialised: memory an earlier program may have written)."""
    if "where" in kwargs and not (len(args) > nin and "out" in kwargs):
        given = kwargs["out"] if "out" in kwargs else (tuple(args[nin:]) or None)
        given = given if type(given) is tuple else (given,) * nout
        if any(g is None for g in given):
            probe = fn(*args[:nin], **{k: v for k, v in kwargs.items() if k not in ("where", "out")})
            probes = probe if type(probe) is tuple else (probe,)
            kwargs = dict(kwargs, out=tuple(np.zeros_like(p) if g is None else g for g, p in zip(given, probes)))
            out = fn(*args[:nin], **kwargs)
            if all(isinstance(p, np.generic) for p in probes):  # (scalars in, scalars out, as without out=)
                out = tuple(o[()] for o in out) if type(out) is tuple else out[()]
            return out
    return fn(*args, **kwargs)


def load():
    """Resolve the table once (in the zygote, before any program)."""
    def clip(*args, **kwargs):
        return _where_call(np.clip, 3, 1, args, kwargs)

    safe = {id(np.empty): np.zeros, id(np.empty_like): np.zeros_like, id(np.pad): _pad, id(np.clip): clip}
    first = {}  # id of a NumPy callable -> the first path naming it (aliases share a class)
    for name, path in TABLE.items():
        fn = _resolve(path)
        if fn is not None:
            FUNCTIONS[name] = safe.get(id(fn), fn)
            where = _path_of(path)
            cls = _ALIASES.get(where, first.setdefault(id(fn), where))
            CLASSES[name] = "~" + cls if cls in _WEAK else cls
            PATHS[name] = where
    for q in _QUERIES:  # (``a.shape`` is a call of ``shape``: the same class, so the same perturbation)
        fn = getattr(np, q)
        ATTR_CLASSES[q] = "~" + _ALIASES.get(q, first.get(id(fn), q))
    warnings.simplefilter("ignore")  # NumPy's warnings would go nowhere useful: the program cannot see them
    # (the legacy random state only where the table reaches np.random: putting it back costs 0.1 ms)
    uses_random = any(option.startswith("random.") for path in TABLE.values() for option in path.split("|"))
    _STATE.update(err=np.geterr(), errcall=np.geterrcall(), bufsize=np.getbufsize(), print=np.get_printoptions(),
                  random=np.random.get_state() if uses_random else None)


def reset():
    """Between two programs: NumPy's global state as load() left it (no table function sets any of
    it today; this keeps it so if one ever does: the legacy random state, once the table has
    ``random.*`` functions)."""
    np.seterr(**_STATE["err"])
    np.seterrcall(_STATE["errcall"])
    np.setbufsize(_STATE["bufsize"])
    np.set_printoptions(**_STATE["print"])
    if _STATE["random"] is not None:
        np.random.set_state(_STATE["random"])


def _error_name(e):
    if isinstance(e, np.linalg.LinAlgError):
        return "LinAlgError"
    if isinstance(e, getattr(np, "exceptions", np).AxisError):
        return "AxisError"
    for cls in type(e).__mro__:
        if cls.__name__ in _ERRORS and cls.__module__ == "builtins":
            return cls.__name__
    return "RuntimeError"


# ------------------------------------------------------------ the counterfactual library (issue 42)
# The judge's run-time dependence check asks a server, per program, for one of three modes, which
# the worker hands it with the program's sockets on the server's own control socket (before the
# program exists, and never on the program's sockets: the program can neither read, forge nor
# notice it), a JSON object:
#
# * ``{}``: the real library (every program's);
# * ``{"record": true}``: the real library, and the keys of its computations kept for the worker (the
#   trusted reference's run: which values the reference computes with the library);
# * ``{"cf": SECRET, "keys": {CLASS: BASE64, ...} | null}``: the counterfactual library: a
#   computation whose key is among ``keys`` (every computation when null) returns its value
#   perturbed by an amount drawn from SECRET (hex) and the key; every other one is real.
#   A computation fed by a perturbed value is looked up by its value's key (the class's ``@``
#   keys); with ``"fed_record": true`` (the reference's counterfactual run) the server also
#   reports, per ``@`` class, the digest keys (its value and what it was computed from, the
#   perturbed values) of those it perturbed, and with ``"fed": {CLASS: BASE64, ...}`` (an
#   answer's run in the same world) it perturbs a fed computation only where that digest key is
#   among them: an answer's fed computation must be the reference's, on the same values, not one
#   with the same output made from anything fed (a Python count passed through ``count_nonzero``
#   of a run of ones cut from a perturbed array: red-team round 5).
#
# A computation is a call of a library function other than the array constructor (_PLAIN), or of a
# callable one returned (``vectorize``'s), or a read of the array type's queries ``.shape``,
# ``.size`` and ``.ndim`` (a call of the function of that name: its class).  Queries and conversions
# (``shape``, ``size``, ``astype``, ``copy``, ``ascontiguousarray``...) are computations since issue
# 42's task 1: a reference whose result was a shape, a size or a conversion computed nothing the
# counterfactual moved, so any answer passed it.  The array type's operators, indexing, ``len``,
# iteration and data reads are not: they are Python's own arithmetic and conversions.  Each element
# of a computation's output has a key: its function's class (aliases share one: ``abs``/``absolute``,
# ``amax``/``max``...) and its value, never the secret; its perturbation's amount comes from the key
# and the secret.  So the same value computed by the same function is perturbed alike however the
# call was made (on one value or a whole array, a column at a time or with ``axis``, positional or
# keyword arguments, ``shape(a)`` or ``a.shape``).  A perturbation keeps an array's shape, dtype and
# kind: floats scale by 1 +- [0.1, 0.5] (a value under 1e-3, zero included, moves by +-[0.1, 0.5];
# nan and inf stay), ints move by +-1..3 (a shape's too), bools flip, indices (argmax, argsort,
# nonzero...) go through a secret permutation of their range (still valid indices), strings change
# one character.  It never raises: the real call runs first, and only its result is perturbed.
_PLAIN = frozenset({"array", "asarray"})  # (the array constructor: every answer's inputs start there)
# Queries and conversions are *weak* computations (their class starts with "~"): a reference's
# record names them, and the judge perturbs them only where the reference computes nothing else
# (dependence.py); with no reference (every computation perturbed) they stay real.  Were they
# perturbed beside a reference's other computations, an answer that made only the conversion or the
# query with the library (``copy(x)`` or a loop bound from ``shape``) and the rest in Python would
# match in that class's own world.
# Constructors of constants (values set by their shape and fill arguments, never by an array's data) are
# weak too (red-team round 7): perturbed beside a reference's other computations, a constant's perturbation
# flowed through its later steps (fed, so real) and an answer whose only library call was the reference's
# ``eye(len(m))`` (or ``zeros_like(x)``), the rest in Python, matched it: 36 built-in tasks (seed 0) paid 1.0.
# Without a reference (every computation perturbed) they stay perturbed, as before: there some result
# must change, and an honest answer that only builds a constant (``zeros((n, m))``) has nothing else.
_CONSTANTS = frozenset({"zeros", "ones", "empty", "full", "eye", "identity", "tri", "zeros_like", "ones_like",
                        "empty_like", "full_like"})
_WEAK = frozenset({"shape", "size", "ndim", "astype", "copy", "asanyarray", "ascontiguousarray", "asfortranarray"}) | _CONSTANTS


def _stays_real(cls):
    """A weak class that a mode without a reference's keys leaves real (a query or a conversion)."""
    return cls[0] == "~" and cls[1:].split("#", 1)[0] not in _CONSTANTS
_QUERIES = ("shape", "size", "ndim")  # the array type's attributes that are computations (of these functions' classes)
ATTR_CLASSES = {}  # filled by load(): attribute -> the class of the library function of its name
# classes of functions that compute the same values (NumPy's own aliases, one object, share one by themselves)
_ALIASES = {"absolute": "abs", "fabs": "abs", "around": "round", "rint": "round", "amax": "max", "amin": "min",
            "fmax": "maximum", "fmin": "minimum", "remainder": "mod", "average": "mean", "diag": "diagonal",
            "linalg.diagonal": "diagonal", "linalg.trace": "trace", "linalg.outer": "outer", "linalg.cross": "cross",
            "linalg.tensordot": "tensordot", "linalg.matmul": "dot", "matmul": "dot", "inner": "dot", "vdot": "dot",
            "linalg.vecdot": "dot", "linalg.multi_dot": "dot", "linalg.vector_norm": "linalg.norm",
            "linalg.matrix_norm": "linalg.norm", "linalg.pinv": "linalg.inv", "permute_dims": "transpose",
            "swapaxes": "transpose", "moveaxis": "transpose", "rollaxis": "transpose", "linalg.matrix_transpose": "transpose",
            "ravel": "reshape", "hstack": "concatenate", "vstack": "concatenate", "block": "concatenate",
            "bitwise_not": "invert", "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
            "bitwise_right_shift": "right_shift", "deg2rad": "radians", "rad2deg": "degrees"}
_IN_PLACE = {"put", "putmask", "place", "copyto"}  # (their first argument is their output)
CLASSES = {}  # filled by load(): library name -> its class
PATHS = {}  # library name -> the NumPy path it stands for
MAX_KEYS = 8192  # keys one record keeps (a class with more gets ALL: every computation of it is perturbed)
ALL = 0  # the key that says "every computation of this class" (a mixed key is 0 with odds 2**-64)
_REPORT = [None]  # what the last program's server has to say to the worker (see report())
_C1, _C2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
# The salt of every element's word in a digest (below).  A program's mode gives one drawn from the
# judge's secret (``"salt"``: the record run and every counterfactual run of one judge share it),
# so the answer cannot compute a digest: with a public salt the words were public and invertible
# (splitmix64), and an answer could pad a Python result with values whose words sum to the
# reference's input's digest, so that the reference's function on them got the reference's key and
# perturbation (red-team round 10: 1.0 on max, sum, mean, median, argmax, clip... of seed 10).
_DEFAULT_SALT = 0x5851F42D4C957F2D
_SALT, _SALT_WORD = _DEFAULT_SALT, np.uint64(_DEFAULT_SALT)


def _set_salt(salt):
    """The digests' salt for the next program: ``salt`` (16 hex digits) or the default."""
    global _SALT, _SALT_WORD
    value = _DEFAULT_SALT if salt is None else int(salt, 16)
    if not 0 <= value < 1 << 64 or salt is not None and len(salt) != 16:
        raise ValueError("salt must be 16 hex digits")
    _SALT, _SALT_WORD = value, np.uint64(value)
_S11, _S27, _S30, _S31 = np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31)


def _path_of(path):
    """The option of a table path that NumPy has (``"trapezoid|trapz"``: the first one it has)."""
    options = path.split("|")
    return next((o for o in options if _resolve(o) is not None), options[0])


def _mix(z):
    """splitmix64's finaliser, elementwise on a 1-d uint64 array (arithmetic wraps)."""
    z = z ^ (z >> _S30)
    z = z * _C1
    z = z ^ (z >> _S27)
    z = z * _C2
    return z ^ (z >> _S31)


def _word(text, key=b""):
    return np.uint64(int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8, key=key, person=b"se-gym-cf").digest(), "little"))


# A small result (most are) gets its keys and perturbation in plain Python: the very values the
# NumPy path computes (the same arithmetic modulo 2**64, the same float64 operations in the same
# order), without NumPy's cost per operation on a few elements.
_SMALL = 32
_M64 = (1 << 64) - 1
_PACK, _UNPACK = struct.Struct("<d").pack, struct.Struct("<Q").unpack
_NAN = 0x7FF8000000000000  # (np.nan's bits: every NaN is keyed alike)
# A float's bits rounded to 40 bits of mantissa: the same value computed another way (``dot`` per
# element for ``matmul``: another BLAS kernel, another summation order) may differ in its last bits,
# and its key must not (on OpenBLAS 0.3.30 here ``dot`` and ``matmul`` differ by 2 ulps)
_ULP_HALF, _ULP_MASK = 1 << 11, ((1 << 64) - 1) ^ ((1 << 12) - 1)
_CLASS_WORDS = {}


def _mix1(z):
    """_mix on one Python int."""
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & _M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _bits1(v):
    """_bits of one Python bool, int or float."""
    f = float(v) + 0.0
    return _NAN if f != f else (_UNPACK(_PACK(f))[0] + _ULP_HALF) & _ULP_MASK


def _class_word(cls):
    w = _CLASS_WORDS.get(cls)
    if w is None:
        w = _CLASS_WORDS[cls] = int(_word(cls))
    return w


def _bits(a):
    """An array's values as uint64 words, flat: as float64 (an int or a bool is the float of its
    value), -0.0 as 0.0, every NaN alike; complex: both parts, mixed; strings: a hash of each."""
    kind = a.dtype.kind
    if kind in "US":
        return np.array([_word(str(x)) for x in a.ravel().tolist()], dtype=np.uint64).reshape(-1)
    if kind == "c":
        return _mix(_bits(a.real)) ^ _bits(a.imag)
    v = np.array(a, dtype=np.float64).reshape(-1) + 0.0
    v[np.isnan(v)] = np.nan
    return (v.view(np.uint64) + np.uint64(_ULP_HALF)) & np.uint64(_ULP_MASK)


def _index_sizes(path, args, kwargs, out):
    """For a function that returns indices: the size of the range each output component indexes
    (None where a component is not indices, "columns" for argwhere); None for other functions."""
    def arg(i, name, default=None):
        return kwargs[name] if name in kwargs else args[i] if len(args) > i else default

    try:
        if path in ("argmax", "argmin", "argsort", "argpartition"):
            a = np.asarray(arg(0, "a"))
            axis = arg(2 if path == "argpartition" else 1, "axis", None if path in ("argmax", "argmin") else -1)
            return [a.size if axis is None else a.shape[axis]]
        if path == "nonzero" or (path == "where" and len(args) + len(kwargs) == 1):
            return list(np.shape(arg(0, "condition" if path == "where" else "a")))
        if path == "argwhere":
            return ["columns", list(np.shape(arg(0, "a")))]
        if path == "searchsorted":
            return [len(arg(0, "a")) + 1]
        if path == "digitize":
            return [len(arg(1, "bins")) + 1]
        if path == "lexsort":
            return [np.shape(arg(0, "keys"))[arg(1, "axis", -1)]]
        if path == "unravel_index":
            shape = arg(1, "shape")
            return list(shape) if isinstance(shape, (list, tuple)) else [shape]
        if path == "ix_" and isinstance(out, tuple):
            # an open mesh of indices into an array ix_ never sees: each part a permutation of the
            # range its own (non-negative) values span, so a perturbed mesh still indexes where the
            # real one could (moved by +-1..3 as plain ints, it ran off the array: every case raised)
            sizes = []
            for part in out:
                p = np.asarray(part)
                sizes.append(int(p.max()) + 1 if p.dtype.kind in "iu" and p.size and p.min() >= 0 else None)
            return sizes
        if path == "unique" and isinstance(out, tuple):
            ar, axis = np.asarray(arg(0, "ar")), arg(4, "axis")
            sizes = [None]
            if arg(1, "return_index", False):
                sizes.append(ar.size if axis is None else ar.shape[axis])
            if arg(2, "return_inverse", False):
                sizes.append(len(out[0]) if axis is None else np.shape(out[0])[axis])
            return sizes + [None] * (len(out) - len(sizes))
    except Exception:
        return None
    return None


# What a computation's output element was computed from, as a digest that joins its key (issue 42,
# wave 4): without it a value's key was its class and its value only, so a result computed in Python
# and passed through the reference's own function where that function is an identity (``max`` of
# ``[hi]``, ``cumsum`` of ``[t]``, ``abs`` of an absolute value, ``maximum`` of a result already
# clipped, ``shape`` of a zero matrix of the right size) got the reference's perturbation.  Each
# digest is a multiset hash (a wrapping sum of mixed element words), so it does not depend on how
# the call was made: an elementwise function's element by its inputs' elements (ufuncs and
# _BROADCAST, broadcast, in any order: ``maximum(x, 0)`` is ``maximum(0, x)``), a reduction's by
# the slice it reduces (``axis``, ``keepdims``, per column or whole), a cumulative one's by its
# prefix, a product's (``dot``, ``matmul``...) by the pairs it multiplies (the same product of the
# inputs' words: ``dot`` of a row and a column is ``matmul``'s element), a query's by its whole
# input.  Every other function's output is keyed by its first argument's elements in order
# (_ordered: ``sort`` of a list sorted in Python is another input); an index result's by the slice it
# indexes (_index_inputs); a vectorize'd callable's elementwise in its arguments, and a tuple
# result's parts as _part_inputs says.
_REDUCTIONS = frozenset({"sum", "prod", "max", "min", "amax", "amin", "mean", "average", "median", "std", "var", "any", "all",
                         "ptp", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanmedian", "nanstd", "nanvar",
                         "linalg.norm", "linalg.vector_norm", "linalg.matrix_norm", "count_nonzero"})
_CUMULATIVE = frozenset({"cumsum", "cumprod", "nancumsum", "nancumprod", "cumulative_sum", "cumulative_prod"})
_ELEMENTWISE = frozenset({"astype", "copy", "asanyarray", "ascontiguousarray", "asfortranarray"})  # (on their first argument)
_REDUCE_KW = frozenset({"axis", "dtype", "keepdims", "out", "initial", "ddof", "overwrite_input", "ord"})
_AXIS_AT = {"linalg.norm": 2}  # (where a reduction's axis is not its second argument)
# elementwise functions that are not ufuncs: every argument broadcast (clip's bounds, where's
# condition, round's decimals); interp is elementwise in its first argument only
_BROADCAST = frozenset({"round", "around", "clip", "where", "isclose", "nan_to_num", "real", "imag", "angle", "sinc",
                        "i0", "fix", "real_if_close", "copysign", "heaviside", "isreal", "iscomplex"})
_PRODUCTS = frozenset({"dot", "matmul", "inner", "vdot", "linalg.matmul", "linalg.vecdot"})  # (the digest's own product)
_ELEMENTWISE_FIRST = frozenset({"interp", "isin", "in1d"})
# functions along an axis (default the last; the value: where ``axis`` is in their arguments): each
# output element by its slice of the first argument, in order (a sort per row is sort with axis=-1;
# sort of a list sorted in Python is another input)
_ALONG = {"sort": 1, "partition": 2, "diff": 2, "unwrap": 2, "trapz": 3, "trapezoid": 3}


def _words(x):
    """The mixed words of an argument's elements, in its shape; None where it is not numbers or text."""
    try:
        a = np.asarray(x)
    except Exception:
        return None
    if a.dtype.kind not in "biufcUS":
        return None
    return _mix(_bits(a) ^ _SALT_WORD).reshape(a.shape)


def _inputs(fn, path, args, kwargs, out):
    """Per element of ``out`` (flat, uint64), a digest of what it was computed from; None where the
    function has none (see above)."""
    try:
        shape = np.shape(out)
        if path == _MADE:
            return _made_inputs(args, kwargs, out)
        first = _first(fn, args, kwargs)
        if path in _PRODUCTS and len(args) >= 2 and not isinstance(out, tuple):
            a, b = _words(args[0]), _words(args[1])
            if a is None or b is None:
                return None
            if path == "inner":
                got = np.inner(a, b)
            elif path == "vdot":
                got = np.dot(a.reshape(-1), b.reshape(-1))
            else:
                got = np.matmul(a, b) if a.ndim and b.ndim else a * b
            got = np.asarray(got, dtype=np.uint64)
            return None if got.shape != shape else got.reshape(-1)
        # (a gufunc, matmul's kind, is no elementwise function)
        ufunc = type(fn) is np.ufunc and fn.signature is None and fn.nout == 1 and "where" not in kwargs
        if (ufunc or path in _BROADCAST) and not isinstance(out, tuple):
            return _elementwise(args[:fn.nin], {}, shape) if ufunc else _elementwise(*_without_defaults(fn, args, kwargs), shape)
        if path in _ALONG and first is not None:
            w, at = _words(first), _ALONG[path]
            axis = kwargs["axis"] if "axis" in kwargs else args[at] if len(args) > at else -1
            return None if w is None or not w.ndim else _along(w, axis, shape)
        if path in _ELEMENTWISE_FIRST and first is not None:
            w = _words(first)
            return None if w is None else np.broadcast_to(w, shape).reshape(-1)
        if path in _ELEMENTWISE and first is not None:
            w = _words(first)
            return None if w is None or w.shape != shape else w.reshape(-1)
        if path in _QUERIES:
            w = _words(first)
            return None if w is None else np.full(max(1, int(np.prod(shape))), np.sum(w), dtype=np.uint64)
        if path in _QUANTILES and first is not None:
            return _quantile_inputs(first, args[1] if len(args) > 1 else kwargs.get("q"), shape)
        if path not in _REDUCTIONS and path not in _CUMULATIVE or first is None or set(kwargs) - _REDUCE_KW - {"a", "x"}:
            return _ordered(first) if path is not None and first is not None and not isinstance(out, tuple) else None
        w = _words(first)
        if w is None:
            return None
        at = _AXIS_AT.get(path, 1)
        axis = kwargs["axis"] if "axis" in kwargs else args[at] if len(args) > at else None
        if path in _CUMULATIVE:
            got = np.cumsum(w.reshape(-1) if axis is None else w, axis=0 if axis is None else axis, dtype=np.uint64)
        else:
            got = np.sum(w, axis=axis, keepdims=bool(kwargs.get("keepdims", False)), dtype=np.uint64)
        return None if np.shape(got) != shape else np.asarray(got, dtype=np.uint64).reshape(-1)
    except Exception:
        return None


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_QUANTILES = frozenset({"quantile", "percentile", "nanquantile", "nanpercentile"})


def _quantile_inputs(first, q, shape):
    """A quantile's digest: its input in order, and the one ``q`` each output element is for (the
    output's leading axes are ``q``'s), so ``quantile(x, [q])[0]`` is ``quantile(x, q)`` (honest forms,
    round 10: ``q`` and ``[q]`` were other arguments)."""
    base = _ordered(first)
    qa = np.asarray(q, dtype=np.float64) if q is not None else None
    if base is None or qa is None or qa.size == 0:
        return None
    size = max(1, int(np.prod(shape)))
    if size % qa.size:
        return None
    words = np.array([_arg_word(float(v)) for v in qa.reshape(-1).tolist()], dtype=np.uint64)
    return np.repeat(_mix(words ^ base[0]), size // qa.size)


def _along(w, axis, shape):
    """Per element of an output of ``shape``, the ordered digest of its slice of ``w`` along
    ``axis`` (None: flattened), where that output keeps the axis or drops it; else None."""
    if axis is None:
        w, axis = w.reshape(-1), 0
    pos = np.arange(w.shape[axis], dtype=np.uint64) * _GOLDEN
    pos = pos.reshape([-1 if k == axis % w.ndim else 1 for k in range(w.ndim)])
    h = np.sum(_mix(w ^ pos), axis=axis, keepdims=True, dtype=np.uint64)
    if len(shape) == w.ndim - 1:
        h = np.squeeze(h, axis=axis)
    try:
        return np.ascontiguousarray(np.broadcast_to(h, shape)).reshape(-1)
    except ValueError:
        return None


_MADE = "()"  # (the path of a call of a callable a computation returned: vectorize's)
# functions whose k-th output part is made from their k-th argument alone
_PER_ARGUMENT = frozenset({"meshgrid", "broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d", "ix_"})


def _elementwise(args, kwargs, shape):
    """Per element of an output of ``shape`` (flat), the multiset digest of its arguments' elements,
    broadcast (the positional ones and the keywords other than ``out``); None where one is not
    numbers or text, or does not broadcast to ``shape``."""
    acc = None
    for x in [*args, *(v for k, v in kwargs.items() if k != "out")]:
        w = _words(x)
        if w is None:
            return None
        acc = w if acc is None else acc + w  # (a wrapping sum, broadcast)
    return None if acc is None else np.ascontiguousarray(np.broadcast_to(acc, shape)).reshape(-1)


def _without_defaults(fn, args, kwargs):
    """``args`` and ``kwargs`` less the numbers given their default's value (``isclose(x, y,
    rtol=1e-05)`` is ``isclose(x, y)``, ``round(x, 0)`` is ``round(x)``: the same result, so the same
    digest; honest forms, round 7: an answer spelling out a default was ``library_unused``)."""
    names, defaults = _params(fn)

    def default(name, v):
        d = defaults.get(name, _NO_DEFAULT)
        t = type(v)
        return t in (bool, int, float) and type(d) in (bool, int, float) and (t is bool) == (type(d) is bool) and v == d

    kept = [v for i, v in enumerate(args) if not (i and i < len(names) and default(names[i], v))]
    return kept, {k: v for k, v in kwargs.items() if not default(k, v)}


_NO_DEFAULT = object()


def _made_inputs(args, kwargs, out):
    """A vectorize'd callable's digest: elementwise in its arguments, as a ufunc's (it maps each
    element); where they do not broadcast to its output (a ``signature``, ``excluded`` arguments),
    its first argument in order."""
    try:
        got = _elementwise(args, kwargs, np.shape(out))
    except Exception:
        got = None
    if got is not None or not args:
        return got
    words = [w for w in (_arg_word(v) for v in [*args[1:], *(v for k, v in kwargs.items() if k != "out")]) if w is not None]
    return _join(_ordered(args[0]), _mix1((sum(words) ^ _SALT) & _M64) if words else None)


def _part_inputs(fn, path, args, kwargs, out):
    """Per part of a tuple (or list) result that is not a shape's nor indices, the digest of what it
    was computed from (None where none): a ufunc's parts (``divmod``, ``modf``, ``frexp``) and a
    vectorize'd callable's elementwise in its inputs; ``meshgrid``'s, ``broadcast_arrays``' and
    ``atleast_*d``'s part k by its argument k in order; every other function's (``linalg.eig``,
    ``svd``, ``qr``, ``slogdet``, ``lstsq``, ``histogram``, ``split``...) by its first argument in
    order, one digest for all parts.  Before it (issue 42) these keyed by value only, so a result
    computed in Python and passed through such a function where it is an identity (``modf`` of a
    fraction, ``divmod`` by 1, ``eig`` of a diagonal) got the reference's perturbation."""
    try:
        if path == _MADE or type(fn) is np.ufunc and fn.signature is None and "where" not in kwargs:
            if path == _MADE:
                return [_made_inputs(args, kwargs, x) for x in out]
            return [_elementwise(args[:fn.nin], {}, np.shape(x)) for x in out]
        first = _first(fn, args, kwargs)
        if path in _PER_ARGUMENT and len(args) == len(out) and not kwargs.keys() - {"indexing", "sparse", "copy", "subok"}:
            return [_ordered(a) for a in args]
        ctx = _ordered(first) if first is not None else None
        return [ctx] * len(out)
    except Exception:
        return [None] * len(out)


def _index_inputs(path, args, kwargs, out, part=False, fn=None):
    """The digest of an index result's input (flat, uint64): each element by the slice of its
    first argument it indexes, in order (``argmax`` along ``axis``, or of the whole, flattened:
    an argmax per row is the row's slice), else the whole first argument in order; None where
    there is none."""
    try:
        if path in ("digitize", "searchsorted") and len(args) >= 2 and not part:
            # (elementwise in the values placed, by the whole of the sorted array or the bins)
            values, table = (args[0], args[1]) if path == "digitize" else (args[1], args[0])
            w, t = _words(values), _ordered(table)
            if w is None or t is None or w.shape != np.shape(out):
                return None
            return (w + t[0]).reshape(-1)
        first = _first(fn, args, kwargs)
        w = _words(first)
        if w is None or not w.size:
            return None
        if path in ("argmax", "argmin", "argsort", "argpartition") and not part and "keepdims" not in kwargs:
            at = 2 if path == "argpartition" else 1
            default = None if path in ("argmax", "argmin") else -1
            axis = kwargs["axis"] if "axis" in kwargs else args[at] if len(args) > at else default
            return _along(w, axis, np.shape(out))
        return _ordered(first)
    except Exception:
        return None


# Every argument that decides a result is in its key (issue 42, round 3).  The digests above hold
# the arguments each kind of function maps element by element (a ufunc's inputs, _BROADCAST's, a
# product's two) or reduces (a reduction's slices, a cumulative function's prefixes, a function
# along an axis); before this, every other argument was left out: the rest of an elementwise-first
# function's (interp's ``xp`` and ``fp``, isin's test elements), of a reduction's (``initial``,
# ``ddof``, ``ord``, ``weights``, ``where``), of a function along an axis (partition's ``kth``, diff's
# ``n``, trapz's ``dx``) and every argument but the first of every other function (histogram's
# ``bins`` and ``weights``, lstsq's and solve's ``b``, take's indices, roll's shift, repeat's and
# tile's counts, choose's and select's choices, intersect1d's second set, eye's offset, an in-place
# function's source and indices: those keyed no digest at all).  So an answer called the reference's
# function on the task's own first input with arguments of its choosing that made the call an
# identity or a constant (``roll(x, 0)``, ``take(x, range(n))``, ``choose(i, [r, r, r])`` of a
# Python result ``r``, ``histogram(x, 1, weights=...)`` set to Python's counts, ``interp`` at the
# query points themselves, ``put`` of nothing on a Python result), did the task's work in Python
# and got the reference's perturbation.  Now each such argument that is numbers (a number, a bool,
# an array or a nested list of them) joins the key as a multiset word (position and name do not
# matter: ``take(x, idx)`` is ``take(x, indices=idx)``), unless giving it its default changes
# nothing in the result (``max(x, initial=-inf)`` is ``max(x)``, ``norm(x, 2)`` of a vector is
# ``norm(x)``, ``eye(n, n, k)`` is ``eye(n, k=k)``: the function is called again without it, only
# in the record and counterfactual modes).  Not keyed: where the values go along an axis
# (``axis``...: a reduction's or a sort's slices hold it already), how they are stored or checked
# (``dtype``, ``out``, ``order``, ``copy``), which parts are returned (``return_*``,
# ``full_matrices``), and text (``mode``, ``side``, ``method``).  A tolerance (``rcond``, ``tol``)
# is keyed where it changes the result (``matrix_rank(a, tol=t)`` can be made to return any rank).  The shape of a reshape (``reshape``, ``ravel``) is its output's, whatever
# way it was asked (``-1``, a tuple or nothing); a transposition's (``transpose``, ``swapaxes``,
# ``moveaxis``...) is the permutation it makes, read from a call on a small probe of the same rank.
_NOT_KEYED = frozenset({"axis", "axes", "axis1", "axis2", "source", "destination", "start", "keepdims", "out", "dtype",
                        "order", "casting", "subok", "copy", "kind", "stable", "overwrite_input", "overwrite_a",
                        "overwrite_b", "check_finite", "like", "device", "full_matrices", "compute_uv", "return_index",
                        "return_inverse", "return_counts", "return_indices", "indexing", "sparse", "ndmin", "signature",
                        "otypes", "excluded", "cache"})
# parameters of the table's functions that have no signature NumPy can tell (C functions), by name
_C_PARAMS = {"concatenate": ("arrays", "axis", "out"), "copyto": ("dst", "src", "casting", "where"),
             "putmask": ("a", "mask", "values"), "lexsort": ("keys", "axis"), "unravel_index": ("indices", "shape", "order"),
             "bincount": ("x", "weights", "minlength"), "zeros": ("shape", "dtype", "order"), "ones": ("shape", "dtype", "order"),
             "empty": ("shape", "dtype", "order"), "arange": ("start", "stop", "step", "dtype"), "where": ("condition", "x", "y"),
             "dot": ("a", "b", "out"), "vdot": ("a", "b"), "inner": ("a", "b"), "matmul": ("x1", "x2"),
             "array": ("object", "dtype"), "asarray": ("a", "dtype", "order"), "can_cast": ("from_", "to", "casting"),
             "frombuffer": ("buffer", "dtype", "count", "offset")}
_PARAMS = {}  # id of a function -> (its positional parameters' names, {name: default})
_WRITES = frozenset({"out", "overwrite_input", "overwrite_a", "overwrite_b"})
_EMPTY_ARG = 0xA0761D6478BD642F
_RAGGED = 0xE7037ED1A0B428DB


def _first(fn, args, kwargs):
    """A call's first argument, given by position or by its parameter's name (``a=``, ``x=``,
    ``arr=``...); None where there is none."""
    if args:
        return args[0]
    if "a" in kwargs:
        return kwargs["a"]
    names = _params(fn)[0] if fn is not None and type(fn) is not np.ufunc else ()
    return kwargs.get(names[0]) if names else None


def _params(fn):
    got = _PARAMS.get(id(fn))
    if got is None:
        try:
            sig = inspect.signature(fn)
            kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            got = (tuple(p.name for p in sig.parameters.values() if p.kind in kinds),
                   {p.name: p.default for p in sig.parameters.values() if p.default is not p.empty})
        except (TypeError, ValueError):
            got = (_C_PARAMS.get(getattr(fn, "__name__", ""), ()), {})
        _PARAMS[id(fn)] = got
    return got


def _arg_word(v):
    """An argument's word for a key (a Python int): its elements in order and its rank, as
    _ordered's digest; None where it is not numbers (None, text, a type, a callable...)."""
    t = type(v)
    if t is bool or t is int or t is float:
        if t is int and not -(1 << 63) <= v < 1 << 63:
            return None
        return _mix1(_mix1(_bits1(v) ^ _SALT))  # (_ordered of the value as a 0-d array)
    if v is None or t is str or t is bytes or isinstance(v, (type, np.dtype, slice)) or callable(v) and not isinstance(v, np.ndarray):
        return None
    try:
        w = _words(v)
        if w is not None and not w.size:
            return _mix1(_EMPTY_ARG ^ w.ndim)
        got = _ordered(v)
    except Exception:
        return None
    return None if got is None else int(got[0])


def _same(a, b):
    """Whether two results are the same values, shape and dtype."""
    if isinstance(b, (tuple, list)):
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        x, y = np.asarray(a), np.asarray(b)
        return (x.shape == y.shape and x.dtype == y.dtype
                and bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")))
    except Exception:
        return False


def _extra(cls, fn, path, args, kwargs, out, sizes, before=None):
    """The word of the arguments that decide a result and that its digest (_inputs, _part_inputs,
    _index_inputs) does not hold (see above); None where there are none.  ``before``: an in-place
    function's destination's digest before the call."""
    try:
        base = cls.split("#", 1)[0].lstrip("~")
        tup = isinstance(out, (tuple, list))
        if path == _MADE or path in _QUERIES or path in _BROADCAST and not tup or fn is None:
            return None
        if base == "reshape":
            return None if tup else _mix1(_arg_word(list(np.shape(out))) or _EMPTY_ARG)
        if base == "transpose":
            first = _first(fn, args, kwargs)
            nd = np.ndim(first)
            if nd < 2:
                return None
            probe = np.zeros(tuple(range(2, 2 + nd)), dtype=np.int8)
            shape = np.shape(fn(probe, *args[1:], **{k: v for k, v in kwargs.items() if k != "a"}))
            return _arg_word(list(shape))
        ufunc = type(fn) is np.ufunc
        if ufunc:
            covered = 1 if "where" in kwargs else fn.nin
        elif path in _PRODUCTS and len(args) >= 2 and not tup:
            covered = 2
        elif sizes and path in ("digitize", "searchsorted") and len(args) >= 2:
            covered = 2
        elif path in _PER_ARGUMENT and tup and len(args) == len(out):
            covered = len(args)
        elif path in _QUANTILES:
            covered = 2  # (``q``: in the digest, per output element)
        else:
            covered = 1
        names, defaults = ((), {}) if ufunc else _params(fn)
        first = names[0] if names else "a"
        acc, n = 0, 0
        items = [(names[i] if i < len(names) else None, i, args[i]) for i in range(covered, len(args))]
        items += [(k, None, v) for k, v in kwargs.items() if k != first and k != "a" and not (k == "q" and path in _QUANTILES)]
        # (called again only where that writes nothing: no output array, no input overwritten)
        again = path not in _IN_PLACE and not path.startswith("random.") and not any(
            name in _WRITES and v is not None and v is not False for name, _, v in items)
        called_back = any(callable(v) and not isinstance(v, (np.ndarray, np.generic, type)) for v in (*args, *kwargs.values()))
        for name, i, v in items:
            if name in _NOT_KEYED:
                continue
            if path == "pad" and name == "pad_width":  # (``w`` and ``(w, w)`` are one width: honest forms, round 8)
                try:
                    v = np.broadcast_to(np.asarray(v), (np.ndim(_first(fn, args, kwargs)), 2)).tolist()
                except Exception:
                    pass
            w = _arg_word(v)
            if w is None:
                continue
            # (an argument its default gives the same result does not decide it; nor does a keyword
            # the call gives the same result without: ``pad``'s ``constant_values=0``, round 8; never
            # called again where a call-back would run again: ``apply_along_axis``'s keywords)
            if again and (name in defaults or i is None and not called_back):
                try:
                    if i is None:
                        alt = fn(*args, **{k: u for k, u in kwargs.items() if k != name})
                    else:
                        alt = fn(*args[:i], defaults[name], *args[i + 1:], **kwargs)
                    if _same(alt, out):
                        continue
                except Exception:
                    pass
            acc, n = acc + w, n + 1
        if before is not None:
            acc, n = acc + int(before), n + 1
        return _mix1((acc ^ _SALT) & _M64) if n else None
    except Exception:
        return None


def _join(ctx, extra):
    """A digest (flat uint64, or None) with the word of the other arguments mixed in."""
    if extra is None:
        return ctx
    if ctx is None:
        return np.array([extra], dtype=np.uint64)
    return ctx ^ np.uint64(extra)


def _flat_small(x):
    """``(values, ndim)`` of a small argument of plain numbers (a flat list or tuple of bools, ints
    and floats, or a small bool, int or float array), whose digest plain Python computes faster
    than NumPy; else None."""
    t = type(x)
    if t is list or t is tuple:
        if not 0 < len(x) <= _SMALL:
            return None
        for v in x:
            tv = type(v)
            if tv is not float and tv is not bool and (tv is not int or not -(1 << 53) <= v <= 1 << 53):
                return None
        return x, 1
    if t is np.ndarray and 0 < x.size <= _SMALL and x.dtype.kind in "biuf":
        return x.ravel().tolist(), x.ndim
    return None


def _ordered(first):
    """Every other function's digest: its first argument's elements in order, one digest for the
    whole output (``sort`` of a list already sorted in Python, ``transpose`` of a Python
    transposition, ``solve`` of an identity are other inputs)."""
    small = _flat_small(first)
    if small is not None:  # (the same digest in plain Python: see _SMALL)
        vals, ndim = small
        h = 0
        for k, v in enumerate(vals):
            h += _mix1(_mix1(_bits1(v) ^ _SALT) ^ (k * 0x9E3779B97F4A7C15 & _M64))
        return np.array([(h & _M64) ^ ndim], dtype=np.uint64)
    w = _words(first)
    if w is None and type(first) in (list, tuple) and first:
        # a ragged sequence (``concatenate((x, y))`` of unequal lengths): its parts' digests in
        # order (round 3: it had none, so its result was keyed by value only, and the reference's
        # function on a Python result cut in unequal parts got the reference's perturbation)
        parts = [_ordered(p) for p in first]
        if any(p is None for p in parts):
            return None
        h = sum(_mix1(int(p[0]) ^ ((k + 1) * 0x9E3779B97F4A7C15 & _M64)) for k, p in enumerate(parts)) & _M64
        return np.array([_mix1(h ^ _RAGGED)], dtype=np.uint64)
    if w is None or not w.size:
        return None
    pos = np.arange(w.size, dtype=np.uint64) * _GOLDEN
    return np.array([np.sum(_mix(w.reshape(-1) ^ pos), dtype=np.uint64) ^ np.uint64(w.ndim)], dtype=np.uint64)


class _Counterfactual:
    """One program's mode (see above): what it records, or how it perturbs."""

    def __init__(self, mode):
        self.record = {} if mode.get("record") is True else None
        # (False: keys without the arguments beyond the digests, as before issue 42's round 3; for
        # benchmarks/judge_throughput.py --argument-keys-off, which measures what they cost)
        self.arguments = mode.get("arguments") is not False
        self.count = 0  # keys recorded, or perturbations made
        self.secret = None
        self.keys = None  # class -> (sorted array of keys, set of them); None: every computation
        self.made = {}  # id of a callable a computation returned -> its class
        # ids of arrays this program holds that a perturbation made or fed (a computation on one of
        # them is keyed by its value only: its inputs are not the recorded ones, by construction)
        self.derived = set()
        self._fed = False  # (the computation under way has such an input)
        self._amounts, self._cycles = {}, {}
        # fed computations (see the mode's description above): the digest keys of those perturbed,
        # reported (the reference's run), or those an answer's may be perturbed at (None: any)
        self.fed_record = {} if mode.get("fed_record") is True else None
        self.fed_keys = None
        cf = mode.get("cf")
        if cf is not None:
            self.secret = bytes.fromhex(cf)
            if len(self.secret) < 16:
                raise ValueError("secret too short")
            keys = mode.get("keys")
            if keys is not None:
                self.keys = {}
                for cls, b64 in keys.items():
                    arr = np.frombuffer(base64.b64decode(b64), dtype="<u8").astype(np.uint64)
                    self.keys[str(cls)] = (arr, set(arr.tolist()))
            fed = mode.get("fed")
            if isinstance(fed, dict) and self.fed_record is None:
                self.fed_keys = {}
                for cls, b64 in fed.items():
                    arr = np.frombuffer(base64.b64decode(b64), dtype="<u8").astype(np.uint64)
                    self.fed_keys[str(cls)] = (arr, set(arr.tolist()))

    @property
    def active(self):
        return self.record is not None or self.secret is not None

    def report(self):
        if self.record is not None:
            return {"record": {c: base64.b64encode(np.array(sorted(k), dtype="<u8").tobytes()).decode() for c, k in self.record.items()}}
        if self.secret is not None:
            if self.fed_record is not None:
                return {"cf": self.count, "fed": {c: base64.b64encode(np.array(sorted(k), dtype="<u8").tobytes()).decode()
                                                  for c, k in self.fed_record.items()}}
            return {"cf": self.count}
        return None

    def _keep(self, cls, keys):
        """Record ``keys`` (a set of a computation's keys) under ``cls``, up to MAX_KEYS in all; where
        some of them find no room, the class gets ALL instead (red-team round 7: a reference whose
        first case filled the record left its later cases' computations unrecorded, so real in every
        world: those cases demanded nothing, and an answer that used the library for its first, large
        input only and Python for the others earned 1.0)."""
        got = self.record.setdefault(cls, set())
        new = keys - got
        take = list(new)[: max(0, MAX_KEYS - self.count)]
        got.update(take)
        self.count += len(take)
        if len(take) < len(new):
            got.add(ALL)

    def _fed_hits(self, look, digest, hit):
        """Which elements of a computation fed by a perturbation (``look``: its ``@`` class; ``digest``:
        its elements' keys with what they were computed from; ``hit``: those whose value's key the
        reference recorded) are perturbed: all of ``hit`` in the reference's run (and their digest
        keys reported), only those the reference's run perturbed at the same digest in an answer's."""
        if self.fed_record is not None:
            got = self.fed_record.setdefault(look, set())
            for k in np.asarray(digest, dtype=np.uint64)[np.asarray(hit, dtype=bool)].tolist():
                if len(got) >= MAX_KEYS:
                    break
                got.add(k)
            return hit
        if self.fed_keys is None:
            return hit
        allowed = self.fed_keys.get(look)
        if allowed is None:
            return np.zeros(len(hit), dtype=bool) if isinstance(hit, np.ndarray) else [False] * len(hit)
        if isinstance(hit, np.ndarray):
            return hit & np.isin(np.asarray(digest, dtype=np.uint64), allowed[0])
        return [h and k in allowed[1] for h, k in zip(hit, digest)]

    # -- a computation's result ---------------------------------------------------------------
    def call(self, cls, path, args, kwargs, out, fn=None, before=None):
        """The result of a computation of class ``cls`` (``path``: its NumPy path, for functions
        that return indices and for the digest of its inputs; ``fn``: the function; ``before``: an
        in-place function's destination's digest before the call), recorded or perturbed as the
        mode says."""
        if cls is None or path in _PLAIN:
            return out
        if path == "arange":
            args, kwargs = _arange_keyed(args, kwargs)
        if path in _IN_PLACE and args and isinstance(args[0], np.ndarray):
            dest = args[0]
            extra = _extra(cls, fn, path, args, kwargs, out, None, before) if self.arguments else None
            new = self.value(cls, dest, None, _join(None, extra))
            if new is not dest:
                dest[...] = new
            return out
        if callable(out) and not isinstance(out, (type, np.ndarray, np.generic)):
            self.made[id(out)] = cls + "()"
            return out
        sizes = _index_sizes(path, args, kwargs, out)
        self._fed = bool(self.derived) and self.fed(list(args) + list(kwargs.values()))
        with np.errstate(all="ignore"):
            if isinstance(out, tuple) or type(out) is list:
                # (a shape's parts: its input; an index result's parts, nonzero's: its input in order;
                # any other tuple's parts: see _part_inputs)
                if path in _QUERIES or sizes:
                    ctx = _inputs(fn, path, args, kwargs, 0) if path in _QUERIES else _index_inputs(path, args, kwargs, out, True, fn)
                    ctxs = [ctx] * len(out)
                else:
                    ctxs = _part_inputs(fn, path, args, kwargs, out)
                extra = None if path in _QUERIES or not self.arguments else _extra(cls, fn, path, args, kwargs, out, sizes)
                ctxs = [_join(c, extra) for c in ctxs]
                parts = [self.value(f"{cls}#{k}", x, sizes[k] if sizes and k < len(sizes) else None, ctxs[k]) for k, x in enumerate(out)]
                if _positions(path, args, kwargs) and any(y is not x for x, y in zip(out, parts)):
                    parts = _positions_in_order(parts)
                elif path in _COUNTS:
                    parts = [_non_negative(x, y) for x, y in zip(out, parts)]
                elif path in _WHOLE_PART and len(parts) > _WHOLE_PART[path] and parts[_WHOLE_PART[path]] is not out[_WHOLE_PART[path]]:
                    k = _WHOLE_PART[path]  # (modf's whole part, divmod's quotient: whole numbers, as floor's)
                    parts[k] = _on_grid("floor", (), {}, out[k], parts[k])
                elif path in _ORDERED_PART and len(parts) > _ORDERED_PART[path] and parts[_ORDERED_PART[path]] is not out[_ORDERED_PART[path]]:
                    k = _ORDERED_PART[path]  # (eigh's eigenvalues ascending, svd's singular values largest first)
                    parts[k] = _in_order("linalg.eigvalsh" if path == "linalg.eigh" else path, (), {}, parts[k])
                for x, y in zip(out, parts):
                    self.mark(y, self._fed or y is not x)
                if type(out) is list:
                    return parts
                return type(out)._make(parts) if hasattr(type(out), "_make") else tuple(parts)
            ctx = _index_inputs(path, args, kwargs, out, sizes[0] == "columns", fn) if sizes else _inputs(fn, path, args, kwargs, out)
            if self.arguments:
                ctx = _join(ctx, _extra(cls, fn, path, args, kwargs, out, sizes))
            got = self.value(cls, out, sizes if sizes and sizes[0] == "columns" else sizes[0] if sizes else None, ctx)
            if got is not out and path in _ORDERED:
                got = _whole_shifted(out, _still_moved(path, out, got, _in_order(path, args, kwargs, got)))
            elif got is not out and path in _COUNTS:
                got = _non_negative(out, got)
            elif got is not out and path in _ROUNDING:
                got = _on_grid(path, args, kwargs, out, got)
            elif got is not out and path == "sign":
                got = _signs_kept(out, got)
            elif got is not out and path == "where" and len(args) + len(kwargs) == 3:
                got = _chosen_constants_kept(args, kwargs, out, got)
            self.mark(got, self._fed or got is not out)
            return got

    def fed(self, values):
        """Whether any of ``values`` (one level into lists and tuples) is an array a perturbation
        made or fed."""
        for v in values:
            if id(v) in self.derived or type(v) in (list, tuple) and any(id(u) in self.derived for u in v):
                return True
        return False

    def mark(self, x, derived):
        if derived and isinstance(x, np.ndarray):
            self.derived.add(id(x))

    def value(self, cls, x, size, ctx=None):
        """One array or scalar of a result: the same value (recorded), or its perturbed copy.  Each
        element's key is its class, its value and (``ctx``, flat, where the function has one) the
        digest of what it was computed from; so is its perturbation's (with the secret): the same
        value computed by the same function from the same values is perturbed alike however the call
        was made."""
        if not isinstance(x, (np.ndarray, np.generic, bool, int, float, complex, str)):
            return x
        a = np.asarray(x)
        kind = a.dtype.kind
        if a.size == 0 or kind not in "biufcUS" or (size is not None and kind not in "iu"):
            return x
        if ctx is not None and ctx.size not in (1, a.size):
            ctx = None
        if size is None and a.size <= _SMALL and kind in "biuf":
            return self._small(cls, x, a, kind, ctx)
        plain = _mix(_bits(a) ^ np.uint64(_class_word(cls)))
        keys = plain if ctx is None else _mix(plain ^ ctx)
        if self.record is not None:
            for c, k in ((cls, keys), (cls + "@", plain)) if ctx is not None else ((cls, keys),):
                self._keep(c, set(k.tolist()))
            return x
        look, digest = cls, keys
        if ctx is not None and self._fed:  # (fed by a perturbation: its value's key, "@")
            keys, look = plain, cls + "@"
        if self.secret is None:
            return x
        if self.keys is None:
            if _stays_real(cls):
                return x
            hit = np.ones(keys.size, dtype=bool)
        else:
            known = self.keys.get(look)
            if known is None:
                return x
            if ALL in known[1]:  # (the record was full: every computation of the class)
                hit = np.ones(keys.size, dtype=bool)
            else:
                hit = np.isin(keys, known[0]) if keys.size > 8 else np.array([k in known[1] for k in keys.tolist()], dtype=bool)
        if look is not cls:
            hit = self._fed_hits(look, digest, hit)
        if not hit.any():
            return x
        self.count += 1
        out = np.array(a, copy=True, order="C")  # (C order: reshape(-1) below is a view of it, not a copy)
        idx = np.flatnonzero(hit)
        if size is not None:  # indices: a secret permutation of their range
            out = self._indices(cls, out, idx, size)
        else:
            # (the amount by the digest key, fed computations too: by their value alone, one case's
            # perturbation of a value told the answer every other case's; red-team round 10)
            out = self._move(out, out.reshape(-1), idx, _mix(np.asarray(digest, dtype=np.uint64)[idx] ^ self._amount(cls)))
        return _like(x, out)

    def _small(self, cls, x, a, kind, ctx=None):
        """``value`` of a small bool, int or float result, in plain Python (see _SMALL)."""
        vals = a.reshape(-1).tolist()
        ck = _class_word(cls)
        plain = keys = [_mix1(_bits1(v) ^ ck) for v in vals]
        if ctx is not None:
            cs = ctx.tolist() * len(vals) if ctx.size == 1 else ctx.tolist()
            keys = [_mix1(k ^ c) for k, c in zip(plain, cs)]
        if self.record is not None:
            for c, ks in ((cls, keys), (cls + "@", plain)) if ctx is not None else ((cls, keys),):
                self._keep(c, set(ks))
            return x
        if self.secret is None:
            return x
        look, digest = cls, keys
        if ctx is not None and self._fed:  # (fed by a perturbation: its value's key, "@")
            keys, look = plain, cls + "@"
        known = None if self.keys is None else self.keys.get(look)
        if (known is None if self.keys is not None else _stays_real(cls)):
            return x
        hit = [known is None or ALL in known[1] or k in known[1] for k in keys]
        if look is not cls:
            hit = self._fed_hits(look, digest, hit)
        hits = [i for i, h in enumerate(hit) if h]
        if not hits:
            return x
        if kind in "iu" and any(abs(v) >= 1 << 62 for v in vals):
            return self._numpy_move(cls, x, a, np.array(digest, dtype=np.uint64), np.array([i in hits for i in range(len(vals))]))
        self.count += 1
        amt = int(self._amount(cls))
        for i in hits:
            w = _mix1(digest[i] ^ amt)
            v = vals[i]
            if kind == "f":
                step = (1.0 if w & 1 else -1.0) * (0.1 + 0.4 * ((w >> 11) / 9007199254740992.0))
                vals[i] = v + step if abs(v) < 1e-3 else v * (1.0 + step)
            elif kind == "b":
                vals[i] = not v
            else:
                step = (w >> 8) % 3 + 1
                vals[i] = v + (step if kind == "u" or w & 1 else -step)
        out = (np.array(vals, dtype=np.int64).astype(a.dtype) if kind in "iu" else np.array(vals, dtype=a.dtype)).reshape(a.shape)
        return _like(x, out)

    def _numpy_move(self, cls, x, a, keys, hit):
        self.count += 1
        out = np.array(a, copy=True, order="C")
        idx = np.flatnonzero(hit)
        out = self._move(out, out.reshape(-1), idx, _mix(keys[idx] ^ self._amount(cls)))
        return _like(x, out)

    def _amount(self, cls):
        w = self._amounts.get(cls)
        if w is None:
            w = self._amounts[cls] = _word(cls, self.secret[:64])
        return w

    def _move(self, out, flat, idx, amt):
        kind = out.dtype.kind
        if kind in "fc":
            u = (amt >> _S11).astype(np.float64) / float(1 << 53)
            step = np.where((amt & np.uint64(1)) == 1, 1.0, -1.0) * (0.1 + 0.4 * u)
            v = flat[idx]
            # (a zero, or a value too small to move beyond the judge's tolerance when scaled, moves by the step itself)
            flat[idx] = np.where(np.abs(v) < 1e-3, v + step, v * (1.0 + step))
        elif kind == "b":
            flat[idx] = ~flat[idx]
        elif kind in "iu":
            step = ((amt >> np.uint64(8)) % np.uint64(3) + np.uint64(1)).astype(np.int64)
            if kind == "i":
                step = np.where((amt & np.uint64(1)) == 1, step, -step)
            flat[idx] = (flat[idx].astype(np.int64) + step).astype(out.dtype)
        else:  # strings: one character of each changes (the result may need a wider dtype)
            items = flat.tolist()
            for i, w in zip(idx.tolist(), amt.tolist()):
                items[i] = _alter(items[i], w)
            out = np.array(items).reshape(out.shape)
        return out

    def _indices(self, cls, out, idx, size):
        flat = out.reshape(-1)
        if isinstance(size, list):  # argwhere: each column indexes one axis
            dims = size[1]
            if out.ndim != 2 or out.shape[1] != len(dims):
                return out
            for d, n in enumerate(dims):
                col = idx[idx % out.shape[1] == d]
                flat[col] = self._permute(cls, flat[col], n)
            return out
        flat[idx] = self._permute(cls, flat[idx], size)
        return out

    def _permute(self, cls, v, n):
        if not isinstance(n, (int, np.integer)) or n < 2 or v.size == 0 or v.min() < 0 or v.max() >= n:
            return v
        cycle = self._cycles.get((cls, n))
        if cycle is None:
            order = np.random.Generator(np.random.PCG64(int(self._amount(cls)) ^ int(n))).permutation(int(n))
            cycle = np.empty(n, dtype=np.int64)
            cycle[order] = np.roll(order, -1)  # one cycle through the whole range: no index stays
            self._cycles[(cls, n)] = cycle
        return cycle[v].astype(v.dtype)


_ORDERED = frozenset({"sort", "unique", "sort_complex", "intersect1d", "union1d", "setdiff1d", "setxor1d",
                      "linalg.eigvalsh", "linalg.svdvals", "linalg.svd", "argwhere", "flatnonzero"})
_SETS = frozenset({"intersect1d", "union1d", "setdiff1d", "setxor1d"})  # (sorted and distinct, as unique's)


def _in_order(path, args, kwargs, out):
    """A perturbed result of a function whose values come out sorted (``unique``'s distinct too), put
    back in order: honest answers rely on it (``bisect`` or ``sorted`` over ``sort``'s output, a dict
    of ``unique``'s values), and out of order it would tell the counterfactual run apart (honest
    forms, round 7).  Its values are still the perturbed ones, which only the call computes."""
    if not isinstance(out, np.ndarray) or out.ndim == 0 or out.dtype.kind not in "iufc":
        return out
    if path == "argwhere":  # (round 8: coordinates in row-major order, as rows)
        return out[np.lexsort(out.T[::-1])] if out.ndim == 2 and out.shape[1] else out
    if path in ("linalg.svdvals", "linalg.svd"):  # (round 8: singular values largest first)
        return -np.sort(-out, axis=-1) if out.dtype.kind in "iuf" else out
    if path == "linalg.eigvalsh":
        return np.sort(out, axis=-1) if out.dtype.kind in "iuf" else out
    if path == "unique" or path in _SETS:
        if out.ndim != 1 or path == "unique" and (len(args) > 1 or any(k != "ar" for k in kwargs)):
            return out
        out = np.sort(out)
        if out.dtype.kind in "iu" and out.size > 1:  # (distinct again: ints move by 1..3 and may meet)
            r = np.arange(out.size, dtype=np.int64)
            out = (np.maximum.accumulate(out.astype(np.int64) - r) + r).astype(out.dtype)
        return out
    if path == "sort":
        if len(args) > 2 or any(k not in ("a", "axis") for k in kwargs):
            return out
        return np.sort(out, axis=kwargs.get("axis", args[1] if len(args) > 1 else -1))
    return np.sort(out)


_SHIFTABLE = frozenset({"sort", "sort_complex", "unique", "linalg.eigvalsh", "linalg.svdvals"}) | _SETS


def _still_moved(path, out, moved, ordered):
    """``ordered`` (a perturbed result put back in order) moved as a whole by the perturbation of its
    first element that moved, where putting it in order gave back the real result (``unique`` of
    ``[3, 1, 1]``: 1 moved to 3 and 3 to 1; about one judgement in twenty flaked so): such a call
    would look unchanged, as if the answer had not used it.  A shift keeps the order and the values
    distinct.  Values only (not positions, which a shift could take out of their range)."""
    if path not in _SHIFTABLE or not isinstance(ordered, np.ndarray) or not isinstance(out, np.ndarray):
        return ordered
    m = np.asarray(moved)
    if ordered.shape != out.shape or m.shape != out.shape or not np.array_equal(ordered, out):
        return ordered
    diff = (m.astype(np.complex128) - out.astype(np.complex128)).ravel() if out.dtype.kind == "c" else (
        m.astype(np.float64) - out.astype(np.float64)).ravel()
    nz = np.flatnonzero(diff)
    if not nz.size:
        return ordered
    step = diff[nz[0]]
    with np.errstate(all="ignore"):
        return (ordered + (step if ordered.dtype.kind in "fc" else np.int64(np.rint(step.real)))).astype(ordered.dtype)


def _positions(path, args, kwargs):
    """Whether a call returns the positions of non-zero elements as one index array per axis."""
    return path == "nonzero" or path == "where" and len(args) + len(kwargs) == 1


def _positions_in_order(parts):
    """Perturbed positions (``nonzero``'s index arrays, one per axis) put back in the order the
    function promises, row-major (as pairs where there are several axes): honest answers sort or
    bisect them, or compare them with ``range`` (honest forms, round 8), and out of order they would
    tell the counterfactual run apart.  The positions are still the perturbed ones."""
    if not parts or not all(isinstance(p, np.ndarray) and p.ndim == 1 and p.shape == parts[0].shape for p in parts):
        return parts
    order = np.lexsort(parts[::-1])
    return [p[order] for p in parts]


_COUNTS = frozenset({"count_nonzero", "bincount", "size", "shape", "histogram"})
_ORDERED_PART = {"linalg.eigh": 0, "linalg.svd": 1}  # (the part of a tuple result that comes in order)


def _non_negative(out, got):
    """A perturbed count (``count_nonzero``, ``bincount``, a size or a shape's part) kept a count:
    an int the perturbation moved below zero moves up by as much instead.  Honest answers rely on
    it (``max(0, n)``, ``range(n)``; honest forms, round 8), and a negative count would tell the
    counterfactual run apart.  It is still moved, by the same secret amount."""
    if got is out:
        return got
    a, real = np.asarray(got), np.asarray(out)
    if a.dtype.kind != "i" or a.shape != real.shape or not (a < 0).any():
        return got
    fixed = np.where(a < 0, 2 * real.astype(np.int64) - a, a).astype(a.dtype)
    return _like(got, fixed)


# (floor_divide: whole numbers too; honest forms, round 10: int() of its values)
_ROUNDING = frozenset({"round", "around", "rint", "fix", "floor", "ceil", "trunc", "floor_divide"})


def _on_grid(path, args, kwargs, out, got):
    """A perturbed result of a rounding function put back on its grid (whole numbers, or
    ``decimals`` places for ``round``), moved by one step of the grid where that undid the
    perturbation: honest answers rely on what the function promises (``round(float(v), 2)`` or
    ``int(v)`` of its values, honest forms, round 8), and off the grid the values would tell the
    counterfactual run apart.  The values are still the perturbed ones, which only the call computes."""
    if path in ("round", "around"):
        d = args[1] if len(args) > 1 else kwargs.get("decimals", 0)
        if type(d) is not int and not isinstance(d, np.integer) or not -300 < int(d) < 300:
            return got
        d = int(d)
    else:
        d = 0
    a, real = np.asarray(got), np.asarray(out)
    if a.dtype.kind != "f" or a.shape != real.shape:
        return got
    with np.errstate(all="ignore"):
        g = np.round(a, d)
        moved = (a != real) & (g == real) & np.isfinite(a)
        if moved.any():
            step = np.round(np.where(a > real, 1.0, -1.0) * 10.0 ** -d, max(d, 0))
            g = np.where(moved, np.round(real + step, d), g)
        g = np.where(np.isfinite(a), g, a).astype(a.dtype, copy=False)
    return _like(got, g)


def _arange_keyed(args, kwargs):
    """``arange``'s arguments as its key sees them: ``(stop,)``, ``(start, stop)`` or ``(start, stop,
    step)``, a start of 0 and a step of 1 left out however they were given (``arange(0, n)``,
    ``arange(n, step=1)`` and ``arange(start=0, stop=n)`` are ``arange(n)``; honest forms, round 10:
    NumPy has no defaults to read for it, so they were other keys)."""
    if len(args) > 3:
        return args, kwargs
    given = dict(zip(("start", "stop", "step"), args))
    given.update((k, v) for k, v in kwargs.items() if k in ("start", "stop", "step"))
    if "stop" not in given:  # (one value is the stop, as NumPy reads ``arange(n)`` and ``arange(start=n)``)
        given["start"], given["stop"] = 0, given.get("start")
    start, stop, step = given.get("start", 0), given["stop"], given.get("step", 1)
    if stop is None:
        return args, kwargs
    try:
        plain_start, plain_step = start == 0, step == 1
    except Exception:
        return args, kwargs
    rest = {k: v for k, v in kwargs.items() if k not in ("start", "stop", "step")}
    if plain_step is True:
        return ((stop,) if plain_start is True else (start, stop)), rest
    return (start, stop, step), rest


_WHOLE_PART = {"modf": 1, "divmod": 0}


def _whole_shifted(out, got):
    """A perturbed sorted result (``sort``, ``unique``, ``union1d``...) whose real values are all
    whole floats, moved as a whole by a whole number instead (the rounded move of its first element
    that moved, one at least): whole, still in order and distinct, as the input's own values were
    (honest forms, round 10: ``int()`` of ``union1d``'s values).  Others are left as they are."""
    a, real = np.asarray(got), np.asarray(out)
    if a.dtype.kind != "f" or a.shape != real.shape or not a.size:
        return got
    with np.errstate(all="ignore"):
        if not (np.isfinite(real).all() and (real == np.round(real)).all()):
            return got
        moved = np.flatnonzero(a.reshape(-1) != real.reshape(-1))
        if not moved.size:
            return got
        d = float(a.reshape(-1)[moved[0]] - real.reshape(-1)[moved[0]])
        k = float(np.round(d)) or (1.0 if d > 0 else -1.0)
        return _like(got, (real + k).astype(a.dtype, copy=False))


def _signs_kept(out, got):
    """``sign``'s perturbed result kept among -1, 0 and 1: each moved element goes to the next sign
    up or down (as its perturbation went), round the three.  Honest answers rely on what ``sign``
    promises (``int(s)``, a dict keyed by -1, 0, 1; honest forms, round 10)."""
    a, real = np.asarray(got), np.asarray(out)
    if a.dtype.kind not in "fi" or a.shape != real.shape:
        return got
    with np.errstate(all="ignore"):
        moved = (a != real) & np.isin(real, (-1, 0, 1))
        if not moved.any():
            return got
        up = np.where(a > real, 1, -1)
        g = np.where(moved, (real.astype(np.int64) + 1 + up) % 3 - 1, a).astype(a.dtype, copy=False)
    return _like(got, g)


def _chosen_constants_kept(args, kwargs, out, got):
    """``where(c, x, y)``'s perturbed result with the elements it took from a Python number (``x`` or
    ``y``) as they were: a constant the call selects, not a value it computes, so an answer may
    write it in Python (``0.0 if s == 0 else copysign(v, s)``; honest forms, round 7).  The others
    stay perturbed: an array branch's elements, and a scalar the library computed has its own key
    where it was made."""
    vals = list(args) + [kwargs[k] for k in ("condition", "x", "y") if k in kwargs]
    cond, x, y = vals if len(vals) == 3 else (None, None, None)
    const = [type(v) in (bool, int, float) for v in (x, y)]
    if cond is None or not any(const) or not isinstance(got, np.ndarray) or np.shape(out) != got.shape:
        return got
    try:
        c = np.broadcast_to(np.asarray(cond, dtype=bool), got.shape)
    except (ValueError, TypeError):
        return got
    keep = (c if const[0] else np.zeros(got.shape, dtype=bool)) | (~c if const[1] else False)
    if not keep.any():
        return got
    if keep.all():  # (every element a constant: the call's real result, not marked as a perturbation's)
        return out
    got = np.array(got, copy=True)
    got[keep] = np.asarray(out)[keep]
    return got


def _like(x, out):
    """``out`` (an array) in the form of the result ``x`` it replaces: an array, a NumPy scalar or a
    Python scalar."""
    if isinstance(x, np.ndarray):
        return out
    if isinstance(x, np.generic):
        return out[()]
    return out.item()


def _alter(text, w):
    """``text`` with one character changed (a digit to another digit, a letter to another letter)."""
    raw = isinstance(text, bytes)
    chars = list(text.decode("latin-1") if raw else text)
    spots = [i for i, c in enumerate(chars) if c.isdigit()] or [i for i, c in enumerate(chars) if c.isalpha()]
    if len(spots) > 1 and chars[spots[0]].isdigit() and chars[spots[0]] != "0":
        spots = spots[1:]  # (a number's leading digit stays: "101" never becomes "001"; honest forms, round 10)
    if spots:
        i = spots[w % len(spots)]
        c = chars[i]
        # another character of the string's own of that class ("1010" stays binary), else any of the class
        own = sorted({chars[j] for j in spots} - {c})
        if own:
            chars[i] = own[(w >> 8) % len(own)]
        else:
            base, span = ("0", 10) if c.isdigit() else ("a", 26) if c.islower() else ("A", 26)
            chars[i] = chr(ord(base) + (ord(c) - ord(base) + 1 + (w >> 8) % (span - 1)) % span)
    else:
        chars.append("_")
    out = "".join(chars)
    return out.encode("latin-1") if raw else out


class Server:
    def __init__(self, fd):
        self.fd = fd
        self.cf = None  # the counterfactual library's state (see _Counterfactual), when the mode asks for one
        self.objects = {}  # handle -> ndarray, or a callable NumPy made (vectorize)
        self.next = 1
        self.fit = True  # fit to serve another program after this one (see serve)
        self.buf = b""  # what was read of the next frame
        self.harness = False  # serving the harness's own connection: it reads results only
        self.calling = None  # the class of the computation under way (its call-backs' arguments are keyed by it)
        self.held = 0  # bytes of the arrays the program holds (see _fits)
        self.room = _ROOM[0] if _ROOM[1] == os.getpid() else None  # (see hold_room)

    # -- the wire -------------------------------------------------------------------------
    def send(self, msg):
        body = _dumps(msg).encode()
        data = _HEAD.pack(len(body)) + body
        while data:
            data = data[os.write(self.fd, data):]

    def recv(self):
        buf = self.buf
        while len(buf) < 4:
            buf = self._more(buf, _CHUNK)
            if buf is None:
                return None
        n = _HEAD.unpack_from(buf)[0]
        if n > MAX_FRAME:
            self.fit = False
            return None  # (the stream cannot be followed past it: the client is cut off)
        end = 4 + n
        while len(buf) < end:
            buf = self._more(buf, max(end - len(buf), _CHUNK))
            if buf is None:
                return None
        self.buf = buf[end:]  # (an honest client sends nothing more before our reply)
        try:
            msg = _loads(buf[4:end])
        except (ValueError, RecursionError):
            self.fit = False
            raise Refused("request is not valid") from None
        if type(msg) is not list or not msg or type(msg[0]) is not str:
            self.fit = False
            raise Refused("request is not valid")
        return msg

    def _more(self, buf, n):
        """``buf`` and what one read brings (up to ``n`` bytes), or None at the end of the input."""
        chunk = os.read(self.fd, n)
        return buf + chunk if chunk else None

    # -- values ---------------------------------------------------------------------------
    def decode(self, v):
        """A request's value: plain data, handles looked up; anything else is refused."""
        t = type(v)
        if v is None or t is bool or t is int or t is float or t is str:
            return v
        if t is list:
            return [self.decode(x) for x in v]
        if t is not dict or len(v) != 1:
            raise Refused("value not accepted by library functions")
        (tag, p), = v.items()
        if tag == "h" or tag == "f":
            obj = self.objects.get(p) if type(p) is int else None
            if obj is None or isinstance(obj, np.ndarray) != (tag == "h"):
                raise Refused("unknown handle")
            return obj
        if tag == "t" and type(p) is list:
            return tuple(self.decode(x) for x in p)
        if tag == "c" and type(p) is list and len(p) == 2 and all(type(x) in (int, float) for x in p):
            return complex(p[0], p[1])
        if tag == "b" and type(p) is str:
            try:
                return bytes.fromhex(p)
            except ValueError:
                raise Refused("bytes not valid") from None
        if tag == "s" and type(p) is list and len(p) == 3:
            return slice(*[self.decode(x) for x in p])
        if tag == "E" and p == 0:
            return Ellipsis
        if tag == "y" and type(p) is str and p in _TYPES:
            return _TYPES[p]
        if tag == "k" and type(p) is int and p >= 0:
            return self.callback(p)
        raise Refused("value not accepted by library functions")

    def encode(self, x):
        """A result as the client gets it: arrays and NumPy's callables as handles."""
        t = type(x)
        if x is None or t is bool or t is int or t is float or t is str:
            return x
        if isinstance(x, np.ndarray):
            return {"h": self.keep(x)}
        if isinstance(x, (np.floating, np.integer)):  # (the client's scalar of that dtype: see scalars.py)
            return {"g": [self.encode(x.item()), x.dtype.name]}
        if isinstance(x, np.generic):
            return self.encode(x.item())
        if t is list:
            return [self.encode(v) for v in x]
        if isinstance(x, tuple):
            vals = [self.encode(v) for v in x]
            fields = getattr(type(x), "_fields", None)
            if fields and all(type(f) is str for f in fields):
                return {"n": [list(fields), vals]}
            return {"t": vals}
        if isinstance(x, (bool, int, float, str)):  # (subclasses NumPy may hand out)
            return self.encode(type(x).__mro__[-2](x))
        if t is complex:
            return {"c": [x.real, x.imag]}
        if t is bytes:
            return {"b": x.hex()}
        if isinstance(x, np.dtype):
            return {"d": x.name}
        if t is slice:
            return {"s": [self.encode(x.start), self.encode(x.stop), self.encode(x.step)]}
        if callable(x) and not isinstance(x, type):
            return {"f": self.keep(x)}
        raise TypeError(f"a result of type {t.__name__} cannot be returned")

    def item(self, v):
        """An element taken out of an array: an array, or a scalar for a 0-d result."""
        if isinstance(v, (np.ndarray, np.generic)) and v.ndim == 0:
            v = v.item()  # (a Python scalar, as the official array's indexing gives)
        return self.encode(v)

    def keep(self, obj):
        if len(self.objects) >= MAX_HANDLES:
            raise MemoryError("too many live arrays")
        n = self._fits(obj)
        h = self.next
        self.next += 1
        self.objects[h] = obj
        self.held += n
        return h

    def _fits(self, out):
        """The bytes ``out`` (an array, or a tuple or list of them) holds; MemoryError, in every mode
        and before the counterfactual library sees it, where it would take the program's arrays past
        their share of the server's room (HOLD_SHARE).  Red-team round 6: the counterfactual library
        needs several times a result's size for its keys and copies, so under the address-space limit
        alone an allocation that fits in the real library failed in the counterfactual one, and a
        program learned which run it was in from a MemoryError."""
        n = _nbytes(out)
        if self.room is not None and self.held + n > self.room:
            raise MemoryError(f"the library's arrays may hold {self.room >> 20} MB: "
                              f"{(self.held + n) >> 20} MB asked")
        return n

    def _free(self, obj):
        self.held -= _nbytes(obj)

    def array(self, h):
        obj = self.objects.get(h) if type(h) is int else None
        if not isinstance(obj, np.ndarray):
            raise Refused("unknown handle")
        return obj

    def callback(self, k):
        """A callable of the program's: NumPy's calls to it go back to the client."""
        self.fit = False  # (the program's code runs in the middle of our requests: no reuse after)

        def call(*args, **kwargs):
            if self.cf is not None and self.calling is not None:
                # (the counterfactual library perturbs what it hands a call-back, not only what the
                # computation returns: a call-back's results are the answer's own Python, so one that
                # returned results computed beforehand got the reference's perturbation of the output;
                # one that computes from what it is given follows the reference's here)
                args = tuple(self.cf.value(self.calling + "<", a, None) for a in args)
            self.send(["cb", k, [self.encode(a) for a in args], {str(n): self.encode(v) for n, v in kwargs.items()}])
            while True:
                msg = self.recv()
                if msg is None:
                    raise _Gone  # (out of NumPy's call; the harness's connection is served next)
                if msg[0] == "ret" and len(msg) == 2:
                    return self.decode(msg[1])
                if msg[0] == "raise" and len(msg) == 3:
                    name = msg[1] if msg[1] in _ERRORS else "RuntimeError"
                    raise getattr(builtins, name)(str(msg[2])[:2000])
                self.handle(msg)  # the callable itself called the library

        return call

    # -- requests -------------------------------------------------------------------------
    def handle(self, msg):
        try:
            reply = ["ok", self.dispatch(msg)]
        except _Gone:
            raise
        except RecursionError:
            self.fit = False
            reply = ["err", "RuntimeError", "nested too deeply"]
        except Exception as e:
            self.fit = False  # (an error may leave what a reset does not see: a fresh server next)
            reply = ["err", _error_name(e), str(e)[:2000]]
        try:
            self.send(reply)
        except ValueError:  # a result JSON cannot carry (it should not happen)
            self.send(["err", "TypeError", "result cannot be returned"])

    def dispatch(self, msg):
        op, frees, args = msg[0], msg[1] if len(msg) > 1 else None, msg[2:]
        if self.harness and op not in ("show", "list"):
            raise Refused(f"request {op!r} is not the harness's")
        if type(frees) is not list:
            raise Refused("request is not valid")
        for h in frees:
            if type(h) is int:
                gone = self.objects.pop(h, None)
                if gone is not None:
                    self._free(gone)
                if self.cf is not None and gone is not None:
                    self.cf.derived.discard(id(gone))
        n = len(args)
        if op == "call" and n == 3 and type(args[0]) is str and type(args[1]) is list and type(args[2]) is dict:
            fn = FUNCTIONS.get(args[0])
            if fn is None:
                raise Refused(f"the library has no function {args[0]!r}")
            a, kw = [self.decode(x) for x in args[1]], {str(k): self.decode(v) for k, v in args[2].items()}
            # (an in-place function's destination as it was: part of its result's key)
            before = (_ordered(a[0]) if self.cf is not None and PATHS.get(args[0]) in _IN_PLACE and a
                      and isinstance(a[0], np.ndarray) else None)
            outer, self.calling = self.calling, CLASSES.get(args[0])
            try:
                out = _where_call(fn, fn.nin, fn.nout, a, kw) if type(fn) is np.ufunc else fn(*a, **kw)
            finally:
                self.calling = outer  # (a call-back's own library calls end before its caller's next call-back)
            self._fits(out)  # (before the counterfactual library's work: the same in every mode)
            if self.cf is not None:
                out = self.cf.call(CLASSES.get(args[0]), PATHS.get(args[0]), a, kw, out, fn, None if before is None else before[0])
            return self.encode(out)
        if op == "fcall" and n == 3 and type(args[1]) is list and type(args[2]) is dict:
            fn = self.objects.get(args[0]) if type(args[0]) is int else None
            if fn is None or isinstance(fn, np.ndarray):
                raise Refused("unknown handle")
            a, kw = [self.decode(x) for x in args[1]], {str(k): self.decode(v) for k, v in args[2].items()}
            outer, self.calling = self.calling, self.cf.made.get(id(fn)) if self.cf is not None else None
            try:
                out = fn(*a, **kw)
            finally:
                self.calling = outer
            self._fits(out)
            if self.cf is not None and id(fn) in self.cf.made:
                out = self.cf.call(self.cf.made[id(fn)], _MADE, a, kw, out)
            return self.encode(out)
        if op == "defs" and n == 2 and type(args[0]) is list and type(args[1]) is list and args[1] and args[1][0] != "defs":
            # arrays the client made under handles of its own (negative), then its request
            for d in args[0]:
                if (type(d) is not list or len(d) != 3 or type(d[0]) is not int or d[0] >= 0 or d[0] in self.objects
                        or type(d[1]) is not str or type(d[2]) is not list):
                    raise Refused("request is not valid")
                fn = FUNCTIONS.get(d[1])
                if fn is None:
                    raise Refused(f"the library has no function {d[1]!r}")
                made = fn(*[self.decode(a) for a in d[2]])
                n = self._fits(made)
                if self.cf is not None:  # (the client defers only constructors; a raw frame may hold more)
                    made = self.cf.call(CLASSES.get(d[1]), PATHS.get(d[1]), [self.decode(a) for a in d[2]], {}, made, fn)
                if not isinstance(made, np.ndarray) or len(self.objects) >= MAX_HANDLES:
                    raise Refused("request is not valid")
                self.objects[d[0]] = made
                self.held += n
            return self.dispatch(args[1])
        if op == "sync" and n == 0:  # (the client's deferred arrays came with it: see the client's flush)
            return self.encode(None)
        if op == "new" and n == 1:
            return self.encode(np.asarray(self.decode(args[0])))
        if op == "dteq" and n == 2 and type(args[0]) is str:
            try:
                return str(np.dtype(args[0])) == str(np.dtype(self.decode(args[1])))
            except TypeError:
                return False
        if op == "dtinfo" and n == 2 and args[1] in ("kind", "itemsize"):
            return getattr(np.dtype(str(args[0])), args[1])
        if not n or op not in ("attr", "repr", "str", "len", "iter", "get", "set", "op", "list", "show", "copy"):
            raise Refused(f"unknown request {op!r}")
        a = self.array(args[0])
        if op == "attr" and n == 2 and args[1] in _ATTRS:
            v = getattr(a, args[1])
            if args[1] == "dtype":
                return {"d": v.name}
            if self.cf is not None and args[1] in _QUERIES:
                v = self.cf.call(ATTR_CLASSES.get(args[1], args[1]), args[1], [a], {}, v)
            elif self.cf is not None and id(a) in self.cf.derived:
                self.cf.mark(v, True)  # (.T of a perturbed array)
            return self.encode(v)
        if op == "get" and n == 2:
            got = a[self.decode(args[1])]
            if self.cf is not None and id(a) in self.cf.derived:
                self.cf.mark(got, True)
            return self.item(got)
        if op == "set" and n == 3:
            a[self.decode(args[1])] = self.decode(args[2])
            return None
        if op == "op" and n == 4 and args[1] in _OPS and type(args[3]) is bool:
            other, f = self.decode(args[2]), _OPS[args[1]]
            got = f(other, a) if args[3] else f(a, other)
            if self.cf is not None and self.cf.fed([a, other]):
                self.cf.mark(got, True)
            return self.encode(got)
        if n == 1:
            if op == "copy":  # (copy.copy / copy.deepcopy of an array, as NumPy's own: its data copied)
                got = a.copy()
                if self.cf is not None and id(a) in self.cf.derived:
                    self.cf.mark(got, True)
                return self.encode(got)
            if op == "repr":
                return f"{ARRAY_NAME}({a.tolist()!r})"
            if op == "str":
                return str(a)
            if op == "len":
                return len(a)
            if op == "iter":
                return [self.item(v) for v in a]
            if op == "list":
                return self.encode(a.tolist())
            if op == "show":
                return [str(a), self.encode(a.tolist())]
        raise Refused(f"request {op!r} is not valid")

    def take_mode(self, mode):
        """Take the program's mode (JSON bytes, see _Counterfactual); False when it is not one (the
        program then finds no server)."""
        try:
            msg = json.loads(mode)
            if type(msg) is not dict:
                return False
            _set_salt(msg.get("salt"))
            cf = _Counterfactual(msg)
        except (ValueError, TypeError, AttributeError):
            return False
        self.cf = cf if cf.active else None
        return True

    def serve(self):
        while True:
            try:
                msg = self.recv()
            except Refused as e:
                self.send(["err", "TypeError", str(e)])
                continue
            if msg is None:
                return
            self.handle(msg)


def serve(fd, harness=None, mode=b""):
    """Answer one client on ``fd`` until it closes its end; then, if given, the harness on
    ``harness`` (the strict harness's own connection, issue 42): it reads the arrays the answer
    returned (``show`` and ``list`` only), with the program's handles, once the answer's process
    has closed ``fd``.  A connection of its own, so nothing the answer left on ``fd`` (a partial
    frame, requests whose replies it never read) stands between the harness and its replies.

    Args:
        fd: the socket of the program's end.
        harness: the socket of the harness's end, or None.
        mode: the program's mode (JSON, see _Counterfactual; empty: the real library), which the
            worker hands the server with the program's sockets, on its own control socket: it
            never passes through the program's.  What the server has to say about it afterwards
            is :func:`report`'s.

    Returns:
        True when nothing happened that ``reset`` might not undo (no error, call-back or refused
        request): the server may serve another program after ``reset()``.
    """
    server = Server(fd)
    _REPORT[0] = None
    try:
        if mode and not server.take_mode(mode):
            return False
        for conn in (fd, harness):
            if conn is None:
                continue
            server.fd, server.buf, server.harness = conn, b"", conn == harness
            try:
                server.serve()
            except (ConnectionError, _Gone):
                # the program went away before reading a reply (a broken pipe), with replies it never
                # read (the connection reset), or in the middle of a call-back
                server.fit = False
    finally:
        server.objects.clear()  # every handle goes now, cycles or not
        if server.cf is not None:
            _REPORT[0] = server.cf.report()
            server.cf = None
    return server.fit


def _nbytes(x):
    if isinstance(x, np.ndarray):
        return x.nbytes
    if isinstance(x, (tuple, list)) and len(x) < 4096:
        return sum(v.nbytes for v in x if isinstance(v, np.ndarray))
    return 0


def hold_room():
    """The bytes a program's arrays may hold in this server (see HOLD_SHARE): a share of what its
    address-space limit leaves above its size when it is first asked (the worker asks before the
    server's filter is on: it reads /proc); None without a limit, or where it was not read first."""
    if _ROOM[1] != os.getpid():
        room = None
        try:
            import resource

            limit = resource.getrlimit(resource.RLIMIT_AS)[0]
            if limit != resource.RLIM_INFINITY:
                with open("/proc/self/statm", "rb") as f:
                    size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
                room = max(0, limit - size) // HOLD_SHARE
        except Exception:  # (no /proc, no resource: no share; the address-space limit alone)
            room = None
        _ROOM[:] = room, os.getpid()
    return _ROOM[0]


def report():
    """What the last program's server has to say about its mode, as JSON bytes (b"" when nothing):
    the keys it recorded, or how many results it perturbed (the worker passes it to the judge)."""
    r, _REPORT[0] = _REPORT[0], None
    return b"" if r is None else _dumps(r).encode()


if __name__ == "__main__":
    load()
    serve(int(sys.argv[1]))
