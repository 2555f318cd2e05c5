"""The house rules of the package, checked on its source: one error base, no import circles, no
private names taken across rooms (scripts/house.py draws the plan these tests read)."""
from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import se_gym
from se_gym.errors import SEGymError

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import house  # noqa: E402

PACKAGE = Path(se_gym.__file__).resolve().parent
# stand-alone files: copied into minted libraries or run as the sandbox's own interpreter, they
# import nothing of se_gym (their errors are the minted library's, or the worker's protocol)
STAND_ALONE = {"se_gym.library.runtime", "se_gym.sandbox.worker"}
# circles another engineer is taking apart right now; delete the entry when it is gone
PENDING_CIRCLES = {("se_gym.library.core", "se_gym.library.writer")}


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
    left = set(plan.circles) - PENDING_CIRCLES
    assert not left, "import circles (imports inside functions count):\n" + "\n".join(" <-> ".join(c) for c in sorted(left))
    assert not plan.room_circles, plan.room_circles


def test_no_private_names_are_taken_across_rooms():
    plan = house.survey(PACKAGE)
    assert not plan.reaches, "make these public in their own room:\n" + "\n".join(plan.reaches)


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
