"""NumPy-like scalars for the strict profile's libraries (standard library only).

A NumPy function hands out ``numpy.float64`` or ``numpy.int64`` for a 0-d result, and code written
for NumPy calls ``.item()``, ``.tolist()``, ``.ndim``, ``.shape``, ``.size`` or ``.dtype`` on it
(the official library returns NumPy's scalars as they are).  Strict keeps NumPy out of the answer's
process, so its library functions return these subclasses of ``float`` and ``int`` instead: the
value, plus the few attributes a NumPy scalar has and Python's own numbers lack.  Arithmetic keeps
the kind (``int64 / int64`` is a ``float64``), as NumPy's does.  A scalar carries nothing but its
value: the harness reads it as a plain ``float``/``int`` with the base type's own C method.

Copied into every written library as ``_scalars.py``; ``_client.py`` and ``_core.py`` import it.
"""

import math

FLOATS = ("float16", "float32", "float64", "float128", "longdouble")
INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_KEPT = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow")


def make_types(dtype):
    """The scalar classes of a library, by NumPy dtype name.

    Args:
        dtype: the library's dtype class (called with a dtype name for a scalar's ``.dtype``).

    Returns:
        dict: dtype name -> class (a subclass of ``float`` or ``int``).
    """
    types = {}
    for names, base in ((FLOATS, float), (INTEGERS, int)):
        for name in names:
            types[name] = _scalar_class(name, base, dtype, types)
    return types


def _scalar_class(name, base, dtype, types):
    plain = base.__float__ if base is float else base.__int__  # the value as Python's own number

    def kept(op):
        method = getattr(base, op)

        def apply(self, *args):
            out = method(self, *args)
            t = type(out)
            if t is float:
                return (cls if base is float else types["float64"])(out)
            if t is int and base is int:
                return cls(out)
            return out

        apply.__name__ = op
        return apply

    ns = {
        "__slots__": (),
        "__doc__": f"A library's {name} scalar: a Python {base.__name__} with NumPy's scalar attributes.",
        "ndim": 0,
        "shape": (),
        "size": 1,
        "dtype": property(lambda self: dtype(name)),
        "item": lambda self, *index: plain(self),
        "tolist": lambda self: plain(self),
        "__reduce__": lambda self: (base, (plain(self),)),
    }
    for op in _KEPT:
        ns[f"__{op}__"] = kept(f"__{op}__")
        ns[f"__r{op}__"] = kept(f"__r{op}__")
    for op in ("__neg__", "__pos__", "__abs__"):
        ns[op] = kept(op)
    if base is float:
        ns["__round__"] = lambda self, ndigits=None: _round(self, ndigits, cls)
    cls = type(name, (base,), ns)
    return cls


def _round(x, ndigits, cls):
    """``round(x, ndigits)`` of a float scalar as NumPy's scalar rounds it: ``rint(x * 10**d) /
    10**d`` (``round(np.float64(2.675), 2)`` is 2.68 where Python's float gives 2.67; honest forms,
    round 8), a scalar of the same type; without ``ndigits``, Python's int as NumPy's."""
    v = float.__float__(x)
    if ndigits is None:
        return float.__round__(v)
    d = int(ndigits)
    if not math.isfinite(v):
        return cls(v)
    if d >= 0:
        p = 10.0 ** d
        y = v * p
        r = v if not math.isfinite(y) else float(round(y)) / p
    else:
        p = 10.0 ** -d
        r = float(round(v / p)) * p
    return cls(math.copysign(r, v) if r == 0 else r)
