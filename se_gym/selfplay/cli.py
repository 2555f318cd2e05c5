"""``se-gym selfplay``: run self-play rounds (resumable), locally or on a Ray cluster.

The flags are built from two dataclasses, one source for each option's name, default and help
(:mod:`se_gym.configs`): :class:`se_gym.selfplay.loop.SelfPlayConfig` (what changes results; the
run folder is bound to it) and :class:`SelfPlayRunOptions` (where and how it runs).  ``--config
FILE`` (TOML by suffix, else JSON) may hold options of both; flags win.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from ..configs import add_config_arguments, config_from_args
from ..errors import CLIError
from ..llm.options import BackendFlag, BackendOptionFlag
from .loop import SelfPlayConfig


@dataclass(frozen=True)
class SelfPlayRunOptions(BackendFlag, BackendOptionFlag):
    """Where a self-play run writes and what runs it (the rest is :class:`SelfPlayConfig`); ``--backend``
    and ``--backend-option`` (:mod:`se_gym.llm.options`) set the Ray generation actors."""

    out: str = field(metadata={"help": "run folder (reruns resume round by round)"})
    ray_address: str | None = field(default=None, metadata={"help": "run on a Ray cluster ('auto' or HOST:PORT); None: in this process"})
    generators: int = field(default=2, metadata={"help": "generation actors on Ray"})
    judges: int = field(default=2, metadata={"help": "Ray nodes with a judge pool, one per node"})
    sandbox_workers: int = field(default=1, metadata={"help": "sandbox workers per judge pool and hash seed"})
    actor_cpus: float = field(default=1.0, metadata={"help": "CPUs per generation actor and per node's judge pools"})
    actor_gpus: float = field(default=0.0, metadata={"help": "GPUs per generation actor"})
    device: str | None = field(default=None, metadata={"help": "the learner's torch device (None: cuda if available)"})
    threads: int | None = field(default=None, metadata={"help": "torch CPU threads of the learner"})
    restart: bool = field(default=False, metadata={"help": "discard what --out holds and start again"})
    progress: bool = field(default=True, metadata={"help": "progress bars"})

    def __post_init__(self) -> None:
        self.check_backend(CLIError)


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser, SelfPlayConfig)
    add_config_arguments(parser, SelfPlayRunOptions, config_flag=False)
    from .. import metrics_log

    metrics_log.add_flags(parser)
    parser.set_defaults(func=run)


def build_config(args: argparse.Namespace) -> SelfPlayConfig:
    """The :class:`SelfPlayConfig` of a parsed command line: defaults < ``--config`` < flags."""
    return config_from_args(SelfPlayConfig, args, also=(SelfPlayRunOptions,))


def run_options(args: argparse.Namespace) -> SelfPlayRunOptions:
    """The :class:`SelfPlayRunOptions` of a parsed command line: defaults < ``--config`` < flags."""
    return config_from_args(SelfPlayRunOptions, args, also=(SelfPlayConfig,))


def run(args: argparse.Namespace) -> int:
    try:
        import torch
    except ImportError:
        raise CLIError("self-play needs torch and transformers: pip install 'se-gym[train]'") from None
    from .loop import SelfPlay

    config = build_config(args)
    job = run_options(args)
    options = job.backend_kwargs(CLIError)
    if (job.backend != BackendFlag.backend or options) and not job.ray_address:
        # in this process the learner's own model generates: a backend choice would be silently ignored
        raise CLIError("--backend and --backend-option set the Ray generation actors: they need --ray-address")
    if job.threads:
        torch.set_num_threads(job.threads)
    engine = None
    if job.ray_address:
        from .ray_engine import RayEngine

        engine = RayEngine.from_config(config, address=job.ray_address, generators=job.generators, judges=job.judges,
                                       num_cpus=job.actor_cpus, num_gpus=job.actor_gpus, backend=job.backend,
                                       generator_options=options, sandbox_workers=job.sandbox_workers)
    sp = SelfPlay(config, job.out, engine, restart=job.restart, progress=job.progress, device=job.device)
    summaries = sp.run_all()
    for s in summaries:
        acc = s.get("closed_book_acc")
        extra = "" if s["round"] == 0 else f", valid {s['valid']}/{s['proposed']}, rejected {s['rejected']}"
        print(f"round {s['round']}: closed-book acc {'-' if acc is None else f'{acc:.3f}'}{extra}")
    print(f"log: {Path(job.out) / 'log.jsonl'}, plot: {Path(job.out) / 'plot.png'}, suite: {Path(job.out) / 'suite'}")
    return 0
