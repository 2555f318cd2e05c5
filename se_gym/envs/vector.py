"""A vector of SE-Bench episodes judged together: all N answers of a step go to the sandbox in one
batch (not N processes), and the judging can run while the caller generates the next batch.

Autoreset: ``AutoresetMode.SAME_STEP``.  When sub-env ``i`` finishes an episode in ``step``, it is
reset at once: ``obs[i]`` is the first observation of its next episode, and the finished episode's
last observation and info are in ``infos["final_obs"][i]`` and ``infos["final_info"]`` (masked by
``infos["_final_obs"]``).  Rewards, terminations and truncations are those of the finished episode.

Gymnasium's own ``AsyncVectorEnv`` also works (``gym.make_vec(..., vectorization_mode="async",
vector_kwargs={"shared_memory": False})``: text cannot live in shared memory), but it judges each
answer in its own worker process; this class is the fast path.

A ``reset()`` while a ``step_async`` (or ``astep``) is still judging drops that step first, as
``step_cancel()`` does: it waits for the sandbox batch in flight, discards its verdicts (they
belong to the episodes being replaced) and logs a warning; a later ``step_wait()`` then raises, and
a pending ``astep`` raises ``StepCancelled``.  Gymnasium's ``AsyncVectorEnv`` refuses such a reset
instead; dropping the step keeps an RL loop that resets after an error running.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..errors import SEGymError
from .sebench import SEBenchEnv

log = logging.getLogger(__name__)


class StepCancelled(SEGymError, RuntimeError):
    """The step being awaited was dropped (by ``reset()`` or ``step_cancel()``) before it finished."""


class SEBenchVectorEnv(VectorEnv):
    """``num_envs`` SE-Bench episodes sharing one task list, one library and one judge.

    Keyword arguments are those of :class:`SEBenchEnv`.  Sub-env ``i`` is seeded with ``seed + i``
    on ``reset(seed=seed)``, so each draws its own epoch order.  The sub-envs share one task sampler
    (``sampler=``): sub-env ``i`` draws with its own generator (stream ``i``), and every finished
    episode updates the one shared state (``venv.unwrapped.sampler``).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, **env_kwargs: Any):
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        first = SEBenchEnv(**env_kwargs)
        # the other sub-envs reuse the first one's tasks, library and (lazily created) judge
        shared = dict(env_kwargs, tasks=first.tasks, library=first.library, sampler=first.sampler, sampler_options=None)
        self.envs = [first] + [SEBenchEnv(**shared) for _ in range(num_envs - 1)]
        for i, env in enumerate(self.envs):
            env._sampler_stream = i  # one shared sampler state; each sub-env draws from its own stream
        self.num_envs = num_envs
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(first.observation_space, num_envs)
        self.action_space = batch_space(first.action_space, num_envs)
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._pending: concurrent.futures.Future | None = None
        self._pending_actions: list[str] | None = None

    @property
    def tasks(self):
        return self.envs[0].tasks

    @property
    def library(self):
        return self.envs[0].library

    @property
    def sampler(self):
        """The task sampler all sub-envs share (:mod:`se_gym.tasks.sampler`)."""
        return self.envs[0].sampler

    @property
    def judge(self):
        j = self.envs[0].judge
        for env in self.envs[1:]:
            env._judge, env._owns_judge = j, False
        return j

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        """Reset every sub-env (``seed``: an int, giving ``seed + i``, or one seed per sub-env)."""
        seeds = [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else (seed or [None] * self.num_envs)
        if len(seeds) != self.num_envs:
            raise ValueError(f"reset needs {self.num_envs} seeds, got {len(seeds)}")
        if self._pending is not None:
            # its verdicts are for the episodes this reset replaces: never hand them to the new ones
            log.warning("reset() with a step still judging: that step is dropped (its verdicts are discarded)")
            self.step_cancel()
        obs, infos = [], {}
        _ = self.judge  # one judge, shared before the sub-envs' resets start it
        for i, (env, s) in enumerate(zip(self.envs, seeds)):
            o, info = env.reset(seed=s, options=options)
            obs.append(o)
            infos = self._add_info(infos, info, i)
        return tuple(obs), infos

    def _check_actions(self, actions: Sequence[str]) -> list[str]:
        """Everything that can be wrong with a step is refused here, before the sandbox runs."""
        actions = list(actions)
        if len(actions) != self.num_envs:
            raise ValueError(f"step needs {self.num_envs} actions, got {len(actions)}")
        for i, (env, action) in enumerate(zip(self.envs, actions)):
            try:
                env.check_ready()
                env.check_action(action)
            except (gym.error.ResetNeeded, ValueError) as exc:
                raise type(exc)(f"sub-env {i}: {exc}") from None
        return actions

    def _finish(self, actions: list[str], judged: list) -> tuple:
        obs, infos = [], {}
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terms = np.zeros(self.num_envs, dtype=np.bool_)
        truncs = np.zeros(self.num_envs, dtype=np.bool_)
        final_obs = [None] * self.num_envs
        final_mask = np.zeros(self.num_envs, dtype=np.bool_)
        final_infos: dict = {}
        for i, (env, action, (verdict, latency)) in enumerate(zip(self.envs, actions, judged)):
            o, r, te, tr, info = env.apply_verdict(action, verdict, latency)
            rewards[i], terms[i], truncs[i] = r, te, tr
            if te or tr:
                final_obs[i], final_mask[i] = o, True
                final_infos = self._add_info(final_infos, info, i)
                o, info = env.reset()
            obs.append(o)
            infos = self._add_info(infos, info, i)
        if final_mask.any():
            infos["final_obs"] = np.array(final_obs, dtype=object)
            infos["_final_obs"] = final_mask
            infos["final_info"] = final_infos
            infos["_final_info"] = final_mask
        return tuple(obs), rewards, terms, truncs, infos

    def step(self, actions: Sequence[str]):
        """Judge all answers in one sandbox batch, then advance every sub-env."""
        actions = self._check_actions(actions)
        _ = self.judge  # share one judge before judging
        judged = self.envs[0].judge_answers(actions, [env.task for env in self.envs])
        return self._finish(actions, judged)

    # -- non-blocking APIs -------------------------------------------------------------
    def step_async(self, actions: Sequence[str]) -> concurrent.futures.Future:
        """Start judging ``actions`` in the background; ``step_wait()`` returns the step result."""
        if self._pending is not None:
            raise RuntimeError("step_async called twice without step_wait")
        actions = self._check_actions(actions)
        _ = self.judge  # (the shared judge, made here rather than in the worker thread)
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="se-gym-judge")
        tasks = [env.task for env in self.envs]
        self._pending_actions = actions
        self._pending = self._executor.submit(self.envs[0].judge_answers, actions, tasks)
        return self._pending

    def step_wait(self, timeout: float | None = None):
        """The result of the last ``step_async``.

        On ``timeout`` it raises ``TimeoutError`` and the job stays pending: call ``step_wait``
        again to collect it (the judging goes on meanwhile), or ``step_cancel()`` to drop it.
        """
        if self._pending is None:
            raise RuntimeError("step_wait called without step_async")
        try:
            judged = self._pending.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"judging not finished after {timeout} s; it is still running: call step_wait() "
                               "again, or step_cancel()") from None
        except BaseException:
            self._pending = self._pending_actions = None  # the job failed: nothing left to collect
            raise
        actions = self._pending_actions
        self._pending = self._pending_actions = None
        return self._finish(actions, judged)

    def step_cancel(self) -> None:
        """Drop the pending ``step_async`` job: wait until the sandbox batch in flight ends (a
        running batch cannot be taken back from the sandbox), then discard its verdicts.  The
        sub-envs stay where they were, as if the step had not been taken."""
        if self._pending is None:
            return
        fut, self._pending, self._pending_actions = self._pending, None, None
        if not fut.cancel():
            concurrent.futures.wait([fut])

    async def astep(self, actions: Sequence[str]):
        """``await env.astep(actions)``: the step, without blocking the event loop while judging."""
        self.step_async(actions)
        fut = self._pending
        try:
            await asyncio.wrap_future(fut)
        except asyncio.CancelledError:
            if not (fut.cancelled() and self._pending is not fut):
                raise  # the awaiting task itself was cancelled
        if self._pending is not fut:  # a reset() or step_cancel() dropped it while judging
            raise StepCancelled("the step was dropped by reset() or step_cancel() before its verdicts arrived")
        return self.step_wait()

    def close_extras(self, **kwargs: Any) -> None:
        self.step_cancel()  # a job still judging finishes before its judge closes
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        judge, owned = self.envs[0]._judge, self.envs[0]._owns_judge
        for env in self.envs:
            env._judge = None
        if judge is not None and owned:  # a judge passed in (judge=...) belongs to the caller
            judge.close()

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple:
        out = []
        for env in self.envs:
            attr = getattr(env, name)
            out.append(attr(*args, **kwargs) if callable(attr) else attr)
        return tuple(out)

    def get_attr(self, name: str) -> tuple:
        return tuple(getattr(env, name) for env in self.envs)
