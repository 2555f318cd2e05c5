"""Self-play core: every validity rule rejects what breaks it (for that reason), the rewards, dedup,
the task-relative advantage on hand-computed values, label noise against the NumPy oracle, the
buffer and its SE-Bench export.  Validation runs the real judge in the real sandbox (strict)."""
from __future__ import annotations

import json
import random

import pytest

from se_gym.library import mint
from se_gym.selfplay import (
    DedupIndex,
    ProposalError,
    ProposerReward,
    TaskBuffer,
    ValidationConfig,
    Validator,
    four_p,
    gap,
    histogram,
    learnability,
    parse_proposal,
    rejection_counts,
    render_proposal,
    signal_share,
    task_relative_advantages,
)
from se_gym.selfplay.oracle import label_noise, to_numpy, used_functions
from se_gym.selfplay.validate import REASONS, returns_library_value

LIB = mint(0)
PKG = LIB.package
ABS, CUMSUM, SUM, SORT = (LIB.qualified(k) for k in ("abs", "cumsum", "sum", "sort"))
ARRAY = LIB.qualified("array")
INPUTS = [f"x={[i, -i - 1, 3 * i + 2]}" for i in range(8)]


def prop(body: str, question: str = "Return the running total of the absolute values of x.", inputs=INPUTS, header=None) -> str:
    code = (header if header is not None else f"import {PKG}\n") + "def solve(x):\n" + body
    return render_proposal(question, inputs, code)


GOOD = prop(f"    return {CUMSUM}({ABS}(x))\n")


@pytest.fixture(scope="module")
def validator():
    with Validator(LIB, ValidationConfig(wall_s=1.0)) as v:
        yield v


# -- parsing -------------------------------------------------------------------------------------
def test_parse_reads_question_inputs_and_reference():
    p = parse_proposal(GOOD, ("abs", "cumsum"))
    assert p.question.startswith("Return the running total")
    assert p.inputs == tuple(INPUTS)
    assert p.reference.startswith(f"import {PKG}\ndef solve(x):")
    assert p.functions == ("abs", "cumsum")


def test_parse_counts_repeated_inputs_once():
    with pytest.raises(ProposalError) as e:
        parse_proposal(prop(f"    return {ABS}(x)\n", inputs=INPUTS[:4] * 2))
    assert e.value.reason == "too_few_inputs"


BROKEN = {
    # reason -> a proposal that breaks exactly that rule (and passes the ones before it)
    "no_question": GOOD.replace("Question: Return the running total of the absolute values of x.", "Question:"),
    "no_reference": GOOD.split("Reference:")[0] + "Reference:\nsee above",
    "bad_inputs": prop(f"    return {ABS}(x)\n", inputs=INPUTS[:7] + ["x=list(range(3))"]),
    "too_few_inputs": prop(f"    return {ABS}(x)\n", inputs=INPUTS[:7]),
    "syntax_error": prop(f"    return {ABS}(x\n"),
    "no_entry_point": render_proposal("Abs of x.", INPUTS, f"import {PKG}\nresult = {ABS}([1])\n"),
    "inputs_mismatch": prop(f"    return {ABS}(x)\n", inputs=[s.replace("x=", "y=") for s in INPUTS]),
    "imports_outside_library": prop(f"    return {ABS}(x)\n", header=f"import {PKG}\nimport math\n"),
    "library_not_on_return_path": prop(f"    {ABS}(x)\n    return [v * 2 for v in x]\n"),
    "static_gate": prop(f"    return {ARRAY}(x)\n"),
    "uses_numpy": prop(f"    np = __import__('numpy')\n    return {ABS}(x)\n"),
    "forbidden": prop(f"    return {ABS}(x) + eval('0')\n"),
    "runtime_error": prop(f"    return {ABS}(x) + undefined_name\n"),
    "resource_limit": prop(f"    while True:\n        pass\n    return {ABS}(x)\n"),
    "unconvertible_result": prop(f"    return ({ABS}, {ABS}(x))\n"),
    "nondeterministic": prop(f"    s = {{'alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta'}}\n    return str(list(s)) + str({ABS}(x))\n"),
    "constant_outputs": prop(f"    return {ABS}([1, -2])\n"),
    # the library is on the return path (the AST gate passes) but the results are x's own: under the
    # counterfactual library nothing changes, and an answer "return x" would pass against it
    "library_unused": prop(f"    return [w for v, w in zip({CUMSUM}(x), x)]\n"),
    # the question hands the solver its reference (se-gym validate's leakage check)
    "leaks_solution": prop(f"    return {CUMSUM}({ABS}(x))\n", question=f"Running total of |x|. Write: return {CUMSUM}({ABS}(x))"),
}


def test_every_reason_has_a_test():
    assert set(BROKEN) | {"duplicate", "sandbox_error"} == set(REASONS)


def test_each_broken_rule_is_rejected_for_its_reason(validator):
    names = list(BROKEN)
    outcomes = validator.validate_texts([GOOD] + [BROKEN[n] for n in names])
    assert outcomes[0].accepted, outcomes[0].detail
    got = {n: (o.reason, o.detail) for n, o in zip(names, outcomes[1:])}
    assert {n: r for n, (r, _) in got.items()} == {n: n for n in names}, got
    assert rejection_counts(outcomes) == {n: 1 for n in REASONS if n in BROKEN}


def test_accepted_task_takes_the_references_outputs(validator):
    (o,) = validator.validate_texts([GOOD])
    t = o.task
    # |[0, -1, 2]| cumulated = [0, 1, 3]
    assert t.test_cases[0].output == "[0 1 3]"
    assert [c.input for c in t.test_cases] == INPUTS
    assert t.function_name == "def solve(x):"
    assert t.functions == ("cumsum", "abs")
    assert t.library_solution.startswith(f"import {PKG}")
    assert "cumsum(" in t.reference_solution and "import numpy" in t.reference_solution
    assert o.noise == 0.0 and t.metadata["label_noise"] == 0.0
    # and the judge accepts the reference as an answer to its own task
    from se_gym.judge import Judge

    with Judge(LIB, profile="strict") as j:
        v = j.judge(f"```python\n{t.library_solution}```", t.test_cases, t.function_name)
    assert v.passed, v.detail


def test_duplicates_of_the_buffer_and_within_a_batch(validator):
    first = validator.validate_texts([GOOD])
    buf = TaskBuffer([first[0].task])
    reworded_spacing = GOOD.replace("running total", "Running   total")
    other_inputs = prop(f"    return {CUMSUM}({ABS}(x))\n", inputs=[f"x={[i, 7, -i]}" for i in range(8)])
    new = prop(f"    return {SORT}(x)\n", question="Sort x.")
    outs = validator.validate_texts([reworded_spacing, other_inputs, new, new], buffer=buf)
    assert [o.reason for o in outs] == ["duplicate", None, None, "duplicate"]


def test_nondeterminism_is_caught_across_processes_not_within_one(validator):
    # the same set printed twice in one process agrees with itself; only the second process differs
    body = f"    s = {{'alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta'}}\n    a = str(list(s))\n    assert a == str(list(s))\n    return a + str({ABS}(x))\n"
    (o,) = validator.validate_texts([prop(body)])
    assert o.reason == "nondeterministic"


# -- return path gate ----------------------------------------------------------------------------
@pytest.mark.parametrize("body,ok", [
    ("    return zwc.f(x)\n", True),
    ("    y = zwc.f(x)\n    z = y\n    return z\n", True),
    ("    out = []\n    for v in x:\n        out.append(zwc.f(v))\n    return out\n", True),
    ("    return helper(x)\n", True),
    ("    zwc.f(x)\n    return x\n", False),
    ("    y = zwc.f(x)\n    return len(x)\n", False),
    ("    return nothelper(x)\n", False),
])
def test_return_path_gate(body, ok):
    src = "import zwc\ndef helper(a):\n    return zwc.g(a)\ndef nothelper(a):\n    zwc.g(a)\n    return a\n"
    src = src.replace("def helper", "def solve(x):\n" + body + "def helper")
    import ast

    assert returns_library_value(ast.parse(src), "solve", "zwc") is ok


# -- oracle --------------------------------------------------------------------------------------
def test_to_numpy_translates_every_import_form():
    la_norm = LIB.qualified("linalg.norm")
    src = (f"import {PKG}\nimport {PKG} as z\nfrom {PKG} import {ABS.split('.')[-1]} as f\nfrom {PKG} import {LIB.linalg}\n"
           f"def solve(x):\n    return {CUMSUM}(z.{SUM.split('.')[-1]}(f(x))) + {la_norm}(x) + {LIB.linalg}.{la_norm.split('.')[-1]}(x)\n")
    out = to_numpy(src, LIB)
    assert "import numpy as " + PKG in out and "import numpy as z" in out
    assert "from numpy import abs as f" in out and "from numpy import linalg as " + LIB.linalg in out
    assert f"{PKG}.cumsum(z.sum(f(x)))" in out and f"{PKG}.linalg.norm(x)" in out and f"{LIB.linalg}.norm(x)" in out
    assert used_functions(src, LIB) == ("cumsum", "sum", "abs", "linalg.norm") or set(used_functions(src, LIB)) == {"cumsum", "sum", "abs", "linalg.norm"}


def test_label_noise_counts_inputs_where_the_oracle_disagrees(validator):
    from dataclasses import replace

    (o,) = validator.validate_texts([GOOD])
    t = o.task
    # the true NumPy program agrees everywhere; a wrong "oracle" (cumprod) disagrees where the
    # cumulative product differs from the cumulative sum of |x|
    wrong = replace(t, reference_solution=t.reference_solution.replace("cumsum", "cumprod"))
    noises = label_noise(validator.judges()[0], [t, wrong], [o.outputs, o.outputs])
    import numpy as np

    expect = sum(1 for s in INPUTS if not np.array_equal(np.cumsum(np.abs(eval(s[2:]))), np.cumprod(np.abs(eval(s[2:]))))) / len(INPUTS)
    assert noises == [0.0, expect] and 0 < expect <= 1


def test_library_that_differs_from_numpy_shows_as_label_noise(validator):
    # the strict library returns Python scalars where NumPy returns numpy.int64: the printed type differs
    (o,) = validator.validate_texts([prop(f"    return str(type({SUM}(x))) + str({SUM}(x))\n")])
    assert o.accepted, o.detail
    assert o.noise == 1.0


# -- rewards and advantage ----------------------------------------------------------------------
def test_learnability_and_4p():
    assert learnability(0.0) == 0.0 and learnability(1.0) == 0.0
    assert learnability(0.25) == 0.75 and learnability(0.875) == pytest.approx(0.125)
    assert four_p(0.5) == 1.0 and four_p(0.0) == 0.0 and four_p(1.0) == 0.0 and four_p(0.25) == 0.75
    assert gap(1.0, 0.25) == 0.75 and gap(0.25, 0.5) == 0.0


def test_proposer_reward_switch_and_penalties():
    r = ProposerReward("learnability", rate_book="closed", invalid_penalty=-1.0, zero_reward=-0.5)
    assert r(False) == -1.0
    assert r(True, open_rate=1.0, closed_rate=0.0) == -0.5  # 0 at the end: valid but no signal
    assert r(True, open_rate=1.0, closed_rate=0.5) == 0.5
    g = ProposerReward("gap")
    assert g(True, 1.0, 0.0) == 1.0 and g(True, 0.75, 0.25) == 0.5 and g(True, 0.5, 0.5) == 0.0
    with pytest.raises(ValueError):
        g(True, None, 0.5)
    with pytest.raises(ValueError):
        ProposerReward("nope")
    assert signal_share([0.0, 0.5, 0.0, 1.0]) == 0.5


def test_task_relative_advantage_hand_computed():
    rewards = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.3, 0.3]
    groups = ["solve"] * 4 + ["propose"] * 3 + ["other"] * 2
    adv = task_relative_advantages(rewards, groups, eps=0.0)
    # solver: mean 0.5, std 0.5 -> +-1; proposer: mean 1/3, std sqrt(2/9) -> sqrt(2), -1/sqrt(2); constant group -> 0
    assert adv[:4] == pytest.approx([1, -1, 1, -1])
    assert adv[4:7] == pytest.approx([2 ** 0.5, -(2 ** -0.5), -(2 ** -0.5)])
    assert adv[7:] == [0.0, 0.0]
    # the baseline is per role: the same reward means different advantages in different roles
    a2 = task_relative_advantages([1.0, 0.0, 1.0, 1.0, 1.0, 0.0], ["s", "s", "p", "p", "p", "p"], eps=0.0)
    assert a2[0] == pytest.approx(1.0) and a2[2] == pytest.approx(1 / 3 ** 0.5)


def test_histogram_keeps_the_ends_apart():
    assert histogram([0.0, 0.0, 0.1, 0.3, 0.5, 0.8, 1.0]) == {"0": 2, "(0,.25)": 1, "[.25,.5)": 1, "[.5,.75)": 1, "[.75,1)": 1, "1": 1}


# -- dedup and buffer ----------------------------------------------------------------------------
def test_dedup_normalises_question_and_inputs():
    idx = DedupIndex(threshold=0.5)
    idx.add("Return the sum of x, for 3 values.", ["x=[1, 2]", "x=[3]", "x=[4]", "x=[5]"])
    assert idx.find("return THE sum of x for 7 values", ["x=[1,2]", "x=[3]", "x=[4]"]) == 0  # overlap 3/4
    assert idx.find("return THE sum of x for 7 values", ["x=[1,2]", "x=[3]", "x=[9]"]) is None  # overlap 2/5
    assert idx.find("Return the product of x.", ["x=[1, 2]", "x=[3]", "x=[4]", "x=[5]"]) is None
    assert idx.find("Return the sum of x, for 3 values.", ["x=[7]", "x=[8]", "x=[9]", "x=[5]"]) is None


def test_buffer_cap_topup_and_export_is_a_suite_the_judge_reads(validator, tmp_path):
    from se_gym.judge import Judge
    from se_gym.tasks import load_sebench

    outs = validator.validate_texts([GOOD, prop(f"    return {SORT}(x)\n", question="Sort x.")])
    tasks = [o.task for o in outs]
    buf = TaskBuffer(tasks, cap=1)
    assert len(buf) == 1 and buf.tasks()[0].id == tasks[1].id  # the oldest went
    buf = TaskBuffer(tasks)
    assert buf.add(tasks) == 0
    got, n = buf.top_up([tasks[0]], 2, random.Random(0))
    assert n == 1 and [t.id for t in got] == [tasks[0].id, tasks[1].id]
    got, n = buf.top_up([tasks[0]], 1, random.Random(0))
    assert n == 0
    buf.save(tmp_path / "buffer.jsonl")
    assert [t.id for t in TaskBuffer.load(tmp_path / "buffer.jsonl").tasks()] == [t.id for t in buf.tasks()]
    out = buf.export(tmp_path / "suite", library=LIB)
    rows = [json.loads(ln) for ln in (out / "datasets/train/train.jsonl").read_text().splitlines()]
    assert rows[0]["right_exe_result"] == "#".join(c.output for c in tasks[1].test_cases)
    loaded = load_sebench("train", out)
    assert len(loaded) == 2
    with Judge(f"official:{out / 'datasets/train/api_doc.jsonl'}", profile="sebench") as j:
        verdicts = j.judge_many([(f"```python\n{t.library_solution}```", t.test_cases, t.function_name) for t in tasks[::-1]])
    assert all(v.passed for v in verdicts), [v.detail for v in verdicts]
