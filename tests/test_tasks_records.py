"""Task records and prompts."""
from __future__ import annotations

import copy as copy_module
import dataclasses
import pickle

import pytest

from se_gym.library import mint
from se_gym.tasks import Task, TaskError, TestCase, render_messages, render_prompt


def make_task(**kw) -> Task:
    base = dict(
        id="t/1", split="train", source="builtin:seed=0", query="Add things.\n\nInput: x\nOutput: y",
        function_name="def solve(x):", test_cases=[TestCase("x=[1, 2]", "3"), {"input": "x=[5]", "output": "5"}],
        example=TestCase("x=[1, 2]", "3"), functions=["sum"], reference_solution="import numpy as np\n",
        library_solution="import zwc\n", metadata={"style": "scalar", "tags": ["a"]}, version="v1",
    )
    base.update(kw)
    return Task(**base)


def test_task_is_frozen_and_normalises_fields():
    t = make_task()
    assert t.test_cases == (TestCase("x=[1, 2]", "3"), TestCase("x=[5]", "5"))
    assert t.functions == ("sum",) and t.entry_point == "solve"
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.query = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        t.metadata["style"] = "other"  # type: ignore[index]
    assert t.metadata["tags"] == ("a",)


def test_task_pickles_and_stays_immutable():
    t = make_task(metadata={"style": "scalar", "tags": ["a", {"deep": [1]}]})
    for copy in (pickle.loads(pickle.dumps(t)), copy_module.deepcopy(t)):
        assert copy == t and copy.hash == t.hash and copy.metadata["tags"] == ("a", {"deep": (1,)})
        with pytest.raises(TypeError):
            copy.metadata["style"] = "other"  # type: ignore[index]
        with pytest.raises(TypeError):
            copy.metadata["tags"][1]["deep"] = ()  # type: ignore[index]
        with pytest.raises(dataclasses.FrozenInstanceError):
            copy.query = "x"  # type: ignore[misc]


def test_hash_depends_on_content_only():
    a, b = make_task(), make_task()
    assert a.hash == b.hash and len(a.hash) == 16
    assert make_task(query="Other").hash != a.hash
    assert Task.from_json(a.to_json()) == a


def test_official_row_round_trip():
    t = make_task()
    row = t.to_official_row()
    assert row["right_exe_result"] == "3#5"
    assert row["example_output"] == [t.reference_solution]
    assert row["selected_functions"] == ["sum"]
    back = Task.from_official_row(row, split="train")
    assert back == t


def test_bad_test_case_is_a_clear_error():
    with pytest.raises(TaskError, match="input"):
        make_task(test_cases=[{"input": 1}])


def test_prompt_structure_closed_and_open():
    lib = mint(0)
    t = make_task(functions=("abs", "linalg.norm"))
    closed = render_prompt(t, lib)
    for part in ("Add things.", "### Test Cases", "x=[1, 2]", "### Function to Complete", "def solve(x):", "`zwc`", "```python"):
        assert part in closed
    assert "Codebase Functions" not in closed
    opened = render_prompt(t, lib, book="open")
    assert "### zwc Codebase Functions" in opened
    assert lib.qualified("abs") in opened and lib.qualified("linalg.norm") in opened
    assert opened.index("### Function to Complete") < opened.index("Codebase Functions")
    msgs = render_messages(t, lib, book="open")
    assert [m["role"] for m in msgs] == ["system", "user"] and msgs[1]["content"] == opened


def test_custom_template_and_errors():
    lib = mint(0)
    t = make_task()
    assert render_prompt(t, lib, template="{function_name}|{package}") == "def solve(x):|zwc\n"
    with pytest.raises(TaskError, match="unknown field"):
        render_prompt(t, lib, template="{nope}")
    with pytest.raises(TaskError, match="book"):
        render_prompt(t, lib, book="half")
