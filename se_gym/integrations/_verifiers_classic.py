"""SEBench-v0 on verifiers 0.3's classic API (``vf.SingleTurnEnv``, ``vf.MultiTurnEnv``, ``vf.Rubric``).

Imported by :mod:`se_gym.integrations.verifiers` when verifiers 0.3.x is installed; see there.

``max_turns == 1`` gives a ``vf.SingleTurnEnv``; ``max_turns > 1`` a ``vf.MultiTurnEnv`` whose
environment turn is the execution feedback on the last answer (the episode ends when an answer
passes).  The rubric's reward is a *group* function: the completions of a rollout group that were
not judged yet are judged in one sandbox batch; the answer that ended a multi-turn rollout was
judged by the environment turn already, and its verdict is reused.

An infrastructure failure (the sandbox could not run an answer) is not a wrong answer: the rollout
gets verifiers' own error flag, ``state["error"] = vf.SandboxError(...)`` (an ``vf.InfraError``;
its output row carries ``error``), and a placeholder reward of 0.0 that consumers must not read
as a verdict.  In a multi-turn rollout the environment turn raises it, which ends the rollout.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

import verifiers as vf

from ._common import Suite, env_options

REWARD_NAME = "sebench_reward"
VERDICTS = "se_gym_verdicts"  # state key: one record per judged answer, in turn order


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


def _item(answer: str, info: dict) -> tuple:
    # (with the task's reference: strict's library dependence check, issue 42)
    return (answer, json.loads(info["test_cases"]), info["function_name"], None, info.get("library_solution") or None)


def _digest(answer: str) -> str:
    return hashlib.sha1(answer.encode("utf-8", "surrogatepass")).hexdigest()


def _record(state: Any, answer: str, verdict: Any) -> dict:
    rec = {"answer_sha1": _digest(answer), "status": verdict.status.value, "reward": float(verdict.reward),
           "sebench_code": verdict.sebench_code, "infrastructure": bool(verdict.infrastructure)}
    state.setdefault(VERDICTS, []).append(rec)
    return rec


def _infra_error(rec: dict) -> "vf.SandboxError":
    return vf.SandboxError(f"se-gym: the sandbox could not judge the answer ({rec['status']}); not a wrong answer")


class SEBenchRubric(vf.Rubric):
    """One group reward: the judge's reward for each completion; what is not judged yet, in one batch."""

    def __init__(self, suite: Suite, **kwargs: Any):
        self.suite = suite

        async def sebench_reward(completions, infos, states, **_: Any) -> list[float]:
            answers = [_answer_text(c) for c in completions]
            recs: list[dict | None] = []
            for a, s in zip(answers, states):
                last = (s.get(VERDICTS) or [None])[-1]
                recs.append(last if last and last["answer_sha1"] == _digest(a) else None)
            todo = [i for i, r in enumerate(recs) if r is None]
            if todo:
                verdicts = await suite.front.judge_many_async([_item(answers[i], infos[i]) for i in todo])
                for i, v in zip(todo, verdicts):
                    recs[i] = _record(states[i], answers[i], v)
            for s, r in zip(states, recs):
                if r["infrastructure"] and s.get("error") is None:
                    s["error"] = _infra_error(r)
            return [0.0 if r["infrastructure"] else r["reward"] for r in recs]

        sebench_reward.__name__ = REWARD_NAME
        super().__init__(funcs=[sebench_reward], weights=[1.0], **kwargs)


def _dataset(suite: Suite, book: str, num_examples: int):
    from datasets import Dataset

    env = suite.env(book=book)
    tasks = suite.tasks if num_examples < 0 else suite.tasks[:num_examples]
    rows = [{
        "prompt": env.messages_for(t),
        "answer": "",
        "info": {"task_id": t.id, "function_name": t.function_name, "library_solution": t.library_solution,
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
        answer = _answer_text(messages)
        verdict = (await self.suite.front.judge_many_async([_item(answer, state["info"])]))[0]
        rec = _record(state, answer, verdict)
        if verdict.infrastructure:
            raise _infra_error(rec)  # verifiers' rollout loop sets state["error"] and stops
        if verdict.passed:
            state["final_env_response"] = [vf.UserMessage(content="Accepted: every test passed.")]
            return state["final_env_response"]
        return [vf.UserMessage(content=feedback_text(verdict, turn, self.max_turns))]


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
