"""``se-gym experience``: one cell of experience internalization over K rounds; ``se-gym experience grid``:
the 2 x 2 x 2 grid (granularity x injection x regime).  Both resume per round."""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

from ..errors import CLIError

BASE_EXAMPLES = 51_200  # pre-training examples of the tiny base (see se_gym.experience.miniworld)
QUICK_BASE_EXAMPLES = 1_600  # the answer format only: reading docs emerges after thousands of steps (see miniworld)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=None, help="output folder (reruns resume after the last finished round)")
    p.add_argument("--iterations", type=int, default=3, help="rounds K (default 3)")
    p.add_argument("--extractor", choices=("deterministic", "llm"), default="deterministic", help="extractor kind (default: deterministic)")
    p.add_argument("--extractor-model", default=None, help="model of the llm extractor (with --extractor-backend)")
    p.add_argument("--extractor-backend", choices=("hf", "vllm", "openai"), default="vllm", help="backend of the llm extractor (default vllm)")
    p.add_argument("--base", default=None, help="a pre-trained tiny base model folder to start from, e.g. the demo's base that reads "
                                                "retrieved experience and injected lessons (`se-gym demo --base experience` writes it to "
                                                "DEMO_OUT/base/model); default: build one in "
                                                "OUT/base (without --quick that pre-training takes an hour or more on a CPU)")
    p.add_argument("--model", default=None, help="a real model (HF id or path): the built-in suite instead of the miniature, paper-like "
                                                 "learning rates and full-length answers (the real recipe; needs a GPU)")
    p.add_argument("--backend", choices=("hf", "vllm"), default="hf", help="sampling backend with --model (default hf)")
    p.add_argument("--extractor-url", default=None, help="base URL(s) of an OpenAI-compatible server for --extractor-backend openai")
    p.add_argument("--seed", type=int, default=0, help="world seed: library, functions, questions (default 0)")
    p.add_argument("--budget", type=int, default=64, help="tokens of experience per prompt (default 64)")
    p.add_argument("--max-turns", type=int, default=2, help="answers per episode, with execution feedback between them (default 2)")
    p.add_argument("--teacher", choices=("self", "reader"), default=None,
                   help="off-policy teacher: the model itself with experience (default), or a rule-based reader of the experience "
                        "(a stand-in for a stronger teacher model; miniature only; the default with --quick, whose tiny base "
                        "is not pre-trained long enough to read)")
    p.add_argument("--onpolicy-steps", type=int, default=None,
                   help="on-policy distillation updates per round (default: 8; 4 with --quick, too few for a tiny model to move)")
    p.add_argument("--onpolicy-lr", type=float, default=None, help="on-policy distillation learning rate (default: 1e-3; 1e-6 with --model)")
    p.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    p.add_argument("--restart", action="store_true", help="discard what OUT holds and start again")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--quick", action="store_true", help="the quick scale: a 50-step base, 2 new functions a round, the reader teacher "
                                                      "(the grid: about 15 minutes on 2 cores with --extractor deterministic)")
    from .. import metrics_log

    metrics_log.add_flags(p)


def configure(parser: argparse.ArgumentParser) -> None:
    _common(parser)
    parser.add_argument("--granularity", choices=("instance", "principle", "oracle"), default="principle", help="experience granularity (default principle)")
    parser.add_argument("--injection", choices=("global", "stepwise"), default="stepwise", help="how experience enters the prompt (default stepwise)")
    parser.add_argument("--regime", choices=("offpolicy", "onpolicy"), default="offpolicy", help="internalization regime (default offpolicy)")
    parser.set_defaults(func=run)
    sub = parser.add_subparsers(dest="experience_command", metavar="{grid}")
    grid = sub.add_parser("grid", help="the 2 x 2 x 2 grid: granularity x injection x regime", description="the 2 x 2 x 2 grid: granularity x injection x regime")
    _common(grid)
    grid.add_argument("--oracle", action="store_true", help="add the reference arm: the library's own doc entries as experience (2 more cells)")
    grid.set_defaults(func=run_grid)


def _setup(args):
    try:
        import torch
    except ImportError:
        raise CLIError("se-gym experience needs torch and transformers: pip install 'se-gym[train,plot]'") from None
    torch.set_num_threads(max(1, args.threads))
    if not args.out:
        raise CLIError("--out DIR is required")
    if args.iterations < 1:
        raise CLIError("--iterations must be >= 1")
    if args.extractor == "llm" and not args.extractor_model:
        raise CLIError("--extractor llm needs --extractor-model (a model for the extractor, e.g. Qwen/Qwen3-8B)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _generator(args):
    if args.extractor != "llm":
        return None
    from ..llm import make_generator

    options = {"base_urls": args.extractor_url} if args.extractor_backend == "openai" and args.extractor_url else {}
    return make_generator(args.extractor_backend, args.extractor_model, **options)


def _base(args, out: Path, examples: int) -> str:
    """The base model: ``--model``, ``--base``, or one built and pre-trained in OUT/base (a stage: built once)."""
    if args.model:
        return args.model
    if args.base:
        path = Path(args.base)
        if not (path / "config.json").is_file():
            raise CLIError(f"--base {path} is not a model folder (no config.json)")
        return str(path.resolve())
    from ..storage import RunDir
    from .miniworld import build_base

    run = RunDir(out / "base", "experience-base", {"examples": examples, "seed": 0, "hidden": 64, "layers": 2})
    if not run.done("model"):
        print(f"[base] pre-training the tiny model on reading lines of docs and experience ({examples} examples)", file=sys.stderr, flush=True)
        t0 = time.time()
        from .. import metrics_log

        metrics_log.set_run("base")
        info = build_base(run.path / "model", examples, seed=0, progress=not args.no_progress, checkpoint_dir=run.path / "ckpt")
        run.mark_done("model", {**info, "wall_s": time.time() - t0})
    return str((run.path / "model").resolve())


MINIATURE_NOTE = (
    "What the miniature can and cannot show. Each round brings new functions; the tiny model knows none of them "
    "closed book, and a round's train tasks are learned only through internalization, so forgetting of earlier rounds and "
    "collapse are real measurements here. The tiny base does not read injected lines reliably, so with --teacher reader the "
    "off-policy teacher is a rule-based reader (a stand-in for a stronger teacher model): it succeeds whenever the retrieved "
    "experience holds the needed call, so off-policy cells differ only where the retrieved experience lacks it "
    "(learn.teacher_accuracy in each cell's rounds.jsonl). On-policy distillation needs the model itself to use the "
    "experience as teacher; the tiny base cannot, so it has little to distil. The multi-turn feedback is not rendered for "
    "the tiny model (it never saw any), so step-wise injection differs from global only in what it retrieves after a failure. "
    "The paper's granularity and injection effects (long interactions, an LLM reading imperfect lessons) are out of the "
    "miniature's reach; the real recipe (--model) is where they can show.")

# a real model: paper-like learning rates, full-length answers, the built-in suite
REAL = dict(world="builtin", max_new_tokens=1024, sft_lr=1e-5, sft_epochs=3, sft_batch=8, onpolicy_lr=1e-6, onpolicy_steps=8, samples=4,
            functions_per_round=8, train_per_function=4, test_per_function=3, budget=512)


def cell_config(args: argparse.Namespace, **over) -> "CellConfig":
    """The cell configuration the command line asks for; ``over`` (a scale such as ``loop.QUICK``, or
    a cell's granularity, injection and regime) wins over the command's defaults, explicit on-policy
    flags over both."""
    from .loop import CellConfig

    teacher = args.teacher or ("reader" if getattr(args, "quick", False) and not args.model else "self")
    fields = dict(iterations=args.iterations, extractor=args.extractor, seed=args.seed, budget=args.budget, max_turns=args.max_turns, teacher=teacher)
    if args.model:
        fields.update(REAL, backend=args.backend)
        if args.budget != 64:  # an explicit --budget wins over the real recipe's
            fields["budget"] = args.budget
    elif args.backend != "hf":
        raise CLIError("--backend vllm needs --model (the tiny model samples in-process)")
    fields.update(over)
    if args.onpolicy_steps is not None:  # explicit flags win over the scale's
        fields["onpolicy_steps"] = args.onpolicy_steps
    if args.onpolicy_lr is not None:
        fields["onpolicy_lr"] = args.onpolicy_lr
    return CellConfig(**fields)


def run(args: argparse.Namespace) -> int:
    from .loop import Cell, write_report

    from .loop import QUICK

    out = _setup(args)
    scale = QUICK if args.quick and not args.model else {}
    cfg = cell_config(args, granularity=args.granularity, injection=args.injection, regime=args.regime, **scale)
    base = _base(args, out, QUICK_BASE_EXAMPLES if args.quick else BASE_EXAMPLES)
    t0 = time.time()
    cell = Cell(out / "cell", replace(cfg, base=base), generator=_generator(args), device=args.device, progress=not args.no_progress, restart=args.restart)
    rows = cell.execute()
    wall = time.time() - t0
    table = write_report(out, {cfg.name: rows}, {cfg.name: sum(r["wall_s"] for r in rows)},
                         [f"# se-gym experience: {cfg.name}", "", f"Configuration: {json.dumps(asdict(cfg))}", f"Wall time of this invocation {wall:.0f} s."])
    print(table)
    print(f"\nreport: {out / 'report.md'}")
    return 0


def run_grid(args: argparse.Namespace) -> int:
    from .loop import QUICK, Cell, CellConfig, grid_cells, write_report

    out = _setup(args)
    base_cfg = cell_config(args, **(QUICK if args.quick and not args.model else {}))
    base = _base(args, out, QUICK_BASE_EXAMPLES if args.quick else BASE_EXAMPLES)
    gen = _generator(args)
    results, walls = {}, {}
    t0 = time.time()
    for cfg in grid_cells(replace(base_cfg, base=base), oracle=args.oracle):
        cell = Cell(out / "cells" / cfg.name, cfg, generator=gen, device=args.device, progress=not args.no_progress, restart=args.restart)
        rows = cell.execute()
        results[cfg.name] = rows
        walls[cfg.name] = sum(r["wall_s"] for r in rows)
    wall = time.time() - t0
    header = ["# se-gym experience grid", "",
              f"{'Quick scale; ' if args.quick else ''}K = {args.iterations} rounds, extractor {args.extractor}, seed {args.seed}, "
              f"budget {args.budget} tokens, max_turns {args.max_turns}; wall time of this invocation {wall:.0f} s "
              "(rounds already finished were skipped; 'wall s' sums each cell's rounds as they ran).",
              "", f"Scale: {json.dumps({k: v for k, v in asdict(base_cfg).items() if k not in ('granularity', 'injection', 'regime', 'base')})}"]
    if not args.model:
        header += ["", MINIATURE_NOTE]
        if args.base:  # e.g. the demo's experience-reading base: the note's word on the built base's reading is not about it
            header += ["", f"Base: {base} (given with --base, not the one built here; measure its reading with learn.* and "
                           "heldout_with_experience in each cell's rounds.jsonl)."]
    table = write_report(out, results, walls, header)
    print(table)
    print(f"\nreport: {out / 'report.md'}; wall time {wall:.0f} s")
    return 0
