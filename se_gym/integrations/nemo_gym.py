"""SEBench-v0 as a NeMo Gym resources server on NeMo Gym's Gymnasium server (``nemo-gym`` 0.7).

NeMo Gym runs an agent server (``gymnasium_agent``), a model server and resources servers; a
Gymnasium-style resources server answers ``POST /reset`` and ``POST /step`` (the agent's calls, one
session per rollout) with ``(observation, reward, terminated, truncated, info)``.  Here:

- ``reset`` starts the row's task (the row is self-contained: the task's JSON, the library and
  profile, as :func:`se_gym.integrations.export.nemo_gym_rows` writes it);
- ``step`` judges the model's answer; a failed answer with turns left gets the execution feedback
  as the next user message (reward 0 on that step); a passing answer or the last turn ends the
  episode with the judge's reward (``gymnasium_agent`` sums the steps' rewards: the verdict's).
  An answer the sandbox could not run ends the episode with ``info["mask_sample"] = True`` and
  ``info["failure_kind"]``: NeMo Gym's way to keep it out of scores and training, not a 0.

Every session of a server shares one judge per configuration, and the steps that arrive together
are judged in one sandbox batch.  Serve it as any resources server (``entrypoint`` this module's
``SEBenchResourcesServer``), or build its app with ``SEBenchResourcesServer(config=...,
server_client=...).setup_webserver()``.  docs/integrations/nemo_gym.md has the config and a run.
"""
from __future__ import annotations

import json
from typing import Optional

from nemo_gym.base_resources_server import BaseResourcesServerConfig
from nemo_gym.openai_utils import NeMoGymResponse
from resources_servers.gymnasium import GymnasiumServer, extract_text

from ..judge.options import JUDGE_DEFAULTS
from ._common import close_shared_judges, shared_batched_judge


class SEBenchResourcesServerConfig(BaseResourcesServerConfig):
    """The server's judge (a row's ``library``/``profile`` win) and the episode's default answer budget."""

    library: Optional[str] = None
    profile: str = JUDGE_DEFAULTS.profile
    reward: str = "binary"
    sandbox: str = JUDGE_DEFAULTS.sandbox
    strip_think: bool = True
    max_turns: int = 1


class SEBenchResourcesServer(GymnasiumServer):
    """SE-Bench episodes for NeMo Gym's ``gymnasium_agent``."""

    config: SEBenchResourcesServerConfig

    def _episode(self, metadata: dict) -> dict:
        from ..tasks import Task

        raw = metadata.get("task")
        if raw is None:
            raise ValueError("the row carries no 'task' (write rows with se_gym.integrations.export.nemo_gym_rows)")
        task = Task.from_json(json.loads(raw) if isinstance(raw, str) else dict(raw))
        c = self.config
        library = c.library or metadata.get("library") or "seed:0"
        profile = metadata.get("profile") or c.profile
        return {"task": task, "turn": 0, "max_turns": int(metadata.get("max_turns") or c.max_turns),
                "judge": shared_batched_judge(library, profile, c.reward, c.sandbox, c.strip_think)}

    async def reset(self, metadata: dict, session_id: Optional[str] = None) -> tuple[Optional[str], dict]:
        self._cleanup_session(session_id)
        ep = self.session_state[session_id] = self._episode(metadata)
        return None, {"task_id": ep["task"].id, "max_turns": ep["max_turns"]}

    async def step(self, action: NeMoGymResponse, metadata: dict, session_id: Optional[str] = None
                   ) -> tuple[Optional[str], float, bool, bool, dict]:
        from ..envs.sebench import feedback_text

        ep = self.session_state.get(session_id)
        if ep is None:  # a step without its reset (a restarted server): a one-answer episode of the row
            ep = self.session_state[session_id] = self._episode(metadata)
        task, answer = ep["task"], extract_text(action)
        verdict = (await ep["judge"].judge_many_async([task.judge_item(answer)]))[0]  # (with its reference: strict's dependence check)
        ep["turn"] += 1
        info = {"task_id": task.id, "status": verdict.status.value, "turn": ep["turn"], "sebench_code": verdict.sebench_code}
        if verdict.infrastructure:
            info.update(mask_sample=True, failure_kind="verifier_error",
                        failure_reason=f"se-gym: the sandbox could not judge the answer ({verdict.status.value}); not a wrong answer")
            return None, 0.0, True, False, info
        if verdict.passed or ep["turn"] >= ep["max_turns"]:
            return None, float(verdict.reward), True, False, info
        return feedback_text(verdict, ep["turn"], ep["max_turns"]), 0.0, False, False, info


def close_all() -> None:
    """Stop the shared judges and their batchers (a server process that exits stops them anyway)."""
    close_shared_judges()


if __name__ == "__main__":  # NeMo Gym starts a resources server by running its entrypoint
    SEBenchResourcesServer.run_webserver()
