"""Agents that answer SE-Bench questions and may learn between episodes, and the Runner.

Importing this package needs no torch; the parametric learners import it when built.
"""
from .base import BOOKS, TRAIN_SPLITS, Agent, Observation, ProtocolError, Trajectory, check_learnable
from .expel import ExpeLAgent
from .learners import ClosedRLAgent, ClosedSFTAgent, ClosedSFTRLAgent, PolicyAgent, RLAgent, SFTAgent
from .memory import BM25, DocMemoryAgent, Memory, MemoryAgent, MemoryEntry
from .prompting import ClosedBookAgent, OpenBookAgent, PromptAgent, TokenSampler, as_sampler
from .registry import AGENTS
from .runner import EvalResult, JudgeScorer, Runner, default_renderer, token_records

__all__ = [
    "BOOKS", "TRAIN_SPLITS", "Agent", "Observation", "ProtocolError", "Trajectory", "check_learnable",
    "AGENTS", "ClosedRLAgent", "ClosedSFTAgent", "ClosedSFTRLAgent", "DocMemoryAgent", "ExpeLAgent",
    "PolicyAgent", "RLAgent", "SFTAgent", "BM25", "Memory", "MemoryAgent", "MemoryEntry",
    "ClosedBookAgent", "OpenBookAgent", "PromptAgent", "TokenSampler", "as_sampler",
    "EvalResult", "JudgeScorer", "Runner", "default_renderer", "token_records",
]
