"""The judge: turns a model's answer and test cases into a reward (SE-Bench compatible)."""
from .types import CaseResult, ErrorType, JudgeError, Status, TestCase, Verdict

__all__ = ["CaseResult", "ErrorType", "JudgeError", "Status", "TestCase", "Verdict"]
