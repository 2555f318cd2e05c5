"""Named plug-ins: one :class:`Registry` per kind (sandbox backends, task-suite kinds, agents,
proposers, ...).

A registry maps a short name to ``"module:Attr"`` (imported only when used, so listing names costs
nothing) or to the object itself.  :meth:`Registry.load` also accepts what a user types for their own
plug-in: ``"my_pkg.agents:SkillAgent"`` or ``"path/to/file.py:SkillAgent"``, and names that installed
packages declare under the registry's entry-point group (``[project.entry-points."se_gym.agents"]``).
Adding a built-in is one file plus one ``register`` call; nothing else lists the names.
"""
from __future__ import annotations

import difflib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from .errors import SEGymError


class RegistryError(SEGymError, ValueError):
    """An unknown name or a spec that does not load: one line, naming the choices."""


class Registry:
    """Names of one kind of plug-in.

    Args:
        kind: what the names are, for messages (``"sandbox backend"``).
        group: the entry-point group installed packages may add names under, or None.
        base: a class every loaded class must subclass, or None.
    """

    def __init__(self, kind: str, group: str | None = None, base: type | None = None):
        self.kind, self.group, self.base = kind, group, base
        self._entries: dict[str, Any] = {}

    def register(self, name: str, target: Any, *, replace: bool = False) -> None:
        """Add ``name`` -> ``target``.  A name taken by another target is refused unless ``replace``.

        Args:
            name: the name users type.
            target: ``"module:Attr"`` (imported on first use) or the object itself.
            replace: allow re-registering a taken name.
        """
        if not replace and name in self._entries and self._entries[name] != target:
            raise RegistryError(f"{self.kind} {name!r} is already registered ({self._entries[name]!r})")
        self._entries[name] = target

    def names(self) -> tuple[str, ...]:
        """The registered names, then those of installed packages' entry points."""
        return tuple(self._entries) + tuple(n for n in self._entry_points() if n not in self._entries)

    def registered(self) -> tuple[str, ...]:
        """The names registered in this process, without reading installed packages' entry points
        (what a flag's help lists at import: the scan costs tens of ms).

        Returns:
            The names, in registration order.
        """
        return tuple(self._entries)

    def __contains__(self, name: object) -> bool:
        # a built-in name is answered without reading the installed packages' entry points (that
        # scan costs tens of ms in a large environment, and every judge and command checks its sandbox)
        return isinstance(name, str) and (name in self._entries or name in self._entry_points())

    def check(self, name: str) -> str:
        """``name`` if registered; else a one-line :class:`RegistryError` listing the choices.

        Args:
            name: the name typed.
        """
        if name not in self:
            names = self.names()
            msg = f"{self.kind} must be one of {', '.join(names)}; got {name!r}"
            close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.6)
            raise RegistryError(msg + (f" (did you mean {close[0]!r}?)" if close else ""))
        return name

    def load(self, spec: str) -> Any:
        """The object behind a registered name, an entry point, ``module:Attr`` or ``file.py:Attr``.

        Args:
            spec: what the user typed.

        Raises:
            RegistryError: the name is unknown, or the spec does not import or lacks the attribute,
                or the object is not a subclass of ``base``.
        """
        if spec in self._entries:
            target = self._entries[spec]
            obj = _import(target, self.kind) if isinstance(target, str) else target
        elif spec in (eps := self._entry_points()):
            try:
                obj = eps[spec].load()
            except Exception as exc:  # a broken plug-in package: say which and why, in one line
                raise RegistryError(f"{self.kind} {spec!r} (entry point {eps[spec].value}) does not load: {exc}") from exc
        elif ":" in spec:
            obj = _import(spec, self.kind)
        else:
            self.check(spec)  # raises with the choices
            raise AssertionError("unreachable")
        if self.base is not None and not (isinstance(obj, type) and issubclass(obj, self.base)):
            raise RegistryError(f"{self.kind} {spec!r} is {obj!r}, not a subclass of {self.base.__module__}.{self.base.__qualname__}")
        return obj

    def _entry_points(self) -> dict:
        if not self.group:
            return {}
        from importlib.metadata import entry_points

        return {ep.name: ep for ep in entry_points(group=self.group)}


def _import(spec: str, kind: str) -> Any:
    """``module:Attr`` or ``path/file.py:Attr`` (dots in Attr walk attributes)."""
    where, _, attr = spec.rpartition(":")
    if not where or not attr:
        raise RegistryError(f"{kind} {spec!r}: expected a registered name, 'module:Attr' or 'file.py:Attr'")
    try:
        if where.endswith(".py"):
            path = Path(where).expanduser().resolve()
            if not path.is_file():
                raise RegistryError(f"{kind} {spec!r}: no file {path}")
            name = f"se_gym_plugin_{path.stem}_{abs(hash(str(path))):x}"
            module = sys.modules.get(name)
            if module is None:
                loader = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(loader)
                sys.modules[name] = module  # (dataclasses and pickling look the module up by name)
                loader.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except RegistryError:
        raise
    except Exception as exc:
        raise RegistryError(f"{kind} {spec!r}: cannot import {where!r}: {type(exc).__name__}: {exc}") from exc
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise RegistryError(f"{kind} {spec!r}: {where!r} has no attribute {attr!r}") from None
    return obj


__all__ = ["Registry", "RegistryError"]
