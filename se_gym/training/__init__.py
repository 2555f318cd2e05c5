"""Trainers (SFT, GRPO/PPO), losses, checkpoints and the offline demo.

Importing this package needs no torch: the trainers import it when they are built.
"""
