"""GRPO/PPO with the switches SE-Bench's RL ablations turn.

One :meth:`RLTrainer.step` = sample ``group_size`` answers per prompt (with the rollout prompt),
score them, compute group advantages, recompute the old log-probs under the *update* prompt, and
run ``ppo_epochs`` passes of minibatch updates.  Open-RL uses the same prompt for both; Closed-RL
rolls out with the docs and updates on the query-only prompt.  After each step the new weights
reach the sampler (in-process for the HF policy; ``sync`` for an external generator).
"""
from __future__ import annotations

import copy
import os
import random
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from .checkpoint import has_checkpoint, load_trainer, save_trainer


@dataclass(frozen=True)
class RLPrompt:
    """What the policy sees when sampling (``rollout``) and when it is updated (``update``)."""

    rollout: str
    update: str
    key: Any = None  # handed back to the reward function (e.g. the Task)


@dataclass(frozen=True)
class RLConfig:
    learning_rate: float = 1e-6
    group_size: int = 8
    ppo_epochs: int = 1  # passes over each rollout batch; clipping only bites after the first
    minibatch_size: int = 16
    clip: bool = True
    clip_eps: float = 0.2
    clip_eps_high: float | None = None
    normalize_advantages: bool = True  # False: likelihood weighted by reward (positives only)
    advantage: str | None = None  # "grpo" | "centered" | "reward"; None: from normalize_advantages
    kl_coef: float = 0.0
    temperature: float = 1.0
    max_new_tokens: int = 512
    max_grad_norm: float = 1.0
    weight_decay: float = 0.0
    aggregation: str = "token"
    mixed_precision: str = "auto"
    drop_zero_advantage: bool = True  # samples with A = 0 carry no policy gradient (without KL)
    track_kl: bool = False  # log kl_start, the policy's KL to its starting weights (keeps a frozen copy)
    seed: int = 0

    @property
    def advantage_mode(self) -> str:
        return self.advantage or ("grpo" if self.normalize_advantages else "reward")

    def __post_init__(self):
        if self.group_size < 1 or self.ppo_epochs < 1 or self.minibatch_size < 1:
            raise ValueError("group_size, ppo_epochs and minibatch_size must be >= 1")
        if self.clip and not 0 < self.clip_eps < 1:
            raise ValueError(f"clip_eps must be in (0, 1), got {self.clip_eps}")
        if self.kl_coef < 0:
            raise ValueError(f"kl_coef must be >= 0, got {self.kl_coef}")
        from .losses import ADVANTAGES

        if self.advantage is not None and self.advantage not in ADVANTAGES:
            raise ValueError(f"advantage must be one of {ADVANTAGES}, got {self.advantage!r}")
        if self.mixed_precision not in ("auto", "bf16", "fp16", "no"):
            raise ValueError(f"mixed_precision must be auto, bf16, fp16 or no, got {self.mixed_precision!r}")


RewardFn = Callable[[Sequence[RLPrompt], Sequence[str]], Sequence[float]]


class Sampler(Protocol):
    def sample(self, prompts: Sequence[str], n: int, temperature: float, max_new_tokens: int) -> list[list[str]]: ...

    def sync(self, model) -> None: ...


class PolicySampler:
    """Samples with the policy itself: new weights are seen at once."""

    def __init__(self, policy, batch_size: int = 64):
        self.policy = policy
        self.batch_size = batch_size

    def sample(self, prompts, n, temperature, max_new_tokens):
        return self.policy.generate(list(prompts), n=n, temperature=temperature, max_new_tokens=max_new_tokens, batch_size=self.batch_size)

    def sync(self, model) -> None:
        pass


class GeneratorSampler:
    """Samples through a ``se_gym.llm`` Generator (vLLM or hf) and pushes weights after each update.

    ``sync(model)`` converts the trainer's module at this boundary into the one form every
    ``Generator.update_weights`` takes: a state dict under checkpoint names
    (:func:`se_gym.training.policy.checkpoint_state_dict`).  With ``model`` given, its weights are
    loaded at once (a generator shared by several runs starts each from that run's weights).
    """

    def __init__(self, generator, model=None):
        self.generator = generator
        if model is not None:
            self.sync(model)

    def sample(self, prompts, n, temperature, max_new_tokens):
        from se_gym.llm import SamplingParams

        params = SamplingParams(n=n, temperature=temperature, max_tokens=max_new_tokens)
        results = self.generator.generate(list(prompts), params)
        return [[c.text for c in generation.completions] for generation in results]

    def sync(self, model) -> None:
        from .policy import checkpoint_state_dict

        if getattr(self.generator, "model", None) is model:  # an hf generator built on this very module
            return
        self.generator.update_weights(checkpoint_state_dict(model))


FENCE = "```"


def cut_after_code_block(text: str) -> str:
    """``text`` up to and including the fence that closes its first code block (unchanged if none).

    Sampled at high temperature, an unclipped policy learns to append junk after the answer; the
    judge reads only the block, but the junk would still be trained on.  Cutting it keeps updates
    on the answer itself (generation stops there in practice: the stop string of the code block).
    """
    start = text.find(FENCE)
    if start < 0:
        return text
    end = text.find(FENCE, start + len(FENCE))
    return text if end < 0 else text[: end + len(FENCE)]


class CutSampler:
    """Wraps a sampler and cuts every sample after its first code block; ``sync`` passes through."""

    def __init__(self, inner, cut: Callable[[str], str] = cut_after_code_block):
        self.inner, self.cut = inner, cut

    def sample(self, prompts, n, temperature, max_new_tokens):
        return [[self.cut(t) for t in group] for group in self.inner.sample(prompts, n, temperature, max_new_tokens)]

    def sync(self, model) -> None:
        self.inner.sync(model)


class RLTrainer:
    """Owns the optimizer, the reference model (when ``kl_coef > 0``) and the step counter."""

    def __init__(self, policy, config: RLConfig, reward_fn: RewardFn, sampler: Sampler | None = None):
        import torch

        from .sft import make_optimizer

        self.policy = policy
        self.config = config
        self.reward_fn = reward_fn
        self.sampler = sampler or PolicySampler(policy)
        self.optimizer = make_optimizer(policy.model, config.learning_rate, config.weight_decay)
        self.ref_model = None
        if config.kl_coef > 0 or config.track_kl:
            self.ref_model = copy.deepcopy(policy.model).eval()
            for p in self.ref_model.parameters():
                p.requires_grad_(False)
        self.step_count = 0
        self.tokens_total = 0  # answer tokens over every step (see _signal_and_tokens)
        self.history: list[dict] = []
        self._torch = torch

    # -- one iteration ------------------------------------------------------------------------
    def step(self, prompts: Sequence[RLPrompt]) -> dict:
        """Sample a group per prompt, score it with ``reward_fn``, and :meth:`update`."""
        cfg = self.config
        self._torch.manual_seed(cfg.seed * 1_000_003 + self.step_count)
        groups = self.sampler.sample([p.rollout for p in prompts], cfg.group_size, cfg.temperature, cfg.max_new_tokens)
        flat_prompts = [p for p in prompts for _ in range(cfg.group_size)]
        responses = [r for group in groups for r in group]
        rewards = [None if x is None else float(x) for x in self.reward_fn(flat_prompts, responses)]
        return self.update(flat_prompts, responses, rewards)

    def update(self, prompts: Sequence[RLPrompt], responses: Sequence[str], rewards: Sequence[float | None]) -> dict:
        """One policy update from judged samples, grouped in runs of ``group_size`` per prompt.

        A reward of ``None`` marks a sample the judge could not run (an infrastructure failure): it is
        no evidence about the answer, so it gets no advantage, takes no part in its group's baseline,
        and is not trained on; ``metrics["infrastructure"]`` counts them.
        """
        torch = self._torch
        from .losses import group_advantages, policy_loss

        cfg = self.config
        if not (len(prompts) == len(responses) == len(rewards)):
            raise ValueError(f"{len(prompts)} prompts, {len(responses)} responses and {len(rewards)} rewards")
        if len(rewards) % cfg.group_size:
            raise ValueError(f"{len(rewards)} rewards do not split into groups of {cfg.group_size}")
        judged = [i for i, r in enumerate(rewards) if r is not None]
        reward_t = torch.tensor([0.0 if r is None else float(r) for r in rewards])
        if len(judged) == len(rewards):
            adv = group_advantages(reward_t, cfg.group_size, mode=cfg.advantage_mode)
        else:  # each group's baseline from its judged members only
            adv = torch.zeros(len(rewards))
            for start in range(0, len(rewards), cfg.group_size):
                members = [i for i in range(start, start + cfg.group_size) if rewards[i] is not None]
                if members:
                    adv[members] = group_advantages(reward_t[members], len(members), mode=cfg.advantage_mode)
        keep = judged
        if cfg.drop_zero_advantage and cfg.kl_coef == 0:
            keep = [i for i in keep if float(adv[i]) != 0.0]
        metrics = {
            "step": self.step_count + 1,
            "reward": float(reward_t[judged].mean()) if judged else None,
            "samples": len(responses),
            "infrastructure": len(rewards) - len(judged),
            "updated_on": len(keep),
            "nonzero_adv": sum(float(adv[i]) != 0.0 for i in judged) / max(1, len(judged)),
        }
        metrics.update(self._signal_and_tokens(responses, rewards, adv))
        stats_acc: dict[str, list[float]] = {}
        if keep:
            batch = self.policy.encode([prompts[i].update for i in keep], [responses[i] for i in keep])
            adv_keep = adv[keep]
            model = self.policy.model
            # eval mode for every pass (no dropout) and one precision path (_logprobs): the old, reference
            # and new log-probs are the same function of the weights, so before the first optimizer step
            # the ratio is exactly 1 and clipping cannot fire spuriously (fp32 old vs bf16 new did)
            model.eval()
            rng = random.Random(cfg.seed * 7919 + self.step_count)
            orders = []
            for _ in range(cfg.ppo_epochs):
                order = list(range(len(keep)))
                rng.shuffle(order)
                orders.append([torch.tensor(order[s : s + cfg.minibatch_size]) for s in range(0, len(order), cfg.minibatch_size)])
            width = batch.response_mask.shape[1]
            old = torch.zeros(len(keep), width)
            ref = torch.zeros(len(keep), width) if self.ref_model is not None else None
            with torch.no_grad():  # old log-probs: the current policy under the UPDATE prompt, cut as epoch 1 is
                for idx in orders[0]:
                    sub = _slice(batch, idx)
                    old[idx] = self._logprobs(model, sub).cpu()
                    if ref is not None:
                        ref[idx] = self._logprobs(self.ref_model, sub).cpu()
            first = True
            for minibatches in orders:
                for idx in minibatches:
                    sub = _slice(batch, idx)
                    lp = self._logprobs(model, sub)
                    loss, stats = policy_loss(
                        lp,
                        old[idx].to(lp.device),
                        adv_keep[idx].to(lp.device),
                        sub.response_mask.to(lp.device),
                        clip_eps=cfg.clip_eps if cfg.clip else None,
                        clip_eps_high=cfg.clip_eps_high,
                        ref_logprobs=None if ref is None or not cfg.kl_coef else ref[idx].to(lp.device),
                        kl_coef=cfg.kl_coef,
                        aggregation=cfg.aggregation,
                    )
                    if first:  # before any update: must be ratio 1, clip fraction 0 (a precision check)
                        mask = sub.response_mask.to(lp.device) > 0
                        metrics["first_ratio_max_dev"] = float((lp.detach() - old[idx].to(lp.device))[mask].abs().max().exp() - 1) if mask.any() else 0.0
                        metrics["first_clip_frac"] = stats["clip_frac"]
                        first = False
                    self.optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                    self.optimizer.step()
                    for k, v in stats.items():
                        stats_acc.setdefault(k, []).append(v)
            if cfg.track_kl:
                metrics["kl_start"] = self._kl_to_start(batch)
            self.sampler.sync(self.policy.model)
        metrics.update({k: sum(v) / len(v) for k, v in stats_acc.items()})
        self.step_count += 1
        self.history.append(metrics)
        from .. import metrics_log

        metrics_log.log(metrics, metrics["step"])
        return metrics

    def _signal_and_tokens(self, responses: Sequence[str], rewards: Sequence[float | None], adv) -> dict:
        """``zero_adv_groups``: the share of groups (with a judged answer) whose every judged answer has
        advantage 0, the groups that teach nothing; ``tokens``: the answers' length in tokens (as trained:
        a sampler that cuts answers, e.g. :class:`CutSampler`, is counted after its cut), summed;
        ``tokens_total``: the same over every step so far; ``reward_per_1k_tokens``: rewards summed per
        1,000 of this step's answer tokens (accuracy per generated token)."""
        g = self.config.group_size
        groups = [[i for i in range(s, s + g) if rewards[i] is not None] for s in range(0, len(rewards), g)]
        groups = [m for m in groups if m]
        zero = sum(all(float(adv[i]) == 0.0 for i in m) for m in groups)
        out = {"zero_adv_groups": zero / len(groups) if groups else None}
        count = getattr(self.policy, "count_tokens", None)
        if count is None:  # a policy that cannot count tokens: no token statistics
            return out
        tokens = sum(count(responses))
        self.tokens_total += tokens
        passed = sum(float(r) for r in rewards if r is not None)
        return {**out, "tokens": tokens, "tokens_total": self.tokens_total, "reward_per_1k_tokens": 1000.0 * passed / tokens if tokens else None}

    def _kl_to_start(self, batch) -> float:
        """Exact KL(policy || start) over the vocabulary, mean over this batch's response tokens.

        Exact rather than sampled: the batch was sampled under the rollout prompt, not by the
        policy under the update prompt, so a sampled estimator (k3) would be biased and explode.
        Both models see one minibatch at a time, and only its response positions are compared, a
        chunk of them at a time (:func:`~se_gym.training.losses.full_kl`).
        """
        torch = self._torch
        from .losses import full_kl

        total, count = 0.0, 0
        with torch.no_grad():
            for start in range(0, batch.input_ids.shape[0], self.config.minibatch_size):
                b = _slice(batch, slice(start, start + self.config.minibatch_size)).to(self.policy.device)
                positions = b.response_mask > 0
                if not positions.any():
                    continue
                new = self.policy.model(input_ids=b.input_ids, attention_mask=b.attention_mask).logits[:, :-1][positions]
                ref = self.ref_model(input_ids=b.input_ids, attention_mask=b.attention_mask).logits[:, :-1][positions]
                kl = full_kl(new, ref)
                total, count = total + float(kl.sum()), count + kl.numel()
        return total / max(1, count)

    def _logprobs(self, model, batch):
        """Per-token log-probs of ``batch`` under ``model``: the one precision path of old, reference
        and new log-probs (gradients flow unless the caller turns them off)."""
        from .losses import token_logprobs
        from .sft import autocast_context

        b = batch.to(self.policy.device)
        with autocast_context(self.policy.device, self.config.mixed_precision):
            out = model(input_ids=b.input_ids, attention_mask=b.attention_mask)
        return token_logprobs(out.logits[:, :-1], b.input_ids[:, 1:])

    # -- persistence ----------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        save_trainer(path, self.policy.model, self.optimizer, None, {"step": self.step_count, "history": self.history,
                                                                     "tokens_total": self.tokens_total})

    def load(self, path: str | os.PathLike) -> bool:
        """Resume from ``path`` if it holds a checkpoint; return whether it did."""
        if not has_checkpoint(path):
            return False
        counters = load_trainer(path, self.policy.model, self.optimizer, None)
        self.step_count = int(counters["step"])
        self.history = list(counters.get("history", []))
        self.tokens_total = int(counters.get("tokens_total", 0))
        return True


def _slice(batch, idx):
    from .policy import Batch

    return Batch(batch.input_ids[idx], batch.attention_mask[idx], batch.response_mask[idx])
