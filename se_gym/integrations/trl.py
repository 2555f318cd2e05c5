"""A TRL-compatible reward function backed by the se-gym judge.

    from se_gym.integrations.trl import make_dataset, SEBenchReward
    ds = make_dataset(tasks, library, book="closed")          # a datasets.Dataset
    trainer = GRPOTrainer(model=..., reward_funcs=SEBenchReward(library), train_dataset=ds, ...)

TRL calls reward functions as ``f(prompts=..., completions=..., **columns)`` where ``columns`` are
the dataset's other columns for the batch; ``make_dataset`` stores what the judge needs
(``test_cases`` as JSON, ``function_name``, ``task_id``).  An infrastructure failure of the sandbox
yields ``None`` for that sample (TRL then ignores it) instead of a wrong-answer 0.
"""
from __future__ import annotations

import json
from typing import Any, Sequence


def dataset_rows(tasks: Sequence[Any], library: Any, book: str = "closed", conversational: bool = True, template: str | None = None) -> list[dict]:
    """Rows with ``prompt`` (chat messages or text) and the judge's columns, one per task."""
    from ..tasks import render_messages, render_prompt

    rows = []
    for t in tasks:
        prompt = render_messages(t, library, book=book, template=template) if conversational else render_prompt(t, library, book=book, template=template)
        rows.append({
            "prompt": prompt,
            "task_id": t.id,
            "function_name": t.function_name,
            "test_cases": json.dumps([{"input": c.input, "output": c.output} for c in t.test_cases]),
        })
    return rows


def make_dataset(tasks: Sequence[Any], library: Any, book: str = "closed", conversational: bool = True, template: str | None = None):
    """A ``datasets.Dataset`` for TRL trainers (needs the ``hf`` extra)."""
    from datasets import Dataset

    return Dataset.from_list(dataset_rows(tasks, library, book, conversational, template))


def _completion_text(c: Any) -> str:
    if isinstance(c, str):
        return c
    if isinstance(c, list) and c and isinstance(c[-1], dict):  # conversational: the assistant turn(s)
        return "".join(m.get("content", "") for m in c if m.get("role", "assistant") == "assistant")
    raise TypeError(f"unsupported completion type {type(c).__name__}")


class SEBenchReward:
    """``reward_funcs`` entry for TRL: judges each completion against its row's test cases."""

    def __init__(self, library: Any, profile: str = "strict", reward: str = "binary", sandbox: Any = "local", judge: Any = None):
        from ..library import from_spec

        self.library = from_spec(library)
        self._judge = judge
        self._opts = dict(profile=profile, reward=reward, sandbox=sandbox)
        self.__name__ = f"se_gym_{profile}"  # TRL logs rewards under the function's name
        self.last_verdicts: list = []

    @property
    def judge(self):
        if self._judge is None:
            from ..judge import Judge

            self._judge = Judge(self.library, **self._opts)
        return self._judge

    def __call__(self, prompts: Any = None, completions: Sequence[Any] = (), test_cases: Sequence[str] = (), function_name: Sequence[str] | None = None, **_: Any) -> list[float | None]:
        if len(test_cases) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(test_cases)} test_cases: is the dataset from se_gym.integrations.trl.make_dataset?")
        names = list(function_name) if function_name is not None else [None] * len(completions)
        items = [(_completion_text(c), json.loads(tc), fn) for c, tc, fn in zip(completions, test_cases, names)]
        verdicts = self.judge.judge_many(items)
        self.last_verdicts = verdicts
        return [None if v.infrastructure else float(v.reward) for v in verdicts]

    def close(self) -> None:
        if self._judge is not None:
            self._judge.close()
            self._judge = None
