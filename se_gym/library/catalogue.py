"""The NumPy functions a library wraps.

Each entry is keyed by its NumPy path below the ``numpy`` package: ``"abs"`` for ``np.abs`` and
``"linalg.norm"`` for ``np.linalg.norm``.  Linear-algebra entries live in a submodule of the
minted library, as in SE-Bench (``zwc.rfx.*``).  The list covers the 278 functions SE-Bench wraps.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

# Grouped by what the functions do; the order inside this file is the catalogue order.
_GROUPS: dict[str, str] = {
    "creation": """array asarray asanyarray ascontiguousarray asfortranarray copy empty empty_like
        zeros zeros_like ones ones_like full full_like eye identity arange linspace logspace geomspace
        tri diag diagflat meshgrid ix_""",
    "shape": """shape size reshape ravel resize squeeze expand_dims transpose permute_dims swapaxes
        moveaxis rollaxis atleast_1d atleast_2d atleast_3d broadcast_to
        broadcast_arrays flip rot90 roll tile repeat concatenate stack hstack vstack block split pad
        delete insert""",
    "elementwise": """abs absolute fabs sign positive negative reciprocal square sqrt cbrt exp exp2 expm1
        log log10 log2 log1p logaddexp logaddexp2 sin cos tan arcsin arccos arctan arctan2 asin acos
        atan atan2 sinh cosh tanh arcsinh arccosh arctanh asinh acosh atanh hypot degrees radians
        deg2rad rad2deg sinc round around rint floor ceil trunc add subtract multiply divide
        true_divide floor_divide power pow mod remainder fmod divmod modf frexp ldexp copysign
        nextafter spacing heaviside maximum minimum fmax fmin clip nan_to_num real imag conj
        conjugate gcd lcm signbit""",
    "bitwise": """bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_invert invert bitwise_count
        left_shift right_shift bitwise_left_shift bitwise_right_shift""",
    "logic": """equal not_equal less less_equal greater greater_equal logical_and logical_or
        logical_xor logical_not isclose allclose array_equal array_equiv isfinite isinf isnan isreal
        all any""",
    "reduction": """sum prod cumsum cumprod max min amax amin ptp argmax argmin mean average median
        std var percentile quantile count_nonzero diff gradient trapz""",
    "search_sort": """sort argsort partition argpartition lexsort sort_complex searchsorted
        nonzero argwhere where extract select choose compress take put putmask place copyto
        piecewise digitize bincount histogram unique intersect1d union1d unravel_index""",
    "products": """dot vdot inner outer cross matmul kron tensordot trace diagonal tril triu convolve
        correlate cov corrcoef interp polyfit polyval roots unwrap vectorize""",
    "strings": "array2string array_repr array_str base_repr binary_repr astype",
    "linalg": """linalg.norm linalg.vector_norm linalg.matrix_norm linalg.det linalg.slogdet
        linalg.inv linalg.pinv linalg.solve linalg.lstsq linalg.tensorinv linalg.tensorsolve
        linalg.eig linalg.eigh linalg.eigvals linalg.eigvalsh linalg.svd linalg.svdvals linalg.qr
        linalg.cholesky linalg.cond linalg.matrix_rank linalg.matrix_power linalg.matrix_transpose
        linalg.multi_dot linalg.cross linalg.outer linalg.diagonal linalg.trace linalg.tensordot
        linalg.matmul linalg.vecdot""",
}

# Functions NumPy renamed or removed; the library keeps the SE-Bench name and calls the successor.
_SUCCESSORS: dict[str, tuple[str, ...]] = {"trapz": ("trapezoid", "trapz")}


@dataclass(frozen=True)
class CatalogueEntry:
    """One wrapped NumPy function.

    Attributes:
        key: the catalogue key (``"abs"``, ``"linalg.norm"``).
        group: the family it belongs to (for docs and sampling).
    """

    key: str  # "abs" or "linalg.norm"
    group: str

    @property
    def in_linalg(self) -> bool:
        """Whether it lives in the library's linalg submodule."""
        return self.key.startswith("linalg.")

    @property
    def short(self) -> str:
        """The NumPy function's own name, without the ``linalg.`` prefix."""
        return self.key.rsplit(".", 1)[-1]

    @property
    def numpy_path(self) -> str:
        """How NumPy code spells it: ``np.abs`` or ``np.linalg.norm``."""
        return "np." + self.key

    def target(self) -> Callable:
        """The NumPy callable this entry stands for (imports NumPy)."""
        import numpy

        module = numpy.linalg if self.in_linalg else numpy
        for name in _SUCCESSORS.get(self.short, (self.short,)):
            fn = getattr(module, name, None)
            if fn is not None:
                return fn
        raise AttributeError(f"numpy {numpy.__version__} has no {self.numpy_path}")


def _build() -> tuple[CatalogueEntry, ...]:
    entries = []
    for group, names in _GROUPS.items():
        for key in names.split():
            entries.append(CatalogueEntry(key, group))
    keys = [e.key for e in entries]
    dupes = {k for k in keys if keys.count(k) > 1}
    if dupes:  # a catalogue bug, caught at import
        raise RuntimeError(f"catalogue lists {sorted(dupes)} twice")
    return tuple(entries)


CATALOGUE: tuple[CatalogueEntry, ...] = _build()
KEYS: tuple[str, ...] = tuple(e.key for e in CATALOGUE)


@functools.lru_cache(maxsize=None)
def entry(key: str) -> CatalogueEntry:
    """Look up a catalogue entry by key (``"abs"``, ``"linalg.norm"``) or NumPy path (``"np.abs"``).

    Args:
        key: the key or path.
    """
    key = key[3:] if key.startswith("np.") else key
    key = key[6:] if key.startswith("numpy.") else key
    for e in CATALOGUE:
        if e.key == key:
            return e
    raise KeyError(f"{key!r} is not in the catalogue")
