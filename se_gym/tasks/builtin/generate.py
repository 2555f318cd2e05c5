"""Turn specs into tasks: draw inputs, run the NumPy reference, write the question."""
from __future__ import annotations

import random
from typing import Any, Sequence

from ...errors import SEGymError
from ..record import Task, TestCase
from .common import BadDraw, Spec, compile_reference, compose_query, format_input, run_case

VERSION = "builtin-2"  # (2: the empty spec's result depends on the library, issue 42)
DEFAULT_SIZES = {"n": (3, 7), "r": (2, 4), "c": (2, 4), "k": (2, 4), "three": (3, 3)}
N_CASES = 8
_CASE_TRIES = 40


class GenerationError(SEGymError, RuntimeError):
    """A spec could not produce a usable task (a bug in the spec table)."""


def draw_cases(spec: Spec, rng: random.Random, n_cases: int = N_CASES) -> list[TestCase]:
    ref = compile_reference(spec.reference(), spec.name)
    cases: list[TestCase] = []
    seen: set[str] = set()
    tries = 0
    while len(cases) < n_cases:
        tries += 1
        if tries > _CASE_TRIES * n_cases:
            raise GenerationError(f"spec for {spec.keys} found only {len(cases)} usable inputs")
        sizes = {**DEFAULT_SIZES, **spec.sizes}
        ctx = {name: rng.randint(lo, hi) for name, (lo, hi) in sizes.items()}
        values = {a.name: a.gen(rng, ctx) for a in spec.params}
        if spec.valid is not None and not spec.valid(values):
            continue
        text = format_input(values)
        if text in seen:
            continue
        try:
            out = run_case(ref, text, spec.warn)
        except BadDraw:
            continue
        seen.add(text)
        cases.append(TestCase(text, out))
    if len({c.output for c in cases}) < 2:
        raise BadDraw("every case has the same expected output")
    return cases


def make_task(
    spec: Spec,
    *,
    split: str,
    seed: int,
    index: int,
    library: Any,
    attempt: int = 0,
    family: str = "",
    functions: Sequence[str] | None = None,
    query: str | None = None,
) -> Task:
    """One task from ``spec``; deterministic in (seed, split, index, attempt)."""
    rng = random.Random(f"{seed}:{split}:{index}:{attempt}")
    cases = draw_cases(spec, rng)
    reference = spec.reference()
    style = spec.style
    keys = tuple(functions or spec.keys)
    if len(keys) >= 3:
        difficulty = "hard" if len(keys) >= 4 else "medium"
    else:
        difficulty = "easy" if style != "custom" else "medium"
    return Task(
        id=f"builtin/s{seed}/{split}/{index:04d}",
        split=split,
        source=f"builtin:seed={seed}",
        query=query if query is not None else compose_query(rng, split, spec),
        function_name=spec.signature(),
        test_cases=tuple(cases),
        example=cases[0],
        functions=keys,
        reference_solution=reference,
        library_solution=library.translate(reference),
        difficulty=difficulty,
        metadata={"style": style, "family": family, "attempt": attempt},
        version=VERSION,
    )
