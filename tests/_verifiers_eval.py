"""Run by tests/test_adapters_verifiers.py in the interpreter that has verifiers installed:
verifiers' own evaluation loop (Environment.evaluate_sync) against an OpenAI-compatible server.

    python tests/_verifiers_eval.py BASE_URL MODEL MAX_TURNS OUT.json
"""
from __future__ import annotations

import asyncio
import json
import sys


def main() -> None:
    base_url, model, max_turns, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    import os

    import verifiers as vf

    import se_gym.integrations.verifiers as sv

    env = sv.load_environment(num_examples=3, max_turns=max_turns, book="closed")
    suite = env.se_gym_suite
    before = len(suite.batcher.batches)
    os.environ["SE_GYM_VF_KEY"] = "none"  # vLLM needs no key; verifiers reads it from a variable
    client = vf.ClientConfig(api_base_url=base_url, api_key_var="SE_GYM_VF_KEY")
    res = env.evaluate_sync(client=client, model=model, sampling_args={"max_tokens": 24, "temperature": 1.0, "seed": 0},
                            num_examples=3, rollouts_per_example=2)
    rows = [{
        "example_id": o["example_id"], "reward": o["reward"], "metrics": o["metrics"], "task_id": o["info"]["task_id"],
        "answers": [m["content"] for m in o["completion"] if m["role"] == "assistant"],
        "env_turns": [m["content"] for m in o["completion"] if m["role"] == "user"],
        "error": str(o.get("error")) if o.get("error") else None, "stop": o.get("stop_condition"),
    } for o in res["outputs"]]
    eval_batches = suite.batcher.batches[before:]

    # the rubric on a hand-made group: oracle answers pass, the rest fail, one sandbox batch
    tasks = {t.id: t for t in suite.tasks}
    ds = env.eval_dataset
    infos = [ds[i]["info"] for i in range(3)]
    completions = [[{"role": "assistant", "content": "```python\n" + tasks[i["task_id"]].library_solution + "\n```"}] for i in infos[:2]]
    completions.append([{"role": "assistant", "content": "no code"}])
    states = [{"prompt": ds[i]["prompt"], "completion": c, "answer": "", "info": infos[i], "trajectory": []}
              for i, c in enumerate(completions)]
    n0 = len(suite.batcher.batches)
    asyncio.run(env.se_gym_rubric.score_group(states))
    json.dump({"env": type(env).__name__, "rows": rows, "eval_batches": eval_batches,
               "oracle_rewards": [s["reward"] for s in states], "oracle_batches": suite.batcher.batches[n0:]}, open(out, "w"))


if __name__ == "__main__":
    main()
