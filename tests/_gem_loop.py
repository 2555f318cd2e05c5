"""Run by tests/test_adapters_gem.py in GEM's venv (gem-llm): GEM's own make / make_vec on the id
"se_gym:SEBench-v0"; writes what happened as one JSON object.

    python tests/_gem_loop.py OUT.json
"""
from __future__ import annotations

import json
import sys


def main() -> None:
    from importlib.metadata import version

    import gem

    import se_gym.integrations.gem  # noqa: F401  (registers the id)
    from se_gym.integrations._common import Suite
    from se_gym.tasks import builtin_tasks

    tasks = {t.id: t for t in builtin_tasks("single_test", seed=0)}

    def ok(task_id):
        return f"```python\n{tasks[task_id].library_solution}\n```"

    out = {"version": version("gem-llm")}
    env = gem.make("se_gym:SEBench-v0", split="single_test", max_turns=2, seed=0)
    obs, info = env.reset()
    wrong = env.step("```python\ndef solve(*args):\n    return None\n```")
    right = env.step(ok(info["task_id"]))
    out["single"] = {"prompt_has_query": tasks[info["task_id"]].query in obs, "info": info,
                     "wrong": [wrong[0][:200], *wrong[1:]], "right": list(right)}
    again, _ = env.reset(seed=5)
    out["seeded_reset"] = [again == env.reset(seed=5)[0]]
    # GEM's vector env, its threads: the steps of one call are judged together
    vec = gem.make_vec(["se_gym:SEBench-v0"] * 4, seed=0, async_mode=True, split="single_test")
    obs, infos = vec.reset()
    ids = [i["task_id"] for i in infos]
    actions = [ok(t) if k % 2 == 0 else "no code" for k, t in enumerate(ids)]
    suite = Suite.get({"split": "single_test"})
    before = list(suite.batcher.batches)
    _, rewards, term, trunc, step_infos = vec.step(actions)
    out["vec"] = {"ids": ids, "rewards": [float(r) for r in rewards], "terminated": [bool(t) for t in term],
                  "next_ids": [i.get("task_id") for i in step_infos], "batches": suite.batcher.batches[len(before):]}
    # issue 42: a train task with a Python oracle; its reference, then an answer that names the library
    # (on a constant) and computes in Python, each in an episode of its own
    from _dependence_corpus import ORACLES, adapter_answers
    from se_gym.library import mint

    env = gem.make("se_gym:SEBench-v0", split="train", seed=0)
    seed = 0
    while env.reset(seed=seed)[1]["task_id"] not in ORACLES:  # (reset(seed) picks a task from the seed)
        seed += 1
    task = next(t for t in builtin_tasks("train", seed=0) if t.id == env.env.task.id)
    answers = adapter_answers(task, mint(0))
    out["reference"] = list(env.step(answers["reference"]))
    env.reset(seed=seed)
    out["unused"] = list(env.step(answers["unused"]))
    json.dump(out, open(sys.argv[1], "w"))


if __name__ == "__main__":
    main()
