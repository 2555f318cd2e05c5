"""The judge: extraction, official gates and comparison, verdicts, parity with SE-Bench, CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import shared_path
from se_gym.judge import Judge, JudgeError, Status, TestCase, Verdict, extract_code
from se_gym.judge.compare import OfficialChecker, expected_value, safe_eval, structural_ok
from se_gym.judge.gates import official_numpy_gate, official_static_gate, strict_check
from se_gym.library import mint

LIB = mint(3)
A, ABS, SUM = LIB.qualified("array"), LIB.qualified("abs"), LIB.qualified("sum")
PKG = LIB.package
CASES = [{"input": "x=[-1, 2]", "output": "[1, 2]"}, {"input": "x=np.array([-3])", "output": "[3]"}]


def block(code: str) -> str:
    return f"Here you go:\n```python\n{code}\n```\n"


# ------------------------------------------------------------------ extraction
def test_extract_last_python_block_and_edge_cases():
    assert extract_code("```python\na = 1\n```\ntext\n```python\nb = 2\n```") == "b = 2\n"
    assert extract_code("```py\nx = 1\n```") is None  # official rule: only ```python
    assert extract_code("```python\nunclosed = 1\n") is None
    assert extract_code("no code at all") is None
    assert extract_code("<think>```python\nbad\n```</think>```python\ngood\n```") == "good\n"
    assert extract_code("<think>```python\nbad\n```</think>```python\ngood\n```", strip_think=False) == "good\n"
    assert extract_code("<think>still thinking ```python\nx\n```") is None


# ------------------------------------------------------------------ official comparison
@pytest.mark.parametrize(
    "got,expected,ok",
    [
        ("[1 2 3]", "[1, 2, 3]", True),
        ("[[1 2]\n [3 4]]", "[[1, 2], [3, 4]]", True),
        ("ZWCArray([1.0, 2.5])", "[1.  2.5]", True),
        ("[5]", "5.004", True),  # single-element containers unwrapped, tolerance 1e-2
        ("5.02", "5.0", False),
        ("[inf, nan]", "array([inf, nan])", True),
        ("[np.float64(3.33), 1]", "[3.33, 1.0]", True),
        ("(array([1, 2]), [3, 4])", "([1, 2], [3, 4])", True),
        ("[1, 2, 3]", "[1, 2, 4]", False),
        ("Label: array([3, 3, 1])", "Label: [3 3 1]", True),
        ("hello", "hello", True),
        ("hello", "world", False),
        # lists of numbers (compared in line, element by element, as one pair of numbers is)
        ("[1, 2.0]", "[1.001, 2]", True),
        ("[nan, 1]", "[1, nan]", False),
        ("[True, 2]", "[1, 2]", True),  # a bool is a number there
        ("[" + "9" * 400 + ", 1]", "[1e308, 1]", False),  # float() overflows: the text decides
        ("[-inf, 2]", "[-inf, 2.005]", True),
        ("[1, 2]", "[1.02, 2]", False),
        ("[1, [2, [3, 4]]]", "[1, [2, [3, 4.001]]]", True),
        ("[1, 'a']", "[1.0, 'a']", True),
        ("[1, 2]", "[1, 2, 3]", False),
    ],
)
def test_official_comparison(got, expected, ok):
    assert OfficialChecker().equal(got, expected) is ok


def test_safe_eval_never_runs_code():
    with pytest.raises(ValueError):
        safe_eval("__import__('os').system('echo pwned')")
    with pytest.raises(ValueError):
        safe_eval("(lambda: 1)()")
    assert safe_eval("[np.int64(2), float('inf'), (1+2j)]") == [2, float("inf"), 1 + 2j]


def test_structural_comparison():
    assert expected_value("[[1 2]\n [3 4]]") == (True, [[1, 2], [3, 4]])
    assert structural_ok([1.0, 2.5], [1, 2.5])
    assert not structural_ok([1, 2], [[1, 2]])  # no unwrapping in strict
    assert not structural_ok(True, 1)
    assert structural_ok({"a": [0.33333333]}, {"a": [0.333333333333]})
    assert not structural_ok(0.3, 0.31)


# ------------------------------------------------------------------ gates
def test_official_static_gate_rules():
    ok = lambda code: official_static_gate(code + "import zwc\n", "solve")[0]  # noqa: E731
    assert ok("import zwc\ndef solve(x):\n    return zwc.falekef(x)\n")
    assert ok("from zwc import falekef\ndef solve(x):\n    return falekef(x)\n")
    assert not ok("def solve(x):\n    return [abs(v) for v in x]\n")  # no library call
    assert not ok("import zwc\ndef solve(x):\n    return zwc.yitaf(x)\n")  # only the constructor
    assert not ok("import zwc\ndef solve(x):\n    zwc.falekef(x)\n")  # no return value
    assert not ok("import zwc\ndef solve(x:\n")  # syntax error
    assert official_numpy_gate("import numpy as np") and official_numpy_gate("from numpy.linalg import norm")
    assert official_numpy_gate("m = __import__('numpy')") and not official_numpy_gate("import zwc")


# every statement and expression form CPython 3.11 parses, nested (for the gates' walk)
EVERY_FORM = """
from . import a as b
from ..pkg import (c, d)
import os.path as osp, sys
@dec(1)
@dec2
class A(B, metaclass=M):
    "doc"
    x: int = 3
    y: "s"
    def m(self, a, /, b=2, *c, d=None, **e) -> int:
        global G
        nonlocal_like = lambda q, *r, s=1, **t: (q, r, s, t)
        del self.z, G[0]
        G += 1
        G[1:2:3] = G[::-1]
        return f"{a!r:>{b}} {c[0]!s} {d=}" + str(-a + ~b) * (not a or b and c) if a < b <= c is not d in e else ({*c, *e}, {**e, "k": 1})
async def f(x):
    async with x as (y, z), w:
        async for i in y:
            await i
    return [j async for j in x if j], {k: v for k, v in x}, {s for s in x}, (g for g in x)
def gen(x):
    nonlocal_ = yield x
    yield from gen(x)
    assert x, "message"
    with open(x) as fh, open(x):
        pass
try:
    import zwc as z
except (ImportError, ValueError) as err:
    raise SystemExit(1) from err
except* TypeError:
    pass
else:
    pass
finally:
    pass
while (n := f(1, *[2], d=2, **{"e": 3})):
    match n:
        case [1, *rest] | {"k": rest, **kw}: break
        case A(1, y=[2, _]) as whole if whole: continue
        case None | True | -1 | 1 + 2j | "s" | b"b" | A.B: pass
        case _: pass
else:
    for i, (j, *k) in enumerate(x): print(i, j, k, x[i, j:k], ..., 1 if x else 2)
"""


def test_gate_walk_is_ast_walk_without_contexts_and_operators():
    """The gates' walk skips what no gate reads (Load, Add, Eq...: leaves) and must keep every
    other node in ast.walk's order: a field it wrongly skips hides, say, an import or a call."""
    import ast

    from se_gym.judge.gates import walk

    src = EVERY_FORM.replace("except* TypeError:\n    pass\n", "")  # (try* cannot share a try with except)
    src += "try:\n    pass\nexcept* TypeError:\n    pass\n"
    tree = ast.parse(src)
    leaves = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
    expected = [n for n in ast.walk(tree) if not isinstance(n, leaves)]
    got = walk(tree)
    assert len(got) == len(expected) > 250
    assert all(a is b for a, b in zip(got, expected))
    kinds = {type(n).__name__ for n in got}
    for kind in ("ImportFrom", "Import", "Call", "Return", "FunctionDef", "AsyncFunctionDef", "Lambda", "JoinedStr",
                 "FormattedValue", "MatchClass", "MatchMapping", "MatchStar", "MatchSingleton", "MatchValue", "TryStar",
                 "NamedExpr", "Starred", "Slice", "Await", "YieldFrom", "DictComp", "comprehension", "keyword", "alias"):
        assert kind in kinds, kind


def test_strict_gate_refuses_escape_routes():
    bad = {
        "import os": "import of os",
        "import zwc._core": "import of zwc._core",
        "from zwc import _core": "zwc._core",
        "x = __import__('numpy')": "__import__",
        "f = getattr": "getattr",
        "y = (1).__class__": "__class__",
        "g = (i for i in [1]); h = g.gi_frame": "gi_frame",
        "s = '{0.x}'.format(1)": "str.format",
        "exec('1')": "exec",
        "def __del__(self): pass": "__del__",
        "T = type('T', (), {})": "type()",
    }
    for code, what in bad.items():
        found = strict_check(code, "zwc", "rfx", permissive=False)
        assert found and what in str(found[0]), (code, found)
    # the permissive gate (strict's default with the library out of process) refuses the routes that
    # lead out of the answer's objects, and lets ordinary Python through
    for code, what in {"import subprocess": "import of subprocess", "import inspect": "reflection", "import os\nos.system('ls')": "os.system is not allowed", "x = __import__('numpy')": "__import__", "exec('1')": "exec",
                       "g = (i for i in [1]); h = g.gi_frame": "gi_frame", "T = type('T', (), {})": "type()",
                       "f = print.__self__": "__self__"}.items():
        found = strict_check(code, "zwc", "rfx", permissive=True)
        assert found and what in str(found[0]), (code, found)
    for code in ("import zwc._core", "f = getattr", "def __del__(self): pass", "s = '{0.x}'.format(1)"):
        assert strict_check(code, "zwc", "rfx", permissive=True) == [], code
    assert strict_check("import math\nimport zwc\nfrom zwc import rfx\ndef solve(x):\n    return f'{x:.2f}' + '{:.1f}'.format(2)\n", "zwc", "rfx") == []


def test_verdict_round_trip_and_bad_input():
    v = Verdict(0.5, Status.WRONG_ANSWER, 0)
    assert Verdict.from_dict(json.loads(json.dumps(v.to_dict()))) == v
    with pytest.raises(JudgeError):
        TestCase.coerce({"input": "x=1"})
    with pytest.raises(JudgeError):
        Judge(LIB, profile="nope")
    with Judge(LIB, profile="sebench") as j:
        with pytest.raises(JudgeError):
            j.judge("x", [])


def test_verdict_to_dict_is_asdicts_form_key_for_key():
    # to_dict is built field by field (issue 49: asdict was most of se-gym judge's row writing);
    # the rows it writes stay what asdict made: the same keys in the same order, the same values
    from dataclasses import asdict

    from se_gym.judge.types import CaseResult, ErrorType

    def by_asdict(v):
        d = asdict(v)
        d["status"] = v.status.value
        d["error_type"] = v.error_type.value if v.error_type else None
        d["cases"] = [asdict(c) for c in v.cases]
        d["extra"] = dict(v.extra)
        return d

    nested = {"dependence": {"ran": True, "cases": ["match", "independent"]}, "refused": ["open"]}
    for v in (Verdict(0.5, Status.WRONG_ANSWER, 0),
              Verdict(1.0, Status.PASSED, 1, (CaseResult("[1 2]", "[1 2]", True), CaseResult(None, "3", False)), "ValueError",
                      "bad", ErrorType.OTHER, "why", "def f(): pass", "f", 0.25, 0.5, False, "strict", nested)):
        got = v.to_dict()
        assert json.dumps(got) == json.dumps(by_asdict(v)) and list(got) == list(by_asdict(v))
        got["extra"]["x"] = 1  # (a copy: the verdict keeps its own)
        assert "x" not in v.extra


# ------------------------------------------------------------------ end to end (local sandbox)
@pytest.fixture(scope="module")
def sebench_judge():
    with Judge(LIB, profile="sebench", workers=2) as j:
        yield j


def test_official_verdict_codes(sebench_judge):
    right = block(f"import {PKG}\ndef solve(x):\n    return {ABS}(x)")
    items = [
        (right, CASES),
        (block(f"import {PKG}\ndef solve(x):\n    return {SUM}(x)"), CASES),  # wrong
        (block(f"import numpy as np\nimport {PKG}\ndef solve(x):\n    return {ABS}(x)"), CASES),  # numpy
        (block("def solve(x):\n    return [abs(v) for v in x]"), CASES),  # static gate
        (block(f"import {PKG}\ndef solve(x):\n    return {ABS}(x).tolist()"), CASES),  # crash
        (block(f"import {PKG}\ndef solve(x):\n    while True: pass\n    return {ABS}(x)"), CASES),  # timeout
        ("no code", CASES),
    ]
    got = [(v.sebench_code, v.status) for v in sebench_judge.judge_many(items)]
    assert got == [
        (1, Status.PASSED), (0, Status.WRONG_ANSWER), (2, Status.USES_NUMPY), (4, Status.STATIC_GATE),
        (3, Status.RUNTIME_ERROR), (3, Status.TIMEOUT), (4, Status.STATIC_GATE),
    ]


def test_printed_results_come_back_exactly_whatever_their_characters(sebench_judge):
    """Each printed result travels through the result channel as JSON: quotes, backslashes, control
    characters, non-ASCII text and lone surrogates come back exactly as str() printed them, and match
    an expected output equal to them, in both profiles (the sebench profile writes its records
    without a JSONEncoder)."""
    texts = ['say "hi" \\n', "tab\there\nnew line", "\u00e9 \u4e2d \u2028 end", "nul\x00bell\x07", "lone \ud800 half"]
    answer = block(f"import {PKG}\nTEXTS = {texts!r}\ndef solve(x):\n    {ABS}([x])\n    return TEXTS[x]")
    cases = [{"input": f"x={i}", "output": t} for i, t in enumerate(texts)]
    # (the answer only names the library: strict's dependence check, issue 42, is not what is tested here)
    with Judge(LIB, profile="strict", workers=1, dependence=False) as strict:
        for v in (sebench_judge.judge_many([(answer, cases)])[0], strict.judge_many([(answer, cases)])[0]):
            assert [c.got for c in v.cases] == texts, (v.profile, v.detail)
            assert v.status is Status.PASSED, (v.profile, v.detail)


def test_error_taxonomy(sebench_judge):
    items = [
        (block(f"import {PKG}\ndef solve(x):\n    return {ABS}(x).tolist()"), CASES),
        (block(f"import {PKG}\ndef solve(x):\n    return {PKG}.nosuchfunction(x)"), CASES),
        (block(f"import {PKG}\ndef solve(x):\n    return {ABS}(x, bogus=1)"), CASES),
        (block(f"import {PKG}\ndef solve(x):\n    return {SUM}(x)"), CASES),
        (block(f"import {PKG}\ndef solve(x):\n    return float({ABS}([x, x]))"), CASES),
    ]
    assert [v.error_type.value for v in sebench_judge.judge_many(items)] == [
        "array_attribute_hallucination", "library_function_hallucination", "parameter_error",
        "return_value_misunderstanding", "native_python_incompatibility",
    ]


def test_workers_warm_up_on_the_library_without_loading_anything_new(sebench_judge):
    # (a module the warm-up loaded would be one a program no longer imports itself: the strict wall
    # watches NumPy's lazy imports)
    assert sebench_judge.sandbox.worker_info["warmup"] == {"errors": [], "imported": []}


def test_sandbox_copy_of_the_library_has_no_docstrings(sebench_judge):
    # a closed-book agent must not read the docs back through a verdict's `got`
    doc_is_none = [{"input": "x=1", "output": "True"}]
    code = block(f"import {PKG}\ndef solve(x):\n    {ABS}(x)\n    return {ABS}.__doc__ is None and {PKG}.{LIB.linalg}.{LIB.names['linalg.det']}.__doc__ is None")
    v = sebench_judge.judge(code, doc_is_none)
    assert v.status is Status.PASSED, v
    assert not (LIB.materialize("sebench", docs=False) / PKG / "docs.json").exists()
    assert (LIB.materialize("sebench") / PKG / "docs.json").exists()  # the copy users get keeps them


def test_harness_reports_alike_whether_the_worker_or_the_program_compiled_the_answer(sebench_judge):
    """The judge's harness hands the worker its answer and cases to compile before the fork
    (se_gym.sandbox.Program); run as a plain str (a backend that does not), it compiles them
    itself: the channel must report the same, per-case syntax errors and warnings included."""
    from se_gym.judge.harness import channel_program, read_channel

    box = sebench_judge.sandbox
    answer = f"import {PKG}\ndef solve(x):\n    assert x is not 1\n    return {ABS}(x)\n"
    for strict in (False, True):
        prog = channel_program(answer, "solve", ["x=[-1, 2]", "x=[3", f"x={A}([-3])"], PKG, strict, [PKG] if strict else [])
        assert prog.units is not None
        both = box.run([prog, str(prog)])
        reports = [read_channel(r.channel, 3, strict) for r in both]
        assert reports[0] == reports[1] and reports[0].complete, reports
        assert [c.printed for c in reports[0].cases] == ["[1 2]", None, "[3]"] and reports[0].cases[1].error[0] == "SyntaxError"
        assert [r.stderr.count("SyntaxWarning") for r in both] == [1, 1], both  # the program's warning, as python main.py shows it
    # as the judge makes it: answer and cases compiled by the judge itself, the same report
    silent = block(f"import {PKG}\ndef solve(x):\n    return {ABS}(x)\n")
    p = sebench_judge._prepare(0, (silent, CASES))
    assert all(type(u[3]) is bytes for u in p.program.units[1]), p.program.units
    both = box.run([p.program, str(p.program)])
    reports = [read_channel(r.channel, 2, False) for r in both]
    assert reports[0] == reports[1] and [c.printed for c in reports[0].cases] == ["[1 2]", "[3]"], reports
    # ... and its last statement, compiled as the worker compiles it after its cached head
    import marshal

    from se_gym.sandbox import worker

    cut, blob = p.program.tail
    assert cut == worker._split_point(str(p.program))
    mine, theirs = marshal.loads(blob), worker._precompile(str(p.program))[1]
    for attr in ("co_code", "co_consts", "co_names", "co_firstlineno", "co_filename", "co_flags", "co_stacksize"):
        assert getattr(mine, attr) == getattr(theirs, attr), attr
    assert list(mine.co_lines()) == list(theirs.co_lines())  # (its columns: see the next test)


def test_the_harness_call_is_the_code_compiling_it_makes(tmp_path, monkeypatch):
    """The judge builds the call's code from a per-shape template instead of compiling each call:
    the same instructions, constants, lines and positions (columns included) as compiling the text,
    for every shape (0-5 cases, equal cases, strict lists, imports, non-ASCII text); a traceback
    through it reads the same."""
    import io
    import marshal
    import sys

    from se_gym.judge.harness import _CALL_SHAPES, _HEAD_LINES_OF, _PARENT_COMPILE, _PRELUDES, channel_program

    if not _PARENT_COMPILE:
        return  # (the worker compiles the call on other Pythons: nothing to compare)
    monkeypatch.chdir(tmp_path)
    src = f"import {PKG}\ndef solve(x):\n    return {ABS}(x)  # 'é' → ∑\n"  # (columns count UTF-8 bytes)
    for n in range(6):
        for strict, modules in ((False, []), (True, []), (True, ["math"]), (True, ["math", "re", "json"])):
            for equal in (False, True):
                cases = ["x=[1]" if equal else f"x=[{i}]" for i in range(n)]
                prog = channel_program(src, "solve", cases, PKG, strict, modules)
                text = _HEAD_LINES_OF[strict] + str(prog)[len(_PRELUDES[strict]) + 1:]
                made, compiled = marshal.loads(prog.tail[1]), compile(text, "main.py", "exec", 0, True)
                for attr in ("co_code", "co_consts", "co_names", "co_firstlineno", "co_filename", "co_flags", "co_stacksize"):
                    assert getattr(made, attr) == getattr(compiled, attr), (attr, n, strict, modules, equal)
                assert list(made.co_lines()) == list(compiled.co_lines())
                assert list(made.co_positions()) == list(compiled.co_positions()), (n, strict, modules, equal)
    # what a traceback through the call prints (the source line read back from main.py; an answer
    # longer than the template's placeholders, as real ones are)
    src = f"import {PKG}\ndef solve(x):\n    # {'a comment as answers have them ' * 8}\n    return {ABS}(x)\n"
    prog = channel_program(src, "solve", ["x=[1]", "x=[2]", "x=[3]"], PKG, False)
    (tmp_path / "main.py").write_text(str(prog))
    made = marshal.loads(prog.tail[1])
    compiled = compile(_HEAD_LINES_OF[False] + str(prog)[len(_PRELUDES[False]) + 1:], "main.py", "exec", 0, True)
    assert _CALL_SHAPES[(False, 3, 0, 0, 0)] is not False  # (made from the template, not compiled)

    def printed(code, exc):
        def harness(*args):
            raise exc()

        out, old = io.StringIO(), sys.stderr
        sys.stderr = out
        try:
            try:
                exec(code, {"__sg_harness": harness, "__name__": "__main__"})
            except BaseException:
                sys.excepthook(*sys.exc_info())
        finally:
            sys.stderr = old
        return out.getvalue()

    for exc in (ValueError, MemoryError, KeyboardInterrupt):
        text = printed(made, exc)
        assert "main.py\", line" in text and "__sg_harness(" in text, text
        assert text == printed(compiled, exc)


def test_the_judge_compiles_only_what_compiles_silently():
    """The judge compiles the answer and cases itself (no fork pays for it) only where compiling
    warns of nothing: a warning belongs on the program's stderr.  Every source here that warns
    gets None (the worker or the program compiles it); the silent ones get the very code."""
    import marshal
    import warnings

    from se_gym.judge.harness import _PARENT_COMPILE, compiled_unit

    if not _PARENT_COMPILE:  # a Python whose warnings the rules do not cover: the judge never compiles
        assert compiled_unit("f(x)", "<t>", "eval") is None
        return
    warns = ["x is 1", "x is -1", "x is (1, 2)", "x is not 'a'", "(1)(2)", "(1, 2)(3)", "'ab'['x']", "[1, 2]['x']",
             "f'{x}'(1)", "x if 1 is 1 else 2", "'\\d'", "[0x1for x in y]", "1if x else 2"]
    silent = ["x is None", "x is not y.z", "f(x)[0]", "a.b(c)(d)", "[1, 2] == x", "g(x=[1, -2.5], y=(1, 2))"]
    for src in warns:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            compile(src, "<t>", "eval", 0, True)
        assert seen, src  # (really a warning on this Python)
        assert compiled_unit(src, "<t>", "eval") is None, src
    for src in silent:
        assert marshal.loads(compiled_unit(src, "<t>", "eval")).co_code == compile(src, "<t>", "eval", 0, True).co_code
    for src in ("'ab'[i]", "'a\\n'.join(x)"):  # silent, but the rules are coarse: left to the worker
        assert compiled_unit(src, "<t>", "eval") is None
    assert compiled_unit("assert (x, 'always')", "<t>", "exec") is None
    assert compiled_unit("x = (", "<t>", "exec") is None  # an error: left to the program
    # given the parsed nodes, it compiles the tree: the very code of the text, positions included
    import ast

    from se_gym.judge.gates import walk

    answer = ("@dec(1)\nclass A(B, metaclass=M):\n    \"doc\"\n    x: int = 3\n"
              "def f(a, /, b=2, *c, d, **e):\n    g = lambda y: [z for z in y] if a else {k: v for k, v in e.items()}\n"
              "    return f'{a!r:>{b}} {c[0]}' + str(-1 + 2) * (a or b)\n"
              "try:\n    import zwc as z\nexcept (ImportError, ValueError) as err:\n    raise SystemExit(1) from err\n"
              "while (n := f(1, d=2)):\n    match n:\n        case [1, *rest] | {'k': rest}: break\n        case _: pass\n")

    def fields(code):
        out = [(code.co_code, code.co_linetable, code.co_exceptiontable, code.co_firstlineno, code.co_names,
                code.co_varnames, list(code.co_positions()), [c for c in code.co_consts if not hasattr(c, "co_code")])]
        return out + [f for c in code.co_consts if hasattr(c, "co_code") for f in fields(c)]

    from_tree = marshal.loads(compiled_unit(answer, "<answer>", "exec", walk(ast.parse(answer))))
    assert fields(from_tree) == fields(compile(answer, "<answer>", "exec", 0, True))
    case = "f(1, [2, 3], d={'a': (4, 5.5)})"
    assert fields(marshal.loads(compiled_unit(case, "<c>", "eval", walk(ast.parse(case, mode="eval"))))) == \
        fields(compile(case, "<c>", "eval", 0, True))


def test_judge_many_streams_in_order_and_a_bad_item_cancels_what_it_sent():
    """judge_many starts the workers and runs programs while later answers are prepared: verdicts
    still come back in input order, and a bad item raises without leaving work behind."""
    good = (block(f"import {PKG}\ndef solve(x):\n    return {ABS}(x)"), CASES)
    slow = (block(f"import {PKG}\nimport time\ndef solve(x):\n    time.sleep(0.3)\n    return {ABS}(x)"), CASES)
    wrong = (block(f"import {PKG}\ndef solve(x):\n    return {SUM}(x)"), CASES)
    with Judge(LIB, profile="sebench", workers=2) as j:
        assert j._sandbox is None  # not started before the first answer that needs it
        with pytest.raises(JudgeError, match="item 3"):
            j.judge_many([good, slow, good, ("no code", "not a list")])
        got = j.judge_many([slow, wrong, good, ("no code", CASES), slow, good])
        assert [v.status for v in got] == [Status.PASSED, Status.WRONG_ANSWER, Status.PASSED, Status.STATIC_GATE,
                                           Status.PASSED, Status.PASSED]
        assert j.sandbox.restarts == 0
    with Judge(LIB, profile="sebench", workers=1) as j:  # nothing to run: no sandbox started
        assert j.judge_many([("no code", CASES)])[0].status is Status.STATIC_GATE and j._sandbox is None


def test_judge_many_holds_a_bounded_window_of_a_large_batch():
    """A batch of any size is streamed: at most ``stream_window`` answers are submitted and not yet
    settled, so a generator of answers is read only that far ahead of the verdicts (issue 38's
    bounded memory on the driver); verdicts stay in input order and right."""
    good = (block(f"import {PKG}\ndef solve(x):\n    return {ABS}(x)"), CASES)
    wrong = (block(f"import {PKG}\ndef solve(x):\n    return {SUM}(x)"), CASES)
    with Judge(LIB, profile="sebench", workers=2) as j:
        j.stream_window = 8
        finished, ahead = [0], []
        inner = j._finish_contained

        def counting(p, r):
            finished[0] += 1
            return inner(p, r)

        j._finish_contained = counting

        def answers(n):
            for i in range(n):
                ahead.append(i - finished[0])  # read but not yet settled, when the next is asked for
                yield good if i % 3 else wrong
        got = j.judge_many(answers(120))
    assert [v.status for v in got] == [Status.WRONG_ANSWER if i % 3 == 0 else Status.PASSED for i in range(120)]
    assert max(ahead) <= 8 + 1, max(ahead)  # without the window: all 120 read before the first verdict
    assert finished[0] == 120


def test_fraction_reward_and_function_name():
    code = block(f"import {PKG}\ndef helper(v):\n    return v\ndef solve(x):\n    return {ABS}(x) if len(x) > 1 else {SUM}(x) - 100")
    with Judge(LIB, profile="strict", reward="fraction", workers=1) as j:
        v = j.judge(code, CASES, "def solve(x):")
        assert v.status is Status.WRONG_ANSWER and v.reward == 0.5 and [c.ok for c in v.cases] == [True, False]


# ------------------------------------------------------------------ NumPy's wrapped rows under strict (issue 31)
def test_strict_reads_a_row_numpy_wrapped_over_lines_as_one_row():
    """NumPy prints a long row over several lines; officially a list of the same values never equals
    it (kept under sebench), under strict it does, and every shape reads as its tolist()."""
    import numpy as np

    rng = np.random.default_rng(31)
    strict = OfficialChecker("ZWCArray", numpy_wraps=True)
    official = OfficialChecker("ZWCArray")
    for a in (rng.normal(size=11), rng.normal(size=(2, 13)) * 100, rng.integers(-9, 9, (2, 2, 12)), rng.normal(size=(3, 2)),
              rng.random(14) > 0.5, np.arange(30)):
        printed, as_list = str(a), str(a.tolist())
        assert strict.equal(as_list, printed) and strict.equal(printed, as_list), printed
        parsed, value = expected_value(printed, numpy_wraps=True)
        assert parsed and structural_ok(a.tolist(), value, 1e-6, 1e-6), printed
        if "\n" in printed and a.ndim == 1:
            assert not official.equal(as_list, printed)  # the official quirk, kept under sebench
    assert strict.equal("Label: 1\nOther: 2", "Label: 1\nOther: 2") and not strict.equal("[1 2\n 3]", "[1, 2]")


def _builtin_list_and_array_items():
    """The seed-0 built-in suite (train and single_test): each task's library solution, its result
    turned into a list, and (where the result is a list of values) into a library array."""
    from se_gym.tasks.spec import load_task_spec

    tasks = []
    for split in ("train", "single_test"):
        found, lib = load_task_spec("builtin:0", split, None, default_seed=0)
        tasks += found
    to_list = ("\n\ndef to_list(v):\n    if isinstance(v, (bool, int, float, complex, str)):\n        return v\n"
               "    if isinstance(v, tuple):\n        return tuple(to_list(x) for x in v)\n    try:\n        return [to_list(x) for x in v]\n"
               "    except TypeError:\n        return v\n")  # (a NumPy scalar: sebench's library returns them as they are)
    ctor = lib.qualified("array")

    def variant(task, kind: str) -> str:
        lines = task.library_solution.rstrip().splitlines()
        (k,) = [i for i, line in enumerate(lines) if line.strip().startswith("return ")]
        indent, expr = lines[k][: len(lines[k]) - len(lines[k].lstrip())], lines[k].strip()[len("return "):]
        lines[k] = f"{indent}return to_list({expr})" if kind == "list" else f"{indent}return {ctor}(to_list({expr}))"
        return block("\n".join(lines) + to_list)

    items, names = [], []
    for t in tasks:
        values = all(c.output.startswith("[") and "(" not in c.output and "'" not in c.output for c in t.test_cases)
        for kind in ("list", "array") if values else ("list",):
            items.append((variant(t, kind), t.test_cases, t.function_name, None, t.library_solution))
            names.append(f"{t.id} as {kind}")
    assert len(tasks) == 996 and len(items) > 1500
    return lib, items, names


@pytest.mark.parametrize("profile", ["strict", "sebench"])
def test_every_builtin_reference_passes_returning_a_list_or_an_array(profile):
    """Every built-in task's reference passes as a list and as an array, in both profiles: the
    suite's expected outputs are canonical (TestCase.canonical), so a row NumPy wrapped over lines
    reads as one row.  Before: 69 tasks failed as lists, and 108 as arrays, where NumPy wrapped a
    row (under sebench the lists failed until the cases were canonical)."""
    lib, items, names = _builtin_list_and_array_items()
    assert all(c.canonical for _, cases, *_ in items for c in cases)
    with Judge(lib, profile=profile) as judge:
        verdicts = judge.judge_many(items)
    failed = [f"{n}: {v.status.value} {v.detail[:120]}" for n, v in zip(names, verdicts) if not v.passed]
    assert not failed, f"{len(failed)} failed:\n" + "\n".join(failed[:10])


def test_official_cases_keep_the_official_reading_under_sebench(sebench_judge):
    """A list answer against a wrapped NumPy print: passes for a canonical (built-in) case, fails
    for an official one under sebench, as under SE-Bench's judge."""
    import numpy as np

    wrapped = str(np.arange(30) * 1.5)
    assert "\n" in wrapped
    answer = block(f"import {PKG}\ndef solve(x):\n    {ABS}(x)\n    return [v * 1.5 for v in range(30)]")
    official, canonical = TestCase("x=[1]", wrapped), TestCase("x=[1]", wrapped, canonical=True)
    v_official, v_canonical = sebench_judge.judge_many([(answer, [official]), (answer, [canonical])])
    assert not v_official.passed and v_canonical.passed, (v_official.detail, v_canonical.detail)


# ------------------------------------------------------------------ parity with the official judge
def test_parity_with_official_verdicts():
    path = shared_path("sebench", "parity_dev.jsonl")
    SHARED = path.parent
    from se_gym.library import official

    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    with Judge(official(SHARED / "api_doc.jsonl"), profile="sebench") as j:
        verdicts = j.judge_many([(r["response"], r["test_cases"], None, r["right_exe_result"].split("#")) for r in rows])
    agree = sum(v.sebench_code == r["verdict"] for v, r in zip(verdicts, rows))
    print(f"parity: {agree}/{len(rows)} rows agree with the official verdicts")
    assert agree >= 0.99 * len(rows)


# ------------------------------------------------------------------ CLI
def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "se_gym.cli", "judge", *args], capture_output=True, text=True, env=env, timeout=120)


def test_cli_judges_resumes_and_reports_bad_rows(tmp_path):
    rows = [
        {"task": i, "response": block(f"import {PKG}\ndef solve(x):\n    return {ABS if i % 2 == 0 else SUM}(x)"), "test_cases": CASES,
         "right_exe_result": "[1, 2]#[3]"}
        for i in range(4)
    ]
    inp, out = tmp_path / "r.jsonl", tmp_path / "v.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = "seed:3"
    r = _cli("--input", str(inp), "--out", str(out), "--library", spec, "--batch-size", "2", "--quiet", "--workers", "1")
    assert r.returncode == 0, r.stderr
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["judge"]["sebench_code"] for g in got] == [1, 0, 1, 0] and got[0]["task"] == 0
    summary = json.loads((tmp_path / "v.summary.json").read_text())
    assert summary["accuracy"] == 0.5 and summary["status"] == {"passed": 2, "wrong_answer": 2}
    from se_gym.judge.cli import summarize

    assert summary == summarize(out)  # (a fresh run sums the rows it wrote: what reading them back gives)
    # a kill mid-write leaves a torn row: it is dropped and redone, nothing duplicated
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:2]) + lines[2][:20])
    r = _cli("--input", str(inp), "--out", str(out), "--library", spec, "--quiet", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert sorted(json.loads(line)["judge_line"] for line in out.read_text().splitlines()) == [1, 2, 3, 4]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(rows[0]) + "\n" + json.dumps({"response": "x", "test_cases": "nope"}) + "\n")
    r = _cli("--input", str(bad), "--out", str(tmp_path / "b.jsonl"), "--library", spec)
    assert r.returncode == 2 and f"{bad}:2: field 'test_cases'" in r.stderr


def test_channel_lines_decode_as_json_loads_decodes_them():
    """read_channel decodes an ASCII channel's lines without json.loads' wrappers: the same value,
    or a ValueError, for every line json.loads accepts or refuses."""
    import json

    from se_gym.judge.harness import _json_line, read_channel

    lines = ['{"n": "a", "i": 0, "p": "[1 2]"}', ' {"a": 1} ', "\t[1, 2]\n", "1", "-0.5e3", "NaN", "-Infinity", "true",
             "null", '"\\u00e9\\ud800"', "1e400", "12345678901234567890123", "[]", "{}", "", " ", "{", "[1,]", "1 2",
             '{"a": 1} x', '{"a": 1}{"b": 2}', "'a'", "nan", "01", '"\\x41"', "[" * 50 + "]" * 50, '{"a": 1, "a": 2}',
             '"tab\there"', "\u00a01"]
    for line in lines:
        try:
            want = ("ok", json.loads(line))
        except ValueError:
            want = ("refused",)
        try:
            got = ("ok", _json_line(line))
        except ValueError:
            got = ("refused",)
        assert repr(got) == repr(want), line  # (repr: NaN is not equal to itself)
    # and the whole reader on a channel that is not ASCII (the per-line bytes path) agrees
    hello = b'{"hello": "' + b"0" * 32 + b'"}\n'
    rec = b'{"n": "' + b"0" * 32 + b'", "i": 0, "p": "x"}\n'
    done = b'{"n": "' + b"0" * 32 + b'", "done": 1}\n'
    plain = read_channel(hello + rec + done, 1)
    assert plain.complete and plain.cases[0].printed == "x" and not plain.forged
    odd = read_channel(hello + rec + "é\n".encode() + done, 1)
    assert not odd.complete and odd.forged == 1 and odd.cases[0].printed == "x", odd


def test_judge_many_launches_local_workers_before_preparing_more_answers(monkeypatch):
    """judge_many starts its local workers in the background and prepares answers meanwhile, but
    only once the workers' processes are launched: the launch is Python of this process, which
    preparing at the same time would delay (measured: 0.3 s instead of 0.03 s, a core idle)."""
    from se_gym.sandbox.local import LocalSandbox

    good = (block(f"import {PKG}\ndef solve(x):\n    return {ABS}(x)"), CASES)
    spawned: list[int] = []
    real_spawn = LocalSandbox._spawn

    def spawn(self, slot):
        transport = real_spawn(self, slot)
        spawned.append(slot)
        return transport

    monkeypatch.setattr(LocalSandbox, "_spawn", spawn)
    launched_at_second = []
    with Judge(LIB, profile="sebench", workers=2) as j:
        real_prepare = j._prepare

        def prepare(index, item):
            if index == 1:  # the first answer is prepared before the start; the second once it returned
                launched_at_second.append(sorted(spawned))
            return real_prepare(index, item)

        j._prepare = prepare
        assert [v.status for v in j.judge_many([good] * 3)] == [Status.PASSED] * 3
    assert launched_at_second == [[0, 1]]
