"""The official loader, on fixtures in the official layout and on the shared dev file."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import need_module, shared_path
from se_gym.library import mint, official
from se_gym.tasks import TaskError, load_api_doc, load_sebench, sebench


def row(i: int, **kw) -> dict:
    r = {
        "query": f"Problem {i}.\n\nInput: x\nOutput: y", "function_name": "def solve(x):",
        "test_cases": [{"input": "x=[1, -2]", "output": "[1, 2]"}, {"input": "x=[3]", "output": "[3]"}],
        "example": {"input": "x=[1, -2]", "output": "[1, 2]"}, "right_exe_result": "[1, 2]#[3]",
        "example_output": ["import numpy as np\n\ndef solve(x):\n    return np.abs(x).tolist()\n"],
        "selected_functions": ["abs", "norm"], "is_valid": True, "task_index": i,
    }
    r.update(kw)
    return r


def write(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_official_layout_all_splits(tmp_path):
    write(tmp_path / "datasets/train/train.jsonl", [row(0), row(1)])
    write(tmp_path / "datasets/test/single_test.jsonl", [row(2)])
    write(tmp_path / "datasets/test/multiple_test.jsonl", [row(3, selected_functions=["abs", "sum", "max"])])
    train = load_sebench("train", tmp_path)
    assert [t.id for t in train] == ["sebench/train/0", "sebench/train/1"]
    t = train[0]
    assert t.functions == ("abs", "linalg.norm") and t.source == "sebench" and t.split == "train"
    assert t.test_cases[1].output == "[3]" and t.example.input == "x=[1, -2]"
    assert len(load_sebench("single_test", tmp_path)) == 1
    assert load_sebench("multiple_test", tmp_path)[0].difficulty == "medium"


def test_flat_folder_single_file_and_library_translation(tmp_path):
    write(tmp_path / "single_test.jsonl", [row(0)])
    lib = mint(3)
    tasks = load_sebench("single_test", tmp_path, library=lib)
    assert lib.qualified("abs") in tasks[0].library_solution and "np." not in tasks[0].library_solution
    assert load_sebench("single_test", tmp_path / "single_test.jsonl")[0].query.startswith("Problem 0")


def test_expected_outputs_are_right_exe_result_and_the_reference_runs(tmp_path):
    """SE-Bench's judge compares with right_exe_result, and on 85 of the 130 dev rows the cases'
    outputs differ from it (other float digits, sometimes another value): the task's cases carry
    right_exe_result.  The NumPy reference's ``.tolist()`` (refused by the library's array) and
    ``np.pi`` (a constant, not a function) are translated too, so the library solution passes both
    profiles; before, `se-gym validate` found the reference failing on 124 of those 130 rows."""
    from se_gym.judge import Judge

    ref = "import numpy as np\n\ndef solve(x):\n    return (np.abs(np.array(x)) * np.pi / np.pi).tolist()\n"
    r = row(0, right_exe_result="[1.0, 2.0]#[3.0]", example_output=[ref])
    r["test_cases"][0]["output"] = "[1.0, 2.000001]"  # what the official cases often hold
    lib = mint(3)
    [task] = load_sebench("single_test", write(tmp_path / "single_test.jsonl", [r]), library=lib)
    assert [c.output for c in task.test_cases] == ["[1.0, 2.0]", "[3.0]"]
    assert ".tolist" not in task.library_solution and "np." not in task.library_solution
    for profile in ("sebench", "strict"):
        with Judge(lib, profile) as judge:
            v = judge.judge(f"```python\n{task.library_solution}\n```", task.test_cases, task.function_name)
        assert v.passed, (profile, v.detail)


def test_invalid_rows_are_counted_not_lost(tmp_path, caplog):
    caplog.set_level("INFO", logger="se_gym")
    f = write(tmp_path / "train.jsonl", [row(0), row(1, is_valid=False), row(2)])
    tasks = load_sebench("train", f)
    assert len(tasks) == 2
    rep = sebench.last_report()
    assert rep.kept == 2 and rep.skipped == 1 and "train.jsonl:2" in rep.reasons[0]
    assert "skipped 1" in caplog.text  # logged (the se-gym command prints it on stderr)
    assert len(load_sebench("train", f, include_invalid=True)) == 3


@pytest.mark.parametrize(
    "bad, message",
    [
        ("{not json", r"train.jsonl:2: not valid JSON"),
        (json.dumps({k: v for k, v in row(1).items() if k != "query"}), r"train.jsonl:2: missing field 'query'"),
        (json.dumps(row(1, test_cases=[{"input": "x=1"}])), r"train.jsonl:2: field 'test_cases\[0\]' needs a string 'output'"),
        (json.dumps(row(1, function_name="solve")), r"train.jsonl:2: field 'function_name'"),
        (json.dumps([1, 2]), r"train.jsonl:2: expected a JSON object"),
    ],
)
def test_malformed_rows_name_file_line_and_field(tmp_path, bad, message):
    f = write(tmp_path / "train.jsonl", [row(0), bad])
    with pytest.raises(TaskError, match=message):
        load_sebench("train", f)


def test_missing_files_and_bad_split(tmp_path):
    with pytest.raises(TaskError, match="holds no multiple_test file"):
        load_sebench("multiple_test", tmp_path)
    with pytest.raises(TaskError, match="no such file"):
        load_sebench("train", tmp_path / "absent")
    with pytest.raises(TaskError, match="split must be"):
        load_sebench("dev", tmp_path)


def test_api_doc_rows(tmp_path):
    write(tmp_path / "datasets/train/api_doc.jsonl", [
        {"original_name": "abs", "curr_name": "falekef", "rewritten_doc": "doc", "func_mapping": json.dumps({"np.abs": "zwc.falekef"})}])
    rows = load_api_doc(tmp_path)
    assert rows[0]["func_mapping"] == {"np.abs": "zwc.falekef"}
    write(tmp_path / "bad.jsonl", [{"original_name": "abs", "curr_name": "x"}])
    with pytest.raises(TaskError, match="bad.jsonl:1: missing field 'func_mapping'"):
        load_api_doc(tmp_path / "bad.jsonl")


def test_hub_code_path_on_local_files(tmp_path):
    need_module("datasets", "the 'hf' extra (datasets) is not installed")
    f = write(tmp_path / "single_test.jsonl", [row(0), row(1)])
    tasks = sebench._load_hub("single_test", None, False, data_files=str(f))
    assert [t.query for t in tasks] == [t.query for t in load_sebench("single_test", f)]


def test_shared_dev_file():
    dev = shared_path("sebench", "single_test_dev.jsonl")
    SHARED = dev.parent
    lib = official(SHARED / "api_doc.jsonl")
    tasks = load_sebench("single_test", dev, library=lib)
    assert len(tasks) == 130 and sebench.last_report().skipped == 0
    assert all(len(t.test_cases) >= 8 and t.functions for t in tasks)
    assert len({t.id for t in tasks}) == 130
    # two references call np.matrix_transpose, which the official library only has in its linalg module
    assert sum("zwc." in t.library_solution for t in tasks) >= 125
