"""SEBench-v0 as a SkyRL-Gym text environment (``pip install 'se-gym[skyrl]'``).

    import se_gym.integrations.skyrl              # registers "se_gym" with skyrl_gym
    env = skyrl_gym.make("se_gym", env_config={"book": "closed", "max_turns": 2}, extras=row)
    prompt, meta = env.init(row["prompt"])
    out = env.step(answer)                       # {"observations", "reward", "done", "metadata"}

``env_config`` takes SEBench-v0's options (``tasks``, ``split``, ``seed``, ``library``, ``book``,
``profile``, ``reward``, ``sandbox``, ``max_turns``, ...).  ``extras`` is the dataset row SkyRL
hands each episode: it names the task by ``task_id`` (top level or in ``extra_info``, as the verl
exporter writes it), and may carry ``max_turns`` and ``split``.  With ``max_turns > 1`` a failed
answer gets the execution feedback as the next user turn.  All episodes of a process with the
same options share one judge, and steps taken at the same time (SkyRL steps its envs from many
threads) are judged in one sandbox batch.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
from skyrl_gym.envs.registration import register, registry

from ._common import Suite, env_options

ENV_ID = "se_gym"


def _task_id(extras: Mapping[str, Any]) -> str | None:
    if extras.get("task_id"):
        return str(extras["task_id"])
    info = extras.get("extra_info") or {}
    return str(info["task_id"]) if isinstance(info, Mapping) and info.get("task_id") else None


class SEBenchTextEnv(BaseTextEnv):
    """One SE-Bench episode in SkyRL-Gym's text protocol (``init`` / ``step``)."""

    def __init__(self, env_config: Any = None, extras: Dict[str, Any] | None = None):
        super().__init__()
        extras = dict(extras or {})
        config = {k: v for k, v in dict(env_config.items() if env_config is not None else {}).items() if v is not None}
        info = extras.get("extra_info") if isinstance(extras.get("extra_info"), Mapping) else {}
        if "split" not in config and info.get("split"):
            config["split"] = info["split"]
        episode = {k: config.pop(k) for k in Suite.EPISODE_OPTIONS if k in config}
        if "max_turns" in extras:
            episode["max_turns"] = int(extras["max_turns"])
        self.suite = Suite.get(env_options(config))
        self.env = self.suite.env(**episode)
        self.max_turns = self.env.max_turns
        tid = _task_id(extras)
        if tid is None:
            raise ValueError("extras must name the task: 'task_id' (or extra_info.task_id, as the verl exporter writes)")
        self.task_id = tid
        self._obs, self._info = self.env.reset(options={"task_id": tid})
        self._done = False
        self._last: dict = {}

    def init(self, prompt: Any = None):
        """The prompt for the model: the dataset's own prompt when given, else the env's."""
        if prompt:
            return prompt, {"task_id": self.task_id}
        return self.env.messages_for(self.env.task), {"task_id": self.task_id}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        if self._done:
            raise RuntimeError("the episode is over: make a new env for the next one")
        if not isinstance(action, str):
            raise TypeError(f"an action is the model's answer text (str), got {type(action).__name__}")
        self.turns += 1
        _, reward, terminated, truncated, info = self.env.step(action)
        self._done = terminated or truncated
        v = info["verdict"]
        self._last = {"status": v.status.value, "turn": info["turn"], "passed": v.status.value == "passed"}
        observations = []
        if not self._done:
            from ..envs.sebench import feedback_text

            observations = [{"role": "user", "content": feedback_text(v, info["turn"], self.env.max_turns, self.env.visible_cases)}]
        metadata = {"task_id": self.task_id, "status": v.status.value, "turn": info["turn"],
                    "sebench_code": v.sebench_code, "infrastructure": bool(v.infrastructure)}
        return BaseTextEnvStepOutput(observations=observations, reward=float(reward), done=self._done, metadata=metadata)

    def get_metrics(self) -> Dict[str, Any]:
        return {"turns": self.turns, "passed": float(self._last.get("passed", False))}

    def close(self):
        self.env.close()  # the shared judge stays with the suite


if ENV_ID not in registry:
    register(id=ENV_ID, entry_point="se_gym.integrations.skyrl:SEBenchTextEnv")
