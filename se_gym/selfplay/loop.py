"""The self-play round loop: propose -> validate -> solve -> rewards -> learn -> evaluate.

Every round is a folder of ``--out`` (a :class:`se_gym.storage.RunDir` bound to the configuration);
each stage writes its file atomically and is skipped when the file is there, so ``kill -9`` at any
point and a rerun lose nothing and count nothing twice (the learner restarts a killed update from the
round's starting weights, which nothing before it changed)::

    round_001/propose.json    proposals (prompt, functions shown, text)
    round_001/validate.json   every outcome: the task, or the rejection reason
    round_001/solve.json      solver samples per task and book, with the judge's reward
    round_001/learn/          DONE (losses) and model/ (the weights after this round)
    round_001/eval.json       closed-book accuracy on the held-out suite
    round_001/buffer.jsonl    the task buffer after this round
    round_001/DONE            the round's summary (one line of log.jsonl)

``log.jsonl`` (one line per finished round, rewritten from the DONE files), ``plot.png`` and the
buffer exported as an SE-Bench suite (``suite/``) are derived from those files.

Regimes: ``sft`` (Closed-SFT on accepted open-book solutions, the query-only prompt as the
student's: :func:`se_gym.training.distill.offpolicy_examples`; the proposer is not trained),
``rl`` (one policy update on both roles with Absolute Zero's task-relative advantage, through
:class:`se_gym.training.rl.RLTrainer`), ``sft+rl`` (both).  Generation, validation and judging go
through an *engine*: :class:`LocalEngine` in this process, or the Ray engine
(:mod:`se_gym.selfplay.ray_engine`).
"""
from __future__ import annotations

import json
import logging
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import metrics_log
from ..errors import CLIError
from ..llm.options import ModelFlag
from ..sandbox.base import Limits
from ..sandbox.options import LibraryOption, LimitOptions
from ..storage import hold_at

logger = logging.getLogger(__name__)

REGIMES = ("sft", "rl", "sft+rl")


def _opt(default: Any, help: str, **meta: Any) -> Any:
    """A config field with its flag's help (``se_gym.configs.add_config_arguments``)."""
    return field(default=default, metadata={"help": help, **meta})


# self-play's own evaluation (not a task-suite kind): the miniature's held-out questions about the run's
# --functions, asked against the run's library (se_gym.selfplay.miniature.eval_tasks; the demo's self-play)
RUN_FUNCTIONS = "functions"
EVAL_KINDS = f"a task spec (builtin, builtin:SEED, sebench:PATH, miniature:SEED...), {RUN_FUNCTIONS} or none"
# old spellings of self-play's own values, from before `miniature` was a task-suite kind: old -> new
_OLD_EVAL = {"miniature": RUN_FUNCTIONS}
_OLD_SEED_TASKS = {"miniature": ""}  # (an empty buffer: the proposer writes from the docs alone)


# Which functions each round's proposals are about: name -> f(selfplay, n, round) -> n groups of catalogue
# keys.  A task-selection strategy is one more entry (``--curriculum NAME``).
CURRICULA: dict[str, Callable[[Any, int, int], list[tuple[str, ...]]]] = {
    "cover": lambda sp, n, r: sp.curriculum.draw(n, r - 1),
    "gap": lambda sp, n, r: sp.curriculum.prefer(n, r - 1, sp._function_rates(r)),
    # the task sampler's P(signal) per function (it also picks the buffer tasks that top a round up)
    "learnability": lambda sp, n, r: sp.curriculum.prefer(n, r - 1, sp._function_rates(r),
                                                          weights=sp._learnability(r).function_weights(sp.curriculum.keys)),
}


@dataclass(frozen=True)
class SelfPlayConfig(ModelFlag, LimitOptions, LibraryOption):
    """Everything that changes results (the run folder is bound to it).  Each field is also a flag
    of ``se-gym selfplay`` (``--field-name``) with the help text below.  The shared options:
    ``--model`` (the starting model, required; :class:`~se_gym.llm.options.ModelFlag`), ``--library``
    (the renamed library; None: ``seed:0``, the built-in evaluation's) and the limits of a proposal's
    reference run (``--wall-s``...; :mod:`se_gym.sandbox.options`)."""

    prompts: str = _opt("sebench", "prompt set: sebench (real models) or miniature (the miniature's layout, the one its tiny "
                                   "base is pre-trained on and the miniature task-suite kind is asked in: one-line docs, "
                                   "'Task: ...' questions)", choices=("sebench", "miniature"))
    regime: str = _opt("sft", "what learns: sft (Closed-SFT on accepted open-book answers), rl (both roles), sft+rl",
                       choices=REGIMES)
    rounds: int = _opt(3, "rounds to run (a finished run can be extended)")
    proposals: int = _opt(32, "tasks proposed per round")
    k: int = _opt(1, "functions shown per proposal (1: single-function tasks; >= 3: compositions)")
    functions: tuple[str, ...] = _opt((), "catalogue keys the curriculum draws from (empty: the whole library)")
    references: int = _opt(3, "earlier valid tasks shown to the proposer (Absolute Zero: 6)")
    min_inputs: int = _opt(8, "test inputs a valid proposal must have")
    samples: int = _opt(4, "solver samples per task and book")
    books: tuple[str, ...] = _opt(("open", "closed"), "books the solver answers in (sft needs open, rl closed)",
                                  choices=("open", "closed"))
    proposer_reward: str = _opt("gap", "proposer reward: gap (open minus closed solve rate), learnability or 4p1p")
    rate_book: str = _opt("closed", "the book whose solve rate the learnability and 4p1p rewards read")
    invalid_penalty: float = _opt(-1.0, "proposer reward of an invalid proposal")
    zero_reward: float = _opt(0.0, "proposer reward of a task nobody or everybody solves")
    min_tasks: int = _opt(8, "top each round's training tasks up from the buffer to this many")
    seed_tasks: str = _opt("", "the buffer's start: a folder in SE-Bench layout or a JSONL file (empty: none, the proposer "
                               "writes from the docs alone)")
    propose_temperature: float = _opt(1.0, "sampling temperature of the proposals")
    solve_temperature: float = _opt(0.6, "sampling temperature of the solver's answers")
    propose_max_tokens: int = _opt(1024, "longest proposal, in tokens")
    solve_max_tokens: int = _opt(1024, "longest solver answer, in tokens")
    sft_lr: float = _opt(1e-5, "learning rate of each round's SFT")
    sft_epochs: int = _opt(3, "epochs of each round's SFT")
    sft_batch: int = _opt(8, "batch size of each round's SFT")
    rl_lr: float = _opt(1e-6, "learning rate of each round's RL update")
    rl_ppo_epochs: int = _opt(1, "PPO epochs of each round's RL update")
    rl_minibatch: int = _opt(16, "minibatch size of each round's RL update")
    rl_clip: bool = _opt(True, "clip the RL update's ratio (PPO)")
    eval: str = _opt("builtin", f"held-out closed-book evaluation: {EVAL_KINDS} (a task spec, se_gym.tasks.spec; "
                                f"builtin: the library's own seed; {RUN_FUNCTIONS}: the miniature's held-out questions about "
                                "the run's --functions, against its library)")
    eval_split: str = _opt("single_test", "the split --eval reads (builtin and sebench)")
    eval_limit: int = _opt(64, "held-out tasks evaluated per round (0: all)")
    dedup_threshold: float = _opt(0.5, "similarity above which a proposal is a near-duplicate of a buffer task")
    seed: int = _opt(0, "seed of the curriculum, sampling and training")
    record_tokens: bool = _opt(False, "each round also writes its solver samples as token trajectories (round_NNN/trajectories.jsonl)")
    proposer: str = _opt("policy", "who writes the tasks: policy (the learner), frozen (the starting model throughout), "
                                   "model:PATH (a separate model), or your own ProposerAgent as module:Class or file.py:Class")
    rehearsal: float = _opt(0.0, "with --proposer policy: share of its own valid proposals in each SFT step, "
                                 "so solver training keeps its task writing (0 <= share < 1)")
    rehearsal_rounds: int = _opt(1, "rounds whose valid proposals --rehearsal draws from: 1 this round's, N the last N, 0 every round so far")
    curriculum: str = _opt("cover", "which functions each round's proposals are about: cover (every function in turn), gap "
                                    "(untried first, then by open- minus closed-book solve rate; compositions once all are learned) "
                                    "or learnability (the task sampler's P(signal) of a --samples group at the --rate-book solve rate, "
                                    "which also picks the buffer tasks that top a round up)",
                           choices=("cover", "gap", "learnability"))
    novelty: bool = _opt(False, "with --rehearsal: pick the proposals to rehearse by novelty (least like the others first, "
                                "functions balanced) instead of uniformly")
    rehearsal_samples: int = _opt(0, "with --rehearsal: the learn step first has the proposer write this many more tasks with the "
                                     "round's starting weights; the valid ones (same validator) join the proposals to rehearse "
                                     "(never solved, never in the buffer): a larger, fresh pool of its own writing to keep")
    replay_tasks: int = _opt(0, "earlier rounds' tasks (from the buffer) solved and trained on again in every round, so the solver "
                                "keeps what it learned")
    val_share: float = _opt(0.0, "share of the valid self-written tasks held out as a validation split (never trained on): the SFT "
                                 "step scores it closed book after every epoch and keeps the best epoch, or the round's starting "
                                 "weights when no epoch beats them (0: every --sft-epochs epoch, no validation)")
    patience: int = _opt(2, "with --val-share: epochs without a better validation score before the SFT step stops")
    propose_check: int = _opt(0, "with --val-share and the policy proposing: the early stopping keeps an epoch only when the "
                                 "policy, writing this many tasks from proposal prompts (never trained on) with the epoch's "
                                 "weights, gets at least as many valid (same validator, same sampling seed) as with the round's "
                                 "starting weights, or at least --propose-floor of them (0: no such check)")
    propose_floor: float = _opt(1.0, "with --propose-check: an epoch whose check is valid at least this often is kept even when "
                                     "the start's was higher (1.0: never below the start)")
    band_open: float = _opt(0.0, "band filter: a new task trains the solver (and its proposal is rehearsed) only when its "
                                 "open-book solve rate is at least this")
    band: tuple[float, ...] = _opt((0.0, 1.0), "band filter: ... and its closed-book solve rate lies in [LOW, HIGH] "
                                               "(a task the solver already knows closed book teaches nothing)")

    def __post_init__(self):
        # the shared options' None, resolved: the run folder binds the values, as folders bound before spell them
        if self.library is None:
            object.__setattr__(self, "library", "seed:0")
        if self.wall_s is None:
            object.__setattr__(self, "wall_s", Limits.wall_s)
        try:
            self.limits()
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        if self.regime not in REGIMES:
            raise CLIError(f"regime must be one of {', '.join(REGIMES)}, got {self.regime!r}")
        if self.rounds < 1 or self.proposals < 1 or self.samples < 1 or self.k < 1:
            raise CLIError("rounds, proposals, samples and k must be >= 1")
        if self.curriculum not in CURRICULA:
            raise CLIError(f"curriculum must be one of {', '.join(CURRICULA)}, got {self.curriculum!r}")
        if not 0.0 <= self.val_share < 1.0:
            raise CLIError(f"val_share is a share of the valid tasks: 0 <= val_share < 1, got {self.val_share}")
        if self.replay_tasks < 0 or self.patience < 1 or self.rehearsal_samples < 0 or self.propose_check < 0:
            raise CLIError("replay_tasks, rehearsal_samples and propose_check must be >= 0 and patience >= 1")
        if not 0.0 <= self.propose_floor <= 1.0:
            raise CLIError(f"propose_floor is a valid share: 0 <= propose_floor <= 1, got {self.propose_floor}")
        band = tuple(float(b) for b in self.band)
        if len(band) != 2 or not 0.0 <= band[0] <= band[1] <= 1.0 or not 0.0 <= self.band_open <= 1.0:
            raise CLIError(f"band is LOW HIGH with 0 <= LOW <= HIGH <= 1 and band_open in [0, 1], got {list(self.band)}, {self.band_open}")
        object.__setattr__(self, "band", band)
        if self.rehearsal_rounds < 0:
            raise CLIError(f"rehearsal_rounds must be >= 0 (0: every round so far), got {self.rehearsal_rounds}")
        if not 0.0 <= self.rehearsal < 1.0:
            raise CLIError(f"rehearsal is a share of the learn step's examples: 0 <= rehearsal < 1, got {self.rehearsal}")
        bad = [b for b in self.books if b not in ("open", "closed")]
        if bad or not self.books:
            raise CLIError(f"books must be a non-empty subset of open, closed, got {list(self.books)}")
        if "sft" in self.regime and "open" not in self.books:
            raise CLIError("the sft regime learns from open-book solutions: books must include open")
        if "rl" in self.regime and "closed" not in self.books:
            raise CLIError("the rl regime trains the closed-book solver: books must include closed")
        if self.proposer_reward == "gap" and set(self.books) != {"open", "closed"}:
            raise CLIError("the gap reward needs both books (books = open, closed)")
        from .rewards import ProposerReward

        try:
            ProposerReward(self.proposer_reward, self.rate_book, self.invalid_penalty, self.zero_reward)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        object.__setattr__(self, "functions", tuple(self.functions))
        object.__setattr__(self, "books", tuple(self.books))
        ev, split = _legacy_eval(_renamed("eval", self.eval, _OLD_EVAL), self.eval_split)
        object.__setattr__(self, "eval", ev)
        object.__setattr__(self, "eval_split", split)
        object.__setattr__(self, "seed_tasks", _renamed("seed_tasks", self.seed_tasks, _OLD_SEED_TASKS))
        if ev not in ("", "none", RUN_FUNCTIONS):
            from ..tasks.record import TaskError
            from ..tasks.spec import parse_task_spec

            try:
                parse_task_spec(ev)
            except TaskError as exc:
                raise CLIError(f"eval must be {EVAL_KINDS}: {exc}") from None


_WARNED_EVAL: set[str] = set()


def _renamed(option: str, value: str, old: dict[str, str]) -> str:
    """``value``, or its new spelling when it is an old one (warning once per spelling)."""
    if value not in old:
        return value
    if (option, value) not in _WARNED_EVAL:
        _WARNED_EVAL.add((option, value))
        new = old[value]
        logger.warning("%s %r is deprecated (`miniature` names the task-suite kind now): %s", option, value,
                       f"use {new!r} (it means the same)" if new else "leave it empty (it means none)")
    return old[value]


def _legacy_eval(spec: str, split: str) -> tuple[str, str]:
    """``(eval, eval_split)`` with the old spellings ``builtin:SPLIT`` and ``sebench:PATH:SPLIT``
    (the split inside the spec) turned into the task-spec grammar, warning once per spelling."""
    kind, _, arg = spec.partition(":")
    new = None
    if kind == "builtin" and arg and not arg.isdigit():
        new = ("builtin", arg)
    elif kind == "sebench" and arg and not Path(arg).exists():
        path, _, old_split = arg.rpartition(":")
        if path and old_split and Path(path).exists():
            new = (f"sebench:{path}", old_split)
    if new is None:
        return spec, split
    if spec not in _WARNED_EVAL:
        _WARNED_EVAL.add(spec)
        logger.warning("eval %r is deprecated: the split is its own option now (eval %r, eval_split %r); "
                       "builtin:N means the seed N as everywhere else", spec, new[0], new[1])
    return new


# -- engines ------------------------------------------------------------------------------------------
class LocalEngine:
    """Generation with the learner's own model (shared, so always current), validation and judging in
    sandboxes of this process."""

    name = "local"

    def __init__(self, library: Any, validation: Any, batch_size: int = 16):
        self.library = library
        self.validation = validation
        self.batch_size = batch_size
        self._gen = None
        self._validator = None
        self._judge = None

    def attach(self, policy: Any) -> None:
        from ..llm.hf import HFGenerator

        self._gen = HFGenerator(policy.model, policy.tokenizer, batch_size=self.batch_size, progress=False)

    def push(self, model: Any, path: str | None = None) -> None:
        pass  # the generator shares the learner's model

    def generate(self, prompts: Sequence[str], n: int, temperature: float, max_tokens: int, seed: int) -> list[list[str]]:
        from ..llm import SamplingParams

        if not prompts:
            return []
        params = SamplingParams(temperature=temperature, max_tokens=max_tokens, n=n, seed=seed)
        return [g.texts for g in self._gen.generate(list(prompts), params)]

    def generate_records(self, prompts: Sequence[str], n: int, temperature: float, max_tokens: int, seed: int) -> list[list[dict]]:
        """Like :meth:`generate`, each sample a dict: ``text``, ``finish_reason`` and its token fields."""
        from ..llm import SamplingParams

        if not prompts:
            return []
        params = SamplingParams(temperature=temperature, max_tokens=max_tokens, n=n, seed=seed)
        return [sample_records(g) for g in self._gen.generate(list(prompts), params)]

    def check(self, texts: Sequence[str], functions: Sequence[tuple[str, ...]]) -> list[Any]:
        from .validate import Validator

        if self._validator is None:  # two sandbox pools (one per hash seed), half the CPUs each
            import os

            self._validator = Validator(self.library, self.validation, workers=max(1, (os.cpu_count() or 2) // 2))
        return self._validator.check_texts(texts, functions)

    def judge(self, items: Sequence[tuple]) -> list[tuple[float, bool]]:
        """``(reward, infrastructure_failure)`` per judge item (:meth:`se_gym.tasks.Task.judge_item`:
        the answer, the task's cases, function name and reference).

        Args:
            items: the items, as ``Judge.judge_many`` takes them.
        """
        from ..judge import Judge

        if not items:
            return []
        if self._judge is None:
            self._judge = Judge(self.library, profile="strict")
        return [(v.reward, v.infrastructure) for v in self._judge.judge_many(list(items))]

    def close(self) -> None:
        if self._validator is not None:
            self._validator.close()
        if self._judge is not None:
            self._judge.close()


# -- helpers ------------------------------------------------------------------------------------------
def sample_records(generation: Any) -> list[dict]:
    """The samples of one ``Generation`` with their token fields (``se_gym.trajectories``)."""
    from ..trajectories import token_fields

    return [{"text": c.text, "finish_reason": c.finish_reason, **token_fields(c)} for c in generation.completions]


def stage_times(times: dict[str, float]) -> str:
    """A round's wall time split by stage, for its log line: ``propose 1.2 s, validate 0.8 s, ...,
    total 9.9 s`` (the times a rerun read from the stage files are the times the stage first took)."""
    parts = [f"{k} {v:.1f} s" for k, v in times.items()]
    return ", ".join(parts + [f"total {sum(times.values()):.1f} s"])


def _seed(*parts: Any) -> int:
    from ..llm.base import derive_seed

    return derive_seed(*[p if isinstance(p, int) else sum(map(ord, str(p))) * 7919 + len(str(p)) for p in parts]) % (2**31)


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, obj: Any) -> None:
    from ..storage import write_json_atomic

    write_json_atomic(path, obj)


def load_seed_tasks(spec: str, library: Any, config: SelfPlayConfig) -> list[Any]:
    if not spec:
        return []
    from ..tasks import load_sebench
    from ..tasks.record import Task

    p = Path(spec)
    if p.is_file():
        rows = [json.loads(ln) for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()]
        return [Task.from_json(r) if "id" in r else Task.from_official_row(r, "train", i, "seed", library=library) for i, r in enumerate(rows)]
    if p.is_dir():
        return list(load_sebench("train", p, library=library))
    raise CLIError(f"seed_tasks: no such file or folder {spec!r}")


def library_seed(library: Any) -> int:
    """The seed of a minted library (``seed:N``), 0 for any other."""
    kind, _, arg = library.source.partition(":")
    return int(arg) if kind == "seed" and arg.isdigit() else 0


def load_eval_tasks(spec: str, library: Any, config: SelfPlayConfig) -> list[Any]:
    """The held-out tasks of ``spec`` (``config.eval``): none, :data:`RUN_FUNCTIONS` (the miniature's
    questions about the run's functions), or a task spec
    (:func:`se_gym.tasks.spec.load_task_spec`, split ``config.eval_split``; ``builtin`` is the
    library's own seed) against ``library``, at most ``config.eval_limit`` of them."""
    spec = _renamed("eval", spec, _OLD_EVAL)
    if spec in ("", "none"):
        return []
    if spec == RUN_FUNCTIONS:
        from .miniature import eval_tasks

        return eval_tasks(library, config)
    from ..tasks.record import TaskError
    from ..tasks.spec import load_task_spec

    spec, split = _legacy_eval(spec, config.eval_split)
    try:
        tasks, _ = load_task_spec(spec, split, library, default_seed=library_seed(library), progress=False)
    except TaskError as exc:
        raise CLIError(f"eval {spec!r} (split {split!r}): {exc}") from None
    if config.functions and spec.partition(":")[0] == "builtin":
        tasks = [t for t in tasks if set(t.functions) <= set(config.functions)] or tasks
    rng = random.Random(f"selfplay-eval-{config.seed}")
    return sorted(rng.sample(list(tasks), min(config.eval_limit, len(tasks))), key=lambda t: t.id) if config.eval_limit else list(tasks)


def make_prompts(config: SelfPlayConfig) -> Any:
    if config.prompts == "sebench":
        from .prompts import SEBenchPrompts

        return SEBenchPrompts(config.min_inputs)
    if config.prompts == "miniature":
        from .miniature import MiniPrompts

        return MiniPrompts()
    raise CLIError(f"prompts must be sebench or miniature, got {config.prompts!r}")


# -- the loop -----------------------------------------------------------------------------------------
class SelfPlay:
    """One self-play run in ``out`` (resumable).  ``engine``: a :class:`LocalEngine` (default) or a
    Ray engine; ``policy_loader(path)`` builds the learner (default: :class:`se_gym.training.policy.Policy`)."""

    def __init__(self, config: SelfPlayConfig, out: str | Path, engine: Any = None, *, restart: bool = False,
                 progress: bool = True, device: str | None = None, log: Callable[[str], None] | None = None):
        from ..library import from_spec
        from ..storage import RunDir
        from .validate import ValidationConfig

        if not config.model:
            raise CLIError("self-play needs a model (--model PATH or a HF id)")
        self.config = config
        # every setting but the number of rounds binds the folder: a finished run can be extended
        bound = {k: v for k, v in asdict(config).items() if k != "rounds"}
        for name, default in (("record_tokens", False), ("proposer", "policy"), ("rehearsal", 0.0), ("rehearsal_rounds", 1), ("curriculum", "cover"),
                              ("eval_split", "single_test"), ("novelty", False), ("replay_tasks", 0), ("val_share", 0.0), ("patience", 2),
                              ("rehearsal_samples", 0), ("propose_check", 0), ("propose_floor", 1.0),
                              ("band_open", 0.0), ("band", (0.0, 1.0)), ("cpu_s", None), ("memory_mb", None)):
            if bound[name] == default:
                bound.pop(name)  # added later: folders bound before them still resume
        if bound["eval"] == RUN_FUNCTIONS:
            bound["eval"] = "miniature"  # (its spelling in folders bound before the suite kind took the name)
        if "eval_split" not in bound and bound["eval"] == "builtin":
            bound["eval"] = "builtin:single_test"  # the same evaluation, as folders bound before eval_split spell it
        self.run = RunDir(out, "selfplay", bound, restart=restart)
        self.out = self.run.path.resolve()  # absolute: the Ray buffer actor writes here too
        self.library = from_spec(config.library)
        self.validation = ValidationConfig(min_inputs=config.min_inputs, wall_s=config.wall_s, cpu_s=config.cpu_s, memory_mb=config.memory_mb,
                                           dedup_threshold=config.dedup_threshold)
        self.engine = engine or LocalEngine(self.library, self.validation)
        self.prompts = make_prompts(config)
        self.progress = progress
        self.device = device
        self._log = log or (lambda m: print(m, flush=True))
        keys = list(config.functions) or list(self.library.names)
        unknown = [k for k in keys if k not in self.library.names]
        if unknown:
            raise CLIError(f"functions not in the library: {', '.join(unknown[:5])}")
        from .prompts import Curriculum

        self.curriculum = Curriculum(keys, min(config.k, len(keys)), config.seed)
        self.policy = None
        self.policy_path = None
        self._pushed: str | None = None
        from ..agents.proposer import proposer_class
        from ..registry import RegistryError

        try:
            proposer_class(config.proposer)  # a wrong --proposer fails now, not after round 0's evaluation
        except RegistryError as exc:
            raise CLIError(str(exc)) from None
        self._proposer: tuple[int, Any] | None = None  # (round it is current for, the agent)

    # -- state ------------------------------------------------------------------------------
    def rdir(self, r: int) -> Path:
        return self.out / f"round_{r:03d}"

    def _model_after(self, r: int) -> str:
        if r == 0:
            return self.config.model
        path = self.rdir(r) / "learn" / "model"
        return str(path) if path.is_dir() else self._model_after(r - 1)

    def _buffer_after(self, r: int):
        from .buffer import TaskBuffer

        if r == 0:
            return TaskBuffer(load_seed_tasks(self.config.seed_tasks, self.library, self.config))
        return TaskBuffer.load(self.rdir(r) / "buffer.jsonl")

    def _load_policy(self, path: str) -> Any:
        if self.policy is None or self.policy_path != path:
            from ..training.policy import Policy

            self.policy = Policy.from_pretrained(path, device=self.device)
            self.policy_path = path
            self.engine.attach(self.policy)
        if self._pushed != path:  # the generators get the learner's weights (after a load or an update)
            self.engine.push(self.policy.model, path)
            self._pushed = path
        return self.policy

    def _trajectory(self, r: int, row: dict, sample: dict, model: str) -> dict:
        """A solver sample as a token trajectory; round ``r`` samples with the model learned in round
        ``r - 1`` (0: the starting model), which is its policy version."""
        return {"task_id": row["task"], "sample_index": row["sample"], "round": r, "book": row["book"],
                "prompt": row["prompt"], "response": row["response"], "reward": row["reward"],
                "infrastructure": row["infrastructure"], "model": model, "backend": getattr(self.engine, "name", ""),
                **{k: v for k, v in sample.items() if k != "text"}, "policy_version": r - 1}

    # -- run ----------------------------------------------------------------------------------
    def run_all(self) -> list[dict]:
        cfg = self.config
        t0 = time.time()
        self.eval_tasks = load_eval_tasks(cfg.eval, self.library, cfg)
        try:
            if not self.run.done("round_000"):
                self._load_policy(cfg.model)
                acc = self.evaluate(0)
                self.rdir(0).mkdir(parents=True, exist_ok=True)
                self.run.mark_done("round_000", {"round": 0, "closed_book_acc": acc["accuracy"], "eval": acc, "wall_s": {"eval": acc["wall_s"]}})
            for r in range(1, cfg.rounds + 1):
                if self.run.done(self.rdir(r).name):
                    continue
                self.round(r)
                self.write_log()
        finally:
            self.engine.close()
        summaries = self.write_log()
        buf = self._buffer_after(max((s["round"] for s in summaries), default=0))
        buf.export(self.out / "suite", library=self.library)
        self._log(f"[selfplay] {len(summaries) - 1} rounds in {self.out} ({time.time() - t0:.0f} s this invocation); buffer {len(buf)} tasks -> {self.out / 'suite'}")
        return summaries

    def round(self, r: int) -> dict:
        cfg = self.config
        d = self.rdir(r)
        self.run.stage(d.name)
        buffer = self._buffer_after(r - 1)
        if hasattr(self.engine, "make_buffer"):  # the Ray engine keeps the buffer in an actor
            buffer = self.engine.make_buffer(buffer.tasks()[::-1])
        start_model = self._model_after(r - 1)
        self._load_policy(start_model)
        times: dict[str, float] = {}

        # 1. propose
        f = d / "propose.json"
        if not f.is_file():
            t = time.time()
            from ..agents.proposer import proposal_text

            groups = CURRICULA[cfg.curriculum](self, cfg.proposals, r)
            requests = []
            for i, keys in enumerate(groups):
                refs = buffer.references(cfg.references, random.Random(_seed(cfg.seed, r, i)), keys)
                requests.append((self._docs(keys, self.prompts.propose(self.library, keys, refs)), refs))
            prompts = [docs.prompt for docs, _ in requests]
            agent = self._proposer_for(r)
            self._log(f"[round {r}] proposing {len(prompts)} tasks ({cfg.proposer})")
            texts = [proposal_text(x) for x in agent.propose_many(requests, _seed(cfg.seed, r, "propose"))]
            if len(texts) != len(prompts):
                raise RuntimeError(f"proposer {cfg.proposer!r} returned {len(texts)} proposals for {len(prompts)} requests")
            _write(f, {"wall_s": time.time() - t, "items": [{"functions": list(k), "prompt": p, "text": x} for k, p, x in zip(groups, prompts, texts)]})
        proposed = _read(f)
        times["propose"] = proposed["wall_s"]

        # 2. validate
        f = d / "validate.json"
        if not f.is_file():
            from .validate import dedup

            t = time.time()
            items = proposed["items"]
            self._log(f"[round {r}] validating {len(items)} proposals")
            outcomes = self.engine.check([i["text"] for i in items], [tuple(i["functions"]) for i in items])
            dedup(outcomes, buffer, cfg.dedup_threshold)
            _write(f, {"wall_s": time.time() - t, "outcomes": [o.to_json() for o in outcomes]})
        from .validate import Outcome

        validated = _read(f)
        times["validate"] = validated["wall_s"]
        outcomes = [Outcome.from_json(o) for o in validated["outcomes"]]
        fresh = [o.task for o in outcomes if o.accepted]

        # 3. solve (fresh tasks plus a top-up and a replay from the buffer; the validation split is
        # solved for its solve rates, never trained on)
        f = d / "solve.json"
        if not f.is_file():
            t = time.time()
            held = self._val_ids(r)
            fresh_train = [task for task in fresh if task.id not in held]
            if cfg.curriculum == "learnability":  # the top-up too: buffer tasks by P(signal)
                taken = held | {y.id for y in fresh}
                pool = [x for x in buffer.tasks() if x.id not in taken]
                picked = self._learnability(r, pool).batch(max(0, cfg.min_tasks - len(fresh_train)), random.Random(_seed(cfg.seed, r, "topup")))
                train, topped = fresh_train + [pool[i] for i in picked], len(picked)
            else:
                train, topped = buffer.top_up(fresh_train, cfg.min_tasks, random.Random(_seed(cfg.seed, r, "topup")), sorted(held))
            replayed = []
            if cfg.replay_tasks:
                replayed = buffer.sample(cfg.replay_tasks, random.Random(_seed(cfg.seed, r, "replay")), sorted(held | {x.id for x in train}))
            train = train + replayed + [task for task in fresh if task.id in held]
            rows, trajectories = [], []
            for book in cfg.books:
                prompts = [self.prompts.solve(self.library, task, book) for task in train]
                self._log(f"[round {r}] solving {len(train)} tasks x {cfg.samples} ({book} book)")
                args = (prompts, cfg.samples, cfg.solve_temperature, cfg.solve_max_tokens, _seed(cfg.seed, r, "solve", book))
                samples = self.engine.generate_records(*args) if cfg.record_tokens else None
                groups = [[x["text"] for x in g] for g in samples] if samples is not None else self.engine.generate(*args)
                items = [task.judge_item(resp) for task, g in zip(train, groups) for resp in g]  # (with its reference: strict's dependence check)
                verdicts = iter(self.engine.judge(items))
                for i, (task, prompt, g) in enumerate(zip(train, prompts, groups)):
                    for k, resp in enumerate(g):
                        reward, infra = next(verdicts)
                        rows.append({"task": task.id, "book": book, "sample": k, "prompt": prompt, "response": resp, "reward": reward, "infrastructure": infra})
                        if samples is not None:
                            trajectories.append(self._trajectory(r, rows[-1], samples[i][k], start_model))
            if cfg.record_tokens:  # before solve.json: a round that has its solve.json has its trajectories
                from ..trajectories import write_trajectories

                write_trajectories(trajectories, d / "trajectories.jsonl")
            _write(f, {"wall_s": time.time() - t, "train": [task.to_json() for task in train], "topped_up": topped, "replayed": len(replayed),
                       "rows": rows})
        solved = _read(f)
        times["solve"] = solved["wall_s"]

        # 4. rewards
        t = time.time()
        rew = self.rewards(proposed["items"], outcomes, solved)
        times["rewards"] = time.time() - t

        # 5. learn
        ldir = d / "learn"
        if not self.run.done(f"{d.name}/learn"):
            hold_at(d.name + "/learn")
            t = time.time()
            self._log(f"[round {r}] learning ({cfg.regime})")
            self._load_policy(start_model)  # a killed update restarts from the round's start
            metrics = self.learn(r, proposed["items"], rew, solved, outcomes)
            metrics["proposer"] = self._proposer_learn(r, proposed["items"], outcomes, rew)
            self.policy.save(ldir / "model")
            self.policy_path = str(ldir / "model")
            metrics["wall_s"] = time.time() - t
            self.run.mark_done(f"{d.name}/learn", metrics)
        learned = self.run.read_done(f"{d.name}/learn")
        times["learn"] = learned["wall_s"]
        if learned.get("updated"):
            self._load_policy(str(ldir / "model"))
        else:
            self._load_policy(start_model)

        # 6. evaluate
        f = d / "eval.json"
        if not f.is_file():
            _write(f, self.evaluate(r))
        ev = _read(f)
        times["eval"] = ev["wall_s"]

        # 7. buffer and summary
        buffer.add(fresh)
        buffer.save(d / "buffer.jsonl")
        summary = self.summary(r, outcomes, solved, rew, learned, ev, times, len(buffer))
        metrics_log.log(summary, r, run="rounds")  # its numbers: valid, valid_rate, closed_book_acc, buffer, ...
        self.run.mark_done(d.name, summary)
        acc = summary["closed_book_acc"]
        acc_text = "not evaluated" if acc is None else f"{acc:.3f}"  # eval="none" measures nothing
        self._log(f"[round {r}] valid {summary['valid']}/{summary['proposed']}, closed-book acc {acc_text}, rejected {summary['rejected']}; "
                  f"wall {stage_times(times)}")
        return summary

    def _function_rates(self, r: int) -> dict[str, dict[str, float]]:
        """Per catalogue key, the solver's mean reward per book over rounds before ``r`` (sandbox
        failures left out)."""
        sums: dict[str, dict[str, list[float]]] = {}
        for q in range(1, r):
            f = self.rdir(q) / "solve.json"
            if not f.is_file():
                continue
            solved = _read(f)
            functions = {t["id"]: t.get("functions", ()) for t in solved["train"]}
            for row in solved["rows"]:
                if not row.get("infrastructure"):
                    for key in functions.get(row["task"], ()):
                        sums.setdefault(key, {}).setdefault(row["book"], []).append(row["reward"])
        return {key: {b: sum(v) / len(v) for b, v in books.items()} for key, books in sums.items()}

    def _learnability(self, r: int, pool: Sequence[Any] = ()) -> Any:
        """The learnability task sampler (:mod:`se_gym.tasks.sampler`) over ``pool``, taught every solver
        group of the rounds before ``r`` in ``rate_book``: rebuilt from the rounds' files, so a resumed
        run has the same state."""
        from ..tasks.record import Task
        from ..tasks.sampler import LearnabilitySampler

        sampler = LearnabilitySampler(pool, group_size=self.config.samples)
        for q in range(1, r):
            f = self.rdir(q) / "solve.json"
            if f.is_file():
                solved = _read(f)
                groups: dict[str, list] = {}
                for row in solved["rows"]:
                    if row["book"] == self.config.rate_book:
                        groups.setdefault(row["task"], []).append(None if row.get("infrastructure") else row["reward"])
                tasks = {t["id"]: t for t in solved["train"]}
                for task_id, rewards in groups.items():
                    sampler.observe(Task.from_json(tasks[task_id]), rewards)
        return sampler

    # -- the proposer agent -------------------------------------------------------------------
    def _docs(self, keys: Sequence[str], prompt: str) -> Any:
        from ..agents.proposer import ProposerDocs

        return ProposerDocs(tuple(keys), tuple(self.library.qualified(k) for k in keys), self.library.package,
                            self.prompts.docs(self.library, keys), prompt)

    def _proposer_for(self, r: int) -> Any:
        """The agent that proposes in round ``r``: the one that finished round ``r - 1`` (kept in this
        process, or loaded from what round ``r - 1`` saved), else a fresh one."""
        from ..agents.proposer import ProposerSetup, build_proposer

        if self._proposer is not None and self._proposer[0] == r:
            return self._proposer[1]
        cfg = self.config

        def generate(prompts: Sequence[str], temperature: float, max_tokens: int, seed: int) -> list[str]:
            return [g[0] for g in self.engine.generate(prompts, 1, temperature, max_tokens, seed)]

        setup = ProposerSetup(model=cfg.model, generate=generate, temperature=cfg.propose_temperature,
                              max_tokens=cfg.propose_max_tokens, device=self.device)
        agent = build_proposer(cfg.proposer, setup, self.rdir(r - 1) / "learn" / "proposer")
        self._proposer = (r, agent)
        return agent

    def _proposer_learn(self, r: int, items: list[dict], outcomes: list[Any], rew: dict) -> dict:
        """The agent learns from how its round-``r`` tasks fared and saves itself for round ``r + 1``."""
        from ..agents.proposer import ProposerFeedback

        agent = self._proposer_for(r)
        feedback = [ProposerFeedback(self._docs(i["functions"], i["prompt"]), i["text"], o.accepted, o.reason, reward)
                    for i, o, reward in zip(items, outcomes, rew["proposer"])]
        metrics = agent.learn(feedback)
        agent.save(self.rdir(r) / "learn" / "proposer")
        self._proposer = (r + 1, agent)
        return metrics

    def _rehearsal(self, r: int, items: list[dict], outcomes: Sequence[Any] | None, rates: dict | None = None) -> list[dict]:
        """The policy's own valid proposals to rehearse, each ``{prompt, text, question, inputs,
        functions}``: with ``rehearsal_rounds`` 1, this round's (else the latest round's that had
        any); with N > 1 those of the last N rounds; with 0 those of every round so far.  Never a
        validation task; with a band filter, only proposals whose task landed in the band
        (``rates``: this round's solve rates per task)."""
        from .validate import Outcome

        def valid(its, outs, q, round_rates):
            held = self._val_ids(q)
            return [{"prompt": i["prompt"], "text": i["text"], "question": o.proposal.question if o.proposal else "",
                     "inputs": list(o.proposal.inputs) if o.proposal else [], "functions": list(i.get("functions", ()))}
                    for i, o in zip(its, outs) if o.accepted and (o.task is None or o.task.id not in held)
                    and (o.task is None or not self._band_on() or in_band(round_rates.get(o.task.id), self.config.band_open, self.config.band))]

        from .curation import in_band, solve_rates

        own = valid(items, outcomes or (), r, rates or {})
        span = self.config.rehearsal_rounds
        for q in range(r - 1, 0, -1):
            if span == 1 and own:
                break
            if span > 1 and q <= r - span:
                break
            d = self.rdir(q)
            if (d / "propose.json").is_file() and (d / "validate.json").is_file():
                old = _read(d / "propose.json")["items"]
                outs = [Outcome.from_json(o) for o in _read(d / "validate.json")["outcomes"]]
                old_rates = solve_rates(_read(d / "solve.json")["rows"]) if self._band_on() and (d / "solve.json").is_file() else {}
                own += valid(old, outs, q, old_rates)
        return own

    def _rehearsal_samples(self, r: int) -> dict:
        """``rehearsal_samples`` more tasks written by the proposer with round ``r``'s starting
        weights, checked by the validator (duplicates within them dropped): ``{"written": n, "valid":
        [{prompt, text, question, inputs, functions}, ...]}``, saved in ``round_NNN/rehearsal.json``
        so a learn step redone after a kill reuses them."""
        from ..agents.proposer import proposal_text
        from .validate import dedup

        f = self.rdir(r) / "rehearsal.json"
        if not f.is_file():
            cfg = self.config
            groups = CURRICULA[cfg.curriculum](self, cfg.rehearsal_samples, r)
            requests = [(self._docs(keys, self.prompts.propose(self.library, keys, [])), []) for keys in groups]
            texts = [proposal_text(x) for x in self._proposer_for(r).propose_many(requests, _seed(cfg.seed, r, "rehearsal-samples"))]
            outcomes = dedup(self.engine.check(texts, [tuple(k) for k in groups]), None, cfg.dedup_threshold)
            valid = [{"prompt": d.prompt, "text": t, "question": o.proposal.question, "inputs": list(o.proposal.inputs), "functions": list(k)}
                     for (d, _), t, o, k in zip(requests, texts, outcomes, groups) if o.accepted]
            _write(f, {"written": len(texts), "valid": valid})
        return _read(f)

    def _propose_check(self, r: int) -> float:
        """The policy's valid share on ``propose_check`` proposal prompts of round ``r`` (the curriculum's
        functions, no references), written with the learner's weights as they are now and checked by the
        validator (duplicates within them dropped). The sampling seed is the round's, so the start and
        each epoch are compared on the same draws; nothing written here is trained on or kept."""
        from ..agents.proposer import proposal_text
        from .validate import dedup

        cfg = self.config
        self.engine.push(self.policy.model, None)
        groups = CURRICULA[cfg.curriculum](self, cfg.propose_check, r)
        requests = [(self._docs(keys, self.prompts.propose(self.library, keys, [])), []) for keys in groups]
        texts = [proposal_text(x) for x in self._proposer_for(r).propose_many(requests, _seed(cfg.seed, r, "propose-check"))]
        outcomes = dedup(self.engine.check(texts, [tuple(k) for k in groups]), None, cfg.dedup_threshold)
        return sum(1 for o in outcomes if o.accepted) / len(outcomes) if outcomes else 0.0

    def _band_on(self) -> bool:
        return self.config.band_open > 0 or tuple(self.config.band) != (0.0, 1.0)

    def _val_ids(self, r: int) -> set[str]:
        """Ids of the validation split: the held-out share of the valid tasks of rounds 1 to ``r``."""
        return {t.id for t in self._val_tasks(r)}

    def _val_tasks(self, r: int) -> list[Any]:
        """The validation split of rounds 1 to ``r``: each round's share of its valid tasks
        (:func:`se_gym.selfplay.curation.validation_ids`), read from the rounds' validate.json."""
        from .curation import validation_ids
        from .validate import Outcome

        cfg = self.config
        if cfg.val_share <= 0:
            return []
        out = []
        for q in range(1, r + 1):
            f = self.rdir(q) / "validate.json"
            if f.is_file():
                tasks = [o.task for o in map(Outcome.from_json, _read(f)["outcomes"]) if o.accepted and o.task is not None]
                held = validation_ids(tasks, cfg.val_share, _seed(cfg.seed, q, "validation"))
                out += [t for t in tasks if t.id in held]
        return out

    # -- stages -------------------------------------------------------------------------------
    def rewards(self, items: list[dict], outcomes: list[Any], solved: dict) -> dict:
        from .rewards import KINDS, ProposerReward, histogram, signal_share

        cfg = self.config
        spec = ProposerReward(cfg.proposer_reward, cfg.rate_book, cfg.invalid_penalty, cfg.zero_reward)
        from .curation import solve_rates

        mean = solve_rates(solved["rows"])
        proposer: list[float | None] = []
        per_kind: dict[str, list[float]] = {k: [] for k in KINDS}
        no_signal = 0
        for o in outcomes:
            if not o.accepted:
                proposer.append(spec(False))
                continue
            m = mean.get(o.task.id, {})
            op, cl = m.get("open"), m.get("closed")
            try:
                proposer.append(spec(True, op, cl))
            except ValueError:  # a book whose samples all failed in the sandbox: no rate, no signal
                proposer.append(None)
                no_signal += 1
            for kind in KINDS:
                try:
                    per_kind[kind].append(spec.raw(op, cl, kind))
                except ValueError:
                    pass
        fresh_ids = {o.task.id for o in outcomes if o.accepted}
        hist = {b: histogram([m[b] for tid, m in mean.items() if b in m and tid in fresh_ids]) for b in cfg.books}
        if no_signal:
            logger.warning("%d valid task(s) without a solve rate for the %s reward (sandbox failures): no proposer signal",
                           no_signal, cfg.proposer_reward)
        return {
            "proposer": proposer,
            "no_signal": no_signal,
            "solve_rates": mean,
            "signal_share": {k: signal_share(v) for k, v in per_kind.items() if v},
            "raw_mean": {k: (sum(v) / len(v) if v else None) for k, v in per_kind.items()},
            "histogram": hist,
        }

    def learn(self, r: int, items: list[dict], rew: dict, solved: dict, outcomes: Sequence[Any] | None = None) -> dict:
        """The learner's update of round ``r`` (see the regimes above); with ``rehearsal`` and the policy
        proposing, each SFT step also trains on the policy's own valid proposals (``outcomes``: this
        round's validation), so training the solver keeps its task writing."""
        cfg = self.config
        metrics: dict[str, Any] = {"updated": False}
        policy = self.policy
        rows = solved["rows"]
        train = {t["id"]: t for t in solved["train"]}
        held = self._val_ids(r)  # the validation split: solved, never trained on
        if "sft" in cfg.regime:
            from ..tasks.record import Task
            from ..training.distill import ContextPair, TeacherSample, offpolicy_examples
            from ..training.sft import SFTConfig, train_sft
            from .curation import in_band, solve_rates

            rates = rew.get("solve_rates") or solve_rates(rows)
            fresh = {o.task.id for o in outcomes or () if o.accepted and o.task is not None}
            out_of_band = {tid for tid in fresh if self._band_on() and not in_band(rates.get(tid), cfg.band_open, cfg.band)}
            samples = []
            for row in rows:
                if row["book"] != "open" or row["task"] in held or row["task"] in out_of_band:
                    continue
                task = Task.from_json(train[row["task"]])
                pair = ContextPair(row["prompt"], self.prompts.solve(self.library, task, "closed"), task.id)
                samples.append(TeacherSample(pair, row["response"], row["reward"]))
            examples = offpolicy_examples(samples)
            by_role = {"solve": len(examples), "propose": 0}
            metrics["sft_tasks"] = sorted({x.pair.key for x in samples if x.reward >= 1.0})  # the tasks the solver trains on
            metrics["band"] = {"fresh": len(fresh - held), "out_of_band": len(out_of_band - held)}
            if cfg.rehearsal > 0 and self._proposer_shares_policy():
                from ..training.sft import SFTExample
                from .curation import novelty_weights, pick

                own = self._rehearsal(r, items, outcomes, rates)
                if cfg.rehearsal_samples:
                    sampled = self._rehearsal_samples(r)
                    own = own + sampled["valid"]
                    metrics["rehearsal_samples"] = {"written": sampled["written"], "valid": len(sampled["valid"])}
                # the share of proposer examples in the mix: n / (n + solver examples) = rehearsal
                n = round(cfg.rehearsal / (1.0 - cfg.rehearsal) * len(examples)) if examples else len(own)
                if own and n:
                    rng = random.Random(_seed(cfg.seed, r, "rehearsal"))
                    if cfg.novelty:
                        picked = pick(own, n, rng, novelty_weights(own))
                    else:
                        picked = [own[i % len(own)] for i in rng.sample(range(max(n, len(own))), n)]
                    examples = examples + [SFTExample(x["prompt"], x["text"]) for x in picked]
                    by_role["propose"] = n
                metrics["rehearsal_pool"] = len(own)
            metrics["sft_examples"] = len(examples)
            metrics["sft_examples_by_role"] = by_role
            if examples:
                from .curation import EpochPicker

                metrics_log.set_run(f"round{r}/sft")
                val = self._val_tasks(r)
                check = (lambda: self._propose_check(r)) if cfg.propose_check and self._proposer_shares_policy() else None
                picker = EpochPicker(policy.model, lambda: self._accuracy(val, push=True)["accuracy"] or 0.0, cfg.patience, check,
                                     cfg.propose_floor) if val else None
                extra = {"after_epoch": picker.after_epoch} if picker else {}
                if picker is None or not picker.saturated:  # (a start that solves the whole split cannot be beaten)
                    sft = train_sft(policy, examples, SFTConfig(learning_rate=cfg.sft_lr, epochs=cfg.sft_epochs, batch_size=cfg.sft_batch,
                                                               warmup_ratio=0.1, seed=_seed(cfg.seed, r, "sft")), progress=self.progress, **extra)
                    metrics["sft_loss"] = sft["loss"]
                    metrics["updated"] = True
                if picker is not None:  # early stopping: the best epoch's weights, or the round's start
                    best = picker.restore()
                    metrics["val"] = {**picker.metrics(), "n": len(val)}
                    metrics["updated"] = best > 0
                    self._pushed = None  # the generators hold the last epoch's weights, not these
        if "rl" in cfg.regime:
            from ..training.rl import RLConfig, RLPrompt, RLTrainer
            from .rewards import task_relative_advantages

            prompts, responses, rewards, roles = [], [], [], []
            for row in rows:
                if row["book"] == "closed" and not row.get("infrastructure") and row["task"] not in held:
                    prompts.append(RLPrompt(row["prompt"], row["prompt"]))
                    responses.append(row["response"])
                    rewards.append(row["reward"])
                    roles.append("solve")
            val_items = {i for i, o in enumerate(outcomes or ()) if o.accepted and o.task is not None and o.task.id in held}
            for i, (item, reward) in enumerate(zip(items, rew["proposer"])):
                if reward is None or i in val_items:
                    continue  # no signal, or a validation task's proposal (never trained on)
                prompts.append(RLPrompt(item["prompt"], item["prompt"]))
                responses.append(item["text"])
                rewards.append(reward)
                roles.append("propose")
            adv = task_relative_advantages(rewards, roles)
            metrics["rl_nonzero_advantage"] = {role: sum(1 for a, ro in zip(adv, roles) if ro == role and a != 0.0) for role in ("solve", "propose")}
            if any(a != 0.0 for a in adv):
                # the advantages are already task-relative: hand them to the trainer as they are
                rl_cfg = RLConfig(learning_rate=cfg.rl_lr, group_size=1, ppo_epochs=cfg.rl_ppo_epochs, minibatch_size=cfg.rl_minibatch,
                                  clip=cfg.rl_clip, normalize_advantages=False, max_new_tokens=cfg.solve_max_tokens, seed=_seed(cfg.seed, r, "rl"))
                trainer = RLTrainer(policy, rl_cfg, reward_fn=lambda p, s: [0.0] * len(s), sampler=_NoSampler())
                metrics_log.set_run(f"round{r}/rl")
                m = trainer.update(prompts, responses, adv)
                metrics["rl"] = {k: v for k, v in m.items() if isinstance(v, (int, float))}
                metrics["updated"] = True
        return metrics

    def _proposer_shares_policy(self) -> bool:
        from ..agents.proposer import proposer_class

        return proposer_class(self.config.proposer).shares_policy

    def evaluate(self, r: int) -> dict:
        t = time.time()
        tasks = self.eval_tasks
        if not tasks:
            return {"accuracy": None, "n": 0, "wall_s": 0.0}
        self._log(f"[round {r}] closed-book evaluation on {len(tasks)} held-out tasks")
        return {**self._accuracy(tasks), "wall_s": time.time() - t}

    def _accuracy(self, tasks: Sequence[Any], push: bool = False) -> dict:
        """Greedy closed-book accuracy of the current policy on ``tasks`` (sandbox failures left out);
        ``push``: first hand the generators the learner's weights as they are now (mid-update)."""
        if push:
            self.engine.push(self.policy.model, None)
        prompts = [self.prompts.solve(self.library, task, "closed") for task in tasks]
        outs = self.engine.generate(prompts, 1, 0.0, self.config.solve_max_tokens, 0)
        verdicts = self.engine.judge([task.judge_item(g[0]) for task, g in zip(tasks, outs)])
        counted = [rw for rw, infra in verdicts if not infra]
        acc = sum(1 for x in counted if x >= 1.0) / len(counted) if counted else None
        return {"accuracy": acc, "n": len(counted), "infrastructure_failures": len(verdicts) - len(counted)}

    def summary(self, r, outcomes, solved, rew, learned, ev, times, buffer_size) -> dict:
        from .validate import rejection_counts

        valid = [o for o in outcomes if o.accepted]
        noise = [o.noise for o in valid if o.noise is not None]
        covered = sorted({k for o in valid for k in o.task.functions})
        pool = set(self.config.functions or self.library.names)
        seen = set()  # every function a valid task so far is about (the buffer, this round included)
        for q in range(1, r + 1):
            f = self.rdir(q) / "validate.json"
            if f.is_file():
                seen |= {k for o in _read(f)["outcomes"] if o.get("task") for k in o["task"].get("functions", ())}
        return {
            "round": r,
            "proposed": len(outcomes),
            "valid": len(valid),
            "valid_rate": len(valid) / len(outcomes) if outcomes else 0.0,
            "rejected": rejection_counts(outcomes),
            "duplicates": sum(1 for o in outcomes if o.reason == "duplicate"),
            "topped_up": solved["topped_up"],
            "replayed": solved.get("replayed", 0),
            "validation_tasks": len(self._val_ids(r)),
            "train_tasks": len(solved["train"]),
            "solve_rate_histogram": rew["histogram"],
            "proposer_reward_mean": _mean([x for x in rew["proposer"] if x is not None]),
            "no_signal": rew.get("no_signal", 0),
            "reward_signal_share": rew["signal_share"],
            "reward_raw_mean": rew["raw_mean"],
            "solver_reward_mean": {b: _mean([x["reward"] for x in solved["rows"] if x["book"] == b]) for b in self.config.books},
            "label_noise_mean": _mean(noise),
            "label_noisy_tasks": sum(1 for n in noise if n > 0),
            "functions_covered": covered,
            "diversity": {"functions": len(covered), "compositions": len({tuple(sorted(o.task.functions)) for o in valid}),
                          "near_duplicate_rate": sum(1 for o in outcomes if o.reason == "duplicate") / len(outcomes) if outcomes else 0.0},
            "coverage": len(seen & pool) / len(pool) if pool else 0.0,
            "proposed_functions": dict(Counter(k for o in outcomes if o.proposal is not None for k in o.proposal.functions)),
            "losses": {k: v for k, v in learned.items() if k not in ("wall_s",)},
            "closed_book_acc": ev["accuracy"],
            "eval_n": ev["n"],
            "buffer": buffer_size,
            "wall_s": times,
        }

    def write_log(self) -> list[dict]:
        from ..storage import write_text_atomic

        summaries = []
        r = 0
        while self.run.done(self.rdir(r).name):
            summaries.append(self.run.read_done(self.rdir(r).name))
            r += 1
        write_text_atomic(self.out / "log.jsonl", "".join(json.dumps(s, sort_keys=True) + "\n" for s in summaries))
        plot(summaries, self.out / "plot.png")
        return summaries


class _NoSampler:
    """The self-play learner updates on samples the engine already drew; nothing to sample or sync here."""

    def sample(self, prompts, n, temperature, max_new_tokens):  # pragma: no cover - never called
        raise RuntimeError("self-play hands the trainer its samples")

    def sync(self, model) -> None:
        pass


def _mean(v: Sequence[float]) -> float | None:
    return sum(v) / len(v) if v else None


def plot(summaries: list[dict], path: Path) -> bool:
    """Closed-book accuracy and valid-task rate over rounds (False without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rounds = [s["round"] for s in summaries]
    fig, ax = plt.subplots(figsize=(6, 3.4))
    acc = [s.get("closed_book_acc") for s in summaries]
    ax.plot([r for r, a in zip(rounds, acc) if a is not None], [a for a in acc if a is not None], "o-", label="closed-book accuracy (held-out)")
    vr = [(s["round"], s["valid_rate"]) for s in summaries if "valid_rate" in s]
    if vr:
        ax.plot([r for r, _ in vr], [v for _, v in vr], "s--", label="valid-task rate")
    ax.set_xlabel("round")
    ax.set_ylim(0, 1)
    ax.legend(loc="best", fontsize=8)
    ax.set_title("se-gym self-play")
    fig.tight_layout()
    from ..storage import write_text_atomic  # noqa: F401  (atomic for text; a plot may be redrawn freely)

    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
