"""The model's options as dataclasses every command that generates shares, so each flag, its help,
its default and the list of backends are written once: ``--model``, ``--backend``,
``--backend-option KEY=VALUE`` and the sampling flags (``--temperature``, ``--top-p``, ``--max-tokens``).

The backends offered are the generation-backend registry's (:data:`se_gym.llm.base.BACKENDS`: ``hf``,
``vllm``, ``openai``, those of installed packages' entry points, or ``module:Class``); every command's
``--help`` lists the same ones (those registered in the process).  A command that can drive only some of them (``se-gym demo`` trains the
model it samples from) says so in one line when given another (:meth:`BackendFlag.check_backend`).

``--model`` left out means the miniature's small pre-trained base (:mod:`se_gym.bases`) in the commands
that run on the miniature (``se-gym demo``, ``se-gym experience``, ``se-gym bench --quick``); the
commands that run real tasks (``se-gym rollout``, ``se-gym selfplay``, ``se-gym bench`` without
``--quick``) ask for one in one line.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..registry import RegistryError
from .base import BACKENDS, SamplingParams

MODEL_HELP = ("the model: a HF id or checkpoint folder (hf, vllm) or a served model name (openai); none: the miniature's "
              "small pre-trained base in the commands that run on the miniature (demo, experience, bench --quick), "
              "required by the others")
# the backends a command that trains the model it samples from can drive (the demo, the experience
# loop): hf samples in the training process, a vLLM engine receives the weights after every update
TRAINED_SAMPLERS = ("hf", "vllm")
TRAINED_SAMPLERS_WHY = ("it samples from the model it trains, in the training process or with a vLLM engine that "
                        "receives the weights after every update")


def backend_help(role: str = "generation backend") -> str:
    """The help of a backend flag: ``role``, then the registered backends (the same list everywhere).

    Args:
        role: what the backend generates for (``"generation backend of the llm extractor"``).

    Returns:
        ``"<role>: hf, vllm, openai (a registered name, or module:Class)"`` (the names registered in
        this process: an installed package's entry point is accepted, not listed).
    """
    return f"{role}: {', '.join(BACKENDS.registered())} (a registered name, or module:Class)"


def check_backend(name: str, error: type[Exception] = ValueError, *, flag: str = "--backend", command: str = "",
                  runs: Sequence[str] | None = None, why: str = "") -> str:
    """``name`` if it names a generation backend (registered, an entry point, or ``module:Class``)
    the command can drive; else ``error`` with one line.

    Args:
        name: the backend given.
        error: the exception class to raise (a CLI's ``CLIError``).
        flag: the flag, for the message.
        command: the command, for the message (``"se-gym demo"``).
        runs: the backends the command can drive (None: every backend).
        why: why the command drives only those.

    Returns:
        ``name``.
    """
    try:
        if ":" in name:
            BACKENDS.load(name)
        else:
            BACKENDS.check(name)
    except RegistryError as exc:
        raise error(f"{flag}: {exc}") from None
    if runs is not None and name not in runs:
        raise error(f"{command or 'this command'} cannot use {flag} {name}: {why or 'it drives only some backends'} "
                    f"({', '.join(runs)})")
    return name


@dataclass(frozen=True, kw_only=True)
class ModelFlag:
    """``--model`` (a base of a command's options dataclass).

    Attributes:
        model: the model (None: see the module docstring).
    """

    model: str | None = field(default=None, metadata={"help": MODEL_HELP})


@dataclass(frozen=True, kw_only=True)
class BackendFlag:
    """``--backend`` (a base of a command's options dataclass).

    Attributes:
        backend: the generation backend's name (registered, or ``module:Class``).
    """

    backend: str = field(default="hf", metadata={"help": backend_help(), "metavar": "BACKEND"})

    def check_backend(self, error: type[Exception] = ValueError, *, command: str = "", runs: Sequence[str] | None = None,
                      why: str = "") -> str:
        """The backend, checked (see :func:`check_backend`).

        Args:
            error: the exception class to raise.
            command: the command, for the message.
            runs: the backends the command can drive (None: every backend).
            why: why it drives only those.

        Returns:
            The backend's name.
        """
        return check_backend(self.backend, error, command=command, runs=runs, why=why)


@dataclass(frozen=True, kw_only=True)
class ModelOptions(ModelFlag, BackendFlag):
    """``--model`` and ``--backend``: the model a command generates with."""


@dataclass(frozen=True, kw_only=True)
class BackendOptionFlag:
    """``--backend-option KEY=VALUE`` (repeatable): options of the backend's class.

    Attributes:
        backend_option: the ``KEY=VALUE`` texts.
    """

    backend_option: tuple[str, ...] = field(default=(), metadata={
        "help": "an option of the generation backend's class, e.g. dtype=float32, max_model_len=4096 (repeatable; VALUE "
                "read as JSON when it parses, else text)", "metavar": "KEY=VALUE", "repeat": True})

    def backend_kwargs(self, error: type[Exception] = ValueError) -> dict[str, Any]:
        """The ``--backend-option`` texts as keyword arguments.

        Args:
            error: the exception class to raise for a text without ``=``.

        Returns:
            ``{KEY: VALUE}``, VALUE read as JSON when it parses.
        """
        return parse_backend_options(self.backend_option, error)


def parse_backend_options(items: Sequence[str], error: type[Exception] = ValueError) -> dict[str, Any]:
    """``KEY=VALUE`` texts as keyword arguments (VALUE as JSON when it parses, else the text).

    Args:
        items: the texts.
        error: the exception class to raise for one without ``=`` or a key.

    Returns:
        The keyword arguments.
    """
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key:
            raise error(f"--backend-option needs KEY=VALUE, got {item!r}")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


@dataclass(frozen=True, kw_only=True)
class SamplingOptions:
    """How answers are sampled: ``--temperature``, ``--top-p``, ``--max-tokens``.  The temperature and
    top-p defaults are :class:`~se_gym.llm.base.SamplingParams`'; the longest answer leaves room for a
    thinking model's answer.

    Attributes:
        temperature: the sampling temperature (0: greedy).
        top_p: nucleus sampling's mass.
        max_tokens: the longest answer, in tokens.
    """

    temperature: float = field(default=SamplingParams.temperature, metadata={"help": "sampling temperature (0: greedy)"})
    top_p: float = field(default=SamplingParams.top_p, metadata={"help": "nucleus sampling: the top-p probability mass"})
    max_tokens: int = field(default=8192, metadata={"help": "most tokens per answer"})

    def check_sampling(self, error: type[Exception] = ValueError) -> None:
        """Raise ``error`` with one line when a sampling option is out of range.

        Args:
            error: the exception class to raise.
        """
        if self.max_tokens < 1:
            raise error(f"--max-tokens must be at least 1, got {self.max_tokens}")
        if not 0.0 < self.top_p <= 1.0:
            raise error(f"--top-p must be in (0, 1], got {self.top_p}")
        if self.temperature < 0:
            raise error(f"--temperature must be >= 0, got {self.temperature}")


__all__ = ["TRAINED_SAMPLERS", "TRAINED_SAMPLERS_WHY", "BackendFlag", "BackendOptionFlag", "ModelFlag", "ModelOptions", "SamplingOptions", "backend_help", "check_backend",
           "parse_backend_options"]
