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


class Curriculum:
    """Which k functions each proposal is about: a fresh shuffle of the pool per pass, consumed in
    order, so every function is shown before any is shown twice (the whole library is covered)."""

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
