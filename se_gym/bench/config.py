"""The benchmark's options (:class:`BenchConfig`, the CLI's flags) and the miniature's settings."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from ..judge.options import OfficialJudgeOptions
from ..llm.options import ModelOptions

BUILTIN_QUICK = ("closed-book", "open-book", "expel", "memory", "doc-memory", "cheatsheet", "playbook", "closed-sft", "closed-rl",
                 "closed-sft-rl", "experience")
QUICK_UNSEEN = 3  # --quick: functions held out of train, asked about in the unseen-function split


@dataclass(frozen=True)
class BenchConfig(OfficialJudgeOptions, ModelOptions):
    """What ``se-gym bench`` runs; every field is a flag (``--field-name``) and a ``--config`` key.  The
    judge's options are :class:`~se_gym.judge.options.JudgeOptions`' (but ``--library``: the tasks name
    theirs), the agents' model :class:`~se_gym.llm.options.ModelOptions`' (``--quick`` without
    ``--model``: the miniature's small base)."""

    agent: tuple[str, ...] = field(default=(), metadata={"help": "an agent to benchmark (repeatable): a built-in name, "
                                   "module:Class, path/file.py:Class, an entry point of se_gym.agents, or http:URL"})
    agent_option: tuple[str, ...] = field(default=(), metadata={"help": "KEY=VALUE for every agent, or LABEL/KEY=VALUE for one "
                                          "(repeatable; VALUE parsed as JSON when it parses, else a string)"})
    agent_options: Mapping[str, Any] = field(default_factory=dict, metadata={"help": "config file only: {LABEL: {KEY: VALUE}}"})
    tasks: str = field(default="builtin", metadata={"help": "builtin (a library and tasks minted per seed), sebench:PATH "
                                                    "(the official names and files), or miniature (the demo's tasks; --quick)"})
    seeds: tuple[int, ...] = field(default=(0,), metadata={"help": "seeds: a minted library and task set each (builtin, miniature)"})
    learn_book: str = field(default="open", metadata={"help": "book the agents see on train tasks in the learn phase",
                                                      "choices": ("open", "closed")})
    learn_passes: int = field(default=1, metadata={"help": "passes over the train split in the learn phase"})
    learn_samples: int = field(default=1, metadata={"help": "answers per train task per pass (judged: execution feedback)"})
    samples: int = field(default=1, metadata={"help": "answers per test task (pass@k is reported for k up to this)"})
    batch_size: int = field(default=8, metadata={"help": "observations per act() call; the unit a rerun resumes at"})
    limit: int | None = field(default=None, metadata={"help": "only the first N tasks of each split"})
    online: bool = field(default=False, metadata={"help": "the online setting: memory may change during the test phase "
                                                  "(reported in its own column instead of flagged)"})
    orders: int | None = field(default=None, metadata={"help": "with --online: the test stream in this many orders (the first as "
                                                    "listed, the others shuffled), each from the frozen save; the spread is reported "
                                                    "(default 3 with --online, else 1)"})
    stability: bool = field(default=False, metadata={"help": "after the test, each learner learns a second, independently minted "
                                                     "library and is tested again closed book on the first: retention and forgetting"})
    unseen: int | None = field(default=None, metadata={"help": "library functions held out of train (N): the test questions on "
                                                       "functions no train task uses are reported apart (default 0; --quick 3)"})
    season: str | None = field(default=None, metadata={"help": "a season: the libraries are minted from a seed derived from this "
                                                       "SECRET (or env:NAME, file:PATH), which never reaches the agents or the report; "
                                                       "a publishable report is written (see se-gym bench verify)"})
    price_prompt: float | None = field(default=None, metadata={"help": "US dollars per million prompt tokens (the cost column)"})
    price_completion: float | None = field(default=None, metadata={"help": "US dollars per million generated tokens (the cost column)"})
    quick: bool = field(default=False, metadata={"help": "CPU, offline: the demo's tiny base, a fresh minted library, "
                                                 "every built-in that runs on a CPU unless --agent is given, 3 functions held out (--unseen)"})
    out: str = field(default="se_gym_bench", metadata={"help": "run folder (a rerun resumes; another configuration is refused)"})
    restart: bool = field(default=False, metadata={"help": "discard what --out holds and start again"})
    device: str | None = field(default=None, metadata={"help": "torch device for hf models (default: cuda if available)"})
    gpu_memory_utilization: float = field(default=0.5, metadata={"help": "with --backend vllm: share of GPU memory for the engine"})
    progress: bool = field(default=True, metadata={"help": "progress bars"})

    def __post_init__(self):
        if self.orders is None:
            object.__setattr__(self, "orders", 3 if self.online else 1)
        for name in ("learn_passes", "learn_samples", "samples", "batch_size", "orders"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be >= 1, got {self.limit}")
        if any(s < 0 for s in self.seeds):
            raise ValueError("seeds must be non-negative integers")
        if self.unseen is not None and self.unseen < 0:
            raise ValueError(f"unseen must be >= 0, got {self.unseen}")
        if self.orders > 1 and not self.online:
            raise ValueError("orders > 1 needs --online: a frozen agent answers every order alike (each batch from the frozen save)")
        if self.season is not None and not self.season.strip():
            raise ValueError("season needs a secret (a string, env:NAME or file:PATH)")
        if self.library is not None:
            raise ValueError("se-gym bench takes no library: each seed's tasks bring theirs (builtin and miniature mint one, "
                             "sebench:PATH reads the api_doc.jsonl beside them)")
        self.check_judge_flags(ValueError)
        self.check_backend(ValueError)

    def run_config(self) -> dict:
        """What makes the results (the run folder is bound to it); presentation left out, and a season's
        secret replaced by its commitment (the run folder never holds the secret).  The settings added
        after the first release appear only when set, so older run folders still resume."""
        skip = {"out", "restart", "progress", "device", "gpu_memory_utilization", "agent", "agent_option", "agent_options", "seeds",
                "price_prompt", "price_completion", "season"}
        out = {k: v for k, v in self.__dict__.items() if k not in skip}
        for name, default in (("orders", 1), ("stability", False), ("unseen", None), ("sandbox_option", ()), ("library", None),
                              ("wall_s", None), ("cpu_s", None), ("memory_mb", None)):
            if out[name] == default:
                del out[name]
        if self.season is not None:
            from .season import commitment

            out["season"] = commitment(self.season)
        return out

    @property
    def held_out(self) -> int:
        """Functions held out of train (``unseen``; 0 when not given)."""
        return self.unseen or 0


def bench_demo_config():
    """The demo configuration of ``--quick``: the demo's small base at the quick scale, pre-trained also
    on reading retrieved experience (:func:`se_gym.bases.experience_base_config`), so the memory
    built-ins have a base that can use what they retrieve; the miniature's sizes.
    """
    from ..bases import experience_base_config

    return experience_base_config(quick=True)


def quick_agent_options(demo) -> dict[str, dict]:
    """Per built-in options for the tiny base (answers are one short line; greedy at test time).

    The memory built-ins show what they retrieve in the layouts the base was pre-trained on: past
    problems with their accepted answers in the shared memory layout, at most two (the pre-training
    shows 1-2, within the model's 256 positions); remembered docs as the open-book ``Docs:`` section.

    Args:
        demo: the demo's configuration (its answer length and sampling).
    """
    short = {"max_new_tokens": demo.max_new_tokens}
    sft = {"epochs": demo.sft_epochs, "learning_rate": demo.sft_lr, "batch_size": demo.sft_batch, "mixed_precision": "no"}
    rl = {"learning_rate": demo.rl_lr, "ppo_epochs": demo.rl_ppo_epochs, "minibatch_size": 32,
          "mixed_precision": "no"}
    return {
        "closed-book": short, "open-book": short,
        "expel": {**short, "k": 2, "k_insights": 1},  # one insight below them: prompts within 256 positions
        "memory": {**short, "k": 2, "use_docs": False},  # past solutions only, as the pre-training shows them
        "doc-memory": {**short, "k": 1, "header": "Docs:\n"},  # the layout the tiny base read docs in
        "closed-sft": {**short, **sft, "temperature": 0.6},
        # the curated memories show their lines as the Docs: section the experience base read lessons in (1-3 lines)
        "cheatsheet": {**short, "k": 2, "header": "Docs:\n"},
        # no pitfall lines: the tiny base copies the call of any line it is shown, and a pitfall names a wrong one
        "playbook": {**short, "k": 2, "k_pitfalls": 0, "header": "Docs:\n"},
        "closed-rl": {**short, **rl, "iterations": demo.rl_iterations},
        "closed-sft-rl": {**short, **rl, "rl_iterations": demo.rl_iterations - 1, "sft_epochs": demo.sft_epochs,
                          "sft_learning_rate": demo.sft_lr, "sft_batch_size": demo.sft_batch},
        "experience": {**short, **sft, "iterations": 2, "k": 2, "header": "Docs:\n", "temperature": 0.6},
    }


def quick(config: BenchConfig) -> BenchConfig:
    """``config`` with what ``--quick`` implies: the miniature's tasks on hf, every built-in that runs on
    a CPU unless agents were given, at least the demo's answers per train question (4), and
    :data:`QUICK_UNSEEN` functions held out unless ``unseen`` was given.

    Args:
        config: the configuration as given.
    """
    demo = bench_demo_config()
    return replace(config, agent=config.agent or BUILTIN_QUICK, tasks="miniature", backend="hf",
                   learn_samples=max(config.learn_samples, demo.samples), unseen=QUICK_UNSEEN if config.unseen is None else config.unseen)


__all__ = ["BUILTIN_QUICK", "QUICK_UNSEEN", "BenchConfig", "bench_demo_config", "quick", "quick_agent_options"]
