"""The public API says what it is (issue 48): every function, class, method and property that a name in
an ``__all__`` of the package resolves to has a docstring, and each that takes arguments says what they
are in an ``Args:`` section (a class in its own docstring, ``Attributes:`` for a dataclass's fields, or
its ``__init__``'s).  scripts/docstrings.py reads the source with ``ast``; ``python
scripts/docstrings.py --missing`` lists what is left."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import docstrings  # noqa: E402

PACKAGE = REPO / "se_gym"

# TODO(issue 48, phase 2): other work was changing these when the rest was written; their docstrings
# come once it has landed (a folder ends with "/"; a single name is "path:qualname").
ALLOWED = {
    "se_gym/judge/core.py": "w4-rmerge changes the Judge",
    "se_gym/judge/types.py:Verdict.passed": "w4-rmerge adds Verdict.dependence beside it",
    "se_gym/sandbox/base.py:ExecResult.ok": "w4-rmerge adds ExecResult.library_report beside it",
}


def _allowed(item: docstrings.Item) -> str | None:
    qualname = item.name.split(":", 1)[1]
    for key in (f"{item.path}:{qualname}", item.path):
        if key in ALLOWED:
            return key
    return next((key for key in ALLOWED if key.endswith("/") and item.path.startswith(key)), None)


def _incomplete() -> list[docstrings.Item]:
    return [i for i in docstrings.public_api(PACKAGE) if not i.complete]


def test_every_public_name_has_a_docstring_that_says_what_its_arguments_are():
    missing = [i for i in _incomplete() if _allowed(i) is None]
    lines = [f"{i.path}:{i.line}: {i.name} ({i.kind}): {'no docstring' if not i.documented else 'no Args: section'}" for i in missing]
    assert not lines, "document these (python scripts/docstrings.py --missing):\n" + "\n".join(lines)


def test_the_allow_list_names_only_what_is_still_missing():
    used = {_allowed(i) for i in _incomplete()}
    assert not set(ALLOWED) - used, f"done: remove from ALLOWED {sorted(set(ALLOWED) - used)}"


def test_the_survey_reads_exports_through_imports_and_classes(tmp_path):
    root = tmp_path / "se_gym"
    (root / "low").mkdir(parents=True)
    (root / "__init__.py").write_text("from .low.a import Thing, told\n__all__ = ['Thing', 'told', 'CONSTANT']\nCONSTANT = 1\n")
    (root / "low" / "__init__.py").write_text("")
    (root / "low" / "a.py").write_text(
        "from dataclasses import dataclass, field\n\n\n"
        "def told(x):\n    '''Says.\n\n    Args:\n        x: a thing.\n    '''\n\n\n"
        "def untold(x):\n    '''Says nothing of x.'''\n\n\n"
        "class Thing:\n    '''A thing.'''\n\n    def __init__(self, size):\n        self.size = size\n\n"
        "    @property\n    def big(self):\n        return self.size > 1\n\n"
        "    def grow(self, by):\n        '''Grow.\n\n        Args:\n            by: how much.\n        '''\n\n"
        "    def _private(self, x):\n        pass\n\n\n"
        "@dataclass\nclass Options:\n    '''Options.'''\n\n    level: int = field(default=0, metadata={'help': 'how much'})\n\n\n"
        "__all__ = ['untold', 'Options']\n")
    items = {i.name.split(":")[1]: i for i in docstrings.public_api(root)}
    assert set(items) == {"told", "untold", "Thing", "Thing.big", "Thing.grow", "Options"}  # the constant and _private are not
    assert items["told"].complete and items["Thing.grow"].complete and items["Options"].complete  # its field carries its help
    assert items["untold"].documented and not items["untold"].complete  # no Args:
    assert not items["Thing"].complete  # its constructor takes size, and nothing says what it is
    assert not items["Thing.big"].documented and items["Thing.big"].kind == "property"
    assert items["told"].path == "se_gym/low/a.py"  # re-exported by the package face, defined in low/a.py
