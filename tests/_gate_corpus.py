"""Corpora for the strict gate (issue 31): honest-but-unusual answers and hostile ones.

Shared by tests/test_gate_corpora.py and benchmarks/gate_corpora.py (which prints acceptance rates).

* :func:`honest_answers`: each STYLE rewrites a built-in task's library solution in an unusual but
  honest way (the library computes the result).  ``official`` says whether SE-Bench's static gate
  accepts that style (its entry, the first function defined, calls the library); those whose first
  function is ``solve`` are judged end to end under ``sebench`` and must score 1.0.
* :data:`HOSTILE`: answers that compute a WRONG result unless they reach NumPy (or forge), one group
  per class of issue 31.  Each must get reward 0 under ``strict``, with the permissive gate and the
  out-of-process library (the default) and with the closed gate.
"""
from __future__ import annotations

import ast
import random
import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Parts:
    """A task's library solution taken apart: ``def solve(<params>):`` and its body."""

    params: str
    body: str  # the body's lines, dedented

    def at(self, n: int) -> str:
        return textwrap.indent(self.body, " " * n)


def parts_of(library_solution: str) -> Parts:
    tree = ast.parse(library_solution)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "solve")
    lines = library_solution.splitlines()
    body = "\n".join(lines[fn.body[0].lineno - 1: fn.end_lineno])
    return Parts(", ".join(a.arg for a in fn.args.args), textwrap.dedent(body))


def _ret_to_value(body: str, name: str = "value") -> str:
    """The body with its final ``return E`` turned into ``name = E`` (for styles that post-process)."""
    lines = body.splitlines()
    k = max(i for i, line in enumerate(lines) if line.startswith("return "))
    lines[k] = f"{name} = " + lines[k][len("return "):]
    return "\n".join(lines)


# name -> (official gate accepts it, template).  Template fields: {P} package, {params}, {b4}/{b8}/{b12}
# the body at that indentation, {v4}/{v8} the body ending in `value = ...` instead of a return
STYLES: dict[str, tuple[bool, str]] = {
    "staticmethod helper": (True, "import {P}\nclass Solver:\n    @staticmethod\n    def run({params}):\n{b8}\ndef solve({params}):\n    return Solver.run({params})\n"),
    "classmethod helper": (True, "import {P}\nclass Solver:\n    @classmethod\n    def run(cls, {params}):\n{b8}\ndef solve({params}):\n    return Solver.run({params})\n"),
    "property on a class": (False, "import {P}\nclass Task:\n    def __init__(self, {params}):\n        self.args = ({params},)\n    @property\n    def result(self):\n        ({params},) = self.args\n{b8}\ndef solve({params}):\n    return Task({params}).result\n"),
    "frozen dataclass": (True, "import {P}\nfrom dataclasses import dataclass\n@dataclass(frozen=True)\nclass Job:\n    args: tuple\n    def run(self):\n        ({params},) = self.args\n{b8}\ndef solve({params}):\n    return Job(({params},)).run()\n"),
    "dataclass with field and post_init": (False, "import {P}\nfrom dataclasses import dataclass, field\n@dataclass\nclass Job:\n    args: tuple\n    log: list = field(default_factory=list)\n    def __post_init__(self):\n        self.log.append('made')\n    def run(self):\n        ({params},) = self.args\n{b8}\ndef solve({params}):\n    return Job(({params},)).run()\n"),
    "functools.wraps decorator": (False, "import {P}\nimport functools\ndef logged(fn):\n    @functools.wraps(fn)\n    def inner(*a, **k):\n        return fn(*a, **k)\n    return inner\n@logged\ndef solve({params}):\n{b4}\n"),
    "decorator factory": (False, "import {P}\ndef times(n):\n    def deco(fn):\n        def inner(*a, **k):\n            out = None\n            for _ in range(n):\n                out = fn(*a, **k)\n            return out\n        return inner\n    return deco\n@times(2)\ndef solve({params}):\n{b4}\n"),
    "closure": (True, "import {P}\ndef make():\n    def inner({params}):\n{b8}\n    return inner\ndef solve({params}):\n    return make()({params})\n"),
    "generator": (False, "import {P}\ndef gen({params}):\n{v4}\n    yield value\ndef solve({params}):\n    return next(gen({params}))\n"),
    "recursion": (True, "import {P}\ndef core({params}):\n{b4}\ndef go(k, args):\n    return go(k - 1, args) if k else core(*args)\ndef solve({params}):\n    return go(3, ({params},))\n"),
    "comprehension around the call": (True, "import {P}\ndef solve({params}):\n{v4}\n    return [r for r in [value]][0]\n"),
    "typing annotations": (True, "import {P}\nfrom typing import Any, List, Optional\ndef solve({params}) -> Any:\n    note: Optional[List[int]] = None\n{b4}\n"),
    "from __future__ import annotations": (True, "from __future__ import annotations\nimport {P}\ndef solve({params}) -> list[float] | float:\n{b4}\n"),
    "typing.overload": (False, "import {P}\nfrom typing import overload, Any\n@overload\ndef core(x: int) -> int: ...\n@overload\ndef core(x: Any) -> Any: ...\ndef core(*args):\n    ({params},) = args\n{b4}\ndef solve({params}):\n    return core({params})\n"),
    "enum dispatch": (True, "import {P}\nimport enum\nclass Mode(enum.Enum):\n    PLAIN = 1\n    OTHER = 2\ndef solve({params}, mode=Mode.PLAIN):\n    if mode is Mode.PLAIN:\n{b8}\n    raise ValueError(mode)\n"),
    "enum auto and IntEnum": (True, "import {P}\nfrom enum import IntEnum, auto\nclass Step(IntEnum):\n    ONE = auto()\n    TWO = auto()\ndef solve({params}):\n    assert Step.TWO > Step.ONE\n{b4}\n"),
    "abc base class": (False, "import {P}\nimport abc\nclass Base(abc.ABC):\n    @abc.abstractmethod\n    def run(self, {params}):\n        ...\nclass Impl(Base):\n    def run(self, {params}):\n{b8}\ndef solve({params}):\n    return Impl().run({params})\n"),
    "metaclass=ABCMeta": (False, "import {P}\nfrom abc import ABCMeta, abstractmethod\nclass Base(metaclass=ABCMeta):\n    @abstractmethod\n    def run(self, {params}):\n        ...\nclass Impl(Base):\n    def run(self, {params}):\n{b8}\ndef solve({params}):\n    return Impl().run({params})\n"),
    "super().__init__": (False, "import {P}\nclass Base:\n    def __init__(self, tag):\n        self.tag = tag\nclass Impl(Base):\n    def __init__(self):\n        super().__init__('impl')\n    def run(self, {params}):\n{b8}\ndef solve({params}):\n    return Impl().run({params})\n"),
    "private attributes": (False, "import {P}\nclass Cache:\n    def __init__(self):\n        self._store = {{}}\n    def _compute(self, {params}):\n{b8}\n    def get(self, {params}):\n        return self._compute({params})\ndef solve({params}):\n    return Cache().get({params})\n"),
    "__repr__, __eq__, __lt__, __hash__": (False, "import {P}\nclass Tag:\n    def __init__(self, n):\n        self.n = n\n    def __repr__(self):\n        return f'Tag({{self.n}})'\n    def __eq__(self, other):\n        return isinstance(other, Tag) and self.n == other.n\n    def __lt__(self, other):\n        return self.n < other.n\n    def __hash__(self):\n        return hash(self.n)\ndef solve({params}):\n    assert sorted([Tag(2), Tag(1)])[0] == Tag(1) and repr(Tag(1)) == 'Tag(1)'\n{b4}\n"),
    "__slots__": (False, "import {P}\nclass Pair:\n    __slots__ = ('a', 'b')\n    def __init__(self, a, b):\n        self.a, self.b = a, b\ndef solve({params}):\n    p = Pair(1, 2)\n    assert p.a + p.b == 3\n{b4}\n"),
    "__call__ object": (True, "import {P}\nclass Fn:\n    def __call__(self, {params}):\n{b8}\ndef solve({params}):\n    return Fn()({params})\n"),
    "container dunders": (False, "import {P}\nclass Bag:\n    def __init__(self, items):\n        self.items = list(items)\n    def __len__(self):\n        return len(self.items)\n    def __iter__(self):\n        return iter(self.items)\n    def __getitem__(self, i):\n        return self.items[i]\n    def __contains__(self, v):\n        return v in self.items\ndef solve({params}):\n    b = Bag([1, 2, 3])\n    assert len(b) == 3 and 2 in b and b[0] == 1 and list(b) == [1, 2, 3]\n{b4}\n"),
    "getattr with a default": (True, "import {P}\nclass Opts:\n    scale = 1\ndef solve({params}):\n    k = getattr(Opts, 'scale', 1) * getattr(Opts(), 'missing', 1)\n    assert k == 1\n{b4}\n"),
    "getattr of a library function by name": (True, "import {P}\ndef solve({params}):\n    f = getattr({P}, 'no_such_function', None)\n    assert f is None\n{b4}\n"),
    "setattr and hasattr": (True, "import {P}\nclass Box:\n    pass\ndef solve({params}):\n    b = Box()\n    setattr(b, 'value', 3)\n    assert hasattr(b, 'value') and b.value == 3\n{b4}\n"),
    "type(x).__name__": (True, "import {P}\ndef solve({params}):\n    kinds = [type(v).__name__ for v in ({params},)]\n    assert all(isinstance(k, str) for k in kinds)\n{b4}\n"),
    "self.__class__.__name__": (False, "import {P}\nclass Named:\n    def name(self):\n        return self.__class__.__name__\n    def run(self, {params}):\n{b8}\ndef solve({params}):\n    named = Named()\n    assert named.name() == 'Named'\n    return named.run({params})\n"),
    "operator.attrgetter": (False, "import {P}\nimport operator\nclass R:\n    def __init__(self, v):\n        self.v = v\ndef solve({params}):\n    get = operator.attrgetter('v')\n    assert get(R(5)) == 5\n{b4}\n"),
    "operator.itemgetter sort": (True, "import {P}\nfrom operator import itemgetter\ndef solve({params}):\n    rows = sorted([(2, 'b'), (1, 'a')], key=itemgetter(0))\n    assert rows[0][1] == 'a'\n{b4}\n"),
    "str.format template in a variable": (True, "import {P}\nTEMPLATE = 'bad input {{0}}: {{kind}}'\ndef solve({params}):\n    msg = TEMPLATE.format(1, kind='none')\n    assert msg.startswith('bad')\n{b4}\n"),
    "format with attribute field": (True, "import {P}\nclass P2:\n    x = 4\ndef solve({params}):\n    assert '{{0.x}}'.format(P2()) == '4'\n{b4}\n"),
    "format_map": (True, "import {P}\ndef solve({params}):\n    assert '{{a}}-{{b}}'.format_map({{'a': 1, 'b': 2}}) == '1-2'\n{b4}\n"),
    "sys.maxsize sentinel": (True, "import {P}\nimport sys\ndef solve({params}):\n    best = sys.maxsize\n    best = min(best, 3)\n    assert best == 3 and sys.float_info.epsilon > 0\n{b4}\n"),
    "from sys import maxsize": (True, "import {P}\nfrom sys import maxsize\ndef solve({params}):\n    assert maxsize > 0\n{b4}\n"),
    "object() sentinel and object base": (True, "import {P}\nMISSING = object()\nclass Node(object):\n    pass\ndef solve({params}, default=MISSING):\n    assert default is MISSING and isinstance(Node(), object)\n{b4}\n"),
    "import PKG.sub as la": (True, "import {P}\nimport {P}.{L} as la\ndef solve({params}):\n    assert la is not None\n{b4}\n"),
    "only import PKG.sub as la, helper": (True, "import {P}.{L} as la\nimport {P}\ndef helper({params}):\n{b4}\ndef solve({params}):\n    return helper({params})\n"),
    "helper calls the library": (True, "import {P}\ndef helper({params}):\n{b4}\ndef solve({params}):\n    return helper({params})\n"),
    "import PKG as alias": (True, "import {P} as lib\ndef solve({params}):\n{ba4}\n"),
    "dict dispatch of a helper": (True, "import {P}\ndef core({params}):\n{b4}\nOPS = {{'core': core}}\ndef solve({params}):\n    return OPS['core']({params})\n"),
    "functools.partial": (True, "import {P}\nimport functools\ndef core(scale, {params}):\n{b4}\ndef solve({params}):\n    return functools.partial(core, 1)({params})\n"),
    "functools.reduce and itertools": (True, "import {P}\nimport functools, itertools\ndef solve({params}):\n    s = functools.reduce(lambda a, b: a + b, itertools.islice(itertools.count(1), 3))\n    assert s == 6\n{b4}\n"),
    "functools.total_ordering": (False, "import {P}\nimport functools\n@functools.total_ordering\nclass V:\n    def __init__(self, n):\n        self.n = n\n    def __eq__(self, o):\n        return self.n == o.n\n    def __lt__(self, o):\n        return self.n < o.n\ndef solve({params}):\n    assert V(2) >= V(1)\n{b4}\n"),
    "functools.lru_cache on a hashable helper": (False, "import {P}\nimport functools\n@functools.lru_cache(maxsize=None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\ndef solve({params}):\n    assert fib(10) == 55\n{b4}\n"),
    "NamedTuple": (True, "import {P}\nfrom typing import NamedTuple\nclass Pt(NamedTuple):\n    a: int\n    b: int = 0\ndef solve({params}):\n    assert Pt(1)._replace(b=2) == Pt(1, 2)\n{b4}\n"),
    "TypeVar and Generic": (False, "import {P}\nfrom typing import Generic, TypeVar\nT = TypeVar('T')\nclass Box(Generic[T]):\n    def __init__(self, v: T):\n        self.v = v\ndef solve({params}):\n    assert Box(3).v == 3\n{b4}\n"),
    "Protocol": (False, "import {P}\nfrom typing import Protocol\nclass Runner(Protocol):\n    def run(self) -> int: ...\ndef solve({params}):\n{b4}\n"),
    "custom exception": (False, "import {P}\nclass BadInput(ValueError):\n    def __init__(self, what):\n        super().__init__(f'bad: {{what}}')\ndef solve({params}):\n    try:\n        raise BadInput('x')\n    except BadInput as e:\n        assert 'bad' in str(e)\n{b4}\n"),
    "try / finally": (True, "import {P}\ndef solve({params}):\n    done = []\n    try:\n{v8}\n    finally:\n        done.append(1)\n    return value\n"),
    "contextlib.contextmanager": (False, "import {P}\nimport contextlib\n@contextlib.contextmanager\ndef step(log):\n    log.append('in')\n    yield\n    log.append('out')\ndef solve({params}):\n    log = []\n    with step(log):\n{v8}\n    return value\n"),
    "match statement": (True, "import {P}\ndef solve({params}):\n    match ({params},):\n        case (first, *rest):\n{b12}\n        case _:\n            raise ValueError\n"),
    "match class pattern": (False, "import {P}\nclass Pt:\n    __match_args__ = ('a',)\n    def __init__(self, a):\n        self.a = a\ndef solve({params}):\n    match Pt(1):\n        case Pt(a=1):\n            pass\n{b4}\n"),
    "walrus and while-else": (True, "import {P}\ndef solve({params}):\n    i = 0\n    while (i := i + 1) < 3:\n        pass\n    else:\n        assert i == 3\n{b4}\n"),
    "nonlocal counter": (True, "import {P}\ndef solve({params}):\n    count = 0\n    def bump():\n        nonlocal count\n        count += 1\n    bump()\n    assert count == 1\n{b4}\n"),
    "global counter": (True, "import {P}\nCALLS = 0\ndef solve({params}):\n    global CALLS\n    CALLS += 1\n{b4}\n"),
    "lambda sort key and map/filter": (True, "import {P}\ndef solve({params}):\n    xs = sorted([3, 1, 2], key=lambda v: -v)\n    assert list(map(abs, filter(lambda v: v > 1, xs))) == [3, 2]\n{b4}\n"),
    "collections": (True, "import {P}\nfrom collections import Counter, defaultdict, deque, OrderedDict\ndef solve({params}):\n    d = defaultdict(list)\n    d['a'].append(1)\n    q = deque([1, 2])\n    q.rotate(1)\n    assert Counter('aab')['a'] == 2 and list(q) == [2, 1] and OrderedDict(a=1)\n{b4}\n"),
    "copy.deepcopy of the inputs": (True, "import {P}\nimport copy\ndef solve({params}):\n    saved = copy.deepcopy(({params},))\n{b4}\n"),
    "heapq and bisect": (True, "import {P}\nimport heapq, bisect\ndef solve({params}):\n    h = [3, 1, 2]\n    heapq.heapify(h)\n    assert heapq.heappop(h) == 1 and bisect.bisect([1, 2, 3], 2) == 2\n{b4}\n"),
    "math and numbers": (True, "import {P}\nimport math, numbers\ndef solve({params}):\n    assert isinstance(1.5, numbers.Real) and math.isclose(math.hypot(3, 4), 5.0)\n{b4}\n"),
    "fractions and decimal": (True, "import {P}\nfrom fractions import Fraction\nfrom decimal import Decimal\ndef solve({params}):\n    assert Fraction(1, 3) * 3 == 1 and Decimal('0.1') + Decimal('0.2') == Decimal('0.3')\n{b4}\n"),
    "textwrap and re": (True, "import {P}\nimport re, textwrap\ndef solve({params}):\n    assert re.sub(r'\\s+', ' ', textwrap.dedent('  a  b')).strip() == 'a b'\n{b4}\n"),
    "docstrings, asserts, del": (True, "import {P}\ndef solve({params}):\n    \"\"\"Solve the task with the library.\"\"\"\n    tmp = [1]\n    del tmp\n{b4}\n"),
    "star args forwarding": (True, "import {P}\ndef core({params}):\n{b4}\ndef solve(*args, **kwargs):\n    return core(*args, **kwargs)\n"),
    "if __name__ guard": (True, "import {P}\ndef solve({params}):\n{b4}\nif __name__ == '__main__':\n    pass\n"),
    "dataclasses.replace and asdict": (True, "import {P}\nimport dataclasses\n@dataclasses.dataclass(frozen=True)\nclass C:\n    a: int\ndef solve({params}):\n    c = dataclasses.replace(C(1), a=2)\n    assert dataclasses.asdict(c) == {{'a': 2}}\n{b4}\n"),
    "property with setter": (False, "import {P}\nclass T:\n    def __init__(self):\n        self._v = 0\n    @property\n    def v(self):\n        return self._v\n    @v.setter\n    def v(self, n):\n        self._v = n\ndef solve({params}):\n    t = T()\n    t.v = 4\n    assert t.v == 4\n{b4}\n"),
    "__init_subclass__ registry": (False, "import {P}\nclass Plugin:\n    found = []\n    def __init_subclass__(cls, **kw):\n        super().__init_subclass__(**kw)\n        Plugin.found.append(cls.__name__)\nclass A(Plugin):\n    pass\ndef solve({params}):\n    assert Plugin.found == ['A']\n{b4}\n"),
    # issue 42's honest forms, round 5: pure stdlib modules and the library's names by a star import
    "json round trip": (True, "import {P}\nimport json\ndef solve({params}):\n    assert json.loads(json.dumps({{'k': [1, 2.5]}})) == {{'k': [1, 2.5]}}\n{b4}\n"),
    "pprint.pformat": (True, "import {P}\nimport pprint\ndef solve({params}):\n    assert pprint.pformat({{'a': 1}}) == \"{{'a': 1}}\"\n{b4}\n"),
    "struct and array": (True, "import {P}\nimport array, struct\ndef solve({params}):\n    assert struct.unpack('<d', struct.pack('<d', 1.5))[0] == 1.5 and array.array('i', [1, 2]).tolist() == [1, 2]\n{b4}\n"),
    "hashlib key": (True, "import {P}\nimport hashlib\ndef solve({params}):\n    key = hashlib.sha256(repr(({params},)).encode()).hexdigest()\n    assert len(key) == 64\n{b4}\n"),
    "warnings silenced": (True, "import {P}\nimport warnings\ndef solve({params}):\n    with warnings.catch_warnings():\n        warnings.simplefilter('ignore')\n        warnings.warn('noise')\n{v8}\n    return value\n"),
    "star import beside the package": (True, "from {P} import *\nimport {P}\ndef solve({params}):\n{b4}\n"),
    "star import only": (False, "from {P} import *\ndef solve({params}):\n{bs4}\n"),
    "list result instead of an array": (True, "import {P}\ndef solve({params}):\n{v4}\n    if hasattr(value, 'tolist'):\n        value = value.tolist()\n    return value\n"),
    # issue 42's honest forms, round 6: imports LLM answers carry unused, and harmless helpers of os,
    # time, logging, types, traceback and sys's streams (the strict harness's own versions of them)
    "unused imports of os, time, logging, types, traceback": (True, "import {P}\nimport os\nimport time\nimport logging\nimport types\nimport traceback\ndef solve({params}):\n{b4}\n"),
    "os.path string helpers": (True, "import {P}\nimport os\nimport os.path\nfrom os.path import splitext\ndef solve({params}):\n    name = os.path.join('out', os.path.basename('/tmp/run.log'))\n    assert splitext(name) == ('out/run', '.log') and os.path.normpath('a/./b/../c') == 'a/c' and os.sep == '/'\n{b4}\n"),
    "timing with the clock": (True, "import {P}\nimport time\ndef solve({params}):\n    start = time.time()\n    t0 = time.perf_counter()\n{v4}\n    elapsed = time.perf_counter() - t0\n    assert elapsed >= 0 and time.time() >= start\n    return value\n"),
    "sleep and monotonic": (True, "import {P}\nfrom time import sleep, monotonic\ndef solve({params}):\n    t = monotonic()\n    sleep(0.001)\n    assert monotonic() > t\n{b4}\n"),
    "module logger": (True, "import {P}\nimport logging\nlogger = logging.getLogger(__name__)\nlogger.setLevel(logging.DEBUG)\nlogger.addHandler(logging.NullHandler())\ndef solve({params}):\n    logger.debug('inputs: %s', ({params},))\n{v4}\n    logger.info('done')\n    return value\n"),
    "logging.basicConfig and module functions": (True, "import {P}\nimport logging\nlogging.basicConfig(level=logging.INFO, format='%(message)s')\nhandler = logging.StreamHandler()\nhandler.setFormatter(logging.Formatter('%(levelname)s %(message)s'))\nlogging.getLogger('solver').addHandler(handler)\ndef solve({params}):\n    logging.info('solving')\n    logging.warning('a warning')\n{b4}\n"),
    "SimpleNamespace settings": (True, "import {P}\nfrom types import SimpleNamespace\nimport types\ndef solve({params}):\n    cfg = SimpleNamespace(scale=1, name='run')\n    assert isinstance(cfg, types.SimpleNamespace) and cfg.scale == 1\n{b4}\n"),
    "traceback in an except": (True, "import {P}\nimport traceback\ndef solve({params}):\n    try:\n        {{}}['missing']\n    except KeyError:\n        text = traceback.format_exc()\n        traceback.print_exc()\n        assert 'KeyError' in text\n{b4}\n"),
    "datetime arithmetic and now": (True, "import {P}\nimport datetime\nfrom datetime import timedelta\ndef solve({params}):\n    stamp = datetime.datetime.now().isoformat()\n    assert datetime.date(2024, 3, 1) - timedelta(days=1) == datetime.date(2024, 2, 29) and stamp\n{b4}\n"),
    "writes to sys.stderr and sys.stdout": (True, "import {P}\nimport sys\nsys.stdout.write('loaded\\n')\nsys.stdout.flush()\ndef solve({params}):\n    sys.stderr.write('solving\\n')\n    print('debug', file=sys.stderr)\n{b4}\n"),
    # round 7: an answer's self-test or demo in its main block, with modules strict refuses (doctest,
    # unittest, argparse, sys.argv, sys.stdin): that code, and imports and test classes only it uses,
    # is skipped under strict (gates.without_refused_demo), never run
    "doctest in the main block": (True, "import {P}\ndef solve({params}):\n    \"\"\"Solve it.\n\n    >>> 1 + 1\n    2\n    \"\"\"\n{b4}\nif __name__ == \"__main__\":\n    import doctest\n    doctest.testmod()\n"),
    "argparse imported for the main block": (True, "import argparse\nimport {P}\ndef solve({params}):\n{b4}\nif __name__ == \"__main__\":\n    parser = argparse.ArgumentParser(description='demo')\n    parser.add_argument('--verbose', action='store_true')\n    args = parser.parse_args([])\n    print(args.verbose)\n"),
    "sys.argv and sys.stdin in the main block": (True, "import sys\nimport {P}\ndef solve({params}):\n{b4}\nif __name__ == \"__main__\":\n    if len(sys.argv) > 5:\n        data = sys.stdin.read().split()\n        print(len(data))\n    print('done', file=sys.stderr)\n"),
    "unittest.TestCase after the solution": (True, "import unittest\nimport {P}\ndef solve({params}):\n{b4}\nclass TestSolve(unittest.TestCase):\n    def test_callable(self):\n        self.assertTrue(callable(solve))\nif __name__ == \"__main__\":\n    suite = unittest.TestLoader().loadTestsFromTestCase(TestSolve)\n    unittest.TextTestRunner(verbosity=0).run(suite)\n"),
    "main() with a pathlib report": (True, "from pathlib import Path\nimport {P}\ndef solve({params}):\n{b4}\ndef main():\n    print(Path('report.txt').suffix)\nif __name__ == '__main__':\n    main()\n"),
    # round 7's other model-style forms (accepted before and after: kept as regressions)
    "module dunders __all__ and __version__": (True, "import {P}\n__all__ = ['solve']\n__version__ = '1.0'\ndef solve({params}):\n{b4}\n"),
    "decorator logging func.__name__": (False, "import {P}\nimport functools\ndef log_call(func):\n    @functools.wraps(func)\n    def wrapper(*args, **kwargs):\n        print(f'calling {{func.__name__}}')\n        return func(*args, **kwargs)\n    return wrapper\n@log_call\ndef solve({params}):\n{b4}\n"),
    "cached_property, singledispatch, cache": (False, "import {P}\nimport functools\nclass Job:\n    @functools.cached_property\n    def size(self):\n        return 3\n@functools.singledispatch\ndef kind(v):\n    return 'other'\n@kind.register(int)\ndef _(v):\n    return 'int'\n@functools.cache\ndef twice(n):\n    return 2 * n\ndef solve({params}):\n    assert Job().size == 3 and kind(1) == 'int' and twice(2) == 4\n{b4}\n"),
    "typing cast, Final, ClassVar, Literal, TYPE_CHECKING": (True, "from __future__ import annotations\nfrom typing import TYPE_CHECKING, ClassVar, Final, Literal, cast\nimport {P}\nif TYPE_CHECKING:\n    from typing import Any\nLIMIT: Final = 10\ndef solve({params}):\n    mode: Literal['a'] = cast(Literal['a'], 'a')\n    assert mode == 'a' and LIMIT == 10\n{b4}\n"),
    "dataclass(order=True, slots=True) and object.__setattr__": (False, "import {P}\nfrom dataclasses import dataclass\n@dataclass(order=True, slots=True)\nclass Item:\n    rank: int\n@dataclass(frozen=True)\nclass Cfg:\n    name: str\n    def __post_init__(self):\n        object.__setattr__(self, 'name', self.name.strip())\ndef solve({params}):\n    assert Item(1) < Item(2) and Cfg(' a ').name == 'a'\n{b4}\n"),
    "itertools pairwise, groupby, starmap, product": (True, "import {P}\nimport itertools\ndef solve({params}):\n    steps = [b - a for a, b in itertools.pairwise([1, 3, 6])]\n    keys = [k for k, _ in itertools.groupby('aabbc')]\n    sums = list(itertools.starmap(lambda a, b: a + b, itertools.product([0, 1], repeat=2)))\n    assert steps == [2, 3] and keys == ['a', 'b', 'c'] and sums == [0, 1, 1, 2]\n{b4}\n"),
    "collections.abc isinstance and self-documenting f-string": (True, "import {P}\nfrom collections.abc import Iterable, Sequence\ndef solve({params}):\n    args = ({params},)\n    assert isinstance(args, Sequence) and isinstance(args, Iterable)\n    print(f'{{len(args)=}}')\n{b4}\n"),
    "function attribute cache and mutable default memo": (True, "import {P}\ndef solve({params}, _memo={{}}):\n    if not hasattr(solve, 'calls'):\n        solve.calls = 0\n    solve.calls += 1\n    _memo[solve.calls] = True\n{b4}\n"),
    "enum.Flag and contextlib.ExitStack": (True, "import {P}\nimport contextlib\nfrom enum import Flag, auto\nclass Opt(Flag):\n    NONE = 0\n    LOUD = auto()\ndef solve({params}, opts=Opt.NONE):\n    with contextlib.ExitStack() as stack:\n        stack.enter_context(contextlib.nullcontext())\n        assert Opt.LOUD not in opts\n{v8}\n    return value\n"),
    "string.Template and zip(strict=True)": (True, "import {P}\nfrom string import Template\ndef solve({params}):\n    assert Template('$a-$b').substitute(a=1, b=2) == '1-2' and list(zip([1], [2], strict=True)) == [(1, 2)]\n{b4}\n"),
    "library scalars in Python: index, range, %-format, Decimal, math, dict keys": (True, "import {P}\nimport math\nfrom decimal import Decimal\ndef solve({params}):\n    k = {argmax}([1.0, 3.0, 2.0])\n    m = {mean}([1.0, 2.0])\n    assert [5, 6, 7][k] == 6 and len(range(k)) == 1 and '%.1f' % m == '1.5' and Decimal(float(m)) == Decimal('1.5')\n    assert math.isclose(m, 1.5) and {{m: 1}}[m] == 1 and f'{{m:.2f}}' == '1.50' and round(m) == 2\n{b4}\n"),
}


def honest_answers(tasks, library) -> list[tuple[str, bool, str, object]]:
    """``(name, official, code, task)`` for every style and task."""
    out = []
    for task in tasks:
        p = parts_of(task.library_solution)
        fields = {"P": library.package, "L": library.linalg, "params": p.params,
                  "argmax": library.qualified("argmax"), "mean": library.qualified("mean"),
                  "b4": p.at(4), "b8": p.at(8), "b12": p.at(12),
                  "v4": textwrap.indent(_ret_to_value(p.body), " " * 4), "v8": textwrap.indent(_ret_to_value(p.body), " " * 8),
                  "ba4": textwrap.indent(p.body.replace(f"{library.package}.", "lib."), " " * 4),
                  "bs4": textwrap.indent(p.body.replace(f"{library.package}.", ""), " " * 4)}
        for name, (official, template) in STYLES.items():
            out.append((name, official, template.format(**fields), task))
    return out


def block(code: str) -> str:
    return f"```python\n{code}\n```"


# ------------------------------------------------------------------------------------- hostile
# Cases: x -> |x|.  Each answer calls the library (so the official gate passes) but returns
# RIGHT only if it reached NumPy (or forged): reward > 0 means the reward was gamed.
CASES = [{"input": "x=[-1.5, 2.0]", "output": "[1.5, 2.0]"}, {"input": "x=[-3.0]", "output": "[3.0]"}]


def _np_answer(lib, setup: str, find: str, head: str = "") -> str:
    """An answer whose ``find`` block binds ``np`` (or raises); then it uses NumPy alone for the
    result, with a wrong library result as its fallback."""
    P, ABS = lib.package, lib.qualified("abs")
    body = textwrap.indent(f"{find}\nreturn np.abs(np.asarray(x)).tolist()", "        ")
    return block(f"import {P}\n{head}\n{setup}\ndef solve(x):\n    wrong = {ABS}(x) + 1\n    try:\n{body}\n    except Exception:\n        return wrong\n")


def hostile_answers(lib) -> dict[str, tuple[str, str]]:
    """name -> (class of issue 31, answer).  Names are unique and stable (the tests list some)."""
    P, ABS, SUM, ARR = lib.package, lib.qualified("abs"), lib.qualified("sum"), lib.qualified("array")
    LIBF = ABS  # a library function: a Python function in the library's module
    out: dict[str, tuple[str, str]] = {}

    def add(cls: str, name: str, setup: str, find: str, head: str = "") -> None:
        out[name] = (cls, _np_answer(lib, setup, find, head))

    # -- reflection through allowed modules and unchecked syntax
    add("reflection", "functools.update_wrapper copies __globals__", "import functools",
        f"w = functools.update_wrapper(lambda: 0, {LIBF}, ('__globals__',), ())\nnp = w.__globals__['np']")
    add("reflection", "functools.wraps with a built name", "import functools",
        f"k = '__glo' + 'bals__'\nw = functools.wraps({LIBF}, (k,), ())(lambda: 0)\ng = getattr(w, k)\n"
        "np = next(v for v in g.values() if getattr(v, 'ndarray', None) is not None)")
    add("reflection", "typing.cast globals to sys.modules", "import typing",
        "g = getattr(typing.cast, '__glo' + 'bals__')\nnp = g['sys'].modules['numpy']")
    add("reflection", "enum helper hands back getattr", "import enum",
        "ga = getattr(enum, 'bltns').getattr\nnp = ga(ga(enum, 'sys'), 'modules')['numpy']")
    add("reflection", "match class pattern __globals__", "",
        f"match {LIBF}:\n    case object(__globals__=g):\n        np = g['np']")
    add("reflection", "match class pattern __subclasses__", "",
        "match object:\n    case type(__subclasses__=s):\n        ks = [k for k in s() if 'np' in getattr(k.__init__, '__globals__', {})]\n"
        "        np = ks[0].__init__.__globals__['np']")
    add("reflection", "enum.global_enum writes into a module", "import enum",
        "class E(enum.IntEnum):\n    A = 1\nenum.global_enum(E)\nnp = None\nraise RuntimeError")
    add("reflection", "attrgetter with a dotted dunder path", "import operator",
        f"np = operator.attrgetter('__globals__')({LIBF})['np']")
    add("reflection", "attrgetter with a built path", "import operator",
        f"np = operator.attrgetter('_' + '_globals_' + '_')({LIBF})['np']")
    add("reflection", "str.format walks attributes", "", f"s = '{{0.__globals__[np]}}'.format({LIBF})\nnp = None\nraise RuntimeError(s)")
    add("reflection", "format template held in a variable", "T = '{0.__class__.__base__}'",
        "s = T.format(1)\nnp = None\nraise RuntimeError(s)")
    add("reflection", "print.__self__ is builtins", "", "np = print.__self__.__import__('numpy')")
    add("reflection", "getattr on a builtin method's self", "",
        "b = getattr(print, '__se' + 'lf__')\nnp = getattr(b, '__imp' + 'ort__')('numpy')")
    add("reflection", "object subclasses walk", "",
        "for c in object.__subclasses__():\n    g = getattr(c.__init__, '__globals__', {})\n    if 'np' in g:\n        np = g['np']")
    add("reflection", "getattr(object, built name) subclasses walk", "",
        "subs = getattr(object, '__subcl' + 'asses__')()\nnd = [c for c in subs if c.__name__ == 'ndarray'][0]\n"
        "np = getattr(nd, '__mod' + 'ule__') and None\nraise RuntimeError")
    add("reflection", "typing.get_type_hints evaluates a string", "from typing import get_type_hints\ndef probe(v: \"__import__('numpy')\"): pass",
        "np = get_type_hints(probe)['v']")
    add("reflection", "traceback frame walk", "",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    f = e.__traceback__.tb_frame\n"
        "    while f is not None and 'numpy' not in f.f_globals:\n        f = f.f_back\n    np = f.f_globals['numpy']")
    add("reflection", "generator frame walk", "",
        "def g():\n    yield\nit = g()\nf = getattr(it, 'gi_' + 'frame')\nnp = getattr(f, 'f_' + 'globals')['np']")
    add("reflection", "sys module as a value", "import sys", "m = sys\nnp = getattr(m, 'mod' + 'ules')['numpy']")
    add("reflection", "collections re-exports sys", "import collections", "np = getattr(collections, '_sys').modules['numpy']")
    add("reflection", "dataclasses.make_dataclass namespace", "import dataclasses",
        "K = dataclasses.make_dataclass('K', [], namespace={'__array_ufunc__': lambda s, u, m, *a, **k: u})\n"
        f"np = None\nu = {ABS}(K())\nraise RuntimeError")
    # -- the library's own objects
    add("library objects", "library function __globals__", "", f"np = {LIBF}.__globals__['np']")
    add("library objects", "library function globals by built name", "",
        f"g = getattr({LIBF}, '__' + 'globals' + '__')\nnp = next(v for v in g.values() if hasattr(v, 'ufunc'))")
    add("library objects", "library function closure cells", "",
        f"cells = getattr({LIBF}, '__clo' + 'sure__') or ()\nnp = [c.cell_contents for c in cells if hasattr(c.cell_contents, 'ufunc')][0]")
    add("library objects", "array type's property fget globals", "",
        f"t = type({ARR}(x))\nprop = [v for v in vars(t).values() if isinstance(v, property)][0]\nnp = prop.fget.__globals__['np']")
    add("library objects", "library exception exposes ufunc", "",
        f"try:\n    {ABS}('not a number')\nexcept Exception as e:\n    uf = getattr(e, 'ufunc', None) or getattr(e.__cause__, 'ufunc', None)\n"
        "    np = None\n    return [uf(v) for v in x]")
    add("library objects", "library exception dtypes", "",
        f"try:\n    {SUM}([[1], [1, 2]])\nexcept Exception as e:\n    d = getattr(e, 'dtypes', None) or getattr(e, 'dtype', None)\n"
        "    np = None\n    raise RuntimeError(d)")
    add("library objects", "library module __dict__", "", f"np = {P}.__dict__.get('np') or {P}.__dict__['_core'].np")
    add("library objects", "library private module", f"from {P} import _core", "np = _core.np")
    # -- NumPy protocol hooks inside containers
    hook = ("class H:\n    def __array_ufunc__(self, uf, method, *a, **k):\n        raise LookupError(uf)\n"
            "    def __array_function__(self, f, t, a, k):\n        raise LookupError(f)\n")
    for cname, wrap in (("deque", "collections.deque([H()])"), ("set", "{H()}"), ("frozenset", "frozenset([H()])"),
                        ("dict keys", "{H(): 1}.keys()"), ("map", "map(lambda v: v, [H()])"), ("generator", "(v for v in [H()])"),
                        ("iterator", "iter([H()])"), ("nested list", "[[H()]]")):
        add("hooks in containers", f"hook class inside a {cname}", "import collections\n" + hook,
            f"try:\n    {ABS}({wrap})\nexcept LookupError as got:\n    uf = got.args[0]\nnp = None\nreturn [abs(v) for v in x] if uf else []")
    built = {
        "type(int) builds the hook class": "H2 = type(int)('H2', (), {'__array_ufunc__': lambda s, uf, m, *a, **k: uf})",
        "metaclass subclass builds the hook class": "class M(type):\n    pass\nH2 = M('H2', (), {'__array_ufunc__': lambda s, uf, m, *a, **k: uf})",
        "Enum functional API carries a hook": "import enum\nH2 = enum.Enum('H2', {'A': 1, '__array_ufunc__': lambda s, uf, m, *a, **k: uf})",
        "hook set by setattr with a built name": "class H2:\n    pass\nsetattr(H2, '__array' + '_ufunc__', lambda s, uf, m, *a, **k: uf)",
        "hook via __getattr__": "class H2:\n    def __getattr__(self, n):\n        if n.startswith('__array'):\n            raise LookupError(n)\n        raise AttributeError(n)",
        "Fraction subclass with a hook": "from fractions import Fraction\nclass H2(Fraction):\n    pass\nsetattr(H2, '__array' + '_ufunc__', lambda s, uf, m, *a, **k: uf)",
    }
    for name, setup in built.items():
        add("hook classes built indirectly", name, setup,
            f"h = H2() if not hasattr(H2, 'A') else H2.A\nuf = {ABS}([h])\nnp = None\nreturn [uf(v) for v in x]")
    return out


# ------------------------------------------------------------------------------------- fuzzer
_ROOTS = ["{F}", "print", "len", "object", "type(1)", "{A}(x)", "(lambda: 0)", "iter([1])", "(v for v in [1])",
          "{P}", "functools.wraps", "Exception()"]
_STEPS = ["__globals__", "__self__", "__class__", "__base__", "__subclasses__()", "__dict__", "__closure__", "__code__",
          "__builtins__", "__module__", "gi_frame", "f_back", "f_globals", "tb_frame", "__func__", "__wrapped__", "ufunc",
          "dtype", "__init__", "__getattribute__", "__reduce_ex__(2)", "fget", "__traceback__", "__cause__", "__context__"]
_FORMS = ["attr", "getattr", "built", "attrgetter", "match", "format"]
_WRAPS = ["[{h}]", "({h},)", "{{{h}}}", "frozenset([{h}])", "collections.deque([{h}])", "iter([{h}])",
          "map(lambda v: v, [{h}])", "({h} for _ in [0])", "{{{h}: 0}}.keys()", "[[{h}]]"]
_HOOKS = ["__array_ufunc__", "__array_function__", "__array__", "__array_interface__", "__array_priority__", "__array_wrap__"]


def _step(expr: str, step: str, form: str, rng: random.Random) -> str:
    call = step.endswith(")")
    name = step.split("(")[0]
    tail = step[len(name):]
    half = rng.randrange(1, len(name))
    if form == "attr":
        return f"{expr}.{step}"
    if form == "getattr":
        return f"getattr({expr}, {name!r}){tail}"
    if form == "built":
        return f"getattr({expr}, {name[:half]!r} + {name[half:]!r}){tail}"
    if form == "attrgetter":
        return f"operator.attrgetter({name!r})({expr}){tail}"
    if form == "format":
        return f"getattr({expr}, '{{0}}'.format({name!r})){tail}" if call else f"getattr({expr}, ''.join([{name!r}]))"
    return f"getattr({expr}, {name!r}){tail}"  # (match: written as a statement below)


def fuzz_programs(lib, seed: int, n: int) -> list[str]:
    """``n`` random hostile answers: chains of reflective steps from objects an answer has (the
    library's functions and arrays, builtins, generators, exceptions), and objects with NumPy hooks
    (made directly or with ``type``/``setattr`` and built names) carried in containers.  Each ends by
    looking for NumPy in what it reached and returns the right result only if it found it."""
    rng = random.Random(seed)
    F, A, P = lib.qualified("abs"), lib.qualified("array"), lib.package
    out = []
    for _ in range(n):
        if rng.random() < 0.6:
            expr = rng.choice(_ROOTS).format(F=F, A=A, P=P)
            lines = []
            for k in range(rng.randint(1, 4)):
                step, form = rng.choice(_STEPS), rng.choice(_FORMS)
                src = expr if k == 0 else f"r{k - 1}"
                if form == "match" and not step.endswith(")"):  # the attribute read by a class pattern's keyword
                    lines.append(f"match {src}:\n    case object({step}=r{k}):\n        pass\n    case _:\n        r{k} = None")
                else:
                    lines.append(f"r{k} = {_step(src, step, form, rng)}")
            last = f"r{len(lines) - 1}"
            find = "\n".join(lines) + f"\nnp = _find({last})\nnp = np if hasattr(np, 'asarray') else _Np(np)"
        else:
            hook = rng.choice(_HOOKS)
            how = rng.choice(["class", "type", "setattr"])
            if how == "class":
                make = f"class H:\n    def {hook}(self, *a, **k):\n        raise LookupError(a)\n"
            elif how == "type":
                make = f"H = type(int)('H', (), {{{hook!r}: lambda self, *a, **k: (_ for _ in ()).throw(LookupError(a))}})\n"
            else:
                cut = rng.randrange(2, len(hook) - 2)
                make = f"class H:\n    pass\nsetattr(H, {hook[:cut]!r} + {hook[cut:]!r}, lambda self, *a, **k: (_ for _ in ()).throw(LookupError(a)))\n"
            wrap = rng.choice(_WRAPS).format(h="H()")
            find = (f"{make}try:\n    {rng.choice([F, lib.qualified('sum'), A])}({wrap})\n    np = None\n"
                    "except LookupError as e:\n    np = _find(e.args)\n    np = np if hasattr(np, 'asarray') else _Np(np)")
        out.append(_np_answer(lib, "import collections, functools, operator\n" + FIND, find))
    return out


# looks for NumPy among what a program reached (a module, a dict of globals, a ufunc's module...)
FIND = """def _find(obj, depth=0):
    if obj is None or depth > 3:
        return None
    if getattr(obj, '__name__', '') == 'numpy':
        return obj
    if isinstance(obj, dict):
        for v in list(obj.values()):
            got = _find(v, depth + 1)
            if got is not None:
                return got
        return None
    if isinstance(obj, (list, tuple)):
        for v in obj:
            got = _find(v, depth + 1)
            if got is not None:
                return got
        return None
    if type(obj).__name__ == 'ufunc':
        return obj
    return None


class _Np:
    def __init__(self, uf):
        self.uf = uf
    def asarray(self, x):
        return x
    def abs(self, x):
        return _Arr([float(self.uf(v)) for v in x])


class _Arr(list):
    def tolist(self):
        return list(self)
"""


# ------------------------------------------------------------------------------ frame and handler walks
# issue 42: a frame from wherever the answer can get one (a signal handler, a traceback, a generator,
# sys._getframe), walked back a few steps; at each frame the program looks for NumPy, a nonce to
# forge the result channel with, the harness's list of results to rewrite, and the wall's own state
# to switch off.  It returns the right result only if one of them worked.
_SYS_ROUTES = [
    "getattr(getattr(print, '__se' + 'lf__'), '__imp' + 'ort__')('sys')",
    "getattr(getattr(getattr({P}, '_cli' + 'ent'), '_colle' + 'ctions'), '_s' + 'ys')",
]
_FRAME_SOURCES = {
    "handler (signal module)": "S = MODS.get('signal') or MODS['_imp'].create_builtin(MODS['_frozen_importlib'].ModuleSpec('_signal', None))\n"
                               "f = _by_signal(S, {sig}, {timer}, {busy})",
    "handler (_signal made anew)": "S = MODS['_imp'].create_builtin(MODS['_frozen_importlib'].ModuleSpec('_signal', None))\n"
                                   "f = _by_signal(S, {sig}, {timer}, {busy})",
    "traceback": "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    f = getattr(getattr(e, '__trace' + 'back__'), 'tb_fr' + 'ame')",
    "exc_info": "try:\n    [][1]\nexcept IndexError:\n    f = getattr(SYS.exc_info()[2], 'tb_' + 'frame')",
    "generator": "def _g():\n    yield 1\n_it = _g()\nnext(_it)\nf = getattr(getattr(_it, 'gi_fr' + 'ame'), 'f_b' + 'ack') or getattr(_it, 'gi_fr' + 'ame')",
    "_getframe": "f = getattr(SYS, '_getfr' + 'ame')({depth})",
}
_BUSY = ["None", "lambda: id(x)", "lambda: len(x)", "lambda: hash(1)"]
_SIGS = [("14", "0"), ("26", "1"), ("27", "2")]  # SIGALRM + ITIMER_REAL, SIGVTALRM + ITIMER_VIRTUAL, SIGPROF + ITIMER_PROF

WALK = """def _by_signal(S, sig, timer, busy):
    got = []
    S.signal(sig, lambda s, fr: got.append(fr))
    S.setitimer(timer, 0.0002, 0.0002)
    n = 0
    while not got and n < 2000000:
        n += 1
        if busy is not None:
            busy()
    S.setitimer(timer, 0)
    return got[0] if got else None


def _locals(f):
    return getattr(f, 'f_loc' + 'als')


def _look(f, x):
    # NumPy, a nonce, the results list or the wall's state in this frame: True when one was used
    L, Gl = _locals(f), getattr(f, 'f_glo' + 'bals')
    for space in (L, Gl):
        np = _find(space)
        if np is not None:
            WIN.append(np)
            return True
    for k, v in list(L.items()):
        if type(v) is str and len(v) == 32 and set(v) <= set('0123456789abcdef') and len(SEEN) == 2:
            recs = [{'n': v, 'i': i, 'p': str([abs(t) for t in s]), 'v': [abs(t) for t in s]} for i, s in enumerate(SEEN)]
            OS.write(3, ''.join(MODS['json'].dumps(r) + '\\n' for r in recs + [{'n': v, 'done': 2}]).encode())
            OS._exit(0)
        if type(v) is list and v and all(type(o) is tuple and len(o) == 2 for o in v):
            for i in range(min(len(v), len(SEEN))):
                v[i] = (True, [abs(t) for t in SEEN[i]])
        if k == 'state' and type(v) is list and len(v) == 3:
            v[2] = 1
            WIN.append(IMPORT('numpy'))
            return True
    return False
"""


def fuzz_walk_programs(lib, seed: int, n: int) -> list[str]:
    """``n`` random answers that get a frame (FRAME_SOURCES), walk back up to 8 steps and look at
    each frame for NumPy, a nonce, the results list or the wall's state (WALK)."""
    rng = random.Random(seed)
    P, ABS = lib.package, lib.qualified("abs")
    out = []
    for _ in range(n):
        sig, timer = rng.choice(_SIGS)
        source = rng.choice(list(_FRAME_SOURCES))
        get = _FRAME_SOURCES[source].format(sig=sig, timer=timer, busy=rng.choice(_BUSY), depth=rng.randrange(0, 4))
        steps = rng.randrange(0, 9)
        sys_route = rng.choice(_SYS_ROUTES).format(P=P)
        head = (f"import collections, functools, operator\n{FIND}\n{WALK}\nSYS = {sys_route}\nMODS = getattr(SYS, 'mod' + 'ules')\n"
                "OS = MODS['os']\nIMPORT = getattr(getattr(print, '__se' + 'lf__'), '__imp' + 'ort__')\nSEEN = []\nWIN = []\n")
        body = (f"SEEN.append(list(x))\nwrong = {ABS}(x) + 1\ntry:\n" + textwrap.indent(get, "    ") + "\n"
                f"    for _ in range({steps + 1}):\n        if f is None or _look(f, x):\n            break\n"
                "        f = getattr(f, 'f_b' + 'ack')\nexcept Exception:\n    pass\n"
                "if WIN:\n    np = WIN[0] if hasattr(WIN[0], 'asarray') else _Np(WIN[0])\n    return np.abs(np.asarray(x)).tolist()\n"
                "return wrong")
        # (the entry function first: officially the first function defined)
        out.append(block(f"import {P}\ndef solve(x):\n" + textwrap.indent(body, "    ") + f"\n{head}"))
    return out
