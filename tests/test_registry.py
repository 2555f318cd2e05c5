"""se_gym.registry: names, 'module:Attr', 'file.py:Attr', entry points and one-line errors."""
from __future__ import annotations

import pytest

from se_gym.errors import SEGymError
from se_gym.registry import Registry, RegistryError


class Base:
    pass


class Impl(Base):
    pass


def test_names_load_lazily_and_by_object():
    reg = Registry("widget", base=Base)
    reg.register("impl", f"{__name__}:Impl")
    reg.register("direct", Impl)
    assert reg.names() == ("impl", "direct")
    assert reg.load("impl") is Impl and reg.load("direct") is Impl
    assert reg.load(f"{__name__}:Impl") is Impl  # a user's own, unregistered


def test_a_file_outside_the_package(tmp_path):
    f = tmp_path / "my_plugin.py"
    f.write_text("from se_gym.errors import SEGymError\nclass Mine(SEGymError):\n    x = 41\n")
    reg = Registry("widget", base=SEGymError)
    cls = reg.load(f"{f}:Mine")
    assert cls.x == 41 and issubclass(cls, SEGymError)
    assert reg.load(f"{f}:Mine") is cls  # loaded once


@pytest.mark.parametrize("spec, words", [
    ("imp", "did you mean 'impl'"),
    ("no_such_module_xyz:Thing", "cannot import"),
    (f"{__name__}:Missing", "no attribute"),
    (f"{__name__}:test_names_load_lazily_and_by_object", "not a subclass"),
    ("/nonexistent/x.py:A", "no file"),
])
def test_errors_are_one_line_and_part_of_the_base(spec, words):
    reg = Registry("widget", base=Base)
    reg.register("impl", f"{__name__}:Impl")
    with pytest.raises(RegistryError) as err:
        reg.load(spec)
    assert words in str(err.value) and "\n" not in str(err.value)
    assert isinstance(err.value, SEGymError) and isinstance(err.value, ValueError)


def test_a_taken_name_is_refused_unless_replaced():
    reg = Registry("widget")
    reg.register("a", "x:A")
    with pytest.raises(RegistryError, match="already registered"):
        reg.register("a", "x:B")
    reg.register("a", "x:B", replace=True)
    assert reg._entries["a"] == "x:B"


def test_entry_points_are_names(monkeypatch):
    import importlib.metadata as md

    ep = md.EntryPoint(name="plugged", value=f"{__name__}:Impl", group="se_gym.test_widgets")
    real = md.entry_points
    monkeypatch.setattr(md, "entry_points", lambda **kw: [ep] if kw.get("group") == "se_gym.test_widgets" else real(**kw))
    reg = Registry("widget", group="se_gym.test_widgets", base=Base)
    assert "plugged" in reg.names() and reg.load("plugged") is Impl
