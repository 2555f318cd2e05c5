"""Task suites: the official SE-Bench tasks and the built-in procedural suite.

Heavy pieces (NumPy for generation, ``datasets`` for the hub) load inside the functions
that need them.
"""
from .builtin import DEFAULT_SIZES, SPLITS, Suite, build_suite, builtin_tasks, load_suite
from .prompts import render_messages, render_prompt
from .record import Task, TaskError, TestCase
from .sebench import load_api_doc, load_sebench

__all__ = [
    "Task", "TaskError", "TestCase", "render_prompt", "render_messages", "load_sebench", "load_api_doc",
    "Suite", "build_suite", "builtin_tasks", "load_suite", "DEFAULT_SIZES", "SPLITS",
]
