"""A Hugging Face causal LM with the few operations the trainers need.

``Policy`` owns the model and tokenizer: it tokenizes (prompt, response) pairs with a mask that
is 1 only on response tokens, computes per-token log-probabilities, samples answers in-process,
and saves itself.  torch and transformers are imported when a Policy is built.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Batch:
    """Right-padded token ids; ``response_mask[t]`` marks targets ``input_ids[t + 1]`` of the response."""

    input_ids: Any  # (B, T) long
    attention_mask: Any  # (B, T)
    response_mask: Any  # (B, T - 1) float: 1 where the predicted token belongs to the response

    def to(self, device) -> "Batch":
        return Batch(self.input_ids.to(device), self.attention_mask.to(device), self.response_mask.to(device))


def pad_batch(rows: list[list[int]], masks: list[list[float]], pad_id: int) -> "Batch":
    """Right-padded :class:`Batch` of token rows; ``masks[i]`` marks which targets (``rows[i][1:]``)
    are response tokens."""
    import torch

    width = max(len(r) for r in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    resp = torch.zeros((len(rows), width - 1), dtype=torch.float32)
    for i, (ids, m) in enumerate(zip(rows, masks)):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        attention[i, : len(ids)] = 1
        resp[i, : len(m)] = torch.tensor(m, dtype=torch.float32)
    return Batch(input_ids, attention, resp)


def checkpoint_state_dict(model) -> dict:
    """``model``'s weights under its Hugging Face checkpoint names: what ``Generator.update_weights``
    takes.  A LoRA (peft) model's active adapters are added to new tensors (W + delta); the model
    itself is not touched (merging and unmerging in place would change its weights by rounding)."""
    if not hasattr(model, "peft_config"):
        return {k: v.detach() for k, v in model.state_dict().items()}
    from peft.tuners.lora import LoraLayer

    base = model.get_base_model()
    state = {k.replace(".base_layer.", "."): v.detach() for k, v in base.state_dict().items() if "lora_" not in k}
    for name, module in base.named_modules():
        if isinstance(module, LoraLayer):
            key = f"{name}.weight"
            for adapter in module.active_adapters:
                if adapter in module.lora_A:
                    state[key] = state[key] + module.get_delta_weight(adapter).detach().to(state[key].dtype)
    return state


def pick_device(device: str | None = None) -> str:
    import torch

    if device:
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


class Policy:
    """Model + tokenizer on one device."""

    def __init__(self, model, tokenizer, device: str | None = None, max_length: int | None = None):
        self.device = pick_device(device)
        self.model = model.to(self.device)
        self.tokenizer = tokenizer
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.max_length = max_length or int(getattr(model.config, "max_position_embeddings", 2048) or 2048)
        if self.max_length < 2:
            raise ValueError(f"max_length must be >= 2 (a prompt token and a response token), got {self.max_length}")
        self.truncated = 0  # pairs that encode() had to cut to max_length

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike, device: str | None = None, dtype: str = "auto", **kwargs) -> "Policy":
        import torch

        from .._deps import transformers_names

        AutoModelForCausalLM, AutoTokenizer = transformers_names("AutoModelForCausalLM", "AutoTokenizer")

        device = pick_device(device)
        if dtype == "auto":  # bf16 weights on GPUs that have it, fp32 on CPU (CPU bf16 matmuls are slow)
            torch_dtype = torch.bfloat16 if device.startswith("cuda") and torch.cuda.is_bf16_supported() else torch.float32
        else:
            torch_dtype = getattr(torch, dtype)
        tok = AutoTokenizer.from_pretrained(str(path))
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch_dtype, **kwargs)
        return cls(model, tok, device)

    # -- tokens -----------------------------------------------------------------------------
    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in this policy's tokens (no special tokens): an answer's generation cost."""
        texts = list(texts)
        return [len(ids) for ids in self.tokenizer(texts, add_special_tokens=False)["input_ids"]] if texts else []

    def _prompt_ids(self, prompt: str) -> list[int]:
        return list(self.tokenizer(prompt, add_special_tokens=True)["input_ids"])

    def _response_ids(self, response: str) -> list[int]:
        ids = list(self.tokenizer(response, add_special_tokens=False)["input_ids"])
        return ids + [self.tokenizer.eos_token_id]  # the model must learn to stop

    def truncate_pair(self, prompt_ids: list[int], response_ids: list[int]) -> tuple[list[int], list[int]]:
        """Cut a (prompt, response) pair to ``max_length`` tokens, keeping the response.

        The prompt loses tokens from its start (its end, where the question and the answer's lead-in
        are, stays).  Only when the response alone leaves the prompt fewer than ``max_length // 4``
        tokens (at least 1) does the prompt keep that many, and the response keeps its start, the
        rest of the window; its end (and EOS) is then not trained on.
        """
        n = self.max_length
        if len(prompt_ids) + len(response_ids) <= n:
            return prompt_ids, response_ids
        keep_prompt = min(len(prompt_ids), max(n - len(response_ids), n // 4, 1))
        kept = (prompt_ids[len(prompt_ids) - keep_prompt :], response_ids[: n - keep_prompt])
        self.truncated += 1
        if self.truncated == 1:  # once per policy: a long run would repeat it for every batch
            log.warning(
                "a (prompt, response) pair of %d + %d tokens exceeds max_length %d: the prompt keeps its last %d "
                "tokens and the response its first %d (the prompt is cut from the start first; the response only "
                "when it alone leaves the prompt under max_length // 4); later cuts are counted in Policy.truncated, "
                "not logged",
                len(prompt_ids), len(response_ids), n, len(kept[0]), len(kept[1]),
            )
        return kept

    def encode(self, prompts: Sequence[str], responses: Sequence[str]) -> Batch:
        """Tokenize pairs; the loss mask covers the response (and its EOS) only.  Pairs longer than
        ``max_length`` are cut by :meth:`truncate_pair`: the response is never dropped."""

        if len(prompts) != len(responses):
            raise ValueError(f"{len(prompts)} prompts but {len(responses)} responses")
        rows, masks = [], []
        for prompt, response in zip(prompts, responses):
            p, r = self.truncate_pair(self._prompt_ids(prompt), self._response_ids(response))
            ids = p + r
            rows.append(ids)
            first = max(len(p) - 1, 0)  # targets are ids[1:]: the first response token is target len(p) - 1
            masks.append([0] * first + [1] * (len(ids) - 1 - first))
        return pad_batch(rows, masks, self.tokenizer.pad_token_id)

    def token_logprobs(self, batch: Batch):
        """Per-token log p of ``input_ids[:, 1:]``, shape (B, T - 1); gradients flow."""
        from .losses import token_logprobs

        batch = batch.to(self.device)
        out = self.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask)
        return token_logprobs(out.logits[:, :-1], batch.input_ids[:, 1:])

    # -- sampling -----------------------------------------------------------------------------
    def generate(
        self,
        prompts: Sequence[str],
        n: int = 1,
        temperature: float = 0.0,
        max_new_tokens: int = 64,
        batch_size: int = 64,
        seed: int | None = None,
    ) -> list[list[str]]:
        """``n`` answers per prompt, in-process (temperature 0: greedy)."""
        import torch

        if seed is not None:
            torch.manual_seed(seed)
        tok = self.tokenizer
        was_training = self.model.training
        self.model.eval()
        out: list[list[str]] = []
        try:
            for start in range(0, len(prompts), batch_size):
                chunk = prompts[start : start + batch_size]
                encoded = [self._prompt_ids(p) for p in chunk]
                width = max(map(len, encoded))
                ids = torch.full((len(chunk), width), tok.pad_token_id, dtype=torch.long)
                att = torch.zeros_like(ids)
                for i, e in enumerate(encoded):  # left padding, so every prompt ends at the same column
                    ids[i, width - len(e) :] = torch.tensor(e)
                    att[i, width - len(e) :] = 1
                kwargs: dict[str, Any] = dict(max_new_tokens=max_new_tokens, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
                if temperature > 0:
                    kwargs.update(do_sample=True, temperature=temperature, top_p=1.0, top_k=0, num_return_sequences=n)
                else:
                    kwargs.update(do_sample=False)
                with torch.no_grad():
                    gen = self.model.generate(input_ids=ids.to(self.device), attention_mask=att.to(self.device), **kwargs)
                texts = tok.batch_decode(gen[:, width:], skip_special_tokens=True)
                per = n if temperature > 0 else 1
                for i in range(len(chunk)):
                    group = texts[i * per : (i + 1) * per]
                    out.append(group * n if per == 1 else group)
        finally:
            self.model.train(was_training)
        return out

    # -- persistence --------------------------------------------------------------------------
    def save(self, out_dir: str | os.PathLike) -> Path:
        """``save_pretrained`` of model (or LoRA adapter) and tokenizer, written atomically."""
        from ..storage import atomic_dir

        out_dir = Path(out_dir)
        with atomic_dir(out_dir) as tmp:
            self.model.save_pretrained(tmp)
            self.tokenizer.save_pretrained(tmp)
        return out_dir
