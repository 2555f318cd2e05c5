"""SEBench-v0 as a SkyRL-Gym text environment (``pip install 'se-gym[skyrl]'``).

    import se_gym.integrations.skyrl              # registers "se_gym" with skyrl_gym
    env = skyrl_gym.make("se_gym", env_config={"book": "closed", "max_turns": 2}, extras=row)
    prompt, meta = env.init(row["prompt"])
    out = env.step(answer)                       # {"observations", "reward", "done", "metadata"}

``env_config`` takes SEBench-v0's options (``tasks``, ``split``, ``seed``, ``library``, ``book``,
``profile``, ``reward``, ``sandbox``, ``max_turns``, ...).  ``extras`` is the dataset row SkyRL
hands each episode, in one of two forms:

- self-contained (:func:`se_gym.integrations.export.to_skyrl_dataset`): the task itself is in
  ``extra_info["task"]``, with the library and profile to judge it by; nothing else is loaded.
  ``env_config``'s ``library``/``profile`` win over the row's; ``tasks``/``split``/``seed`` are
  not used (``seed`` only as the default library, ``mint(seed)``, when neither names one).
- by name: ``task_id`` (top level or in ``extra_info``, as the verl exporter writes it), looked up
  in the suite ``env_config`` describes (built once per process), with ``extra_info["split"]``.

Either may carry ``max_turns``.  With ``max_turns > 1`` a failed answer gets the execution feedback
as the next user turn.  All episodes of a process with the same judge configuration share one
judge, and steps taken at the same time (SkyRL steps its envs from many threads) are judged in one
sandbox batch.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Mapping

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
from skyrl_gym.envs.registration import register, registry

from ._common import BatchedJudge, Suite, close_shared_judges, env_options, shared_batched_judge
from .export import SKYRL_ENV_CLASS

ENV_ID = SKYRL_ENV_CLASS



def _task_id(extras: Mapping[str, Any]) -> str | None:
    if extras.get("task_id"):
        return str(extras["task_id"])
    info = extras.get("extra_info") or {}
    return str(info["task_id"]) if isinstance(info, Mapping) and info.get("task_id") else None


def _row_task(info: Mapping[str, Any]):
    """The task a self-contained row carries (``extra_info["task"]``, JSON), else None."""
    raw = info.get("task")
    if raw is None:
        return None
    from ..tasks import Task

    try:
        return Task.from_json(json.loads(raw) if isinstance(raw, (str, bytes)) else dict(raw))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"extra_info.task is not a task's JSON (write rows with to_skyrl_dataset): {exc}") from None


def _row_judge(library: Any, profile: str, reward: str, sandbox: Any, strip_think: bool) -> BatchedJudge:
    return shared_batched_judge(library, profile, reward, sandbox, strip_think)


def close_all() -> None:
    """Close every judge this module's envs share (the suites' and the self-contained rows')."""
    Suite.close_all()
    close_shared_judges()


class SEBenchTextEnv(BaseTextEnv):
    """One SE-Bench episode in SkyRL-Gym's text protocol (``init`` / ``step``)."""

    def __init__(self, env_config: Any = None, extras: Dict[str, Any] | None = None):
        super().__init__()
        extras = dict(extras or {})
        config = {k: v for k, v in dict(env_config.items() if env_config is not None else {}).items() if v is not None}
        config = env_options(config)  # refuses unknown options
        info = extras.get("extra_info") if isinstance(extras.get("extra_info"), Mapping) else {}
        episode = {k: config.pop(k) for k in Suite.EPISODE_OPTIONS if k in config}
        if "max_turns" in extras:
            episode["max_turns"] = int(extras["max_turns"])
        task = _row_task(info)
        if task is not None:
            self.suite = None  # the row is the whole task: no suite to build
            self.env = self._row_env(task, info, config, episode)
            tid = task.id
        else:
            if "split" not in config and info.get("split"):
                config["split"] = info["split"]
            self.suite = Suite.get(config)
            self.env = self.suite.env(**episode)
            tid = _task_id(extras)
            if tid is None:
                raise ValueError("extras must carry the task (extra_info.task, as to_skyrl_dataset writes) "
                                 "or name it: 'task_id' (or extra_info.task_id, as the verl exporter writes)")
        self.max_turns = self.env.max_turns
        self.task_id = tid
        self._obs, self._info = self.env.reset(options={"task_id": tid})
        self._done = False
        self._last: dict = {}

    @staticmethod
    def _row_env(task, info: Mapping[str, Any], config: dict, episode: dict):
        from ..envs import SEBenchEnv

        library = config.get("library") or info.get("library") or config.get("seed", 0)
        profile = config.get("profile") or info.get("profile") or "strict"
        reward = config.get("reward", "binary")
        front = _row_judge(library, profile, reward, config.get("sandbox", "local"), config.get("strip_think", True))
        return SEBenchEnv(tasks=[task], split=task.split, library=front.library, profile=profile, reward=reward,
                          judge=front, **episode)

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
