"""Supervised fine-tuning on (prompt, response) pairs, loss on response tokens only.

SE-Bench's SFT: answers sampled WITH the docs and accepted by the judge become the targets; the
prompt they are trained under is the doc prompt (Open-SFT) or the query-only prompt (Closed-SFT).
Which prompt goes into :class:`SFTExample` is the caller's choice (see ``se_gym.agents``).
"""
from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass
from typing import Callable, Sequence

from .checkpoint import has_checkpoint, load_trainer, save_trainer
from .trajectories import SFTExample, sft_batch  # SFTExample lives with the records it is made from


def encode_examples(policy, examples: Sequence[SFTExample]):
    """The batch of ``examples``: their recorded ids when they carry them, else the policy's tokenizer."""
    with_ids = [e.has_ids for e in examples]
    if all(with_ids):
        records = [{"prompt_ids": list(e.prompt_ids), "completion_ids": list(e.completion_ids),
                    "completion_mask": list(e.completion_mask or [1] * len(e.completion_ids)),
                    "completion_logprobs": None, "policy_version": 0} for e in examples]
        return sft_batch(records, policy.tokenizer.pad_token_id, policy.max_length)
    if any(with_ids):
        raise ValueError("SFT examples mix recorded token ids and plain text: use one kind")
    return policy.encode([e.prompt for e in examples], [e.response for e in examples])


@dataclass(frozen=True)
class SFTConfig:
    learning_rate: float = 1e-5
    epochs: int = 1
    batch_size: int = 8
    grad_accum: int = 1
    warmup_ratio: float = 0.05  # linear warm-up over this share of the steps, then cosine decay
    min_lr_ratio: float = 0.0
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    lora_rank: int = 0  # 0: full fine-tuning; > 0: LoRA adapters (peft) on every linear layer
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    mixed_precision: str = "auto"  # "auto": bf16 autocast on CUDA, none on CPU; or "bf16", "fp16", "no"
    aggregation: str = "token"
    seed: int = 0

    def __post_init__(self):
        if self.learning_rate <= 0 or self.epochs < 1 or self.batch_size < 1 or self.grad_accum < 1:
            raise ValueError("learning_rate must be > 0 and epochs, batch_size, grad_accum >= 1")
        if not 0 <= self.warmup_ratio < 1:
            raise ValueError(f"warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        if self.mixed_precision not in ("auto", "bf16", "fp16", "no"):
            raise ValueError(f"mixed_precision must be auto, bf16, fp16 or no, got {self.mixed_precision!r}")


def warmup_cosine(total_steps: int, warmup_ratio: float, min_ratio: float = 0.0):
    """LR multiplier: linear from 1/warm-up to 1, then cosine to ``min_ratio`` at the last step."""
    warm = max(1, int(round(total_steps * warmup_ratio))) if warmup_ratio > 0 else 0

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        progress = (step - warm) / max(1, total_steps - warm)
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))

    return factor


def autocast_context(device, mixed_precision: str):
    """The one precision path of every forward pass that feeds a loss or a ratio.

    ``"auto"``: bf16 autocast on CUDA (fp16 where the GPU has no bf16), none elsewhere (CPU bf16
    matmuls are slow); ``"bf16"``/``"fp16"``: autocast on the device's type, CPU included;
    ``"no"``: full precision.
    """
    import contextlib

    import torch

    kind = str(getattr(device, "type", device)).split(":")[0]
    if mixed_precision == "no" or (mixed_precision == "auto" and kind != "cuda"):
        return contextlib.nullcontext()
    if mixed_precision == "auto":
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    elif mixed_precision in ("bf16", "fp16"):
        dtype = torch.bfloat16 if mixed_precision == "bf16" else torch.float16
    else:
        raise ValueError(f"mixed_precision must be auto, bf16, fp16 or no, got {mixed_precision!r}")
    return torch.autocast(kind, dtype=dtype)


def apply_lora(policy, rank: int, alpha: int, dropout: float = 0.0) -> None:
    """Wrap the policy's model in LoRA adapters (peft); only the adapters train."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError:  # pragma: no cover - depends on the install
        raise RuntimeError("LoRA needs peft: pip install 'se-gym[train]'") from None
    if hasattr(policy.model, "peft_config"):
        return
    config = LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout, target_modules="all-linear", task_type="CAUSAL_LM")
    policy.model = get_peft_model(policy.model, config)


def make_optimizer(model, learning_rate: float, weight_decay: float):
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.AdamW(params, lr=learning_rate, weight_decay=weight_decay, betas=(0.9, 0.95))


def train_sft(
    policy,
    examples: Sequence[SFTExample],
    config: SFTConfig = SFTConfig(),
    checkpoint_dir: str | os.PathLike | None = None,
    progress: bool = True,
    stop_after_epochs: int | None = None,
    after_epoch: Callable[[int], bool] | None = None,
) -> dict:
    """Fine-tune ``policy`` in place; return metrics (``loss`` per epoch, ``steps``).

    With ``checkpoint_dir`` a checkpoint is written after every epoch and a rerun resumes from
    the last finished epoch (same data order, same optimizer and scheduler state).
    ``stop_after_epochs`` ends early after that many epochs in total (used to test resumption).
    ``after_epoch(epochs_done)`` is called after every epoch with the model in eval mode (e.g. to
    score a validation split); returning True stops training there (early stopping).
    """
    import torch

    from .. import metrics_log
    from ..progress import bar as tqdm  # plain lines off a terminal
    from .losses import sft_loss

    if not examples:
        raise ValueError("no SFT examples (did the judge accept any sampled answer?)")
    if len({e.has_ids for e in examples}) > 1:
        raise ValueError("SFT examples mix recorded token ids and plain text: use one kind")
    if config.lora_rank > 0:
        apply_lora(policy, config.lora_rank, config.lora_alpha, config.lora_dropout)
    model = policy.model
    model.train()
    steps_per_epoch = math.ceil(len(examples) / (config.batch_size * config.grad_accum))
    total = steps_per_epoch * config.epochs
    optimizer = make_optimizer(model, config.learning_rate, config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_cosine(total, config.warmup_ratio, config.min_lr_ratio))
    counters = {"epoch": 0, "step": 0, "loss": []}
    if checkpoint_dir is not None and has_checkpoint(checkpoint_dir):
        counters = load_trainer(checkpoint_dir, model, optimizer, scheduler)
    last = config.epochs if stop_after_epochs is None else min(config.epochs, stop_after_epochs)
    bar = tqdm(total=total, initial=counters["step"], desc="sft", disable=not progress, leave=False)
    try:
        for epoch in range(counters["epoch"], last):
            order = list(range(len(examples)))
            random.Random(config.seed * 1_000_003 + epoch).shuffle(order)  # same order after a resume
            losses, micro, step_start = [], 0, 0
            optimizer.zero_grad(set_to_none=True)
            for start in range(0, len(order), config.batch_size):
                chunk = [examples[i] for i in order[start : start + config.batch_size]]
                batch = encode_examples(policy, chunk)
                with autocast_context(policy.device, config.mixed_precision):
                    lp = policy.token_logprobs(batch)
                loss, _ = sft_loss(lp, batch.response_mask.to(lp.device), config.aggregation)
                (loss / config.grad_accum).backward()
                losses.append(float(loss.detach()))
                micro += 1
                if micro % config.grad_accum == 0 or start + config.batch_size >= len(order):
                    torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
                    lr = optimizer.param_groups[0]["lr"]  # this step's (the scheduler moves it next)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad(set_to_none=True)
                    counters["step"] += 1
                    step_losses, step_start = losses[step_start:], len(losses)
                    metrics_log.log({"loss": sum(step_losses) / len(step_losses), "lr": lr, "epoch": epoch + 1}, counters["step"])
                    bar.update(1)
                    bar.set_postfix(loss=f"{losses[-1]:.3f}", epoch=epoch + 1)
            counters["epoch"] = epoch + 1
            counters["loss"] = list(counters["loss"]) + [sum(losses) / len(losses)]
            if checkpoint_dir is not None:
                save_trainer(checkpoint_dir, model, optimizer, scheduler, counters)
            if after_epoch is not None:
                model.eval()
                stop = after_epoch(counters["epoch"])
                model.train()
                if stop:
                    break
    finally:
        bar.close()
    model.eval()
    return {"loss": counters["loss"], "steps": counters["step"], "epochs": counters["epoch"], "examples": len(examples)}
