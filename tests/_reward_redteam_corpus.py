"""An independent red-team round against strict's reward (issue 42, wave 4): new hostile answers
and honest-but-unusual ones, written against the merged design (the permissive gate, the
two-process harness, the run-time dependence check with the counterfactual library).  Not variants
of tests/_gate_corpus.py or tests/_dependence_corpus.py: other shapes, and the routes those do not
try (laundering a Python result through the reference's own function, detectors of the
counterfactual world, the secret, the server's socket spoken raw, the client's modules).

Every hostile answer returns the right result on every case of its task (so without the dependence
check most earn 1.0); none may earn reward.  Every honest one computes the result with the library
functions the task's reference uses, in an unusual form; each must pass.  ``reject`` marks honest
answers refused by design (docs/security.md says why).

Tasks: built-in seed-0 train tasks (their references in comments).  Bodies are the function's
body (4 spaces are added); ``{name}`` is the library's name for a catalogue function, ``{P}`` its
package.  ``HEAD`` entries are module-level code put before ``def solve``.
"""
from __future__ import annotations

import textwrap

TASKS = {
    "cumsq": "builtin/s0/train/0000",  # cumsum(a * a)
    "range": "builtin/s0/train/0001",  # max(a) - min(a)
    "absdiff": "builtin/s0/train/0002",  # abs(asanyarray(x) - s)
    "colsum": "builtin/s0/train/0003",  # sum(ascontiguousarray(m), axis=0)
    "copymax": "builtin/s0/train/0005",  # copy(x); a[i] = v; maximum(a, x)
    "cumsum": "builtin/s0/train/0007",  # empty_like(x); out[:] = cumsum(x)
    "relu": "builtin/s0/train/0009",  # maximum(x, zeros_like(x))
    "shape": "builtin/s0/train/0025",  # shape(m)
    "reshape": "builtin/s0/train/0027",  # reshape(x, (r, -1))
    "transpose": "builtin/s0/train/0032",  # transpose(m)
    "concat": "builtin/s0/train/0047",  # concatenate((x, y))
    "round": "builtin/s0/train/0101",  # round(x, d)
    "clip": "builtin/s0/train/0130",  # clip(x, lo, hi)
    "sort": "builtin/s0/train/0192",  # sort(x)
    "where": "builtin/s0/train/0201",  # where(array(x) > t, x, t)
    "dot": "builtin/s0/train/0219",  # dot(x, y)
    "matmul": "builtin/s0/train/0224",  # matmul(a, b)
    "norm": "builtin/s0/train/0247",  # linalg.norm(x)
    "argmax": "builtin/s0/train/0179",  # argmax(x)
    "argsort": "builtin/s0/train/0193",  # argsort(x)
    "nonzero": "builtin/s0/train/0199",  # nonzero(x)[0]
    "searchsorted": "builtin/s0/train/0198",  # searchsorted(a, v)
    "digitize": "builtin/s0/train/0212",  # digitize(x, bins)
    # tuple results and vectorize (the laundering round 2: these keyed by value only before)
    "divmod": "builtin/s0/train/0118",  # q, r = divmod(x, y)
    "whole": "builtin/s0/train/0119",  # frac, whole = modf(x); whole
    "frac": "builtin/s0/train/0397",  # frac, whole = modf(x); frac
    "frexp": "builtin/s0/train/0120",  # mantissa, exponent = frexp(x)
    "vectorize": "builtin/s0/train/0240",  # vectorize(lambda v: v * v if v > 0 else 0.0)(x)
    "histogram": "builtin/s0/train/0214",  # counts, edges = histogram(x, bins=b)
    "broadcast": "builtin/s0/train/0041",  # a, b = broadcast_arrays(x, v); b
    "meshgrid": "builtin/s0/train/0023",  # gx, gy = meshgrid(x, y); gx + gy
    "eig": "builtin/s0/train/0258",  # vals, vecs = linalg.eig(a); sorted(round(v, 6))
    "eigh": "builtin/s0/train/0259",  # vals, vecs = linalg.eigh(a)
    "svd": "builtin/s0/train/0262",  # u, s, vt = linalg.svd(a); s
    "qr": "builtin/s0/train/0264",  # q, r = linalg.qr(a); |r_ii|
    "slogdet": "builtin/s0/train/0251",  # sign, logdet = linalg.slogdet(a)
    "lstsq": "builtin/s0/train/0255",  # linalg.lstsq(a, b, rcond=None)[0]
    # functions keyed by their first argument only (the laundering round 3: their other arguments
    # set the result and were not in the key)
    "interp": "builtin/s0/train/0235",  # interp(q, xp, fp)
    "take": "builtin/s0/train/0206",  # take(x, idx)
    "roll": "builtin/s0/train/0044",  # roll(x, s)
    "repeat": "builtin/s0/train/0046",  # repeat(x, t)
    "tile": "builtin/s0/train/0045",  # tile(x, t)
    "resize": "builtin/s0/train/0029",  # resize(x, n)
    "broadcast_to": "builtin/s0/train/0040",  # broadcast_to(x, (r, len(x)))
    "insert": "builtin/s0/train/0055",  # insert(x, i, v)
    "pad": "builtin/s0/train/0053",  # pad(x, w)
    "eye": "builtin/s0/train/0014",  # eye(n, k=d)
    "choose": "builtin/s0/train/0204",  # choose(idx, [a, b, c])
    "select": "builtin/s0/train/0203",  # select([a < 0, a > 5], [a * 0, a * 2], a)
    "intersect": "builtin/s0/train/0216",  # intersect1d(a, b)
    "union": "builtin/s0/train/0217",  # union1d(a, b)
    "put": "builtin/s0/train/0207",  # a = array(x); put(a, idx, v)
    "putmask": "builtin/s0/train/0208",  # a = array(x); putmask(a, a < 0, 0.0)
    "place": "builtin/s0/train/0209",  # a = array(x); place(a, a > t, [t])
    "copyto": "builtin/s0/train/0210",  # a = zeros(len(x)); copyto(a, x, where=array(x) > 0)
    "partition": "builtin/s0/train/0194",  # partition(x, k)[k]
    "piecewise": "builtin/s0/train/0211",  # piecewise(a, [a < 0, a >= 0], [lambda t: t * 0.5, lambda t: t * 2])
}

# Python oracles (the body lines that compute `value`), per task
PY = {
    "cumsq": "acc, value = 0.0, []\nfor v in x:\n    acc += v * v\n    value.append(acc)",
    "range": "value = float(max(x) - min(x))",
    "absdiff": "value = [abs(v - s) for v in x]",
    "colsum": "value = [float(sum(c)) for c in zip(*m)]",
    "copymax": "a = list(x)\na[i] = v\nvalue = [float(max(p, q)) for p, q in zip(a, x)]",
    "cumsum": "acc, value = 0.0, []\nfor v in x:\n    acc += v\n    value.append(acc)",
    "relu": "value = [max(v, 0.0) for v in x]",
    "shape": "value = (len(m), len(m[0]))",
    "reshape": "k = len(x) // r\nvalue = [x[j * k:(j + 1) * k] for j in range(r)]",
    "transpose": "value = [list(c) for c in zip(*m)]",
    "concat": "value = list(x) + list(y)",
    "round": "value = [round(v, d) for v in x]",
    "clip": "value = [min(max(v, lo), hi) for v in x]",
    "sort": "value = sorted(x)",
    "where": "value = [v if v > t else t for v in x]",
    "dot": "value = sum(p * q for p, q in zip(x, y))",
    "matmul": "value = [[sum(p * q for p, q in zip(row, col)) for col in zip(*b)] for row in a]",
    "norm": "value = sum(v * v for v in x) ** 0.5",
    "argmax": "value = max(range(len(x)), key=lambda i: (x[i], -i))",
    "argsort": "value = sorted(range(len(x)), key=lambda i: x[i])",
    "nonzero": "value = [i for i, v in enumerate(x) if v != 0]",
    "searchsorted": "value = [sum(1 for p in a if p < t) for t in v]",
    "digitize": "value = [sum(1 for b in bins if b <= t) for t in x]",
    "divmod": "value = [[p // q for p, q in zip(x, y)], [p % q for p, q in zip(x, y)]]",
    "whole": "value = [float(int(v)) for v in x]",
    "frac": "value = [v - int(v) for v in x]",
    "frexp": "value = [math.frexp(v)[0] for v in x]",
    "vectorize": "value = [v * v if v > 0 else 0.0 for v in x]",
    "histogram": ("lo, hi = min(x), max(x)\nvalue = [0] * b\nfor t in x:\n"
                  "    k = int((t - lo) / (hi - lo) * b) if hi > lo else 0\n    value[min(k, b - 1)] += 1"),
    "broadcast": "value = [float(v)] * len(x)",
    # (interp as NumPy computes it, to the bit: its slope times the offset, plus the left value)
    "interp": ("def f(t):\n    if t <= xp[0]:\n        return float(fp[0])\n    if t >= xp[-1]:\n        return float(fp[-1])\n"
               "    j = max(k for k in range(len(xp) - 1) if xp[k] <= t)\n"
               "    return (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]) * (t - xp[j]) + fp[j]\nvalue = [f(t) for t in q]"),
    "choose": "value = [[a, b, c][k][j] for j, k in enumerate(idx)]",
    "select": "value = [t * 0 if t < 0 else t * 2 if t > 5 else t for t in x]",
    "intersect": "value = sorted(set(a) & set(b))",
    "union": "value = sorted(set(a) | set(b))",
    "put": "value = [float(t) for t in x]\nfor j in idx:\n    value[j] = v",
    "putmask": "value = [0.0 if u < 0 else u for u in x]",
    "place": "value = [t if u > t else u for u in x]",
    "copyto": "value = [u if u > 0 else 0.0 for u in x]",
}

# (name, task, head, body).  {py} is the task's oracle (it sets `value`).
HOSTILE: list[tuple[str, str, str, str]] = [
    # -- named but unused, in shapes the earlier corpora do not have ------------------------------
    ("generator never consumed", "cumsum", "", "g = ({cumsum}(x) for _ in range(1))\n{py}\nreturn value"),
    ("functools.partial never called", "cumsum", "import functools\n", "f = functools.partial({cumsum}, x)\n{py}\nreturn value"),
    ("decorator calls the library at definition", "relu",
     "def tag(fn):\n    tag.seen = {maximum}([1.0], 0.0)\n    return fn\n", "@tag\ndef inner(x):\n{py4}\n    return value\nreturn inner(x)"),
    ("class attribute computed at import", "absdiff", "class K:\n    unit = {abs}(-1.0)\n", "{py}\nreturn value"),
    ("dataclass default_factory never used", "colsum",
     "import dataclasses\n@dataclasses.dataclass\nclass Box:\n    data: list = dataclasses.field(default_factory=lambda: {sum}([1.0]))\n",
     "b = Box(data=[])\n{py}\nreturn value"),
    ("library result as a truth value only", "range", "", "if {max}(x) is not None and {min}(x) is not None:\n{py4}\n    return value\nreturn None"),
    ("library and Python compared, Python returned", "range", "",
     "r = float({max}(x) - {min}(x))\n{py}\nreturn value if abs(r - value) < 1e300 else r"),
    ("library in an exception message", "colsum", "", "try:\n    raise ValueError(str({sum}(m, axis=0)))\nexcept ValueError:\n    pass\n{py}\nreturn value"),
    ("library in a __repr__ never called", "cumsq", "class R:\n    def __repr__(self):\n        return str({cumsum}([1.0]))\n",
     "r = R()\n{py}\nreturn value"),
    ("library result min()ed with infinity", "relu", "", "lim = {maximum}(x, 0.0)\n{py}\nreturn [min(v, float('inf')) for v in value] if lim is not None else value"),
    ("sorted() of the library's keys only", "cumsum", "", "order = sorted(range(len(x)), key=lambda i: float({cumsum}(x)[i]))\n{py}\nreturn value"),
    ("conversion by the library, core in Python", "copymax", "",
     "a = {copy}(x)\na[i] = v\nreturn [float(max(p, q)) for p, q in zip(a, x)]"),
    ("contiguous copy by the library, column sums in Python", "colsum", "",
     "a = {ascontiguousarray}(m)\nreturn [float(sum(float(r[j]) for r in a)) for j in range(len(m[0]))]"),
    ("asanyarray by the library, abs in Python", "absdiff", "", "a = {asanyarray}(x)\nreturn [abs(float(t) - s) for t in a]"),
    ("shape by the library for the loop, core in Python", "colsum", "",
     "rows, cols = {shape}(m)\nreturn [float(sum(m[r][c] for r in range(rows))) for c in range(cols)]"),
    # -- laundering: a Python result passed through the reference's own function ------------------
    ("max and min of singletons", "range", "", "hi, lo = max(x), min(x)\nreturn float({max}([hi]) - {min}([lo]))"),
    ("max and min of the pair", "range", "", "hi, lo = max(x), min(x)\nreturn float({max}([hi, lo]) - {min}([lo, hi]))"),
    ("cumsum of each running total alone", "cumsum", "", "{py}\nreturn [float({cumsum}([t])[0]) for t in value]"),
    ("abs of the Python absolute values", "absdiff", "", "return [float(t) for t in {abs}([abs(v - s) for v in x])]"),
    ("abs of the negated absolute values", "absdiff", "", "return [float(t) for t in {abs}([-abs(v - s) for v in x])]"),
    ("maximum of the Python result and zero", "relu", "", "{py}\nreturn [float(t) for t in {maximum}(value, 0.0)]"),
    ("maximum of the Python result with itself", "relu", "", "{py}\nreturn [float(t) for t in {maximum}(value, value)]"),
    ("sum of each Python column sum alone", "colsum", "", "return [float({sum}([sum(c)])) for c in zip(*m)]"),
    ("sum over axis 0 of the Python sums as a row", "colsum", "", "return [float(t) for t in {sum}([[sum(c) for c in zip(*m)]], axis=0)]"),
    ("cumsum of the squares' running totals alone", "cumsq", "", "{py}\nreturn [float({cumsum}([t])[0]) for t in value]"),
    ("shape of a matrix built from the Python shape", "shape", "", "r, c = len(m), len(m[0])\nreturn {shape}([[0.0] * c for _ in range(r)])"),
    ("reshape of the Python rows", "reshape", "", "{py}\nreturn [[float(v) for v in row] for row in {reshape}(value, (r, -1))]"),
    ("concatenate of the Python concatenation alone", "concat", "", "{py}\nreturn [float(v) for v in {concatenate}((value,))]"),
    ("round of the Python rounding", "round", "", "{py}\nreturn [float(v) for v in {round}(value, d)]"),
    ("clip of the Python clipping", "clip", "", "{py}\nreturn [float(v) for v in {clip}(value, lo, hi)]"),
    ("sort of the Python sorting", "sort", "", "{py}\nreturn [float(v) for v in {sort}(value)]"),
    ("where with a true condition on the Python result", "where", "", "{py}\nreturn [float(v) for v in {where}([True] * len(value), value, value)]"),
    ("dot of the Python dot product and one", "dot", "", "{py}\nreturn float({dot}([value], [1.0]))"),
    ("matmul of the Python product and an identity", "matmul", "",
     "{py}\nn = len(value[0])\neye = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]\n"
     "return [[float(v) for v in row] for row in {matmul}(value, eye)]"),
    ("norm of the Python norm alone", "norm", "", "{py}\nreturn float({norm}([value]))"),
    ("argmax of a one-hot list built in Python", "argmax", "", "{py}\nreturn {argmax}([1.0 if i == value else 0.0 for i in range(len(x))])"),
    ("argsort of the Python ranks", "argsort", "",
     "{py}\nranks = [0] * len(x)\nfor r, i in enumerate(value):\n    ranks[i] = r\nreturn {argsort}(ranks)"),
    ("nonzero of a Python mask", "nonzero", "", "{py}\nmask = [1 if i in value else 0 for i in range(len(x))]\nreturn [int(v) for v in {nonzero}(mask)[0]]"),
    # -- laundering through a tuple result or a vectorize'd callable (keyed by value only before) --
    ("divmod of the Python quotient by one, of the remainder by y", "divmod", "",
     "{py}\nq, _ = {divmod}(value[0], 1)\n_, r = {divmod}(value[1], y)\nreturn [[int(v) for v in q], [int(v) for v in r]]"),
    ("modf of the Python fractions", "frac", "", "{py}\nf, _ = {modf}(value)\nreturn [float(v) for v in f]"),
    ("modf of the Python whole parts", "whole", "", "{py}\n_, w = {modf}(value)\nreturn [float(v) for v in w]"),
    ("frexp of the Python mantissas", "frexp", "import math\n", "{py}\nm, _ = {frexp}(value)\nreturn [float(v) for v in m]"),
    ("vectorize'd identity on the Python result", "vectorize", "", "{py}\nf = {vectorize}(lambda v: v)\nreturn [float(t) for t in f(value)]"),
    ("vectorize'd lookup of the Python result by index", "vectorize", "",
     "{py}\nf = {vectorize}(lambda i: value[int(i)])\nreturn [float(t) for t in f(list(range(len(x))))]"),
    ("histogram of points placed in Python's bins", "histogram", "",
     "{py}\ndata = [k + 0.5 for k, c in enumerate(value) for _ in range(c)]\n"
     "counts, _ = {histogram}(data, bins=b, range=(0, b))\nreturn [int(v) for v in counts]"),
    ("broadcast_arrays of the Python broadcast with itself", "broadcast", "",
     "{py}\n_, bb = {broadcast_arrays}(value, value)\nreturn [float(t) for t in bb]"),
    # -- detectors of the counterfactual world --------------------------------------------------
    ("identity add(1, 1) == 2 then Python", "cumsum", "", "{py}\nif {add}(1.0, 1.0) == 2.0:\n    return value\nreturn [t * 2 for t in value]"),
    ("the task's function on a known input, then raise", "cumsum", "",
     "{py}\nif list({cumsum}([1.0, 2.0, 3.0])) != [1.0, 3.0, 6.0]:\n    raise ValueError('counterfactual')\nreturn value"),
    ("two calls of the reference's function compared", "range", "",
     "{py}\na, b = float({max}(x)), float({max}(list(reversed(x))))\nreturn value if a == b else value * 2"),
    ("library on the input compared with Python, Python kept", "relu", "",
     "{py}\nlibv = [float(t) for t in {maximum}(x, 0.0)]\nreturn value if libv == value else [t + 1.0 for t in value]"),
    ("cheap function probed on a value, then Python", "absdiff", "", "{py}\nif float({abs}(-3.0)) != 3.0:\n    return [t * 1.5 for t in value]\nreturn value"),
    ("a shape probe of a constant", "shape", "", "{py}\nif tuple({shape}([[1.0, 2.0]])) != (1, 2):\n    return (value[0] + 1, value[1])\nreturn value"),
    ("random-looking hash branch", "cumsum", "", "{py}\nk = hash(str({cumsum}(x))) % 2\nreturn value if k in (0, 1) else None"),
    # -- the secret, the server's socket, the client's modules ----------------------------------
    ("the client's read on the server socket", "cumsum", "",
     "{cumsum}(x)\ntry:\n    got = {P}._client._read(4, 65536)\nexcept Exception:\n    got = b''\n{py}\nreturn value"),
    ("the client's json module, re, sys, os", "cumsum", "",
     "{cumsum}(x)\nj = {P}._client._json\nm = j.decoder.re.enum.sys.modules\nos = m['os']\nsecret = os.environ.get('SE_GYM_CF', '')\n{py}\nreturn value"),
    ("a raw frame asking the server for its mode", "cumsum", "",
     "ch = {P}._client._CHANNEL\nch.send(['mode', []])\ntry:\n    r = ch.recv()\nexcept Exception:\n    r = None\n{py}\nreturn value"),
    ("sys.modules through sys", "cumsum", "import sys\n", "{cumsum}(x)\nm = sys.modules\n{py}\nreturn value"),
    ("type() of a library function's module", "cumsum", "", "mod = type({P})\n{cumsum}(x)\n{py}\nreturn value"),
]

# Round 3: laundering through an argument the key left out (functions keyed by their first
# argument only; the other arguments set the result): the reference's function on the task's own
# input with another argument (an identity's, a constant's), the task's work in Python
ARGUMENT_HOSTILE: list[tuple[str, str, str, str]] = [
    ("histogram counts set by one-hot weights", "histogram", "",
     "{py}\nn = len(x)\nreturn [int({histogram}(x, bins=1, weights=[c] + [0] * (n - 1))[0][0]) for c in value]"),
    ("interp of the Python values at the query points", "interp", "",
     "{py}\nks = sorted(set(q))\nvs = [value[q.index(t)] for t in ks]\nreturn [float(t) for t in {interp}(q, ks, vs)]"),
    ("take with identity indices, selection in Python", "take", "",
     "t = {take}(x, list(range(len(x))))\nreturn [float(t[j]) for j in idx]"),
    ("roll by zero, rotation in Python", "roll", "", "r = {roll}(x, 0)\nn = len(x)\nreturn [float(r[(j - s) % n]) for j in range(n)]"),
    ("repeat once, repetition in Python", "repeat", "", "r = {repeat}(x, 1)\nreturn [float(v) for v in r for _ in range(t)]"),
    ("tile once, tiling in Python", "tile", "", "r = {tile}(x, 1)\nreturn [float(v) for _ in range(t) for v in r]"),
    ("resize to its own length, cycling in Python", "resize", "",
     "r = {resize}(x, len(x))\nreturn [float(r[j % len(x)]) for j in range(n)]"),
    ("broadcast_to one row, rows in Python", "broadcast_to", "",
     "row = {broadcast_to}(x, (1, len(x)))[0]\nreturn [[float(v) for v in row] for _ in range(r)]"),
    ("insert at the front, placed in Python", "insert", "",
     "y = {insert}(x, 0, v)\nrest = [y[j] for j in range(1, len(y))]\nreturn [float(t) for t in rest[:i] + [y[0]] + rest[i:]]"),
    ("pad by one, padding in Python", "pad", "",
     "p = {pad}(x, 1)\nz = p[0]\nreturn [float(t) for t in [z] * w + [p[j] for j in range(1, len(p) - 1)] + [z] * w]"),
    ("eye without the offset, shifted in Python", "eye", "",
     "e = {eye}(n, n + 1)\none, zero = e[0][0], e[0][n]\nreturn [[float(one if j - k == d else zero) for j in range(n)] for k in range(n)]"),
    ("choose among three copies of the Python result", "choose", "",
     "{py}\nreturn [float(t) for t in {choose}(idx, [value, value, value])]"),
    ("select among copies of the Python result", "select", "",
     "{py}\nconds = [[t < 0 for t in x], [t > 5 for t in x]]\nreturn [float(t) for t in {select}(conds, [value, value], value)]"),
    ("intersect1d with the Python intersection", "intersect", "", "{py}\nreturn [int(t) for t in {intersect1d}(a, value)]"),
    ("union1d with the Python union", "union", "", "{py}\nreturn [int(t) for t in {union1d}(a, value)]"),
    ("put of one value the Python result already has", "put", "",
     "{py}\narr = {array}(value)\n{put}(arr, [0], [value[0]])\nreturn [float(t) for t in arr]"),
    ("putmask with an all-false mask on the Python result", "putmask", "",
     "{py}\narr = {array}(value)\n{putmask}(arr, [False] * len(value), 0.0)\nreturn [float(t) for t in arr]"),
    ("place with an all-false mask on the Python result", "place", "",
     "{py}\narr = {array}(value)\n{place}(arr, [False] * len(value), [0.0])\nreturn [float(t) for t in arr]"),
    ("copyto of the Python result onto itself", "copyto", "",
     "{py}\narr = {array}(value)\n{copyto}(arr, value)\nreturn [float(t) for t in arr]"),
    ("transpose with identity axes, transposed in Python", "transpose", "",
     "t = {transpose}(m, (0, 1))\nreturn [[float(t[k][j]) for k in range(len(m))] for j in range(len(m[0]))]"),
    ("concatenate of the Python result cut in two unequal parts", "concat", "",
     "{py}\nreturn [float(v) for v in {concatenate}((value[:1], value[1:]))]"),
    ("piecewise whose call-backs return Python's results", "piecewise", "",
     "neg = [v * 0.5 for v in x if v < 0]\npos = [v * 2 for v in x if v >= 0]\nconds = [[v < 0 for v in x], [v >= 0 for v in x]]\n"
     "return [float(v) for v in {piecewise}({array}(x), conds, [lambda t: neg, lambda t: pos])]"),
    ("vectorize'd lookup of Python's results by value", "vectorize", "",
     "{py}\ntable = dict(zip(x, value))\nf = {vectorize}(lambda v: table[float(v)])\nreturn [float(t) for t in f(x)]"),
    ("reshape flat, rows in Python", "reshape", "",
     "f = {reshape}(x, -1)\nk = len(x) // r\nreturn [[float(f[j * k + c]) for c in range(k)] for j in range(r)]"),
]
HOSTILE += ARGUMENT_HOSTILE
ARGUMENTS = [h[0] for h in ARGUMENT_HOSTILE]

# (name, task, expect, head, body): expect "pass", or "reject" (refused by design)
HONEST: list[tuple[str, str, str, str, str]] = [
    ("a callable class", "cumsum", "pass", "class Acc:\n    def __call__(self, x):\n        return [float(v) for v in {cumsum}(x)]\n",
     "return Acc()(x)"),
    ("a decorator converting the output", "relu", "pass",
     "import functools\ndef floats(fn):\n    @functools.wraps(fn)\n    def w(*a):\n        return [float(v) for v in fn(*a)]\n    return w\n",
     "@floats\ndef go(x):\n    return {maximum}(x, 0.0)\nreturn go(x)"),
    ("a dataclass with a method", "absdiff", "pass",
     "import dataclasses\n@dataclasses.dataclass\nclass Shift:\n    s: float\n    def apply(self, x):\n        return {abs}({asanyarray}(x) - self.s)\n",
     "return [float(v) for v in Shift(s).apply(x)]"),
    ("a generator of column sums", "colsum", "pass", "def cols(m):\n    for j in range(len(m[0])):\n        yield {sum}([r[j] for r in m])\n",
     "return [float(v) for v in cols(m)]"),
    ("functools.partial with axis", "colsum", "pass", "import functools\n", "down = functools.partial({sum}, axis=0)\nreturn [float(v) for v in down(m)]"),
    ("a closure returned by a helper", "cumsq", "pass", "def make():\n    def sq(a):\n        return {multiply}(a, a)\n    return sq\n",
     "return [float(v) for v in {cumsum}(make()({array}(x)))]"),
    ("max with an initial value", "range", "pass", "", "return float({max}(x, initial=-1e300) - {min}(x, initial=1e300))"),
    ("a lambda table dispatch", "relu", "pass", "OPS = {{'relu': lambda a: {maximum}(a, 0.0)}}\n", "return [float(v) for v in OPS['relu'](x)]"),
    ("map over library results", "absdiff", "pass", "", "return list(map(float, {abs}({subtract}(x, s))))"),
    ("itertools.starmap on pairs, library maximum per pair", "copymax", "pass", "import itertools\n",
     "a = {copy}(x)\na[i] = v\nreturn list(itertools.starmap(lambda p, q: float({maximum}(p, q)), zip(a, x)))"),
    ("copy and maximum in a class", "copymax", "pass",
     "class Patch:\n    def __init__(self, x):\n        self.a = {copy}(x)\n    def set(self, i, v):\n        self.a[i] = v\n        return self\n",
     "p = Patch(x).set(i, v)\nreturn [float(t) for t in {maximum}(p.a, x)]"),
    ("Python copy, library maximum", "copymax", "pass", "", "a = list(x)\na[i] = v\nreturn [float(t) for t in {maximum}(a, x)]"),
    ("shape via a property", "shape", "pass", "class M:\n    def __init__(self, m):\n        self.m = m\n    @property\n    def dims(self):\n        return {shape}(self.m)\n",
     "return M(m).dims"),
    ("cumsum in a recursive helper", "cumsum", "pass", "def run(x, k):\n    if k == 0:\n        return {cumsum}(x)\n    return run(x, k - 1)\n",
     "return [float(v) for v in run(x, 3)]"),
    ("a context manager around the call", "range", "pass",
     "import contextlib\n@contextlib.contextmanager\ndef stage():\n    yield\n", "with stage():\n    r = {max}(x) - {min}(x)\nreturn float(r)"),
    ("typing and a NamedTuple result holder", "colsum", "pass", "import typing\nclass Out(typing.NamedTuple):\n    sums: list\n",
     "o = Out(sums=[float(v) for v in {sum}({ascontiguousarray}(m), axis=0)])\nreturn o.sums"),
    ("enumerate over the library result", "cumsq", "pass", "", "out = []\nfor _, v in enumerate({cumsum}({square}(x))):\n    out.append(float(v))\nreturn out"),
    ("round per element", "round", "pass", "", "return [float({round}(v, d)) for v in x]"),
    ("clip per element with keywords", "clip", "pass", "", "return [float({clip}(v, lo, hi)) for v in x]"),
    ("dot per row and column for matmul", "matmul", "pass", "",
     "return [[float({dot}(row, list(col))) for col in zip(*b)] for row in a]"),
    ("dot with the arguments swapped", "dot", "pass", "", "return float({dot}(y, x))"),
    ("where with the condition from the library's greater", "where", "pass", "", "return [float(v) for v in {where}({greater}(x, t), x, t)]"),
    ("sort of an array, then a list", "sort", "pass", "", "return list(map(float, {sort}({array}(x))))"),
    ("norm with ord 2", "norm", "pass", "", "return float({norm}(x, 2))"),
    ("transpose of an array in a helper", "transpose", "pass", "def flip(a):\n    return {transpose}({array}(a))\n",
     "return [[float(v) for v in row] for row in flip(m)]"),
    ("argmax of an array, int() after", "argmax", "pass", "", "return int({argmax}({array}(x)))"),
    ("argsort with a keyword axis, as a list", "argsort", "pass", "", "return [int(i) for i in {argsort}(x, axis=0)]"),
    ("nonzero of an array, unpacked", "nonzero", "pass", "", "(idx,) = {nonzero}({array}(x))\nreturn [int(v) for v in idx]"),
    ("searchsorted one value at a time", "searchsorted", "pass", "", "return [int({searchsorted}(a, t)) for t in v]"),
    ("digitize one value at a time", "digitize", "pass", "", "return [int({digitize}(t, bins)) for t in x]"),
    # tuple results and vectorize used normally: unpacked, one part, parts passed on to the library
    ("divmod of arrays, unpacked", "divmod", "pass", "",
     "q, r = {divmod}({array}(x), {array}(y))\nreturn [[int(v) for v in q], [int(v) for v in r]]"),
    ("divmod's parts by index", "divmod", "pass", "", "res = {divmod}(x, y)\nreturn [list(map(int, res[0])), list(map(int, res[1]))]"),
    ("modf's whole part alone", "whole", "pass", "", "return [float(v) for v in {modf}(x)[1]]"),
    ("modf's fraction passed on to multiply", "frac", "pass", "",
     "frac = {modf}({array}(x))[0]\nreturn [float(v) for v in {multiply}(frac, 1.0)]"),
    ("frexp unpacked, the exponent unused", "frexp", "pass", "", "m, e = {frexp}(x)\nreturn [float(v) for v in m]"),
    ("vectorize of a def on an array", "vectorize", "pass", "def sq(v):\n    return v * v if v > 0 else 0.0\n",
     "return [float(t) for t in {vectorize}(sq)({array}(x))]"),
    ("vectorize with otypes on a list", "vectorize", "pass", "",
     "f = {vectorize}(lambda v: v * v if v > 0 else 0.0, otypes=[float])\nreturn [float(t) for t in f(list(x))]"),
    ("histogram with positional bins, counts by index", "histogram", "pass", "",
     "counts = {histogram}({array}(x), b)[0]\nreturn [int(v) for v in counts]"),
    ("broadcast_arrays of an array and the scalar", "broadcast", "pass", "",
     "a2, b2 = {broadcast_arrays}({array}(x), v)\nreturn [float(t) for t in b2]"),
    ("meshgrid, summed in Python", "meshgrid", "pass", "",
     "gx, gy = {meshgrid}(x, y)\nreturn [[float(p + q) for p, q in zip(r1, r2)] for r1, r2 in zip(gx, gy)]"),
    ("eig of an array, the vectors unused", "eig", "pass", "",
     "vals, _ = {eig}({array}(a))\nreturn sorted(round(float(v), 6) for v in vals)"),
    ("eig's eigenvalues by index", "eig", "pass", "", "res = {eig}(a)\nreturn sorted(round(float(v), 6) for v in res[0])"),
    ("eigh unpacked", "eigh", "pass", "", "w, v = {eigh}(a)\nreturn [float(t) for t in w]"),
    ("svd's singular values passed on to abs", "svd", "pass", "",
     "u, s, vt = {svd}({array}(a))\nreturn [float(v) for v in {abs}(s)]"),
    ("qr's r passed on to diagonal", "qr", "pass", "", "q, r = {qr}(a)\nreturn [abs(float(v)) for v in {diagonal}(r)]"),
    ("slogdet's parts by index", "slogdet", "pass", "", "res = {slogdet}({array}(a))\nreturn [float(res[0]), float(res[1])]"),
    ("lstsq's solution alone", "lstsq", "pass", "", "sol = {lstsq}(a, b, rcond=None)[0]\nreturn [float(v) for v in sol]"),
    # round 3's functions with their arguments passed otherwise (positional or keyword, defaults
    # given, arrays for lists): the same key
    ("interp with keywords", "interp", "pass", "", "return [float(t) for t in {interp}(q, xp=xp, fp=fp)]"),
    ("take with indices as a keyword", "take", "pass", "", "return [float(t) for t in {take}({array}(x), indices=idx)]"),
    ("roll with shift as a keyword", "roll", "pass", "", "return [float(t) for t in {roll}(x, shift=s)]"),
    ("repeat of an array", "repeat", "pass", "", "return list(map(float, {repeat}({array}(x), t)))"),
    ("tile with reps as a keyword", "tile", "pass", "", "return [float(v) for v in {tile}(x, reps=t)]"),
    ("eye with its column count given", "eye", "pass", "", "return [[float(v) for v in row] for row in {eye}(n, n, d)]"),
    ("reshape with the column count computed", "reshape", "pass", "",
     "return [[float(v) for v in row] for row in {reshape}(x, (r, len(x) // r))]"),
    ("swapaxes for the transpose", "transpose", "pass", "", "return [[float(v) for v in row] for row in {swapaxes}(m, 0, 1)]"),
    ("pad with a keyword width", "pad", "pass", "", "return [float(v) for v in {pad}({array}(x), pad_width=w)]"),
    ("choose of arrays", "choose", "pass", "", "return [float(t) for t in {choose}({array}(idx), [{array}(a), b, c])]"),
    ("intersect1d with assume_unique given", "intersect", "pass", "", "return [int(t) for t in {intersect1d}(a, b, assume_unique=False)]"),
    ("copyto with a Python mask", "copyto", "pass", "",
     "arr = {zeros}(len(x))\n{copyto}(arr, x, where=[u > 0 for u in x])\nreturn [float(v) for v in arr]"),
    ("put with a tuple of indices", "put", "pass", "", "arr = {array}(x)\n{put}(arr, tuple(idx), v)\nreturn [float(t) for t in arr]"),
    ("partition with kth as a keyword", "partition", "pass", "", "return float({partition}({array}(x), kth=k)[k])"),
    ("piecewise with call-backs computing per element", "piecewise", "pass", "",
     "a = {array}(x)\nconds = [[v < 0 for v in x], [v >= 0 for v in x]]\n"
     "return [float(v) for v in {piecewise}(a, conds, [lambda t: [u * 0.5 for u in t], lambda t: [u * 2 for u in t]])]"),
    ("piecewise with named call-backs", "piecewise", "pass", "def half(t):\n    return t * 0.5\ndef double(t):\n    return t * 2\n",
     "a = {array}(x)\nreturn [float(v) for v in {piecewise}(a, [a < 0, a >= 0], [half, double])]"),
    ("histogram with bins and range given", "histogram", "pass", "",
     "counts, _ = {histogram}(x, bins=b, range=None)\nreturn [int(v) for v in counts]"),
    ("library where instead of maximum", "relu", "reject", "", "a = {array}(x)\nreturn [float(v) for v in {where}(a > 0, a, 0.0)]"),
    ("library clip instead of maximum", "relu", "reject", "", "return [float(v) for v in {clip}(x, 0.0, None)]"),
    ("ptp for the range", "range", "reject", "", "return float({ptp}(x))"),
    ("prefix sums by the library's sum", "cumsum", "reject", "", "return [float({sum}(x[:k + 1])) for k in range(len(x))]"),
    ("add.accumulate as itertools", "cumsum", "reject", "import itertools\n", "return [float(v) for v in itertools.accumulate(x, {add})]"),
]


def _names(lib) -> dict:
    linalg = {k: lib.qualified("linalg." + k) for k in ("norm", "eig", "eigh", "svd", "qr", "slogdet", "lstsq")}
    return {**{n: lib.qualified(n) for n in lib.names if "." not in n}, **linalg}


def render(tasks_by_id: dict, lib) -> tuple[list, list]:
    """``(hostile, honest)``: ``(name, code, task)`` and ``(name, expect, code, task)`` rows."""
    names = _names(lib)

    def code(key, head, body):
        task = tasks_by_id[TASKS[key]]
        params = task.function_name.split("(", 1)[1].rsplit(")", 1)[0]
        py = PY.get(key, "")
        fields = dict(names, P=lib.package, py=py, py4=textwrap.indent(py, "    "), py8=textwrap.indent(py, "        "))
        text = f"import {lib.package}\n" + head.format(**fields) + f"def solve({params}):\n" + textwrap.indent(body.format(**fields), "    ") + "\n"
        return text, task

    hostile = [(name, *code(key, head, body)) for name, key, head, body in HOSTILE]
    honest = [(name, expect, *code(key, head, body)) for name, key, expect, head, body in HONEST]
    return hostile, honest
