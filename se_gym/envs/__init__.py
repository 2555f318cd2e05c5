"""Gymnasium environments.  Importing ``se_gym`` registers ``SEBench-v0``.

Importing this package costs nothing heavy: ``SEBench-v0`` is registered by name (``gym.make`` loads
:mod:`.sebench` when it makes one), at once where Gymnasium is already imported, else the moment
Gymnasium's registry is; the classes load on first use.
"""
from __future__ import annotations

import importlib
import sys

ENV_ID = "SEBench-v0"
# what gymnasium.register is given (names only: nothing here is imported before an env is made)
ENV_SPEC = {
    "id": ENV_ID,
    "entry_point": "se_gym.envs.sebench:SEBenchEnv",
    "vector_entry_point": "se_gym.envs.vector:SEBenchVectorEnv",
    "disable_env_checker": False,
}
_REGISTRY_MODULE = "gymnasium.envs.registration"
_LAZY = {"EnvConfigError": ".sebench", "Latency": ".sebench", "SEBenchEnv": ".sebench", "UnicodeText": ".spaces"}


def _register(registration) -> None:
    """Register SEBench-v0 in Gymnasium's registry (the module ``gymnasium.envs.registration``)."""
    if ENV_ID not in registration.registry:
        registration.register(**ENV_SPEC)


class _RegisterOnImport:
    """A finder on ``sys.meta_path`` for one module, Gymnasium's registry: the other finders find
    it, and its loader registers SEBench-v0 as soon as the module has run (before ``import
    gymnasium`` returns); then this finder leaves the path."""

    def find_spec(self, name, path=None, target=None):
        if name != _REGISTRY_MODULE:
            return None
        for finder in list(sys.meta_path):
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec  # (not a loader we can follow: registered when se_gym.envs.sebench loads)

        class _Loader(type(loader)):  # Gymnasium's own loader, with one step after it
            def exec_module(self, module):
                super().exec_module(module)
                _unhook()
                _register(module)

        wrapped = _Loader.__new__(_Loader)
        wrapped.__dict__.update(getattr(loader, "__dict__", {}))
        spec.loader = wrapped
        return spec


_HOOK = _RegisterOnImport()


def _unhook() -> None:
    try:
        sys.meta_path.remove(_HOOK)
    except ValueError:
        pass


def register_when_gymnasium_loads() -> None:
    """Register SEBench-v0 now if Gymnasium's registry is loaded, else as soon as it is."""
    registration = sys.modules.get(_REGISTRY_MODULE)
    if registration is not None and hasattr(registration, "registry"):
        _unhook()
        _register(registration)
    elif _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)


register_when_gymnasium_loads()


def __getattr__(name: str):  # PEP 562: the classes load on first use
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        register_when_gymnasium_loads()  # (Gymnasium is loaded now: registered if its loader was not followed)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ENV_ID", "EnvConfigError", "Latency", "SEBenchEnv", "UnicodeText"]
