"""Experience internalization as a benchmark agent (``se-gym bench --agent experience``).

The learner of the second seed paper (ExpInternalization), within what the bench protocol allows:

1. **episodes**: on each learn pass the agent answers the train questions itself.  On the first pass
   it has no lessons and answers with the docs the open-book observation carries; from the second on,
   the lessons it holds stand in for the docs (the query-only prompt plus the injected lessons): its
   own model with its own experience is the teacher.
2. **extract** (principle level): from its own judged answers, one lesson per library function that
   solved something (the doc line the observation showed for that call, or else the call with a
   question it solved), support adding up across answers and passes; and one lesson per kind of
   failure that recurs (the judge's status), as :data:`se_gym.experience.extract.MISTAKE_LESSONS` words it.
3. **inject** step-wise: before each answer the lessons most relevant to the current state are
   retrieved under a token budget (:class:`se_gym.experience.inject.Injector`, ``stepwise``).  A
   benchmark question is answered in one turn, so the state is the question: step-wise and global
   injection pick the same lessons here.
4. **distil off-policy**: the accepted answers (sampled with docs or lessons in context) are trained
   on under the query-only prompt, without the context (:func:`se_gym.training.distill.offpolicy_examples`).

Tested closed book without lessons (``inject_at_test=False``, the default): what was internalized
into the weights.  Its memory is the weights and the lesson bank, both hashed at freeze.

What the protocol rules out, against the paper's loop: extractors that read the library's docs
directly (:class:`~se_gym.experience.extract.DocSource`): an agent sees docs only in open-book train
observations; multi-turn episodes with execution feedback (the benchmark's questions are one turn).
"""
from __future__ import annotations

import hashlib
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Sequence

from ..agents.base import TRAIN_SPLITS, Agent, Observation, Trajectory, sample_answers
from ..agents.curated import call_sites
from ..agents.learners import PolicyAgent
from .extract import MISTAKE_LESSONS, ExperienceBank
from .inject import Injector
from .records import Experience, Provenance


def _doc_line(o: Observation, call: str) -> str | None:
    """The doc line the observation showed for ``call`` (its first line), if any."""
    for doc in o.docs:
        first = doc.strip().splitlines()[0] if doc.strip() else ""
        if first.startswith(call + "("):
            return first
    return None


def principles(trajectories: Sequence[Trajectory], iteration: int, min_support: int = 2) -> list[Experience]:
    """Principle-level lessons from judged trajectories (see the module docstring, step 2).

    Args:
        trajectories: judged train trajectories.
        iteration: the iteration, recorded in the lessons.
        min_support: the fewest trajectories a mistake lesson needs.
    """
    by_call: dict[str, list[Trajectory]] = defaultdict(list)
    failures: Counter = Counter()
    package = Counter()
    for t in trajectories:
        if not t.judged:
            continue
        if t.reward >= 1.0:
            for call in call_sites(t.response):
                by_call[call].append(t)
                package[call.split(".", 1)[0]] += 1
        elif t.status:
            failures[t.status] += 1
    out = []
    for call, ts in sorted(by_call.items()):
        first = ts[0]
        text = next((line for t in ts if (line := _doc_line(t.observation, call))), None)
        text = text or f"{call_sites(first.response)[call]}: {getattr(first.observation.task, 'query', '')}"
        ids = tuple(dict.fromkeys(getattr(t.observation.task, "id", "") for t in ts))
        out.append(Experience(text, "principle", f"function:{call}", (call,), None, len(ts), Provenance(ids, iteration, "bench-principle")))
    pkg = package.most_common(1)[0][0] if package else "the library"
    fields = {"package": pkg, "array_type": f"{pkg.upper()}Array"}
    for status, n in sorted(failures.items()):
        if n >= min_support and status in MISTAKE_LESSONS:
            out.append(Experience(MISTAKE_LESSONS[status].format(**fields), "principle", f"mistake:{status}", (), None, n,
                                  Provenance((), iteration, "bench-principle")))
    return out


class ExperienceAgent(PolicyAgent):
    """ExpInternalization under the protocol (see the module docstring); the benchmark's ``experience``.

    Args:
        policy: the trainable model (the benchmark passes a fresh copy).
        iterations: learn passes (episodes, extract, distil each).
        k: lessons injected per answer at most; ``budget``: their tokens at most.
        header: the line above the injected lessons (the miniature: ``Docs:``, the layout its base read).
        epochs, learning_rate, batch_size: the off-policy distillation (SFT) of each pass.
        temperature: of the episodes; ``test_temperature``: of the test answers.
        inject_at_test: also inject the lessons at test time (then it is a memory agent as well).
    """

    test_book = "closed"

    def __init__(self, policy, iterations: int = 2, k: int = 3, budget: int = 256, header: str = "### Lessons from experience\n",
                 epochs: int = 3, learning_rate: float = 1e-5, batch_size: int = 8, temperature: float = 0.6, test_temperature: float = 0.0,
                 max_new_tokens: int = 512, inject_at_test: bool = False, max_entries: int = 50, seed: int = 0, mixed_precision: str = "auto",
                 sampler=None, progress: bool = False):
        from ..training.sft import SFTConfig

        super().__init__(policy, book="open", temperature=temperature, max_new_tokens=max_new_tokens, sampler=sampler)
        self.learn_passes = iterations
        self.k, self.budget, self.header, self.inject_at_test = k, budget, header, inject_at_test
        self.test_temperature, self.progress = test_temperature, progress
        self.sft = SFTConfig(learning_rate=learning_rate, epochs=epochs, batch_size=batch_size, warmup_ratio=0.1, seed=seed,
                             mixed_precision=mixed_precision)
        self.bank = ExperienceBank(max_entries=max_entries)
        self.iteration = 0

    def lessons(self, observation: Observation) -> list[Experience]:
        """Step-wise retrieval for the current state (the question: one turn).

        Args:
            observation: the question.
        """
        if not len(self.bank):
            return []
        return Injector("stepwise", self.bank.items(), budget=self.budget, max_entries=self.k).select(observation.task)

    def prompt(self, o: Observation) -> str:
        """The prompt for ``o``: its retrieved lessons above the closed prompt on train questions (and at
        test time with ``inject_at_test``), else its own prompt.

        Args:
            o: the observation.
        """
        teaching = o.split in TRAIN_SPLITS
        lessons = self.lessons(o) if (teaching or self.inject_at_test) else []
        if not lessons:
            return o.prompt  # first pass: the docs of the open-book observation; at test: closed book
        base = (o.closed_prompt or o.prompt) if teaching else o.prompt  # the lessons stand in for the docs
        return self.header + "\n".join(" ".join(e.text.split()) for e in lessons) + "\n" + base

    def act(self, observations: Sequence[Observation]) -> list[str]:
        """One answer per observation, the lessons retrieved for it above its prompt.

        Args:
            observations: the questions.
        """
        return sample_answers(self.sampler, [self.prompt(o) for o in observations], self.temperature, self.max_new_tokens)

    def freeze(self) -> None:
        """End of the learn phase: learning is refused from now on, and answers sample at ``test_temperature``."""
        super().freeze()
        self.temperature = self.test_temperature

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        from ..training.distill import ContextPair, TeacherSample, offpolicy_examples
        from ..training.sft import train_sft

        # off-policy distillation: the answers sampled with the teacher's context (docs, or the lessons held
        # before this pass) become targets under the query-only prompt
        samples = [TeacherSample(ContextPair(self.prompt(t.observation), t.observation.closed_prompt, t.observation.task), t.response, t.reward)
                   for t in trajectories if t.judged and t.observation.closed_prompt is not None]
        examples = offpolicy_examples(samples)
        self.iteration += 1
        new = self.bank.add(principles(trajectories, self.iteration))
        metrics = {"lessons": len(self.bank), "new_lessons": new, "distilled": len(examples)}
        if examples:
            out = train_sft(self.policy, examples, self.sft, progress=self.progress)
            self.sampler.sync(self.policy.model)
            metrics["final_loss"] = out["loss"][-1]
        return metrics

    # -- memory: the weights and the lesson bank --------------------------------------------------------
    def memory_state(self) -> dict:
        """The iteration and the bank's lessons (the weights are saved apart)."""
        return {"iteration": self.iteration, "lessons": [e.to_json() for e in self.bank.items()]}

    def set_memory_state(self, state: dict) -> None:
        """Restore the iteration and the bank.

        Args:
            state: what :meth:`memory_state` returned.
        """
        self.iteration = int(state.get("iteration", 0))
        self.bank = ExperienceBank((Experience.from_json(e) for e in state.get("lessons", [])), max_entries=self.bank.max_entries)

    def state_digest(self) -> str:
        """A SHA-256 over the weights' digest and the bank's."""
        weights = super().state_digest()
        return hashlib.sha256((weights + Agent.state_digest(self)).encode()).hexdigest()

    def memory_size(self) -> tuple[int | None, int]:
        """(parameters, bytes) of the weights with the bank's bytes added."""
        params, size = super().memory_size()
        return params, size + Agent.memory_size(self)[1]

    def load(self, directory: str | os.PathLike) -> "ExperienceAgent":
        """Load the bank, then the weights.

        Args:
            directory: the folder :meth:`save` wrote.
        """
        Agent.load(self, directory)  # the bank
        return super().load(directory)  # the weights

    def save(self, directory: str | os.PathLike) -> Path:
        """Write the weights and the bank (``memory_state.json``).

        Args:
            directory: the folder.

        Returns:
            The folder written.
        """
        return super().save(directory)  # PolicyAgent.save -> Agent.save writes the bank (memory_state.json) too


__all__ = ["ExperienceAgent", "principles"]
