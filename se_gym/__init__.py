"""se-gym: a gym for studying how LLM agents internalize new knowledge.

Importing the package registers the Gymnasium environments (``SEBench-v0``); it needs only NumPy
and Gymnasium.  torch, vLLM and Ray are imported by the parts that use them.
"""
__version__ = "0.1.0"

from .library import Library, LibraryError, mint, official  # noqa: E402
from . import envs  # noqa: E402,F401  (registers SEBench-v0)

__all__ = ["Library", "LibraryError", "mint", "official", "__version__"]
