"""Token trajectories (:mod:`se_gym.trajectories`) into training tensors, with the recorded ids.

- :func:`sft_batch`: the layout of :class:`se_gym.training.policy.Batch` (right-padded
  ``prompt + completion``; ``response_mask`` on the targets that are sampled completion tokens), which
  :func:`se_gym.training.sft.train_sft` trains on when its examples carry ids
  (:func:`sft_examples`);
- :func:`rl_batch`: the layout of RL trainers such as verl's (left-padded prompts, right-padded
  responses, response mask, the sampling log-probs as ``old_log_probs``, rewards, policy versions).

Nothing is tokenized again: the ids are the ones the model sampled.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..trajectories import check


@dataclass(frozen=True)
class SFTExample:
    """A (prompt, response) pair for :func:`se_gym.training.sft.train_sft`; with the token ids of a
    recorded trajectory (:func:`sft_examples`) training uses those ids as they were sampled instead
    of tokenizing the text."""

    prompt: str
    response: str
    prompt_ids: tuple[int, ...] | None = None
    completion_ids: tuple[int, ...] | None = None
    completion_mask: tuple[int, ...] | None = None

    @property
    def has_ids(self) -> bool:
        return self.prompt_ids is not None and self.completion_ids is not None


def _records(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    if not records:
        raise ValueError("no trajectories")
    return [check(r, f"trajectory {i}") for i, r in enumerate(records)]


def sft_batch(records: Sequence[Mapping[str, Any]], pad_id: int, max_length: int | None = None):
    """A :class:`~se_gym.training.policy.Batch` of ``prompt_ids + completion_ids`` (cut at
    ``max_length``); ``response_mask[t]`` is the completion mask of target ``input_ids[t + 1]``."""
    from .policy import pad_batch

    rows, masks = [], []
    for r in _records(records):
        p, c = list(r["prompt_ids"]), list(r["completion_ids"])
        ids = (p + c)[:max_length] if max_length else p + c
        rows.append(ids)
        masks.append(([0] * (len(p) - 1) + list(r["completion_mask"]))[: len(ids) - 1])
    return pad_batch(rows, masks, pad_id)


def sft_examples(records: Sequence[Mapping[str, Any]], accepted_only: bool = True) -> list:
    """:class:`SFTExample` with the recorded ids (``train_sft`` then trains
    on them as sampled); ``accepted_only`` keeps the answers the judge accepted (reward 1, not an
    infrastructure failure)."""
    out = []
    for r in _records(records):
        if accepted_only and (r.get("infrastructure") or r.get("reward") is None or float(r["reward"]) < 1.0 - 1e-9):
            continue
        prompt = r.get("prompt")
        out.append(SFTExample(
            prompt=prompt if isinstance(prompt, str) else "", response=str(r.get("response", "")),
            prompt_ids=tuple(r["prompt_ids"]), completion_ids=tuple(r["completion_ids"]),
            completion_mask=tuple(r["completion_mask"]),
        ))
    return out


def rl_batch(records: Sequence[Mapping[str, Any]], pad_id: int) -> dict:
    """RL tensors: ``prompts`` (B, P) left-padded, ``responses`` (B, R) right-padded,
    ``input_ids``/``attention_mask`` (B, P + R), ``response_mask`` (B, R) (the completion mask; 0 on
    padding), ``old_log_probs`` (B, R) (the sampling log-probs; 0 on padding), ``rewards`` (B,)
    (NaN where none), ``policy_version`` (B,)."""
    import torch

    rs = _records(records)
    if any(r["completion_logprobs"] is None for r in rs):
        raise ValueError("RL needs the sampling log-probs: a trajectory has completion_logprobs None")
    P = max(len(r["prompt_ids"]) for r in rs)
    R = max(max(len(r["completion_ids"]) for r in rs), 1)
    B = len(rs)
    prompts = torch.full((B, P), pad_id, dtype=torch.long)
    responses = torch.full((B, R), pad_id, dtype=torch.long)
    attention = torch.zeros((B, P + R), dtype=torch.long)
    response_mask = torch.zeros((B, R), dtype=torch.long)
    old_log_probs = torch.zeros((B, R), dtype=torch.float32)
    for i, r in enumerate(rs):
        p, c = r["prompt_ids"], r["completion_ids"]
        prompts[i, P - len(p):] = torch.tensor(p)
        attention[i, P - len(p):P] = 1
        if c:
            responses[i, : len(c)] = torch.tensor(c)
            attention[i, P:P + len(c)] = 1
            response_mask[i, : len(c)] = torch.tensor(r["completion_mask"])
            old_log_probs[i, : len(c)] = torch.tensor(r["completion_logprobs"], dtype=torch.float32)
    rewards = torch.tensor([float("nan") if r.get("reward") is None else float(r["reward"]) for r in rs])
    return {
        "prompts": prompts, "responses": responses, "input_ids": torch.cat([prompts, responses], dim=1),
        "attention_mask": attention, "response_mask": response_mask, "old_log_probs": old_log_probs,
        "rewards": rewards, "policy_version": torch.tensor([int(r["policy_version"]) for r in rs]),
    }
