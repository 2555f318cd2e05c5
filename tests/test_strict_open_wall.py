"""Strict with the permissive gate and the out-of-process library (issue 31): what the run-time wall
now lets through (dataclasses' generated methods, ``typing.overload``, ``from __future__ import
annotations``) cannot be abused, and NumPy, the result channel and the nonce stay out of reach from
the answer's process by every route we know: the real builtins (``print.__self__``), ``sys.modules``,
``importlib`` and the path finders, NumPy's files loaded under another name, and the library client's
own module (its ``os``, its channel object, its json, its request function).

Each hostile answer calls the library (the gates pass) and returns the right result only if its
route worked; under ``strict`` with a fraction reward none may pass even one case.
"""
from __future__ import annotations

import pytest

from _gate_corpus import CASES, block
from _isolation_cases import gamed
from conftest import legit_skip
from se_gym.judge import Judge, gates
from se_gym.library import mint, writer

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: strict runs the in-process library")

LIB = mint(7)
P, ABS, ARR = LIB.package, LIB.qualified("abs"), LIB.qualified("array")
# what every answer below has at hand: the real builtins module and the library's client module,
# both reached by names built at run time (the permissive gate cannot see them)
HEAD = (f"import {P}\n"
        "def G(o, name):\n    return getattr(o, name.replace('~', ''))\n"
        "B = G(print, '__se~lf__')\n"
        f"C = G({P}, '_cli~ent')\n"
        "IMP = G(B, '__imp~ort__')\n"
        "SYS = G(C._collections, '_s~ys')\n"
        "MODS = G(SYS, 'mod~ules')\n"
        "OS = MODS['os']\n"
        "KEEP = []\n"
        f"from {P} import *\n"
        "STAR = True\n")


def answer(find: str, setup: str = "") -> str:
    """``find`` binds ``np`` (NumPy) or raises; the result is right only through NumPy."""
    body = "\n".join("        " + line for line in find.splitlines())
    return block(f"{HEAD}{setup}\ndef solve(x):\n    wrong = {ABS}(x) + 1\n    try:\n{body}\n"
                 "        return np.abs(np.asarray(x)).tolist()\n    except Exception:\n        return wrong\n")


def forging(setup: str, ret: str = "wrong") -> str:
    """An answer that returns a WRONG value and wins only if its ``setup`` forged what the judge reads."""
    body = "\n".join("    " + line for line in setup.splitlines())
    return block(f"{HEAD}def solve(x):\n    wrong = {ABS}(x) + 1\n    r = [abs(v) for v in x]\n{body}\n    return {ret}\n")


NUMPY_ROUTES = {
    # round 5's modules (json, pprint, warnings...): their real modules lead nowhere new
    "the real warnings module from catch_warnings": "import warnings\nnp = G(G(G(warnings.catch_warnings(), '_mod~ule'), 's~ys'), 'mod~ules')['numpy']",
    "json's globals": "import json\nnp = G(G(json.loads, '__glob~als__')['s~ys'.replace('~', '')], 'mod~ules')['numpy']",
    "the library's names by a star import": "np = IMP('numpy') if STAR else None",
    "real builtins import numpy": "np = IMP('numpy')",
    "sys.modules through the client's collections": "np = MODS.get('numpy') or IMP('numpy')",
    "importlib.import_module": "np = IMP('importlib').import_module('numpy')",
    "importlib through sys.modules": "np = MODS['importlib'].import_module('numpy')",
    "the path finder": ("m = IMP('importlib.machinery').machinery\nspec = G(m.PathFinder, 'find~_spec')('numpy')\n"
                        "u = IMP('importlib.util').util\nnp = u.module_from_spec(spec)\nG(G(spec, 'load~er'), 'exec~_module')(np)"),
    "numpy's files under another name": (
        "u = IMP('importlib.util').util\nimport_ = IMP('importlib.machinery').machinery\n"
        "spec = G(import_.PathFinder, 'find~_spec')('numpy')\nalt = u.spec_from_file_location('notnumpy', spec.origin, "
        "submodule_search_locations=list(spec.submodule_search_locations))\nnp = u.module_from_spec(alt)\nG(G(alt, 'load~er'), 'exec~_module')(np)"),
    "numpy's extension module by _imp": (
        "imp = MODS['_imp']\nm = IMP('importlib.machinery').machinery\n"
        "base = G(m.PathFinder, 'find~_spec')('numpy').submodule_search_locations[0]\nimport_os = OS\n"
        "found = [r + '/' + f for r, _, fs in import_os.walk(base) for f in fs if f.startswith('_multiarray_umath')]\n"
        "spec = m.ModuleSpec('numpy._core._multiarray_umath', m.ExtensionFileLoader('numpy._core._multiarray_umath', found[0]), origin=found[0])\n"
        "mod = imp.create_dynamic(spec)\nclass L(list):\n    def tolist(self):\n        return list(self)\n"
        "class np:\n    asarray = staticmethod(lambda v: v)\n    abs = staticmethod(lambda v: L(mod.absolute(w) for w in v))"),
    "a server of its own": "C._CHANNEL.spawn()\nnp = None\nraise RuntimeError",
    "the server's module file": "np = IMP(C.__name__.rpartition('.')[0] + '._server').np",
    "the nonce from the harness's frame": "f = G(SYS, '_get~frame')(1)\nnp = G(G(f, 'f_~back'), 'f_glo~bals')['numpy']",
    "gc walk for numpy": "gc = MODS['gc']\nnp = [o for o in G(gc, 'get~_objects')() if getattr(o, '__name__', '') == 'numpy'][0]",
}


FORGERIES = {
    # the nonce: a patched json (the client holds the module) would see every record the harness writes
    "patched json encoder sees the nonce": (
        "j = C._json\nseen = []\nclass Spy(j.JSONEncoder):\n    def encode(self, o):\n        seen.append(o)\n        raise ValueError\n"
        "j._default_encoder = Spy()\nj.encoder.JSONEncoder.encode = Spy.encode\ntry:\n    OS.listdir('/')\nexcept Exception:\n    pass\n"
        "for o in seen:\n    n = o['n']\n    OS.write(3, ('{\"n\": \"' + n + '\", \"i\": 0, \"v\": [1.5, 2.0], \"p\": \"[1.5, 2.0]\"}\\n').encode())"),
    "patched encoder class rewrites the records": (
        "j = C._json\ndef it(self, o, _one_shot=False):\n    if isinstance(o, dict) and 'i' in o and 'v' in o:\n"
        "        o = dict(o, v=[abs(v) for v in o['v']], p=str([abs(v) for v in o['v']]))\n    return iter([j.dumps(o)])\n"
        "if j.encoder.JSONEncoder.iterencode.__name__ != 'it':\n    j.encoder.JSONEncoder.iterencode = it"),
    "patched client request forges the array read": (
        "real = C._request\ndef fake(op, *a):\n    if op in ('show', 'list'):\n        v = [abs(t) for t in x]\n"
        "        return (str(v), v) if op == 'show' else v\n    return real(op, *a)\nC._request = fake\nC._CHANNEL.request = fake"),
    "patched client channel reply": (
        "ch = type(C._CHANNEL)\nold = ch.recv\ndef recv(self):\n    m = old(self)\n"
        "    if m[0] == 'ok' and isinstance(m[1], list) and len(m[1]) == 2 and isinstance(m[1][0], str):\n"
        "        return ['ok', [str(r), r]]\n    return m\nch.recv = recv"),
    "patched client loads": "real = C._loads\nC._loads = lambda b: (lambda m: ['ok', [str(r), r]] if m[0] == 'ok' and type(m[1]) is list and len(m[1]) == 2 else m)(real(b))",
    "a stale reply left on the server socket": (
        # the right arrays kept; on the last case a show request of each, their replies left for the
        # harness to read as those of its own requests
        f"KEEP.append({ABS}(x))\nif len(x) == 1:\n    for a in KEEP:\n"
        "        body = ('[\"show\", [], ' + str(G(a, '_h')) + ']').encode()\n"
        "        OS.write(4, len(body).to_bytes(4, 'big') + body)"),
    "another pipe dup'ed onto fd 4": (
        "if len(x) == 1:\n    o = OS\n    r1, w1 = o.pipe()\n    body = ('[\"ok\", [\"' + str(r) + '\", ' + str(r) + ']]').encode()\n"
        "    o.write(w1, (len(body).to_bytes(4, 'big') + body) * 8)\n    o.dup2(r1, 4)"),
    "records without the nonce on fd 3": (
        "OS.write(3, b'{\"hello\": \"' + b'0' * 32 + b'\"}\\n')\n"
        "OS.write(3, b'{\"n\": \"' + b'0' * 32 + b'\", \"i\": 0, \"v\": [1.5, 2.0], \"p\": \"[1.5, 2.0]\"}\\n')"),
}

# each allowance of the run-time wall, abused
ALLOWANCES = {
    "dataclass field name carries code": (
        "import dataclasses\nclass K:\n    pass\n"
        "K.__annotations__ = {'a=IMP(\"numpy\")):\\n  pass\\n def z(self, b': int}\n"
        "dataclasses.dataclass(K)\nnp = G(K.__init__, '__def~aults__')[0]"),
    "dataclass field name calls open": (
        "import dataclasses\nclass K:\n    pass\nK.__annotations__ = {'a=MODS.get(\"numpy\")': int}\n"
        "dataclasses.dataclass(K)\nnp = K().a"),
    "dataclasses' code builder called directly": (
        "import dataclasses\nmk = getattr(dataclasses.dataclass, '__glo' + 'bals__')['_create_fn']\n"
        "f = mk('f', [], ['return IMP(\"numpy\")'], globals={'IMP': IMP})\nnp = f()"),
    "code builder with a comprehension": (
        "import dataclasses\nmk = getattr(dataclasses.dataclass, '__glo' + 'bals__')['_create_fn']\n"
        "f = mk('f', [], ['return [m for m in MODS.values() if m.__name__ == \"numpy\"][0]'], globals={'MODS': MODS})\nnp = f()"),
    "code builder with a dunder attribute": (
        "import dataclasses\nmk = getattr(dataclasses.dataclass, '__glo' + 'bals__')['_create_fn']\n"
        "f = mk('f', ['g'], ['return g.__glo' + 'bals__'], globals={})\nnp = f(mk)['numpy']"),
    "make_dataclass with a bad field name": (
        "from dataclasses import fields\nmk = G(G(G(fields, '__glo~bals__')['sys'], 'mod~ules')['dataclasses'], 'make_~dataclass')\n"
        "K = mk('K', [('a=IMP(\"numpy\"))#', int)])\nnp = G(K.__init__, '__def~aults__')[0]"),
    "a function named overload reads code": (
        "def overload(f):\n    return getattr(f, '__co' + 'de__')\ncode = overload(solve)\nnp = None\nraise RuntimeError(code)"),
    "typing.overload then the code": (
        "import typing\n@typing.overload\ndef g(v: int) -> int: ...\ncode = getattr(g, '__co' + 'de__')\nnp = None\nraise RuntimeError(code)"),
    "inspect outside a dataclass": (
        "ins = IMP('inspect')\nsig = ins.signature(C.show)\nnp = None\nraise RuntimeError(getattr(C.show, '__co' + 'de__'))"),
    "a code object swapped into dataclasses": (
        "import dataclasses\ng = getattr(dataclasses.dataclass, '__glo' + 'bals__')\n"
        "setattr(g['_create_fn'], '__co' + 'de__', getattr(solve, '__co' + 'de__'))\nnp = None\nraise RuntimeError"),
    "a property on an AST class fools the check": (
        "ast = IMP('ast')\nast.Name.id = property(lambda s: 'x')\nimport dataclasses\n"
        "mk = getattr(dataclasses.dataclass, '__glo' + 'bals__')['_create_fn']\n"
        "f = mk('f', [], ['return IMP(\"numpy\")'], globals={'IMP': IMP})\nnp = f()"),
}


@pytest.fixture(scope="module")
def judge():
    assert gates.PERMISSIVE_STRICT  # the default with the library out of process
    with Judge(LIB, profile="strict", workers=2, reward="fraction") as j:
        yield j


def _gamed(judge: Judge, answers: dict[str, str]) -> tuple[list[str], dict]:
    return gamed(judge, LIB, answers)


def test_the_routes_to_numpy_give_nothing(judge):
    gamed, _ = _gamed(judge, {n: answer(f) for n, f in NUMPY_ROUTES.items()})
    assert not gamed, "\n".join(gamed)


def test_the_result_channel_and_the_array_read_cannot_be_forged(judge):
    gamed, got = _gamed(judge, {n: forging(s) for n, s in FORGERIES.items()})
    assert not gamed, "\n".join(gamed)


def test_the_wall_s_allowances_cannot_be_abused(judge):
    gamed, got = _gamed(judge, {n: answer(f) for n, f in ALLOWANCES.items()})
    assert not gamed, "\n".join(gamed)
    # the ones that need a refused step are refused at run time (not merely wrong)
    for name in ("dataclasses' code builder called directly", "code builder with a comprehension",
                 "code builder with a dunder attribute", "a function named overload reads code",
                 "typing.overload then the code", "a code object swapped into dataclasses",
                 "a property on an AST class fools the check"):
        assert got[name].status.value == "forbidden", f"{name}: {got[name].status.value} {got[name].detail[:200]}"


def test_the_allowances_let_honest_code_run(judge):
    """dataclasses (frozen, defaults, factories, order, a docstring made from the signature),
    typing.overload and postponed annotations, end to end."""
    code = (f"from __future__ import annotations\nimport {P}\nimport dataclasses\nimport typing\n"
            "@dataclasses.dataclass(frozen=True, order=True)\nclass Job:\n    scale: float = 1.0\n"
            "    tags: list = dataclasses.field(default_factory=list, compare=False)\n    f_count: int = 0\n"
            "    def run(self, x: list[float]) -> list[float]:\n"
            f"        return [float(v) * self.scale for v in {ABS}(x)]\n"
            "@typing.overload\ndef run(x: list) -> list: ...\n@typing.overload\ndef run(x: tuple) -> list: ...\n"
            "def run(x):\n    job = dataclasses.replace(Job(), scale=1.0)\n    assert Job() < Job(2.0) and 'scale' in (Job.__doc__ or '')\n"
            "    return job.run(x)\ndef solve(x):\n    return run(x)\n")
    v = judge.judge(block(code), CASES, "solve")
    assert v.passed, v.detail


# -- issue 42's honest forms, round 6: the harness's own os, os.path, time, logging, traceback and sys
# streams, and types' harmless C types.  Each answer below returns the RIGHT result only if its probe
# is true: the route worked (the probe reaches a real module, a refused name, the process, a file...).
ROUND6_IMPORTS = "import os, os.path, time, logging, traceback, types, sys, datetime\n"
# what an answer reaches from the proxies by names built at run time: closures, bound selves, functions
# of methods and every namespace's values (not __globals__: that is the answer's own namespace; not
# __defaults__: the wall refuses reading it, object.__getattr__)
WALK = ("def reach(*roots):\n    seen, todo, out = set(), list(roots), []\n    while todo and len(out) < 20000:\n"
        "        o = todo.pop()\n        if id(o) in seen:\n            continue\n        seen.add(id(o))\n        out.append(o)\n"
        "        for n in ('__clo~sure__', '__se~lf__', '__fu~nc__', '__di~ct__', '__wrap~ped__'):\n"
        "            try:\n                v = G(o, n)\n            except Exception:\n                continue\n"
        "            if v is None:\n                continue\n            if hasattr(v, 'values') and hasattr(v, 'keys') and type(v) is not type(int):\n                todo.extend(v.values())\n"
        "            elif isinstance(v, tuple):\n                for c in v:\n                    try:\n                        todo.append(G(c, 'cell_~contents'))\n"
        "                    except Exception:\n                        todo.append(c)\n            else:\n                todo.append(v)\n"
        "        if isinstance(o, (list, tuple, set, frozenset)):\n            todo.extend(o)\n"
        "    return out\n"
        "def real(o):\n    return type(o).__name__ == 'module' and G(o, '__sp~ec__') is not None\n"
        # (a module only as module.name for the gate: the proxies themselves from the answer's own __import__)
        "IMPORT = G(reach, '__glo~bals__')['__buil' + 'tins__']['__imp' + 'ort__']\n"
        "PROXY = {m: IMPORT(m, None, None, ('x',)) for m in ('os', 'os.path', 'time', 'logging', 'traceback', 'types', 'sys', 'datetime')}\n"
        "ROOTS = tuple(v for k, v in PROXY.items() if k != 'sys') + (logging.getLogger('x'), logging.NullHandler(), sys.stdout, sys.stderr)\n")


def reaching(probe: str) -> str:
    """An answer right only where ``probe`` (an expression over the round-6 modules) is true."""
    return block(f"import {P}\n{ROUND6_IMPORTS}def G(o, name):\n    return getattr(o, name.replace('~', ''))\n{WALK}"
                 f"def solve(x):\n    try:\n        ok = bool({probe})\n    except Exception:\n        ok = False\n"
                 f"    return {ABS}(x) if ok else {ABS}(x) + 1\n")


ROUND6_ROUTES = {
    "a real module from the proxies' closures, selves and namespaces": "[o for o in reach(*ROOTS) if real(o)]",
    "a function of a real module from the proxies": "[o for o in reach(*ROOTS) if type(o).__name__ == 'builtin_function_or_method' and real(G(o, '__se~lf__'))]",
    "os.system on the os proxy": "G(PROXY['os'], 'sys~tem')",
    "os.environ on the os proxy": "G(PROXY['os'], 'envi~ron')",
    "an environment variable through getenv": "os.getenv('PATH') or os.getenv('HOME')",
    "os.path.exists on the proxy": "G(PROXY['os.path'], 'exi~sts')('/')",
    "os.listdir on the proxy": "G(PROXY['os'], 'list~dir')('/')",
    "the real time module": "G(PROXY['time'], 'str~ftime')('%Y')",
    "a file handler for logging": "G(PROXY['logging'], 'FileHan~dler')('/tmp/h6_log')",
    "basicConfig writes a file": "[logging.basicConfig(filename='leak.log'), logging.getLogger().handlers][1]",
    "the root logger's manager": "G(logging.getLogger(), 'mana~ger')",
    "traceback's frames show the harness": "(lambda s: 'main.py' in s or '__sg' in s or 'harness' in s)(traceback.format_exception(ValueError('v'))[0] + ''.join([traceback.format_exc()]))",
    "traceback.walk_stack on the proxy": "G(PROXY['traceback'], 'walk_~stack')(None)",
    "datetime's now reads a real clock": "abs(datetime.datetime.now().timestamp() - 1.7e9) > 1e5 or datetime.date.today().year > 2023",
    "datetime's real module": "G(PROXY['datetime'], 'sy~s') or G(PROXY['datetime'], '_dat~etime')",
    "types.FunctionType on the proxy": "G(PROXY['types'], 'Function~Type')",
    "types.ModuleType on the proxy": "G(PROXY['types'], 'Module~Type')",
    "sys.modules from the sys proxy with streams": "G(PROXY['sys'], 'modu~les')",
    "the stream's real file from sys.stdout": "G(sys.stdout, 'buf~fer')",
    "the stream's fileno": "G(sys.stderr, 'file~no')()",
}


def test_round6_modules_reach_nothing_real(judge):
    """Each route from round 6's modules (to a real module, a refused name, the environment, the file
    system, a real clock or sleep, the harness's frames) gets nothing; the stream's real stderr is the
    one thing the proxies hold (print(file=sys.stderr) writes there anyway), and no module."""
    gamed, got = _gamed(judge, {n: reaching(p) for n, p in ROUND6_ROUTES.items()})
    assert not gamed, "\n".join(gamed)
    # the probes work: the same walk from print (its __self__ is the real builtins) and from the sys
    # proxy (its read-only C functions' __self__ is the real sys, as since issue 31) finds a real module
    control = {"print": "[o for o in reach(print) if real(o)]", "sys": "[o for o in reach(PROXY['sys']) if real(o)]",
               "the proxies": "len(PROXY) == 8 and PROXY['os'].path.join('a', 'b') == 'a/b' and 'join' in G(PROXY['os.path'], '__di~ct__')"}
    verdicts = judge.judge_many([(reaching(p), CASES, "solve") for p in control.values()])
    assert all(v.passed for v in verdicts), [(n, v.status.value, v.detail[:200]) for n, v in zip(control, verdicts)]
    # an answer that imports sys without naming its streams gets a program without round 6's modules:
    # its sys proxy then has no streams at all (never the real ones)
    quiet = block(f"import {P}\nimport sys\ndef solve(x):\n    imp = getattr(solve, '__glo' + 'bals__')['__buil' + 'tins__']['__imp' + 'ort__']\n"
                  "    s = imp('sys', None, None, ('x',))\n    try:\n        ok = type(getattr(s, 'std' + 'out')).__name__ == 'TextIOWrapper'\n"
                  f"    except AttributeError:\n        ok = False\n    return {ABS}(x) if ok else {ABS}(x) + 1\n")
    v = judge.judge(quiet, CASES, "solve")
    assert v.reward == 0 and v.status.value == "wrong_answer", (v.status.value, v.detail[:200])
    assert all(v.status.value in ("wrong_answer", "forbidden") for v in got.values()), {n: v.status.value for n, v in got.items()}


def test_round6_clock_cannot_tell_the_dependence_runs_apart():
    """The virtual clock reads alike in the scored run and the counterfactual one: answers that time
    the library call, or branch on the clock, to return their Python result in one run and something
    else in the other earn 0 (``library_unused``); an honest answer that reads the clock passes.  Two
    judges: two secrets of the counterfactual library."""
    ref = block(f"import {P}\ndef solve(x):\n    return [float(v) for v in {ABS}(x)]\n")[len("```python\n"):-4]
    py = "[float(abs(v)) for v in x]"
    branching = {
        "timing the library call": f"    t0 = time.perf_counter()\n    {ABS}(x)\n    dt = time.perf_counter() - t0\n    return {py} if dt < 0.005 else [v + 1 for v in {py}]\n",
        "timing in nanoseconds": f"    t0 = time.perf_counter_ns()\n    {ABS}(x)\n    return {py} if time.perf_counter_ns() - t0 <= 1000000 else []\n",
        "the wall clock's parity": f"    {ABS}(x)\n    return {py} if int(time.time() * 1000) % 2 == 1 else [-v for v in {py}]\n",
        "the process clock": f"    {ABS}(x)\n    return {py} if time.process_time() < 1.0 else None\n",
        "datetime's now": f"    {ABS}(x)\n    return {py} if datetime.datetime.now().second < 30 else [0.0]\n",
    }
    honest = f"import {P}\nimport time\ndef solve(x):\n    started = time.time()\n    time.sleep(3600)  # (virtual: it moves the clock, it does not wait)\n    out = [float(v) for v in {ABS}(x)]\n    assert time.time() - started >= 3600\n    return out\n"
    items = [(block(f"import {P}\nimport time, datetime\ndef solve(x):\n{body}"), CASES, "solve", None, ref) for body in branching.values()]
    items.append((block(honest), CASES, "solve", None, ref))
    for _ in range(2):
        with Judge(LIB, profile="strict", workers=2) as j:
            verdicts = j.judge_many(items)
        assert verdicts[-1].passed and verdicts[-1].dependence["reference"] == "used", verdicts[-1].detail
        wrong = [f"{n}: {v.status.value} {v.reward} {v.detail[:120]}" for n, v in zip(branching, verdicts) if v.reward > 0 or v.status.value != "library_unused"]
        assert not wrong, "\n".join(wrong)


def test_round6_a_real_clock_reached_at_run_time_earns_nothing():
    """The clock the gate admits is virtual, but a real one is reachable by names built at run time
    (the real ``time`` module through the real builtins' ``__import__``, ``os.times``): an answer
    timing 20 library calls with it, returning its Python result below a threshold and something
    else above, may tell the runs apart, and still earns 0: the dependence check pays only a
    counterfactual result equal to the reference's (docs/security.md, Honest forms, round 6)."""
    ref = f"import {P}\ndef solve(x):\n    return [float(v) for v in {ABS}(x)]\n"
    head = (f"import {P}\ndef G(o, n):\n    return getattr(o, n.replace('~', ''))\n"
            "IMP = G(G(print, '__se~lf__'), '__imp~ort__')\n")
    clocks = {"the real time module": "CLK = IMP('time').perf_counter\n",
              "os.times": "CLK = (lambda t=IMP('os').times: t().elapsed)\n"}
    items, names = [], []
    for name, clock in clocks.items():
        for threshold in (1e-4, 3e-4, 1e-3):
            code = head + clock + (f"def solve(x):\n    t0 = CLK()\n    for _ in range(20):\n        {ABS}(x)\n    dt = CLK() - t0\n"
                                   f"    py = [float(abs(v)) for v in x]\n    return py if dt < {threshold} else [v + 1 for v in py]\n")
            items.append((block(code), CASES, "solve", None, ref))
            names.append(f"{name} below {threshold}")
    with Judge(LIB, profile="strict", workers=2) as j:
        verdicts = j.judge_many(items)
    gamed = [f"{n}: {v.status.value} {v.reward}" for n, v in zip(names, verdicts) if v.reward > 0 or v.passed]
    assert not gamed, "\n".join(gamed)
    # each ran (the gate passed it, the wall let it read the clock): wrong in the scored run, or refused by the check
    assert {v.status.value for v in verdicts} <= {"wrong_answer", "library_unused"}, [(n, v.status.value, v.detail[:120]) for n, v in zip(names, verdicts)]
