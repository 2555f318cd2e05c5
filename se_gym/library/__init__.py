"""Library minter: obfuscated NumPy from any seed, or SE-Bench's official names."""
from ..choices import PROFILES
from .catalogue import CATALOGUE, KEYS, CatalogueEntry, entry
from .core import Library, LibraryError, from_spec, mint, official

__all__ = ["CATALOGUE", "KEYS", "CatalogueEntry", "entry", "PROFILES", "Library", "LibraryError", "from_spec", "mint", "official"]
