"""The ``hf`` backend: batched generation with a transformers causal LM, in-process.

It runs its own decode loop (left-padded batch, KV cache) instead of ``model.generate`` so that it can
(1) seed each row from (seed, prompt index, sample index), which makes seeded results independent of how
prompts are batched (``SamplingParams.first_index``: a chunk of a larger batch is seeded as its part
of it), (2) record the log-probability of each sampled token without keeping every step's logits, and (3) not inherit sampling defaults from a checkpoint's ``generation_config.json``.

Sampling: ``temperature``, then ``top_p``, then the Gumbel-max trick with the row's own
``torch.Generator`` (an exact sample from the tempered, truncated distribution).  ``temperature == 0``
is greedy.  Log-probs are of the raw (temperature 1) distribution, as vLLM reports by default.

A trainer can share its model: ``HFGenerator(model=policy, tokenizer=tok)`` generates with the very
same weights (no copy), or call ``update_weights(state_dict)`` to copy new weights into the generator's model.
"""
from __future__ import annotations

import math
import secrets
from pathlib import Path
from typing import Any, Mapping, Sequence

from .base import (
    Completion,
    Generation,
    Generator,
    Prompt,
    SamplingParams,
    check_context,
    check_prompts,
    derive_seed,
    encode_prompt,
)


def _pick_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class HFGenerator(Generator):
    """Generate with a transformers model.

    ``model`` is a checkpoint path/name or an already loaded ``PreTrainedModel`` (then ``tokenizer`` is
    required).  ``device="auto"`` picks CUDA when available; ``dtype="auto"`` keeps the checkpoint's dtype.
    ``batch_size`` rows (prompts x n) are decoded together.  ``progress=None`` shows a tqdm bar only on
    a terminal.

    For trainers, ``.model`` is the torch module and ``.tokenizer`` its tokenizer (not a name, unlike
    other backends); ``.model_name`` is the string recorded in every ``Generation``.
    """

    backend = "hf"

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 16,
        progress: bool | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        import torch

        from .._deps import transformers_names

        AutoModelForCausalLM, AutoTokenizer = transformers_names("AutoModelForCausalLM", "AutoTokenizer")

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self.progress = progress
        self.weights_version = 0
        if isinstance(model, (str, Path)):
            path = str(model)
            if Path(path).expanduser().exists():
                path = str(Path(path).expanduser())
            torch_dtype = dtype if dtype == "auto" else getattr(torch, dtype)
            try:
                self.tokenizer = tokenizer or AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
                loaded = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype, trust_remote_code=trust_remote_code)
            except OSError as exc:
                raise ValueError(f"cannot load model {path!r}: {str(exc).splitlines()[0]}") from None
            self.model = loaded.to(_pick_device(device)).eval()
            self._name = path
        else:
            if tokenizer is None:
                raise ValueError("an in-memory model needs its tokenizer: HFGenerator(model, tokenizer)")
            self.tokenizer = tokenizer
            self.model = model if device == "auto" else model.to(device)
            self._name = str(getattr(getattr(model, "config", None), "_name_or_path", "") or type(model).__name__)
        cfg = self.model.config
        eos = getattr(self.model, "generation_config", None)
        eos_ids = getattr(eos, "eos_token_id", None) if eos is not None else None
        if eos_ids is None:
            eos_ids = getattr(cfg, "eos_token_id", None) or self.tokenizer.eos_token_id
        self.eos_ids = sorted({eos_ids} if isinstance(eos_ids, int) else set(eos_ids or ()))
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else (self.eos_ids[0] if self.eos_ids else 0))
        self.max_positions = getattr(cfg, "max_position_embeddings", None)

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    def update_weights(self, state_dict: Mapping[str, Any]) -> None:
        """Copy ``state_dict`` (HF checkpoint names -> tensors) into the generator's model.

        Tensors that already are the model's own (a generator built on the trainer's model shares it)
        are not copied.  Missing keys are allowed only for tied output embeddings; unknown keys are an
        error.
        """
        import torch

        if not isinstance(state_dict, Mapping):
            raise ValueError(f"update_weights takes a state dict (checkpoint name -> tensor), got {type(state_dict).__name__}")
        own = self.model.state_dict()
        if all(k in own and hasattr(v, "data_ptr") and v.data_ptr() == own[k].data_ptr() for k, v in state_dict.items()):
            self.weights_version += 1  # the very tensors of this model: nothing to copy
            return
        with torch.no_grad():
            result = self.model.load_state_dict(dict(state_dict), strict=False)
        tied = {"lm_head.weight"} if getattr(self.model.config, "tie_word_embeddings", False) else set()
        missing = [k for k in result.missing_keys if k not in tied]
        if result.unexpected_keys or missing:
            raise ValueError(
                f"update_weights: state dict does not match the model "
                f"(missing {missing[:3]}, unexpected {list(result.unexpected_keys)[:3]})"
            )
        self.weights_version += 1

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        import torch

        from ..progress import bar as tqdm  # plain lines off a terminal

        prompts = check_prompts(prompts)
        encoded = [encode_prompt(self.tokenizer, p, params.enable_thinking) for p in prompts]
        for i, ids in enumerate(encoded):
            if not ids:
                raise ValueError(f"prompt {i} is empty after tokenization")
            check_context(i, len(ids), params.max_tokens, self.max_positions, f"the model's {self.max_positions} positions")
        base_seed = params.seed if params.seed is not None else secrets.randbits(62)
        rows = [(i, j) for i in range(len(prompts)) for j in range(params.n)]
        rows.sort(key=lambda r: -len(encoded[r[0]]))  # similar lengths together: less padding
        results: dict[tuple[int, int], Completion] = {}
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode(), tqdm(total=len(rows), desc="hf generate", unit="seq", disable=self._no_bar(len(rows))) as bar:
                for start in range(0, len(rows), self.batch_size):
                    chunk = rows[start : start + self.batch_size]
                    outs = self._decode([encoded[i] for i, _ in chunk], [derive_seed(base_seed, params.first_index + i, j) for i, j in chunk], params)
                    for row, out in zip(chunk, outs):
                        results[row] = out
                    bar.update(len(chunk))
        finally:
            self.model.train(was_training)
        return [
            Generation(prompt=p, completions=tuple(results[(i, j)] for j in range(params.n)), model=self.model_name, backend=self.backend, params=params)
            for i, p in enumerate(prompts)
        ]

    def _no_bar(self, n_rows: int) -> bool | None:
        if self.progress is None:
            return None if n_rows > self.batch_size else True  # tqdm: None = only on a terminal
        return not self.progress

    def _decode(self, prompts: list[list[int]], seeds: list[int], params: SamplingParams) -> list[Completion]:
        """Decode one left-padded batch; return a completion per row."""
        import torch

        device = self.device
        batch, width = len(prompts), max(len(p) for p in prompts)
        input_ids = torch.full((batch, width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((batch, width), dtype=torch.long)
        for r, ids in enumerate(prompts):
            input_ids[r, width - len(ids) :] = torch.tensor(ids)
            mask[r, width - len(ids) :] = 1
        input_ids, mask = input_ids.to(device), mask.to(device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        gens = None
        if not params.greedy:
            gens = [torch.Generator(device=device).manual_seed(s) for s in seeds]
        eos_ids = set(self.eos_ids)
        done = [False] * batch
        tokens: list[list[int]] = [[] for _ in range(batch)]
        logps: list[list[float]] = [[] for _ in range(batch)]
        finish = ["length"] * batch
        window = 4 * max((len(s) for s in params.stop), default=0) + 4  # tokens enough to hold any stop string

        out = self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=True)
        for _ in range(params.max_tokens):
            logits = out.logits[:, -1, :].float()
            next_tok = self._sample(logits, params, gens)
            logp = torch.log_softmax(logits, dim=-1).gather(1, next_tok[:, None])[:, 0]
            for r, (t, lp) in enumerate(zip(next_tok.tolist(), logp.tolist())):
                if done[r]:
                    continue
                tokens[r].append(t)
                logps[r].append(lp)
                if t in eos_ids:
                    finish[r], done[r] = "stop", True
                elif params.stop:
                    tail = self.tokenizer.decode(tokens[r][-window:], skip_special_tokens=True)
                    if any(s in tail for s in params.stop):
                        finish[r], done[r] = "stop", True
            if all(done):
                break
            mask = torch.cat([mask, torch.ones((batch, 1), dtype=mask.dtype, device=device)], dim=1)
            positions = positions[:, -1:] + 1
            finished = torch.tensor(done, device=device)
            feed = torch.where(finished, torch.full_like(next_tok, self.pad_id), next_tok)
            out = self.model(
                input_ids=feed[:, None], attention_mask=mask, position_ids=positions,
                past_key_values=out.past_key_values, use_cache=True,
            )
        completions = []
        for r in range(batch):
            text = self.tokenizer.decode(tokens[r], skip_special_tokens=True)
            cuts = [text.find(s) for s in params.stop if s in text]
            if finish[r] == "stop" and cuts:
                text = text[: min(cuts)]  # like vLLM: the stop string is not part of the text
            completions.append(
                Completion(text=text, token_ids=tuple(tokens[r]), logprobs=tuple(logps[r]),
                           finish_reason=finish[r], prompt_token_ids=tuple(prompts[r]))
            )
        return completions

    @staticmethod
    def _sample(logits: Any, params: SamplingParams, gens: list[Any] | None) -> Any:
        """Next token per row: argmax when greedy, else Gumbel-max over the tempered top-p logits."""
        import torch

        if params.greedy or gens is None:
            return logits.argmax(dim=-1)
        scores = logits / params.temperature
        if params.top_p < 1.0:
            sorted_scores, order = scores.sort(dim=-1, descending=True)
            probs = sorted_scores.softmax(dim=-1)
            # drop a token when the mass before it already reaches top_p (the top token always stays)
            drop_sorted = (probs.cumsum(dim=-1) - probs) >= params.top_p
            drop = torch.zeros_like(drop_sorted).scatter(1, order, drop_sorted)
            scores = scores.masked_fill(drop, -math.inf)
        uniform = torch.stack([torch.rand(scores.shape[-1], generator=g, device=scores.device) for g in gens])
        gumbel = -torch.log(-torch.log(uniform.clamp(min=1e-20, max=1.0 - 1e-7)))
        return (scores + gumbel).argmax(dim=-1)

    def close(self) -> None:
        self.model = None  # type: ignore[assignment]
