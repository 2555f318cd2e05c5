"""Self-play in miniature: a tiny model that has learned to *write* tasks from docs, on a CPU.

The demo's tiny model (:mod:`se_gym.training.miniature`) is pre-trained on "read the doc, call the
function it names" with functions and libraries the experiment never uses.  Nothing can propose
unless the model also learns to write tasks, so its pre-training here adds a second skill on the
same pre-training functions, each example under a freshly minted name: from a doc, write a
question, 8 test inputs and a one-call reference (:func:`proposal_corpus`).

The experiment (:func:`run_experiment`, ``se-gym demo --selfplay``) then uses a fresh library and
the experiment's functions, 3 seeds, and compares closed-book accuracy on held-out questions of:

* the base model (no training);
* Closed-SFT on curated tasks (the demo's: open-book answers to the miniature's train questions,
  trained under the query-only prompt);
* Closed-SFT-Self-Play: the same learner on tasks the model proposed itself (regime ``sft``);
* Self-Play RL: proposer and solver trained with RL on closed-book rewards (regime ``rl``).
"""
from __future__ import annotations

import random
from typing import Any, Sequence

from ..training import miniature as mini
from .proposal import render_proposal

N_INPUTS = 8


def _short_inputs(rng: random.Random, key: str) -> str:
    """One test input: short lists (prompt and proposal must fit the demo base's 256 positions)."""
    if key in mini.MATRIX_INPUT:
        k = 2
        return "x=" + repr([[rng.randint(-5, 9) for _ in range(k)] for _ in range(k)])
    n = rng.randint(2, 3)
    lo, hi = (1, 4) if key in ("cumprod", "prod") else (-9, 9)
    if mini.FUNCTIONS[key][0] == 1:
        return "x=" + repr([rng.randint(lo, hi) for _ in range(n)])
    return f"x1={[rng.randint(lo, hi) for _ in range(2)]!r}, x2={[rng.randint(lo, hi) for _ in range(2)]!r}"


def reference(library: Any, key: str) -> str:
    args = "x" if mini.FUNCTIONS[key][0] == 1 else "x1, x2"
    return f"import {library.package}\n{mini.signature(key)}\n    return {library.qualified(key)}({args})\n"


def propose_prompt(library: Any, key: str, desc: str | None = None) -> str:
    return f"Docs:\n{mini.doc_line(library, key, desc)}\nWrite a task:\n"


def proposal_answer(library: Any, key: str, rng: random.Random, templates: Sequence[str] = mini.TRAIN_TEMPLATES, desc: str | None = None) -> str:
    question = rng.choice(templates).format(args=mini._arg_words(key), desc=desc or mini.FUNCTIONS[key][1])
    inputs: list[str] = []
    while len(inputs) < N_INPUTS:
        s = _short_inputs(rng, key)
        if s not in inputs:
            inputs.append(s)
    return render_proposal(question, inputs, reference(library, key))


def proposal_corpus(n: int, seed: int, synthetic_share: float = 0.0) -> list[tuple[str, str]]:
    """(doc prompt, proposal) pairs on the pre-training functions, each under a fresh name: the
    skill "write a task from a doc", never a name of the experiment's library.  In
    ``synthetic_share`` of them the description (in the doc and the question) is made up
    (:func:`se_gym.training.miniature.synthetic_description`), so the writer learns to restate the
    doc it reads rather than one of the few descriptions of the pre-training functions."""
    from ..library import naming
    from ..library.core import Library

    rng = random.Random(f"mini-propose-{seed}")
    keys = [k for k in mini.FUNCTIONS if k not in mini.EXPERIMENT_POOL]
    out = []
    for i in range(n):
        key = rng.choice(keys)
        lib = Library("zwc", "la", "ZWCArray", {key: naming.candidate(seed, f"propose-{i}", 0, (3, 3))}, source=f"seed:{seed}")
        desc = mini.synthetic_description(rng) if synthetic_share and rng.random() < synthetic_share else None
        out.append((propose_prompt(lib, key, desc), proposal_answer(lib, key, rng, mini.TRAIN_TEMPLATES + mini.HELDOUT_TEMPLATES, desc)))
    return out


def proposal_corpus_restating(n: int, seed: int) -> list[tuple[str, str]]:
    """:func:`proposal_corpus` with made-up descriptions in half of the examples (issue 45: the base
    wrote every question with a pre-training function's description, whatever the doc said)."""
    return proposal_corpus(n, seed, synthetic_share=0.5)


# the demo's pre-training mixes this corpus in by name (se_gym.training.miniature's hook); the first
# corpus stays registered so bases pre-trained with it are still found
PROPOSE_CORPUS_V1 = "selfplay_propose"
PROPOSE_CORPUS = "selfplay_propose_restating"
PROPOSE_SHARE = 0.25  # of the base's pre-training examples
mini.register_pretraining_corpus(PROPOSE_CORPUS_V1, proposal_corpus)
mini.register_pretraining_corpus(PROPOSE_CORPUS, proposal_corpus_restating)


class MiniPrompts:
    """The miniature's prompts: one-line docs, ``Task: ...`` questions (see se_gym.training.miniature)."""

    name = "miniature"

    def docs(self, library: Any, keys: Sequence[str]) -> str:
        return "\n".join(mini.doc_line(library, k) for k in keys)

    def propose(self, library: Any, keys: Sequence[str], references: Sequence[Any]) -> str:
        # the tiny model learned to write from one doc line; references would not fit its context
        return "Docs:\n" + self.docs(library, keys) + "\nWrite a task:\n"

    def solve(self, library: Any, task: Any, book: str) -> str:
        closed = f"Task: {task.query}\n{task.function_name}\nAnswer:\n"
        if book == "closed":
            return closed
        keys = [k for k in task.functions if k in library.names and k in mini.FUNCTIONS]
        if not keys:
            return closed
        return "Docs:\n" + "\n".join(mini.doc_line(library, k) for k in keys) + "\n" + closed


TRAIN_PER_FUNCTION = 4  # curated train questions per function in the experiment's world (se_gym.selfplay.experiment)


def eval_tasks(library: Any, config: Any) -> list[Any]:
    """``--eval functions``: held-out miniature questions about the self-play run's functions: the experiment's test
    questions for this seed (the same draw, so a round's accuracy and the experiment's final table
    are on one question set)."""
    functions = list(config.functions) or [k for k in mini.EXPERIMENT_POOL if k in library.names]
    _, test = mini.experiment_tasks(library, functions, (TRAIN_PER_FUNCTION, 3), config.seed)
    return test

