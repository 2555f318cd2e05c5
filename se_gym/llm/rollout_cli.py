"""``se-gym rollout``: generate answers with a model, judge them, append rows (resumable)."""
from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass, field

from ..configs import add_config_arguments, config_from_args
from ..errors import CLIError


@dataclass(frozen=True)
class RolloutRunOptions:
    """Where a rollout writes and what runs it (the rest is :class:`~se_gym.llm.rollout.RolloutConfig`)."""

    out: str = field(metadata={"help": "output JSONL (appended to; rerun to resume; bound to this configuration in OUT.run.json: "
                                       "another configuration is refused)"})
    restart: bool = field(default=False, metadata={"help": "discard what --out (and --keep-correct) hold and start again"})
    keep_correct: str | None = field(default=None, metadata={"metavar": "OUT.jsonl",
                                                             "help": "also write the accepted trajectories (SFT data)"})
    ray_actors: int = field(default=0, metadata={"help": "run on N Ray actors (0: this process)"})
    ray_address: str | None = field(default=None, metadata={
        "help": "join this Ray cluster (for --ray-actors or --sandbox ray) instead of starting a local one"})
    ray_gpus_per_actor: float | None = field(default=None, metadata={"help": "GPUs per actor (None: 1 for vllm, else 0)"})
    progress: bool = field(default=True, metadata={"help": "show a progress bar"})
    sampler_state: str | None = field(default=None, metadata={"metavar": "STATE.json", "help": (
        "with --sampler learnability: the sampler state to start from (an earlier round's OUT.sampler.json, "
        "or an RL run's sampler.json); its sampler and options are used")})

    def __post_init__(self) -> None:
        if self.ray_actors < 0:
            raise CLIError(f"--ray-actors must be >= 0, got {self.ray_actors}")


def configure(parser: argparse.ArgumentParser) -> None:
    from .rollout import RolloutConfig

    add_config_arguments(parser, RolloutConfig, exclude=("backend_options",))
    add_config_arguments(parser, RolloutRunOptions, config_flag=False)
    parser.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://localhost:8800/v1 (openai backend)")
    parser.add_argument("--api-key", help="API key for the openai backend (default: $OPENAI_API_KEY)")
    # the spellings of before --enable-thinking/--chat were built from RolloutConfig
    parser.add_argument("--no-thinking", dest="enable_thinking", action="store_const", const=False, default=argparse.SUPPRESS,
                        help="same as --no-enable-thinking")
    parser.add_argument("--text-prompt", dest="chat", action="store_const", const=False, default=argparse.SUPPRESS,
                        help="same as --no-chat")
    parser.set_defaults(func=run)


def _options(args: argparse.Namespace, backend: str) -> dict:
    options: dict = {}
    if args.base_url:
        options["base_url"] = args.base_url
    if args.api_key:
        options["api_key"] = args.api_key
    if args.base_url and backend != "openai":
        raise CLIError("--base-url is for --backend openai")
    return options


def run(args: argparse.Namespace) -> int:
    from .rollout import RolloutConfig, rollout

    config = config_from_args(RolloutConfig, args, also=(RolloutRunOptions,))
    job = config_from_args(RolloutRunOptions, args, also=(RolloutConfig,))
    config = dataclasses.replace(config, backend_options={**config.backend_options, **_options(args, config.backend)})
    cluster = config.sandbox_spec.load().cluster  # (a sandbox that judges on the cluster, such as ray)
    if job.ray_address and not job.ray_actors and not cluster:
        raise CLIError("--ray-address needs --ray-actors N or a cluster sandbox (--sandbox ray)")
    if job.sampler_state and config.sampler == "uniform":
        raise CLIError("--sampler-state needs --sampler learnability (or another learning sampler)")
    if job.ray_actors and cluster:
        raise CLIError("--sandbox ray judges on the cluster from this process: leave out --ray-actors (or use --sandbox local)")
    gpus = job.ray_gpus_per_actor
    if gpus is None:
        gpus = 1.0 if config.backend == "vllm" else 0.0
    stats = rollout(
        config,
        job.out,
        keep_correct=job.keep_correct,
        ray_actors=job.ray_actors,
        ray_address=job.ray_address,
        ray_gpus_per_actor=gpus,
        progress=job.progress,
        restart=job.restart,
        sampler_state=job.sampler_state,
    )
    tok_s = stats.completion_tokens / stats.wall_s if stats.wall_s else 0.0
    print(
        f"{stats.rows_written} rows written to {job.out} ({stats.samples_skipped} already there), "
        f"{stats.completion_tokens} tokens, {tok_s:.1f} tok/s, "
        f"{100 * stats.outside_generation:.1f}% of wall time outside generation"
        + (f", {stats.accepted} accepted -> {job.keep_correct}" if job.keep_correct else "")
        + (f"; {stats.infrastructure} rows not judged (sandbox failures after retries: written with infrastructure=true, left out of accuracy)"
           if stats.infrastructure else ""),
        file=sys.stderr,
    )
    return 0
