"""``se-gym validate``: a clean suite passes, and each check finds a defect of its kind planted in a
small suite (a reference that fails, an observation that leaks, a generator that is not deterministic,
a verifier that pays for the empty answer, a sandbox that lets a program out); the report's schema;
exit codes.  Real judge, real sandboxes, a real second process; suites of a few tasks."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import _validate_helpers  # noqa: F401  (registers the "noisy" suite kind)
from se_gym.cli import main
from se_gym.judge import Judge
from se_gym.judge.types import Status, Verdict
from se_gym.tasks import build_suite
from se_gym.validate import CHECKS, SCHEMA, SCHEMA_VERSION, ValidateConfig, ValidateError, checks, probes, validate
from se_gym.validate.run import probe_containment

PLUGIN_SANDBOX = Path(__file__).parent / "plugins" / "subprocess_sandbox.py"


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SE_GYM_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return build_suite(0, sizes={"train": 3, "single_test": 2, "multiple_test": 2}, progress=False, validate="inprocess")


def write(path: Path, tasks) -> str:
    path.write_text("".join(json.dumps(t.to_json()) + "\n" for t in tasks), encoding="utf-8")
    return f"jsonl:{path}"


def run(spec: str, out: Path, **kw):
    kw.setdefault("second_process", False)
    return validate(ValidateConfig(specs=(spec,), sandboxes=("local",), out=str(out), progress=False, **kw))


def by_id(report: dict) -> dict:
    return {r["id"]: r["checks"] for r in report["tasks"]}


@pytest.fixture(scope="module")
def clean(suite, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("clean")
    spec = write(tmp / "tasks.jsonl", [t for s in suite.splits.values() for t in s])
    return spec, run(spec, tmp / "out", second_process=True, verdict_every=2), tmp / "out"


def test_a_clean_suite_passes_every_check(clean):
    spec, report, out = clean
    s = report["summary"]
    errors = [(t["id"], name, c) for t in report["tasks"] for name, c in t["checks"].items() if c.get("severity") == "error"]
    errors += [r for r in report["run_checks"] if r.get("severity") == "error"]
    assert s["tasks"] == 7 and s["exit_status"] == 0 and s["severity"]["error"] == 0, errors
    for name in ("oracle", "floor", "determinism", "leakage"):
        assert s["checks"][name] == {"pass": 7, "fail": 0, "not_run": 0}, (name, s["checks"][name])
    # the dependence check is the judge's: until it has one, "not run", never "pass"
    dep = [r["checks"]["dependence"] for r in report["tasks"]]
    assert all(d["result"] == "not_run" and "no dependence check" in d["detail"] for d in dep) or all(d["result"] == "pass" for d in dep)
    kinds = {(r["check"], r["subject"].split(":")[-1].strip()) for r in report["run_checks"]}
    assert ("containment", "local sandbox") in kinds and ("determinism", "library") in kinds and ("determinism", "seeded episodes") in kinds
    assert all(r["result"] == "pass" for r in report["run_checks"])
    assert (out / "summary.txt").read_text().strip().endswith("exit status 0")


def test_report_schema(clean):
    _, report, out = clean
    on_disk = json.loads((out / "report.json").read_text())
    assert on_disk["schema"] == SCHEMA and on_disk["schema_version"] == SCHEMA_VERSION == 1
    assert on_disk["severity_policy"]["version"] == 2 and on_disk["severity_policy"]["rules"]["floor/fail"] == "error"
    assert set(on_disk) >= {"se_gym", "config", "machine", "suites", "run_checks", "tasks", "summary"}
    rec = on_disk["tasks"][0]
    assert set(rec) == {"suite", "id", "split", "hash", "checks"} and set(rec["checks"]) == set(CHECKS)
    for r in [c for t in on_disk["tasks"] for c in t["checks"].values()] + on_disk["run_checks"]:
        assert r["result"] in ("pass", "fail", "not_run") and (r["result"] == "pass") == ("severity" not in r)
    counted = sum(on_disk["summary"]["severity"].values())
    listed = sum("severity" in c for t in on_disk["tasks"] for c in t["checks"].values()) + sum("severity" in r for r in on_disk["run_checks"])
    assert counted == listed


def test_rerun_resumes_finished_suites(clean, monkeypatch):
    spec, report, out = clean
    from se_gym.validate import run as run_module

    monkeypatch.setattr(run_module, "check_suite", lambda *a, **k: pytest.fail("a finished suite was checked again"))
    again = validate(ValidateConfig(specs=(spec,), sandboxes=("local",), out=str(out), progress=False, second_process=True, verdict_every=2))
    assert again["tasks"] == report["tasks"]


def test_suites_checked_at_once_give_the_report_one_at_a_time_gives(suite, tmp_path):
    """Lanes (--suites-at-once) change when a suite is checked, not what its report says, nor where
    its records stand; a planted defect in the second suite is found either way."""
    good = [t for s in suite.splits.values() for t in s]
    broken = replace(good[0], id="broken", library_solution=good[0].library_solution.replace("return ", "return 1 + 0 * ", 1))
    specs = (write(tmp_path / "a.jsonl", good[:4]), write(tmp_path / "b.jsonl", [broken, *good[4:]]), write(tmp_path / "c.jsonl", good[1:3]))
    reports = [validate(ValidateConfig(specs=specs, sandboxes=("local",), out=str(tmp_path / f"out{k}"), progress=False, second_process=False,
                                       suites_at_once=k)) for k in (1, 3)]
    one, three = ([(t["suite"], t["id"], t["checks"]) for t in r["tasks"]] for r in reports)
    assert one == three and [t[0] for t in one] == [specs[0]] * 4 + [specs[1]] * 4 + [specs[2]] * 2
    assert [r["run_checks"] for r in reports[0:1]] == [r["run_checks"] for r in reports[1:2]]
    assert [s["spec"] for s in reports[1]["suites"]] == list(specs)
    assert three[4][1] == "broken" and three[4][2]["oracle"]["result"] == "fail"


def test_a_reference_that_fails_is_an_oracle_error(suite, tmp_path):
    good = suite["train"][0]
    broken = replace(good, id="broken", library_solution=good.library_solution.replace("return ", "return 1 + 0 * ", 1))
    report = run(write(tmp_path / "t.jsonl", [good, broken]), tmp_path / "out")
    got = by_id(report)
    assert got[good.id]["oracle"]["result"] == "pass"
    assert got["broken"]["oracle"]["result"] == "fail" and got["broken"]["oracle"]["severity"] == "error"
    assert "the reference as written, under" in got["broken"]["oracle"]["detail"] and report["summary"]["exit_status"] == 1


def test_a_question_that_shows_a_hidden_output_leaks(suite, tmp_path):
    good = next(t for s in suite.splits.values() for t in s if len(t.test_cases[-1].output) >= 12)
    hidden = good.test_cases[-1]
    leaky = replace(good, id="leaky", query=good.query + f"\nFor instance, the last check expects {hidden.output}.")
    report = run(write(tmp_path / "t.jsonl", [good, leaky]), tmp_path / "out")
    got = by_id(report)
    assert got[good.id]["leakage"]["result"] == "pass"
    leak = got["leaky"]["leakage"]
    assert leak["result"] == "fail" and leak["severity"] == "error" and "expected output" in leak["detail"] and "prompt" in leak["detail"]


def test_feedback_that_shows_a_hidden_input_leaks(suite, monkeypatch):
    """The multi-turn feedback is checked too: an env that printed the failing hidden case's error
    message (the echo probe puts the case's input in it) is caught."""
    from se_gym.envs import sebench
    from se_gym.validate import probing

    task, lib = suite["train"][2], suite.library
    real = sebench.feedback_text
    monkeypatch.setattr(sebench, "feedback_text", lambda v, *a, **k: real(v, *a, **k) + f"\n{v.exception_message or ''}")
    with Judge(lib, "strict") as judge:
        tp = probing.task_probes(task, lib, dependence=False, echo=True)
        verdicts = probing.judge_probes({"strict": judge}, [probing.TaskProbes(task, {k: a for k, a in tp.answers.items() if k[0] == "strict"})], lib, None)[0]
        envs = probing.make_envs([task], lib, judge, visible_cases=1)
        shown = probing.observations(envs, 0, tp.answers, verdicts)
    assert verdicts[("strict", probes.ECHO)].status is Status.RUNTIME_ERROR
    result = checks.leakage(task, shown, visible=1)
    assert result.result == "fail" and "hidden case" in result.detail and "turn 2 after echo_inputs" in result.detail
    monkeypatch.setattr(sebench, "feedback_text", real)
    assert checks.leakage(task, probing.observations(envs, 0, tp.answers, verdicts), visible=1).result == "pass"


def test_a_verifier_that_pays_for_the_empty_answer_fails_the_floor(suite, tmp_path, monkeypatch):
    """OpenEnv RFC 008's motivating defect: a verifier that gave reward 1.0 to the empty string."""
    real = Judge._early

    def generous(self, p, status, code, detail):
        v = real(self, p, status, code, detail)
        return replace(v, reward=1.0, status=Status.PASSED) if p.code is None else v

    monkeypatch.setattr(Judge, "_early", generous)
    report = run(write(tmp_path / "t.jsonl", [suite["single_test"][0]]), tmp_path / "out")
    floor = report["tasks"][0]["checks"]["floor"]
    assert floor["result"] == "fail" and floor["severity"] == "error" and "empty probe earned reward 1" in floor["detail"]
    assert report["summary"]["exit_status"] == 1


def test_a_generator_that_is_not_deterministic_is_found(suite, tmp_path):
    spec = write(tmp_path / "t.jsonl", list(suite["train"][:2])).replace("jsonl:", "noisy:")
    report = run(spec, tmp_path / "out", second_process=True)
    det = [r["checks"]["determinism"] for r in report["tasks"]]
    assert all(d["result"] == "fail" and "task" in d["detail"] and "prompts" in d["detail"] for d in det), det
    assert report["summary"]["checks"]["oracle"]["pass"] == 2  # the other checks are unaffected


def test_containment_holds_in_the_local_sandbox_and_fails_without_isolation(suite):
    assert probe_containment(suite.library, "local").result == "pass"
    # a sandbox with no isolation at all (a plug-in that runs each program in a plain python process)
    leaky = probe_containment(suite.library, f"{PLUGIN_SANDBOX}:SubprocessSandbox")
    assert leaky.result == "fail" and leaky.severity == "error"
    assert "net=open" in leaky.detail and "read=open" in leaky.detail and "write=open" in leaky.detail, leaky.detail


def test_cli_exit_codes(suite, tmp_path, capsys):
    good = write(tmp_path / "good.jsonl", [suite["train"][0]])
    flags = ["--sandboxes", "local", "--no-second-process", "--no-progress"]
    assert main(["-q", "validate", good, "--out", str(tmp_path / "a"), *flags]) == 0
    assert "exit status 0" in capsys.readouterr().out
    bad = replace(suite["train"][0], library_solution="import zwc\n\ndef solve(x):\n    return zwc.nope(x)\n")
    assert main(["-q", "validate", write(tmp_path / "bad.jsonl", [bad]), "--out", str(tmp_path / "b"), *flags]) == 1
    assert main(["validate", "nope:1", "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "task spec 'nope:1'" in err[0] and "builtin" in err[0]
    assert main(["validate", "jsonl:/no/such/file.jsonl", "--out", str(tmp_path / "d"), *flags]) == 2
    assert "no task file" in capsys.readouterr().err


def test_config_errors_are_one_line():
    for kw in ({"specs": ()}, {"libraries": 0}, {"wall_s": -1}, {"limit": 0}):
        with pytest.raises(ValidateError) as exc:
            ValidateConfig(**kw)
        assert "\n" not in str(exc.value)


def test_a_spec_that_cannot_load_is_refused_before_anything_starts(tmp_path):
    """A missing file or folder without api_doc.jsonl: one line, exit 2, before Ray or the bar."""
    import subprocess
    import sys

    (tmp_path / "empty").mkdir()
    for spec, words in ((f"sebench:{tmp_path / 'nope.jsonl'}", "no task file"), (f"jsonl:{tmp_path / 'nope.jsonl'}", "no task file"),
                        (f"sebench:{tmp_path / 'empty'}", "no api_doc.jsonl")):
        proc = subprocess.run([sys.executable, "-m", "se_gym.cli", "validate", spec, "--out", str(tmp_path / "r.json")],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
        assert proc.stderr.strip().count("\n") == 0 and "validate:" not in proc.stderr.replace("se-gym validate:", ""), proc.stderr
        assert "Ray" not in proc.stderr + proc.stdout


# -- the checks themselves, without a judge ----------------------------------------------------------
def test_forms_allowed_follow_the_expected_output(suite):
    from se_gym.tasks.record import TestCase

    t = suite["train"][0]
    arr = "ZWCArray"

    def task(*outs, canonical=True):  # (a built-in task's cases are always canonical: an official one's are not)
        return replace(t, source="builtin:seed=0" if canonical else "sebench", test_cases=tuple(TestCase("x=[1]", o, canonical) for o in outs))

    assert checks.forms_allowed(task("[1, 2]", "[3]"), "strict", arr) == ("native", "list", "array")
    assert checks.forms_allowed(task("3.5", "[3]"), "strict", arr) == ("native",)
    assert checks.forms_allowed(task("[[1, 2], [3]]", "[1]"), "strict", arr) == ("native",)  # ragged: no array holds it
    assert checks.forms_allowed(task("[1, True]", "[1]"), "strict", arr) == ("native",)  # mixed booleans and numbers
    wrapped = "[ 0.  1.5  3.   4.5  6.   7.5  9.  10.5 12.  13.5 15.  16.5 18.  19.5\n 21. ]"
    assert checks.forms_allowed(task(wrapped, canonical=False), "sebench", arr) == ("native",)
    assert checks.forms_allowed(task(wrapped, canonical=True), "sebench", arr) == ("native", "list", "array")
    # a one-line list whose array NumPy would wrap (official task 148): SE-Bench reads the two apart
    long_row = "[" + ", ".join(f"{0.1 * i + 1e-9:.10f}" for i in range(12)) + "]"
    assert checks.forms_allowed(task(long_row, canonical=False), "sebench", arr) == ("native",)
    assert checks.forms_allowed(task(long_row, canonical=False), "strict", arr) == ("native", "list", "array")


def test_needles_leave_out_what_is_shown_anyway(suite):
    t = suite["train"][0]
    needles = dict((text, what) for what, text in checks.needles(t, visible=1))
    assert all(c.output not in needles or len(c.output) >= checks.MIN_NEEDLE for c in t.test_cases)
    assert t.example.input not in needles and t.test_cases[0].output not in needles
    lines = [text for what, text in checks.needles(t, visible=1) if "line" in what]
    assert lines and not any(x.startswith(("import", "def ")) for x in lines)


def test_reference_forms_wrap_every_return_of_the_entry_only():
    code = "import zwc\n\ndef helper(v):\n    return v\n\ndef solve(x):\n    if x:\n        return helper(zwc.f(x))\n    return zwc.g(x)\n"
    out = probes.reference_form(code, "solve", "array", "zwc", "arr")
    assert out.count("zwc.arr(") == 2 and "return v\n" in out
    assert "_se_gym_as_list(" in probes.reference_form(code, "solve", "list", "zwc", "arr")
    assert probes.reference_form("def (", "solve", "list", "zwc", "arr") is None


def test_dependence_is_never_a_pass_without_the_judges_check():
    r = checks.dependence(None, None, supported=False, why="judge has no dependence check yet")
    assert r.result == "not_run" and r.severity == "info" and "no dependence check" in r.detail
    unused = Verdict(0.0, Status.WRONG_ANSWER, 0)
    object.__setattr__(unused, "status", type("S", (), {"value": checks.UNUSED})())
    assert checks.dependence(unused, None, supported=True).result == "fail"


def test_dependence_reads_the_judges_findings():
    from types import SimpleNamespace

    def v(reward=1.0, status=Status.PASSED, found=None):
        return SimpleNamespace(reward=reward, status=status, infrastructure=False, detail="", dependence=found)

    assert checks.dependence(v(found={"ran": True, "cases": ["match", "independent"]}), v(0.0, Status.WRONG_ANSWER), True).result == "pass"
    flat = checks.dependence(v(found={"ran": True, "cases": ["independent", "independent"]}), None, True)
    assert flat.result == "fail" and "no case's result changes" in flat.detail
    assert "did not run" in checks.dependence(v(found=None), None, True).detail
    failing = checks.dependence(v(0.0, Status.WRONG_ANSWER), None, True)  # the oracle error says it: not run here
    assert failing.result == "not_run" and failing.severity == "info"
    paid = checks.dependence(v(found={"ran": True, "cases": ["match"]}), v(1.0), True)
    assert paid.result == "fail" and "answer key" in paid.detail


def test_selfplay_buffer_and_run_folder_are_task_specs(suite, tmp_path):
    from se_gym.tasks.spec import load_task_spec

    rnd = tmp_path / "run" / "round_002"
    rnd.mkdir(parents=True)
    write(rnd / "buffer.jsonl", list(suite["train"][:2]))
    (tmp_path / "run" / "run.json").write_text(json.dumps({"kind": "selfplay", "config": {"library": "seed:0"}}))
    tasks, lib = load_task_spec(f"selfplay:{tmp_path / 'run'}", "train")
    assert [t.id for t in tasks] == [t.id for t in suite["train"][:2]] and lib.source == "seed:0"
    tasks, lib = load_task_spec(f"jsonl:{rnd / 'buffer.jsonl'}", "train")
    assert len(tasks) == 2 and lib.source == "seed:0"  # the records say their library
