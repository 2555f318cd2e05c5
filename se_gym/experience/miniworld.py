"""The experience loop in the miniature of ``se-gym demo`` (:mod:`se_gym.training.miniature`).

The tiny model reads a ``Docs:`` section above the one-line question; experience is shown there,
one lesson a line.  The demo's base model was pre-trained on exactly one doc line per prompt, but an
injected experience holds several lessons of several kinds, so this world pre-trains its own base on
the same skill with 1-3 lines: the relevant one (in the form of a doc line, ``zwc.NAME(x): what it
does.``, or of a worked question, ``zwc.NAME(x): <a question>``, so that neither granularity's form is
favoured) among distractors (other functions' lines, and name-free lessons such as the recurring
mistakes).  Every example has freshly minted names: the only skill it can learn is to pick the line
that matches the question and copy its call.  What the miniature cannot show: the tiny model never
reads the execution feedback (the multi-turn history is not rendered), so step-wise injection differs
from global injection only by *which* lessons it retrieves after a failed turn.
"""
from __future__ import annotations

import random

from ..training import miniature as mini
from .extract import MISTAKE_LESSONS, DocSource


def _args(key: str) -> str:
    from ..training import miniature as mini

    return "x" if mini.FUNCTIONS[key][0] == 1 else "x1, x2"


def _arg_words(key: str) -> str:
    from ..training import miniature as mini

    return "x" if mini.FUNCTIONS[key][0] == 1 else "x1 and x2"


def mini_docs(library) -> DocSource:
    """The miniature's docs: one line per function (``zwc.NAME(x): what it does.``)."""
    from ..training import miniature as mini

    def call(key: str) -> str:
        return f"{library.qualified(key)}({_args(key)})"

    return DocSource(library, line=lambda k: mini.doc_line(library, k), entry=lambda k: mini.doc_line(library, k), call=call)


class MiniPrompter:
    """``Docs:`` + the experience lines + the miniature's closed prompt (no lines: the closed prompt)."""

    def render(self, task, experience, turns):
        if not experience:
            return mini.closed_prompt(task.query, task.functions[0])
        return mini.docs_prompt([" ".join(e.text.split()) for e in experience], task.query, task.functions[0])


def pretraining_corpus(n: int, seed: int, closed_share: float = 0.2, max_lines: int = 3) -> list[tuple[str, str]]:
    """(prompt, answer) pairs on the pre-training functions (never the experiment's), names fresh in
    every example; see the module docstring."""
    from ..library import naming
    from ..library.core import Library

    rng = random.Random(f"exp-pretrain-{seed}")
    keys = [k for k in mini.FUNCTIONS if k not in mini.EXPERIMENT_POOL]
    templates = mini.TRAIN_TEMPLATES + mini.HELDOUT_TEMPLATES
    fields = {"package": "zwc", "array_type": "ZWCArray"}
    mistakes = [m.format(**fields) for m in MISTAKE_LESSONS.values()]
    out = []
    for i in range(n):
        chosen = rng.sample(keys, rng.randint(1, max_lines))
        key = chosen[0]
        names = {k: naming.candidate(seed, f"exp-pretrain-{i}-{j}", 0, (3, 3)) for j, k in enumerate(chosen)}
        lib = Library("zwc", "la", "ZWCArray", names, source=f"seed:{seed}")
        query = rng.choice(templates).format(args=_arg_words(key), desc=mini.FUNCTIONS[key][1])
        if rng.random() < closed_share:
            out.append((mini.closed_prompt(query, key), mini.answer(lib, key)))
            continue
        lines = []
        for k in chosen:
            call = f"{lib.qualified(k)}({_args(k)})"
            if rng.random() < 0.6:
                lines.append(f"{call}: {mini.FUNCTIONS[k][1]}.")
            else:  # a worked question (another wording when it is the target's)
                q = rng.choice(templates).format(args=_arg_words(k), desc=mini.FUNCTIONS[k][1])
                lines.append(f"{call}: {q}" + rng.choice(["", " (passed)", " (failed: wrong_answer)"]))
        if rng.random() < 0.2:
            lines.append(rng.choice(mistakes))
        rng.shuffle(lines)
        out.append((mini.docs_prompt(lines, query, key), mini.answer(lib, key)))
    return out


# the corpus above as an extra of the demo's pre-training mix, so a demo base (``se_gym.bases.experience_base_config``)
# also reads lessons injected the way the experience loop injects them
LESSONS_CORPUS = "experience_lessons"
mini.register_pretraining_corpus(LESSONS_CORPUS, pretraining_corpus)


def build_base(out_dir, examples: int, seed: int = 0, hidden: int = 64, layers: int = 2, lr: float = 3e-3, batch: int = 32,
               device: str | None = None, progress: bool = True, checkpoint_dir=None) -> dict:
    """Build the tiny model (:func:`se_gym.training.miniature.build_tiny_model`) and pre-train it on
    :func:`pretraining_corpus` (:func:`se_gym.bases.pretrain`, the loop every base goes through); saves
    it to ``out_dir`` (atomically).  Returns the SFT metrics."""
    from pathlib import Path

    from ..bases import pretrain
    from ..training import miniature as mini

    out_dir = Path(out_dir)
    init = out_dir.parent / f".{out_dir.name}.init"
    if not (init / "config.json").is_file():
        mini.build_tiny_model(init, seed=seed, hidden=hidden, layers=layers)
    metrics = pretrain(init, out_dir, pretraining_corpus(examples, seed), lr=lr, batch=batch, device=device, dtype="auto", seed=seed,
                       progress=progress, checkpoint_dir=checkpoint_dir)
    import shutil

    shutil.rmtree(init, ignore_errors=True)
    return {"loss": metrics["loss"][-1] if metrics.get("loss") else None, "steps": metrics.get("steps")}


def world(seed: int, rounds: int, functions_per_round: int, train_per_function: int, test_per_function: int):
    """``(library, [round functions], [round train tasks], held-out tasks)``: a fresh library and
    disjoint function groups, one per round; held-out questions (other wordings and inputs) on every
    round's functions."""
    from ..library import mint
    from ..training import miniature as mini

    need = rounds * functions_per_round
    if need > len(mini.EXPERIMENT_POOL):
        raise ValueError(f"{rounds} rounds x {functions_per_round} functions need {need} functions; the miniature has {len(mini.EXPERIMENT_POOL)}")
    library = mint(300 + seed)
    rng = random.Random(f"exp-functions-{seed}")
    functions = rng.sample(list(mini.EXPERIMENT_POOL), need)
    groups = [sorted(functions[r * functions_per_round : (r + 1) * functions_per_round]) for r in range(rounds)]
    train, test = mini.experiment_tasks(library, [k for g in groups for k in g], (train_per_function, test_per_function), seed)
    per_round = [[t for t in train if t.functions[0] in g] for g in groups]
    return library, groups, per_round, test


class ReaderTeacher:
    """A rule-based stand-in for a *stronger teacher model* (off-policy regime, ``teacher="reader"``):
    it reads the ``Docs:`` lines of a miniature prompt perfectly, answering with the call of the line
    that shares the most words with the question, and with a guessed name when no line shares any.
    It succeeds exactly when the injected experience holds the needed call, so it measures what the
    experience (granularity x injection under the budget) makes available, not how well a tiny model
    reads.  Same ``sample`` interface as :mod:`se_gym.training.rl`'s samplers; deterministic."""

    def sample(self, prompts, n, temperature, max_new_tokens):
        import re

        from ..retrieval import words
        from .inject import STOPWORDS

        out = []
        for p in prompts:
            head, _, task = p.rpartition("Task:")
            sig = re.search(r"^def solve\((.*)\):$", task, flags=re.M)
            args = sig.group(1) if sig else "x"
            want = {w for w in words(task.split("\n", 1)[0]) if w not in STOPWORDS}
            best, score = None, 0
            for line in head.splitlines():
                m = re.match(r"\s*(\w+\.\w+)\((?:x|x1, x2)\)", line)
                if m:
                    s = len(want & {w for w in words(line[m.end():]) if w not in STOPWORDS})
                    if s > score:
                        best, score = m.group(1), s
            call = f"{best}({args})" if best else f"zwc.guess({args})"
            out.append([f"```python\ndef solve({args}):\n    return {call}\n```"] * n)
        return out
