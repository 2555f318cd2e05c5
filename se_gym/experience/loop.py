"""Iterated experience internalization: K rounds per cell, and the 2 x 2 x 2 grid of cells.

One round of a cell (granularity x injection x regime), on the miniature world
(:mod:`se_gym.experience.miniworld`):

1. **episodes**: the current model answers the round's *new* train tasks (``samples`` episodes each,
   up to ``max_turns`` answers with execution feedback), with the experience gathered so far injected;
2. **extract**: the extractor of the cell's granularity turns them into experience, merged into the bank;
3. **internalize**: off-policy (teacher episodes *with* the bank's experience, SFT of the accepted
   answers under the prompt *without* it) or on-policy (the student's own episodes without
   experience, scored by the frozen model with it; per-token KL);
4. **evaluate** closed book (no docs, no experience, greedy, one answer) on the held-out questions of
   every round's functions and on each round's train tasks so far (retention); a round whose held-out
   accuracy is below the previous round's is flagged ``collapse``.

Every round is a stage of a :class:`se_gym.storage.RunDir` (model, bank, episodes, ``round.json``,
``DONE``): a rerun after ``kill -9`` resumes at the first unfinished round.  ``rounds.jsonl`` holds one
line per finished round.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .. import metrics_log
from ..errors import CLIError
from .extract import EXTRACTORS
from .inject import INJECTIONS
from .regimes import REGIMES

log = logging.getLogger(__name__)

GRID_GRANULARITIES = ("instance", "principle")
GRID_INJECTIONS = ("global", "stepwise")


@dataclass(frozen=True)
class CellConfig:
    """One cell of the grid and the scale of its rounds (everything that changes results)."""

    granularity: str = "principle"
    injection: str = "stepwise"
    regime: str = "offpolicy"
    iterations: int = 3
    extractor: str = "deterministic"
    seed: int = 0
    functions_per_round: int = 3
    train_per_function: int = 3
    test_per_function: int = 2
    max_turns: int = 2
    samples: int = 4  # episodes per train task
    temperature: float = 0.6
    budget: int = 64  # tokens of experience per prompt
    max_new_tokens: int = 32
    sft_epochs: int = 40  # few accepted answers a round: the tiny model needs many passes to learn new names
    sft_lr: float = 3e-3
    sft_batch: int = 8
    onpolicy_steps: int = 8
    onpolicy_lr: float = 1e-3
    onpolicy_samples: int = 2  # student episodes per train task and step
    onpolicy_estimator: str = "full"
    teacher: str = "self"  # off-policy teacher: the model itself with experience, or "reader" (miniworld.ReaderTeacher)
    world: str = "mini"  # "mini": the demo's miniature; "builtin": the built-in SE-Bench-style suite (a real model)
    backend: str = "hf"  # sampling: "hf" (in-process) or "vllm" (an engine per round, weights pushed after training)
    base: str = ""  # the base model (path); filled by the runner

    def __post_init__(self):
        from .records import GRANULARITIES

        for name, value, choices in (("granularity", self.granularity, GRANULARITIES), ("injection", self.injection, INJECTIONS),
                                     ("regime", self.regime, REGIMES), ("extractor", self.extractor, EXTRACTORS)):
            if value not in choices:
                raise CLIError(f"--{name} must be one of {', '.join(choices)}, got {value!r}")
        if self.iterations < 1:
            raise CLIError(f"--iterations must be >= 1, got {self.iterations}")
        if self.world not in ("mini", "builtin") or self.backend not in ("hf", "vllm"):
            raise CLIError(f"world must be mini or builtin and backend hf or vllm, got {self.world!r}, {self.backend!r}")
        if self.teacher == "reader" and self.world != "mini":
            raise CLIError("--teacher reader reads the miniature's prompts only")
        if self.teacher not in ("self", "reader"):
            raise CLIError(f"--teacher must be self or reader, got {self.teacher!r}")
        if self.max_turns < 1 or self.samples < 1 or self.budget < 1:
            raise CLIError("max_turns, samples and budget must be >= 1")
        if self.onpolicy_steps < 1 or self.onpolicy_lr <= 0:
            raise CLIError(f"--onpolicy-steps must be >= 1 and --onpolicy-lr > 0, got {self.onpolicy_steps}, {self.onpolicy_lr}")

    @property
    def name(self) -> str:
        return f"{self.granularity}-{self.injection}-{self.regime}"


# the quick grid: 2 new functions a round, few samples, many cheap passes over few examples
QUICK = dict(functions_per_round=2, train_per_function=2, test_per_function=2, samples=2, sft_epochs=100, sft_lr=3e-3, onpolicy_steps=4, onpolicy_samples=1)


def _log(msg: str) -> None:
    log.info(msg)


class Cell:
    """Runs the rounds of one cell in ``out`` (resumable)."""

    def __init__(self, out: Path, config: CellConfig, *, generator=None, device: str | None = None, progress: bool = True, restart: bool = False):
        from ..storage import RunDir

        if not config.base:
            raise CLIError("the cell needs a base model (config.base)")
        self.cfg, self.generator, self.device, self.progress = config, generator, device, progress
        self.run = RunDir(out, "experience", asdict(config), restart=restart)
        self.out = self.run.path

    # -- pieces -------------------------------------------------------------------------------------
    def world(self):
        from . import miniworld as mw

        c = self.cfg
        if c.world == "builtin":
            return builtin_world(c.seed, c.iterations, c.functions_per_round, c.train_per_function, c.test_per_function)
        return mw.world(c.seed, c.iterations, c.functions_per_round, c.train_per_function, c.test_per_function)

    def views(self, library):
        """(docs, prompter) of the world."""
        from . import miniworld as mw
        from .episodes import SEBenchPrompter
        from .extract import DocSource

        if self.cfg.world == "builtin":
            return DocSource(library), SEBenchPrompter(library)
        return mw.mini_docs(library), mw.MiniPrompter()

    def sampler(self, policy, path: Path):
        from ..training.rl import PolicySampler

        if self.cfg.backend != "vllm":
            return PolicySampler(policy), None
        from ..llm import make_generator
        from ..training.rl import GeneratorSampler

        gen = make_generator("vllm", str(path))
        return GeneratorSampler(gen), gen

    def extractor(self, docs):
        from .extract import make_extractor

        return make_extractor(self.cfg.granularity, self.cfg.extractor, docs, generator=self.generator)

    def model_path(self, r: int) -> Path:
        return Path(self.cfg.base) if r < 0 else self.out / f"round{r}" / "model"

    def bank(self, r: int):
        from .extract import ExperienceBank

        path = self.out / f"round{r}" / "bank.jsonl"
        return ExperienceBank.from_jsonl(path.read_text(encoding="utf-8")) if r >= 0 and path.is_file() else ExperienceBank()

    # -- one round ----------------------------------------------------------------------------------
    def round(self, r: int) -> dict:
        import torch

        from ..judge import Judge
        from ..storage import hold_at, write_json_atomic, write_text_atomic
        from ..training.policy import Policy
        from . import miniworld as mw
        from .episodes import accuracy, run_episodes
        from .extract import LLMPrincipleExtractor, summarize
        from .inject import Injector, mean_injected, tokenizer_counter
        from .records import dump_jsonl
        from .regimes import offpolicy, onpolicy

        c = self.cfg
        hold_at(f"round{r}")
        t0 = time.time()
        stage = self.run.stage(f"round{r}")
        library, groups, train, test = self.world()
        docs, prompter = self.views(library)
        policy = Policy.from_pretrained(self.model_path(r - 1), device=self.device)
        sampler, engine = self.sampler(policy, self.model_path(r - 1))
        count = tokenizer_counter(policy.tokenizer)
        bank = self.bank(r - 1)
        judge = Judge(library, profile="sebench")
        torch.manual_seed(c.seed * 1_000_003 + r)

        def episodes(tasks, injector, samples, temperature, max_turns, tag, by=None):
            return run_episodes(by or sampler, tasks, library, injector, prompter, judge=judge, max_turns=max_turns, samples=samples,
                                temperature=temperature, max_new_tokens=c.max_new_tokens, iteration=r, model=str(self.model_path(r - 1)), id_prefix=tag)

        def injector(mode=None):
            return Injector(mode or c.injection, bank.items(), c.budget, count_tokens=count)

        try:
            # 1. fresh episodes on the new train tasks, with the experience gathered so far
            eps = episodes(train[r], injector(), c.samples, c.temperature, c.max_turns, "collect")
            # 2. extract
            extractor = self.extractor(docs)
            new = extractor.extract(eps, r, bank.items())
            added = bank.add(new, replace_principles=isinstance(extractor, LLMPrincipleExtractor))
            # 3. internalize
            inj = injector()
            metrics_log.set_run(f"{c.name}/round{r}")
            if c.regime == "offpolicy":
                from ..training.sft import SFTConfig

                by = mw.ReaderTeacher() if c.teacher == "reader" else None
                teacher = episodes(train[r], inj, 1 if by else c.samples, c.temperature, c.max_turns, "teacher", by=by)
                write_text_atomic(stage / "teacher.jsonl", dump_jsonl(teacher))
                learn = offpolicy(policy, teacher, prompter, SFTConfig(learning_rate=c.sft_lr, epochs=c.sft_epochs, batch_size=c.sft_batch,
                                                                       warmup_ratio=0.1, seed=c.seed * 31 + r), progress=self.progress)
                learn = {"accepted": learn.get("accepted", 0), "offered": learn.get("offered", 0), "final_loss": (learn.get("loss") or [None])[-1],
                         "teacher_accuracy": accuracy(teacher), "teacher_first_turn": accuracy(teacher, first_turn=True), "injected_per_turn": mean_injected(teacher)}
            else:
                from ..training.distill import OnPolicyConfig, OnPolicyDistiller

                distiller = OnPolicyDistiller(policy, OnPolicyConfig(learning_rate=c.onpolicy_lr, samples_per_prompt=1, temperature=1.0,
                                                                     max_new_tokens=c.max_new_tokens, batch_size=8, estimator=c.onpolicy_estimator,
                                                                     teacher="frozen", seed=c.seed * 31 + r))
                def student():
                    if engine is not None:  # on-policy: sample with the weights of the last update
                        engine.update_weights(policy.model.state_dict())
                    return episodes(train[r], Injector("none"), c.onpolicy_samples, 1.0, c.max_turns, "student")

                learn = onpolicy(distiller, student, inj, prompter, c.onpolicy_steps)
            if engine is not None:  # the engine samples with the weights just trained
                engine.update_weights(policy.model.state_dict())
            # 4. evaluate closed book, and (for reference) with the experience
            closed = Injector("none")
            held = episodes(test, closed, 1, 0.0, 1, "eval")
            retention = {f"round{j}": accuracy(episodes(train[j], closed, 1, 0.0, 1, "eval")) for j in range(r + 1)}
            with_exp = accuracy(episodes(test, inj, 1, 0.0, 1, "eval"))
        finally:
            judge.close()
            if engine is not None:
                engine.close()
        policy.save(stage / "model")
        write_text_atomic(stage / "bank.jsonl", bank.to_jsonl())
        write_text_atomic(stage / "episodes.jsonl", dump_jsonl(eps))
        info = {
            "round": r, "cell": c.name, "functions": groups[r], "train_tasks": len(train[r]), "episodes": len(eps),
            "episode_accuracy": accuracy(eps), "episode_first_turn": accuracy(eps, first_turn=True),
            "extracted": len(new), "bank_new": added, "bank": summarize(bank.items()),
            "learn": learn, "heldout_closed": accuracy(held), "heldout_with_experience": with_exp, "retention": retention,
            "wall_s": round(time.time() - t0, 1),
        }
        write_json_atomic(stage / "round.json", info)
        metrics_log.log({**info, **{f"retention/{k}": v for k, v in retention.items()}}, r, run=c.name)
        self.run.mark_done(f"round{r}", {"wall_s": info["wall_s"]})
        return info

    def rounds(self) -> list[dict]:
        """The finished rounds' records, with the collapse flags (computed, not stored)."""
        out = []
        for r in range(self.cfg.iterations):
            if not self.run.done(f"round{r}"):
                break
            out.append(json.loads((self.out / f"round{r}" / "round.json").read_text(encoding="utf-8")))
        return flag_collapse(out)

    def execute(self, stop_after: int | None = None) -> list[dict]:
        """Run the unfinished rounds (``stop_after``: at most that many rounds in total, for tests)."""
        from ..storage import write_text_atomic

        last = self.cfg.iterations if stop_after is None else min(stop_after, self.cfg.iterations)
        for r in range(last):
            if self.run.done(f"round{r}"):
                continue
            _log(f"[{self.cfg.name}] round {r + 1}/{self.cfg.iterations}")
            info = self.round(r)
            _log(f"[{self.cfg.name}] round {r + 1}: held-out closed book {info['heldout_closed']:.2f} "
                 f"(with experience {info['heldout_with_experience']:.2f}); retention " + ", ".join(f"{k} {v:.2f}" for k, v in info["retention"].items()))
        rows = self.rounds()
        write_text_atomic(self.out / "rounds.jsonl", "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))
        return rows


def builtin_world(seed: int, rounds: int, functions_per_round: int, train_per_function: int, test_per_function: int):
    """The built-in suite's single-function questions as rounds: ``(library, groups, per-round train
    tasks, held-out tasks)`` on disjoint function groups (for a real model; see ``--model``)."""
    import random

    from ..library import mint
    from ..tasks import builtin_tasks

    library = mint(seed)  # the built-in suite of seed s is written against library s
    train_all = [t for t in builtin_tasks("train", seed=seed, library=library) if len(t.functions) == 1]
    test_all = [t for t in builtin_tasks("single_test", seed=seed, library=library) if len(t.functions) == 1]
    have = sorted({t.functions[0] for t in train_all} & {t.functions[0] for t in test_all})
    need = rounds * functions_per_round
    if need > len(have):
        raise CLIError(f"{rounds} rounds x {functions_per_round} functions need {need} functions; the built-in suite has {len(have)}")
    chosen = random.Random(f"exp-builtin-{seed}").sample(have, need)
    groups = [sorted(chosen[r * functions_per_round : (r + 1) * functions_per_round]) for r in range(rounds)]
    per_round = [[t for k in g for t in [t for t in train_all if t.functions[0] == k][:train_per_function]] for g in groups]
    test = [t for g in groups for k in g for t in [t for t in test_all if t.functions[0] == k][:test_per_function]]
    return library, groups, per_round, test


def flag_collapse(rows: list[dict]) -> list[dict]:
    """``collapse``: held-out closed-book accuracy below the previous round's; ``forgot``: earlier
    rounds whose train-task accuracy fell since the previous round."""
    out = []
    for i, row in enumerate(rows):
        row = dict(row)
        prev = rows[i - 1] if i else None
        row["collapse"] = bool(prev and row["heldout_closed"] < prev["heldout_closed"])
        row["forgot"] = [k for k, v in row["retention"].items() if prev and k in prev["retention"] and v < prev["retention"][k]]
        out.append(row)
    return out


# -- the grid -----------------------------------------------------------------------------------------
def grid_cells(base: CellConfig, oracle: bool = False) -> list[CellConfig]:
    """The 2 x 2 x 2 cells; ``oracle`` adds the reference arm (the library's doc entries as experience,
    step-wise, both regimes)."""
    cells = [replace(base, granularity=g, injection=i, regime=r) for g in GRID_GRANULARITIES for i in GRID_INJECTIONS for r in REGIMES]
    if oracle:
        cells += [replace(base, granularity="oracle", injection="stepwise", regime=r) for r in REGIMES]
    return cells


def render_table(results: dict[str, list[dict]], walls: dict[str, float] | None = None) -> str:
    k = max((len(rows) for rows in results.values()), default=0)
    head = "| cell | " + " | ".join(f"round {r + 1}" for r in range(k)) + " | retention (mean, last round) | collapse | wall s |"
    lines = [head, "|---|" + "---|" * (k + 3)]
    for name, rows in results.items():
        cells = []
        for r in range(k):
            if r < len(rows):
                row = rows[r]
                cells.append(f"{row['heldout_closed']:.2f}" + (" ↓" if row.get("collapse") else ""))
            else:
                cells.append("–")
        last = rows[-1]["retention"] if rows else {}
        ret = f"{sum(last.values()) / len(last):.2f}" if last else "–"
        flags = ", ".join(f"r{row['round'] + 1}" for row in rows if row.get("collapse")) or "none"
        wall = f"{walls[name]:.0f}" if walls and name in walls else "–"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {ret} | {flags} | {wall} |")
    return "\n".join(lines)


def plot(results: dict[str, list[dict]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name, rows in results.items():
        xs = [row["round"] + 1 for row in rows]
        style = "-" if "principle" in name else "--"
        marker = "o" if "offpolicy" in name else "s"
        axes[0].plot(xs, [row["heldout_closed"] for row in rows], style, marker=marker, label=name)
        axes[1].plot(xs, [sum(row["retention"].values()) / len(row["retention"]) for row in rows], style, marker=marker, label=name)
    axes[0].set_title("closed book, held-out (all rounds' functions)")
    axes[1].set_title("closed book, train tasks of rounds so far (retention)")
    k = max((len(rows) for rows in results.values()), default=1)
    for ax in axes:
        ax.set_xticks(range(1, k + 1))
        ax.set_xlabel("round")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("accuracy")
    axes[1].legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(out: Path, results: dict[str, list[dict]], walls: dict[str, float], header: list[str]) -> str:
    from ..storage import write_json_atomic, write_text_atomic

    table = render_table(results, walls)
    plotted = plot(results, out / "curves.png")
    lines = [*header, "", "Closed-book accuracy on the held-out questions after each round (↓: below the previous round, flagged as collapse).", "",
             table, ""]
    if plotted:
        lines += ["![curves](curves.png)", ""]
    write_text_atomic(out / "report.md", "\n".join(lines) + "\n")
    write_json_atomic(out / "results.json", {"cells": results, "wall_s": walls})
    return table
