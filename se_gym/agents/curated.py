"""Two curated-memory designs of the 2026 memory literature, written for the SE-Bench protocol.

* :class:`CheatsheetAgent` (Dynamic-Cheatsheet-style; Suzgun et al., "Dynamic Cheatsheet: Test-Time
  Learning with Adaptive Memory", 2025): one compact sheet of reusable snippets that a curator keeps
  short: one entry per library call that solved something, each with the count of answers it helped and
  hurt; entries that hurt more than they helped are dropped, the sheet is capped by usefulness.  The
  whole sheet (``k=0``, the cumulative variant) or the ``k`` entries most relevant to the question (the
  retrieval variant) go before the prompt.  ``curate_at_test`` adds the agent's own test answers to the
  sheet without labels, as the paper's test-time curation does (a change of memory: run it ``--online``).
* :class:`PlaybookAgent` (ACE-style; Zhang et al., "Agentic Context Engineering: Evolving Contexts for
  Self-Improving Language Models", 2025): an evolving playbook of itemised bullets in sections, each
  with helpful/harmful counters.  After each pass a reflector tags the bullets the agent would have been
  shown for each judged question (helpful when the answer that used them passed, harmful when it
  failed) and a curator applies *delta* updates (new bullets for calls that solved a question, pitfall
  bullets for calls that failed), then refines: duplicates merged, bullets whose harm outweighs their
  help by ``prune_margin`` removed.  The playbook is never rewritten wholesale.

Both learn from judged train answers only (the protocol's :meth:`Agent.learn`), keep their memory as
JSON (``memory_state``: saved, hashed at freeze), and read nothing at test time but that memory.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from ..retrieval import BM25
from .base import Agent, Observation, Trajectory, sample_answers
from .expel import calls
from .prompting import as_sampler

_SITE = re.compile(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\(([^()\n]*)\)")


def call_sites(code: str) -> dict[str, str]:
    """Dotted calls in ``code`` with their argument text: ``{"zwc.foo": "zwc.foo(x)"}`` (first site of each).

    Args:
        code: an answer's text or code.
    """
    out: dict[str, str] = {}
    for m in _SITE.finditer(code or ""):
        out.setdefault(m.group(1), f"{m.group(1)}({m.group(2).strip()})")
    return out


def _query(o: Observation) -> str:
    return getattr(o.task, "query", "") or o.prompt


def _top(texts: Sequence[str], query: str, k: int, tiebreak: Sequence[float]) -> list[int]:
    """Indices of the ``k`` texts most relevant to ``query`` (BM25, positive scores only; ties by ``tiebreak``)."""
    index = BM25()
    for t in texts:
        index.add(t)
    scores = index.scores(query)
    ranked = sorted(range(len(texts)), key=lambda i: (-scores[i], -tiebreak[i], i))
    return [i for i in ranked if scores[i] > 0][:k]


class _LinesAgent(Agent):
    """Shows lines of its memory (``header`` + one a line) before the prompt; subclasses pick the lines."""

    book = "closed"

    def __init__(self, model: Any, header: str, temperature: float, max_new_tokens: int):
        self.sampler = as_sampler(model)
        self.header, self.temperature, self.max_new_tokens = header, temperature, max_new_tokens

    def lines(self, observation: Observation) -> list[str]:
        raise NotImplementedError

    def prompts(self, observations: Sequence[Observation]) -> list[str]:
        out = []
        for o in observations:
            lines = self.lines(o)
            out.append(self.header + "\n".join(lines) + "\n" + o.prompt if lines else o.prompt)
        return out

    def act(self, observations: Sequence[Observation]) -> list[str]:
        return sample_answers(self.sampler, self.prompts(observations), self.temperature, self.max_new_tokens)

    def act_records(self, observations: Sequence[Observation]) -> list[dict]:
        return sample_answers(self.sampler, self.prompts(observations), self.temperature, self.max_new_tokens, records=True)


class CheatsheetAgent(_LinesAgent):
    """A Dynamic-Cheatsheet-style curated sheet (see the module docstring).

    Args:
        model: a Policy, a ``se_gym.llm`` Generator or a sampler.
        k: entries shown per question, the most relevant first; 0: the whole sheet.
        max_entries: the sheet's cap (the least useful entries go first).
        header: the line above the sheet in the prompt.
        curate_at_test: add the agent's own test answers to the sheet (no labels; needs ``--online``).
    """

    def __init__(self, model: Any, k: int = 0, max_entries: int = 32, header: str = "### Cheatsheet\n", curate_at_test: bool = False,
                 temperature: float = 0.0, max_new_tokens: int = 512):
        super().__init__(model, header, temperature, max_new_tokens)
        self.k, self.max_entries, self.curate_at_test = k, max_entries, curate_at_test
        self.sheet: dict[str, dict] = {}  # call -> {"line", "helped", "hurt"}

    def _ordered(self) -> list[tuple[str, dict]]:
        return sorted(self.sheet.items(), key=lambda kv: (-(kv[1]["helped"] - kv[1]["hurt"]), kv[0]))

    def lines(self, observation: Observation) -> list[str]:
        """The sheet's lines shown for ``observation`` (all, or the ``k`` that fit it best).

        Args:
            observation: the question.
        """
        entries = self._ordered()
        if not self.k:
            return [e["line"] for _, e in entries]
        keep = _top([e["line"] for _, e in entries], _query(observation), self.k, [e["helped"] - e["hurt"] for _, e in entries])
        return [entries[i][1]["line"] for i in keep]

    def _curate(self) -> None:
        self.sheet = {c: e for c, e in self.sheet.items() if e["hurt"] <= e["helped"]}  # misleading entries go
        self.sheet = dict(self._ordered()[: self.max_entries])

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        added = 0
        for t in trajectories:
            if not t.judged:
                continue
            if t.reward >= 1.0:
                for call, site in call_sites(t.response).items():
                    if call not in self.sheet:
                        self.sheet[call] = {"line": f"{site}: {_query(t.observation)}", "helped": 0, "hurt": 0}
                        added += 1
                    self.sheet[call]["helped"] += 1
            else:
                for call in calls(t.response) & set(self.sheet):
                    self.sheet[call]["hurt"] += 1
        self._curate()
        return {"added": added, "entries": len(self.sheet)}

    def act(self, observations: Sequence[Observation]) -> list[str]:
        """Answer with the sheet's lines above each prompt; with ``curate_at_test``, the calls of its own
        answers go into the sheet, unverified (the paper's label-free curation).

        Args:
            observations: the questions, as the runner rendered them for the agent's book.
        """
        answers = super().act(observations)
        if self.curate_at_test:  # the paper's label-free test-time curation: the agent's own answer, unverified
            for o, a in zip(observations, answers):
                for call, site in call_sites(a).items():
                    self.sheet.setdefault(call, {"line": f"{site}: {_query(o)}", "helped": 0, "hurt": 0})
            self._curate()
        return answers

    def memory_state(self) -> dict:
        """The sheet: call -> its line and its helped / hurt counts."""
        return self.sheet

    def set_memory_state(self, state: dict) -> None:
        """Replace the sheet.

        Args:
            state: what :meth:`memory_state` returned.
        """
        self.sheet = {c: dict(e) for c, e in state.items()}


class PlaybookAgent(_LinesAgent):
    """An ACE-style evolving playbook (see the module docstring).

    Args:
        model: a Policy, a ``se_gym.llm`` Generator or a sampler.
        k: "calls" bullets shown per question (the most relevant, ties by helpful - harmful).
        k_pitfalls: "pitfalls" bullets shown under them.
        prune_margin: a bullet is removed once harmful > helpful + this.
        max_bullets: the playbook's cap.
        header: the line above the bullets in the prompt.
    """

    SECTIONS = ("calls", "pitfalls")

    def __init__(self, model: Any, k: int = 3, k_pitfalls: int = 1, prune_margin: int = 1, max_bullets: int = 200,
                 header: str = "### Playbook\n", temperature: float = 0.0, max_new_tokens: int = 512):
        super().__init__(model, header, temperature, max_new_tokens)
        self.k, self.k_pitfalls, self.prune_margin, self.max_bullets = k, k_pitfalls, prune_margin, max_bullets
        self.bullets: list[dict] = []  # {"id", "section", "call", "text", "helpful", "harmful"}
        self.next_id = 1

    def _shown(self, query: str) -> list[dict]:
        out = []
        for section, k in (("calls", self.k), ("pitfalls", self.k_pitfalls)):
            pool = [b for b in self.bullets if b["section"] == section]
            if k and pool:
                out += [pool[i] for i in _top([b["text"] for b in pool], query, k, [b["helpful"] - b["harmful"] for b in pool])]
        return out

    def lines(self, observation: Observation) -> list[str]:
        """The playbook's bullets shown for ``observation``.

        Args:
            observation: the question.
        """
        return [b["text"] for b in self._shown(_query(observation))]

    def _add(self, section: str, call: str, text: str, helpful: int = 0) -> bool:
        if any(b["section"] == section and b["call"] == call for b in self.bullets):
            return False  # grow-and-refine: one bullet per call and section, a duplicate is not added
        self.bullets.append({"id": f"{section}-{self.next_id:05d}", "section": section, "call": call, "text": text, "helpful": helpful, "harmful": 0})
        self.next_id += 1
        return True

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        added = tagged = 0
        for t in trajectories:
            if not t.judged:
                continue
            used = calls(t.response)
            passed = t.reward >= 1.0
            for b in self._shown(_query(t.observation)):  # reflector: tag what the agent would have been shown
                if b["call"] in used:  # a call bullet helps when its call passed; a pitfall when its call failed
                    b["helpful" if passed == (b["section"] == "calls") else "harmful"] += 1
                    tagged += 1
            if passed:  # curator: delta updates, never a rewrite
                for call, site in call_sites(t.response).items():
                    added += self._add("calls", call, f"{site}: {_query(t.observation)}", helpful=1)
            else:
                solved = {b["call"] for b in self.bullets if b["section"] == "calls" and b["helpful"] > b["harmful"]}
                for call in sorted(used - solved):
                    added += self._add("pitfalls", call, f"{call} did not solve: {_query(t.observation)}")
        before = len(self.bullets)
        self.bullets = [b for b in self.bullets if b["harmful"] <= b["helpful"] + self.prune_margin]
        self.bullets = sorted(self.bullets, key=lambda b: (-(b["helpful"] - b["harmful"]), b["id"]))[: self.max_bullets]
        self.bullets.sort(key=lambda b: b["id"])
        return {"added": added, "tagged": tagged, "pruned": before - len(self.bullets), "bullets": len(self.bullets)}

    def memory_state(self) -> list[dict]:
        """The bullets (id, text, helpful and harmful counts)."""
        return self.bullets

    def set_memory_state(self, state: list[dict]) -> None:
        """Replace the bullets (new ids continue after the largest).

        Args:
            state: what :meth:`memory_state` returned.
        """
        self.bullets = [dict(b) for b in state]
        self.next_id = 1 + max((int(b["id"].rsplit("-", 1)[1]) for b in self.bullets), default=0)


__all__ = ["CheatsheetAgent", "PlaybookAgent", "call_sites"]
