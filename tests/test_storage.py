"""Atomic writers and config-bound run folders (se_gym.storage)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from se_gym.storage import ConfigMismatch, RunDir, atomic_dir, config_diff, recover_dir, write_json_atomic


def test_atomic_dir_replaces_whole_and_keeps_old_on_failure(tmp_path):
    target = tmp_path / "out"
    with atomic_dir(target) as tmp:
        (tmp / "a").write_text("1")
    assert (target / "a").read_text() == "1"
    with pytest.raises(RuntimeError):
        with atomic_dir(target) as tmp:
            (tmp / "a").write_text("2")
            raise RuntimeError("killed half-way")
    assert (target / "a").read_text() == "1"  # the failed write left the old version whole
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # and no staging folder behind


def test_a_kill_between_the_two_renames_is_recovered(tmp_path):
    target = tmp_path / "out"
    with atomic_dir(target) as tmp:
        (tmp / "a").write_text("old")
    # what a kill after "rename target aside" and before "rename new into place" leaves
    os.replace(target, tmp_path / ".out.old")
    assert not target.exists()
    recover_dir(target)
    assert (target / "a").read_text() == "old"


def test_atomic_dir_survives_kill_9_of_the_writer(tmp_path):
    target = tmp_path / "out"
    write_json_atomic(tmp_path / "x.json", {"v": 1})
    with atomic_dir(target) as tmp:
        (tmp / "a").write_text("old")
    code = textwrap.dedent(
        f"""
        import os, signal
        from se_gym.storage import atomic_dir
        with atomic_dir({str(target)!r}) as tmp:
            (tmp / "a").write_text("new, never finished")
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code])
    assert proc.returncode == -9
    assert (target / "a").read_text() == "old"
    assert json.loads((tmp_path / "x.json").read_text()) == {"v": 1}


def test_run_dir_resumes_same_config_and_refuses_another(tmp_path):
    run = RunDir(tmp_path / "r", "demo", {"functions": 10, "seeds": [0, 1, 2]})
    run.stage("base")
    run.mark_done("base", {"loss": 0.5})
    again = RunDir(tmp_path / "r", "demo", {"functions": 10, "seeds": (0, 1, 2)})  # tuples compare as lists
    assert again.done("base") and again.read_done("base") == {"loss": 0.5}
    with pytest.raises(ConfigMismatch) as err:
        RunDir(tmp_path / "r", "demo", {"functions": 6, "seeds": [0, 1, 2]})
    assert "functions: 10 -> 6" in str(err.value)
    with pytest.raises(ConfigMismatch, match="holds a 'demo' run, not 'selfplay'"):
        RunDir(tmp_path / "r", "selfplay", {"functions": 10, "seeds": [0, 1, 2]})
    fresh = RunDir(tmp_path / "r", "demo", {"functions": 6, "seeds": [0]}, restart=True)
    assert not fresh.done("base")


def test_run_dir_refuses_a_foreign_folder_and_checks_stage_config(tmp_path):
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigMismatch, match="not empty"):
        RunDir(tmp_path / "f", "demo", {})
    run = RunDir(tmp_path / "r", "demo", {})
    run.stage("rl", {"lr": 1e-3})
    run.stage("rl", {"lr": 1e-3})
    with pytest.raises(ConfigMismatch, match="lr: 0.001 -> 0.01"):
        run.stage("rl", {"lr": 1e-2})


def test_config_diff_is_nested_and_names_unset_keys():
    assert config_diff({"a": {"b": 1}, "c": 2}, {"a": {"b": 2}, "d": 3}) == ["a.b: 1 -> 2", "c: 2 -> '(unset)'", "d: '(unset)' -> 3"]
