"""One stack's smoke test for scripts/compat.sh, run in that stack's venv with the checkout on PYTHONPATH:
the stack's own loader, one answer scored right and one scored wrong, and a 2-step train where the
stack trains on CPU (TRL).  Prints one JSON line: {"stack", "version", "ok", "detail"}; exit 0 when ok.

    python scripts/compat_smoke.py STACK WORKDIR
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the scripted OpenAI server and the stacks' drivers


def _tasks(split="single_test", n=2):
    from se_gym.tasks import builtin_tasks

    return builtin_tasks(split, seed=0)[:n]


def _ok(task):
    return f"```python\n{task.library_solution}\n```"


WRONG = "```python\ndef solve(*args):\n    return None\n```"


def _expect(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, expected {want!r}")


def trl(work):
    import trl as _trl

    from se_gym.integrations.trl import SEBenchReward, make_dataset
    from se_gym.library import mint
    from se_gym.llm.tiny import build_tiny_model

    lib, tasks = mint(0), _tasks("train")
    reward = SEBenchReward(lib)
    rows = make_dataset(tasks, lib, conversational=False)
    _expect(reward(completions=[_ok(tasks[0]), WRONG], test_cases=rows["test_cases"], function_name=rows["function_name"]),
            [1.0, 0.0], "SEBenchReward on a right and a wrong answer")
    model = build_tiny_model(Path(work) / "tiny", n_layer=1)
    args = _trl.GRPOConfig(output_dir=str(Path(work) / "grpo"), use_cpu=True, bf16=False, max_steps=2, per_device_train_batch_size=2,
                           num_generations=2, max_completion_length=16, logging_steps=1, report_to=[], save_strategy="no")
    trainer = _trl.GRPOTrainer(model=str(model), reward_funcs=reward, args=args, train_dataset=rows)
    trainer.train()
    reward.close()
    _expect(trainer.state.global_step, 2, "GRPOTrainer steps")
    return {"rewards": [1.0, 0.0], "train_steps": 2}, version("trl")


def verl(work):
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn

    from se_gym.integrations.export import verl_rows
    from se_gym.library import mint
    from se_gym.tasks import render_messages

    lib, tasks = mint(0), _tasks("train")
    fn = get_custom_reward_fn(OmegaConf.create({"reward": {"custom_reward_function": {
        "path": "pkg://se_gym.integrations.verl", "name": "compute_score", "reward_kwargs": {}}}}))  # verl's own loader
    rows = verl_rows([{"task": t, "prompt": render_messages(t, lib)} for t in tasks], library=lib)
    scores = [fn(r["data_source"], a, r["reward_model"]["ground_truth"], r["extra_info"])["score"]
              for r, a in zip(rows, [_ok(tasks[0]), WRONG])]
    _expect(scores, [1.0, 0.0], "compute_score through verl's get_custom_reward_fn")
    detail = {"rewards": scores}
    try:
        import hydra  # noqa: F401  (the agent loop's stack: where it is installed, the multi-turn path runs too)
    except ImportError:
        detail["agent_loop"] = "not run (no hydra)"
        return detail, version("verl")
    out = Path(work) / "agent.json"
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "_verl_agent_loop.py"), str(work), str(out)], capture_output=True, text=True)
    if proc.returncode:
        raise AssertionError(f"verl agent loop: {proc.stderr[-1500:]}")
    res = json.loads(out.read_text())
    _expect((res["scripted"]["reward"], res["scripted"]["turn_scores"]), (1.0, [0.0, 1.0]), "agent loop: wrong then right")
    detail["agent_loop"] = "wrong then right: 0, 1"
    return detail, version("verl")


def skyrl_gym(work):
    import skyrl_gym

    import se_gym.integrations.skyrl  # noqa: F401  (registers se_gym)

    got = []
    for t, answer in zip(_tasks(), [_ok(_tasks()[0]), WRONG]):
        env = skyrl_gym.make("se_gym", env_config={"max_turns": 1}, extras={"extra_info": {"task_id": t.id}})
        env.init(None)
        got.append(env.step(answer)["reward"])
    _expect(got, [1.0, 0.0], "skyrl_gym.make('se_gym') steps")
    return {"rewards": got}, version("skyrl-gym")


def openenv(work):
    import socket
    import threading
    import time

    import uvicorn

    from se_gym.integrations.openenv import SEBenchAction, SEBenchClient, create_server_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_server_app({"split": "single_test"}), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    try:
        tasks, got = _tasks(), []
        with SEBenchClient(base_url=f"http://127.0.0.1:{port}").sync() as env:  # openenv-core's EnvClient
            _expect(env.num_tasks("single_test") > 0, True, "Task API num_tasks")
            for t, answer in zip(tasks, [_ok(tasks[0]), WRONG]):
                env.reset(task_id=t.id)
                got.append(env.step(SEBenchAction(answer=answer)).reward)
        _expect(got, [1.0, 0.0], "EnvClient episodes")
    finally:
        server.should_exit = True
    return {"rewards": got}, version("openenv-core")


def _stub_script():
    tasks = _tasks()
    return {tasks[0].query: [_ok(tasks[0])], tasks[1].query: [WRONG]}


def verifiers(work):
    import verifiers as vf

    from _openai_stub import openai_stub

    os.environ.setdefault("OPENAI_API_KEY", "none")
    with openai_stub(_stub_script()) as url:
        if vf.__version__.startswith("0.3."):
            env = vf.load_environment("se-gym", max_turns=1)
            res = env.evaluate_sync(client=vf.ClientConfig(api_base_url=url, api_key_var="OPENAI_API_KEY"), model="stub",
                                    num_examples=2, rollouts_per_example=1)
            got = [o["reward"] for o in res["outputs"]]
        else:
            import asyncio

            import verifiers.v1 as v1

            env = v1.load_environment(v1.resolve_env_config({"taskset": {"id": "se-gym", "max_turns": 1}}))
            tasks = list(env.taskset)[:2]
            ctx = v1.ModelContext(model="stub", client=v1.EvalClientConfig(base_url=url, api_key_var="OPENAI_API_KEY"))

            async def run():
                async with env.serving():
                    return [await env.run_episode(t, ctx) for t in tasks]

            got = [ep.traces[0].rewards["sebench_reward"].score for ep in asyncio.run(run())]
    _expect(got, [1.0, 0.0], "verifiers' own loop on the id se-gym")
    return {"rewards": got}, vf.__version__


def _driver(script, work):
    out = Path(work) / "out.json"
    proc = subprocess.run([sys.executable, str(REPO / "tests" / script), str(out)], capture_output=True, text=True)
    if proc.returncode:
        raise AssertionError(proc.stderr[-1500:])
    return json.loads(out.read_text())


def nemo_gym(work):
    res = _driver("_nemo_gym_loop.py", work)
    got = [r["reward"] for r in res["runs"]]
    _expect(got[:3], [1.0, 1.0, 0.0], "gymnasium_agent /run: right, wrong then right, wrong twice")
    _expect(res["runs"][3]["info"].get("mask_sample"), True, "infrastructure failure masked")
    return {"rewards": got[:3], "masked": 1}, version("nemo-gym")


def gem(work):
    res = _driver("_gem_loop.py", work)
    _expect(res["vec"]["rewards"], [1.0, 0.0, 1.0, 0.0], "gem.make_vec steps")
    _expect(res["single"]["right"][1], 1.0, "gem.make step")
    return {"rewards": res["vec"]["rewards"]}, version("gem-llm")


def ray(work):
    import ray as _ray

    from se_gym.judge import Judge

    tasks = _tasks()
    _ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        with Judge("seed:0", sandbox="ray") as judge:  # se-gym's Ray sandbox on a local cluster
            got = [v.reward for v in judge.judge_many([(_ok(tasks[0]), tasks[0].test_cases, tasks[0].function_name),
                                                       (WRONG, tasks[1].test_cases, tasks[1].function_name)])]
    finally:
        _ray.shutdown()
    _expect(got, [1.0, 0.0], "Judge(sandbox='ray')")
    return {"rewards": got}, version("ray")


STACKS = {"trl": trl, "verl": verl, "skyrl-gym": skyrl_gym, "openenv": openenv, "verifiers-0.3": verifiers,
          "verifiers-0.4": verifiers, "nemo-gym": nemo_gym, "gem": gem, "ray": ray}


def main() -> int:
    stack = sys.argv[1]
    work = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix=f"compat-{stack}-")
    Path(work).mkdir(parents=True, exist_ok=True)
    os.chdir(work)
    try:
        detail, ver = STACKS[stack](work)
        print(json.dumps({"stack": stack, "version": ver, "ok": True, "detail": detail}))
        return 0
    except Exception as exc:  # noqa: BLE001 - the table records it
        print(json.dumps({"stack": stack, "version": None, "ok": False, "detail": f"{type(exc).__name__}: {str(exc)[-600:]}"}))
        return 1
    finally:
        try:
            from se_gym.integrations._common import close_shared_judges

            close_shared_judges()
        except Exception:  # noqa: BLE001
            pass


if __name__ == "__main__":
    sys.exit(main())
