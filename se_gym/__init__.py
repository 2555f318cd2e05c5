"""se-gym: a gym for studying how LLM agents internalize new knowledge.

Importing the package registers the Gymnasium environments (``SEBench-v0``); it needs only NumPy
and Gymnasium.  torch, vLLM and Ray are imported by the parts that use them.  The import itself loads
neither NumPy nor Gymnasium (``se-gym judge`` starts on what the judge needs): the environment is
registered by name (see :mod:`se_gym.envs`) and the public names below load on first use.
"""
from . import envs  # noqa: E402,F401  (registers SEBench-v0)
from ._version import __version__  # noqa: F401  (one place: pyproject.toml reads it there)
from .errors import SEGymError  # noqa: E402,F401  (the base of every error se-gym raises on purpose)

_LIBRARY_NAMES = ("Library", "LibraryError", "mint", "official")  # from se_gym.library, on first use

_ALL = ["SEGymError", "Library", "LibraryError", "mint", "official", "load_environment", "__version__"]
# verifiers resolves the environment id "se-gym" to this package (se_gym.integrations.verifiers):
# 0.3 calls load_environment(); 0.4 takes the Taskset, Env and Harness classes that __all__ names
_VERIFIERS_V1 = ("SEBenchTaskset", "SEBenchEnv", "SEBenchHarness")


def load_environment(**options):
    """verifiers' entry point for the id ``"se-gym"`` (``vf.load_environment("se-gym", max_turns=2)``,
    ``vf-eval se-gym``): :func:`se_gym.integrations.verifiers.load_environment`."""
    from .integrations.verifiers import load_environment as load

    return load(**options)


def _verifiers_v1() -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("verifiers").startswith("0.4.")
    except PackageNotFoundError:
        return False


def __getattr__(name):  # PEP 562: __all__ names the verifiers classes only where verifiers 0.4 is installed
    if name in _LIBRARY_NAMES:
        from . import library

        value = globals()[name] = getattr(library, name)
        return value
    if name == "__all__":
        return _ALL + list(_VERIFIERS_V1) if _verifiers_v1() else list(_ALL)
    if name in _VERIFIERS_V1 and _verifiers_v1():
        from .integrations import verifiers

        return getattr(verifiers, name)
    raise AttributeError(f"module 'se_gym' has no attribute {name!r}")
