"""The training losses, as plain functions of tensors (torch is imported by the caller).

Conventions: ``logprobs``/``old_logprobs``/``ref_logprobs`` are per-token log-probabilities of the
sampled tokens, shape ``(batch, seq)``; ``mask`` is 1 on response tokens and 0 on prompt and
padding tokens, so prompts never contribute to any loss.  Each loss returns a scalar tensor and
a dict of float statistics for logging.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import torch

AGGREGATIONS = ("token", "sequence")


CHUNK_ELEMENTS = 1 << 25  # logits upcast to float32 at a time by the vocabulary-wide functions: 128 MiB


def token_logprobs(logits: "torch.Tensor", targets: "torch.Tensor", chunk_elements: int = CHUNK_ELEMENTS) -> "torch.Tensor":
    """log p(targets[t]) under ``logits[t]`` (already aligned: logits at t predict targets at t), float32.

    Selective: ``logit[target] - logsumexp(logits)`` over chunks of about ``chunk_elements`` logits,
    never the full-vocabulary log-softmax of the batch (a (B, T, V) float32 tensor: 10 GB for
    16 x 1024 tokens of a 150k vocabulary).  Backward keeps only the logits and one value per position.
    """
    return _by_chunks(_selected_logprobs().apply, logits, targets, chunk_elements=chunk_elements, recompute=False)


def full_kl(logits: "torch.Tensor", ref_logits: "torch.Tensor", chunk_elements: int = CHUNK_ELEMENTS) -> "torch.Tensor":
    """Exact KL(softmax(logits) || softmax(ref_logits)) over the vocabulary at each position of
    (..., V) logits, float32, in chunks as :func:`token_logprobs`; gradients flow through ``logits`` only."""
    return _by_chunks(_kl_rows, logits, ref_logits.detach(), chunk_elements=chunk_elements, recompute=True)


@functools.cache
def _selected_logprobs():
    """The autograd function of one chunk (built on first use: this module imports without torch)."""
    import torch

    class SelectedLogprobs(torch.autograd.Function):
        # saves the logits as they are (no float32 copy) and their logsumexp; backward computes
        # d/dlogits = onehot(target) - softmax in one float32 chunk, in place
        @staticmethod
        def forward(ctx, logits, targets):
            x = logits.float()
            lse = torch.logsumexp(x, dim=-1)
            ctx.save_for_backward(logits, targets, lse)
            return x.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - lse

        @staticmethod
        def backward(ctx, grad):
            logits, targets, lse = ctx.saved_tensors
            g = grad.unsqueeze(-1)
            d = torch.sub(logits.float(), lse.unsqueeze(-1)).exp_().mul_(-g)
            d.scatter_add_(-1, targets.unsqueeze(-1), g)
            return d.to(logits.dtype), None

    return SelectedLogprobs


def _kl_rows(logits, ref_logits):
    import torch

    lp, lq = torch.log_softmax(logits.float(), -1), torch.log_softmax(ref_logits.float(), -1)
    return (lp.exp() * (lp - lq)).sum(-1)


def _by_chunks(fn, logits, other, *, chunk_elements: int, recompute: bool):
    """``fn(logits_chunk, other_chunk)`` over chunks of positions of (..., V) ``logits``, in their shape.

    Chunks are views along the first dimension (whole sequences while one fits in a chunk, else one
    sequence at a time, cut along its positions): no copy of the logits, and in backward one gradient
    buffer per ``split``, not one per chunk.  With gradients and ``recompute`` each chunk is recomputed
    in backward (activation checkpointing) instead of keeping its float32 intermediates alive until then.
    """
    import torch
    from torch.utils.checkpoint import checkpoint

    if logits.numel() == 0:
        return torch.zeros(logits.shape[:-1], dtype=torch.float32, device=logits.device)
    if logits.dim() == 1:
        return fn(logits, other)
    per_row = logits[0].numel()
    if per_row > chunk_elements and logits.dim() > 2:  # a sequence per step, cut along its positions
        return torch.stack([_by_chunks(fn, x, y, chunk_elements=chunk_elements, recompute=recompute) for x, y in zip(logits.unbind(0), other.unbind(0))])
    step = max(1, chunk_elements // per_row)
    recompute = recompute and torch.is_grad_enabled() and logits.requires_grad
    parts = [
        checkpoint(fn, x, y, use_reentrant=False, preserve_rng_state=False) if recompute else fn(x, y)
        for x, y in zip(logits.split(step), other.split(step))
    ]
    return parts[0] if len(parts) == 1 else torch.cat(parts)


def masked_mean(values: "torch.Tensor", mask: "torch.Tensor", aggregation: str = "token") -> "torch.Tensor":
    """Mean over masked tokens: over all of them ("token"), or per sequence then over sequences."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
    mask = mask.to(values.dtype)
    if aggregation == "token":
        return (values * mask).sum() / mask.sum().clamp(min=1.0)
    per_seq = (values * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)
    has_tokens = (mask.sum(-1) > 0).to(values.dtype)
    return (per_seq * has_tokens).sum() / has_tokens.sum().clamp(min=1.0)


def sft_loss(logprobs: "torch.Tensor", mask: "torch.Tensor", aggregation: str = "token") -> tuple["torch.Tensor", dict]:
    """Negative log-likelihood of the response tokens only."""
    loss = -masked_mean(logprobs, mask, aggregation)
    return loss, {"nll": float(loss.detach())}


ADVANTAGES = ("grpo", "centered", "reward")
EQUAL_REWARDS_STD = 1e-6  # a group std at or below this is a group of equal rewards (see group_advantages)


def group_advantages(rewards: "torch.Tensor", group_size: int, normalize: bool = True, eps: float = 1e-6, mode: str | None = None,
                     std_tol: float = EQUAL_REWARDS_STD) -> "torch.Tensor":
    """One advantage per sample from its group of ``group_size`` samples of the same prompt.

    ``mode`` (default from ``normalize``: "grpo" if True else "reward"):

    * "grpo": ``(r - mean) / (std + eps)`` within the group (population std); a group whose
      samples all got the same reward gets 0 everywhere, so it teaches nothing.
    * "centered": ``r - mean`` (Dr. GRPO: no division by the std); same zeros as "grpo".
    * "reward": the raw reward, the paper's "no advantage" ablation: with 0/1 rewards only the
      accepted samples are pushed up (likelihood weighted by reward) and nothing is pushed down.

    "Same reward" means a group std (computed in float64) of at most ``std_tol``: rounding leaves
    equal rewards such as eight 0.7s a std of ~1e-8 in float32, which divided by ``std + eps``
    became advantages up to 0.06 of pure noise; rewards that really differ (by 1/n of n tests, say)
    have a std many orders above it.
    """
    import torch

    mode = mode or ("grpo" if normalize else "reward")
    if mode not in ADVANTAGES:
        raise ValueError(f"advantage must be one of {ADVANTAGES}, got {mode!r}")
    if rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards do not split into groups of {group_size}")
    if mode == "reward":
        return rewards.float().clone()
    grouped = rewards.double().view(-1, group_size)
    centered = grouped - grouped.mean(-1, keepdim=True)
    std = grouped.std(-1, unbiased=False, keepdim=True)
    adv = centered if mode == "centered" else centered / (std + eps)
    return torch.where(std <= std_tol, torch.zeros_like(adv), adv).view(-1).to(torch.float32)


def kl_penalty(logprobs: "torch.Tensor", ref_logprobs: "torch.Tensor") -> "torch.Tensor":
    """Per-token k3 estimate of KL(policy || reference): exp(ref - lp) - (ref - lp) - 1 (>= 0)."""
    import torch

    delta = (ref_logprobs - logprobs).clamp(-20.0, 20.0)
    return torch.exp(delta) - delta - 1.0


def policy_loss(
    logprobs: "torch.Tensor",
    old_logprobs: "torch.Tensor",
    advantages: "torch.Tensor",
    mask: "torch.Tensor",
    clip_eps: float | None = 0.2,
    clip_eps_high: float | None = None,
    ref_logprobs: "torch.Tensor | None" = None,
    kl_coef: float = 0.0,
    aggregation: str = "token",
) -> tuple["torch.Tensor", dict]:
    """PPO/GRPO surrogate with switches for the ablations.

    ratio = exp(logprobs - old_logprobs) per token; ``advantages`` is one value per sequence.
    With ``clip_eps`` the token loss is ``-min(ratio*A, clip(ratio, 1-eps, 1+eps_high)*A)``;
    with ``clip_eps=None`` it is the unclipped ``-ratio*A`` (whose gradient at ratio 1 is the
    policy gradient ``-A * grad log p``).  ``kl_coef > 0`` adds ``kl_coef * k3(policy, ref)``.
    """
    import torch

    adv = advantages.to(logprobs.dtype).unsqueeze(-1)
    ratio = torch.exp((logprobs - old_logprobs).clamp(-20.0, 20.0))
    unclipped = ratio * adv
    stats: dict[str, float] = {}
    if clip_eps is None:
        token_loss = -unclipped
        clipped_frac = torch.zeros((), dtype=logprobs.dtype)
    else:
        high = clip_eps if clip_eps_high is None else clip_eps_high
        clipped = torch.clamp(ratio, 1.0 - clip_eps, 1.0 + high) * adv
        token_loss = -torch.minimum(unclipped, clipped)
        clipped_frac = masked_mean((clipped < unclipped).to(logprobs.dtype), mask)
    loss = masked_mean(token_loss, mask, aggregation)
    stats["pg_loss"] = float(loss.detach())
    if kl_coef:
        if ref_logprobs is None:
            raise ValueError("kl_coef > 0 needs ref_logprobs")
        kl = masked_mean(kl_penalty(logprobs, ref_logprobs), mask, aggregation)
        loss = loss + kl_coef * kl
        stats["kl"] = float(kl.detach())
    stats["clip_frac"] = float(clipped_frac.detach())
    stats["ratio_mean"] = float(masked_mean(ratio.detach(), mask))
    return loss, stats
