"""The house rules of the package, checked on its source: one error base, no import circles, no
private names taken across rooms (scripts/house.py draws the plan these tests read)."""
from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import inspect
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import se_gym
from conftest import need
from se_gym.errors import SEGymError

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import house  # noqa: E402

PACKAGE = Path(se_gym.__file__).resolve().parent
# stand-alone files: copied into minted libraries or run as the sandbox's own interpreter, they
# import nothing of se_gym (their errors are the minted library's, or the worker's protocol)
STAND_ALONE = {"se_gym.library.runtime", "se_gym.library.client", "se_gym.library.server", "se_gym.sandbox.worker"}


def _builtin_exception(name: str) -> bool:
    obj = getattr(builtins, name, None)
    return inspect.isclass(obj) and issubclass(obj, BaseException)


def _unrooted_by_source(path: Path) -> list[str]:
    """Classes of a module that cannot be imported here (an optional dependency missing) whose
    bases are built-in exceptions without SEGymError beside them."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            names = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
            if any(_builtin_exception(n) and n != "BaseException" for n in names) and "SEGymError" not in names:
                out.append(f"{path.name}:{node.lineno} {node.name}")
    return out


def test_every_error_the_package_defines_derives_from_segymerror():
    assert se_gym.SEGymError is SEGymError
    offences = []
    for info in pkgutil.walk_packages(se_gym.__path__, "se_gym."):
        if info.name in STAND_ALONE:
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an integration whose framework is not installed: read its source
            offences += _unrooted_by_source(Path(info.module_finder.path) / (info.name.rpartition(".")[2] + ".py"))
            continue
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and obj.__module__ == module.__name__ and issubclass(obj, Exception)
                    and not issubclass(obj, SEGymError)):
                offences.append(f"{module.__name__}.{name}")
    assert not offences, "derive these from se_gym.errors.SEGymError (keeping their built-in base):\n" + "\n".join(offences)


def test_errors_keep_their_builtin_bases():
    # `except ValueError` / `except RuntimeError` callers written before the common base still work
    from se_gym.agents.base import ProtocolError
    from se_gym.library import LibraryError
    from se_gym.tasks.record import TaskError

    assert issubclass(TaskError, ValueError) and issubclass(LibraryError, ValueError)
    assert issubclass(ProtocolError, RuntimeError)


def test_the_package_has_no_import_circles():
    plan = house.survey(PACKAGE)
    assert not plan.circles, "import circles (imports inside functions count):\n" + "\n".join(" <-> ".join(c) for c in sorted(plan.circles))
    assert not plan.room_circles, plan.room_circles


def test_no_private_names_are_taken_across_rooms():
    plan = house.survey(PACKAGE)
    assert not plan.reaches, "make these public in their own room:\n" + "\n".join(plan.reaches)


def test_nothing_imports_the_package_face_from_inside():
    # se_gym/__init__ imports the rooms: a room importing it back (for __version__, say) runs up every layer
    plan = house.survey(PACKAGE)
    assert plan.back_up == (), "import these from their own room (se_gym._version for __version__):\n" + "\n".join(plan.back_up)


def test_the_survey_sees_an_arrow_back_up_to_the_package_face(tmp_path):
    root = tmp_path / "se_gym"
    (root / "low").mkdir(parents=True)
    (root / "__init__.py").write_text("from . import low\n")
    (root / "low" / "__init__.py").write_text("")
    (root / "low" / "a.py").write_text("def f():\n    from .. import __version__\n")
    (root / "low" / "b.py").write_text("import se_gym\n")
    (root / "low" / "c.py").write_text("from .. import low\n")  # a room, not the face
    assert house.survey(root).back_up == ("se_gym.low.a", "se_gym.low.b")


def test_the_survey_sees_a_circle_hidden_in_a_function(tmp_path):
    root = tmp_path / "se_gym"
    (root / "low").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "low" / "__init__.py").write_text("")
    (root / "low" / "a.py").write_text("from . import b\n")
    (root / "low" / "b.py").write_text("def f():\n    from .a import x\n")
    (root / "high.py").write_text("from .low.a import _secret\n")
    plan = house.survey(root)
    assert plan.circles == (("se_gym.low.a", "se_gym.low.b"),)
    assert plan.arrows == {("high", "low"): 1}
    assert plan.reaches == ("se_gym.high imports se_gym.low.a._secret",)


def _cli_modules() -> set[str]:
    """Modules whose prints are a command's output: the subcommands' modules and the CLI itself."""
    from se_gym.cli import COMMANDS

    return {module for module, _ in COMMANDS.values()} | {"se_gym.cli", "se_gym.cli_reference"}


def _prints_to_stderr(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = ast.unparse(node.func)
        to_stderr = any(k.arg == "file" and ast.unparse(k.value) == "sys.stderr" for k in node.keywords)
        if (func == "print" and to_stderr) or func == "sys.stderr.write":
            lines.append(node.lineno)
    return lines


def test_library_modules_log_instead_of_printing_to_stderr():
    skip = _cli_modules() | STAND_ALONE
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if name in skip or name.endswith(("cli", "_cli")):
            continue
        offences += [f"{path.relative_to(REPO)}:{line}" for line in _prints_to_stderr(path)]
    assert not offences, "use logging.getLogger(__name__) here:\n" + "\n".join(offences)


def test_quiet_silences_a_commands_info_lines(tmp_path, capsys):
    import json
    import logging

    from se_gym.cli import main

    row = {"query": "add one", "function_name": "def solve(x):", "test_cases": [{"input": "1", "output": "2"}]}
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(row) + "\n" + json.dumps({**row, "is_valid": False}) + "\n")
    logger = logging.getLogger("se_gym")
    kept = (list(logger.handlers), logger.level)
    try:
        assert main(["tasks", "show", "--sebench", str(rows)]) == 0
        out, err = capsys.readouterr()
        assert "1 tasks" in out and "skipped 1 row(s) marked is_valid=false" in err  # info: shown by default
        assert main(["-q", "tasks", "show", "--sebench", str(rows)]) == 0
        out, err = capsys.readouterr()
        assert "1 tasks" in out and err == ""  # the command's result still printed, its info line not
    finally:
        logger.handlers[:], _ = kept[0], logger.setLevel(kept[1])


def _ruff() -> list[str] | None:
    if shutil.which("ruff"):
        return ["ruff"]
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    return None


LINTED = ("se_gym", "tests", "scripts", "examples", "benchmarks", "setup.py")  # the project's code, nothing of a user's


def _linted_files() -> list[str]:
    """The project's Python files that git tracks, under :data:`LINTED` (a scratch file of the user's,
    untracked, is not the project's to lint); outside a git checkout, those folders whole."""
    try:
        done = subprocess.run(["git", "ls-files", "-z", "--", *LINTED], cwd=REPO, capture_output=True, timeout=60)
    except OSError:
        done = None
    if done is None or done.returncode != 0:
        return [p for p in LINTED if (REPO / p).exists()]
    return sorted(f for f in done.stdout.decode().split("\0") if f.endswith(".py") and (REPO / f).is_file())


def test_the_lint_covers_the_projects_tracked_files_only(tmp_path):
    files = _linted_files()
    assert "se_gym/cli.py" in files and "tests/test_house.py" in files and "scripts/house.py" in files
    assert any(f.startswith("examples/") for f in files)
    if (REPO / ".git").exists():
        scratch = REPO / "tests" / "scratch_untracked_by_test_house.py"
        scratch.write_text("import os\n")  # an unused import: ruff would report it
        try:
            assert str(scratch.relative_to(REPO)) not in _linted_files()
        finally:
            scratch.unlink()


def test_ruff_finds_nothing():
    ruff = _ruff()
    need(ruff is not None, "ruff is not installed (pip install 'se-gym[dev]')")
    # --force-exclude: the files named keep pyproject.toml's exclusions (sandbox/openenv)
    done = subprocess.run([*ruff, "check", "--output-format", "concise", "--no-cache", "--force-exclude", *_linted_files()], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert "error:" not in done.stderr, done.stderr  # a configuration ruff cannot read
    findings = [line for line in done.stdout.splitlines() if line.split(":", 1)[0].endswith(".py")]
    assert not findings, "ruff check (pyproject.toml's rules; `ruff check --fix` repairs most):\n" + "\n".join(findings)
