"""TRL on SE-Bench: a reward function, and a tool environment for ``environment_factory``.

    from se_gym.integrations.trl import make_dataset, SEBenchReward, SEBenchToolEnv
    ds = make_dataset(tasks, library, book="closed")          # a datasets.Dataset
    # single answer: the completion is judged
    trainer = GRPOTrainer(model=..., reward_funcs=SEBenchReward(library), train_dataset=ds, ...)
    # stateful, with tools (run_tests on the visible example, submit): the submission is judged
    trainer = GRPOTrainer(model=..., environment_factory=partial(SEBenchToolEnv, library), train_dataset=ds, ...)

TRL calls reward functions as ``f(prompts=..., completions=..., **columns)`` where ``columns`` are
the dataset's other columns for the batch; ``make_dataset`` stores what the judge needs
(``test_cases`` as JSON, ``function_name``, ``task_id``, and the visible ``examples``).  An
infrastructure failure of the sandbox yields ``None`` for that sample (TRL then ignores it) instead
of a wrong-answer 0.  See docs/integrations/trl.md.
"""
from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Sequence

from ..judge.options import JUDGE_DEFAULTS


def dataset_rows(tasks: Sequence[Any], library: Any, book: str = "closed", conversational: bool = True, template: str | None = None) -> list[dict]:
    """Rows with ``prompt`` (chat messages or text) and the judge's columns, one per task."""
    from ..tasks import render_messages, render_prompt

    rows = []
    for t in tasks:
        prompt = render_messages(t, library, book=book, template=template) if conversational else render_prompt(t, library, book=book, template=template)
        rows.append({
            "prompt": prompt,
            "task_id": t.id,
            "function_name": t.function_name,
            "test_cases": json.dumps([{"input": c.input, "output": c.output} for c in t.test_cases]),
            # what the prompt shows (SEBenchToolEnv.run_tests runs these and only these)
            "examples": json.dumps([{"input": t.example.input, "output": t.example.output}]),
            # the task's reference: strict's library dependence check compares answers with it (issue 42)
            "library_solution": t.library_solution,
        })
    return rows


def make_dataset(tasks: Sequence[Any], library: Any, book: str = "closed", conversational: bool = True, template: str | None = None,
                 sampler: Any = None, rows: int | None = None, seed: int = 0):
    """A ``datasets.Dataset`` for TRL trainers (needs the ``hf`` extra).

    ``sampler`` (a :class:`se_gym.tasks.sampler.TaskSampler` over ``tasks``, e.g. restored from a run's
    saved state with :func:`se_gym.tasks.sampler.restore_sampler`): the dataset is a weighted epoch of
    ``rows`` rows (default: one per task), each task's count in proportion to the sampler's weights,
    ordered by ``seed`` (see :meth:`~se_gym.tasks.sampler.TaskSampler.schedule`).  None: one row per task,
    in order.
    """
    from datasets import Dataset

    from ..tasks.sampler import scheduled

    return Dataset.from_list(dataset_rows(scheduled(tasks, sampler, rows, seed), library, book, conversational, template))


def _completion_text(c: Any) -> str:
    if isinstance(c, str):
        return c
    if isinstance(c, list) and c and isinstance(c[-1], dict):  # conversational: the assistant turn(s)
        return "".join(m.get("content", "") for m in c if m.get("role", "assistant") == "assistant")
    raise TypeError(f"unsupported completion type {type(c).__name__}")


class SEBenchReward:
    """``reward_funcs`` entry for TRL: judges each completion against its row's test cases."""

    def __init__(self, library: Any, profile: str = JUDGE_DEFAULTS.profile, reward: str = "binary", sandbox: Any = JUDGE_DEFAULTS.sandbox, judge: Any = None):
        from ..library import from_spec

        self.library = from_spec(library)
        self._judge = judge
        self._opts = dict(profile=profile, reward=reward, sandbox=sandbox)
        self.__name__ = f"se_gym_{profile}"  # TRL logs rewards under the function's name
        self.last_verdicts: list = []

    @property
    def judge(self):
        if self._judge is None:
            from ..judge import Judge

            self._judge = Judge(self.library, **self._opts)
        return self._judge

    def __call__(self, prompts: Any = None, completions: Sequence[Any] = (), test_cases: Sequence[str] = (), function_name: Sequence[str] | None = None,
                 library_solution: Sequence[str] | None = None, **_: Any) -> list[float | None]:
        if len(test_cases) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(test_cases)} test_cases: is the dataset from se_gym.integrations.trl.make_dataset?")
        names = list(function_name) if function_name is not None else [None] * len(completions)
        refs = list(library_solution) if library_solution is not None else [None] * len(completions)
        items = [(_completion_text(c), json.loads(tc), fn, None, ref or None) for c, tc, fn, ref in zip(completions, test_cases, names, refs)]
        verdicts = self.judge.judge_many(items)
        self.last_verdicts = verdicts
        return [None if v.infrastructure else float(v.reward) for v in verdicts]

    def close(self) -> None:
        if self._judge is not None:
            self._judge.close()
            self._judge = None


# -- TRL's environment API ---------------------------------------------------------------------
TOOLS_HINT = (
    "\n\nYou have two tools. `run_tests(code)` runs your solution on the example above and shows what it "
    "returns. `submit(code)` hands in your final solution, which is judged on hidden tests; only the first "
    "submission counts, and an episode without one scores 0."
)

_BATCHERS: dict[int, Any] = {}
_BATCHERS_LOCK = threading.Lock()


def _batcher(judge: Any):
    """One :class:`~se_gym.integrations._common.BatchJudge` per judge: the submissions of a generation
    batch's rollouts, queued one after another, are judged together."""
    from ._common import BatchJudge

    with _BATCHERS_LOCK:
        b = _BATCHERS.get(id(judge))
        if b is None or b.judge is not judge:
            b = _BATCHERS[id(judge)] = BatchJudge(judge)
        return b


def close_environments() -> None:
    """Stop the judging threads and the sandboxes that :class:`SEBenchToolEnv` instances share."""
    from ._common import close_shared_judges

    with _BATCHERS_LOCK:
        batchers = list(_BATCHERS.values())
        _BATCHERS.clear()
    for b in batchers:
        b.close()
    close_shared_judges()


def _as_answer(code: str) -> str:
    """Tool arguments carry bare code; the judge reads the last fenced python block of an answer."""
    from ..judge import extract_code

    return code if extract_code(code) is not None else f"```python\n{code}\n```"


class SEBenchToolEnv:
    """One SE-Bench rollout for TRL's ``GRPOTrainer(environment_factory=...)``.

    TRL makes one instance per rollout (and reuses them), calls ``reset(**row)`` with the dataset
    row (from :func:`make_dataset`), exposes every public method but ``reset`` and ``get_reward`` to
    the model as a tool, and scores the rollout with ``get_reward()``.  The tools:

    * ``run_tests(code)``: runs the code on the task's visible example (the one the prompt shows)
      and reports what it returned against what was expected.  The hidden test cases are never run
      here, so nothing about them reaches the model.
    * ``submit(code)``: hands in the final solution (the first one counts); it is judged on every
      test case, hidden ones included, in the background, batched with the other rollouts'.

    ``get_reward()``: the judge's reward for the submission; 0.0 without one; ``None`` when the
    sandbox failed (TRL then leaves the rollout out rather than scoring it as wrong).

    Judges are shared by every instance with the same options (one sandbox pool per process);
    :func:`close_environments` stops them.  Only the tools are public: TRL would expose any other
    public method to the model.
    """

    def __init__(self, library: Any = None, profile: str = JUDGE_DEFAULTS.profile, reward: str = "binary", sandbox: Any = JUDGE_DEFAULTS.sandbox,
                 judge: Any = None, max_test_runs: int = 4, hint: bool = True):
        from ._common import shared_judge

        self._judge = judge if judge is not None else shared_judge(library, profile=profile, reward=reward, sandbox=sandbox)
        self._max_test_runs = max_test_runs
        self._hint = hint
        self._row: dict | None = None

    def reset(self, test_cases: str | None = None, examples: str | None = None, function_name: str | None = None,
              task_id: str | None = None, prompt: Any = None, library_solution: str | None = None, **_: Any) -> str | None:
        """Start the rollout of the row's task; returns the tool instructions TRL appends to the prompt."""
        if test_cases is None or examples is None:
            raise ValueError("SEBenchToolEnv needs rows with 'test_cases' and 'examples': build the dataset with "
                             "se_gym.integrations.trl.make_dataset")
        if isinstance(prompt, str):  # TRL appends the tools' note to the last chat message
            raise ValueError("SEBenchToolEnv needs chat prompts: make_dataset(..., conversational=True), the default")
        self._row = {"task_id": task_id, "function_name": function_name, "reference": library_solution or None,
                     "test_cases": json.loads(test_cases), "examples": json.loads(examples)}
        self._runs = 0
        self._submission = None  # a future of the verdict
        self.tool_log: list[tuple[str, str]] = []  # (tool, what it answered), for inspection
        return TOOLS_HINT if self._hint else None

    def _task(self) -> dict:
        if self._row is None:
            raise RuntimeError("no task: TRL calls reset(**row) before the tools")
        return self._row

    def run_tests(self, code: str) -> str:
        """Run your solution on the task's example and see what it returns.

        Args:
            code: The complete Python solution: the import of the library and the function.

        Returns:
            For each example, whether it passed, or the expected and the actual result.
        """
        row = self._task()
        if self._runs >= self._max_test_runs:
            return self._said("run_tests", f"No test runs left ({self._max_test_runs} used): submit your solution.")
        self._runs += 1
        v = _batcher(self._judge).judge_one((_as_answer(code), row["examples"], row["function_name"], None, row["reference"]))
        return self._said("run_tests", _example_report(v, row["examples"]))

    def submit(self, code: str) -> str:
        """Submit your final solution; it is judged on hidden tests. Only the first submission counts.

        Args:
            code: The complete Python solution: the import of the library and the function.

        Returns:
            A confirmation that the solution was received.
        """
        row = self._task()
        if self._submission is not None:
            return self._said("submit", "Already submitted: only the first submission counts.")
        self._submission = _batcher(self._judge).submit((_as_answer(code), row["test_cases"], row["function_name"], None, row["reference"]))
        return self._said("submit", "Submitted.")

    def get_reward(self) -> float | None:
        """The judge's reward for the submission (0.0 without one; None when the sandbox failed)."""
        v = self.verdict
        if v is None:
            return 0.0
        return None if v.infrastructure else float(v.reward)

    @property
    def verdict(self):
        """The judge's verdict on the submission (waits for it), or None without one."""
        return None if getattr(self, "_submission", None) is None else self._submission.result()

    def _said(self, tool: str, text: str) -> str:
        self.tool_log.append((tool, text))
        return text


class TaskStream:
    """The tasks an environment-owned run serves, shared by every instance of one factory: the
    ``k``-th ``reset`` (counted over the instances, in the order TRL calls them) gets task
    ``order[k // group_size]``, so the ``group_size`` rollouts of one GRPO group (TRL resets them one
    after another) play the same task.  ``order`` is a seeded shuffle, drawn anew each pass."""

    def __init__(self, tasks: Sequence[Any], seed: int = 0, group_size: int = 1, shuffle: bool = True):
        if not tasks:
            raise ValueError("no tasks to serve")
        if group_size < 1:
            raise ValueError(f"group_size must be >= 1, got {group_size}")
        self.tasks, self.seed, self.group_size, self.shuffle = list(tasks), seed, group_size, shuffle
        self._lock = threading.Lock()
        self._resets = 0
        self._orders: dict[int, list[int]] = {}

    def _order(self, epoch: int) -> list[int]:
        order = self._orders.get(epoch)
        if order is None:
            import random

            order = list(range(len(self.tasks)))
            if self.shuffle:
                random.Random(f"{self.seed}/{epoch}").shuffle(order)
            self._orders = {epoch: order}  # one pass at a time
        return order

    def next(self):
        """The task of the next reset."""
        with self._lock:
            group, self._resets = self._resets // self.group_size, self._resets + 1
            epoch, i = divmod(group, len(self.tasks))
            return self.tasks[self._order(epoch)[i]]


class _GroupedDraws:
    """A :class:`~se_gym.integrations.mix.MixStream` served ``group_size`` resets per draw (a GRPO
    group plays one task), as :class:`TaskStream` does for one source."""

    def __init__(self, mix: Any, group_size: int = 1):
        if group_size < 1:
            raise ValueError(f"group_size must be >= 1, got {group_size}")
        self.mix, self.group_size = mix, group_size
        self._lock = threading.Lock()
        self._resets, self._last = 0, None

    def next(self) -> dict:
        with self._lock:
            if self._resets % self.group_size == 0:
                self._last = self.mix.next()
            self._resets += 1
            return self._last


class SEBenchTaskEnv(SEBenchToolEnv):
    """:class:`SEBenchToolEnv` that owns its tasks and its reward, for TRL's
    ``GRPOTrainer(environment_factory=..., train_dataset=None)`` (TRL >= 1.16)::

        factory = SEBenchTaskEnv.factory(split="train", seed=0, group_size=args.num_generations)
        GRPOTrainer(model=..., args=args, environment_factory=factory)      # no train_dataset, no reward_funcs

    TRL then feeds each rollout an empty prompt and appends what ``reset`` returns: here the whole
    task (the system text, the task's prompt, the tools' note), taken from the factory's
    :class:`TaskStream` (SEBench-v0's options: ``tasks``, ``split``, ``seed``, ``library``,
    ``book``, ``template``; ``group_size``: TRL's ``num_generations``, so that a GRPO group plays
    one task).  ``get_reward`` is async (TRL awaits it on its event loop): the judge's verdict on the
    submission, judged in the background with the other rollouts' submissions.  Given a dataset row
    (``make_dataset``), ``reset`` plays that row's task instead, as :class:`SEBenchToolEnv` does.
    """

    def __init__(self, stream: Any, library: Any, book: str = "closed", template: str | None = None, metrics: Any = None,
                 profile: str = JUDGE_DEFAULTS.profile, reward: str = "binary", sandbox: Any = JUDGE_DEFAULTS.sandbox, **kw: Any):
        super().__init__(library, profile=profile, reward=reward, sandbox=sandbox, **kw)
        self._stream, self._library, self._book, self._template = stream, library, book, template
        self._judge_opts = {"profile": profile, "reward": reward, "sandbox": sandbox}
        self.metrics = metrics  # a SourceMetrics shared by the factory's instances (mixtures)
        self.task = self.source = None  # the current rollout's task and source (env-owned), for inspection

    @classmethod
    def factory(cls, tasks: Any = "builtin", split: str = "train", seed: int = 0, library: Any = None, book: str = "closed",
                template: str | None = None, group_size: int = 1, shuffle: bool = True, sources: Any = None, **kw: Any):
        """A callable for ``environment_factory``: its instances share one task stream and one judge.
        ``sources``: a mixture instead of ``tasks`` (:func:`se_gym.integrations.mix.parse_sources`'s
        ``"builtin:0=2,builtin:1=1,sebench:PATH=1"`` or a list of ``Source``): each draw is judged
        with its source's library, and ``make.metrics`` (a ``SourceMetrics``) keeps reward and pass
        rate per source.  ``kw``: :class:`SEBenchToolEnv`'s options (``profile``, ``reward``,
        ``sandbox``, ``max_test_runs``, ``hint``)."""
        from .mix import MixStream, SourceMetrics, load_sources, parse_sources

        metrics = SourceMetrics()
        if sources is not None:
            loaded = load_sources(parse_sources(sources) if isinstance(sources, str) else sources, split)
            stream: Any = _GroupedDraws(MixStream(loaded, seed), group_size)
            lib = loaded[0][2]
        else:
            from ._common import make_env

            base = make_env({"tasks": tasks, "split": split, "seed": seed, "library": library})
            try:
                task_list, lib = list(base.tasks), base.library
            finally:
                base.close()
            stream = TaskStream(task_list, seed=seed, group_size=group_size, shuffle=shuffle)

        def make() -> "SEBenchTaskEnv":
            return cls(stream, lib, book=book, template=template, metrics=metrics, **kw)

        make.stream, make.metrics = stream, metrics  # type: ignore[attr-defined]
        return make

    def reset(self, test_cases: str | None = None, examples: str | None = None, **row: Any) -> str | None:
        """With a dataset row: that row's task (as :class:`SEBenchToolEnv`); without one: the next task
        of the stream, returned whole (TRL appends it to its empty placeholder prompt)."""
        if test_cases is not None or examples is not None:
            self.task = None
            return super().reset(test_cases=test_cases, examples=examples, **row)
        from ..tasks import render_messages
        from ._common import shared_judge

        item = self._stream.next()
        task, lib, self.source = (item["task"], item["library"], item["source"]) if isinstance(item, dict) else (item, self._library, None)
        self.task, self._recorded = task, False
        if isinstance(item, dict) and getattr(self._judge, "library", None) is not lib:  # a mixture: the source's library judges
            self._judge = shared_judge(lib, **self._judge_opts)
        hint = super().reset(**dataset_rows([task], lib, book=self._book, template=self._template)[0])
        text = "\n\n".join(m["content"] for m in render_messages(task, lib, book=self._book, template=self._template))
        return text + (hint or "")

    async def get_reward(self) -> float | None:  # type: ignore[override]
        """The judge's reward for the submission, awaited (0.0 without one; None when the sandbox failed)."""
        sub = getattr(self, "_submission", None)
        v = None if sub is None else await asyncio.wrap_future(sub)
        reward = 0.0 if v is None else (None if v.infrastructure else float(v.reward))
        if self.metrics is not None and self.task is not None and not getattr(self, "_recorded", True):
            self._recorded = True  # once per rollout
            self.metrics.add(self.source or "tasks", reward, bool(v is not None and v.passed))
        return reward


class SourceMetricsLog:
    """A ``reward_funcs`` entry that scores nothing (``None`` for every rollout, which TRL leaves out
    of the sum) and logs, per source of a mixture, the batch's ``source/<name>/reward``,
    ``/pass_rate`` and ``/tokens`` (completion tokens) through TRL's ``log_metric``::

        GRPOTrainer(..., environment_factory=SEBenchTaskEnv.factory(sources=...), reward_funcs=[SourceMetricsLog()])
    """

    __name__ = "se_gym_sources"

    def __call__(self, completions: Sequence[Any] = (), completion_ids: Sequence[Any] | None = None,
                 environments: Sequence[Any] | None = None, log_metric: Any = None, **_: Any) -> list[None]:
        from .mix import SourceMetrics

        m = SourceMetrics()
        for i, env in enumerate(environments or []):
            if getattr(env, "task", None) is None:
                continue
            v = env.verdict
            reward = 0.0 if v is None else (None if v.infrastructure else float(v.reward))
            tokens = len(completion_ids[i]) if completion_ids is not None else None
            m.add(env.source or "tasks", reward, bool(v is not None and v.passed), tokens)
        if log_metric is not None:
            for k, val in m.flat().items():
                if k.rsplit("/", 1)[1] != "n" and val == val:  # NaN: nothing of that kind in the batch
                    log_metric(k, val)
        self.last = m.summary()
        return [None] * len(completions)


def _example_report(v: Any, examples: Sequence[dict]) -> str:
    """What ``run_tests`` answers: per visible example, passed or expected-vs-got, and the error if any."""
    if v.infrastructure:
        return "The sandbox failed to run the code (not a fault of the solution): try again."
    lines = []
    if v.passed:
        lines.append(f"All {len(examples)} example(s) passed.")
    else:
        lines.append(f"Not passing ({v.status.value}).")
        if v.exception:
            lines.append(f"Error: {v.exception}: {v.exception_message or ''}".rstrip(": "))
        elif v.detail:
            lines.append(v.detail)
    for i, (ex, case) in enumerate(zip(examples, v.cases)):
        got = "(no result)" if case.got is None else case.got
        lines.append(f"Example {i + 1}: input {ex['input']}; expected {ex['output']}; got {got}: {'passed' if case.ok else 'failed'}")
    return "\n".join(lines)
