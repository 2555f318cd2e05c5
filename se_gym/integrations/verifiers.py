"""SEBench-v0 as a verifiers environment (the classic ``load_environment`` entry point).

    import se_gym.integrations.verifiers as sv
    env = sv.load_environment(book="closed", max_turns=1)        # SEBench-v0 options
    results = env.evaluate_sync(client=vf.ClientConfig(api_base_url="http://127.0.0.1:8000/v1", api_key_var="OPENAI_API_KEY"),
                                model="...", num_examples=8, rollouts_per_example=4)

``max_turns == 1`` gives a ``vf.SingleTurnEnv``; ``max_turns > 1`` a ``vf.MultiTurnEnv`` whose
environment turn is the execution feedback on the last answer (the episode ends when an answer
passes).  The rubric's reward is a *group* function: all completions of a rollout group are judged
in one sandbox batch.  ``tasks``/``split``/``library`` pick the official SE-Bench files
(``tasks="sebench:PATH"``, ``library="official:PATH"``) or the built-in suite; ``book`` picks
closed or open book.  ``num_examples`` keeps the first N tasks of the split.

Written against verifiers 0.3.1, whose classic API (``vf.SingleTurnEnv``, ``vf.MultiTurnEnv``,
``vf.Rubric``, ``Environment.evaluate``) answers at ``import verifiers as vf``; 0.4.0 keeps only
the Taskset API.
"""
from __future__ import annotations

import json
from typing import Any

import verifiers as vf

from ._common import Suite, env_options

REWARD_NAME = "sebench_reward"


def _answer_text(completion: Any) -> str:
    """The last assistant answer of a completion (chat messages) or the completion text."""
    if isinstance(completion, str):
        return completion
    for m in reversed(list(completion or [])):
        role = m.get("role") if isinstance(m, dict) else getattr(m, "role", None)
        if role == "assistant":
            content = m.get("content") if isinstance(m, dict) else getattr(m, "content", "")
            return content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])
    return ""


def _item(completion: Any, info: dict) -> tuple:
    return (_answer_text(completion), json.loads(info["test_cases"]), info["function_name"])


class SEBenchRubric(vf.Rubric):
    """One group reward: the judge's reward for each completion, the whole group in one batch."""

    def __init__(self, suite: Suite, **kwargs: Any):
        self.suite = suite

        async def sebench_reward(completions, infos, **_: Any) -> list[float]:
            verdicts = await suite.front.judge_many_async([_item(c, i) for c, i in zip(completions, infos)])
            return [0.0 if v.infrastructure else float(v.reward) for v in verdicts]

        sebench_reward.__name__ = REWARD_NAME
        super().__init__(funcs=[sebench_reward], weights=[1.0], **kwargs)


def _dataset(suite: Suite, book: str, num_examples: int):
    from datasets import Dataset

    env = suite.env(book=book)
    tasks = suite.tasks if num_examples < 0 else suite.tasks[:num_examples]
    rows = [{
        "prompt": env.messages_for(t),
        "answer": "",
        "info": {"task_id": t.id, "function_name": t.function_name,
                 "test_cases": json.dumps([{"input": c.input, "output": c.output} for c in t.test_cases])},
    } for t in tasks]
    return Dataset.from_list(rows)


class SEBenchMultiTurnEnv(vf.MultiTurnEnv):
    """Multi-turn SE-Bench: after each failed answer the environment replies with the execution
    feedback; a passing answer ends the rollout."""

    def __init__(self, suite: Suite, **kwargs: Any):
        super().__init__(**kwargs)
        self.suite = suite

    async def env_response(self, messages, state, **kwargs):
        from ..envs.sebench import feedback_text

        turn = len(state["trajectory"])
        verdict = (await self.suite.front.judge_many_async([_item(messages, state["info"])]))[0]
        state["se_gym_status"] = verdict.status.value
        if verdict.status.value == "passed":
            state["final_env_response"] = [{"role": "user", "content": "Accepted: every test passed."}]
            return state["final_env_response"]
        return [{"role": "user", "content": feedback_text(verdict, turn, self.max_turns)}]


def load_environment(num_examples: int = -1, **options: Any) -> vf.Environment:
    """A verifiers environment over SEBench-v0 with ``options`` (tasks, split, seed, library, book,
    profile, reward, sandbox, max_turns, ...)."""
    opts = env_options(options)
    max_turns = int(opts.pop("max_turns", 1))
    book = opts.pop("book", "closed")
    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")
    for k in ("template", "max_length"):
        opts.pop(k, None)
    suite = Suite.get(opts)
    ds = _dataset(suite, book, num_examples)
    rubric = SEBenchRubric(suite)
    if max_turns == 1:
        env = vf.SingleTurnEnv(dataset=ds, eval_dataset=ds, rubric=rubric)
    else:
        env = SEBenchMultiTurnEnv(suite, dataset=ds, eval_dataset=ds, rubric=rubric, max_turns=max_turns)
    # verifiers wraps the rubric in a RubricGroup: keep ours (and its suite) reachable
    env.se_gym_rubric, env.se_gym_suite = rubric, suite
    return env
