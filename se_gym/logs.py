"""se-gym's log lines.  Library modules log through ``logging.getLogger(__name__)`` (children of the
``se_gym`` logger) and print nothing to stderr themselves; the ``se-gym`` command shows the records,
one line each on stderr, at the level its ``-v``/``-q`` flags choose (:func:`setup`).  A program
using se-gym as a library sees them as it configures :mod:`logging` (for instance
``logging.basicConfig(level=logging.INFO)``).  Progress bars are :mod:`se_gym.progress`'s.
"""
from __future__ import annotations

import logging
import sys

LOGGER = "se_gym"


class _Stderr(logging.StreamHandler):
    """A handler writing to the ``sys.stderr`` of the moment (tests and callers replace it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # StreamHandler sets it; the live sys.stderr is used instead
        pass


def level_for(verbosity: int) -> int:
    """The logging level of a verbosity: ``-q`` is -1 (warnings), none 0 (info), ``-v`` 1 (debug);
    each further ``-q`` one level quieter."""
    if verbosity > 0:
        return logging.DEBUG
    return min(logging.INFO + 10 * -verbosity, logging.CRITICAL)


def setup(verbosity: int = 0) -> logging.Logger:
    """Show se-gym's log records on stderr, one line each, from the level ``verbosity`` chooses
    (see :func:`level_for`).  Calling it again replaces the handler it added, never doubles it.

    Args:
        verbosity: the count of ``-v`` minus the count of ``-q``.

    Returns:
        the ``se_gym`` logger.
    """
    logger = logging.getLogger(LOGGER)
    for handler in [h for h in logger.handlers if isinstance(h, _Stderr)]:
        logger.removeHandler(handler)
    handler = _Stderr()
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level_for(verbosity))
    return logger
