"""``se-gym selfplay``: run self-play rounds (resumable), locally or on a Ray cluster.

Settings come from ``--config FILE`` (JSON, or TOML by suffix) and flags (flags win); any
:class:`se_gym.selfplay.loop.SelfPlayConfig` field can be set in the file.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

from ..errors import CLIError
from ..llm.rollout_cli import parse_backend_options

# flag -> (type, help) of a config field, for the settings worth a flag (every field can go in --config)
_FLAGS = {
    "model": (str, "the starting model: a checkpoint folder or a HF id (required)"),
    "library": (str, "the renamed library, e.g. seed:0 (default seed:0)"),
    "prompts": (str, "prompt set: sebench (real models) or miniature (the tiny model's short prompts)"),
    "regime": (str, "what learns: sft (Closed-SFT on accepted open-book answers), rl (both roles), sft+rl"),
    "rounds": (int, "rounds to run (a finished run can be extended; default 3)"),
    "proposals": (int, "tasks proposed per round (default 32)"),
    "k": (int, "functions shown per proposal (1: single-function tasks; >= 3: compositions)"),
    "references": (int, "earlier valid tasks shown to the proposer (default 3)"),
    "samples": (int, "solver samples per task and book (default 4)"),
    "proposer_reward": (str, "proposer reward: gap (open minus closed solve rate), learnability or 4p1p"),
    "min_tasks": (int, "top each round's training tasks up from the buffer to this many (default 8)"),
    "seed_tasks": (str, "the buffer's start: miniature, a folder in SE-Bench layout or a JSONL file (default empty)"),
    "eval": (str, "held-out closed-book evaluation: builtin:SPLIT, sebench:PATH:SPLIT, miniature or none"),
    "eval_limit": (int, "held-out tasks evaluated per round (0: all; default 64)"),
    "propose_max_tokens": (int, "longest proposal, in tokens (default 1024)"),
    "solve_max_tokens": (int, "longest solver answer, in tokens (default 1024)"),
    "sft_lr": (float, "learning rate of each round's SFT (default 1e-5)"),
    "sft_epochs": (int, "epochs of each round's SFT (default 3)"),
    "rl_lr": (float, "learning rate of each round's RL update (default 1e-6)"),
    "seed": (int, "seed of the curriculum, sampling and training (default 0)"),
    "proposer": (str, "who writes the tasks: policy (the learner), frozen (the starting model throughout), "
                      "model:PATH (a separate model), or your own ProposerAgent as module:Class or file.py:Class"),
    "rehearsal_rounds": (int, "rounds whose valid proposals --rehearsal draws from: 1 this round's (default), N the last N, 0 every round so far"),
    "curriculum": (str, "which functions each round's proposals are about: cover (every function in turn) or gap "
                        "(untried first, then by open- minus closed-book solve rate; compositions once all are learned)"),
    "rehearsal": (float, "with --proposer policy: share of its own valid proposals in each SFT step, "
                         "so solver training keeps its task writing (0 <= share < 1; default 0)"),
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default=None, help="settings file (JSON or .toml); flags override it")
    parser.add_argument("--out", required=True, help="run folder (reruns resume round by round)")
    for name, (typ, help_text) in _FLAGS.items():
        parser.add_argument("--" + name.replace("_", "-"), dest=name, type=typ, default=None, help=help_text)
    parser.add_argument("--functions", nargs="+", default=None, help="catalogue keys the curriculum draws from (default: the whole library)")
    parser.add_argument("--books", nargs="+", default=None, choices=("open", "closed"),
                        help="books the solver answers in (default: open closed; sft needs open, rl closed)")
    parser.add_argument("--ray-address", default=None, help="run on a Ray cluster ('auto' or HOST:PORT); default: in this process")
    parser.add_argument("--generators", type=int, default=2, help="generation actors on Ray (default 2)")
    parser.add_argument("--judges", type=int, default=2, help="Ray nodes with a judge pool, one per node (default 2)")
    parser.add_argument("--sandbox-workers", type=int, default=1, help="sandbox workers per judge pool and hash seed (default 1)")
    parser.add_argument("--actor-cpus", type=float, default=1.0, help="CPUs per generation actor and per node's judge pools (default 1)")
    parser.add_argument("--actor-gpus", type=float, default=0.0, help="GPUs per generation actor (default 0)")
    parser.add_argument("--backend", choices=("hf", "vllm"), default=None, help="generation backend of the Ray actors (default hf)")
    parser.add_argument("--backend-option", action="append", default=[], metavar="KEY=VALUE",
                        help="option for the Ray actors' generators, e.g. dtype=float32, max_model_len=4096, "
                        "gpu_memory_utilization=0.8 (VALUE parsed as JSON when it can be; repeatable)")
    parser.add_argument("--device", default=None, help="the learner's torch device (default: cuda if available)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads of the learner")
    parser.add_argument("--restart", action="store_true", help="discard what --out holds and start again")
    parser.add_argument("--record-tokens", action="store_true", default=None,
                        help="each round also writes its solver samples as token trajectories (round_NNN/trajectories.jsonl)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    from .. import metrics_log

    metrics_log.add_flags(parser)
    parser.set_defaults(func=run)


def read_config(path: str | None) -> dict:
    if not path:
        return {}
    p = Path(path)
    if not p.is_file():
        raise CLIError(f"no such config file: {path}")
    try:
        if p.suffix == ".toml":
            import tomllib

            return tomllib.loads(p.read_text(encoding="utf-8"))
        return json.loads(p.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CLIError(f"{path} is not valid {'TOML' if p.suffix == '.toml' else 'JSON'}: {exc}") from None


def build_config(args: argparse.Namespace):
    from .loop import SelfPlayConfig

    d = read_config(args.config)
    for name in _FLAGS:
        v = getattr(args, name)
        if v is not None:
            d[name] = v
    if args.functions is not None:
        d["functions"] = args.functions
    if args.books is not None:
        d["books"] = args.books
    if getattr(args, "record_tokens", None):
        d["record_tokens"] = True
    return SelfPlayConfig.from_dict(d)


def run(args: argparse.Namespace) -> int:
    try:
        import torch
    except ImportError:
        raise CLIError("self-play needs torch and transformers: pip install 'se-gym[train]'") from None
    from .loop import SelfPlay

    config = build_config(args)
    options = parse_backend_options(args.backend_option)
    if (args.backend or options) and not args.ray_address:
        # in this process the learner's own model generates: a backend choice would be silently ignored
        raise CLIError("--backend and --backend-option set the Ray generation actors: they need --ray-address")
    if args.threads:
        torch.set_num_threads(args.threads)
    engine = None
    if args.ray_address:
        from .ray_engine import RayEngine

        engine = RayEngine.from_config(config, address=args.ray_address, generators=args.generators, judges=args.judges,
                                       num_cpus=args.actor_cpus, num_gpus=args.actor_gpus, backend=args.backend or "hf",
                                       generator_options=options, sandbox_workers=args.sandbox_workers)
    sp = SelfPlay(config, args.out, engine, restart=args.restart, progress=not args.no_progress, device=args.device)
    summaries = sp.run_all()
    for s in summaries:
        acc = s.get("closed_book_acc")
        extra = "" if s["round"] == 0 else f", valid {s['valid']}/{s['proposed']}, rejected {s['rejected']}"
        print(f"round {s['round']}: closed-book acc {'-' if acc is None else f'{acc:.3f}'}{extra}")
    print(f"log: {Path(args.out) / 'log.jsonl'}, plot: {Path(args.out) / 'plot.png'}, suite: {Path(args.out) / 'suite'}")
    return 0
