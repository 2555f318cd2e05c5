"""``se-gym demo``: the Open-Book paradox in miniature, offline on a CPU.

Stages (each saved under ``--out``; a rerun skips what is finished):

0. ``base/``: a tiny model built from scratch and pre-trained on the skill "read the doc, call
   the function it names" with functions and libraries the experiment never uses
   (see :mod:`se_gym.training.miniature`).  With ``--model`` this stage is the given model.
Per seed (a fresh library and question set each):

1. ``rollouts.json``: answers sampled WITH the docs on the train questions (temperature 0.6),
   judged by ``se_gym.judge``.
2. ``open_sft/``, ``closed_sft/``: SFT on the accepted answers, under the doc prompt (Open-SFT)
   or the query-only prompt (Closed-SFT), from the same base.
3. ``rl_clip/``, ``rl_noclip/``: Closed-RL (rollout with docs, update query-only) with and
   without PPO clipping.
4. ``eval.json``: closed-book accuracy on held-out questions about the same functions.

Then ``report.md``, ``results.json`` and ``plot.png`` in ``--out``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from . import metrics_log

# the miniature's scale and its bases live in their own room: bench, the experience grid and the
# benchmarks build the same bases without importing the demo (these names stay importable from here)
from .bases import (  # noqa: F401
    EXPERIENCE_EXTRA,
    QUICK,
    SMALL_BASE,
    SMALL_BASE_QUICK,
    DemoConfig,
    base_config,
    build_base,
    experience_base_config,
)
from .configs import add_config_arguments, config_from_args
from .errors import CLIError
from .llm.options import TRAINED_SAMPLERS, TRAINED_SAMPLERS_WHY, ModelOptions

log = logging.getLogger(__name__)


METHODS = ("base", "open_sft", "closed_sft", "rl_clip", "rl_noclip")
LABELS = {
    "base": "Base (no training)",
    "open_sft": "Open-SFT",
    "closed_sft": "Closed-SFT",
    "rl_clip": "Closed-RL, clipped",
    "rl_noclip": "Closed-RL, no clipping",
}


def _done(path: Path) -> bool:
    return (path / "DONE").is_file()


def _mark(path: Path, info: dict | None = None) -> None:
    from .storage import write_json_atomic

    write_json_atomic(path / "DONE", info or {})


def _log(msg: str) -> None:
    log.info(msg)


class Demo:
    def __init__(self, out: Path, config: DemoConfig, model: str | None = None, backend: str = "hf", device: str | None = None, progress: bool = True, rl: bool = True,
                 gpu_memory_utilization: float = 0.3, engine_options: dict | None = None):
        self.out, self.cfg, self.model_id, self.backend, self.device = out, config, model, backend, device
        self.progress, self.rl = progress, rl
        self.gpu_memory_utilization = gpu_memory_utilization
        self.engine_options = dict(engine_options or {})  # more options for the vLLM engine (dtype, max_model_len, ...)
        self._engine = None  # the run's one vLLM engine (--backend vllm), started on first use
        self._judges: list = []  # judges of the runners made and not yet released (each a sandbox pool)

    def close(self) -> None:
        """Release the judges' sandbox workers and the vLLM engine (its GPU memory) when the run is done."""
        while self._judges:
            self._judges.pop().close()
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def __enter__(self) -> "Demo":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def seed_config(self, seed: int) -> dict:
        """What makes a seed's results (presentation such as threads and progress left out)."""
        cfg = {k: v for k, v in asdict(self.cfg).items() if k != "threads"}
        return {"seed": seed, "demo": cfg, "model": self.model_id, "backend": self.backend}

    def bind(self, seeds, restart: bool = False) -> None:
        """Bind the base and every seed folder to this configuration before any work: a folder made
        with another one (``--quick`` then the full demo, say) is refused naming the differences, or
        with ``restart`` discarded and redone (and the demo says so)."""
        from .storage import RunDir

        folders = ([] if self.model_id else [(self.out / "base", "demo-base", self.base_config())])
        folders += [(self.out / f"seed{s}", "demo-seed", self.seed_config(s)) for s in seeds]
        for path, kind, config in folders:
            if restart and path.exists():
                _log(f"[restart] discarding {path} and redoing it")
            RunDir(path, kind, config, restart=restart)

    # -- stage 0 --------------------------------------------------------------------------
    def base(self) -> Path:
        """The base model's path: ``--model``, or the miniature's base built under ``OUT/base`` (se_gym.bases)."""
        if self.model_id:
            return Path(self.model_id)
        return build_base(self.out / "base", self.cfg, device=self.device, progress=self.progress)

    def base_config(self) -> dict:
        return base_config(self.cfg)

    # -- per seed ---------------------------------------------------------------------------
    def world(self, seed: int):
        from .bases import miniature_world

        library, functions, train, test = miniature_world(seed, self.cfg)
        if self.model_id:  # the real experiment: the built-in suite's questions about these functions
            from .tasks import builtin_tasks

            train = builtin_tasks("train", seed=100 + seed, library=library, functions=functions)
            test = builtin_tasks("single_test", seed=100 + seed, library=library, functions=functions)
            return library, functions, list(train), list(test)
        return library, functions, train, test

    def runner(self, library, functions):
        from .agents import JudgeScorer, Runner
        from .judge.core import Judge
        from .training import miniature as mini

        judge = Judge(library, profile="sebench")
        self._judges.append(judge)
        if not getattr(self, "_isolation_said", False):  # the isolation in force, once, at the start
            from .sandbox.base import isolation_line

            _log(f"[judge] {isolation_line(judge.sandbox)}")
            self._isolation_said = True
        if self.model_id:
            from .agents import default_renderer

            return Runner(JudgeScorer(judge), default_renderer(library), progress=self.progress)

        def render(task, book):
            prompt = mini.render(library, task, book, functions)
            docs = tuple(line for line in prompt.splitlines() if line.startswith(f"{library.package}.")) if book == "open" else ()
            return prompt, docs

        return Runner(JudgeScorer(judge), render, progress=self.progress)

    def release(self, runner) -> None:
        """Close the judge of a runner made by :meth:`runner` (its sandbox workers): a run then
        holds one seed's workers at a time, not one pool per seed."""
        judge = runner.scorer.judge
        judge.close()
        if judge in self._judges:
            self._judges.remove(judge)

    def policy(self, path: Path):
        from .training.policy import Policy

        # the tiny model stays float32 on a GPU too, so its numbers match the CPU run's
        return Policy.from_pretrained(path, device=self.device, **({} if self.model_id else {"dtype": "float32"}))

    @property
    def precision(self) -> str:
        return "auto" if self.model_id else "no"

    def sampler(self, policy):
        """In-process sampling for hf (None); for ``--backend vllm`` the run's one engine, loaded with
        ``policy``'s weights now and after each of its updates (every stage shares the engine, which
        holds ``gpu_memory_utilization`` of the GPU next to the policy being trained)."""
        if self.backend != "vllm":
            return None
        from .training.rl import GeneratorSampler

        if self._engine is None:
            from .llm import make_generator

            path = self.model_id or self.out / "base" / "model"
            options = {} if self.model_id else {"dtype": "float32"}  # the tiny model stays float32, as in training
            options.update(self.engine_options)
            self._engine = make_generator("vllm", str(path), gpu_memory_utilization=self.gpu_memory_utilization, **options)
        return GeneratorSampler(self._engine, model=policy.model)

    def run_seed(self, seed: int, base_path: Path) -> dict:
        from .storage import RunDir

        sdir = self.out / f"seed{seed}"

        RunDir(sdir, "demo-seed", self.seed_config(seed))  # a seed made with another configuration is refused
        library, functions, train, test = self.world(seed)
        runner = self.runner(library, functions)
        try:
            return self._run_seed(seed, base_path, sdir, runner, library, functions, train, test)
        finally:
            self.release(runner)

    def _run_seed(self, seed: int, base_path: Path, sdir: Path, runner, library, functions, train, test) -> dict:
        from .agents import PolicyAgent, RLAgent, SFTAgent, Trajectory
        from .training.rl import RLConfig
        from .training.sft import SFTConfig

        cfg = self.cfg
        results_path = sdir / "eval.json"
        if results_path.is_file():
            saved = json.loads(results_path.read_text())
            if not self.rl or all(m in saved["methods"] for m in METHODS):  # an eval without RL is redone when RL is asked
                return saved

        # 1. rollouts with the docs
        roll_path = sdir / "rollouts.json"
        if roll_path.is_file():
            saved = json.loads(roll_path.read_text())
            obs = runner.observe(train, "open")
            by_id = {o.task.id: o for o in obs}
            trajs = [Trajectory(by_id[r["task"]], r["response"], r["reward"], r["status"]) for r in saved]
        else:
            _log(f"[seed {seed}] sampling {cfg.samples} answers per train question with the docs (T=0.6)")
            pol = self.policy(base_path)
            sampler_agent = PolicyAgent(pol, book="open", temperature=0.6, max_new_tokens=cfg.max_new_tokens, sampler=self.sampler(pol))
            obs = [o for o in runner.observe(train, "open") for _ in range(cfg.samples)]
            trajs = runner.rollout(sampler_agent, obs)
            from .storage import write_json_atomic

            write_json_atomic(roll_path, [{"task": t.observation.task.id, "response": t.response, "reward": t.reward, "status": t.status} for t in trajs])
        accepted = sum(t.judged and t.reward >= 1 for t in trajs)
        infra = sum(not t.judged for t in trajs)
        _log(f"[seed {seed}] {accepted}/{len(trajs) - infra} judged answers accepted"
             + (f"; {infra} not judged (sandbox failures, left out)" if infra else ""))

        # 2. Open-SFT and Closed-SFT from the same base on the same accepted answers
        sft_cfg = SFTConfig(learning_rate=cfg.sft_lr, epochs=cfg.sft_epochs, batch_size=cfg.sft_batch, warmup_ratio=0.1, seed=seed, mixed_precision=self.precision)
        for mode in ("open", "closed"):
            mdir = sdir / f"{mode}_sft"
            if _done(mdir):
                continue
            _log(f"[seed {seed}] {mode.capitalize()}-SFT on {accepted} accepted answers")
            agent = SFTAgent(self.policy(base_path), mode=mode, config=sft_cfg, progress=self.progress)
            metrics_log.set_run(f"seed{seed}/{mode}_sft")
            metrics = agent.learn(trajs)
            agent.policy.save(mdir / "model")
            _mark(mdir, metrics)

        # 3. Closed-RL with and without clipping
        if self.rl:
            for name, clip in (("rl_clip", True), ("rl_noclip", False)):
                mdir = sdir / name
                if _done(mdir):
                    continue
                _log(f"[seed {seed}] Closed-RL ({'clipped' if clip else 'no clipping'}), {cfg.rl_iterations} iterations")
                rl_cfg = RLConfig(learning_rate=cfg.rl_lr, group_size=cfg.rl_group, ppo_epochs=cfg.rl_ppo_epochs, minibatch_size=32, clip=clip,
                                  clip_eps=0.2, normalize_advantages=True, temperature=1.0, max_new_tokens=cfg.max_new_tokens, seed=seed,
                                  mixed_precision=self.precision)
                pol = self.policy(base_path)
                agent = RLAgent(pol, mode="closed", config=rl_cfg, sampler=self.sampler(pol))
                metrics_log.set_run(f"seed{seed}/{name}")
                history = runner.train(agent, train, iterations=cfg.rl_iterations, samples_per_task=cfg.rl_group, checkpoint_dir=mdir / "run", seed=seed)
                agent.policy.save(mdir / "model")
                _mark(mdir, {"history": history})

        # 4. closed-book evaluation on held-out questions (and on the train questions)
        results: dict = {"seed": seed, "library": library.id, "functions": functions, "n_test": len(test), "n_train": len(train), "methods": {}}
        for method in METHODS:
            if method.startswith("rl") and not self.rl:
                continue
            path = base_path if method == "base" else sdir / method / "model"
            agent = PolicyAgent(self.policy(path), book="closed", temperature=0.0, max_new_tokens=cfg.max_new_tokens)
            row = {"closed_test": runner.evaluate(agent, test, "closed").accuracy, "closed_train": runner.evaluate(agent, train, "closed").accuracy}
            if method in ("base", "open_sft"):
                row["open_test"] = runner.evaluate(agent, test, "open").accuracy
            results["methods"][method] = row
            _log(f"[seed {seed}] {LABELS[method]}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()))
        from .storage import write_json_atomic

        write_json_atomic(results_path, results)
        return results


def summarize(per_seed: list[dict]) -> dict:
    from .accuracy import seed_table

    return seed_table(per_seed, METHODS)


def verdicts(table: dict, n_seeds: int) -> list[str]:
    """Plain-language checks of the paper's findings in this run (honest either way)."""
    out = []
    o, c = table.get("open_sft"), table.get("closed_sft")
    if o and c:
        wins = sum(cv > ov for cv, ov in zip(c["closed_test"]["per_seed"], o["closed_test"]["per_seed"]))
        ok = wins == n_seeds and c["closed_test"]["mean"] - o["closed_test"]["mean"] >= 0.2
        out.append(f"Open-Book paradox (Closed-SFT > Open-SFT closed book, every seed): {'REPRODUCED' if ok else 'NOT reproduced'} "
                   f"({c['closed_test']['mean']:.2f} vs {o['closed_test']['mean']:.2f}; Closed-SFT ahead on {wins}/{n_seeds} seeds)")
    rc, rn = table.get("rl_clip"), table.get("rl_noclip")
    if rc and rn:
        ok = rn["closed_test"]["mean"] - rc["closed_test"]["mean"] >= 0.1  # a clear gap, not noise
        out.append(f"Clipping blocks internalization (Closed-RL without clipping > with): {'REPRODUCED' if ok else 'NOT reproduced'} "
                   f"({rn['closed_test']['mean']:.2f} vs {rc['closed_test']['mean']:.2f})")
    return out


def render_table(table: dict) -> str:
    cols = [("closed_test", "closed book, held-out"), ("closed_train", "closed book, train questions"), ("open_test", "open book, held-out")]
    lines = ["| method | " + " | ".join(c[1] for c in cols) + " |", "|---|" + "---|" * len(cols)]
    for method, row in table.items():
        cells = []
        for key, _ in cols:
            if key in row:
                cells.append(f"{row[key]['mean']:.2f} ± {row[key]['sd']:.2f} (" + ", ".join(f"{v:.2f}" for v in row[key]["per_seed"]) + ")")
            else:
                cells.append("–")
        lines.append(f"| {LABELS[method]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(table: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    methods = list(table)
    means = [table[m]["closed_test"]["mean"] for m in methods]
    sds = [table[m]["closed_test"]["sd"] for m in methods]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.bar([LABELS[m] for m in methods], means, yerr=sds, capsize=4, color=["#999", "#e08a3c", "#3c7be0", "#b05050", "#50a050"][: len(methods)])
    ax.set_ylabel("closed-book accuracy (held-out)")
    ax.set_ylim(0, 1)
    ax.set_title("se-gym demo: what survives without the docs")
    plt.setp(ax.get_xticklabels(), rotation=15, ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


@dataclass(frozen=True)
class DemoOptions(ModelOptions):
    """What ``se-gym demo`` runs (flags, or a ``--config`` TOML/JSON file with these keys); the
    model's scale is :class:`DemoConfig`, chosen from these by :func:`demo_config`.  ``--model`` and
    ``--backend`` are :class:`~se_gym.llm.options.ModelOptions`' (no model: the tiny pre-trained base;
    answers are sampled by hf in the training process, or by one vLLM engine per run that receives the
    weights after every update)."""

    seeds: tuple[int, ...] = field(default=(0, 1, 2), metadata={"help": "experiment seeds"})
    gpu_memory_utilization: float = field(default=0.3, metadata={
        "help": "with --backend vllm: share of GPU memory for the engine; the rest stays for the policy being "
                "trained on the same GPU"})
    device: str | None = field(default=None, metadata={"help": "torch device (None: cuda if available, else cpu)"})
    base: str = field(default="auto", metadata={
        "help": "the tiny base: small (hidden 64, minutes on a CPU, reads docs part of the time), wide "
                "(hidden 256, reads every doc, hours on a CPU) or experience (small, pre-trained also on reading "
                "retrieved experience; see docs/results.md); auto: small for the plain demo on a CPU, else wide",
        "choices": ("auto", "small", "wide", "experience")})
    quick: bool = field(default=False, metadata={"help": "a smaller run (a few minutes; the effect is weaker)"})
    rl: bool = field(default=True, metadata={"help": "the two RL runs (--no-rl skips them)"})
    rl_ablation: bool = field(default=False, metadata={
        "help": "SE-Bench's RL ablation grid (clip / advantage / LR / batch, Closed-SFT and SFT->RL) on the demo's base; "
                "results in OUT/ablation (see se_gym/demo_ablation.py)"})
    selfplay: bool = field(default=False, metadata={
        "help": "self-play in miniature: base, Closed-SFT on curated tasks, Closed-SFT-Self-Play, Self-Play RL, the policy "
                "proposing every round; results in OUT/selfplay (see se_gym/selfplay/experiment.py and docs/selfplay.md)"})
    rounds: int | None = field(default=None, metadata={"help": "with --selfplay: self-play rounds (None: 6, --quick 3; more extend a finished run)"})
    setting: str | None = field(default=None, metadata={
        "help": "with --selfplay: which switches keep self-play going (plain, budget, mix, novelty, band, fresh, cool, checked; None: "
                "checked, the measured best; see docs/selfplay.md)",
        "choices": ("plain", "budget", "mix", "novelty", "band", "fresh", "cool", "checked")})
    ray_address: str | None = field(default=None, metadata={
        "help": "with --selfplay: run the self-play rounds on a Ray cluster ('auto' or HOST:PORT; None: in this process)"})
    variants: tuple[str, ...] | None = field(default=None, metadata={"help": "with --rl-ablation: only these variants (None: all)"})
    restart: bool = field(default=False, metadata={
        "help": "discard what OUT holds for this run (base and seeds; with --rl-ablation: OUT/ablation) and redo it; "
                "without it, a folder made with another configuration is refused"})
    rl_iterations: int | None = field(default=None, metadata={"help": "with --rl-ablation: RL iterations per variant (None: 10)"})
    report_only: bool = field(default=False, metadata={"help": "with --rl-ablation: train nothing, report the finished variants"})
    sampler: str = field(default="uniform", metadata={
        "help": "with --rl-ablation: the task sampler that picks each RL iteration's questions: uniform, learnability "
                "(by P(signal) of a group, se_gym/tasks/sampler.py) or module:Class; results in OUT/ablation-<sampler>..."})
    rl_tasks: int | None = field(default=None, metadata={
        "help": "with --rl-ablation: questions per RL iteration (None: every train question, so a sampler only orders them)"})
    rl_token_budget: int | None = field(default=None, metadata={
        "help": "with --rl-ablation: stop each RL run once its answers reach this many tokens (--rl-iterations is then the cap)"})
    jobs: int | None = field(default=None, metadata={
        "help": "with --rl-ablation: RL runs trained at once, each in its own process (None: one per CPU core, "
                "at most 8, for the tiny model; 1 with --model or --backend vllm)"})
    threads: int | None = field(default=None, metadata={"help": "torch CPU threads (None: 1)"})
    progress: bool = field(default=True, metadata={"help": "show progress bars"})

    def __post_init__(self) -> None:
        self.check_backend(CLIError, command="se-gym demo", runs=TRAINED_SAMPLERS, why=TRAINED_SAMPLERS_WHY)
        if any(s < 0 for s in self.seeds):
            raise CLIError("--seeds must be non-negative integers")
        if self.jobs is not None and self.jobs < 1:
            raise CLIError(f"--jobs must be >= 1, got {self.jobs}")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise CLIError(f"--gpu-memory-utilization must be in (0, 1], got {self.gpu_memory_utilization}")
        if self.rl_tasks is not None and self.rl_tasks < 1:
            raise CLIError(f"--rl-tasks must be >= 1, got {self.rl_tasks}")
        if self.rl_token_budget is not None and self.rl_token_budget < 1:
            raise CLIError(f"--rl-token-budget must be >= 1, got {self.rl_token_budget}")
        from .registry import RegistryError
        from .tasks.sampler import check_sampler

        try:
            check_sampler(self.sampler)
        except RegistryError as exc:
            raise CLIError(f"--sampler: {exc}") from None


def configure(parser: argparse.ArgumentParser) -> None:
    # (--out is a plain flag with its default: --log's folder is worked out from it before the command runs)
    parser.add_argument("--out", default="se_gym_demo", help="folder for models, results and the report (reruns resume; default: se_gym_demo)")
    add_config_arguments(parser, DemoOptions)
    metrics_log.add_flags(parser)
    parser.epilog = ("--model: none, the tiny pre-trained base; else a HF model id or path used as the base.  --backend: hf "
                     "samples in the training process; vllm, one engine per run that receives the weights after every update")
    parser.set_defaults(func=run)


def demo_config(args: "DemoOptions | argparse.Namespace", device: str) -> DemoConfig:
    """The model's scale that the options (or the parsed command line) ask for on ``device``."""
    if isinstance(args, argparse.Namespace):
        args = config_from_args(DemoOptions, args)
    if args.base == "experience" and not args.model:
        return replace(experience_base_config(args.quick), threads=args.threads or 1)
    cfg = QUICK if args.quick else DemoConfig()
    # auto: the plain demo and self-play on a CPU use the small base (minutes, not hours); the ablation
    # keeps the wide base its documented numbers were measured on
    small = args.base == "small" or (args.base == "auto" and device == "cpu" and not args.rl_ablation)
    if small and not args.model:
        cfg = replace(cfg, **(SMALL_BASE_QUICK if args.quick else SMALL_BASE))
    if args.model:  # a real model: paper-like learning rates and full-length answers
        cfg = replace(cfg, max_new_tokens=1024, sft_lr=1e-5, sft_epochs=3, sft_batch=8, rl_lr=1e-6, rl_group=8, rl_ppo_epochs=2)
    if args.threads:
        cfg = replace(cfg, threads=args.threads)
    return cfg


def selfplay_config(o: DemoOptions):
    """The self-play experiment's scale and setting for these options (``--quick``, ``--rounds``, ``--setting``)."""
    from .selfplay.experiment import QUICK as SP_QUICK
    from .selfplay.experiment import MiniSelfPlayConfig

    cfg = SP_QUICK if o.quick else MiniSelfPlayConfig()
    if o.rounds is not None:
        if o.rounds < 1:
            raise CLIError(f"--rounds must be >= 1, got {o.rounds}")
        cfg = replace(cfg, rounds=o.rounds)
    return replace(cfg, setting=o.setting) if o.setting else cfg


def selfplay_engines(o: DemoOptions):
    """With ``--ray-address``: a Ray engine for each self-play run (None: in this process)."""
    if not o.ray_address:
        return None

    def make(config):
        from .selfplay.ray_engine import RayEngine

        return RayEngine.from_config(config, address=o.ray_address)

    return make


def run(args: argparse.Namespace) -> int:
    o = config_from_args(DemoOptions, args)
    try:
        import torch
    except ImportError:
        raise CLIError("the demo needs torch and transformers: pip install 'se-gym[train,plot]'") from None
    # the RL runs are independent and seeded: in parallel they give what one process gives
    # (a real --model or a vLLM engine: one process, the model would be loaded once per process)
    jobs = o.jobs or (1 if o.backend != "hf" or o.model else max(1, min(os.cpu_count() or 1, 8)))
    device = o.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cfg = demo_config(o, device)
    torch.set_num_threads(cfg.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    if o.selfplay:  # its own stage: the demo's base, pre-trained also on writing tasks from docs
        from .selfplay.experiment import run as run_selfplay
        from .selfplay.miniature import PROPOSE_CORPUS, PROPOSE_SHARE

        sp_demo = Demo(out / "selfplay", replace(cfg, pretrain_extra=((PROPOSE_CORPUS, PROPOSE_SHARE),)), device=o.device,
                       progress=o.progress, rl=False)
        sp_demo.bind([], restart=o.restart)
        return run_selfplay(out / "selfplay", o.seeds, base=sp_demo.base(), quick=o.quick, progress=o.progress,
                            restart=o.restart, device=o.device, config=selfplay_config(o), engine_factory=selfplay_engines(o))
    if o.rl_ablation:  # its own stage: the demo's two RL runs are part of the grid (rl_std, rl_noclip)
        from . import demo_ablation as abl

        acfg = abl.QUICK_ABLATION if o.quick else abl.AblationConfig()
        if o.model:
            acfg = replace(abl.REAL_ABLATION, max_new_tokens=cfg.max_new_tokens)
        if o.variants:
            acfg = replace(acfg, variants=tuple(o.variants))
        if o.rl_iterations:
            acfg = replace(acfg, iterations=o.rl_iterations)
        with Demo(out, cfg, model=o.model, backend=o.backend, device=o.device, progress=o.progress, rl=False,
                  gpu_memory_utilization=o.gpu_memory_utilization) as demo:  # the vLLM engine is released on the way out
            demo.bind(o.seeds)  # the base and seeds it reuses must be this configuration's (--restart redoes OUT/ablation only)
            if o.sampler != acfg.sampler or o.rl_tasks or o.rl_token_budget:
                # a subset per iteration: evaluate about as often per answer as the full grid does
                every = max(1, len(demo.world(o.seeds[0])[2]) // o.rl_tasks) if o.rl_tasks else 1
                acfg = replace(acfg, sampler=o.sampler, tasks_per_iteration=o.rl_tasks, token_budget=o.rl_token_budget, eval_every=every)
            return abl.run(demo, o.seeds, acfg, restart=o.restart, report_only=o.report_only, jobs=jobs)
    with Demo(out, cfg, model=o.model, backend=o.backend, device=o.device, progress=o.progress, rl=o.rl,
              gpu_memory_utilization=o.gpu_memory_utilization) as demo:  # the vLLM engine is released on the way out
        demo.bind(o.seeds, restart=o.restart)  # refuse (or, --restart, redo) a folder made otherwise: before any work
        base = demo.base()
        per_seed = [demo.run_seed(s, base) for s in o.seeds]
    table = summarize(per_seed)
    checks = verdicts(table, len(o.seeds))
    wall = time.time() - t0
    md = render_table(table)
    report = [
        "# se-gym demo: the Open-Book paradox in miniature", "",
        f"Seeds {', '.join(map(str, o.seeds))}; base model: {o.model or 'tiny model pre-trained from scratch on doc reading'}; "
        f"wall time of this invocation {wall:.0f} s (stages already done were skipped).", "",
        "Accuracy (mean ± sd over seeds, then per seed). Closed book = query only, no docs.", "", md, "",
        *[f"- {c}" for c in checks], "",
        "Miniature: one-line questions and docs, single-call answers, a tiny model trained on CPU; "
        "see se_gym/training/miniature.py for what is shrunk and why.",
    ]
    (out / "report.md").write_text("\n".join(report) + "\n", encoding="utf-8")
    (out / "results.json").write_text(json.dumps({"config": asdict(cfg), "seeds": per_seed, "summary": table, "checks": checks, "wall_s": wall}, indent=2))
    plotted = plot(table, out / "plot.png")
    print(md)
    print()
    for c in checks:
        print(c)
    print(f"\nreport: {out / 'report.md'}" + (f", plot: {out / 'plot.png'}" if plotted else "") + f"; wall time {wall:.0f} s")
    return 0
