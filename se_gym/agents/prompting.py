"""Prompt baselines: answer with a language model, closed book (query only) or open book (query + doc).

The model is anything :func:`as_sampler` accepts: a :class:`se_gym.training.policy.Policy`, a
``se_gym.llm`` Generator, or an object with ``sample(prompts, n, temperature, max_new_tokens)``.
"""
from __future__ import annotations

from typing import Any, Sequence

from se_gym.training.rl import GeneratorSampler, PolicySampler

from .base import Agent, Observation, sample_answers


class TokenSampler(GeneratorSampler):
    """A :class:`~se_gym.training.rl.GeneratorSampler` that also gives each sample's token fields
    (``sample_records``, for token-exact trajectories).  Its policy version counts the weight
    syncs since it was built (a learner syncs after every update).

    Args:
        generator: the ``se_gym.llm`` Generator that samples.
        model: the policy whose weights it is synced to (None: none yet).
    """

    def __init__(self, generator, model=None):
        self.version = 0
        super().__init__(generator, model)
        self.version = 0  # the weights it starts with

    def sync(self, model) -> None:
        """Give the generator ``model``'s weights, and count one more policy version.

        Args:
            model: the updated policy.
        """
        super().sync(model)
        self.version += 1

    def sample_records(self, prompts, n, temperature, max_new_tokens) -> list[list[dict]]:
        """``n`` samples per prompt, each a dict: ``text``, ``finish_reason`` and the token fields.

        Args:
            prompts: the prompts.
            n: samples per prompt.
            temperature: sampling temperature.
            max_new_tokens: the longest sample.
        """
        from se_gym.llm import SamplingParams
        from se_gym.trajectories import token_fields

        params = SamplingParams(n=n, temperature=temperature, max_tokens=max_new_tokens)
        return [[{"text": c.text, "finish_reason": c.finish_reason, **token_fields(c, self.version)} for c in g.completions]
                for g in self.generator.generate(list(prompts), params)]


def as_sampler(model: Any):
    """Wrap a Policy or a se_gym.llm Generator in the sampler interface the agents use (a Generator
    gets a :class:`TokenSampler`, which can record token ids); an object with ``sample`` is used as is.

    Args:
        model: a :class:`se_gym.training.policy.Policy`, a Generator, or a sampler.

    Raises:
        TypeError: none of those.
    """
    if hasattr(model, "sample"):
        return model
    if hasattr(model, "encode") and hasattr(model, "token_logprobs"):
        return PolicySampler(model)
    if hasattr(model, "generate"):
        return TokenSampler(model)
    raise TypeError(f"cannot sample from {type(model).__name__}: expected a Policy, a Generator or a sampler")


class PromptAgent(Agent):
    """Answers each observation's prompt with the model (greedy unless ``temperature > 0``).

    Args:
        model: what answers (see :func:`as_sampler`).
        book: the book it is built for.
        temperature: sampling temperature (0: greedy).
        max_new_tokens: the longest answer.
    """

    def __init__(self, model: Any, book: str = "closed", temperature: float = 0.0, max_new_tokens: int = 512):
        self.sampler = as_sampler(model)
        self.book = book
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens

    def prompts(self, observations: Sequence[Observation]) -> list[str]:
        """The prompts sent (subclasses add context to them).

        Args:
            observations: the questions, as the runner rendered them for the agent's book.
        """
        return [o.prompt for o in observations]

    def act(self, observations: Sequence[Observation]) -> list[str]:
        """One sampled answer per observation's prompt.

        Args:
            observations: the questions, as the runner rendered them for the agent's book.
        """
        return sample_answers(self.sampler, self.prompts(observations), self.temperature, self.max_new_tokens)

    def act_records(self, observations: Sequence[Observation]) -> list[dict]:
        """Like :meth:`act`, with each answer's prompt and token fields.

        Args:
            observations: the questions, as the runner rendered them for the agent's book.
        """
        return sample_answers(self.sampler, self.prompts(observations), self.temperature, self.max_new_tokens, records=True)


class ClosedBookAgent(PromptAgent):
    """The floor: answers the question alone, never with docs.

    Args:
        model: what answers (see :func:`as_sampler`).
        kwargs: :class:`PromptAgent`'s other options.
    """
    def __init__(self, model: Any, **kwargs):
        super().__init__(model, book="closed", **kwargs)


class OpenBookAgent(PromptAgent):
    """The ceiling: answers with the docs of the question's functions, at test time too.

    Args:
        model: what answers (see :func:`as_sampler`).
        kwargs: :class:`PromptAgent`'s other options.
    """
    def __init__(self, model: Any, **kwargs):
        super().__init__(model, book="open", **kwargs)
