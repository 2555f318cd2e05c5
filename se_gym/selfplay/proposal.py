"""What a proposer writes, and how it is read: the record and the reader live in
:mod:`se_gym.agents.proposal` (proposer agents write tasks, a layer below self-play)."""
from ..agents.proposal import MIN_INPUTS, Proposal, ProposalError, check_input, input_names, parse_proposal, render_proposal

__all__ = ["MIN_INPUTS", "Proposal", "ProposalError", "check_input", "input_names", "parse_proposal", "render_proposal"]
