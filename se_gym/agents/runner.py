"""The Runner: drives any agent through tasks under the protocol, for evaluation and training.

Observations are built here, never by agents: a closed-book observation is rendered without
docs whatever the agent would like, and the query-only rendering (which Closed-SFT/Closed-RL
train on) is attached on train splits only.  Training iterations are checkpointed, and a rerun
with the same ``checkpoint_dir`` resumes after the last finished iteration.
"""
from __future__ import annotations

import json
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from se_gym.accuracy import Tally, is_infrastructure

from .base import TRAIN_SPLITS, Agent, Observation, ProtocolError, Trajectory

# (task, book) -> (prompt, docs shown)
Renderer = Callable[[Any, str], tuple[str, tuple[str, ...]]]


def default_renderer(library) -> Renderer:
    """The official-layout prompts of ``se_gym.tasks`` (docs: the task's functions).

    Args:
        library: the library the tasks are written for.
    """
    from se_gym.tasks import render_prompt

    def render(task, book: str) -> tuple[str, tuple[str, ...]]:
        docs = tuple(library.doc(k) for k in task.functions if k in library.names) if book == "open" else ()
        return render_prompt(task, library, book=book), docs

    return render


class JudgeScorer:
    """Judges answers with a :class:`se_gym.judge.Judge`, remembering verdicts of repeated answers
    (never an infrastructure failure's: asked again, the answer is judged again).

    The memory keeps the ``cache_size`` verdicts used last (default 10,000): a long RL run asks
    far more answers than it could keep, at 4-7 KB an entry measured for short answers (more for
    long ones), and repeats come close together (within a group, or a few iterations apart).

    Args:
        judge: the judge.
        cache: remember verdicts.
        cache_size: how many.
    """

    CACHE_SIZE = 10_000

    def __init__(self, judge, cache: bool = True, cache_size: int = CACHE_SIZE):
        if cache_size < 1:
            raise ValueError(f"cache_size must be >= 1, got {cache_size}")
        self.judge = judge
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple[str, str], Any] | None = OrderedDict() if cache else None

    def __call__(self, tasks: Sequence[Any], responses: Sequence[str]) -> list[Any]:
        from se_gym.judge.extract import extract_code

        keys = [(t.id + "\x00" + t.hash, extract_code(r) or r) for t, r in zip(tasks, responses)]
        known: dict[tuple[str, str], Any] = {}  # taken out first: storing the new ones may evict them
        if self._cache is not None:
            for k in keys:
                if k in self._cache:
                    self._cache.move_to_end(k)
                    known[k] = self._cache[k]
        unique = list(dict.fromkeys(k for k in keys if k not in known))
        if unique:
            first: dict[tuple[str, str], int] = {}
            for i, k in enumerate(keys):
                first.setdefault(k, i)
            verdicts = self.judge.judge_many([_item(tasks[first[k]], responses[first[k]]) for k in unique])
            for k, v in zip(unique, verdicts):
                known[k] = v
                if self._cache is not None and not is_infrastructure(v):
                    self._cache[k] = v
                    if len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
        return [known[k] for k in keys]


@dataclass(frozen=True)
class EvalResult:
    """An evaluation's outcome: ``accuracy`` is over the judged samples; ``infrastructure`` samples (the
    sandbox failed on them after the retries) are counted here and scored nowhere.

    Attributes:
        book: the book the questions were shown with.
        split: their split.
        accuracy: share of the judged samples answered right.
        n: samples.
        trajectories: every judged answer.
        infrastructure: samples the sandbox failed on.
    """

    book: str
    split: str
    accuracy: float
    n: int
    trajectories: tuple[Trajectory, ...]
    infrastructure: int = 0

    @property
    def judged(self) -> int:
        """Samples judged (all but the infrastructure failures)."""
        return self.n - self.infrastructure


class Runner:
    """Builds observations, asks the agent, judges the answers, hands train trajectories to learn().

    Args:
        scorer: ``(tasks, answers) -> verdicts`` (e.g. a :class:`JudgeScorer`).
        renderer: ``(task, book) -> (prompt, docs)``.
        progress: show progress bars.
        infra_retries: how often an answer the sandbox failed on is judged again.
        record_tokens: keep each answer's prompt and token fields in the trajectories' info.
    """

    def __init__(
        self, scorer: Callable[[Sequence[Any], Sequence[str]], list[Any]], renderer: Renderer, progress: bool = True,
        infra_retries: int = 2, record_tokens: bool = False,
    ):
        if infra_retries < 0:
            raise ValueError(f"infra_retries must be >= 0, got {infra_retries}")
        self.scorer = scorer
        self.renderer = renderer
        self.progress = progress
        self.infra_retries = infra_retries  # judge an answer again this often when the sandbox failed on it
        # trajectories keep each answer's prompt and token fields in info (token_records exports them);
        # train() with a checkpoint_dir also writes them per iteration
        self.record_tokens = record_tokens

    def observe(self, tasks: Sequence[Any], book: str) -> list[Observation]:
        """Observations of ``tasks`` rendered for ``book`` (train ones also carry the query-only prompt).

        Args:
            tasks: the tasks.
            book: ``closed`` or ``open``.
        """
        out = []
        for task in tasks:
            prompt, docs = self.renderer(task, book)
            closed = None
            if task.split in TRAIN_SPLITS:
                closed = prompt if book == "closed" else self.renderer(task, "closed")[0]
            out.append(Observation(task=task, prompt=prompt, book=book, split=task.split, docs=docs if book == "open" else (), closed_prompt=closed))
        return out

    def rollout(self, agent: Agent, observations: Sequence[Observation], batch_size: int = 256) -> list[Trajectory]:
        """Ask ``agent``, judge its answers.  An answer the sandbox failed on is judged again up to
        ``infra_retries`` times; if it still fails, its trajectory has ``reward=None`` (scored nowhere).

        Args:
            agent: the agent.
            observations: the questions.
            batch_size: observations per ``act`` call.
        """
        from ..progress import bar as tqdm  # plain lines off a terminal

        trajectories: list[Trajectory] = []
        bar = tqdm(total=len(observations), desc="rollout", disable=not self.progress, leave=False)
        try:
            for start in range(0, len(observations), batch_size):
                chunk = list(observations[start : start + batch_size])
                records = agent.act_records(chunk) if self.record_tokens else None
                responses = [x["text"] for x in records] if records is not None else agent.act(chunk)
                if len(responses) != len(chunk):
                    raise ValueError(f"agent returned {len(responses)} answers for {len(chunk)} observations")
                verdicts = self._score([o.task for o in chunk], responses)
                for i, (o, r, v) in enumerate(zip(chunk, responses, verdicts)):
                    status = getattr(getattr(v, "status", ""), "value", str(getattr(v, "status", "")))
                    tokens = {k: x for k, x in records[i].items() if k != "text"} if records is not None else {}
                    if is_infrastructure(v):
                        trajectories.append(Trajectory(o, r, None, status, {"infrastructure": True, "detail": getattr(v, "detail", ""), **tokens}))
                    else:
                        trajectories.append(Trajectory(o, r, float(v.reward), status, tokens))
                bar.update(len(chunk))
        finally:
            bar.close()
        return trajectories

    def _score(self, tasks: list[Any], responses: Sequence[str]) -> list[Any]:
        verdicts = list(self.scorer(tasks, responses))
        for _ in range(self.infra_retries):
            again = [i for i, v in enumerate(verdicts) if is_infrastructure(v)]
            if not again:
                break
            for i, v in zip(again, self.scorer([tasks[i] for i in again], [responses[i] for i in again])):
                verdicts[i] = v
        return verdicts

    def evaluate(self, agent: Agent, tasks: Sequence[Any], book: str = "closed", samples: int = 1) -> EvalResult:
        """Accuracy of ``agent`` on ``tasks`` seen with ``book`` (a closed book never shows docs), over the
        judged samples.

        Args:
            agent: the agent.
            tasks: the tasks.
            book: the book they are shown with.
            samples: answers per task.

        Raises:
            se_gym.accuracy.InfrastructureError: none could be judged.
        """
        obs = [o for o in self.observe(tasks, book) for _ in range(samples)]
        traj = self.rollout(agent, obs)
        tally = Tally.of([t.reward for t in traj], [getattr(t.observation.task, "id", None) for t in traj])
        splits = sorted({t.split for t in traj})
        acc = tally.require_accuracy(f"evaluation on {len(tasks)} task(s), {book} book")
        return EvalResult(book, ",".join(splits), acc, len(traj), tuple(traj), tally.infrastructure)

    def train(
        self,
        agent: Agent,
        tasks: Sequence[Any],
        iterations: int,
        samples_per_task: int = 1,
        tasks_per_iteration: int | None = None,
        book: str | None = None,
        checkpoint_dir: str | os.PathLike | None = None,
        seed: int = 0,
        sampler: Any = None,
    ) -> list[dict]:
        """``iterations`` rounds of rollout on train tasks then ``agent.learn()``.

        With ``checkpoint_dir`` the agent, the history and the sampler's state are saved after every
        round, and a rerun resumes (picking the same next tasks).

        Args:
            agent: the learner.
            tasks: the train tasks (a task of another split is refused).
            iterations: the rounds in all (a resumed run does the rest).
            samples_per_task: answers per task and round, asked consecutively (a GRPO group).
            tasks_per_iteration: tasks per round (None: all).
            book: the book the tasks are rendered with (None: the agent's).
            checkpoint_dir: where the run is saved after every round (None: nothing is saved).
            seed: the seed of each round's draw.
            sampler: which tasks each round gets (:mod:`se_gym.tasks.sampler`: a name, ``module:Class``
                or a TaskSampler over ``tasks``); it learns from each group's rewards (and answer
                lengths, when the agent can count tokens).  None: the seeded ``uniform`` order.

        Returns:
            One metrics dict per round (the resumed ones included).
        """
        import random

        from ..progress import bar as tqdm  # plain lines off a terminal

        bad = [t.id for t in tasks if t.split not in TRAIN_SPLITS]
        if bad:
            raise ProtocolError(f"Runner.train got {len(bad)} task(s) from non-train splits, e.g. {bad[0]}")
        book = book or agent.book
        history: list[dict] = []
        state_file = Path(checkpoint_dir) / "runner.json" if checkpoint_dir else None
        if state_file is not None and state_file.is_file():
            history = json.loads(state_file.read_text(encoding="utf-8"))["history"]
            agent.load(Path(checkpoint_dir) / "agent")
        from se_gym.tasks.sampler import make_sampler

        tasks = list(tasks)
        chooser = make_sampler(sampler, tasks, **({} if sampler is None or not isinstance(sampler, str) else {"group_size": samples_per_task}))
        if state_file is not None and state_file.is_file() and sampler is not None:
            saved = json.loads(state_file.read_text(encoding="utf-8")).get("sampler")
            if saved is not None:
                chooser.load_state_dict(saved)
        per = tasks_per_iteration or len(tasks)
        for it in tqdm(range(len(history), iterations), desc="iterations", disable=not self.progress, initial=len(history), total=iterations, leave=False):
            rng = random.Random(seed * 1_000_003 + it)
            picked = chooser.batch(per, rng)
            chosen = [tasks[i] for i in picked]
            obs = [o for o in self.observe(chosen, book) for _ in range(samples_per_task)]
            traj = self.rollout(agent, obs)
            tally = Tally.of([t.reward for t in traj])
            metrics = {"iteration": it + 1, "reward": tally.mean_reward, "infrastructure": tally.infrastructure}
            metrics.update({f"learn/{k}": v for k, v in agent.learn(traj).items() if isinstance(v, (int, float))})
            if sampler is not None:
                record_groups(chooser, picked, traj, samples_per_task, getattr(agent, "token_lengths", None))
                metrics.update({f"sampler/{k}": v for k, v in chooser.stats().items()})
            history.append(metrics)
            if checkpoint_dir is not None:
                from se_gym.storage import write_json_atomic

                if self.record_tokens:
                    from se_gym.trajectories import write_trajectories

                    write_trajectories(token_records(traj), Path(checkpoint_dir) / f"trajectories_{it + 1:04d}.jsonl")

                agent.save(Path(checkpoint_dir) / "agent")
                state = {"history": history}
                if sampler is not None:  # the history and the sampler's state land together
                    state["sampler"] = chooser.state_dict()
                write_json_atomic(state_file, state)
        return history


def record_groups(sampler: Any, picked: Sequence[int], trajectories: Sequence[Trajectory], group: int,
                  count_tokens: Callable[[Sequence[str]], Sequence[int]] | None = None) -> None:
    """Tell ``sampler`` what each task's group of ``group`` consecutive trajectories scored (rewards, and
    the answers' token lengths when ``count_tokens`` is given): ``picked[j]`` is the task index of the
    ``j``-th group."""
    lengths = list(count_tokens([t.response for t in trajectories])) if count_tokens is not None else None
    for j, index in enumerate(picked):
        part = slice(j * group, (j + 1) * group)
        sampler.update(index, [t.reward for t in trajectories[part]], None if lengths is None else lengths[part])


def token_records(trajectories: Sequence[Trajectory]) -> list[dict]:
    """Token trajectories (:mod:`se_gym.trajectories`) of a run with ``Runner(record_tokens=True)``:
    one record per answer, ``sample_index`` counting the answers to the same task in order.

    Args:
        trajectories: the run's trajectories.
    """
    from se_gym.trajectories import check

    seen: dict[str, int] = {}
    out = []
    for i, t in enumerate(trajectories):
        task_id = getattr(t.observation.task, "id", None)
        j = seen[task_id] = seen.get(task_id, -1) + 1
        info = dict(t.info)
        rec = {"task_id": task_id, "sample_index": j, "book": t.observation.book, "split": t.split,
               "response": t.response, "reward": t.reward, "infrastructure": not t.judged, "status": t.status, **info}
        out.append(dict(check(rec, f"trajectory {i} (run the Runner with record_tokens=True)")))
    return out


def _item(task: Any, response: str) -> tuple:
    """The judge's item: the task's cases, function name and reference (strict's library dependence
    check compares the answer with it; a task without one is judged by the weaker rule)."""
    return (response, task.test_cases, task.function_name, None, getattr(task, "library_solution", "") or None)
