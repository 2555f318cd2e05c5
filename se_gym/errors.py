"""Exceptions shared across se-gym."""


class CLIError(Exception):
    """A user error in a command: printed as one line, exit status 2."""
