"""Start-up (issue 49): what ``import se_gym`` and ``se-gym judge`` load before their first verdict.

Each case runs a fresh interpreter, so what is imported is what that command imports.  No timing is
asserted here (benchmarks/judge_throughput.py --cold measures it); these pin the modules.
"""
from __future__ import annotations

import json
import subprocess
import sys

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
