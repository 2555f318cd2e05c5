"""Prompt baselines: answer with a language model, closed book (query only) or open book (query + doc).

The model is anything :func:`as_sampler` accepts: a :class:`se_gym.training.policy.Policy`, a
``se_gym.llm`` Generator, or an object with ``sample(prompts, n, temperature, max_new_tokens)``.
"""
from __future__ import annotations

from typing import Any, Sequence

from se_gym.training.rl import GeneratorSampler, PolicySampler

from .base import Agent, Observation


def as_sampler(model: Any):
    """Wrap a Policy or a se_gym.llm Generator in the sampler interface the agents use."""
    if hasattr(model, "sample"):
        return model
    if hasattr(model, "encode") and hasattr(model, "token_logprobs"):
        return PolicySampler(model)
    if hasattr(model, "generate"):
        return GeneratorSampler(model)
    raise TypeError(f"cannot sample from {type(model).__name__}: expected a Policy, a Generator or a sampler")


class PromptAgent(Agent):
    """Answers each observation's prompt with the model (greedy unless ``temperature > 0``)."""

    def __init__(self, model: Any, book: str = "closed", temperature: float = 0.0, max_new_tokens: int = 512):
        self.sampler = as_sampler(model)
        self.book = book
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens

    def prompts(self, observations: Sequence[Observation]) -> list[str]:
        return [o.prompt for o in observations]

    def act(self, observations: Sequence[Observation]) -> list[str]:
        groups = self.sampler.sample(self.prompts(observations), 1, self.temperature, self.max_new_tokens)
        return [g[0] for g in groups]


class ClosedBookAgent(PromptAgent):
    def __init__(self, model: Any, **kwargs):
        super().__init__(model, book="closed", **kwargs)


class OpenBookAgent(PromptAgent):
    def __init__(self, model: Any, **kwargs):
        super().__init__(model, book="open", **kwargs)
