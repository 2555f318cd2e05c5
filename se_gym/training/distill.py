"""Context distillation: a teacher that sees some context, a student that does not.

SE-Bench's Closed-SFT, Closed-SFT on self-proposed tasks, and ExpInternalization's off-policy and
on-policy context distillation are one idea.  A model behaves better with some context ``C`` in its
prompt (the library's docs; experience distilled from earlier episodes); training should move that
behaviour into the weights, so that the model behaves so *without* ``C``.  Each episode is therefore
seen two ways, a :class:`ContextPair`: the teacher's prompt (with ``C``) and the student's (without).

* **Off-policy** (:func:`offpolicy_examples`, :func:`offpolicy_distill`): a teacher (the model itself
  with ``C``, or a stronger model) answers the teacher prompts; the answers the judge accepts become
  SFT targets under the *student* prompt.  With the docs as ``C`` this is Closed-SFT; with tasks the
  model proposed itself, Closed-SFT-Self-Play.
* **On-policy** (:class:`OnPolicyDistiller`): the student samples under the student prompt; the
  teacher (the same model, frozen when the distiller is built or live) scores those very tokens under
  the teacher prompt; the student minimises the per-token KL(student || teacher) on its own samples.
  It only corrects what the student actually does.

torch is imported inside the functions, so this module imports without it.
"""
from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any, Sequence

from .sft import SFTConfig, SFTExample

ESTIMATORS = ("full", "sampled")
TEACHERS = ("frozen", "live")


@dataclass(frozen=True)
class ContextPair:
    """One episode seen with the context (``teacher_prompt``) and without it (``student_prompt``)."""

    teacher_prompt: str
    student_prompt: str
    key: Any = None  # what the caller needs back (a Task, an episode id)


@dataclass(frozen=True)
class TeacherSample:
    """An answer produced under ``pair.teacher_prompt`` and what the judge gave it."""

    pair: ContextPair
    response: str
    reward: float


def offpolicy_examples(samples: Sequence[TeacherSample], min_reward: float = 1.0) -> list[SFTExample]:
    """The accepted teacher answers as SFT targets under the student's prompt."""
    return [SFTExample(s.pair.student_prompt, s.response) for s in samples if s.reward >= min_reward]


def offpolicy_distill(policy, samples: Sequence[TeacherSample], config: SFTConfig, *, min_reward: float = 1.0,
                      checkpoint_dir=None, progress: bool = True) -> dict:
    """Fine-tune ``policy`` (the student) on the accepted teacher answers; returns SFT metrics plus
    ``accepted`` (0, and no training, when the teacher produced nothing acceptable)."""
    from .sft import train_sft

    examples = offpolicy_examples(samples, min_reward)
    if not examples:
        return {"accepted": 0, "offered": len(samples)}
    metrics = train_sft(policy, examples, config, checkpoint_dir=checkpoint_dir, progress=progress)
    return {**metrics, "accepted": len(examples), "offered": len(samples)}


# -- on-policy --------------------------------------------------------------------------------------
def aligned_response_positions(student_mask, teacher_mask) -> tuple[list[Any], list[Any]]:
    """Per row, the positions whose targets are response tokens in the student's and the teacher's
    batch, paired in order (the response ids are the same in both; only the prompt before them differs).
    Where truncation left one side shorter, the common prefix of the response is used."""
    s_rows, t_rows = [], []
    for s, t in zip(student_mask, teacher_mask):
        si, ti = s.nonzero(as_tuple=True)[0], t.nonzero(as_tuple=True)[0]
        k = min(len(si), len(ti))
        s_rows.append(si[:k])
        t_rows.append(ti[:k])
    return s_rows, t_rows


def token_kl(student_logits, teacher_logits, targets=None, estimator: str = "full"):
    """Per-token KL(student || teacher) at aligned positions, shape (N,).

    ``full``: the exact KL over the vocabulary, sum_v p_s(v) (log p_s(v) - log p_t(v)); gradients flow
    through the student.  ``sampled``: the single-sample estimate at the tokens the student sampled
    (``targets``), log p_s(y) - log p_t(y), whose score-function gradient (the caller weights
    ``log p_s(y)`` by the detached estimate) is an unbiased gradient of the same KL and needs no full
    teacher distribution.  Both work a chunk of rows at a time (se_gym.training.losses).
    """
    from .losses import full_kl, token_logprobs

    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    if estimator == "full":
        return full_kl(student_logits, teacher_logits)
    if targets is None:
        raise ValueError("the sampled estimator needs the sampled tokens (targets)")
    return token_logprobs(student_logits, targets) - token_logprobs(teacher_logits, targets).detach()


def onpolicy_loss(student_logits, teacher_logits, targets, estimator: str = "full"):
    """The on-policy distillation loss over aligned response tokens (flattened to (N, V) and (N,)),
    and its statistics.  ``full``: mean exact KL.  ``sampled``: REINFORCE on the per-token estimate,
    ``mean(stopgrad(log p_s - log p_t) * log p_s)``, whose value is not the KL but whose gradient
    estimates it; the reported ``kl`` is the estimate's mean either way."""
    from .losses import token_logprobs

    kl = token_kl(student_logits, teacher_logits, targets, estimator)
    if kl.numel() == 0:
        zero = student_logits.sum() * 0.0
        return zero, {"kl": 0.0, "tokens": 0}
    if estimator == "full":
        loss = kl.mean()
    else:
        loss = (kl.detach() * token_logprobs(student_logits, targets)).mean()
    return loss, {"kl": float(kl.detach().mean()), "tokens": int(kl.numel())}


@dataclass(frozen=True)
class OnPolicyConfig:
    """On-policy context distillation.  ``teacher``: ``frozen`` (a copy of the weights when the
    distiller is built: a fixed target) or ``live`` (the student's own current weights, no gradient)."""

    learning_rate: float = 1e-5
    samples_per_prompt: int = 4
    temperature: float = 1.0
    max_new_tokens: int = 512
    epochs: int = 1  # passes over each sampled batch
    batch_size: int = 8
    estimator: str = "full"
    teacher: str = "frozen"
    max_grad_norm: float = 1.0
    weight_decay: float = 0.0
    seed: int = 0

    def __post_init__(self):
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {ESTIMATORS}, got {self.estimator!r}")
        if self.teacher not in TEACHERS:
            raise ValueError(f"teacher must be one of {TEACHERS}, got {self.teacher!r}")
        if self.learning_rate <= 0 or self.samples_per_prompt < 1 or self.epochs < 1 or self.batch_size < 1:
            raise ValueError("learning_rate must be > 0 and samples_per_prompt, epochs, batch_size >= 1")


class OnPolicyDistiller:
    """Student samples without the context; the teacher scores them with it; the student minimises
    the per-token KL on its own samples.  ``sampler``: anything with ``sample(prompts, n, temperature,
    max_new_tokens)`` (default: the policy itself, see :class:`se_gym.training.rl.PolicySampler`)."""

    def __init__(self, policy, config: OnPolicyConfig = OnPolicyConfig(), sampler=None, teacher_model=None):
        from .rl import PolicySampler
        from .sft import make_optimizer

        self.policy = policy
        self.config = config
        self.sampler = sampler or PolicySampler(policy)
        if teacher_model is not None:
            self.teacher = teacher_model
        elif config.teacher == "frozen":
            self.teacher = copy.deepcopy(policy.model).eval()
            for p in self.teacher.parameters():
                p.requires_grad_(False)
        else:
            self.teacher = None  # the student's own weights, read without gradient
        self.optimizer = make_optimizer(policy.model, config.learning_rate, config.weight_decay)
        self.step_count = 0

    def sample(self, pairs: Sequence[ContextPair]) -> tuple[list[ContextPair], list[str]]:
        cfg = self.config
        groups = self.sampler.sample([p.student_prompt for p in pairs], cfg.samples_per_prompt, cfg.temperature, cfg.max_new_tokens)
        flat = [(p, r) for p, group in zip(pairs, groups) for r in group]
        return [p for p, _ in flat], [r for _, r in flat]

    def step(self, pairs: Sequence[ContextPair]) -> dict:
        """Sample ``samples_per_prompt`` answers per pair with the student, then :meth:`update`."""
        import torch

        torch.manual_seed(self.config.seed * 1_000_003 + self.step_count)
        flat_pairs, responses = self.sample(pairs)
        return self.update(flat_pairs, responses)

    def update(self, pairs: Sequence[ContextPair], responses: Sequence[str]) -> dict:
        """Minimise KL(student || teacher) on these student samples; returns mean KL before the update
        (``kl_before``), after each epoch (``kl``) and the token count."""
        import torch

        if len(pairs) != len(responses):
            raise ValueError(f"{len(pairs)} pairs but {len(responses)} responses")
        cfg = self.config
        model = self.policy.model
        order = list(range(len(pairs)))
        rng = random.Random(cfg.seed * 7919 + self.step_count)
        epoch_kl: list[float] = []
        tokens = 0
        model.train()
        for _ in range(cfg.epochs):
            rng.shuffle(order)
            total, count = 0.0, 0
            for start in range(0, len(order), cfg.batch_size):
                idx = order[start : start + cfg.batch_size]
                loss, stats = self._loss([pairs[i] for i in idx], [responses[i] for i in idx])
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                total += stats["kl"] * stats["tokens"]
                count += stats["tokens"]
            epoch_kl.append(total / max(1, count))
            tokens = count
        model.eval()
        self.step_count += 1
        from .. import metrics_log

        metrics = {"step": self.step_count, "kl_before": epoch_kl[0], "kl": epoch_kl[-1], "tokens": tokens, "samples": len(responses)}
        metrics_log.log(metrics, self.step_count)
        return metrics

    def _loss(self, pairs: Sequence[ContextPair], responses: Sequence[str]):
        import torch

        policy = self.policy
        student = policy.encode([p.student_prompt for p in pairs], list(responses)).to(policy.device)
        teacher = policy.encode([p.teacher_prompt for p in pairs], list(responses)).to(policy.device)
        s_logits = policy.model(input_ids=student.input_ids, attention_mask=student.attention_mask).logits[:, :-1]
        with torch.no_grad():
            tm = self.teacher if self.teacher is not None else policy.model
            t_logits = tm(input_ids=teacher.input_ids, attention_mask=teacher.attention_mask).logits[:, :-1]
        s_pos, t_pos = aligned_response_positions(student.response_mask, teacher.response_mask)
        s_flat = torch.cat([s_logits[i, p] for i, p in enumerate(s_pos)])
        t_flat = torch.cat([t_logits[i, p] for i, p in enumerate(t_pos)])
        targets = torch.cat([student.input_ids[i, p + 1] for i, p in enumerate(s_pos)])
        return onpolicy_loss(s_flat, t_flat, targets, self.config.estimator)
