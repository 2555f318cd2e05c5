"""The reference client of the HTTP agent protocol (docs/bench.md): an agent that is a service.

``POST /reset`` ``{}`` -> ``{}``: forget everything (called once, before the learn phase).
``POST /act`` ``{"observations": [OBS, ...]}`` -> ``{"answers": [TEXT, ...], "prompt_tokens": [N, ...]?}``.
``POST /learn`` ``{"trajectories": [OBS + {"response", "reward", "status"}, ...]}`` -> ``{"metrics": {...}}``.
``POST /state`` ``{}`` -> ``{"memory": JSON}`` (optional): the service's memory, hashed at freeze and
after the test phase; a service without it answers 404 and its hash is of nothing (always equal).

``OBS`` is ``{"task_id", "split", "book", "prompt", "query", "function_name", "docs"}``.  Only train
trajectories are ever posted to ``/learn``; the client refuses the rest before sending.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Sequence

from ..agents import Agent, Observation, Trajectory
from ..errors import SEGymError


class HTTPAgentError(SEGymError, RuntimeError):
    """The service failed or answered something that is not the protocol."""


def observation_json(o: Observation) -> dict:
    """An observation as the HTTP protocol sends it (task id, split, book, prompt, query, signature, docs).

    Args:
        o: the observation.
    """
    task = o.task
    return {"task_id": getattr(task, "id", ""), "split": o.split, "book": o.book, "prompt": o.prompt,
            "query": getattr(task, "query", ""), "function_name": getattr(task, "function_name", ""), "docs": list(o.docs)}


class HTTPAgent(Agent):
    """Forwards act/learn/reset to a service at ``url`` (``--agent http:URL``).

    Args:
        url: the service's base URL (``http://host:port``).
        book: the book it answers with at test time (``closed`` unless it is a ceiling).
        timeout: seconds per request.
    """

    def __init__(self, url: str, book: str = "closed", timeout: float = 120.0):
        self.url, self.book, self.timeout = url.rstrip("/"), book, timeout
        self.last_prompt_tokens: list[int] | None = None
        self._reset = False

    def _post(self, path: str, body: dict, missing_ok: bool = False) -> dict | None:
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                data = json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as exc:
            if missing_ok and exc.code == 404:
                return None
            raise HTTPAgentError(f"POST {self.url}{path}: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise HTTPAgentError(f"POST {self.url}{path}: {exc}") from None
        if not isinstance(data, dict):
            raise HTTPAgentError(f"POST {self.url}{path}: expected a JSON object")
        return data

    def reset(self) -> None:
        """``POST /reset``: the service starts from nothing (a fresh run)."""
        self._post("/reset", {})
        self._reset = True

    def act(self, observations: Sequence[Observation]) -> list[str]:
        """``POST /act`` with the observations; the service's answers (and prompt tokens, if it says).

        Args:
            observations: the questions, as the runner rendered them for the agent's book.

        Raises:
            HTTPAgentError: the service failed or did not answer one string per observation.
        """
        data = self._post("/act", {"observations": [observation_json(o) for o in observations]})
        answers = data.get("answers")
        if not isinstance(answers, list) or len(answers) != len(observations) or not all(isinstance(a, str) for a in answers):
            raise HTTPAgentError(f"POST {self.url}/act: 'answers' must be {len(observations)} strings")
        tokens = data.get("prompt_tokens")
        self.last_prompt_tokens = [int(t) for t in tokens] if isinstance(tokens, list) else None
        return answers

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        rows = [{**observation_json(t.observation), "response": t.response, "reward": t.reward, "status": t.status} for t in trajectories]
        metrics = (self._post("/learn", {"trajectories": rows}) or {}).get("metrics", {})
        return dict(metrics) if isinstance(metrics, dict) else {}

    def memory_state(self) -> Any:
        """The service's memory (``POST /state``; an empty list when it has no such endpoint)."""
        data = self._post("/state", {}, missing_ok=True)
        return [] if data is None else data.get("memory", [])

    def set_memory_state(self, state: Any) -> None:
        """The service keeps its own state; a resumed run continues with it.

        Args:
            state: ignored.
        """


__all__ = ["HTTPAgent", "HTTPAgentError", "observation_json"]
