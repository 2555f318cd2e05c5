"""Internalization regimes on :mod:`se_gym.training.distill` (the teacher-with-context /
student-without core shared with Closed-SFT and self-play).

* **off-policy** context distillation: teacher episodes were run *with* experience in the prompt (by
  the model itself or a stronger teacher); every turn becomes a :class:`ContextPair` of the prompt it
  was answered under and the same state rendered *without* experience, and the accepted answers are
  SFT targets under the student's prompt (:func:`se_gym.training.distill.offpolicy_distill`).
* **on-policy** context distillation: the student runs episodes *without* experience; for each of its
  turns the teacher (the same model, frozen at the start of the round) scores those very tokens with
  the experience the injector would give at that state (global: the question's; step-wise: the
  state's), and the student minimises the per-token KL on its own samples
  (:class:`se_gym.training.distill.OnPolicyDistiller`).

Nothing here learns from a test split: both refuse episodes of non-train tasks.
"""
from __future__ import annotations

from typing import Sequence

from .inject import Injector
from .records import Episode

REGIMES = ("offpolicy", "onpolicy")
TRAIN_SPLITS = frozenset({"train", "pretrain"})


def _check_train(episodes: Sequence[Episode]) -> None:
    from ..agents.base import ProtocolError

    for ep in episodes:
        if ep.task.split not in TRAIN_SPLITS:
            raise ProtocolError(f"refusing to internalize episode {ep.id} of a {ep.task.split!r} task: only train splits may be learned from")


def teacher_samples(episodes: Sequence[Episode], student_prompter):
    """Every turn as a :class:`TeacherSample`: (prompt with experience, prompt without) + answer + reward."""
    from ..training.distill import ContextPair, TeacherSample

    _check_train(episodes)
    out = []
    for ep in episodes:
        for i, turn in enumerate(ep.turns):
            student = student_prompter.render(ep.task, (), ep.turns[:i])
            out.append(TeacherSample(ContextPair(turn.prompt, student, ep.id), turn.answer, float(turn.verdict.reward)))
    return out


def offpolicy(policy, teacher_episodes: Sequence[Episode], student_prompter, config, *, progress: bool = False) -> dict:
    """Off-policy context distillation: SFT on the accepted teacher turns under the student's prompts."""
    from ..training.distill import offpolicy_distill

    return offpolicy_distill(policy, teacher_samples(teacher_episodes, student_prompter), config, progress=progress)


def onpolicy_pairs(student_episodes: Sequence[Episode], injector: Injector, prompter):
    """``(pairs, responses)`` for :meth:`OnPolicyDistiller.update`: each student turn with the teacher
    prompt holding the experience chosen at that state."""
    from ..training.distill import ContextPair

    _check_train(student_episodes)
    pairs, responses = [], []
    for ep in student_episodes:
        for i, turn in enumerate(ep.turns):
            chosen = injector.select(ep.task, ep.turns[:i])
            pairs.append(ContextPair(prompter.render(ep.task, chosen, ep.turns[:i]), turn.prompt, ep.id))
            responses.append(turn.answer)
    return pairs, responses


def onpolicy(distiller, run_student, injector: Injector, prompter, steps: int) -> dict:
    """``steps`` rounds of: the student runs fresh episodes without experience (``run_student()``
    returns them), then one KL update on its own turns.  Returns the KL before the first and after the
    last update and the student's accuracy per step."""
    history = []
    for _ in range(steps):
        episodes = run_student()
        pairs, responses = onpolicy_pairs(episodes, injector, prompter)
        stats = distiller.update(pairs, responses)
        stats["student_accuracy"] = sum(ep.passed for ep in episodes) / max(1, len(episodes))
        history.append(stats)
    if not history:
        return {"steps": 0}
    return {"steps": len(history), "kl_first": history[0]["kl_before"], "kl_last": history[-1]["kl"], "tokens": sum(h["tokens"] for h in history),
            "student_accuracy": [h["student_accuracy"] for h in history]}
