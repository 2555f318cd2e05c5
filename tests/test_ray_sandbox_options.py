"""``sandbox="ray"`` without a cluster: how it is chosen and refused on the command line and in the env,
the node check's message, and that the core package still imports without Ray.  (The sandbox itself
runs on a real 2-node cluster in tests/ray_sandbox_cases.py.)"""
from __future__ import annotations

import subprocess
import sys

import pytest

from se_gym.cli import main


def test_ray_address_belongs_to_the_ray_backend_on_every_judging_command(tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"response": "x", "test_cases": [{"input": "x=1", "output": "1"}]}\n')
    out = str(tmp_path / "o.jsonl")
    assert main(["judge", "--input", str(rows), "--out", out, "--library", "seed:0", "--ray-address", "h:1"]) == 2
    assert "--ray-address is for a sandbox that takes address= (the local sandbox does not)" in capsys.readouterr().err
    assert main(["sandbox", "info", "--ray-address", "h:1"]) == 2
    assert "--ray-address is for a sandbox that takes address=" in capsys.readouterr().err
    assert main(["rollout", "--model", "m", "--sandbox", "ray", "--ray-actors", "2", "--out", out]) == 2
    assert "leave out --ray-actors" in capsys.readouterr().err


def test_the_env_takes_ray_lazily_and_lists_it_among_the_choices():
    from se_gym.envs import EnvConfigError
    from se_gym.envs.sebench import SEBenchEnv

    env = SEBenchEnv(sandbox="ray", ray_address="127.0.0.1:1")  # nothing starts before the first step
    assert env._judge is None
    env.close()
    with pytest.raises(EnvConfigError, match="local, docker, http, ray; got 'rya'"):
        SEBenchEnv(sandbox="rya")


def test_a_node_that_differs_is_refused_in_one_line_naming_both():
    from se_gym.distributed.sandbox import _refusal, node_identity
    from se_gym.library import mint

    ours = node_identity(mint(0), "strict")
    assert set(ours) == {"se-gym", "numpy", "python", "library", "profile"}
    assert _refusal("10.0.0.2/ab12", dict(ours), ours) is None
    theirs = {**ours, "library": ours["library"].replace("content ", "content 0"), "numpy": "1.0.0"}
    msg = _refusal("10.0.0.2/ab12", theirs, ours)
    assert "\n" not in msg and "10.0.0.2/ab12" in msg
    assert f"library {theirs['library']} where this driver has {ours['library']}" in msg
    assert f"numpy 1.0.0 where this driver has {ours['numpy']}" in msg and "python" not in msg


def test_the_core_package_imports_without_ray():
    code = ("import sys; sys.modules['ray'] = None\n"  # an import of ray now fails
            "import se_gym, se_gym.sandbox, se_gym.distributed, se_gym.envs, se_gym.judge\n"
            "from se_gym.sandbox import make_sandbox\n"
            "try:\n    make_sandbox('ray')\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ActorPoolError Ray is not installed"), out.stdout
