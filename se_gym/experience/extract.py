"""Extractors: finished episodes -> experience, one per granularity, deterministic or by an LLM.

* ``instance``: one lesson per episode, tied to its task: what the trajectory did (the functions it
  called), how it ended (verdict, error type) and what solves the task.
* ``principle``: abstract lessons grouped and deduplicated across episodes: which function does what
  (one lesson per function, whatever the number of episodes behind it), and recurring mistakes (one
  lesson per error type that recurs), including how the library's array type behaves.
* ``oracle``: the library's own doc entries for the functions of the episodes' tasks; no episode
  content at all (the reference arm).

The deterministic extractors read the verdicts and the library's docs.  They also read the train
task's functions (``Task.functions``), the label every train task carries; an LLM extractor gets the
same information through the docs and the feedback.  The LLM extractors work with any
:class:`se_gym.llm.Generator`; their prompts live in :mod:`se_gym.experience.prompts`.

:class:`ExperienceBank` holds what was extracted so far: principles with the same topic merge (support
adds up), identical lessons merge, and the bank keeps at most ``max_entries`` lessons.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any, Callable, Iterable, Sequence

from .records import GRANULARITIES, Episode, Experience, ExperienceError, Provenance

EXTRACTORS = ("deterministic", "llm")


class DocSource:
    """The library's docs as the extractors need them: ``line(key)`` a one-line entry (call and
    summary), ``entry(key)`` the full entry (what an oracle principle is), ``call(key)`` how the
    function is called.  Defaults read :meth:`se_gym.library.Library.doc`.

    Args:
        library: the library.
        line: key -> its one-line entry (None: the call and the doc's first line).
        entry: key -> its full entry (None: the library's doc).
        call: key -> how it is called (None: its qualified name).
    """

    def __init__(self, library, line: Callable[[str], str] | None = None, entry: Callable[[str], str] | None = None,
                 call: Callable[[str], str] | None = None):
        self.library = library
        self._line, self._entry, self._call = line, entry, call

    @property
    def package(self) -> str:
        """The library's package name."""
        return self.library.package

    @property
    def array_type(self) -> str:
        """The library's array type's name."""
        return getattr(self.library, "array_type", "array")

    def call(self, key: str) -> str:
        """How the function ``key`` is called (``zwc.cumsum``).

        Args:
            key: the catalogue key.
        """
        return self._call(key) if self._call else self.library.qualified(key)

    def entry(self, key: str) -> str:
        """The full doc entry of ``key``.

        Args:
            key: the catalogue key.
        """
        return self._entry(key) if self._entry else self.library.doc(key).strip()

    def line(self, key: str) -> str:
        """A one-line entry for ``key``: its call and its summary.

        Args:
            key: the catalogue key.
        """
        if self._line:
            return self._line(key)
        summary = next((s.strip() for s in self.entry(key).splitlines() if s.strip()), "")
        return f"{self.call(key)}: {summary}"


# recurring mistakes -> the abstract lesson (fields: package, array_type)
MISTAKE_LESSONS = {
    "library_function_hallucination": "Call only functions the {package} docs list; a guessed name fails with AttributeError (module has no attribute).",
    "array_attribute_hallucination": "{array_type} objects have no NumPy methods or attributes such as .tolist or .shape; apply {package} functions to them instead.",
    "parameter_error": "Pass exactly the parameters a {package} function's doc names; wrong or missing arguments raise TypeError.",
    "return_value_misunderstanding": "Check what a {package} function returns (type and shape) before using its result.",
    "native_python_incompatibility": "{array_type} values do not mix with Python built-ins (len, sorted, int, list operators); use {package} functions.",
    "wrong_answer": "A call that runs can still compute the wrong thing: pick the {package} function whose doc describes exactly what the task asks.",
    "runtime_error": "An answer that crashes gets nothing: call {package} functions with the documented arguments only.",
    "static_gate": "Answer with one complete solve function in a python block that calls {package}.",
    "uses_numpy": "Do not import numpy: the answer must use {package}.",
}
_CALL = r"\b{pkg}\.((?:\w+\.)?\w+)"


def called_names(code: str, package: str) -> list[str]:
    """The library attributes an answer calls (``zwc.foo(...)`` -> ``foo``), in order, without repeats."""
    return list(dict.fromkeys(re.findall(_CALL.format(pkg=re.escape(package)), code or "")))


def _outcome(ep: Episode) -> str:
    n = len(ep.turns)
    if ep.passed:
        return f"passed{' on attempt %d' % n if n > 1 else ''}"
    return f"failed: {ep.error_types[-1] if ep.error_types else ep.verdict.status.value}"


class Extractor:
    """``extract(episodes, iteration)`` -> new experiences.  ``granularity`` and ``name`` say what it makes."""

    granularity = ""
    name = ""

    def extract(self, episodes: Sequence[Episode], iteration: int = 0, current: Sequence[Experience] = ()) -> list[Experience]:
        raise NotImplementedError


class InstanceExtractor(Extractor):
    """Deterministic instance experience: ``<call>: <query> (<outcome>)``, one per episode.

    Args:
        docs: the library's docs (:class:`DocSource`).
    """

    granularity = "instance"
    name = "deterministic-instance"

    def __init__(self, docs: DocSource):
        self.docs = docs

    def extract(self, episodes, iteration=0, current=()):
        """One lesson per episode: the calls it needed, the question, what was tried.

        Args:
            episodes: the episodes of this iteration.
            iteration: the iteration, recorded in the lessons' provenance.
            current: the lessons gathered so far.

        Returns:
            The new lessons (:class:`~se_gym.experience.records.Experience`).
        """
        out = []
        for ep in episodes:
            calls = ", ".join(self.docs.call(k) for k in ep.task.functions)
            tried = [n for t in ep.turns for n in called_names(t.answer, self.docs.package)]
            right = {self.docs.call(k).split("(", 1)[0].rsplit(".", 1)[-1] for k in ep.task.functions}
            wrong = [n for n in tried if n.rsplit(".", 1)[-1] not in right]
            outcome = _outcome(ep) + (f" after trying {', '.join(wrong[:2])}" if wrong and not ep.passed else "")
            out.append(Experience(f"{calls}: {ep.query} ({outcome})", "instance", f"task:{ep.task.id}", ep.task.functions, ep.task.id, 1,
                                  Provenance((ep.id,), iteration, self.name)))
        return out


class PrincipleExtractor(Extractor):
    """Deterministic principles: one per function the episodes were about (its doc line), and one per
    error type that recurs in at least ``min_support`` episodes, these and the earlier ones behind the
    same lesson in ``current`` together (:data:`MISTAKE_LESSONS`).

    Args:
        docs: the library's docs (:class:`DocSource`).
        min_support: the fewest episodes a mistake lesson needs.
    """

    granularity = "principle"
    name = "deterministic-principle"

    def __init__(self, docs: DocSource, min_support: int = 2):
        self.docs, self.min_support = docs, min_support

    def extract(self, episodes, iteration=0, current=()):
        """Principles per function and per recurring mistake (see the class docstring).

        Args:
            episodes: the episodes of this iteration.
            iteration: the iteration, recorded in the lessons' provenance.
            current: the lessons gathered so far.

        Returns:
            The new lessons (:class:`~se_gym.experience.records.Experience`).
        """
        by_key: dict[str, list[str]] = defaultdict(list)
        mistakes: dict[str, list[str]] = defaultdict(list)
        for ep in episodes:
            for k in ep.task.functions:
                by_key[k].append(ep.id)
            for err in dict.fromkeys(ep.error_types):  # an episode counts once per kind of mistake
                mistakes[err].append(ep.id)
        out = [Experience(self.docs.line(k), "principle", f"function:{k}", (k,), None, len(ids), Provenance(tuple(ids), iteration, self.name))
               for k, ids in sorted(by_key.items())]
        fields = {"package": self.docs.package, "array_type": self.docs.array_type}
        earlier = {e.topic: e.support for e in current if e.granularity == "principle"}  # recurrence counts across rounds too
        for err, ids in sorted(mistakes.items()):
            if len(ids) + earlier.get(f"mistake:{err}", 0) >= self.min_support and err in MISTAKE_LESSONS:
                out.append(Experience(MISTAKE_LESSONS[err].format(**fields), "principle", f"mistake:{err}", (), None, len(ids),
                                      Provenance(tuple(ids), iteration, self.name)))
        return out


class OracleExtractor(Extractor):
    """The library's own doc entries for the functions of the episodes' tasks (reference arm).

    Args:
        docs: the library's docs (:class:`DocSource`).
    """

    granularity = "oracle"
    name = "oracle-docs"

    def __init__(self, docs: DocSource):
        self.docs = docs

    def extract(self, episodes, iteration=0, current=()):
        """One lesson per function the episodes' tasks needed: its doc entry.

        Args:
            episodes: the episodes of this iteration.
            iteration: the iteration, recorded in the lessons' provenance.
            current: the lessons gathered so far.

        Returns:
            The new lessons (:class:`~se_gym.experience.records.Experience`).
        """
        keys = sorted({k for ep in episodes for k in ep.task.functions})
        return [Experience(self.docs.entry(k), "oracle", f"function:{k}", (k,), None, 1, Provenance((), iteration, self.name)) for k in keys]


# -- LLM extractors ---------------------------------------------------------------------------------
def render_turns(ep: Episode, max_code_chars: int = 1500) -> str:
    from ..judge.extract import extract_code
    from . import prompts

    parts = []
    for i, t in enumerate(ep.turns, 1):
        code = extract_code(t.answer) or t.answer
        err = f", {t.error_type}" if t.error_type else ""
        fb = t.feedback or (f"Error: {t.error}" if t.error else "")
        parts.append(prompts.TURN.format(n=i, status=t.status, error_type=err, code=code[:max_code_chars], feedback=fb).rstrip())
    return "\n".join(parts)


def _clip_words(text: str, max_words: int) -> str:
    w = text.split()
    return " ".join(w[:max_words]) + (" ..." if len(w) > max_words else "")


def _generate(generator, prompts_: list[str], max_tokens: int) -> list[str]:
    from ..llm.base import SamplingParams

    gens = generator.generate(prompts_, SamplingParams(temperature=0.0, max_tokens=max_tokens))
    return [g.texts[0] if g.completions else "" for g in gens]


class LLMInstanceExtractor(Extractor):
    """One LLM call per episode (:data:`se_gym.experience.prompts.INSTANCE`).

    Args:
        generator: the ``se_gym.llm`` Generator that writes the lessons.
        package: the library's package name (named in the prompt).
        max_words: the longest lesson asked for.
        max_tokens: the longest answer generated.
    """

    granularity = "instance"

    def __init__(self, generator, package: str, max_words: int = 60, max_tokens: int = 256):
        self.generator, self.package, self.max_words, self.max_tokens = generator, package, max_words, max_tokens
        self.name = f"llm-instance:{getattr(generator, 'model_name', '') or type(generator).__name__}"

    def extract(self, episodes, iteration=0, current=()):
        """One lesson per episode, written by the model.

        Args:
            episodes: the episodes of this iteration.
            iteration: the iteration, recorded in the lessons' provenance.
            current: the lessons gathered so far.

        Returns:
            The new lessons (:class:`~se_gym.experience.records.Experience`).
        """
        from . import prompts

        if not episodes:
            return []
        texts = _generate(self.generator, [prompts.INSTANCE.format(package=self.package, query=ep.query, turns=render_turns(ep), max_words=self.max_words)
                                           for ep in episodes], self.max_tokens)
        out = []
        for ep, text in zip(episodes, texts):
            text = " ".join(re.sub(r"<think>.*?</think>", " ", text, flags=re.S).split())
            if text:
                out.append(Experience(_clip_words(text, self.max_words), "instance", f"task:{ep.task.id}", ep.task.functions, ep.task.id, 1,
                                      Provenance((ep.id,), iteration, self.name)))
        return out


_LESSON = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s*(?:\[(?P<topic>[^\]]{1,60})\]\s*)?(?P<text>.+?)\s*$")


def parse_lessons(text: str) -> list[tuple[str, str]]:
    """``(topic, lesson)`` from lines ``- [topic] lesson`` (bullets or numbers; topic optional).

    Args:
        text: the model's answer.
    """
    text = re.sub(r"<think>.*?</think>", " ", text, flags=re.S)
    out = []
    for line in text.splitlines():
        m = _LESSON.match(line)
        if m and m.group("text").strip():
            topic = (m.group("topic") or "").strip().lower()
            out.append((topic, m.group("text").strip()))
    return out


class LLMPrincipleExtractor(Extractor):
    """One LLM call per batch: the current principles and the new episodes in, the consolidated list
    out (:data:`se_gym.experience.prompts.PRINCIPLE`; at most ``max_entries`` lessons of at most
    ``max_words`` words, as ExpInternalization's consolidation).

    Args:
        generator: the ``se_gym.llm`` Generator that writes the lessons.
        docs: the library's docs (:class:`DocSource`).
        max_entries: the most principles in the list.
        max_words: the longest principle.
        batch: episodes per call.
        max_tokens: the longest answer generated.
    """

    granularity = "principle"

    def __init__(self, generator, docs: DocSource, max_entries: int = 50, max_words: int = 32, batch: int = 16, max_tokens: int = 1024):
        self.generator, self.docs = generator, docs
        self.max_entries, self.max_words, self.batch, self.max_tokens = max_entries, max_words, batch, max_tokens
        self.name = f"llm-principle:{getattr(generator, 'model_name', '') or type(generator).__name__}"

    def extract(self, episodes, iteration=0, current=()):
        """The consolidated principles after each batch of episodes, written by the model.

        Args:
            episodes: the episodes of this iteration.
            iteration: the iteration, recorded in the lessons' provenance.
            current: the lessons gathered so far.

        Returns:
            The new lessons (:class:`~se_gym.experience.records.Experience`).
        """
        from ..judge.extract import extract_code
        from . import prompts

        lessons = [e for e in current if e.granularity == "principle"]
        for start in range(0, len(episodes), self.batch):
            chunk = episodes[start : start + self.batch]
            shown = "\n".join(f"- [{e.topic.split(':', 1)[-1]}] {e.text}" for e in lessons) or "(none yet)"
            eps = "\n".join(f"* {ep.query}\n  code: {(extract_code(ep.answer) or ep.answer)[:400]!r}\n  verdict: {_outcome(ep)}"
                            + (f"; {ep.turns[-1].error}" if ep.turns[-1].error else "") for ep in chunk)
            keys = sorted({k for ep in chunk for k in ep.task.functions})
            prompt = prompts.PRINCIPLE.format(package=self.docs.package, array_type=self.docs.array_type, current=shown, episodes=eps,
                                              docs="\n".join(self.docs.line(k) for k in keys), max_entries=self.max_entries, max_words=self.max_words)
            parsed = parse_lessons(_generate(self.generator, [prompt], self.max_tokens)[0])
            if not parsed:
                continue  # an unusable answer keeps the current list
            ids = tuple(ep.id for ep in chunk)
            new, seen = [], set()
            for topic, text in parsed[: self.max_entries]:
                norm = " ".join(text.lower().split())
                if norm in seen:
                    continue
                seen.add(norm)
                topic = topic or "lesson:" + "-".join(re.findall(r"\w+", norm)[:4])
                keys_of = tuple(k for k in keys if topic in _names_of(self.docs, k))
                prefix = "function:" if keys_of else ("mistake:" if ":" not in topic else "")
                new.append(Experience(_clip_words(text, self.max_words), "principle", prefix + topic, keys_of, None, len(chunk),
                                      Provenance(ids, iteration, self.name)))
            lessons = new
        return lessons


def _names_of(docs: DocSource, key: str) -> set[str]:
    """What a lesson's topic may call a function: its key, qualified name or bare library name."""
    qualified = docs.call(key).split("(", 1)[0]
    return {key, qualified.lower(), qualified.rsplit(".", 1)[-1].lower()}


def make_extractor(granularity: str, kind: str, docs: DocSource, generator=None, **options) -> Extractor:
    """The extractor for ``granularity`` (instance, principle, oracle) of ``kind`` (deterministic, llm).

    Args:
        granularity: ``instance``, ``principle`` or ``oracle``.
        kind: ``deterministic`` or ``llm``.
        docs: the library's docs.
        generator: the model for ``llm`` extractors.
        options: the extractor's own options.

    Raises:
        ExperienceError: an unknown granularity or kind, or ``llm`` without a generator.
    """
    if granularity not in GRANULARITIES:
        raise ExperienceError(f"granularity must be one of {GRANULARITIES}, got {granularity!r}")
    if kind not in EXTRACTORS:
        raise ExperienceError(f"extractor must be one of {EXTRACTORS}, got {kind!r}")
    if granularity == "oracle":
        return OracleExtractor(docs)
    if kind == "deterministic":
        return InstanceExtractor(docs) if granularity == "instance" else PrincipleExtractor(docs, **options)
    if generator is None:
        raise ExperienceError("the llm extractor needs a generator (se_gym.llm.make_generator)")
    if granularity == "instance":
        return LLMInstanceExtractor(generator, docs.package, **options)
    return LLMPrincipleExtractor(generator, docs, **options)


class ExperienceBank:
    """The experience gathered so far.  ``add`` merges principles and oracle entries by topic (the
    newer text wins, support adds up) and identical lessons by id; an LLM principle extractor returns
    the consolidated list, which replaces the principles (``replace_principles=True``).  Over
    ``max_entries`` the lessons with the least support (then the oldest) are dropped.

    Args:
        experiences: lessons to start with.
        max_entries: the most lessons kept.
    """

    def __init__(self, experiences: Iterable[Experience] = (), max_entries: int = 200):
        self.max_entries = max_entries
        self._items: dict[str, Experience] = {}
        self.add(experiences)

    @staticmethod
    def _slot(e: Experience) -> str:
        return f"{e.granularity}|{e.topic}" if e.granularity != "instance" else f"instance|{e.id}"

    def add(self, experiences: Iterable[Experience], replace_principles: bool = False) -> int:
        """Add lessons.

        Args:
            experiences: the lessons.
            replace_principles: they are the whole consolidated list of principles: replace the old ones.

        Returns:
            How many slots are new.
        """
        experiences = list(experiences)
        if replace_principles:
            self._items = {s: e for s, e in self._items.items() if e.granularity != "principle"}
        new = 0
        for e in experiences:
            slot = self._slot(e)
            if slot in self._items:
                self._items[slot] = self._items[slot].merged(e)
            else:
                self._items[slot] = e
                new += 1
        if len(self._items) > self.max_entries:
            keep = sorted(self._items.items(), key=lambda kv: (-kv[1].support, -kv[1].provenance.iteration, kv[0]))[: self.max_entries]
            self._items = dict(keep)
        return new

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        return iter(self.items())

    def items(self) -> list[Experience]:
        """The lessons, ordered by granularity, topic and id."""
        return sorted(self._items.values(), key=lambda e: (e.granularity, e.topic, e.id))

    def to_jsonl(self) -> str:
        """The lessons as JSONL text, one per line."""
        from .records import dump_jsonl

        return dump_jsonl(self.items())

    @classmethod
    def from_jsonl(cls, text: str, max_entries: int = 200) -> "ExperienceBank":
        """A bank of the lessons :meth:`to_jsonl` wrote.

        Args:
            text: the JSONL text.
            max_entries: the most lessons kept.
        """
        from .records import load_jsonl

        return cls(load_jsonl(text, Experience), max_entries=max_entries)


def summarize(experiences: Sequence[Experience]) -> dict[str, Any]:
    """Counts by granularity and topic kind (for the round logs)."""
    return {"entries": len(experiences), "by_topic": dict(Counter(e.topic.split(":", 1)[0] for e in experiences)),
            "support": sum(e.support for e in experiences)}
