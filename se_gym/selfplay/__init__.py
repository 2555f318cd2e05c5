"""Self-play: the model proposes its own SE-Bench tasks, validates them through the judge, solves
them, and internalizes the library (Closed-SFT-Self-Play, or Absolute-Zero-style RL).

Layers: :mod:`.proposal` (reading a proposal), :mod:`.validate` (every validity rule, through
``se_gym.judge``), :mod:`.dedup`, :mod:`.oracle` (label noise against NumPy), :mod:`.rewards`
(proposer rewards, task-relative advantage), :mod:`.buffer` (task buffer, SE-Bench export) and
:mod:`.loop` (the round loop, resumable).  Ray lives only in ``se_gym.distributed``.
"""
from .buffer import TaskBuffer
from .dedup import DedupIndex, normalize_question
from .proposal import MIN_INPUTS, Proposal, ProposalError, parse_proposal, render_proposal
from .rewards import ProposerReward, four_p, gap, histogram, learnability, signal_share, task_relative_advantages
from .validate import REASONS, Outcome, ValidationConfig, Validator, rejection_counts

__all__ = [
    "TaskBuffer", "DedupIndex", "normalize_question", "MIN_INPUTS", "Proposal", "ProposalError", "parse_proposal",
    "render_proposal", "ProposerReward", "four_p", "gap", "histogram", "learnability", "signal_share",
    "task_relative_advantages", "REASONS", "Outcome", "ValidationConfig", "Validator", "rejection_counts",
]
