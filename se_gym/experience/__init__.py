"""Experience internalization (ExpInternalization on SE-Bench): episodes -> experience (instance,
principle, oracle) -> injection (global, step-wise) -> internalization (off-/on-policy context
distillation on :mod:`se_gym.training.distill`) -> K rounds, and the grid of all choices.

Imports nothing heavy: torch loads inside the functions that train.
"""
from .extract import (
    DocSource,
    ExperienceBank,
    InstanceExtractor,
    LLMInstanceExtractor,
    LLMPrincipleExtractor,
    OracleExtractor,
    PrincipleExtractor,
    make_extractor,
    parse_lessons,
)
from .inject import Injector, Retriever, approx_tokens, state_text
from .records import Episode, Experience, ExperienceError, Provenance, Turn

__all__ = [
    "DocSource", "Episode", "Experience", "ExperienceBank", "ExperienceError", "Injector", "InstanceExtractor", "LLMInstanceExtractor",
    "LLMPrincipleExtractor", "OracleExtractor", "PrincipleExtractor", "Provenance", "Retriever", "Turn", "approx_tokens", "make_extractor",
    "parse_lessons", "state_text",
]
