"""A sandbox backend with an option of its own (``tag``), for tests/test_sandbox_spec.py: the local
backend's workers, and a record of every tag it was built with, so a test can see the option reach
it through ``gym.make``, the Judge, ``se-gym judge`` and ``se-gym bench``."""
from __future__ import annotations

from typing import Sequence

from se_gym.sandbox.local import LocalSandbox

TAGS: list[str] = []  # the tag of each sandbox built


class TaggedSandbox(LocalSandbox):
    name = "tagged"
    # declared: the option it cannot do without (the rest it inherits: the library as a path, warm-up...)
    required_options = {"tag": "a word this backend records"}

    def __init__(self, pythonpath: Sequence[str] = (), preload: Sequence[str] = ("numpy",), workers: int | None = None, *,
                 tag: str, warmup: Sequence[str] = (), ready: str = "all"):
        super().__init__(pythonpath, preload, workers or 1, warmup=warmup, ready=ready)
        TAGS.append(tag)
