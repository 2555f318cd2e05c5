"""``se-gym experience``: one cell of experience internalization over K rounds; ``se-gym experience grid``:
the 2 x 2 x 2 grid (granularity x injection x regime).  Both resume per round."""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..configs import add_config_arguments, config_from_args
from ..errors import CLIError
from ..llm.options import TRAINED_SAMPLERS, TRAINED_SAMPLERS_WHY, ModelOptions, backend_help, check_backend

if TYPE_CHECKING:  # (loop imports torch-side modules: only when a command runs)
    from .loop import CellConfig

BASE_EXAMPLES = 51_200  # pre-training examples of the tiny base (see se_gym.experience.miniworld)
QUICK_BASE_EXAMPLES = 1_600  # the answer format only: reading docs emerges after thousands of steps (see miniworld)


@dataclass(frozen=True)
class ExperienceOptions(ModelOptions):
    """What ``se-gym experience`` and ``se-gym experience grid`` share (flags, or a ``--config`` file).
    ``--model`` and ``--backend`` are :class:`~se_gym.llm.options.ModelOptions`': no model, the
    miniature's tiny base sampling in-process; a real model (HF id or path), the built-in suite instead of
    the miniature, paper-like learning rates and full-length answers (the real recipe; needs a GPU),
    sampled by hf or vllm."""

    iterations: int = field(default=3, metadata={"help": "rounds K"})
    extractor: str = field(default="deterministic", metadata={"help": "extractor kind", "choices": ("deterministic", "llm")})
    extractor_model: str | None = field(default=None, metadata={"help": "model of the llm extractor (with --extractor-backend)"})
    extractor_backend: str = field(default="vllm", metadata={"help": backend_help("generation backend of the llm extractor"),
                                                             "metavar": "BACKEND"})
    base: str | None = field(default=None, metadata={
        "help": "a pre-trained tiny base model folder to start from, e.g. the demo's base that reads retrieved experience "
                "and injected lessons (`se-gym demo --base experience` writes it to DEMO_OUT/base/model); None: build one "
                "in OUT/base (without --quick that pre-training takes an hour or more on a CPU)"})
    extractor_url: str | None = field(default=None, metadata={
        "help": "base URL(s) of an OpenAI-compatible server for --extractor-backend openai"})
    seed: int = field(default=0, metadata={"help": "world seed: library, functions, questions"})
    budget: int = field(default=64, metadata={"help": "tokens of experience per prompt"})
    max_turns: int = field(default=2, metadata={"help": "answers per episode, with execution feedback between them"})
    teacher: str | None = field(default=None, metadata={
        "help": "off-policy teacher: the model itself with experience (None: self), or a rule-based reader of the experience "
                "(a stand-in for a stronger teacher model; miniature only; the default with --quick, whose tiny base "
                "is not pre-trained long enough to read)", "choices": ("self", "reader")})
    onpolicy_steps: int | None = field(default=None, metadata={
        "help": "on-policy distillation updates per round (None: 8; 4 with --quick, too few for a tiny model to move)"})
    onpolicy_lr: float | None = field(default=None, metadata={
        "help": "on-policy distillation learning rate (None: 1e-3; 1e-6 with --model)"})
    device: str | None = field(default=None, metadata={"help": "torch device (None: cuda if available, else cpu)"})
    threads: int = field(default=1, metadata={"help": "torch CPU threads"})
    restart: bool = field(default=False, metadata={"help": "discard what OUT holds and start again"})
    progress: bool = field(default=True, metadata={"help": "show progress bars"})
    quick: bool = field(default=False, metadata={
        "help": "the quick scale: a 50-step base, 2 new functions a round, the reader teacher "
                "(the grid: about 15 minutes on 2 cores with --extractor deterministic)"})

    def __post_init__(self) -> None:
        self.check_backend(CLIError, command="se-gym experience", runs=TRAINED_SAMPLERS, why=TRAINED_SAMPLERS_WHY)
        check_backend(self.extractor_backend, CLIError, flag="--extractor-backend")
        if self.iterations < 1:
            raise CLIError("--iterations must be >= 1")
        if self.extractor == "llm" and not self.extractor_model:
            raise CLIError("--extractor llm needs --extractor-model (a model for the extractor, e.g. Qwen/Qwen3-8B)")


@dataclass(frozen=True)
class CellOptions(ExperienceOptions):
    granularity: str = field(default="principle", metadata={"help": "experience granularity", "choices": ("instance", "principle", "oracle")})
    injection: str = field(default="stepwise", metadata={"help": "how experience enters the prompt", "choices": ("global", "stepwise")})
    regime: str = field(default="offpolicy", metadata={"help": "internalization regime", "choices": ("offpolicy", "onpolicy")})


@dataclass(frozen=True)
class GridOptions(ExperienceOptions):
    oracle: bool = field(default=False, metadata={"help": "add the reference arm: the library's own doc entries as experience (2 more cells)"})


MODEL_EPILOG = ("--model: none, the miniature's tiny base, sampling in-process; a real model (HF id or path), the built-in "
                "suite instead of the miniature, paper-like learning rates and full-length answers (the real recipe; needs a "
                "GPU), sampled by --backend hf or vllm")


def _common(p: argparse.ArgumentParser, cls: type) -> None:
    p.epilog = MODEL_EPILOG
    # (--out is a plain flag: --log's folder is worked out from it before the command runs)
    p.add_argument("--out", default=None, help="output folder, required (reruns resume after the last finished round)")
    add_config_arguments(p, cls)
    from .. import metrics_log

    metrics_log.add_flags(p)


def configure(parser: argparse.ArgumentParser) -> None:
    _common(parser, CellOptions)
    parser.set_defaults(func=run)
    sub = parser.add_subparsers(dest="experience_command", metavar="{grid}")
    grid = sub.add_parser("grid", help="the 2 x 2 x 2 grid: granularity x injection x regime", description="the 2 x 2 x 2 grid: granularity x injection x regime")
    _common(grid, GridOptions)
    grid.set_defaults(func=run_grid)


def _setup(args, o: ExperienceOptions) -> Path:
    try:
        import torch
    except ImportError:
        raise CLIError("se-gym experience needs torch and transformers: pip install 'se-gym[train,plot]'") from None
    torch.set_num_threads(max(1, o.threads))
    if not args.out:
        raise CLIError("--out DIR is required")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _generator(o: ExperienceOptions):
    if o.extractor != "llm":
        return None
    from ..llm import make_generator

    options = {"base_urls": o.extractor_url} if o.extractor_backend == "openai" and o.extractor_url else {}
    return make_generator(o.extractor_backend, o.extractor_model, **options)


def _base(o: ExperienceOptions, out: Path, examples: int) -> str:
    """The base model: ``--model``, ``--base``, or one built and pre-trained in OUT/base (a stage: built once)."""
    if o.model:
        return o.model
    if o.base:
        path = Path(o.base)
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
        info = build_base(run.path / "model", examples, seed=0, progress=o.progress, checkpoint_dir=run.path / "ckpt")
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


def cell_config(o: "ExperienceOptions", **over) -> "CellConfig":
    """The cell configuration the command line asks for; ``over`` (a scale such as ``loop.QUICK``, or
    a cell's granularity, injection and regime) wins over the command's defaults, explicit on-policy
    flags over both."""
    from .loop import CellConfig

    teacher = o.teacher or ("reader" if o.quick and not o.model else "self")
    fields = dict(iterations=o.iterations, extractor=o.extractor, seed=o.seed, budget=o.budget, max_turns=o.max_turns, teacher=teacher)
    if o.model:
        fields.update(REAL, backend=o.backend)
        if o.budget != 64:  # an explicit --budget wins over the real recipe's
            fields["budget"] = o.budget
    elif o.backend != "hf":
        raise CLIError("--backend vllm needs --model (the tiny model samples in-process)")
    fields.update(over)
    if o.onpolicy_steps is not None:  # explicit options win over the scale's
        fields["onpolicy_steps"] = o.onpolicy_steps
    if o.onpolicy_lr is not None:
        fields["onpolicy_lr"] = o.onpolicy_lr
    return CellConfig(**fields)


def run(args: argparse.Namespace) -> int:
    from .loop import QUICK, Cell, write_report

    o = config_from_args(CellOptions, args, also=(GridOptions,))
    out = _setup(args, o)
    scale = QUICK if o.quick and not o.model else {}
    cfg = cell_config(o, granularity=o.granularity, injection=o.injection, regime=o.regime, **scale)
    base = _base(o, out, QUICK_BASE_EXAMPLES if o.quick else BASE_EXAMPLES)
    t0 = time.time()
    cell = Cell(out / "cell", replace(cfg, base=base), generator=_generator(o), device=o.device, progress=o.progress, restart=o.restart)
    rows = cell.execute()
    wall = time.time() - t0
    table = write_report(out, {cfg.name: rows}, {cfg.name: sum(r["wall_s"] for r in rows)},
                         [f"# se-gym experience: {cfg.name}", "", f"Configuration: {json.dumps(asdict(cfg))}", f"Wall time of this invocation {wall:.0f} s."])
    print(table)
    print(f"\nreport: {out / 'report.md'}")
    return 0


def run_grid(args: argparse.Namespace) -> int:
    from .loop import QUICK, Cell, grid_cells, write_report

    o = config_from_args(GridOptions, args, also=(CellOptions,))
    out = _setup(args, o)
    base_cfg = cell_config(o, **(QUICK if o.quick and not o.model else {}))
    base = _base(o, out, QUICK_BASE_EXAMPLES if o.quick else BASE_EXAMPLES)
    gen = _generator(o)
    results, walls = {}, {}
    t0 = time.time()
    for cfg in grid_cells(replace(base_cfg, base=base), oracle=o.oracle):
        cell = Cell(out / "cells" / cfg.name, cfg, generator=gen, device=o.device, progress=o.progress, restart=o.restart)
        rows = cell.execute()
        results[cfg.name] = rows
        walls[cfg.name] = sum(r["wall_s"] for r in rows)
    wall = time.time() - t0
    header = ["# se-gym experience grid", "",
              f"{'Quick scale; ' if o.quick else ''}K = {o.iterations} rounds, extractor {o.extractor}, seed {o.seed}, "
              f"budget {o.budget} tokens, max_turns {o.max_turns}; wall time of this invocation {wall:.0f} s "
              "(rounds already finished were skipped; 'wall s' sums each cell's rounds as they ran).",
              "", f"Scale: {json.dumps({k: v for k, v in asdict(base_cfg).items() if k not in ('granularity', 'injection', 'regime', 'base')})}"]
    if not o.model:
        header += ["", MINIATURE_NOTE]
        if o.base:  # e.g. the demo's experience-reading base: the note's word on the built base's reading is not about it
            header += ["", f"Base: {base} (given with --base, not the one built here; measure its reading with learn.* and "
                           "heldout_with_experience in each cell's rounds.jsonl)."]
    table = write_report(out, results, walls, header)
    print(table)
    print(f"\nreport: {out / 'report.md'}; wall time {wall:.0f} s")
    return 0
