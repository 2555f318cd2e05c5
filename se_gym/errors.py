"""Exceptions shared across se-gym: every error the package raises on purpose derives from
:class:`SEGymError`, so ``except se_gym.SEGymError`` catches them all."""


class SEGymError(Exception):
    """The base of the errors se-gym raises on purpose."""


class CLIError(SEGymError):
    """A user error in a command: printed as one line, exit status 2."""


class SandboxUnavailable(SEGymError, RuntimeError):
    """A sandbox backend cannot start or cannot keep its promise (a package missing, a cluster whose
    nodes could judge differently): one line, for the user, never a verdict."""
