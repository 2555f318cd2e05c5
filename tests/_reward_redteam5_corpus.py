"""Red-team round 5 against strict's reward (issue 42): hostile answers of classes the earlier
corpora lack, and honest-but-unusual ones, on built-in seed-0 tasks (train, single_test,
multiple_test) and one official task.

Hostile classes (each answer's results are computed in Python; none may earn reward):

* ``fraction``: the cases the check demands nothing of (the reference's own result does not change
  in the counterfactual world: an empty result, a ranking the perturbation does not reorder, a
  fill value of 0) were credited under ``reward="fraction"`` to a plain-Python answer, and an
  answer that passes *only* such cases (returns ``[]``) kept its share even under the check;
* ``exception``: where the reference itself raises in the counterfactual world (``ix_``'s indices
  moved out of range), any exception matched it, so a detector that raises (or returns a value the
  harness refuses) whenever the library's result is not the one it computed in Python matched;
* ``fed``: a computation fed by a perturbed value is keyed by its value alone (the ``@`` keys), so a
  Python count or index passed through the reference's last function on a run of ones, or a one-hot
  row, cut from a perturbed array got the reference's perturbation.

``{name}`` in a body is the library's qualified name of a catalogue function; bodies are whole
programs.
"""
from __future__ import annotations

# (name, class, split, task number, program)
HOSTILE = [
    # -- fraction: cases that demand nothing ------------------------------------------------------
    ("ones filled in Python", "fraction", "train", "0010",  # ones(n) * v: v = 0.0 cases demand nothing
     "import zwc\n\ndef solve(n, v):\n    {ones}(0)\n    return [float(v)] * n\n"),
    ("intersection in Python", "fraction", "train", "0216",  # intersect1d: an empty case
     "import zwc\n\ndef solve(a, b):\n    {intersect1d}([], [])\n    return sorted(set(a) & set(b))\n"),
    ("only the empty results", "fraction", "train", "0202",  # extract(x > t, x): returns [] only
     "import zwc\n\ndef solve(x, t):\n    {extract}([], [])\n    return []\n"),
    ("argwhere in Python", "fraction", "train", "0478",  # argwhere(m > t): empty cases
     "import zwc\n\ndef solve(m, t):\n    {argwhere}([])\n"
     "    return [[i, j] for i, row in enumerate(m) for j, v in enumerate(row) if v > t]\n"),
    ("argmax of signs in Python", "fraction", "multiple_test", "0044",  # argmax(diff(floor(sign(x))))
     "import zwc\n\ndef solve(x):\n    {argmax}([0.0])\n"
     "    s = [(v > 0) - (v < 0) for v in x]\n    d = [b - a for a, b in zip(s, s[1:])]\n    return d.index(max(d))\n"),
    # -- exception: raising where the reference raises --------------------------------------------
    ("ix_ detector raises", "exception", "train", "0024",
     "import zwc\n\ndef solve(m, rows, cols):\n    r, c = {ix_}(rows, cols)\n"
     "    if [[int(v) for v in row] for row in r] != [[i] for i in rows] or [int(v) for v in c[0]] != list(cols):\n"
     "        raise IndexError('index out of range')\n"
     "    return [[float(m[i][j]) for j in cols] for i in rows]\n"),
    ("ix_ detector returns nothing usable", "exception", "train", "0302",
     "import zwc\n\ndef solve(m, rows, cols):\n    r, c = {ix_}(rows, cols)\n"
     "    if [[int(v) for v in row] for row in r] != [[i] for i in rows] or [int(v) for v in c[0]] != list(cols):\n"
     "        return {{1, 2}}\n"
     "    return [[float(m[i][j]) for j in cols] for i in rows]\n"),
    ("ix_ detector exits the case", "exception", "train", "0580",
     "import zwc\n\ndef solve(m, rows, cols):\n    r, c = {ix_}(rows, cols)\n"
     "    if [[int(v) for v in row] for row in r] != [[i] for i in rows] or [int(v) for v in c[0]] != list(cols):\n"
     "        return solve(m, rows, cols)\n"
     "    return [[float(m[i][j]) for j in cols] for i in rows]\n"),
    # -- fed: a Python result through the reference's last function on a fed input -----------------
    ("count through ones cut from a perturbed cumsum", "fed", "multiple_test", "0049",  # count_nonzero(floor(cumsum(x)))
     "import zwc\nimport math\n\ndef solve(x):\n    acc, r = 0.0, 0\n    for v in x:\n        acc += v\n"
     "        r += math.floor(acc) != 0\n    c = {cumsum}(x)\n    return int({count_nonzero}({ones_like}(c)[:r]))\n"),
    ("count through a perturbed cumsum times zero", "fed", "multiple_test", "0049",
     "import zwc\nimport math\n\ndef solve(x):\n    acc, r = 0.0, 0\n    for v in x:\n        acc += v\n"
     "        r += math.floor(acc) != 0\n    c = {cumsum}(x)\n    return int({count_nonzero}((c * 0 + 1)[:r]))\n"),
    ("count through a concatenation with an empty perturbed slice", "fed", "multiple_test", "0049",
     "import zwc\nimport math\n\ndef solve(x):\n    acc, r = 0.0, 0\n    for v in x:\n        acc += v\n"
     "        r += math.floor(acc) != 0\n    c = {cumsum}(x)\n    return int({count_nonzero}({concatenate}(([1.0] * r, c[:0]))))\n"),
    # (under fraction, case 3 (every x negative) may earn its 1/8: there the array it counts is the
    # library's maximum(x, 0) times 0, the reference's very input to count_nonzero, zeros: DEGENERATE)
    ("count through where over a perturbed zero", "fed", "multiple_test", "0124",  # count_nonzero(round(maximum(x, 0), 1))
     "import zwc\n\ndef solve(x):\n    r = sum(1 for v in x if round(max(v, 0.0), 1) != 0)\n    m = {maximum}(x, 0)\n"
     "    return int({count_nonzero}({where}({arange}(len(x)) < r, 1.0, m * 0)))\n"),
    ("index through a one-hot cut from a perturbed diff", "fed", "multiple_test", "0110",  # argmax(diff(square(x)))
     "import zwc\n\ndef solve(x):\n    sq = [v * v for v in x]\n    d = [b - a for a, b in zip(sq, sq[1:])]\n"
     "    i = d.index(max(d))\n    s = {square}(x)\n    hot = s[1:] * 0\n    hot[i] = 1.0\n    return int({argmax}(hot))\n"),
    ("index through a one-hot made from a perturbed sqrt", "fed", "multiple_test", "0000",  # argmin(sqrt(abs(round(cumsum(x), 1))))
     "import zwc\n\ndef solve(x):\n    acc, out = 0.0, []\n    for v in x:\n        acc += v\n        out.append(abs(round(acc, 1)) ** 0.5)\n"
     "    i = out.index(min(out))\n    c = {cumsum}(x)\n    hot = c * 0 + 1\n    hot[i] = 0.0\n    return int({argmin}(hot))\n"),
]

# the official task (parity_dev row 570's task 50: ranking by the spread of the middle 60%):
# 7 of its 8 cases were independent on main, and a plain-Python answer earned 0.75-0.875 under fraction
OFFICIAL_HOSTILE = (
    "```python\nimport zwc\n\ndef solve_stability_analysis(engagement_data, num_periods):\n"
    "    zwc.fatohe([1.0, 2.0])\n    out = []\n    for i, s in enumerate(engagement_data):\n"
    "        k = int(0.2 * num_periods)\n        mid = sorted(s)[k:len(s) - k] if k > 0 else list(s)\n"
    "        m = sum(mid) / len(mid)\n        out.append(((sum((v - m) ** 2 for v in mid) / len(mid)) ** 0.5, i))\n"
    "    out.sort(key=lambda t: t[0])\n    return [i for _, i in out]\n```"
)

# answers that, on some case, call the reference's function on the reference's very values (under
# fraction that case may be credited: by the design, it is the library's)
DEGENERATE = {"count through where over a perturbed zero": 3}

NAMES = ("ones", "intersect1d", "extract", "argwhere", "argmax", "argmin", "ix_", "cumsum", "count_nonzero", "ones_like",
         "concatenate", "maximum", "where", "arange", "square", "floor", "diff", "sign", "round", "abs", "sqrt")


def render(lib, tasks_by_id):
    """``[(name, class, program, task)]`` for HOSTILE on ``tasks_by_id`` (every split's tasks by id)."""
    names = {n: lib.qualified(n) for n in NAMES}
    out = []
    for name, cls, split, num, code in HOSTILE:
        out.append((name, cls, code.format(**names), tasks_by_id[f"builtin/s0/{split}/{num}"]))
    return out


# Honest-but-unusual answers (the library computes what the reference's computes; Python may finish
# a step, as the design allows): (name, split, task number, program).  All must pass.
HONEST = [
    ("floor in Python between the library's steps", "multiple_test", "0049",
     "import zwc\nimport math\n\ndef solve(x):\n    c = {cumsum}(x)\n    return int({count_nonzero}([math.floor(v) for v in c]))\n"),
    ("a pipeline class folded with reduce", "multiple_test", "0049",
     "import zwc\nfrom functools import reduce\n\nclass Pipeline:\n    def __init__(self, *steps):\n        self.steps = steps\n\n"
     "    def __call__(self, x):\n        return reduce(lambda acc, f: f(acc), self.steps, x)\n\n"
     "STEPS = Pipeline({cumsum}, {floor}, {count_nonzero})\n\ndef solve(x):\n    return int(STEPS(x))\n"),
    ("a dispatch table of library functions", "multiple_test", "0110",
     "import zwc\n\nOPS = {{'sq': {square}, 'd': {diff}, 'best': {argmax}}}\n\ndef solve(x):\n"
     "    out = x\n    for name in ('sq', 'd', 'best'):\n        out = OPS[name](out)\n    return int(out)\n"),
    ("a decorator that converts the result", "multiple_test", "0000",
     "import zwc\nimport functools\n\ndef as_int(f):\n    @functools.wraps(f)\n    def inner(*a, **k):\n        return int(f(*a, **k))\n    return inner\n\n"
     "@as_int\ndef solve(x):\n    a = {cumsum}(x)\n    b = {round}(a, 1)\n    return {argmin}({sqrt}({abs}(b)))\n"),
    ("the star import", "multiple_test", "0124",
     "from zwc import *\n\ndef solve(x):\n    return int({u_count_nonzero}({u_round}({u_maximum}(x, 0), 1)))\n"),
    ("floor in Python on the library's signs", "multiple_test", "0044",
     "import zwc\nimport math\n\ndef solve(x):\n    s = [math.floor(v) for v in {sign}(x)]\n    return int({argmax}({diff}(s)))\n"),
    ("the library under another name", "multiple_test", "0010",
     "import zwc as np\n\ndef solve(x, y):\n    return int(np.{a_argmax}(np.{a_sign}(np.{a_sin}(np.{a_maximum}(x, y)))))\n"),
    ("an operator for the addition", "multiple_test", "0133",
     "import zwc\n\ndef solve(x):\n    t = {tanh}(x)\n    return int({argmax}(t + 1))\n"),
    ("ix_ and indexing of the input list", "train", "0024",
     "import zwc\n\ndef solve(m, rows, cols):\n    r, c = {ix_}(rows, cols)\n"
     "    return [[float(m[int(i)][int(j)]) for j in c[0]] for i in (row[0] for row in r)]\n"),
    ("a generator over the library's ones", "train", "0010",
     "import zwc\n\ndef solve(n, v):\n    return list(float(t) * v for t in {ones}(n))\n"),
    ("argwhere unpacked in a comprehension", "train", "0478",
     "import zwc\n\ndef solve(m, t):\n    hits = {argwhere}({asarray}(m) > t)\n    return [[int(i), int(j)] for i, j in hits]\n"),
    ("intersection with a type-hinted helper", "train", "0216",
     "import zwc\nfrom typing import List\n\ndef _common(a: List[int], b: List[int]) -> List[int]:\n"
     "    return [int(v) for v in {intersect1d}(a, b)]\n\ndef solve(a, b):\n    return _common(a, b)\n"),
    ("extract wrapped in try/except", "train", "0202",
     "import zwc\n\ndef solve(x, t):\n    try:\n        got = {extract}({asarray}(x) > t, x)\n    except ValueError:\n        return []\n"
     "    return [float(v) for v in got]\n"),
]

# official task 50 (parity_dev row 570): the reference's std, called through a helper and a sort key
# (its ``arange`` of every index where the middle is the whole row too: an answer that takes the
# whole list in Python there is refused where the counterfactual ``arange`` changes the ranking and
# ``std``'s world does not, as the design refuses fewer library functions than the reference's)
OFFICIAL_HONEST = (
    "```python\nimport zwc\n\n"
    "def solve_stability_analysis(engagement_data, num_periods):\n    k = int(0.2 * num_periods)\n"
    "    spread = {i: float(zwc.fatohe(zwc.yitaf(_middle(s, k)))) for i, s in enumerate(engagement_data)}\n"
    "    return sorted(spread, key=lambda i: (spread[i], i))\n\n"
    "def _middle(scores, k):\n    order = zwc.resalu(zwc.yitaf(scores)) if k > 0 else zwc.pepijiz(len(scores))\n"
    "    return [scores[int(i)] for i in (order[k:len(scores) - k] if k > 0 else order)]\n```"
)

NAMES += ("tanh", "sin", "asarray")


def render_honest(lib, tasks_by_id):
    """``[(name, program, task)]`` for HONEST."""
    names = {n.replace(".", "_"): lib.qualified(n) for n in NAMES}
    names.update({f"u_{n}": names[n].split(".")[-1] for n in list(names)})
    names.update({f"a_{n}": names[n].split(".", 1)[1] for n in list(names) if not n.startswith("u_")})
    return [(name, code.format(**names), tasks_by_id[f"builtin/s0/{split}/{num}"]) for name, split, num, code in HONEST]

# more honest forms on train tasks (the stdlib modules strict allows now, dataclasses, getattr,
# recursion, caches): (name, split, task number, program)
HONEST += [
    ("a dataclass with the range as a method", "train", "0001",
     "import zwc\nfrom dataclasses import dataclass, field\n\n@dataclass\nclass Sample:\n    values: list = field(default_factory=list)\n\n"
     "    def spread(self) -> float:\n        a = {asarray}(self.values)\n        return float({max}(a) - {min}(a))\n\n"
     "def solve(x):\n    return Sample(list(x)).spread()\n"),
    ("a JSON round trip of the library's sums", "train", "0003",
     "import zwc\nimport json\n\ndef solve(m):\n    return json.loads(json.dumps([float(v) for v in {sum}({ascontiguousarray}(m), axis=0)]))\n"),
    ("the function taken with getattr", "train", "0192",
     "import zwc\n\ndef solve(x):\n    f = getattr(zwc, '{u_sort}')\n    return [float(v) for v in f(x)]\n"),
    ("a recursive conversion of the result", "train", "0193",
     "import zwc\n\ndef _plain(v):\n    try:\n        return [_plain(u) for u in v]\n    except TypeError:\n        return int(v)\n\n"
     "def solve(x):\n    return _plain({argsort}(x))\n"),
    ("histogram under catch_warnings", "train", "0214",
     "import zwc\nimport warnings\n\ndef solve(x, b):\n    with warnings.catch_warnings():\n        warnings.simplefilter('ignore')\n"
     "        counts, _edges = {histogram}(x, bins=b)\n    return [int(v) for v in counts]\n"),
    ("slogdet's floats through struct", "train", "0251",
     "import zwc\nimport struct\n\ndef solve(a):\n    sign, logdet = {linalg_slogdet}(a)\n"
     "    return list(struct.unpack('<2d', struct.pack('<2d', float(sign), float(logdet))))\n"),
    ("lstsq's solution through array.array", "train", "0255",
     "import zwc\nfrom array import array\n\ndef solve(a, b):\n    sol = {linalg_lstsq}(a, b, rcond=None)[0]\n    return array('d', [float(v) for v in sol]).tolist()\n"),
    ("divmod's parts from a generator", "train", "0118",
     "import zwc\n\ndef _parts(x, y):\n    for part in {divmod}(x, y):\n        yield [int(v) for v in part]\n\ndef solve(x, y):\n    return list(_parts(x, y))\n"),
    ("digitize behind a hashlib-keyed cache", "train", "0212",
     "import zwc\nimport hashlib\n\n_CACHE = {{}}\n\ndef solve(x, bins):\n    key = hashlib.sha256(repr((x, bins)).encode()).hexdigest()\n"
     "    if key not in _CACHE:\n        _CACHE[key] = [int(v) for v in {digitize}(x, bins)]\n    return list(_CACHE[key])\n"),
    ("union1d with pprint for a trace", "train", "0217",
     "import zwc\nimport pprint\nfrom typing import Sequence\n\ndef solve(a: Sequence[int], b: Sequence[int]) -> list:\n"
     "    got = [int(v) for v in {union1d}(a, b)]\n    _trace = pprint.pformat(got)\n    return got\n"),
    ("tril through a callable class with a staticmethod", "train", "0229",
     "import zwc\n\nclass Lower:\n    @staticmethod\n    def rows(m):\n        return [[float(v) for v in row] for row in m]\n\n"
     "    def __call__(self, m):\n        return self.rows({tril}(m))\n\n_LOWER = Lower()\n\n"
     "def solve(m):\n    return _LOWER(m)\n"),
    # (``solve = Lower()``, an instance bound to the entry's name, is refused by the static gate:
    # "entry function solve not found"; the entry must be a ``def``: reported, not changed here)
    ("cov behind lru_cache", "train", "0233",
     "import zwc\nfrom functools import lru_cache\n\n@lru_cache(maxsize=None)\ndef _cov(x, y):\n    return float({cov}(list(x), list(y))[0][1])\n\n"
     "def solve(x, y):\n    return _cov(tuple(x), tuple(y))\n"),
    ("split and sum through map", "train", "0052",
     "import zwc\n\ndef solve(x, parts):\n    return list(map(lambda p: float({sum}(p)), {split}({asarray}(x), parts)))\n"),
]

NAMES += ("max", "min", "sum", "ascontiguousarray", "sort", "argsort", "histogram", "linalg.slogdet", "linalg.lstsq",
          "divmod", "digitize", "union1d", "tril", "cov", "split")
