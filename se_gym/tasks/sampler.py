"""Task samplers: which task an episode, an RL iteration or a dataset row gets next.

In GRPO-style training, a group of G answers to one task whose answers all pass (or all fail) gives
every member advantage 0: it costs generation and teaches nothing.  For a task solved with
probability p, a group carries signal with probability ``P(signal) = 1 - p**G - (1 - p)**G``
(OpenEnv RFC 013).  A sampler that keeps an estimate of p can spend the budget where groups carry signal.

The contract (:class:`TaskSampler`), over a fixed task list:

* ``weights()``: each task's weight now, in proportion to its chance of being drawn (a plug-in
  implements this);
* ``update(index, rewards, tokens)``: what a group of answers to task ``index`` scored (and, when
  known, how many tokens each answer took); a sampler that learns nothing ignores it;
* ``state_dict()`` / ``load_state_dict()`` (``save`` / ``load`` for files): everything a killed run
  needs to draw the same next tasks after a resume.

Three ways to draw, one per caller, all derived from ``weights()`` unless a sampler overrides them:
``next_index(stream)`` one task for an episode (the env; each sub-env of a vector env is a stream
with its own generator, the estimates are shared), ``batch(k, rng)`` k distinct tasks for a training
iteration (a seeded ``random.Random`` of the caller), ``schedule(size, seed)`` the rows of a dataset
export (a weighted epoch: each task's count in proportion to its weight, then shuffled).

Built-ins (:data:`SAMPLERS`; a user's own as ``my_pkg.mod:MySampler`` or ``path/file.py:MySampler``, or a
name in the ``se_gym.samplers`` entry-point group):

* ``uniform``: every task alike.  In the env, a seeded permutation per epoch (sampling without
  replacement), exactly what the env did before samplers existed; in a training loop,
  ``rng.sample`` of the tasks, exactly what the loops did.
* ``learnability``: running solve-rate estimates per task and per library function, with a prior,
  turned into P(signal) for the group size, optionally divided by the expected answer length in
  tokens, mixed with an exploration floor (see :class:`LearnabilitySampler`).
"""
from __future__ import annotations

import abc
import hashlib
import json
import math
import os
import random
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import SEGymError
from ..registry import Registry, RegistryError

STATE_KIND = "se_gym.task_sampler"
STATE_VERSION = 1


class SamplerError(SEGymError, ValueError):
    """A sampler option, state file or task list that does not fit (one line)."""


def tasks_fingerprint(tasks: Sequence[Any]) -> str:
    """A short hash of the task ids in order: a saved state belongs to exactly this task list.

    Args:
        tasks: the task list (anything with an ``id``).
    """
    return hashlib.sha256("\n".join(str(t.id) for t in tasks).encode()).hexdigest()[:16]


def p_signal(p: float, group_size: int, advantage: str = "grpo") -> float:
    """The probability that a group of ``group_size`` answers, each passing with probability ``p``,
    has a non-zero advantage somewhere: ``1 - p**G - (1-p)**G`` for a group-relative advantage
    (``grpo``, ``centered``); ``1 - (1-p)**G`` for reward weighting (``reward``: any pass teaches).

    Args:
        p: the solve rate (clipped to [0, 1]).
        group_size: the answers per group (G).
        advantage: ``grpo``, ``centered`` or ``reward``.
    """
    p = min(1.0, max(0.0, float(p)))
    if advantage == "reward":
        return 1.0 - (1.0 - p) ** group_size
    return 1.0 - p ** group_size - (1.0 - p) ** group_size


class _Stream:
    """One caller's draws: its numpy generator and, for the uniform sampler, the current epoch."""

    __slots__ = ("rng", "order", "cursor")

    def __init__(self, rng):
        self.rng, self.order, self.cursor = rng, None, 0


def _rng_state(rng) -> dict:
    return rng.bit_generator.state


def _rng_from_state(state: Mapping[str, Any], into=None):
    import numpy as np

    if into is None or type(into.bit_generator).__name__ != state["bit_generator"]:
        into = np.random.Generator(getattr(np.random, state["bit_generator"])())
    into.bit_generator.state = dict(state)
    return into


class TaskSampler(abc.ABC):
    """Chooses tasks from a fixed list (see the module docstring for the contract).

    Args:
        tasks: the task list; indices into it are what the sampler returns.
        group_size: answers sampled per task and update (the G of P(signal)).
    """

    name = ""  # the registered name (set on the built-ins; a plug-in may set its own)

    def __init__(self, tasks: Sequence[Any], group_size: int = 8):
        if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
            raise SamplerError(f"group_size must be an int >= 1, got {group_size!r}")
        self.tasks = list(tasks)
        self.group_size = group_size
        self.fingerprint = tasks_fingerprint(self.tasks)
        self._streams: dict[int, _Stream] = {}

    # -- what a plug-in implements --------------------------------------------------------------
    @abc.abstractmethod
    def weights(self) -> list[float]:
        """Each task's weight now (same order as ``tasks``; non-negative, the draws normalize them)."""

    def update(self, index: int, rewards: Sequence[float | None], tokens: Sequence[int | None] | None = None) -> None:
        """What answers to task ``index`` scored and, when known, their lengths in generated tokens.
        The default learns nothing.

        Args:
            index: the task's index in ``tasks``.
            rewards: one reward per answer (``None``: not judged, no evidence).
            tokens: each answer's length in generated tokens (``None`` where unknown), or None.
        """

    def options(self) -> dict:
        """The options that make the sampler's choices (saved with its state; a resume checks them)."""
        return {"group_size": self.group_size}

    def stats(self) -> dict:
        """Numbers worth logging (the default: none)."""
        return {}

    def learned_state(self) -> dict:
        """What the sampler has learned (JSON-able); the default: nothing."""
        return {}

    def set_learned_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`learned_state` returned; the default: nothing to restore.

        Args:
            state: a :meth:`learned_state` (read back from JSON).
        """

    # -- drawing ----------------------------------------------------------------------------------
    def attach(self, stream: int, rng) -> None:
        """(Re)start a draw stream with a generator (the env calls this on ``reset(seed=...)`` with its
        own ``np_random``; the epoch restarts).

        Args:
            stream: the stream's number (a vector env's sub-env index; 0 for a single env).
            rng: a ``numpy.random.Generator``.
        """
        self._streams[int(stream)] = _Stream(rng)

    def has_stream(self, stream: int) -> bool:
        """Whether draw stream ``stream`` has a generator yet.

        Args:
            stream: the stream's number.
        """
        return int(stream) in self._streams

    def _stream(self, stream: int) -> _Stream:
        s = self._streams.get(int(stream))
        if s is None:  # not attached: a generator seeded by the stream's number
            import numpy as np

            s = self._streams[int(stream)] = _Stream(np.random.default_rng(int(stream)))
        return s

    def next_index(self, stream: int = 0) -> int:
        """One task for the next episode of a stream: a draw in proportion to ``weights()``.

        Args:
            stream: the stream's number (one not attached gets a generator seeded by its number).
        """
        s = self._stream(stream)
        w = self._checked_weights()
        return int(s.rng.choice(len(w), p=w))

    def batch(self, k: int, rng: random.Random) -> list[int]:
        """``min(k, len(tasks))`` distinct tasks, drawn in proportion to ``weights()`` without
        replacement (Efraimidis-Spirakis keys ``log(u) / w``), with the caller's seeded ``rng``.

        Args:
            k: how many tasks.
            rng: the caller's seeded ``random.Random``.
        """
        w = self._checked_weights()
        k = min(int(k), len(w))
        keys = []
        for i, wi in enumerate(w):
            u = 1.0 - rng.random()  # in (0, 1]
            keys.append((math.log(u) / wi if wi > 0 else -math.inf, -i))
        order = sorted(range(len(w)), key=lambda i: keys[i], reverse=True)
        return order[:k]

    def schedule(self, size: int | None = None, seed: int = 0) -> list[int]:
        """A dataset's rows as task indices: ``size`` rows (default: one per task), each task's count
        ``size * weight`` rounded by largest remainders, shuffled with ``seed``.  (Trainers that shuffle
        their dataset keep the counts: a weighted epoch.)

        Args:
            size: the number of rows (None: one per task).
            seed: the shuffle's seed.
        """
        w = self._checked_weights()
        size = len(w) if size is None else int(size)
        if size < 0:
            raise SamplerError(f"size must be >= 0, got {size}")
        share = [size * x for x in w]
        counts = [int(math.floor(s)) for s in share]
        for i in sorted(range(len(w)), key=lambda i: (-(share[i] - counts[i]), i))[: size - sum(counts)]:
            counts[i] += 1
        rows = [i for i, c in enumerate(counts) for _ in range(c)]
        random.Random(f"se-gym-schedule-{seed}").shuffle(rows)
        return rows

    def _checked_weights(self) -> list[float]:
        if not self.tasks:
            raise SamplerError("the sampler has no tasks to draw from")
        w = [float(x) for x in self.weights()]
        if len(w) != len(self.tasks) or any(not math.isfinite(x) or x < 0 for x in w) or sum(w) <= 0:
            raise SamplerError(f"{type(self).__name__}.weights() must give {len(self.tasks)} non-negative numbers with a positive sum")
        total = sum(w)
        return [x / total for x in w]

    # -- the record of a group ---------------------------------------------------------------------
    def index_of(self, task_or_id: Any) -> int:
        """The index of a task in ``tasks``.

        Args:
            task_or_id: a Task or its id.
        """
        if not hasattr(self, "_index"):
            self._index = {t.id: i for i, t in enumerate(self.tasks)}
        key = getattr(task_or_id, "id", task_or_id)
        try:
            return self._index[key]
        except KeyError:
            raise SamplerError(f"task {key!r} is not one of this sampler's {len(self.tasks)} tasks") from None

    # -- state ---------------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Everything needed to resume: options, what was learned, every stream's generator and epoch."""
        streams = {str(k): {"rng": _rng_state(s.rng), "order": None if s.order is None else [int(i) for i in s.order], "cursor": s.cursor}
                   for k, s in self._streams.items()}
        return {"kind": STATE_KIND, "version": STATE_VERSION, "sampler": self.name or f"{type(self).__module__}:{type(self).__qualname__}",
                "tasks": self.fingerprint, "n_tasks": len(self.tasks), "options": self.options(), "learned": self.learned_state(), "streams": streams}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict`'s output.

        Args:
            state: a :meth:`state_dict` (read back from JSON).

        Raises:
            SamplerError: the state is of another sampler, task list or set of options.
        """
        if state.get("kind") != STATE_KIND:
            raise SamplerError("not a task sampler's state (kind is missing)")
        mine = self.name or f"{type(self).__module__}:{type(self).__qualname__}"
        if state.get("sampler") != mine:
            raise SamplerError(f"the saved state is of sampler {state.get('sampler')!r}, not {mine!r}")
        if state.get("tasks") != self.fingerprint:
            raise SamplerError(f"the saved state is of another task list ({state.get('n_tasks')} tasks, fingerprint {state.get('tasks')}; "
                               f"this one: {len(self.tasks)} tasks, {self.fingerprint})")
        saved = json.loads(json.dumps(state.get("options", {})))
        now = json.loads(json.dumps(self.options()))
        if saved != now:
            diff = sorted(k for k in set(saved) | set(now) if saved.get(k) != now.get(k))
            raise SamplerError(f"the saved state was made with other sampler options ({', '.join(f'{k}: {saved.get(k)!r} -> {now.get(k)!r}' for k in diff)})")
        self.set_learned_state(state.get("learned", {}))
        for key, s in state.get("streams", {}).items():
            old = self._streams.get(int(key))
            stream = _Stream(_rng_from_state(s["rng"], old.rng if old is not None else None))
            stream.order = None if s.get("order") is None else list(s["order"])
            stream.cursor = int(s.get("cursor", 0))
            self._streams[int(key)] = stream

    def save(self, path: str | os.PathLike) -> None:
        """Write :meth:`state_dict` as JSON, atomically.

        Args:
            path: the file to write.
        """
        from ..storage import write_json_atomic

        write_json_atomic(path, self.state_dict())

    def load(self, path: str | os.PathLike) -> bool:
        """Restore a state :meth:`save` wrote; False (and nothing changed) when there is none.

        Args:
            path: the file to read.
        """
        p = Path(path)
        if not p.is_file():
            return False
        try:
            state = json.loads(p.read_text(encoding="utf-8"))
        except ValueError:
            raise SamplerError(f"{p} is not readable JSON") from None
        self.load_state_dict(state)
        return True


class UniformSampler(TaskSampler):
    """Every task alike: per stream, a fresh seeded permutation per epoch; per training batch,
    ``rng.sample``.  Learns nothing; byte-identical to the env's and the loops' order before samplers."""

    name = "uniform"

    def weights(self) -> list[float]:
        """``1 / n`` for each of the ``n`` tasks."""
        return [1.0 / len(self.tasks)] * len(self.tasks) if self.tasks else []

    def next_index(self, stream: int = 0) -> int:
        """The stream's next task in its epoch's permutation (a new permutation when one is used up).

        Args:
            stream: the stream's number.
        """
        if not self.tasks:
            raise SamplerError("the sampler has no tasks to draw from")
        s = self._stream(stream)
        if s.order is None or s.cursor >= len(s.order):
            s.order = [int(i) for i in s.rng.permutation(len(self.tasks))]
            s.cursor = 0
        i = s.order[s.cursor]
        s.cursor += 1
        return i

    def batch(self, k: int, rng: random.Random) -> list[int]:
        """``rng.sample`` of ``min(k, len(tasks))`` task indices.

        Args:
            k: how many tasks.
            rng: the caller's seeded ``random.Random``.
        """
        return rng.sample(range(len(self.tasks)), min(int(k), len(self.tasks)))


class LearnabilitySampler(TaskSampler):
    """Tasks weighted by the chance that a group of their answers teaches something.

    Estimates (fractional rewards count as fractional passes; ``None`` rewards are skipped):

    * per library function f (a task's ``functions``): ``p_f = (S_f + k0 * m0) / (N_f + k0)`` where
      ``S_f`` and ``N_f`` are the (decayed) sums of rewards and answers of its tasks so far, ``m0`` the
      ``prior_mean`` and ``k0`` the ``prior_strength``;
    * per task t: ``p_t = (s_t + kf * p_F) / (n_t + kf)`` where ``p_F`` is the mean of its functions'
      ``p_f`` (``m0`` for a task with none) and ``kf`` the ``function_strength``: an unseen task starts
      from what its functions showed on other tasks.

    Every update first multiplies the task's and its functions' sums by ``decay`` (1: no forgetting;
    less than 1: the policy changes, old outcomes count less).  The score of a task is
    ``P(signal)(p_t, group_size)`` divided by ``(c_t / c_mean) ** cost``, ``c_t`` its mean answer
    length in tokens (task, else its functions, else all; ``cost=0``: tokens ignored; ``cost=1``:
    signal per token).  The weights are ``(1 - floor) * score / sum(score) + floor / n``: every task
    keeps at least ``floor / n`` of the draws (exploration), and all tasks alike when no score is positive.

    :meth:`observe` also takes tasks outside the list (their functions' estimates move, which is how a
    run whose tasks change, self-play's, keeps one estimate), and :meth:`function_weights` weighs
    library functions the same way (self-play's curriculum of functions to propose about).

    Args:
        tasks: the task list.
        group_size: answers per task and update (the G of P(signal)).
        prior_mean: ``m0``, the solve rate assumed before any evidence (in [0, 1]).
        prior_strength: ``k0``, how many answers the prior counts as (>= 0).
        function_strength: ``kf``, how many answers a task's functions' estimate counts as (>= 0).
        decay: the factor old sums are multiplied by at each update (in (0, 1]).
        floor: the share of draws spread over all tasks alike (in [0, 1]).
        cost: the power of the relative answer length the score is divided by (>= 0).
        advantage: ``grpo``, ``centered`` or ``reward`` (which groups carry signal, see :func:`p_signal`).
    """

    name = "learnability"

    def __init__(self, tasks: Sequence[Any], group_size: int = 8, prior_mean: float = 0.5, prior_strength: float = 2.0,
                 function_strength: float = 4.0, decay: float = 0.8, floor: float = 0.1, cost: float = 0.0, advantage: str = "grpo"):
        super().__init__(tasks, group_size)
        checks = {"prior_mean": (prior_mean, 0.0, 1.0), "decay": (decay, 1e-9, 1.0), "floor": (floor, 0.0, 1.0)}
        for key, (value, lo, hi) in checks.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
                raise SamplerError(f"{key} must be a number in [{lo:g}, {hi:g}], got {value!r}")
        for key, value in (("prior_strength", prior_strength), ("function_strength", function_strength), ("cost", cost)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise SamplerError(f"{key} must be a number >= 0, got {value!r}")
        if prior_strength == 0 and function_strength == 0:
            raise SamplerError("prior_strength and function_strength cannot both be 0 (an unseen task would have no estimate)")
        if advantage not in ("grpo", "centered", "reward"):
            raise SamplerError(f"advantage must be grpo, centered or reward, got {advantage!r}")
        self.prior_mean, self.prior_strength, self.function_strength = float(prior_mean), float(prior_strength), float(function_strength)
        self.decay, self.floor, self.cost, self.advantage = float(decay), float(floor), float(cost), advantage
        # decayed sums [rewards, answers, tokens, answers with a token count], per task id and per function
        self._by_task: dict[str, list[float]] = {}
        self._by_function: dict[str, list[float]] = {}
        self.updates = 0

    def options(self) -> dict:
        """The constructor's options (saved with the state; a resume checks them)."""
        return {"group_size": self.group_size, "prior_mean": self.prior_mean, "prior_strength": self.prior_strength,
                "function_strength": self.function_strength, "decay": self.decay, "floor": self.floor, "cost": self.cost,
                "advantage": self.advantage}

    # -- estimates ---------------------------------------------------------------------------------
    def function_rate(self, key: str) -> float:
        """``p_f``: the estimated solve rate of tasks about a library function.

        Args:
            key: the function's name (as in a task's ``functions``).
        """
        s, n = self._by_function.get(key, (0.0, 0.0))[:2]
        return (s + self.prior_strength * self.prior_mean) / (n + self.prior_strength) if n + self.prior_strength > 0 else self.prior_mean

    def task_rate(self, task: Any) -> float:
        """``p_t`` of any task (one of the list or not).

        Args:
            task: a Task (its ``id`` and ``functions`` are read).
        """
        keys = tuple(dict.fromkeys(getattr(task, "functions", ()) or ()))
        p_f = sum(self.function_rate(k) for k in keys) / len(keys) if keys else self.prior_mean
        s, n = self._by_task.get(task.id, (0.0, 0.0))[:2]
        return (s + self.function_strength * p_f) / (n + self.function_strength) if n + self.function_strength > 0 else p_f

    def solve_rate(self, index: int) -> float:
        """``p_t``: the estimated solve rate of a task of the list.

        Args:
            index: the task's index in ``tasks``.
        """
        return self.task_rate(self.tasks[index])

    def signal(self, index: int) -> float:
        """P(signal) of a task of the list for this sampler's group size and advantage.

        Args:
            index: the task's index in ``tasks``.
        """
        return p_signal(self.solve_rate(index), self.group_size, self.advantage)

    def tokens_per_answer(self, index: int) -> float | None:
        """The expected answer length of a task of the list in tokens (None: no lengths reported yet).

        Args:
            index: the task's index in ``tasks``.
        """
        task = self.tasks[index]
        own = self._by_task.get(task.id)
        if own and own[3] > 0:
            return own[2] / own[3]
        known = [v[2] / v[3] for k in getattr(task, "functions", ()) or () if (v := self._by_function.get(k)) and v[3] > 0]
        if known:
            return sum(known) / len(known)
        return self._mean_tokens()

    def _mean_tokens(self) -> float | None:
        total, count = sum(v[2] for v in self._by_task.values()), sum(v[3] for v in self._by_task.values())
        return total / count if count > 0 else None

    def scores(self) -> list[float]:
        """P(signal) per task, divided by the relative answer length to the power ``cost``."""
        out = [self.signal(i) for i in range(len(self.tasks))]
        mean = self._mean_tokens() if self.cost > 0 else None
        if mean:
            out = [s / (max(1e-9, self.tokens_per_answer(i) or mean) / mean) ** self.cost for i, s in enumerate(out)]
        return out

    def _mix(self, scores: Sequence[float]) -> list[float]:
        total, n = sum(scores), len(scores)
        if total <= 0:
            return [1.0 / n] * n
        return [(1.0 - self.floor) * s / total + self.floor / n for s in scores]

    def weights(self) -> list[float]:
        """:meth:`scores` normalized and mixed with the exploration ``floor``."""
        return self._mix(self.scores()) if self.tasks else []

    def function_weights(self, keys: Sequence[str]) -> dict[str, float]:
        """Library functions weighed like tasks: P(signal) of each function's estimated solve rate,
        mixed with the exploration floor (no cost term: a function has no answers of its own).

        Args:
            keys: the functions' names.
        """
        keys = list(keys)
        if not keys:
            return {}
        return dict(zip(keys, self._mix([p_signal(self.function_rate(k), self.group_size, self.advantage) for k in keys])))

    def update(self, index: int, rewards: Sequence[float | None], tokens: Sequence[int | None] | None = None) -> None:
        """:meth:`observe` for a task of the list.

        Args:
            index: the task's index in ``tasks``.
            rewards: one reward per answer (``None``: not judged, skipped).
            tokens: each answer's length in generated tokens, or None.
        """
        self.observe(self.tasks[int(index)], rewards, tokens)

    def observe(self, task: Any, rewards: Sequence[float | None], tokens: Sequence[int | None] | None = None) -> None:
        """:meth:`update` by task (any task: one outside the list moves its own and its functions' estimates).

        Args:
            task: a Task (its ``id`` and ``functions`` are read).
            rewards: one reward per answer (``None``: not judged, skipped).
            tokens: each answer's length in generated tokens, or None.
        """
        judged = [float(r) for r in rewards if r is not None]
        lengths = [int(t) for t, r in zip(tokens, rewards) if t is not None and r is not None] if tokens is not None else []
        if not judged and not lengths:
            return
        d = self.decay
        for v in [self._by_task.setdefault(task.id, [0.0] * 4)] + [
                self._by_function.setdefault(k, [0.0] * 4) for k in dict.fromkeys(getattr(task, "functions", ()) or ())]:
            v[0], v[1] = d * v[0] + sum(judged), d * v[1] + len(judged)
            if lengths:
                v[2], v[3] = d * v[2] + sum(lengths), d * v[3] + len(lengths)
        self.updates += 1

    def stats(self) -> dict:
        """``expected_signal``: P(signal) averaged under the current weights (the share of the next
        groups expected to teach); ``tasks_seen``: tasks of the list with a judged answer."""
        w = self.weights()
        return {"expected_signal": sum(wi * self.signal(i) for i, wi in enumerate(w)),
                "tasks_seen": sum(self._by_task.get(t.id, (0.0, 0.0))[1] > 0 for t in self.tasks), "updates": self.updates}

    def learned_state(self) -> dict:
        """The decayed sums per task id and per function, and the number of updates."""
        return {"tasks": self._by_task, "functions": self._by_function, "updates": self.updates}

    def set_learned_state(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`learned_state`'s sums.

        Args:
            state: a :meth:`learned_state` (read back from JSON).

        Raises:
            SamplerError: a map whose entries are not four sums.
        """
        for key in ("tasks", "functions"):
            if not isinstance(state.get(key, {}), Mapping) or any(len(v) != 4 for v in state.get(key, {}).values()):
                raise SamplerError(f"the saved learnability state's {key!r} is not a map of 4 sums")
        self._by_task = {str(k): [float(x) for x in v] for k, v in state.get("tasks", {}).items()}
        self._by_function = {str(k): [float(x) for x in v] for k, v in state.get("functions", {}).items()}
        self.updates = int(state.get("updates", 0))


SAMPLERS = Registry("task sampler", group="se_gym.samplers", base=TaskSampler)
SAMPLERS.register("uniform", "se_gym.tasks.sampler:UniformSampler")
SAMPLERS.register("learnability", "se_gym.tasks.sampler:LearnabilitySampler")
DEFAULT_SAMPLER = "uniform"


def make_sampler(spec: Any, tasks: Sequence[Any], **options: Any) -> TaskSampler:
    """The sampler for ``spec`` over ``tasks``.

    Args:
        spec: ``None`` (uniform), a registered name (``uniform``, ``learnability``), an entry point of
            ``se_gym.samplers``, ``module:Class`` / ``file.py:Class``, or a TaskSampler already built
            over the same tasks (shared: a vector env's sub-envs, a run and its export).
        tasks: the task list.
        options: the sampler's own options (``group_size``, and ``learnability``'s ``floor``, ``cost``, ...).

    Raises:
        se_gym.registry.RegistryError: ``spec`` names nothing loadable (one line, with the choices).
        SamplerError: an option the sampler does not take, or a built sampler over other tasks.
    """
    if isinstance(spec, TaskSampler):
        if options:
            raise SamplerError(f"options {sorted(options)} cannot be applied to a sampler already built; build it with them")
        if spec.fingerprint != tasks_fingerprint(tasks):
            raise SamplerError(f"the sampler was built over another task list ({len(spec.tasks)} tasks; here {len(tasks)})")
        return spec
    if spec is None:
        spec = DEFAULT_SAMPLER
    if not isinstance(spec, str):
        raise SamplerError(f"sampler must be a name, 'module:Class' or a TaskSampler, got {type(spec).__name__}")
    cls = SAMPLERS.load(spec)
    import inspect

    params = inspect.signature(cls.__init__).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    unknown = [k for k in options if k not in params or k in ("self", "tasks")] if not takes_any else []
    if unknown:
        known = [k for k in params if k not in ("self", "tasks")]
        raise SamplerError(f"sampler {spec!r} takes no option {unknown[0]!r} (its options: {', '.join(known) or 'none'})")
    try:
        return cls(tasks, **options)
    except SamplerError:
        raise
    except (TypeError, ValueError) as exc:
        raise SamplerError(f"sampler {spec!r}: {exc}") from None


def restore_sampler(state: Mapping[str, Any] | str | os.PathLike, tasks: Sequence[Any]) -> TaskSampler:
    """The sampler a saved state describes (its name and options, as saved), over ``tasks``, with
    the state loaded: how a later stage (a rollout, a dataset export) reuses what a run learned.

    Args:
        state: a :meth:`TaskSampler.state_dict` or the path of a :meth:`TaskSampler.save` file.
        tasks: the same task list the state was made over.

    Raises:
        SamplerError: not a sampler's state, or one of another task list.
    """
    if not isinstance(state, Mapping):
        path = Path(state)
        if not path.is_file():
            raise SamplerError(f"no sampler state at {path}")
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            raise SamplerError(f"{path} is not readable JSON") from None
    if not isinstance(state, Mapping) or state.get("kind") != STATE_KIND:
        raise SamplerError("not a task sampler's state (kind is missing)")
    sampler = make_sampler(state["sampler"], tasks, **dict(state.get("options", {})))
    sampler.load_state_dict(state)
    return sampler


def scheduled(tasks: Sequence[Any], sampler: Any, rows: int | None = None, seed: int = 0, indices: bool = False) -> list[Any]:
    """A dataset export's rows: ``tasks`` in order when ``sampler`` is None, else the weighted epoch
    :meth:`TaskSampler.schedule` draws (``rows`` rows, ``seed``); the tasks, or their indices.

    Args:
        tasks: the task list.
        sampler: None, or what :func:`make_sampler` takes (a name, ``module:Class`` or a built sampler).
        rows: the number of rows (a sampler's only; None: one per task).
        seed: the schedule's shuffle seed.
        indices: return task indices instead of tasks.

    Raises:
        SamplerError: a sampler over another task list, or ``rows`` without a sampler.
    """
    tasks = list(tasks)
    if sampler is None:
        if rows is not None:
            raise SamplerError("rows= needs a sampler (without one the export has one row per task)")
        order = list(range(len(tasks)))
    else:
        order = make_sampler(sampler, tasks).schedule(rows, seed)
    return order if indices else [tasks[i] for i in order]


def check_sampler(spec: Any) -> Any:
    """``spec`` if it names a sampler (or is one); a one-line RegistryError otherwise (what a CLI or
    a config checks before anything loads).

    Args:
        spec: None, a registered name, ``module:Class`` / ``file.py:Class`` or a TaskSampler.
    """
    if spec is None or isinstance(spec, TaskSampler):
        return spec
    if not isinstance(spec, str):
        raise RegistryError(f"task sampler must be a name, 'module:Class' or a TaskSampler, got {type(spec).__name__}")
    if ":" in spec and spec not in SAMPLERS:
        SAMPLERS.load(spec)
        return spec
    return SAMPLERS.check(spec)


__all__ = ["DEFAULT_SAMPLER", "LearnabilitySampler", "SAMPLERS", "SamplerError", "TaskSampler", "UniformSampler", "check_sampler",
           "make_sampler", "p_signal", "restore_sampler", "scheduled", "tasks_fingerprint"]
