"""se-gym's version, in a module of its own: the parts that record it (run folders, library
identities, the sandbox server's ``/health``, ``se-gym --version``) import it from here, never from
the package face, so no import runs back up to ``se_gym/__init__``."""
__version__ = "0.1.0"
