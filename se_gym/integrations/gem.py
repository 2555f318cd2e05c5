"""SEBench-v0 as a GEM environment (``pip install gem-llm``; GEM: ``make``/``reset``/``step`` for LLM agents).

    import gem
    import se_gym.integrations.gem                  # registers "se_gym:SEBench-v0" with GEM
    env = gem.make("se_gym:SEBench-v0", split="single_test", max_turns=2)
    obs, info = env.reset()                        # the task's prompt (text), info["task_id"]
    obs, reward, terminated, truncated, info = env.step(answer)
    vec = gem.make_vec(["se_gym:SEBench-v0"] * 8, seed=0)   # GEM's vector env: env i gets seed + i

Options are SEBench-v0's (``tasks``, ``split``, ``library``, ``book``, ``profile``, ``reward``,
``sandbox``, ``max_turns``...) plus GEM's ``seed``: each env serves its suite's tasks in a shuffle
seeded by it (a new shuffle each pass), as GEM's dataset envs do; ``reset(seed=...)`` picks a task
from that seed instead.  A failed answer, with turns left, gets the execution feedback as the next
observation; a passing answer or the last turn ends the episode with GEM's terminal observation.
Every env of a process with the same options shares one judge, and steps taken at the same time
(GEM's async vector env) are judged in one sandbox batch.  GEM has no flag for an answer the
sandbox could not run: such a step has ``info["infrastructure"] = True`` and reward 0.0, which a
trainer must leave out rather than read as wrong.
"""
from __future__ import annotations

import random
from typing import Any, Optional

import gem
from gem.utils.constants import TERMINAL_STATE

from ._common import Suite, env_options

ENV_ID = "se_gym:SEBench-v0"


class SEBenchGemEnv(gem.Env):
    """One SE-Bench episode at a time, in GEM's text protocol."""

    def __init__(self, seed: int = 0, **options: Any):
        super().__init__()
        opts = env_options(options)
        episode = {k: opts.pop(k) for k in Suite.EPISODE_OPTIONS if k in opts}
        self.options = dict(opts, **episode)
        self.suite = Suite.get(opts)
        self.env = self.suite.env(**episode)
        self.seed, self.epoch = seed, 0
        self._order: list[int] = []
        self._done = True

    def _next_index(self, seed: Optional[int]) -> int:
        n = len(self.suite.tasks)
        if seed is not None:
            return random.Random(seed).randrange(n)
        if not self._order:
            self._order = list(range(n))
            random.Random(f"{self.seed}/{self.epoch}").shuffle(self._order)
            self.epoch += 1
        return self._order.pop(0)

    def reset(self, seed: Optional[int] = None) -> tuple[str, dict[str, Any]]:
        """A new episode: the next task of the seeded order (or the one ``seed`` picks); returns its prompt."""
        index = self._next_index(seed)
        self.env.reset(options={"index": index})
        self._done = False
        task = self.env.task
        text = "\n\n".join(m["content"] for m in self.env.messages_for(task))
        return text, {"task_id": task.id, "index": index, "max_turns": self.env.max_turns}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Judge the answer: (feedback or GEM's terminal observation, reward, terminated, truncated, info)."""
        if self._done:
            raise RuntimeError("the episode is over: reset first")
        if not isinstance(action, str):
            raise TypeError(f"an action is the model's answer text (str), got {type(action).__name__}")
        from ..envs.sebench import feedback_text

        _, reward, terminated, truncated, info = self.env.step(action)
        v = info["verdict"]
        self._done = terminated or truncated
        out = {"task_id": self.env.task.id, "status": v.status.value, "turn": info["turn"],
               "sebench_code": v.sebench_code, "infrastructure": bool(v.infrastructure)}
        obs = TERMINAL_STATE if self._done else feedback_text(v, info["turn"], self.env.max_turns, self.env.visible_cases)
        return obs, float(reward), bool(terminated), bool(truncated), out

    def sample_random_action(self) -> str:
        return "```python\n# no idea\n```"

    def spawn(self, same_state: bool = False, **kwargs: Any) -> "SEBenchGemEnv":
        env = SEBenchGemEnv(**{"seed": self.seed, **self.options, **kwargs})
        if same_state and not self._done:
            env.env.reset(options={"task_id": self.env.task.id})
            env._done = False
        return env


if ENV_ID not in gem.envs.registration.ENV_REGISTRY:
    gem.register(ENV_ID, entry_point="se_gym.integrations.gem:SEBenchGemEnv")
