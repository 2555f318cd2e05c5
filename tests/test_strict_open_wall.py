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
