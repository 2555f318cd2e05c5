"""Per-step training metrics to TensorBoard or Weights & Biases (``--log tensorboard|wandb``).

The trainers (:func:`se_gym.training.sft.train_sft`, :class:`se_gym.training.rl.RLTrainer`,
:class:`se_gym.training.distill.OnPolicyDistiller`) call :func:`log` after every step; it does nothing
unless a logger was started (:func:`session`, which the CLIs open for ``--log``).  :func:`set_run`
names the training the next metrics belong to (``seed0/open_sft``), so the many trainings of one
invocation stay apart:

* TensorBoard: one run folder per name under the log dir (``LOGDIR/seed0/open_sft/events...``), the
  metric names as tags.  Written with ``torch.utils.tensorboard`` (needs the ``tensorboard`` package)
  or ``tensorboardX``.
* W&B: one run per process, offline unless ``WANDB_MODE`` says otherwise (``wandb sync`` uploads it
  later); each name's metrics as ``NAME/metric`` on its own step axis ``NAME/step``.

Only numbers are logged (``None`` and text are left out).  Nothing heavy is imported until a logger
starts.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import threading
from pathlib import Path
from typing import Any, Iterator, Mapping

from ._deps import DependencyError

KINDS = ("tensorboard", "wandb")
DEFAULT_RUN = "train"

log_ = logging.getLogger("se_gym")


def _tensorboard_writer():
    """``SummaryWriter`` from torch (which needs tensorboard) or tensorboardX, else a one-line error."""
    try:
        from torch.utils.tensorboard import SummaryWriter

        return SummaryWriter
    except ImportError:
        pass
    try:
        from tensorboardX import SummaryWriter

        return SummaryWriter
    except ImportError:
        raise DependencyError("--log tensorboard needs the tensorboard package (pip install tensorboard) or tensorboardX") from None


def _wandb():
    try:
        import wandb
    except ImportError:
        raise DependencyError("--log wandb needs the wandb package (pip install wandb)") from None
    return wandb


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:  # a 0-d tensor or numpy scalar
            v = v.item() if hasattr(v, "item") and getattr(v, "ndim", 1) == 0 else None
        except (TypeError, ValueError):
            return None
        if v is None or isinstance(v, bool):
            return None
    v = float(v)
    return v if math.isfinite(v) else None


class MetricsLogger:
    """Scalars of named training runs to one backend (``kind``: tensorboard or wandb) under ``logdir``."""

    def __init__(self, kind: str, logdir: str | os.PathLike, project: str = "se-gym", name: str | None = None,
                 config: Mapping[str, Any] | None = None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.kind, self.logdir = kind, Path(logdir)
        self._lock = threading.Lock()
        self._writers: dict[str, Any] = {}
        self._axes: set[str] = set()
        if kind == "tensorboard":
            self._writer_class = _tensorboard_writer()
        else:
            wandb = _wandb()
            self.logdir.mkdir(parents=True, exist_ok=True)
            self._wandb_run = wandb.init(project=project, name=name, dir=str(self.logdir), config=dict(config or {}),
                                         mode=os.environ.get("WANDB_MODE") or "offline")

    def log(self, metrics: Mapping[str, Any], step: int, run: str = DEFAULT_RUN) -> None:
        scalars = {k: x for k, v in metrics.items() if (x := _number(v)) is not None}
        if not scalars:
            return
        with self._lock:
            if self.kind == "tensorboard":
                writer = self._writers.get(run)
                if writer is None:
                    writer = self._writers[run] = self._writer_class(log_dir=str(self.logdir / run))
                for k, v in scalars.items():
                    writer.add_scalar(k, v, int(step))
                writer.flush()  # a killed run keeps its curves up to its last step
            else:
                if run not in self._axes:  # each training's own x axis: their steps restart at 1
                    self._wandb_run.define_metric(f"{run}/step")
                    self._wandb_run.define_metric(f"{run}/*", step_metric=f"{run}/step")
                    self._axes.add(run)
                self._wandb_run.log({**{f"{run}/{k}": v for k, v in scalars.items()}, f"{run}/step": int(step)})

    def close(self) -> None:
        with self._lock:
            for w in self._writers.values():
                w.close()
            self._writers.clear()
            if self.kind == "wandb" and self._wandb_run is not None:
                self._wandb_run.finish()
                self._wandb_run = None


_active: MetricsLogger | None = None
_prefix: tuple[str, ...] = ()
_run = DEFAULT_RUN


def active() -> MetricsLogger | None:
    return _active


def set_run(name: str) -> None:
    """Name the training that the next :func:`log` calls belong to (e.g. ``seed0/open_sft``)."""
    global _run
    _run = name or DEFAULT_RUN


def run_name(name: str | None = None) -> str:
    """The full name of training ``name`` (default: the current one) under the open :func:`scope` blocks."""
    return "/".join((*_prefix, name or _run))


@contextlib.contextmanager
def scope(name: str) -> Iterator[None]:
    """Put the run names set inside the block under ``name`` (a stage that runs a whole loop of trainings)."""
    global _prefix, _run
    saved = _prefix, _run
    _prefix = (*_prefix, name)
    try:
        yield
    finally:
        _prefix, _run = saved


def log(metrics: Mapping[str, Any], step: int, run: str | None = None) -> None:
    """Log a training step's numbers to the active logger, if any (what the trainers call); ``run``:
    another training's name than the current one (e.g. a loop's per-round summary)."""
    logger = _active
    if logger is None:
        return
    try:
        logger.log(metrics, step, run_name(run))
    except Exception as exc:  # noqa: BLE001 - a full disk or a dead wandb process must not stop training
        log_.warning("metrics logging failed (%s: %s); training goes on", type(exc).__name__, exc)


@contextlib.contextmanager
def session(kind: str | None, logdir: str | os.PathLike, **options: Any) -> Iterator[MetricsLogger | None]:
    """Log to ``kind`` under ``logdir`` while the block runs (``kind`` None: do nothing)."""
    global _active, _run
    if not kind:
        yield None
        return
    global _prefix
    logger = MetricsLogger(kind, logdir, **options)
    saved = _active, _prefix, _run
    _active, _prefix, _run = logger, (), DEFAULT_RUN  # a session starts with fresh names
    try:
        yield logger
    finally:
        _active, _prefix, _run = saved
        logger.close()


def settings() -> tuple[str, str] | None:
    """``(kind, logdir)`` of the active logger, for a child process to open its own :func:`session`."""
    return None if _active is None else (_active.kind, str(_active.logdir))


# -- the CLIs' flags ---------------------------------------------------------------------------------
def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log", choices=KINDS, default=None,
                        help="log per-step training metrics to TensorBoard (needs tensorboard or tensorboardX) or "
                             "Weights & Biases (offline unless WANDB_MODE=online); default: neither")
    parser.add_argument("--log-dir", default=None, help="where --log writes (default: OUT/logs)")


def from_args(args: argparse.Namespace, out: str | os.PathLike | None = None, **options: Any):
    """The :func:`session` that ``--log`` / ``--log-dir`` ask for (a no-op without ``--log``);
    the log dir defaults to ``OUT/logs`` (``out``, else ``args.out``)."""
    kind = getattr(args, "log", None)
    logdir = getattr(args, "log_dir", None)
    out = out if out is not None else getattr(args, "out", None)
    if kind and not logdir:
        if out is None:
            from .errors import CLIError

            raise CLIError("--log needs --log-dir DIR (or --out)")
        logdir = Path(out) / "logs"
    return session(kind, logdir or ".", **options)
