"""Injection: which experience goes into the prompt, and when.

* ``global``: at the start of the episode the lessons most relevant to the question are selected
  once and stay in the prompt for every turn.
* ``stepwise``: before every action the lessons most relevant to the *current state* are retrieved
  again: the question, the last error (exception and error type) and the code so far.  On the first
  turn that is the question alone, so the two differ from the second turn of a multi-turn episode on
  (``max_turns > 1``, see :class:`se_gym.envs.SEBenchEnv`).
* ``none``: no experience (closed book).

Both take at most ``budget`` tokens of experience (counted by ``count_tokens``: a tokenizer's, or
about four characters a token).  Retrieval is BM25 over the lessons' words (the same index as
:mod:`se_gym.retrieval`); ties go to the lesson with more support.
"""
from __future__ import annotations

from typing import Callable, Sequence

from .records import Episode, Experience, ExperienceError, Turn

INJECTIONS = ("none", "global", "stepwise")
STOPWORDS = frozenset("a an the of to in on for and or is are be it its this that with as by from at x x1 x2 def solve return".split())


def approx_tokens(text: str) -> int:
    """About four characters a token (a tokenizer-free budget).

    Args:
        text: the text.
    """
    return max(1, (len(text) + 3) // 4)


def tokenizer_counter(tokenizer) -> Callable[[str], int]:
    """A ``count_tokens`` from a Hugging Face tokenizer."""
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def state_text(task, turns: Sequence[Turn] = ()) -> str:
    """What step-wise retrieval matches: the question, then (after a failed turn) the last error,
    its error type and the code of the last answer.

    Args:
        task: the task.
        turns: the turns so far.
    """
    parts = [task.query]
    if turns:
        from ..judge.extract import extract_code

        last = turns[-1]
        parts += [last.error_type or last.status, last.error, extract_code(last.answer) or last.answer]
    return "\n".join(p for p in parts if p)


class Retriever:
    """Ranks lessons for a state and picks the best that fit a token budget.

    Args:
        experiences: the lessons.
        count_tokens: text -> its tokens.
    """

    def __init__(self, experiences: Sequence[Experience], count_tokens: Callable[[str], int] = approx_tokens):
        from ..retrieval import BM25

        self.experiences = list(experiences)
        self.count_tokens = count_tokens
        self._index = BM25()
        for e in self.experiences:
            self._index.add(f"{e.topic.replace(':', ' ').replace('_', ' ')} {' '.join(e.keys)} {e.text}")

    def rank(self, state: str) -> list[tuple[float, Experience]]:
        """(score, lesson) for every lesson against ``state``, best first (BM25 over the lessons' texts).

        Args:
            state: the text retrieval matches (:func:`state_text`).
        """
        from ..retrieval import words

        # underscores split too, so an error type such as library_function_hallucination matches its words;
        # function words match everything and decide nothing
        terms = [w for w in words(state.replace("_", " ")) + words(state) if w not in STOPWORDS]
        scores = self._index.scores(" ".join(terms))
        order = sorted(range(len(self.experiences)), key=lambda i: (-scores[i], -self.experiences[i].support, self.experiences[i].id))
        return [(scores[i], self.experiences[i]) for i in order]

    def select(self, state: str, budget: int, max_entries: int | None = None) -> list[Experience]:
        """The highest-ranked lessons with a positive score whose texts fit ``budget`` tokens together
        (a lesson too long for what is left is skipped, a shorter one after it may still fit).

        Args:
            state: the text retrieval matches.
            budget: tokens they may take together.
            max_entries: the most lessons (None: as many as fit).
        """
        out, used = [], 0
        for score, e in self.rank(state):
            if score <= 0 or (max_entries is not None and len(out) >= max_entries):
                break
            cost = self.count_tokens(e.text)
            if used + cost <= budget:
                out.append(e)
                used += cost
        return out


class Injector:
    """Chooses the experience for each turn of an episode (see the module docstring).

    Args:
        mode: ``none``, ``global`` or ``stepwise``.
        experiences: the lessons to choose from.
        budget: tokens the chosen lessons may take together.
        max_entries: the most lessons per turn (None: as many as fit).
        count_tokens: text -> its tokens (default: four characters a token).
    """

    def __init__(self, mode: str, experiences: Sequence[Experience] = (), budget: int = 256, max_entries: int | None = None,
                 count_tokens: Callable[[str], int] = approx_tokens):
        if mode not in INJECTIONS:
            raise ExperienceError(f"injection must be one of {INJECTIONS}, got {mode!r}")
        if budget < 1:
            raise ExperienceError(f"the experience budget must be >= 1 token, got {budget}")
        self.mode, self.budget, self.max_entries = mode, budget, max_entries
        self.retriever = Retriever(experiences, count_tokens)

    @property
    def context(self) -> str:
        """What the prompts hold, as an episode records it (``closed`` or ``experience:<mode>``)."""
        return "closed" if self.mode == "none" else f"experience:{self.mode}"

    def select(self, task, turns: Sequence[Turn] = ()) -> list[Experience]:
        """The lessons to show before the next action, given the turns so far.

        Args:
            task: the task.
            turns: the turns so far.
        """
        if self.mode == "none" or not self.retriever.experiences:
            return []
        state = task.query if self.mode == "global" else state_text(task, turns)
        return self.retriever.select(state, self.budget, self.max_entries)


def mean_injected(episodes: Sequence[Episode]) -> float:
    """Mean number of lessons injected per turn (for the logs)."""
    turns = [t for ep in episodes for t in ep.turns]
    return sum(len(t.injected) for t in turns) / max(1, len(turns))
