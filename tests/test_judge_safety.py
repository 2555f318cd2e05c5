"""Hostile answers against the judge (local sandbox): every one gets reward 0 with a fitting
status, and the judge keeps serving honest answers afterwards."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from se_gym.judge import Judge, Status, gates
from se_gym.library import mint

LIB = mint(5)
PKG, ABS = LIB.package, LIB.qualified("abs")
CASES = [{"input": "x=[-1, 2]", "output": "[1, 2]"}, {"input": "x=[-3]", "output": "[3]"}]
RIGHT = f"return {ABS}(x)"
SECRET = "se-gym-test-secret-4711"


def answer(body: str, head: str = "") -> str:
    """An answer that would pass the official static gate: the entry function calls the library."""
    lines = "\n".join("    " + line for line in body.splitlines())
    return f"```python\nimport {PKG}\n{head}\ndef solve(x):\n{lines}\n```"


FORGE_STDOUT = 'print("=" * 20)\nprint("[1, 2]")\nprint("#")\nprint("[3]")\nprint("#")\n'

# name -> (answer, statuses accepted) for the strict profile
STRICT_HOSTILE = {
    "import numpy": (answer(RIGHT, "import numpy"), {Status.USES_NUMPY}),
    "__import__ numpy": (answer(f"np = __import__('numpy')\n{RIGHT}"), {Status.USES_NUMPY}),
    "importlib": (answer(RIGHT, "import importlib"), {Status.FORBIDDEN}),
    "private core module": (answer(f"np = {PKG}._core._np\n{RIGHT}"), {Status.FORBIDDEN}),
    "from pkg import _core": (answer(RIGHT, f"from {PKG} import _core"), {Status.FORBIDDEN}),
    "function globals": (answer(f"np = {ABS}.__globals__['_np']\n{RIGHT}"), {Status.FORBIDDEN}),
    "getattr by string": (answer(f"np = getattr({PKG}, '_core')\n{RIGHT}"), {Status.FORBIDDEN}),
    "vars": (answer(f"d = vars({PKG})\n{RIGHT}"), {Status.FORBIDDEN}),
    "eval": (answer(f"np = eval(\"__import__('numpy')\")\n{RIGHT}"), {Status.FORBIDDEN}),
    "exec": (answer(f"exec('import numpy')\n{RIGHT}"), {Status.FORBIDDEN}),
    "compile": (answer(f"c = compile('1', 'x', 'eval')\n{RIGHT}"), {Status.FORBIDDEN}),
    "sys.modules": (answer(f"np = sys.modules['numpy']\n{RIGHT}", "import sys"), {Status.FORBIDDEN}),
    "gc walk": (answer(f"objs = gc.get_objects()\n{RIGHT}", "import gc"), {Status.FORBIDDEN}),
    "inspect": (answer(RIGHT, "import inspect"), {Status.FORBIDDEN}),
    "ctypes": (answer(RIGHT, "import ctypes"), {Status.FORBIDDEN}),
    "builtins module": (answer(RIGHT, "import builtins"), {Status.FORBIDDEN}),
    "dunder builtins": (answer(f"b = __builtins__\n{RIGHT}"), {Status.FORBIDDEN}),
    "class walk": (answer(f"subs = ().__class__.__base__.__subclasses__()\n{RIGHT}"), {Status.FORBIDDEN}),
    "generator frame walk": (answer(f"g = (i for i in [0])\nf = g.gi_frame.f_back\n{RIGHT}"), {Status.FORBIDDEN}),
    "format attribute walk": (answer("s = '{0.__globals__}'.format(" + ABS + ")\n" + RIGHT), {Status.FORBIDDEN}),
    "attrgetter": (answer(f"np = operator.attrgetter('_core')({PKG})\n{RIGHT}", "import operator"), {Status.FORBIDDEN}),
    "open": (answer(f"open('/tmp/evil', 'w').write('x')\n{RIGHT}"), {Status.FORBIDDEN}),
    "os environ": (answer(f"s = os.environ.get('SE_GYM_TEST_SECRET')\n{ABS}(x)\nreturn s", "import os"), {Status.FORBIDDEN}),
    "socket": (answer(RIGHT, "import socket"), {Status.FORBIDDEN}),
    "breakpoint": (answer(f"breakpoint()\n{RIGHT}"), {Status.FORBIDDEN}),
    "dunder del finaliser": (answer(f"class K:\n    def __del__(self):\n        pass\n{RIGHT}"), {Status.FORBIDDEN}),
    "three-argument type": (answer(f"K = type('K', (), {{}})\n{RIGHT}"), {Status.FORBIDDEN}),
    "array private data": (answer(f"return {ABS}(x)._data"), {Status.FORBIDDEN}),
    # forgeries that need no forbidden name: stdout is irrelevant, results come from the channel
    "fake separator then wrong": (answer(f"{FORGE_STDOUT}return {ABS}(x) + 1"), {Status.WRONG_ANSWER}),
    "fake separator then exit": (answer(f"{FORGE_STDOUT}exit(0)\n{RIGHT}"), {Status.RUNTIME_ERROR}),
    "rebind print": (answer(f"return {ABS}(x) + 1", "print = lambda *a, **k: None"), {Status.WRONG_ANSWER}),
    "raise SystemExit": (answer(f"raise SystemExit(0)\n{RIGHT}"), {Status.RUNTIME_ERROR}),
    "endless loop": (answer(f"while True:\n    pass\n{RIGHT}"), {Status.TIMEOUT}),
    "memory bomb": (answer(f"b = [0] * (10 ** 10)\n{RIGHT}"), {Status.MEMORY_LIMIT, Status.RUNTIME_ERROR}),
    "output flood": (answer(f"while True:\n    print('x' * 10000)\n{RIGHT}"), {Status.OUTPUT_LIMIT, Status.TIMEOUT}),
    "unsupported result type": (answer(f"class R:\n    pass\nr = R()\n{ABS}(x)\nreturn r"), {Status.WRONG_ANSWER}),
}

if gates.PERMISSIVE_STRICT:
    # the permissive gate (the default with the library out of process) lets ordinary Python through:
    # a finaliser is honest, and reaching for private names fails at run time (there is no _core, no
    # _data: the library is a client of its server); `exit` is refused by the gate
    del STRICT_HOSTILE["dunder del finaliser"]
    for _name in ("private core module", "getattr by string", "attrgetter", "array private data"):
        STRICT_HOSTILE[_name] = (STRICT_HOSTILE[_name][0], {Status.FORBIDDEN, Status.RUNTIME_ERROR})
    STRICT_HOSTILE["fake separator then exit"] = (STRICT_HOSTILE["fake separator then exit"][0], {Status.FORBIDDEN})

# the sebench profile keeps the official freedoms: these must still not pass
SEBENCH_HOSTILE = {
    "fake separator then os._exit": (answer(f"{FORGE_STDOUT}import os\nos._exit(0)\n{RIGHT}"), {Status.RUNTIME_ERROR}),
    "fake separator then sys.exit": (answer(f"{FORGE_STDOUT}import sys\nsys.exit(0)\n{RIGHT}"), {Status.RUNTIME_ERROR}),
    "replace sys.stdout": (answer(f"import sys, io\nsys.stdout = io.StringIO()\nreturn {ABS}(x) + 1"), {Status.WRONG_ANSWER}),
    "atexit forgery": (answer(f"import atexit\natexit.register(lambda: print({FORGE_STDOUT!r}))\nreturn {ABS}(x) + 1"), {Status.WRONG_ANSWER}),
    "forged channel records": (
        answer("import os, json\nfor i, p in enumerate(['[1, 2]', '[3]']):\n    os.write(3, (json.dumps({'n': 'guess', 'i': i, 'p': p}) + '\\n').encode())\n"
               "os.write(3, b'{\"n\": \"guess\", \"done\": 2}\\n')\nos._exit(0)\n" + RIGHT),
        {Status.FORBIDDEN},  # records without the harness's nonce invalidate the answer
    ),
    # forked copies each run the harness: their records repeat cases (forbidden) unless limits stop them
    "fork bomb": (answer(f"import os\nwhile True:\n    os.fork()\n{RIGHT}"), {Status.RUNTIME_ERROR, Status.TIMEOUT, Status.MEMORY_LIMIT, Status.FORBIDDEN}),
    "write outside": (answer(f"open('/se_gym_evil_file', 'w').write('x')\n{RIGHT}"), {Status.RUNTIME_ERROR}),
    "network": (answer(f"import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=1)\n{RIGHT}"), {Status.RUNTIME_ERROR}),
    "read parent secret": (answer(f"import os\n{ABS}(x)\nreturn os.environ.get('SE_GYM_TEST_SECRET', 'none')"), {Status.WRONG_ANSWER}),
    "kill the parent": (answer(f"import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos.kill(1, signal.SIGKILL)\n{RIGHT}"), None),
}


@pytest.fixture(scope="module", autouse=True)
def secret_env():
    os.environ["SE_GYM_TEST_SECRET"] = SECRET
    yield
    os.environ.pop("SE_GYM_TEST_SECRET", None)


def _check(judge: Judge, table: dict) -> None:
    names = list(table)
    verdicts = judge.judge_many([(table[n][0], CASES) for n in names])
    wrong = []
    for name, v in zip(names, verdicts):
        allowed = table[name][1]
        if v.reward != 0.0 or v.passed or (allowed is not None and v.status not in allowed):
            wrong.append(f"{name}: {v.status.value} reward={v.reward} ({v.detail})")
        assert all(SECRET not in (c.got or "") for c in v.cases), name
    assert not wrong, "\n".join(wrong)
    # the pool keeps serving
    assert judge.judge(answer(RIGHT), CASES).passed


def test_strict_refuses_hostile_answers():
    with Judge(LIB, profile="strict", workers=2) as judge:
        _check(judge, STRICT_HOSTILE)


def test_sebench_profile_survives_hostile_answers():
    with Judge(LIB, profile="sebench", workers=2) as judge:
        _check(judge, SEBENCH_HOSTILE)
    assert not Path("/se_gym_evil_file").exists()


# ------------------------------------------------------------------ the judge's own CPU (issue 31)
# printed results chosen to make the official checker's regexes backtrack: each cost the judge
# minutes of CPU (holding the GIL) while its program ran 0.01 s
PATHOLOGICAL = {
    "long word": '"q" * 200_001',
    "long number then bracket": '"1" * 199_000 + "["',
    "nested empty shaped arrays": '"[" + "array([],shape=(" * 12_000',
}


@pytest.mark.timeout(120)  # (minutes each before the linear scanner: the marker is the failure)
@pytest.mark.parametrize("profile", ["sebench", "strict"])
def test_pathological_printed_results_are_read_in_linear_time(profile):
    with Judge(LIB, profile=profile, workers=1) as judge:
        items = [(answer(f"{ABS}(x)\nreturn {expr}"), CASES) for expr in PATHOLOGICAL.values()]
        verdicts = judge.judge_many(items + [(answer(RIGHT), CASES)])
    for name, v in zip(PATHOLOGICAL, verdicts):
        assert v.status is Status.WRONG_ANSWER and v.reward == 0.0, (name, v.status, v.detail)
        assert v.sebench_code == 0, name  # the official verdict: a wrong answer
    assert verdicts[-1].passed


def _official_sub(text: str) -> str:
    import re

    from se_gym.judge import compare

    for pattern in compare.OFFICIAL_EMPTY_ARRAY_REGEXES:
        text = re.sub(pattern, "[]", text)
    return text


def test_linear_empty_array_scanner_matches_the_official_regexes():
    """The linear-time scanner makes exactly the official regexes' replacements, on random texts
    built from the pieces those regexes look for (nested, broken, with odd spaces and words)."""
    import random
    import re

    from se_gym.judge import compare

    rng = random.Random(31)
    spaces = ["", "", " ", "\n ", "\t", "  ", "\u3000"]
    words = ["", "q", "float64", "'int'", "é1", "_", "ZWC", "x'y", "12"]

    def piece(depth: int = 0) -> str:
        sp, w = (lambda: rng.choice(spaces)), (lambda: rng.choice(words))
        k = rng.randrange(8)
        if k == 0:
            return f"array({sp()}[{sp()}],{sp()}dtype={w()}{sp()})"
        if k == 1:
            inner = piece(depth + 1) if depth < 3 and rng.random() < 0.5 else rng.choice(["", "0,", "2, 0", "(("])
            return f"array({sp()}[{sp()}],{sp()}shape=({inner}{rng.choice([')', ''])},{sp()}dtype={w()}{sp()})"
        if k == 2:
            return w() + rng.choice(["Array(", "ZWCArray(", "array("]) + f"{sp()}[{sp()}]{sp()})"
        if k == 3:
            return rng.choice(["[", "]", ")", "(", ",", "q", "1", " ", "\n"])
        if k == 4:
            return "array([],shape=("
        if k == 5:
            return rng.choice(["),dtype=int)", "), dtype='f8' )", ")"])
        if k == 6:
            return "".join(rng.choice("aAy([ ]),=q_1") for _ in range(rng.randrange(6)))
        return w()

    official = [re.compile(p) for p in compare.OFFICIAL_EMPTY_ARRAY_REGEXES]
    changed = 0
    for _ in range(30_000):
        text = "".join(piece() for _ in range(rng.randint(0, 12)))
        want = _official_sub(text)
        assert compare._empty_arrays(text) == want, text
        # and each piece alone
        assert compare._empty_shaped(text) == official[1].sub("[]", text), text
        assert compare._EMPTY_NAMED.sub("[]", text) == official[2].sub("[]", text), text
        changed += want != text
    assert changed > 10_000  # (the texts do exercise the patterns)


def test_scoring_over_the_judges_cpu_budget_is_the_answers_output_limit():
    """A result whose official reading is costly (a string re-read up to 40 times, each "inf" in it
    growing by 9 characters a time) stops at the judge's CPU budget: that answer gets output_limit,
    reward 0, and the rest of the batch is judged as usual."""
    cases = [{"input": "x=[-1, 2]", "output": "hello world"}]
    costly = answer(f"{ABS}(x)\nreturn 'inf ' * 50_000")
    honest = answer(f"{ABS}(x)\nreturn 'hello world'")
    with Judge(LIB, profile="sebench", workers=1, scoring_cpu_s=0.2) as judge:
        v, ok = judge.judge_many([(costly, cases), (honest, cases)])
    assert v.status is Status.OUTPUT_LIMIT and v.reward == 0.0 and not v.infrastructure, (v.status, v.detail)
    assert "judge's CPU" in v.detail and v.extra["scoring_cpu_s"] >= 0.2
    assert ok.passed
