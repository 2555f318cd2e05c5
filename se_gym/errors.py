"""Exceptions shared across se-gym."""


class CLIError(Exception):
    """A user error in a command: printed as one line, exit status 2."""


class SandboxUnavailable(RuntimeError):
    """A sandbox backend cannot start or cannot keep its promise (a package missing, a cluster whose
    nodes could judge differently): one line, for the user, never a verdict."""
