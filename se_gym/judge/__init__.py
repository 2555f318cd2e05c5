"""The judge: turns a model's answer and test cases into a reward (SE-Bench compatible).

``Judge(library, profile="strict"|"sebench", ...)`` judges answers in sandbox batches;
``extract_code`` takes the last fenced python block of an answer.  Nothing heavy is imported
here: the sandbox starts on the first judgement.
"""
from .core import Judge
from .extract import extract_code
from .types import CaseResult, ErrorType, JudgeError, Status, TestCase, Verdict

__all__ = ["CaseResult", "ErrorType", "Judge", "JudgeError", "Status", "TestCase", "Verdict", "extract_code"]
