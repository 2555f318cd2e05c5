"""The sandbox spec (issue 48): one value carries a backend and its options, parsed once and passed
down; backends declare what they need, and nothing outside a backend's own module branches on its
name.  A backend written here with an option of its own receives it through gym.make, the Judge,
``se-gym judge`` and ``se-gym bench``."""
from __future__ import annotations

import json
import logging
import re
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import se_gym  # noqa: F401  (registers SEBench-v0)
from se_gym.cli import main
from se_gym.envs import EnvConfigError
from se_gym.judge import Judge, JudgeError
from se_gym.sandbox import SANDBOXES, Sandbox, SandboxSpec
from se_gym.sandbox.spec import SandboxSpecError, sandbox_spec

ROOT = Path(__file__).resolve().parents[1]
TAGGED = f"{Path(__file__).parent / 'plugins' / 'tagged_sandbox.py'}:TaggedSandbox"
AGENT = str(ROOT / "examples" / "bench_my_agent.py") + ":CallMemoryAgent"
SMALL = {"train": 0, "single_test": 1, "multiple_test": 0}


@pytest.fixture
def tags():
    """The tags the test backend was built with (emptied first)."""
    seen = sys.modules[SANDBOXES.load(TAGGED).__module__].TAGS
    seen.clear()
    return seen


@pytest.fixture(scope="module")
def task():
    from se_gym.tasks import build_suite

    return build_suite(0, sizes=SMALL, progress=False, validate="inprocess").splits["single_test"][0]


def _answer(task) -> str:
    return f"```python\n{task.library_solution}\n```"


# -- the grammar ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, name, options", [
    (None, "local", {}),
    ("docker", "docker", {}),
    ("http://h:8111", "http", {"url": "http://h:8111"}),
    ("https://h/run", "http", {"url": "https://h/run"}),
    ("ray,address=auto,actors=2,hedge_after=1.5", "ray", {"address": "auto", "actors": 2, "hedge_after": 1.5}),
    ({"name": "ray", "address": "auto"}, "ray", {"address": "auto"}),
    ({"name": "ray", "options": {"address": "auto"}}, "ray", {"address": "auto"}),
    (SandboxSpec("ray", {"address": "h:1"}), "ray", {"address": "h:1"}),
    ("pkg.mod:Box,flag=true", "pkg.mod:Box", {"flag": True}),
])
def test_every_spelling_parses_to_one_spec(value, name, options):
    spec = SandboxSpec.parse(value)
    assert (spec.name, spec.options) == (name, options)
    assert SandboxSpec.parse(str(spec)) == spec  # the string form reads back


def test_flags_options_win_and_bad_specs_are_one_line_errors():
    assert SandboxSpec.parse("ray,address=a", ["address=b", "max-chunk=4"]).options == {"address": "b", "max_chunk": 4}
    for bad, match in ((3, "sandbox must be one of local, docker, http, ray"), ("", "empty sandbox spec"),
                       ("ftp://h", "only http://, https:// addresses"), ("ray,address", "expected KEY=VALUE"),
                       ({"address": "x"}, "needs a 'name'")):
        with pytest.raises(SandboxSpecError, match=match) as exc:
            SandboxSpec.parse(bad)
        assert "\n" not in str(exc.value)


def test_options_are_checked_against_what_the_backend_takes_and_declares():
    with pytest.raises(SandboxSpecError, match=r"sandbox docker takes no option isolation \(its options: base, cpus, image"):
        SandboxSpec.parse("docker,isolation=bwrap").check()
    with pytest.raises(SandboxSpecError, match=r"sandbox http needs url \(url: the server, http://HOST:PORT"):
        SandboxSpec.parse("http").check()
    with pytest.raises(SandboxSpecError, match=r"needs tag \(tag: a word this backend records\)"):
        SandboxSpec.parse(TAGGED).check()
    assert SandboxSpec.parse("ray,anything=1").check().cluster  # (ray hands unknown options to each node's sandbox)


def test_the_old_spellings_still_work_with_one_deprecation_line(caplog, monkeypatch):
    from se_gym.sandbox import spec as spec_module

    monkeypatch.setattr(spec_module, "_WARNED", set())
    with caplog.at_level(logging.WARNING, logger="se_gym"):
        judge = Judge("seed:0", sandbox="http", http_url="http://127.0.0.1:1/run")
        again = Judge("seed:0", sandbox="http", http_url="http://127.0.0.1:2/run")
    assert judge.sandbox_spec == SandboxSpec("http", {"url": "http://127.0.0.1:1/run"}) and again.http_url == "http://127.0.0.1:2/run"
    lines = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert len(lines) == 1 and "http_url= is deprecated" in lines[0] and "sandbox='http://HOST:PORT'" in lines[0]
    assert sandbox_spec("ray", ray_address="h:1").options == {"address": "h:1"}


# -- the declarations ------------------------------------------------------------------------------------
def test_the_package_backends_declare_what_they_need():
    local, docker, http, ray = (SANDBOXES.load(n) for n in ("local", "docker", "http", "ray"))
    assert [c.library_as for c in (local, docker, http, ray)] == ["path", "path", None, "object"]
    assert [c.channel for c in (local, docker, http, ray)] == [True, True, None, True]
    assert [c.pooled_start for c in (local, docker, http, ray)] == ["launch", "thread", None, None]
    assert [c.remote for c in (local, docker, http, ray)] == [False, False, True, False]
    assert [c.cluster for c in (local, docker, http, ray)] == [False, False, False, True]
    assert [c.warmup for c in (local, docker, http, ray)] == [True, False, False, True]
    assert Sandbox.library_as == "path" and Sandbox.channel is True  # a new backend's defaults


def test_no_branch_on_a_backend_name_outside_the_backend_modules():
    """What each backend gets is read from its declarations; a comparison with a registered backend's
    name anywhere else in the package (the 28 branches of issue 48's count) is a defect."""
    backends = {"se_gym/sandbox/local.py", "se_gym/sandbox/docker.py", "se_gym/sandbox/http.py", "se_gym/distributed/sandbox.py"}
    names = "|".join(map(re.escape, SANDBOXES.names()))
    lit = rf"['\"](?:{names})['\"]"
    branch = re.compile(rf"(?:==|!=)\s*{lit}|{lit}\s*(?:==|!=|\bin\b|\bnot in\b)|\bin\s*[(\[{{][^)\]}}\n]*{lit}")
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in sorted((ROOT / "se_gym").rglob("*.py"))
             if str(p.relative_to(ROOT)) not in backends
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if branch.search(line)]
    assert not found, "branches on a sandbox backend's name (read a declaration instead):\n" + "\n".join(found)
    assert branch.search('if o.sandbox == "ray":') and branch.search("x in ('local', 'docker')")  # (the pattern finds them)


# -- a backend of one's own, with an option of its own, through every door ------------------------------------
def test_an_option_of_its_own_reaches_the_backend_through_gym_make_and_the_judge(tags, task):
    env = gym.make("SEBench-v0", tasks=[task], sandbox={"name": TAGGED, "tag": "env"}, profile="sebench")
    try:
        env.reset(seed=0)
        assert env.step(_answer(task))[1] == 1.0
    finally:
        env.close()
    with Judge("seed:0", profile="sebench",
               sandbox=SandboxSpec(TAGGED, {"tag": "judge"})) as judge:
        verdict = judge.judge(_answer(task), task.test_cases, task.function_name)
    assert verdict.reward == 1.0
    assert tags == ["env", "judge"]
    with pytest.raises(EnvConfigError, match="needs tag"):
        gym.make("SEBench-v0", tasks=[task], sandbox=TAGGED)
    with pytest.raises(JudgeError, match="takes no option colour"):
        Judge("seed:0", sandbox=f"{TAGGED},tag=x,colour=red")


def test_an_option_of_its_own_reaches_the_backend_through_se_gym_judge(tags, task, tmp_path, capsys):
    row = {"response": _answer(task), "function_name": task.function_name,
           "test_cases": [{"input": c.input, "output": c.output} for c in task.test_cases]}
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps(row) + "\n")
    assert main(["judge", "--input", str(src), "--out", str(out), "--library", "seed:0", "--sandbox", TAGGED,
                 "--sandbox-option", "tag=cli", "--quiet"]) == 0
    assert json.loads(out.read_text())["judge"]["reward"] == 1.0
    assert tags == ["cli"]
    assert main(["judge", "--input", str(src), "--out", str(tmp_path / "o2.jsonl"), "--library", "seed:0", "--sandbox", TAGGED]) == 2
    assert "needs tag" in capsys.readouterr().err


def test_an_option_of_its_own_reaches_the_backend_through_se_gym_bench(tags, tmp_path):
    rc = main(["bench", "--agent", AGENT, "--tasks", "miniature", "--limit", "1", "--no-progress", "--sandbox", TAGGED,
               "--sandbox-option", "tag=bench", "--out", str(tmp_path / "run")])
    assert rc == 0
    assert tags and set(tags) == {"bench"}
