"""Prompts in the official structure: problem, test case, signature, rules (and docs, open book).

The wording is se-gym's own; the layout follows SE-Bench's (see FORMATS.md).  A custom
``template`` is a ``str.format`` string with the named fields listed in :data:`FIELDS`.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..choices import BOOKS  # one place for the book names
from .record import Task, TaskError

FIELDS = ("query", "example_input", "example_output", "function_name", "package", "docs", "requirements")

_REQUIREMENTS = """### Rules
1. Solve the problem with the `{package}` library only; NumPy is not available and must not be imported.
2. Keep the function signature exactly as given above.
3. Reply with the complete solution in a single fenced ```python code block.
4. Return results with the same data structure as the expected output in the test case."""

DEFAULT_TEMPLATE = """{query}

### Test Cases
Input: {example_input}
Expected output: {example_output}

### Function to Complete
```python
{function_name}
```
{docs}
{requirements}"""

SYSTEM = "You are an expert Python programmer. You write correct, concise code."


def _docs_section(task: Task, library: Any) -> str:
    parts = []
    for key in task.functions:
        try:
            parts.append(f"#### {library.qualified(key)}\n{library.doc(key).strip()}")
        except KeyError:
            continue  # a function the library does not have: nothing to show
    if not parts:
        return ""
    return f"\n### {library.package} Codebase Functions\n" + "\n\n".join(parts) + "\n"


def render_prompt(task: Task, library: Any, book: str = "closed", template: str | None = None) -> str:
    """The user prompt for ``task``; ``book="open"`` adds the docs of the task's functions.

    Args:
        task: the task.
        library: its library (for the docs of an open book).
        book: ``closed`` or ``open``.
        template: the prompt template (None: the official one).
    """
    if book not in BOOKS:
        raise TaskError(f"book must be one of {BOOKS}, got {book!r}")
    fields = {
        "query": task.query.strip(),
        "example_input": task.example.input,
        "example_output": task.example.output,
        "function_name": task.function_name,
        "package": library.package,
        "docs": _docs_section(task, library) if book == "open" else "",
        "requirements": _REQUIREMENTS.format(package=library.package),
    }
    try:
        return (template or DEFAULT_TEMPLATE).format(**fields).strip() + "\n"
    except (KeyError, IndexError) as exc:
        raise TaskError(f"prompt template uses an unknown field {exc}; known fields: {', '.join(FIELDS)}") from None
    except ValueError as exc:
        raise TaskError(f"prompt template is not a valid format string: {exc}") from None


def render_messages(
    task: Task, library: Any, book: str = "closed", template: str | None = None, system: str | None = SYSTEM
) -> list[dict[str, str]]:
    """Chat messages: an optional system message, then the prompt as the user turn.

    Args:
        task: the task.
        library: its library (for the docs of an open book).
        book: ``closed`` or ``open``.
        template: the prompt template (None: the official one).
        system: the system message (None: none).
    """
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": render_prompt(task, library, book, template)})
    return messages


MEMORY_HEADER = "### Experience from training"


def memory_context(experiences: Sequence[tuple[str, str]] = (), docs: Sequence[str] = ()) -> str:
    """Retrieved memory as a memory agent shows it: each past problem with its accepted answer, then
    each remembered doc.  One function for the agents (:class:`se_gym.agents.MemoryAgent`) and the
    miniature's pre-training (:func:`se_gym.training.miniature.memory_corpus`), so the tiny base
    learns to read exactly what the agents write.

    Args:
        experiences: (past problem, accepted answer) pairs, best first.
        docs: remembered doc texts, best first.

    Returns:
        The entries separated by blank lines ("" when there are none).
    """
    parts = [f"Past problem: {problem}\nAccepted answer:\n{answer}" for problem, answer in experiences]
    parts += [f"Remembered doc:\n{doc}" for doc in docs]
    return "\n\n".join(parts)


def with_memory(context: str, prompt: str) -> str:
    """``prompt`` with the retrieved memory ``context`` (from :func:`memory_context`) above it, under
    :data:`MEMORY_HEADER`; the prompt alone when the context is empty."""
    return f"{MEMORY_HEADER}\n{context}\n\n{prompt}" if context else prompt
