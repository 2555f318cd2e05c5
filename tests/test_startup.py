"""Start-up (issue 49): what ``import se_gym`` and ``se-gym judge`` load before their first verdict.

Each case runs a fresh interpreter, so what is imported is what that command imports.  No timing is
asserted here (benchmarks/judge_throughput.py --cold measures it); these pin the modules.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


HEAVY = ("numpy", "gymnasium", "torch", "ray", "vllm", "asyncio", "importlib.metadata")


@pytest.mark.parametrize("module", ["se_gym", "se_gym.cli", "se_gym.judge.cli", "se_gym.sandbox.local"])
def test_the_judge_path_imports_nothing_heavy(module):
    loaded = json.loads(_fresh(f"import sys, json, {module}; print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"))
    assert loaded == [], f"import {module} loads {loaded}"


@pytest.mark.parametrize("order", ["se_gym first", "gymnasium first", "envs class first"])
def test_sebench_v0_is_registered_whichever_is_imported_first(order):
    first = {"se_gym first": "import se_gym; import gymnasium as gym",
             "gymnasium first": "import gymnasium as gym; import se_gym",
             "envs class first": "from se_gym.envs import SEBenchEnv; import gymnasium as gym"}[order]
    got = _fresh(f"{first}\nspec = gym.spec('SEBench-v0')\nprint(spec.entry_point, spec.vector_entry_point)")
    assert got == "se_gym.envs.sebench:SEBenchEnv se_gym.envs.vector:SEBenchVectorEnv"


def test_the_public_names_still_import_and_the_registration_hook_leaves():
    got = _fresh("import sys, se_gym\nfrom se_gym import Library, LibraryError, mint, official, SEGymError\n"
                 "from se_gym.envs import EnvConfigError, Latency, SEBenchEnv, UnicodeText, ENV_ID\n"
                 "hooks = [f for f in sys.meta_path if type(f).__module__ == 'se_gym.envs']\n"
                 "print(issubclass(LibraryError, SEGymError), mint(0).package == mint(0).package, ENV_ID, len(hooks))")
    assert got == "True True SEBench-v0 0"


def test_the_cli_loads_only_the_command_it_runs():
    got = json.loads(_fresh("import sys, json\nfrom se_gym import cli\np = cli.build_parser(only='judge')\n"
                            "print(json.dumps(sorted(m for m in sys.modules if m.endswith('.cli') and m.startswith('se_gym.') and m != 'se_gym.cli')))"))
    assert got == ["se_gym.judge.cli"]
    # the full parser (--help, the CLI reference) still has every subcommand configured
    assert _fresh("from se_gym import cli\np = cli.build_parser()\nsub = next(a for a in p._actions if a.dest == 'command')\n"
                  "print(all(s._actions[1:] for s in sub.choices.values()))") == "True"
    from se_gym import cli

    assert cli._command_of(["-v", "judge", "--input", "x"]) == "judge"
    assert cli._command_of(["--help"]) is None and cli._command_of(["nope"]) is None


# -- the sandbox and the judge start early (need bubblewrap or namespaces: CI has them) ---------------
def _cmdlines(pids):
    out = []
    for pid in pids:
        try:
            out.append(open(f"/proc/{pid}/cmdline", "rb").read())
        except OSError:
            pass
    return out


def test_a_pool_can_serve_once_its_first_worker_is_up():
    from se_gym.sandbox import Limits, make_sandbox

    with make_sandbox("local", workers=2, ready="first") as sb:
        assert any(t is not None for t in sb._workers)  # (up: its hello is in)
        res = sb.run(["print(6 * 7)"] * 6, Limits(wall_s=5.0, cpu_s=2.0))
        assert [r.stdout for r in res] == ["42\n"] * 6 and sb.restarts == 0
    with pytest.raises(ValueError, match="ready"):
        make_sandbox("local", workers=1, ready="some")


def test_workers_run_the_compiled_worker():
    """worker.py as a script would be compiled by every worker at its start: they run its .pyc
    from se-gym's cache (same file, same verdicts)."""
    from conftest import descendants
    from se_gym.sandbox import Limits, make_sandbox
    from se_gym.sandbox.local import worker_code

    assert worker_code().endswith(".pyc")
    with make_sandbox("local", workers=1) as sb:
        assert sb.run(["import sys; print(sys.argv[0])"], Limits(wall_s=5.0, cpu_s=2.0))[0].stdout == "main.py\n"
        lines = [c for c in _cmdlines(descendants(os.getpid())) if b"-S" in c]
        assert lines and all(b"worker.pyc" in c for c in lines), lines


def test_a_judge_starts_its_workers_before_its_first_answer_and_after_a_close():
    from conftest import descendants
    from se_gym.judge import Judge

    judge = Judge("seed:0", profile="sebench", workers=1)
    try:
        assert judge.start() is judge and judge.start() is judge  # (once)
        deadline = time.monotonic() + 60
        while judge._sandbox is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert judge._sandbox is not None and descendants(os.getpid())  # up, with nothing judged yet
        lib = judge.library
        answer = f"```python\nimport {lib.package}\ndef f(x):\n    return {lib.qualified('sum')}({lib.qualified('array')}(x))\n```"
        assert judge.judge(answer, [{"input": "x=[1, 2]", "output": "3"}]).passed
        judge.close()
        judge.start()  # a closed judge starts afresh
        assert judge.judge(answer, [{"input": "x=[1, 2]", "output": "3"}]).passed
    finally:
        judge.close()


def test_the_env_starts_its_judge_at_reset():
    import gymnasium as gym

    import se_gym  # noqa: F401
    from conftest import descendants

    before = set(descendants(os.getpid()))
    env = gym.make("SEBench-v0", tasks="builtin:0", profile="sebench")
    try:
        assert set(descendants(os.getpid())) == before
        env.reset(seed=0)
        deadline = time.monotonic() + 60
        while set(descendants(os.getpid())) == before and time.monotonic() < deadline:
            time.sleep(0.02)
        assert set(descendants(os.getpid())) - before  # the workers come up while the answer is written
        task = env.unwrapped.task
        _, reward, *_ = env.step("```python\n" + task.library_solution + "\n```")
        assert reward == 1.0
    finally:
        env.close()
