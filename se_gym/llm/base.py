"""The generation contract shared by every backend: sampling parameters, outputs, the ``Generator`` base.

A prompt is either raw text (used as is) or a list of chat messages (``{"role": ..., "content": ...}``)
rendered with the model's chat template.  Nothing here imports torch, vLLM or an HTTP client.
"""
from __future__ import annotations

import abc
import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

from ..errors import SEGymError
from ..registry import Registry

Message = Mapping[str, Any]
Prompt = Union[str, Sequence[Message]]



class GenerationError(SEGymError, RuntimeError):
    """A backend failed to produce an answer (server error, retries exhausted, engine failure)."""


class ContextTooLong(SEGymError, ValueError):
    """A prompt plus ``max_tokens`` does not fit the model's positions (one line, saying what to lower)."""


def check_context(i: int, n_prompt: int, max_tokens: int, limit: int | None, what: str) -> None:
    """Refuse prompt ``i`` (``n_prompt`` tokens) when ``n_prompt + max_tokens`` passes ``limit``
    (``what`` names the limit: "the model's 2048 positions"); the error gives the largest
    ``max_tokens`` that fits (the rollout/eval commands' ``--max-tokens``)."""
    if limit and n_prompt + max_tokens > limit:
        room = limit - n_prompt
        fix = (f"lower max_tokens to at most {room} (se-gym rollout/eval: --max-tokens {room})" if room >= 1
               else "the prompt alone fills them: use a shorter prompt or a model with more positions")
        raise ContextTooLong(f"prompt {i} has {n_prompt} tokens; with max_tokens={max_tokens} it exceeds {what}: {fix}")


class WeightUpdateUnsupported(GenerationError):
    """The backend cannot take new weights (e.g. a remote server): serve a new checkpoint instead."""


@dataclass(frozen=True)
class SamplingParams:
    """How to sample.

    Attributes:
        temperature: 0 means greedy.
        top_p: nucleus sampling's mass.
        max_tokens: the longest completion.
        n: completions per prompt.
        seed: the sampling seed (None: unseeded).
        stop: strings that end a completion.
        enable_thinking: passed to Qwen3-style chat templates when not ``None`` (templates that ignore
            it are unaffected).
        first_index: the index of this call's first prompt in a larger batch: prompt ``i`` of the call
            is seeded as prompt ``first_index + i`` of the batch, so a batch generated in contiguous
            chunks (one per worker) samples what it samples in one call.
    """

    temperature: float = 0.6
    top_p: float = 1.0
    max_tokens: int = 1024
    n: int = 1
    seed: int | None = None
    stop: tuple[str, ...] = ()
    enable_thinking: bool | None = None
    first_index: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):  # a lone string is a common slip; keep it as one stop string
            object.__setattr__(self, "stop", (self.stop,))
        else:
            object.__setattr__(self, "stop", tuple(self.stop))
        if not self.temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if not (isinstance(self.max_tokens, int) and self.max_tokens >= 1):
            raise ValueError(f"max_tokens must be an int >= 1, got {self.max_tokens!r}")
        if not (isinstance(self.n, int) and self.n >= 1):
            raise ValueError(f"n must be an int >= 1, got {self.n!r}")
        if self.seed is not None and not isinstance(self.seed, int):
            raise ValueError(f"seed must be an int or None, got {self.seed!r}")
        if any(not isinstance(s, str) or not s for s in self.stop):
            raise ValueError(f"stop must be non-empty strings, got {self.stop!r}")
        if self.enable_thinking is not None and not isinstance(self.enable_thinking, bool):
            raise ValueError(f"enable_thinking must be True, False or None, got {self.enable_thinking!r}")
        if not (isinstance(self.first_index, int) and self.first_index >= 0):
            raise ValueError(f"first_index must be an int >= 0, got {self.first_index!r}")

    @property
    def greedy(self) -> bool:
        """Whether it samples greedily (temperature 0)."""
        return self.temperature == 0


@dataclass(frozen=True)
class Completion:
    """One sampled answer.

    Attributes:
        text: the text.
        token_ids: its token ids (None where the backend does not say).
        logprobs: ``logprobs[i]`` is the log-probability of ``token_ids[i]`` under the model's raw
            distribution (temperature 1, before top-p), as vLLM reports by default.
        finish_reason: ``stop`` (EOS or a stop string) or ``length``.
        prompt_token_ids: the prompt's token ids, where the backend says.
    """

    text: str
    token_ids: tuple[int, ...] | None
    logprobs: tuple[float, ...] | None
    finish_reason: str  # "stop" (EOS or a stop string) or "length"
    prompt_token_ids: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Generation:
    """All completions for one prompt, with what produced them.

    Attributes:
        prompt: the prompt (text or chat messages).
        completions: the samples.
        model: the model's name.
        backend: the backend's name.
        params: how they were sampled.
    """

    prompt: Prompt
    completions: tuple[Completion, ...]
    model: str
    backend: str
    params: SamplingParams = field(default_factory=SamplingParams)

    @property
    def texts(self) -> list[str]:
        """The completions' texts."""
        return [c.text for c in self.completions]


class Generator(abc.ABC):
    """A model that turns prompts into ``Generation`` records.  Use as a context manager or call
    ``close()`` to free the engine / connections."""

    backend: str = ""
    model: str = ""
    #: how many times new weights were loaded (0: the weights it was built with)
    weights_version: int = 0

    @property
    def model_name(self) -> str:
        """The model as recorded in every ``Generation`` (the ``hf`` backend's ``.model`` is a module)."""
        return self.model

    @abc.abstractmethod
    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        """One ``Generation`` per prompt, in order.

        Args:
            prompts: text or chat messages.
            params: how to sample.
        """

    def update_weights(self, state_dict: Mapping[str, Any]) -> None:
        """Generate from now on with ``state_dict``.

        Every backend takes this one form; one that cannot raises :class:`WeightUpdateUnsupported` and
        changes nothing.

        Args:
            state_dict: tensors under the model's Hugging Face checkpoint names (``model.state_dict()`` of
                a plain transformers model; trainers convert LoRA/wrapped models at their boundary).
        """
        raise WeightUpdateUnsupported(f"the {self.backend or type(self).__name__} backend cannot update weights")

    def close(self) -> None:
        """Release resources; the default has none."""

    def __enter__(self) -> "Generator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_prompts(prompts: Sequence[Prompt]) -> list[Prompt]:
    """Validate a batch of prompts; raise a one-line ``ValueError`` on the first bad one."""
    if isinstance(prompts, (str, bytes)) or not isinstance(prompts, Sequence):
        raise ValueError("prompts must be a list of strings or chat-message lists (got a single value)")
    for i, prompt in enumerate(prompts):
        if isinstance(prompt, str):
            continue
        if not isinstance(prompt, Sequence) or not prompt:
            raise ValueError(f"prompt {i} must be a string or a non-empty list of chat messages")
        for m in prompt:
            if not isinstance(m, Mapping) or "role" not in m or "content" not in m:
                raise ValueError(f"prompt {i}: each chat message needs 'role' and 'content', got {m!r}")
    return list(prompts)


def is_chat(prompt: Prompt) -> bool:
    return not isinstance(prompt, str)


def derive_seed(seed: int, *parts: int) -> int:
    """A stable 63-bit seed for (seed, prompt index, sample index...): the same on every run and machine,
    so a prompt's samples do not depend on which batch it was in."""
    digest = hashlib.blake2b(":".join(str(p) for p in (seed, *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & (2**63 - 1)


def prompt_text(tokenizer: Any, prompt: Prompt, enable_thinking: bool | None) -> str:
    """Text of a prompt: raw text as is; chat messages through the tokenizer's chat template."""
    if isinstance(prompt, str):
        return prompt
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("chat prompts need a tokenizer with a chat template; pass raw text instead")
    kwargs: dict[str, Any] = {}
    if enable_thinking is not None:
        kwargs["enable_thinking"] = enable_thinking
    return tokenizer.apply_chat_template([dict(m) for m in prompt], tokenize=False, add_generation_prompt=True, **kwargs)


def encode_prompt(tokenizer: Any, prompt: Prompt, enable_thinking: bool | None) -> list[int]:
    """Token ids of a prompt.  Chat text already holds the template's special tokens, so only raw text
    gets the tokenizer's own (BOS); this matches what vLLM does for chat and completion requests."""
    text = prompt_text(tokenizer, prompt, enable_thinking)
    return list(tokenizer(text, add_special_tokens=not is_chat(prompt))["input_ids"])


# generation backends by name, as "module:Class" imported only when asked for (heavy deps stay
# optional); a new one is a Generator subclass plus one BACKENDS.register call (or an entry point
# in the se_gym.generators group)
BACKENDS = Registry("generation backend", group="se_gym.generators", base=Generator)
BACKENDS.register("hf", "se_gym.llm.hf:HFGenerator")
BACKENDS.register("vllm", "se_gym.llm.vllm_backend:VLLMGenerator")
BACKENDS.register("openai", "se_gym.llm.openai_backend:OpenAIGenerator")


def make_generator(backend: str, model: str, **options: Any) -> Generator:
    """Build a generator.

    Args:
        backend: ``"hf"``, ``"vllm"``, ``"openai"``, another registered name or ``module:Class``.
        model: the model id or path (the served name for openai).
        options: the backend class's own options.

    Returns:
        The generator.
    """
    return BACKENDS.load(backend)(model, **options)
