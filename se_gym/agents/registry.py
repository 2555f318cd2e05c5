"""The agent registry: built-in names, ``module:Class``, ``file.py:Class`` and the ``se_gym.agents``
entry-point group of installed packages, every one a subclass of :class:`~se_gym.agents.base.Agent`."""
from __future__ import annotations

from se_gym.registry import Registry

from .base import Agent

AGENTS = Registry("agent", group="se_gym.agents", base=Agent)
AGENTS.register("closed-book", "se_gym.agents.prompting:ClosedBookAgent")  # no memory: the floor
AGENTS.register("open-book", "se_gym.agents.prompting:OpenBookAgent")  # docs at test time: the ceiling, not closed book
AGENTS.register("expel", "se_gym.agents.expel:ExpeLAgent")
AGENTS.register("memory", "se_gym.agents.memory:MemoryAgent")  # retrieved past solutions (and docs, use_docs)
AGENTS.register("doc-memory", "se_gym.agents.memory:DocMemoryAgent")
AGENTS.register("cheatsheet", "se_gym.agents.curated:CheatsheetAgent")  # Dynamic-Cheatsheet-style curated sheet
AGENTS.register("playbook", "se_gym.agents.curated:PlaybookAgent")  # ACE-style evolving playbook
AGENTS.register("closed-sft", "se_gym.agents.learners:ClosedSFTAgent")  # parametric: needs torch
AGENTS.register("closed-rl", "se_gym.agents.learners:ClosedRLAgent")  # PPO without clipping
AGENTS.register("closed-sft-rl", "se_gym.agents.learners:ClosedSFTRLAgent")  # Closed-SFT, then PPO without clipping and advantage
AGENTS.register("experience", "se_gym.experience.agent:ExperienceAgent")  # ExpInternalization under the protocol (a room above: loaded by name)

__all__ = ["AGENTS"]
