"""Rollouts: generate answers to tasks with a model, judge them, write one JSONL row per sample.

A row is SE-Bench's rollout row (the task's official fields plus ``response``) with the verdict
fields, the prompt, the sampling parameters, the model and the sample index added; with
``record_tokens`` also the token ids, log-probs and policy version that make it a token-exact
trajectory (:mod:`se_gym.trajectories`).  Work is cut
into fixed batches of tasks (the same cut in every run, so seeded runs are reproducible whether
they run in one process, on a Ray pool, or are resumed); each batch is generated, judged in one
judge call, then appended to the output with flush + fsync.  Rows are keyed by (task id, sample
index): a rerun skips batches whose rows are all there and writes only the missing rows of the
others, so a killed run continues with nothing lost or duplicated.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..choices import BOOKS, SPLITS
from ..configs import int_or_none
from ..errors import CLIError
from ..judge.options import JudgeOptions
from .options import BackendOptionFlag, ModelOptions, SamplingOptions

log = logging.getLogger(__name__)

__all__ = [
    "RolloutConfig",
    "WorkBatch",
    "RolloutWorker",
    "RolloutStats",
    "load_tasks",
    "make_batches",
    "read_done_keys",
    "rollout",
    "accepted_trajectory",
]

# verdict fields whose names clash with the official row, and timings kept out of the row
# proper (they differ from run to run while everything else is reproducible)
_RENAMED = {"function_name": "judged_function", "code": "judged_code"}
_TIMINGS = ("wall_s", "judge_s")


@dataclass(frozen=True)
class RolloutConfig(JudgeOptions, ModelOptions, BackendOptionFlag, SamplingOptions):
    """Everything that decides what a rollout computes (all of it is picklable for Ray).  The judge's
    options are :class:`~se_gym.judge.options.JudgeOptions`', the model's
    :class:`~se_gym.llm.options.ModelOptions`' (``--model`` required here), the sampling's
    :class:`~se_gym.llm.options.SamplingOptions`'."""

    tasks: str = field(default="builtin", metadata={"help": "task suite: builtin[:SEED] or sebench[:PATH] (docs/components.md)"})
    split: str = field(default="single_test", metadata={"help": "task split", "choices": SPLITS})
    book: str = field(default="closed", metadata={"help": "closed: query only; open: query + docs", "choices": BOOKS})
    # (the CLI's values: several samples per task for pass@k, room for a thinking model's answer,
    # and seeded so that a resumed run samples the same answers)
    n: int = field(default=5, metadata={"help": "samples per task"})
    seed: int | None = field(default=0, metadata={
        "type": int_or_none, "metavar": "N|none", "help": "base seed: batch i is sampled with seed + i, so a rerun samples the same answers (None: unseeded)"})
    enable_thinking: bool | None = field(default=None, metadata={
        "help": "ask chat templates for a thinking block, or for none (None: the template's default)"})
    limit: int | None = field(default=None, metadata={"help": "only the first K tasks (None: all)"})
    batch_size: int = field(default=8, metadata={"help": "tasks per generation and judge batch"})
    sampler: str = field(default="uniform", metadata={
        "help": "which tasks, in which order: uniform (the suite's order; --limit K: the first K) or learnability "
                "(--limit K: K tasks drawn by P(signal) of a group of n answers, most informative first; its state, "
                "updated with every batch, is OUT.sampler.json: pass it to the next round's --sampler-state) or module:Class"})
    chat: bool = field(default=True, metadata={"help": "prompt as chat messages (--no-chat: one plain-text prompt)"})
    record_tokens: bool = field(default=False, metadata={
        "help": "rows also carry the prompt and completion token ids, log-probs and policy version "
                "(token-exact trajectories, docs/integrations/trajectories.md)"})
    backend_options: Mapping[str, Any] = field(default_factory=dict, metadata={
        "help": "extra options for the generation backend's class"})

    def __post_init__(self) -> None:
        if self.book not in ("closed", "open"):
            raise CLIError(f"--book must be closed or open, got {self.book!r}")
        from ..registry import RegistryError

        if not self.model:
            raise CLIError("--model is required: a HF id or checkpoint folder (hf, vllm) or a served model name (openai)")
        self.check_judge_flags(CLIError)  # the registries: a backend registered anywhere is accepted
        self.check_backend(CLIError)
        if self.library is None:  # the same default as the env's: the library the tasks were written for
            from ..tasks import TaskError
            from ..tasks.spec import default_library_spec, parse_task_spec

            try:
                object.__setattr__(self, "library", default_library_spec(parse_task_spec(self.tasks)))
            except TaskError as exc:
                raise CLIError(f"--tasks {self.tasks}: {exc}") from None
        if self.n < 1:
            raise CLIError(f"--n must be at least 1, got {self.n}")
        if self.batch_size < 1:
            raise CLIError(f"--batch-size must be at least 1, got {self.batch_size}")
        if self.limit is not None and self.limit < 1:
            raise CLIError(f"--limit must be at least 1, got {self.limit}")
        self.check_sampling(CLIError)
        from ..tasks.sampler import check_sampler

        try:
            check_sampler(self.sampler)
        except RegistryError as exc:
            raise CLIError(f"--sampler: {exc}") from None
        object.__setattr__(self, "backend_options", {**self.backend_kwargs(CLIError), **self.backend_options})

    def sampling_params(self, batch_index: int) -> Any:
        """The batch's sampling parameters; a seeded run gives batch i the seed ``seed + i``.

        Args:
            batch_index: the batch's index in the run.
        """
        from .base import SamplingParams

        return SamplingParams(
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            n=self.n,
            seed=None if self.seed is None else self.seed + batch_index,
            enable_thinking=self.enable_thinking,
        )


@dataclass(frozen=True)
class WorkBatch:
    """Batch ``index`` of the run: tasks in run order, each with all n samples.

    Attributes:
        index: the batch's place in the run.
        tasks: its tasks.
    """

    index: int
    tasks: tuple[Any, ...]  # se_gym.tasks.Task

    def keys(self, n: int) -> list[tuple[str, int]]:
        """(task id, sample index) of every row the batch writes.

        Args:
            n: samples per task.
        """
        return [(task.id, j) for task in self.tasks for j in range(n)]


def load_tasks(spec: str, split: str, library: Any, limit: int | None = None) -> list[Any]:
    """Tasks from ``builtin[:SEED]`` or ``sebench[:PATH]`` (first ``limit`` of them); the parser is
    :mod:`se_gym.tasks.spec`'s, shared with the env.

    Args:
        spec: the task spec.
        split: the split.
        library: the library.
        limit: the most tasks (None: all).
    """
    from ..tasks import TaskError
    from ..tasks.spec import load_task_spec

    try:
        found, _ = load_task_spec(spec, split, library)
    except (OSError, TaskError) as exc:  # bad specs, missing files, bad seeds: one line for the user
        raise CLIError(f"--tasks {spec}: {exc}") from None
    found = list(found)[:limit] if limit else list(found)
    if not found:
        raise CLIError(f"--tasks {spec} --split {split}: no tasks")
    ids = [t.id for t in found]
    if len(set(ids)) != len(ids):
        raise CLIError(f"--tasks {spec}: task ids are not unique, rows could not be keyed")
    return found


def make_batches(tasks: Sequence[Any], batch_size: int) -> list[WorkBatch]:
    """The fixed cut of the run into batches (independent of what is already done).

    Args:
        tasks: the run's tasks.
        batch_size: tasks per batch.
    """
    return [WorkBatch(i, tuple(tasks[s : s + batch_size])) for i, s in enumerate(range(0, len(tasks), batch_size))]


def read_done_keys(path: str | os.PathLike) -> set[tuple[str, int]]:
    """(task id, sample index) of the rows already in ``path``; cuts off a torn last line.

    A killed writer can leave half a line at the end; it is removed (the file is truncated to
    the last newline) so that appending continues on a clean line.

    Args:
        path: the output file.
    """
    path = Path(path)
    if not path.exists():
        return set()
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with open(path, "r+b") as fh:
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())
    done: set[tuple[str, int]] = set()
    for number, raw in enumerate(data[:end].split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
            done.add((str(row["task_id"]), int(row["sample_index"])))
        except (ValueError, KeyError, TypeError):
            raise CLIError(f"{path}:{number}: not a rollout row (needs task_id and sample_index); use another --out") from None
    return done


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _jsonable(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


class RolloutWorker:
    """Owns a generator and a judge; turns a WorkBatch into rows.  One per process or Ray actor.

    Args:
        config: the run's configuration.
        generator: a model already loaded (None: built from the config).
        infra_retries: how often an answer the sandbox failed on is judged again.
        ray_address: the cluster a cluster sandbox (``ray``) judges on when its spec gives no ``address`` (default ``RAY_ADDRESS``).
    """

    def __init__(self, config: RolloutConfig, generator: Any = None, infra_retries: int = 2, ray_address: str | None = None):
        """``ray_address``: the cluster a ``ray`` sandbox judges on (default ``RAY_ADDRESS``)."""
        from ..judge import Judge
        from ..library import from_spec

        self.config = config
        self.infra_retries = infra_retries  # judge an answer again this often when the sandbox failed on it
        self.library = from_spec(config.library)
        self.judge = Judge(self.library, profile=config.profile, sandbox=config.sandbox_spec.joining(ray_address), limits=config.limits())
        self._owns_generator = generator is None
        if generator is None:
            from . import make_generator

            generator = make_generator(config.backend, config.model, **config.backend_options)
        self.generator = generator

    def close(self) -> None:
        """Stop the judge's sandbox, and the generator when this worker built it."""
        self.judge.close()
        if self._owns_generator:
            self.generator.close()

    def prompt(self, task: Any) -> str | list[dict[str, str]]:
        """The prompt for ``task`` (chat messages when the config asks for chat).

        Args:
            task: the task.
        """
        from ..tasks import render_messages, render_prompt

        if self.config.chat:
            return render_messages(task, self.library, book=self.config.book)
        return render_prompt(task, self.library, book=self.config.book)

    def run(self, batch: WorkBatch) -> dict[str, Any]:
        """Rows of the batch in (task, sample) order, with the seconds spent in each stage.

        Args:
            batch: the batch.
        """
        return self.judge_batch(self.generate_batch(batch))

    def generate_batch(self, batch: WorkBatch) -> dict[str, Any]:
        """Stage 1: sample n completions per task (the model's part).

        Args:
            batch: the batch.
        """
        cfg = self.config
        params = cfg.sampling_params(batch.index)
        prompts = [self.prompt(t) for t in batch.tasks]
        version = int(getattr(self.generator, "weights_version", 0))  # the weights these samples come from
        t0 = time.perf_counter()
        generations = self.generator.generate(prompts, params)
        generate_s = time.perf_counter() - t0
        if len(generations) != len(prompts):
            raise RuntimeError(f"generator returned {len(generations)} generations for {len(prompts)} prompts")
        for gen in generations:
            if len(gen.completions) != cfg.n:
                raise RuntimeError(f"generator returned {len(gen.completions)} completions, asked for n={cfg.n}")
        return {"batch": batch, "params": params, "prompts": prompts, "generations": generations, "generate_s": generate_s,
                "policy_version": version}

    def judge_batch(self, stage: dict[str, Any]) -> dict[str, Any]:
        """Stage 2: judge every completion of the batch in one judge call, build the rows.

        Args:
            stage: what :meth:`generate_batch` returned.
        """
        batch, generations = stage["batch"], stage["generations"]
        t0 = time.perf_counter()
        items = []
        for task, gen in zip(batch.tasks, generations):
            cases = [{"input": c.input, "output": c.output} for c in task.test_cases]
            ref = getattr(task, "library_solution", "") or None  # (strict's library dependence check)
            items += [(c.text, cases, task.function_name, None, ref) for c in gen.completions]
        verdicts = list(self.judge.judge_many(items))  # one judge batch per generation batch
        for _ in range(self.infra_retries):
            again = [i for i, v in enumerate(verdicts) if v.infrastructure]
            if not again:
                break
            for i, v in zip(again, self.judge.judge_many([items[i] for i in again])):
                verdicts[i] = v
        # what still failed is written with infrastructure: true; reports leave it out and count it
        judge_s = time.perf_counter() - t0
        rows, it = [], iter(verdicts)
        params_row = _jsonable(stage["params"])
        for task, prompt, gen in zip(batch.tasks, stage["prompts"], generations):
            for j, completion in enumerate(gen.completions):
                row = self._row(task, j, prompt, completion, next(it), params_row, gen)
                if self.config.record_tokens:
                    from ..trajectories import token_fields

                    row.update(token_fields(completion, stage.get("policy_version", 0)))
                rows.append(row)
        return {"index": batch.index, "rows": rows, "generate_s": stage["generate_s"], "judge_s": judge_s}

    def _row(self, task, j, prompt, completion, verdict, params_row, gen) -> dict[str, Any]:
        cfg = self.config
        row = task.to_official_row()
        row["response"] = completion.text
        row.update(
            task_id=task.id,
            sample_index=j,
            split=task.split,
            book=cfg.book,
            library=cfg.library,
            model=cfg.model,
            backend=cfg.backend,
            prompt=prompt,
            params=params_row,
            finish_reason=completion.finish_reason,
            prompt_tokens=len(completion.prompt_token_ids or gen_prompt_ids(gen)),
            completion_tokens=len(completion.token_ids or ()),
        )
        verdict_row = verdict.to_dict()
        timing = {k: verdict_row.pop(k) for k in _TIMINGS if k in verdict_row}
        for key, value in verdict_row.items():
            row[_RENAMED.get(key, key)] = value
        row["timing"] = timing  # the only part of a row that differs between identical runs
        return row


def gen_prompt_ids(gen: Any) -> Sequence[int]:
    ids = [c.prompt_token_ids for c in gen.completions if c.prompt_token_ids]
    return ids[0] if ids else ()


def accepted_trajectory(row: Mapping[str, Any], sft_prompts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A right sample as SFT data: the official row with ``response``, plus chat ``messages``.

    ``filter_correct_trajectory`` keeps the rollout rows whose answer the judge accepted; the
    ``messages`` (prompt turns + the answer) are what chat SFT trainers read.

    Args:
        row: a rollout row the judge accepted.
        sft_prompts: ``{"open": text, "closed": text}`` lets a trainer pair the answer with either
            prompt: Open-SFT trains under the doc prompt, Closed-SFT under the query-only one.
    """
    keep = {k: v for k, v in row.items() if k not in ("timing", "cases")}
    prompt = row.get("prompt")
    turns = list(prompt) if isinstance(prompt, list) else [{"role": "user", "content": str(prompt)}]
    keep["messages"] = turns + [{"role": "assistant", "content": row["response"]}]
    if sft_prompts is not None:
        keep["sft_prompts"] = dict(sft_prompts)
    return keep


def _sft_prompts(task: Any, library: Any) -> dict[str, str]:
    from ..tasks import render_prompt

    return {book: render_prompt(task, library, book=book) for book in ("open", "closed")}


def _run_local(worker: RolloutWorker, batches: Sequence[WorkBatch]) -> Iterator[dict[str, Any]]:
    """Batches in order, judging batch i in a thread while batch i + 1 is generated.

    The sandbox runs programs in other processes, so the judging thread mostly waits and the
    model keeps the accelerator busy; results are the same as running the stages in turn.
    """
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="se-gym-judge")
    judging = None
    try:
        for batch in batches:
            stage = worker.generate_batch(batch)
            if judging is not None:
                yield judging.result()
            judging = pool.submit(worker.judge_batch, stage)
        if judging is not None:
            yield judging.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        worker.close()


@dataclass
class RolloutStats:
    """What a call to :func:`rollout` did (timings are wall-clock seconds).

    Attributes:
        tasks: tasks asked.
        samples_total: samples asked for.
        samples_skipped: samples already in the output file.
        rows_written: rows appended.
        accepted: rows the judge accepted.
        infrastructure: rows the sandbox failed on after the retries (not scored, see se_gym.accuracy).
        completion_tokens: tokens generated.
        setup_s: loading tasks and the model, starting the sandbox (not in ``wall_s``).
        generate_s: time inside generation.
        judge_s: time judging.
        wall_s: from the first batch to the last durable write.
    """

    tasks: int = 0
    samples_total: int = 0
    samples_skipped: int = 0  # already in the output file
    rows_written: int = 0
    accepted: int = 0
    infrastructure: int = 0  # rows the sandbox failed on after the retries (not scored, see se_gym.accuracy)
    completion_tokens: int = 0
    setup_s: float = 0.0  # loading tasks and the model, starting the sandbox (not in wall_s)
    generate_s: float = 0.0
    judge_s: float = 0.0
    wall_s: float = 0.0  # from the first batch to the last durable write

    @property
    def outside_generation(self) -> float:
        """Fraction of wall time not spent inside generate() (judging + bookkeeping)."""
        return 1.0 - self.generate_s / self.wall_s if self.wall_s > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Every field, and ``outside_generation``."""
        d = dataclasses.asdict(self)
        d["outside_generation"] = self.outside_generation
        return d


class _Appender:
    """Append rows durably: one write, flush and fsync per batch."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(path, "a", encoding="utf-8")

    def write(self, rows: Iterable[Mapping[str, Any]]) -> None:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        if text:
            self.fh.write(text)
            self.fh.flush()
            os.fsync(self.fh.fileno())

    def close(self) -> None:
        self.fh.close()


def bind_output(config: RolloutConfig, out: Path, keep_correct: Path | None = None, restart: bool = False) -> None:
    """Bind ``out`` to the configuration that writes it (``<out>.run.json``), before the first row.

    Resuming with another configuration (another model, split, n, seed...) would mix rows of two
    runs in one file: it is refused, naming the differences; ``restart`` discards the rows (and the
    accepted-trajectories file) and starts again, saying so.  The sandbox is not part of it: every
    backend gives the same verdicts.
    """
    from dataclasses import asdict

    from .._version import __version__
    from ..storage import ConfigMismatch, config_diff, write_json_atomic

    meta = out.with_name(out.name + ".run.json")
    fields = asdict(config)
    fields.pop("sandbox")
    fields.pop("sandbox_option")
    fields.pop("backend_option")  # (folded into backend_options)
    for name in ("wall_s", "cpu_s", "memory_mb"):
        if fields[name] is None:
            fields.pop(name)  # added later: runs bound before them still resume
    if not fields["record_tokens"]:
        fields.pop("record_tokens")  # added later: runs bound before it still resume
    if fields["sampler"] == "uniform":
        fields.pop("sampler")  # added later: runs bound before it still resume
    bound = json.loads(json.dumps(fields, sort_keys=True, default=str))
    hint = "use another --out, or --restart to discard it"
    if restart:
        for path in (out, meta, keep_correct):
            if path is not None and path.exists():
                log.info("se-gym rollout: --restart: discarding %s", path)
                path.unlink()
    if meta.is_file():
        try:
            saved = json.loads(meta.read_text(encoding="utf-8"))
        except ValueError:
            raise ConfigMismatch(f"{meta} is not readable JSON; {hint}") from None
        diff = config_diff(saved.get("config", {}), bound)
        if diff:
            shown = "; ".join(diff[:5]) + (f"; (+{len(diff) - 5} more)" if len(diff) > 5 else "")
            raise ConfigMismatch(f"{out} was made with another configuration ({shown}); {hint}")
        return
    if out.exists() and out.stat().st_size > 0:
        raise ConfigMismatch(f"{out} holds rows but no record of the configuration that made them ({meta.name}); {hint}")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(meta, {"kind": "rollout", "config": bound, "se_gym": __version__})


def _plan_path(out: Path) -> Path:
    return out.with_name(out.name + ".sampler.json")


def _teach(sampler: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    """Each task's rows (its group of n answers) as one sampler update; rows the sandbox failed on are no evidence."""
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_task.setdefault(str(r["task_id"]), []).append(r)
    for task_id, group in by_task.items():
        sampler.update(sampler.index_of(task_id), [None if r.get("infrastructure") else float(r.get("reward", 0.0)) for r in group],
                       [int(r.get("completion_tokens") or 0) or None for r in group])


_KEEP = object()


def _save_plan(out: Path, sampler: Any, plan: Sequence[Any], initial: Any = _KEEP) -> None:
    """``OUT.sampler.json``: the plan, the state it started from (None: a fresh sampler; kept as written
    when not given) and the state now."""
    from ..storage import write_json_atomic

    path = _plan_path(out)
    if initial is _KEEP:
        initial = json.loads(path.read_text(encoding="utf-8"))["initial"]
    write_json_atomic(path, {"kind": "rollout-sampler", "plan": [t.id for t in plan], "initial": initial, "state": sampler.state_dict()})


def plan_tasks(config: RolloutConfig, tasks: Sequence[Any], out: Path, state: str | os.PathLike | None = None) -> tuple[list[Any], Any]:
    """The tasks a sampled rollout runs, in order, and its sampler (state brought up to date).

    The first run draws the plan: ``--limit`` tasks (all without it) from ``config.sampler`` over the
    whole suite, with the weights of ``state`` (a saved sampler state, e.g. an earlier round's
    ``OUT.sampler.json``; its sampler and options win) or fresh ones, without replacement in a
    ``seed``-seeded draw, and writes it to ``OUT.sampler.json`` before any row.  A resumed run reads
    the plan back and replays the rows already written, so it continues with the same tasks and the
    same state as if it had not been stopped.
    """
    from ..tasks.sampler import SamplerError, make_sampler, restore_sampler

    path = _plan_path(out)
    try:
        if path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            by_id = {t.id: t for t in tasks}
            missing = [i for i in saved["plan"] if i not in by_id]
            if missing:
                raise CLIError(f"{path}: the planned task {missing[0]!r} is not in --tasks {config.tasks}; use another --out, or --restart")
            chooser = restore_sampler(saved["initial"], tasks) if saved["initial"] else make_sampler(config.sampler, tasks, group_size=config.n)
            if out.is_file():
                from ..jsonl import iter_jsonl

                read_done_keys(out)  # (cuts a torn last line first)
                _teach(chooser, [row for _, row in iter_jsonl(out, CLIError, "rollout rows")])
            return [by_id[i] for i in saved["plan"]], chooser
        if state is not None:
            if Path(state).is_file():
                try:
                    saved = json.loads(Path(state).read_text(encoding="utf-8"))
                except ValueError:
                    raise CLIError(f"--sampler-state {state}: not readable JSON") from None
                if isinstance(saved, dict) and saved.get("kind") == "rollout-sampler":
                    state = saved["state"]  # an earlier rollout's OUT.sampler.json: the state it ended with
            chooser = restore_sampler(state, tasks)
        else:
            chooser = make_sampler(config.sampler, tasks, group_size=config.n)
    except SamplerError as exc:
        raise CLIError(f"--sampler {config.sampler}: {exc}") from None
    import random

    initial = chooser.state_dict() if state is not None else None
    picked = chooser.batch(config.limit or len(tasks), random.Random(f"se-gym-rollout-plan-{config.seed}"))
    plan = [tasks[i] for i in picked]
    _save_plan(out, chooser, plan, initial)
    return plan, chooser


def _is_accepted(row: Mapping[str, Any]) -> bool:
    return not row.get("infrastructure") and float(row.get("reward", 0.0)) >= 1.0 - 1e-9


def rollout(
    config: RolloutConfig,
    out: str | os.PathLike,
    *,
    keep_correct: str | os.PathLike | None = None,
    ray_actors: int = 0,
    ray_address: str | None = None,
    ray_gpus_per_actor: float = 0.0,
    generator: Any = None,
    progress: bool = True,
    on_batch: Callable[[int, list[dict[str, Any]]], None] | None = None,
    restart: bool = False,
    sampler_state: str | os.PathLike | None = None,
) -> RolloutStats:
    """Generate, judge and append rows to ``out`` (resuming what is there); returns the stats.

    With a ``config.sampler`` other than uniform, the tasks are the sampler's pick (see
    :func:`plan_tasks`) and ``OUT.sampler.json`` holds the plan and the state after every batch.

    Args:
        config: the run's options.
        out: the JSONL file, bound to ``config`` (see :func:`bind_output`).
        keep_correct: a second JSONL file for the accepted rows (None: none).
        ray_actors: > 0 runs the batches on a pool of Ray actors (each with its own generator and
            judge), still written in run order.
        ray_address: the Ray cluster (without actors: the cluster of a ``sandbox="ray"`` judge).
        ray_gpus_per_actor: GPUs per actor.
        generator: an already loaded model to reuse (single process only).
        progress: show a progress bar.
        on_batch: called as ``on_batch(index, rows_written)`` after each durable write.
        restart: discard what ``out`` holds.
        sampler_state: a saved sampler state to start from (an earlier round's ``OUT.sampler.json``).
    """
    from ..library import from_spec

    started = time.perf_counter()
    out = Path(out)
    try:
        library = from_spec(config.library)
    except (OSError, ValueError) as exc:
        raise CLIError(f"--library {config.library}: {exc}") from None
    sampled = config.sampler != "uniform"
    tasks = load_tasks(config.tasks, config.split, library, None if sampled else config.limit)
    bind_output(config, out, Path(keep_correct) if keep_correct else None, restart=restart)
    chooser = None
    if sampled:
        tasks, chooser = plan_tasks(config, tasks, out, sampler_state)
    batches = make_batches(tasks, config.batch_size)
    by_id = {t.id: t for t in tasks}
    done = read_done_keys(out)
    stats = RolloutStats(tasks=len(tasks), samples_total=len(tasks) * config.n)
    todo = [b for b in batches if not set(b.keys(config.n)) <= done]
    stats.samples_skipped = sum(len(set(b.keys(config.n)) & done) for b in batches)
    accepted_out = _Appender(Path(keep_correct)) if keep_correct else None
    accepted_done = read_done_keys(keep_correct) if keep_correct else set()
    writer = _Appender(out)
    bar = None
    results: Iterator[dict[str, Any]] = iter(())
    try:
        if progress:
            from ..progress import bar as tqdm  # plain lines off a terminal

            bar = tqdm(total=stats.samples_total, initial=stats.samples_skipped, unit="sample", desc=f"rollout {out.name}", dynamic_ncols=True)
        if not todo:
            pass
        elif ray_actors > 0:
            if generator is not None:
                raise CLIError("a preloaded generator cannot be shipped to Ray actors")
            if config.sandbox_spec.load().cluster:  # every actor would start a judge pool on every node
                raise CLIError("--sandbox ray judges on the cluster from this process: leave out --ray-actors (or use --sandbox local)")
            from ..distributed import run_ordered

            results = run_ordered(
                RolloutWorker, (config,), todo, num_actors=ray_actors, address=ray_address,
                num_gpus=ray_gpus_per_actor,
            )
        else:
            worker = RolloutWorker(config, generator=generator, ray_address=ray_address)
            results = _run_local(worker, todo)
        stats.setup_s = time.perf_counter() - started
        started = time.perf_counter()  # throughput counts the batches, not the loading
        for result in results:
            new = [r for r in result["rows"] if (r["task_id"], r["sample_index"]) not in done]
            writer.write(new)
            done.update((r["task_id"], r["sample_index"]) for r in new)
            if accepted_out is not None:
                keep = [
                    accepted_trajectory(r, _sft_prompts(by_id[r["task_id"]], library))
                    for r in result["rows"]
                    if _is_accepted(r) and (r["task_id"], r["sample_index"]) not in accepted_done
                ]
                accepted_out.write(keep)
                accepted_done.update((r["task_id"], r["sample_index"]) for r in keep)
                stats.accepted += len(keep)
            stats.rows_written += len(new)
            stats.infrastructure += sum(bool(r.get("infrastructure")) for r in new)
            stats.completion_tokens += sum(r["completion_tokens"] for r in new)
            stats.generate_s += result["generate_s"]
            stats.judge_s += result["judge_s"]
            if chooser is not None:
                _teach(chooser, new)
                _save_plan(out, chooser, tasks)
            if on_batch is not None:
                on_batch(result["index"], new)
            if bar is not None:
                elapsed = max(time.perf_counter() - started, 1e-9)
                bar.set_postfix_str(f"{stats.completion_tokens / elapsed:.1f} tok/s", refresh=False)
                bar.update(len(new))
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()  # a Ray pool shuts its cluster down here, also on errors and Ctrl-C
        if bar is not None:
            bar.close()
        writer.close()
        if accepted_out is not None:
            accepted_out.close()
        stats.wall_s = time.perf_counter() - started
    return stats
