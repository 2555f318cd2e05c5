"""Run by tests/test_adapters_verifiers.py in a venv with verifiers installed: verifiers' own
evaluation on the environment id "se-gym", against the OpenAI-compatible server at BASE_URL.

- verifiers 0.3.x: ``vf.load_environment("se-gym", ...)`` then ``Environment.evaluate_sync``;
- verifiers 0.4.x: the ``vf-eval`` command's own ``main`` (in this process) on the taskset id ``se-gym``.

An answer that contains ``SANDBOX_DOWN`` is judged by a judge whose sandbox is an HTTP sandbox at a
port where nothing listens: a real infrastructure failure (the rest go to the suite's judge).
Writes one JSON object: each rollout's task, reward, answers, feedback turns and error, the
verifiers version, the judge calls, and (0.3) the warnings verifiers logged.

    python tests/_verifiers_stub_eval.py BASE_URL MAX_TURNS NUM_TASKS ROLLOUTS [SPLIT] OUT.json

``SPLIT``: the built-in split the environment serves (SEBench-v0's default, ``single_test``, when not given).
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sys
import tempfile

MARKER = "SANDBOX_DOWN"


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/run"  # closed again: connections are refused


class Routed:
    """The suite's batched judge, except for marked answers: those go to a judge whose sandbox is down."""

    def __init__(self, live, dead):
        self.live, self.dead, self.items = live, dead, 0
        self.library = live.library

    def _split(self, items):
        self.items += len(items)
        down = [i for i, it in enumerate(items) if MARKER in it[0]]
        return down, [i for i in range(len(items)) if i not in down]

    def judge_many(self, items):
        down, up = self._split(items)
        out = [None] * len(items)
        for idx, judge in ((down, self.dead), (up, self.live)):
            for i, v in zip(idx, judge.judge_many([items[i] for i in idx]) if idx else []):
                out[i] = v
        return out

    async def judge_many_async(self, items):
        down, up = self._split(items)
        out = [None] * len(items)
        for i, v in zip(down, await asyncio.to_thread(self.dead.judge_many, [items[i] for i in down]) if down else []):
            out[i] = v
        for i, v in zip(up, await self.live.judge_many_async([items[i] for i in up]) if up else []):
            out[i] = v
        return out


def _route_judges() -> list:
    from se_gym.integrations import _common
    from se_gym.judge.core import Judge

    get, fronts = _common.Suite.get, []

    def routed_get(options=None):
        suite = get(options)
        if not isinstance(suite.front, Routed):
            suite.front = Routed(suite.front, Judge(suite.library, sandbox="http", http_url=_dead_url()))
            fronts.append(suite.front)
        return suite

    _common.Suite.get = routed_get
    return fronts


class Warnings(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


WARNINGS = Warnings()


def _classic(url: str, max_turns: int, n: int, r: int, split: str) -> list[dict]:
    import verifiers as vf

    env = vf.load_environment("se-gym", max_turns=max_turns, book="closed", split=split)
    logging.getLogger("verifiers").addHandler(WARNINGS)  # after the import of verifiers' v0 stack, which resets its handlers
    client = vf.ClientConfig(api_base_url=url, api_key_var="SE_GYM_STUB_KEY")
    res = env.evaluate_sync(client=client, model="stub", sampling_args={"max_tokens": 64}, num_examples=n, rollouts_per_example=r,
                             state_columns=["se_gym_verdicts"])
    rows = []
    for o in res["outputs"]:
        msgs = [m if isinstance(m, dict) else m.model_dump() for m in o["completion"]]
        err = o.get("error")
        rows.append({"task_id": o["info"]["task_id"], "reward": o["reward"], "env": type(env).__name__,
                     "answers": [m["content"] for m in msgs if m["role"] == "assistant"],
                     "env_turns": [m["content"] for m in msgs if m["role"] == "user"],
                     "error": err["error"] if err else None, "ok": err is None, "stop": o.get("stop_condition"),
                     "judged": [j["status"] for j in o.get("se_gym_verdicts") or []]})
    return rows


def _v1(url: str, max_turns: int, n: int, r: int, split: str) -> list[dict]:
    from verifiers.v1.cli.eval.main import main

    out = tempfile.mkdtemp(prefix="se-gym-vf-eval-")
    main(["se-gym", "-m", "stub", "--client.base-url", url, "--client.api-key-var", "SE_GYM_STUB_KEY",
          "-n", str(n), "-r", str(r), "--env.taskset.max-turns", str(max_turns), "--env.taskset.split", split,
          "--no-push", "--no-rich", "-o", out, "--run.name", "stub"])
    rows = []
    with open(os.path.join(out, "stub", "traces.jsonl")) as f:
        for line in f:
            episode = json.loads(line)
            for t in episode["traces"]:
                msgs = [node["message"] for node in t["nodes"]]
                reward = t["rewards"].get("sebench_reward")
                rows.append({"task_id": episode["task"]["data"]["task_id"], "reward": reward["score"] if reward else None,
                             "env": "SEBenchEnv", "answers": [m["content"] for m in msgs if m["role"] == "assistant"],
                             "env_turns": [m["content"] for m in msgs if m["role"] == "user"][1:],  # [0] is the task
                             "error": t["errors"][-1]["type"] if t["errors"] else None, "ok": t["ok"] and episode["ok"],
                             "stop": t["stop_condition"], "judged": [j["status"] for j in t["info"].get("sebench", [])]})
    return rows


def main() -> None:
    url, max_turns, n, r, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[-1]
    split = sys.argv[5] if len(sys.argv) == 7 else "single_test"
    os.environ["SE_GYM_STUB_KEY"] = "none"  # the stub needs no key; verifiers reads it from a variable
    fronts = _route_judges()
    import verifiers

    rows = (_classic if verifiers.__version__.startswith("0.3.") else _v1)(url, max_turns, n, r, split)
    json.dump({"version": verifiers.__version__, "rows": rows, "judged_items": sum(f.items for f in fronts),
               "warnings": WARNINGS.messages}, open(out, "w"))


if __name__ == "__main__":
    main()
