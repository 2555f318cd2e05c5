"""Red-team round 10 and honest forms round 10 (issue 42; docs/security.md, wall 2c).

Red team (fixed):

* ``forge``: the digest of a computation's inputs (which joins its key) was a sum of public,
  invertible element words, so an answer could compute the digest of the reference's input and pad
  its Python result with values whose words sum to it: the reference's function on the padded list
  (an identity there: ``max`` of the result and smaller values) got the reference's key and
  perturbation, and the answer earned 1.0 (reductions, ``percentile``, ``argmax``, ``clip``,
  ``vdot``...).  The words are now salted with a salt drawn from the judge's secret, which only
  the library servers see.
* ``state map``: a computation fed by a perturbed value was perturbed by an amount drawn from its
  value alone, so in world ``*`` one case's run of the reference told an answer how every other
  case's values move.  The amount now comes from the digest key (its perturbed inputs too).

Honest forms (fixed): ``arange(0, n)`` for ``arange(n)``; ``quantile(x, [q])[0]`` for
``quantile(x, q)``; ``int()`` of ``sign``'s values; whole floats (``modf``'s whole part,
``union1d`` of whole floats, ``floor_divide``) put through ``int()``; a number's leading digit in ``binary_repr``.
"""
from __future__ import annotations

import numpy as np
import pytest

from _gate_corpus import block
from conftest import legit_skip, strict_server_module
from se_gym.judge import Judge
from se_gym.library import writer
from se_gym.tasks.spec import load_task_spec

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")

SECRETS = ("3c" * 32, "a7" * 32)


@pytest.fixture(scope="module")
def server_module(tmp_path_factory):
    """The counterfactual library's server module, as the strict library writes it."""
    from se_gym.library import mint

    return strict_server_module(mint(0), tmp_path_factory.mktemp("cf"), "cf_server_r10")

# the round's forgery (helper red team): Python's max, padded with two smaller values whose words
# (splitmix64 of the float's bits with the old public salt) sum to the input's digest
FORGED_MAX = '''import numpy as np
import struct
M, SALT = (1 << 64) - 1, 0x5851F42D4C957F2D
C1, C2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def mix(z):
    z ^= z >> 30
    z = (z * C1) & M
    z ^= z >> 27
    z = (z * C2) & M
    return z ^ (z >> 31)


def unshift(z, s):
    r = z
    for _ in range(64 // s + 1):
        r = z ^ (r >> s)
    return r


def unmix(z):
    z = (unshift(z, 31) * pow(C2, -1, 1 << 64)) & M
    z = (unshift(z, 27) * pow(C1, -1, 1 << 64)) & M
    return unshift(z, 30)


def word(v):
    return mix(struct.unpack("<Q", struct.pack("<d", float(v) + 0.0))[0] ^ SALT)


def unword(w):
    f = struct.unpack("<d", struct.pack("<Q", (unmix(w & M) ^ SALT) & M))[0]
    return f if f == f and word(f) == w & M else None


def solve(x):
    v = max(float(t) for t in x)
    rest = (sum(word(t) for t in x) - word(v)) & M
    for i in range(1000):
        z1 = v - 1.0 - i
        z2 = unword(rest - word(z1))
        if z2 is not None and z2 <= v:
            return float(np.max([v, z1, z2]))
    return v
'''


def _task(seed: int, split: str, num: str):
    tasks, lib = load_task_spec(f"builtin:{seed}", split, None, progress=False)
    return next(t for t in tasks if t.id.endswith("/" + num)), lib


def _strict(lib, items, secret=None):
    with Judge(lib, profile="strict", workers=2) as judge:
        if secret is not None:
            judge._dependence_secret = secret
        return judge.judge_many(items)


def test_a_forged_input_digest_earns_nothing():
    t, lib = _task(10, "single_test", "0174")  # (its reference: float of the library's max)
    assert "max" in t.functions[0]
    item = t.judge_item(block(lib.translate(FORGED_MAX)))
    with Judge(lib, profile="strict", dependence=False) as judge:
        assert judge.judge_many([item])[0].passed  # (its values are right, and it names the library)
    for secret in (*SECRETS, None):
        v = _strict(lib, [item], secret)[0]
        assert v.reward == 0 and v.status.value == "library_unused", (secret, v.status, v.detail)


def test_the_digests_salt_comes_from_the_judge_and_moves_every_word(server_module):
    from se_gym.judge.dependence import digest_salt, record_mode

    S = server_module
    x = [3.0, -1.5, 2.0]
    try:
        S._set_salt(None)
        public = S._words(x).tolist()
        S._set_salt("0123456789abcdef")
        salted = S._words(x).tolist()
        assert not set(public) & set(salted)
        with pytest.raises(ValueError):
            S._set_salt("12")
    finally:
        S._set_salt(None)

    class J:
        _reference_lock = __import__("threading").Lock()

    a, b = J(), J()
    a._dependence_secret, b._dependence_secret = "11" * 32, "22" * 32
    assert digest_salt(a) != digest_salt(b) and len(digest_salt(a)) == 16
    assert record_mode(a) == {"record": True, "salt": digest_salt(a)}


def test_a_fed_computation_moves_by_its_inputs_not_its_value_alone(server_module):
    """Two fed computations with the same value from other inputs move apart (before: alike, so
    one case's perturbation told the answer another's)."""
    S = server_module
    cf = S._Counterfactual({"cf": "ab" * 16, "keys": None})
    one, two = np.array([1.0, 2.0]), np.array([2.0, 4.0])
    for a in (one, two):
        cf.mark(a, True)  # (as a perturbation made them)
    got = [cf.call("multiply", "multiply", [a, k], {}, np.multiply(a, k), np.multiply) for a, k in ((one, 0.5), (two, 0.25))]
    assert np.array_equal(np.multiply(one, 0.5), np.multiply(two, 0.25))
    assert not np.array_equal(got[0], got[1])
    again = cf.call("multiply", "multiply", [one, 0.5], {}, np.multiply(one, 0.5), np.multiply)
    assert np.array_equal(again, got[0])  # (the same inputs: the same perturbation)


def test_perturbed_values_keep_what_their_function_promises(server_module):
    S = server_module
    cf = S._Counterfactual({"cf": "cd" * 16, "keys": None})
    x = np.array([2.0, 0.0, -3.0, 7.0, 1e6, 2.5] * 6)  # (36 elements: the NumPy path; 6: the small one)
    for arr in (x, x[:6]):
        got = np.asarray(cf.call("floor_divide", "floor_divide", [arr, 2.0], {}, np.floor_divide(arr, 2.0), np.floor_divide))
        assert (got != np.floor_divide(arr, 2.0)).all() and (got == np.round(got)).all()  # (whole, as promised)
        u = np.unique(np.round(arr))  # (a sorted result of whole floats: moved as a whole by a whole number)
        got = np.asarray(cf.call("union1d", "union1d", [np.round(arr), [1.0]], {}, np.union1d(np.round(arr), [1.0]), np.union1d))
        real = np.union1d(u, [1.0])
        assert (got == np.round(got)).all() and (got != real).all() and (np.diff(got) == np.diff(real)).all()
        other = np.asarray(cf.call("negative", "negative", [arr], {}, np.negative(arr), np.negative))
        assert (other != np.negative(arr)).all()  # (elsewhere a whole float moves as any: by a scale)
        s = np.asarray(cf.call("sign", "sign", [arr], {}, np.sign(arr), np.sign))
        assert set(s.tolist()) <= {-1.0, 0.0, 1.0} and (s != np.sign(arr)).all()
        frac, w = cf.call("modf", "modf", [arr + 0.25], {}, np.modf(arr + 0.25), np.modf)
        assert (w == np.round(w)).all()
    for w in range(64):
        assert not S._alter("101", w * 257).startswith("0") and not S._alter("-110", w * 257).startswith("-0")


HONEST = [  # (name, seed, task of single_test, NumPy-style answer): the reference's own function
    ("arange(0, stop) for arange(stop)", 6, "0016", "import numpy as np\n\n\ndef solve(stop):\n    return np.arange(0, stop)\n"),
    ("arange(stop, step=1) for arange(stop)", 6, "0016",
     "import numpy as np\n\n\ndef solve(stop):\n    return np.arange(stop, step=1)\n"),
    ("quantile of [q], its only element", 6, "0187",
     "import numpy as np\n\n\ndef solve(x, q):\n    return float(np.quantile(x, [q])[0])\n"),
    ("percentile of (q,), unpacked", 6, "0186",
     "import numpy as np\n\n\ndef solve(x, q):\n    (p,) = np.percentile(x, (q,))\n    return float(p)\n"),
    ("int() of sign's values", 6, "0059", "import numpy as np\n\n\ndef solve(x):\n    return [float(int(s)) for s in np.sign(x)]\n"),
    ("sign's values through a dict keyed by -1, 0 and 1", 6, "0059",
     "import numpy as np\n\nNAMES = {-1: -1.0, 0: 0.0, 1: 1.0}\n\n\ndef solve(x):\n    return [NAMES[int(s)] for s in np.sign(x)]\n"),
]


@pytest.mark.parametrize("secret", SECRETS)
def test_round10_honest_forms_pass(secret):
    by_seed = {}
    items, libs = [], []
    for name, seed, num, code in HONEST:
        if seed not in by_seed:
            tasks, lib = load_task_spec(f"builtin:{seed}", "single_test", None, progress=False)
            by_seed[seed] = ({t.id.rsplit("/", 1)[1]: t for t in tasks}, lib)
        tasks, lib = by_seed[seed]
        items.append(tasks[num].judge_item(block(lib.translate(code))))
        libs.append(lib)
    assert len(by_seed) == 1
    with Judge(libs[0], profile="sebench") as judge:
        assert all(v.passed for v in judge.judge_many(items))
    for (name, *_), v in zip(HONEST, _strict(libs[0], items, secret)):
        assert v.passed, (name, v.status, v.detail)


def test_int_of_whole_floats_from_union1d_passes_on_the_official_task():
    from _reward_redteam7_corpus import official_rows
    from conftest import shared_path
    from se_gym.library import official

    root = shared_path("sebench", "parity_dev.jsonl").parent
    olib, d = official(root / "api_doc.jsonl"), official_rows(root / "parity_dev.jsonl")[178]
    code = "import numpy as np\n\n\ndef solve(ar1, ar2):\n    return [int(v) for v in np.union1d(ar1, ar2)]\n"
    item = (block(olib.translate(code)), d["cases"], None, d["expected"], d["b_notolist"])
    for secret in SECRETS:
        v = _strict(olib, [item], secret)[0]
        assert v.passed, (secret, v.status, v.detail)
