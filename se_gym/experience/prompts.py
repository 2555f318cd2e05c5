"""Every prompt of the LLM extractors, in one place.

Fields are ``str.format`` fields; the extractors fill them and parse the answers (see
:mod:`se_gym.experience.extract`).  The shapes follow ExpInternalization's released extraction loop
(summarise a trajectory, then consolidate lessons into a short list of short entries), adapted to
SE-Bench: the verdict's error type and the execution feedback are part of every trajectory.
"""
from __future__ import annotations

# one finished episode -> one instance-level experience (what it did, how it ended)
INSTANCE = """You are reviewing one attempt of a coding agent that had to use an unfamiliar Python library `{package}`.

Task: {query}
{turns}
Write ONE short paragraph (at most {max_words} words) of experience for solving THIS task next time:
which library functions the attempt used, what happened (the verdict and the error), and what the
correct approach is. Start with the function(s) to call. Output only the paragraph."""

# how one turn of an episode is shown to the extractors
TURN = """--- attempt {n} ({status}{error_type}) ---
{code}
{feedback}"""

# many episodes (+ the current principles) -> an updated list of abstract principles
PRINCIPLE = """You maintain a short list of general lessons about an unfamiliar Python library `{package}` for a coding agent.
Lessons must be abstract and reusable across tasks: how the library's array type `{array_type}` behaves,
which function does what, and which mistakes recur (with how to avoid them). No task-specific details.

Current lessons:
{current}

New attempts (query, code, verdict, error):
{episodes}

Reference documentation of the functions involved:
{docs}

Write the updated list: at most {max_entries} lessons, each at most {max_words} words, one per line,
each line of the form `- [topic] lesson`, where topic is a function name or a short mistake label.
Merge duplicates; keep lessons that are still true. Output only the list."""
