"""Run by tests/test_adapters_nemo_gym.py in NeMo Gym's venv (nemo-gym 0.7, Python 3.13): SE-Bench's
resources server on NeMo Gym's Gymnasium server, played by NeMo Gym's own ``gymnasium_agent`` (its
``/run``, as ``gym eval run`` posts each dataset row), which asks a model server for each turn.

Three HTTP servers on 127.0.0.1, each built by its NeMo Gym class's own ``setup_webserver``: the
SE-Bench resources server, the gymnasium agent (its ServerClient finds the others through a global
config), and a scripted Responses-API model server (a test double: it answers each task by a script).

    python tests/_nemo_gym_loop.py OUT.json
"""

import json
import socket
import sys
import threading
import time


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(app, port):
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server


def _model_app(script: dict):
    """POST /v1/responses: the script's answer for the task whose query opens the input, at the turn
    the input is at (the number of assistant messages in it)."""
    from fastapi import FastAPI, Request

    app = FastAPI()

    @app.post("/v1/responses")
    async def responses(request: Request):
        body = await request.json()
        items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]

        def text(m):
            c = m.get("content", "")
            return c if isinstance(c, str) else "".join(p.get("text", "") for p in c)

        first = next(text(m) for m in items if m.get("role") == "user")
        turn = sum(1 for m in items if m.get("role") == "assistant" or m.get("type") == "message")
        answers = next((a for q, a in script.items() if q in first), ["no answer"])
        answer = answers[min(turn, len(answers) - 1)]
        return {"id": f"resp-{turn}", "created_at": 0.0, "model": body.get("model", "stub"), "object": "response",
                "output": [{"id": f"msg-{turn}", "type": "message", "role": "assistant", "status": "completed",
                            "content": [{"type": "output_text", "text": answer, "annotations": []}]}],
                "parallel_tool_calls": False, "tool_choice": "auto", "tools": [],
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                          "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}

    return app


def main() -> None:
    from importlib.metadata import version

    import httpx
    from nemo_gym.config_types import BaseServerConfig, ModelServerRef, ResourcesServerRef
    from nemo_gym.server_utils import ServerClient
    from omegaconf import OmegaConf
    from responses_api_agents.gymnasium_agent.app import GymnasiumAgent, GymnasiumAgentConfig

    from se_gym.integrations.export import nemo_gym_rows
    from se_gym.integrations.nemo_gym import SEBenchResourcesServer, SEBenchResourcesServerConfig
    from se_gym.library import mint
    from se_gym.tasks import builtin_tasks, render_messages

    lib, tasks = mint(0), builtin_tasks("single_test", seed=0)[:4]
    ok = [f"```python\n{t.library_solution}\n```" for t in tasks]
    bad = "```python\ndef solve(*args):\n    return None\n```"
    script = {tasks[0].query: [ok[0]], tasks[1].query: [bad, ok[1]], tasks[2].query: [bad, bad],
              tasks[3].query: ["# SANDBOX_DOWN\n" + ok[3]]}
    rows = nemo_gym_rows([{"task": t, "prompt": render_messages(t, lib)} for t in tasks], library=lib, max_turns=2)
    rows[3]["library"] = "seed:0"
    # issue 42: two train tasks with Python oracles, one answered with its reference, one with an
    # answer that names the library (on a constant) and computes in Python
    from _dependence_corpus import adapter_answers

    more = builtin_tasks("train", seed=0)[:2]
    script[more[0].query] = [adapter_answers(more[0], lib)["reference"]]
    script[more[1].query] = [adapter_answers(more[1], lib)["unused"]]
    rows += nemo_gym_rows([{"task": t, "prompt": render_messages(t, lib)} for t in more], library=lib, max_turns=1)
    ports = {"se_gym": _port(), "agent": _port(), "policy_model": _port()}
    gc = OmegaConf.create({
        "se_gym": {"resources_servers": {"se_gym": {"host": "127.0.0.1", "port": ports["se_gym"]}}},
        "se_gym_gymnasium_agent": {"responses_api_agents": {"gymnasium_agent": {"host": "127.0.0.1", "port": ports["agent"]}}},
        "policy_model": {"responses_api_models": {"stub": {"host": "127.0.0.1", "port": ports["policy_model"]}}},
    })
    import os

    # what NeMo Gym hands each server it launches: the resolved global config in the environment
    os.environ["NEMO_GYM_CONFIG_DICT"] = OmegaConf.to_yaml(gc)
    client = ServerClient(head_server_config=BaseServerConfig(host="127.0.0.1", port=_port()), global_config_dict=gc)
    resources = SEBenchResourcesServer(config=SEBenchResourcesServerConfig(host="127.0.0.1", port=ports["se_gym"], entrypoint="",
                                                                           name="se_gym", max_turns=1), server_client=client)
    # one answer's sandbox is down: route answers marked SANDBOX_DOWN to a judge whose HTTP sandbox is not there
    from se_gym.integrations import _common
    from se_gym.judge.core import Judge

    dead = Judge(lib, sandbox="http", http_url=f"http://127.0.0.1:{_port()}/run")
    real = _common.shared_batched_judge

    class Routed:
        def __init__(self, live):
            self.live = live

        async def judge_many_async(self, items):
            import asyncio

            if any("SANDBOX_DOWN" in it[0] for it in items):
                return await asyncio.to_thread(dead.judge_many, items)
            return await self.live.judge_many_async(items)

    import se_gym.integrations.nemo_gym as ng

    ng.shared_batched_judge = lambda *a, **k: Routed(real(*a, **k))
    agent = GymnasiumAgent(config=GymnasiumAgentConfig(
        host="127.0.0.1", port=ports["agent"], entrypoint="", name="se_gym_gymnasium_agent",
        resources_server=ResourcesServerRef(type="resources_servers", name="se_gym"),
        model_server=ModelServerRef(type="responses_api_models", name="policy_model"), max_steps=3), server_client=client)
    servers = [_serve(resources.setup_webserver(), ports["se_gym"]), _serve(agent.setup_webserver(), ports["agent"]),
               _serve(_model_app(script), ports["policy_model"])]
    out = {"version": version("nemo-gym"), "runs": []}
    try:
        with httpx.Client(timeout=300) as http:
            for row in rows:  # what `gym eval run` posts to the agent for each dataset row
                r = http.post(f"http://127.0.0.1:{ports['agent']}/run", json=row)
                r.raise_for_status()
                body = r.json()
                texts = []
                for item in body["response"]["output"]:
                    c = item.get("content")
                    texts.append((item.get("role"), c if isinstance(c, str) else "".join(p.get("text", "") for p in c or [])))
                out["runs"].append({"task_id": row["task_id"], "reward": body["reward"], "terminated": body["terminated"],
                                    "truncated": body["truncated"], "info": body.get("info") or {},
                                    "turns": [role for role, _ in texts], "feedback": [t for role, t in texts if role == "user"]})
    finally:
        for s in servers:
            s.should_exit = True
    json.dump(out, open(sys.argv[1], "w"))


if __name__ == "__main__":
    main()
