"""What the proposer and the solver see, and the curriculum of functions shown to the proposer.

Two prompt sets share one interface (``docs(library, keys)``, ``propose(library, keys, references)``
and ``solve(library, task, book)``): :class:`SEBenchPrompts` for real models (SE-Bench's own solver
prompt, :func:`se_gym.tasks.render_prompt`), and the miniature's (see
:mod:`se_gym.selfplay.miniature`), short enough for a tiny model trained on a CPU.
"""
from __future__ import annotations

import random
from typing import Any, Sequence

from .proposal import MIN_INPUTS, render_proposal

PROPOSE_TEMPLATE = """You write coding tasks that teach the `{package}` library. NumPy is not available; `{package}` is the only library.

### {package} functions
{docs}
{examples}
### Your task
Write one NEW task whose solution needs the function{s} above. Reply in exactly this format:
Question: <the problem, in one paragraph>
Inputs:
<at least {min_inputs} lines, each `name=value, ...` with plain Python literals, one test input per line>
Reference:
```python
import {package}
def solve(...):
    ...
```"""


class SEBenchPrompts:
    """Real-model prompts: docs of the k functions, a few buffer tasks as examples, the format."""

    name = "sebench"

    def __init__(self, min_inputs: int = MIN_INPUTS, template: str | None = None):
        self.min_inputs = min_inputs
        self.template = template

    def docs(self, library: Any, keys: Sequence[str]) -> str:
        return "\n\n".join(f"#### {library.qualified(k)}\n{library.doc(k).strip()}" for k in keys)

    def propose(self, library: Any, keys: Sequence[str], references: Sequence[Any]) -> str:
        docs = self.docs(library, keys)
        examples = ""
        if references:
            shown = [render_proposal(t.query, [c.input for c in t.test_cases], t.library_solution) for t in references]
            examples = "\n### Example tasks\n" + "\n\n".join(shown) + "\n"
        return PROPOSE_TEMPLATE.format(package=library.package, docs=docs, examples=examples, s="s" if len(keys) > 1 else "",
                                       min_inputs=self.min_inputs)

    def solve(self, library: Any, task: Any, book: str) -> str:
        from ..tasks.prompts import render_prompt

        return render_prompt(task, library, book, self.template)


LEARNED = 0.75  # closed-book solve rate at which a function counts as learned (the gap curriculum)


class Curriculum:
    """Which k functions each proposal is about: a fresh shuffle of the pool per pass, consumed in
    order, so every function is shown before any is shown twice (the whole library is covered).
    :meth:`prefer` is the curriculum that moves with the solver."""

    def __init__(self, keys: Sequence[str], k: int, seed: int):
        if k < 1:
            raise ValueError(f"k (functions per proposal) must be >= 1, got {k}")
        if len(keys) < k:
            raise ValueError(f"the curriculum has {len(keys)} functions, fewer than k={k}")
        self.keys, self.k, self.seed = list(keys), k, seed

    def draw(self, n: int, round_index: int) -> list[tuple[str, ...]]:
        """``n`` k-tuples for round ``round_index`` (deterministic; rounds continue the passes)."""
        out: list[tuple[str, ...]] = []
        per_round = n * self.k
        start = round_index * per_round
        stream: list[str] = []
        p = start // len(self.keys)
        while len(stream) < (start % len(self.keys)) + per_round:
            order = list(self.keys)
            random.Random(f"curriculum-{self.seed}-{p}").shuffle(order)
            stream += order
            p += 1
        stream = stream[start % len(self.keys):]
        for i in range(n):
            group = tuple(dict.fromkeys(stream[i * self.k:(i + 1) * self.k]))
            out.append(group)
        return out

    def prefer(self, n: int, round_index: int, rates: dict[str, dict[str, float]], weights: dict[str, float] | None = None) -> list[tuple[str, ...]]:
        """``n`` groups for round ``round_index``, weighted by what the solver needs: a function never
        tried weighs 1 (cover the library first), one tried weighs its gap (open-book minus closed-book
        solve rate, at least 0.1: solved with the docs, not yet without them is what to internalize).
        Once every function of the pool is learned (closed-book rate >= LEARNED), groups get one
        function more (compose what is learned).

        Args:
            n: groups to draw.
            round_index: the round (0-based), for the deterministic order of ties.
            rates: per catalogue key, the mean solve rate per book so far (``{"open": .., "closed": ..}``).
            weights: per catalogue key, its weight instead of the gap (the learnability curriculum's,
                :meth:`se_gym.tasks.sampler.LearnabilitySampler.function_weights`).

        Returns:
            the groups, each a tuple of distinct keys.
        """
        learned = all(rates.get(key, {}).get("closed", 0.0) >= LEARNED for key in self.keys)
        k = min(self.k + 1, len(self.keys)) if learned else self.k
        if weights is None:
            weights = {}
            for key in self.keys:
                r = rates.get(key)
                weights[key] = 1.0 if not r else max(0.1, r.get("open", 0.0) - r.get("closed", 0.0))
        order = self.draw(len(self.keys), round_index)  # the cover order breaks ties
        order_keys = list(dict.fromkeys(k_ for g in order for k_ in g)) + self.keys
        rank = {key: order_keys.index(key) for key in self.keys}
        slots = n * k
        total = sum(weights.values())
        share = {key: slots * w / total for key, w in weights.items()}
        counts = {key: int(v) for key, v in share.items()}
        for key in sorted(self.keys, key=lambda x: (-(share[x] - counts[x]), rank[x]))[: slots - sum(counts.values())]:
            counts[key] += 1  # largest remainders
        stream: list[str] = []
        while len(stream) < slots:  # interleaved: each pass takes one of every key with slots left
            for key in sorted(self.keys, key=lambda x: rank[x]):
                if counts[key] > 0:
                    stream.append(key)
                    counts[key] -= 1
        return [tuple(dict.fromkeys(stream[i * k:(i + 1) * k])) for i in range(n)]
