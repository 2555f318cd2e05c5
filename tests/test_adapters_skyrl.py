"""SEBench-v0 through skyrl-gym's own registry, ``make`` and init/step loop."""
from __future__ import annotations

import json
import threading

import pytest

from conftest import need_module
from se_gym.tasks import builtin_tasks


@pytest.fixture(scope="module")
def skyrl():
    sg = need_module("skyrl_gym", "the 'skyrl' extra (skyrl-gym) is the package under test")
    import se_gym.integrations.skyrl as adapter  # registers the env

    yield sg
    adapter.close_all()


@pytest.fixture(scope="module")
def tasks():
    return builtin_tasks("single_test", seed=0)


def _ok(task):
    return f"```python\n{task.library_solution}\n```"


def _row(task, **extra):
    """A dataset row as SkyRL hands it to the env (extras), in the verl exporter's layout."""
    return {"data_source": "se_gym/sebench", "env_class": "se_gym", "extra_info": {"task_id": task.id, "split": task.split}, **extra}


def test_registered_and_single_turn(skyrl, tasks):
    assert "se_gym" in skyrl.registry
    t = tasks[0]
    env = skyrl.make("se_gym", env_config={"book": "open"}, extras=_row(t))
    prompt, meta = env.init(None)  # no dataset prompt: the env renders its own
    assert meta["task_id"] == t.id and prompt[-1]["role"] == "user" and t.query in prompt[-1]["content"]
    assert "Codebase Functions" in prompt[-1]["content"]  # open book shows the docs
    out = env.step(_ok(t))
    assert out["reward"] == 1.0 and out["done"] is True and out["observations"] == []
    assert out["metadata"]["status"] == "passed"
    with pytest.raises(RuntimeError, match="over"):
        env.step(_ok(t))
    assert env.get_metrics()["passed"] == 1.0
    env.close()


def test_multi_turn_feedback_then_pass(skyrl, tasks):
    t = tasks[1]
    env = skyrl.make("se_gym", env_config={"max_turns": 3}, extras=_row(t))
    dataset_prompt = [{"role": "user", "content": "given by the dataset"}]
    assert env.init(dataset_prompt)[0] == dataset_prompt
    out = env.step("```python\ndef solve(x):\n    return 1/0\n```")
    assert out["done"] is False and out["reward"] == 0.0
    fb = out["observations"][0]
    assert fb["role"] == "user" and "attempt 1 of 3" in fb["content"]
    out = env.step(_ok(t))
    assert out["done"] is True and out["reward"] == 1.0 and out["metadata"]["turn"] == 2


def test_max_turns_from_extras_and_truncation(skyrl, tasks):
    t = tasks[2]
    env = skyrl.make("se_gym", env_config={}, extras=_row(t, max_turns=2))
    assert env.max_turns == 2
    assert env.step("no code")["done"] is False
    last = env.step("still no code")
    assert last["done"] is True and last["reward"] == 0.0 and last["observations"] == []


def test_bad_config_and_rows(skyrl, tasks):
    with pytest.raises(ValueError, match="task_id"):
        skyrl.make("se_gym", env_config={}, extras={"extra_info": {}})
    with pytest.raises(ValueError, match="unknown SEBench-v0 option"):
        skyrl.make("se_gym", env_config={"bogus": 1}, extras=_row(tasks[0]))
    env = skyrl.make("se_gym", env_config={}, extras=_row(tasks[0]))
    with pytest.raises(TypeError, match="answer text"):
        env.step(123)


def test_concurrent_envs_share_sandbox_batches(skyrl, tasks):
    """SkyRL steps many envs at once from threads: their answers are judged together."""
    from se_gym.integrations._common import Suite

    envs = [skyrl.make("se_gym", env_config={}, extras=_row(t)) for t in tasks[:12]]
    suite = envs[0].suite
    before = len(suite.batcher.batches)
    barrier = threading.Barrier(len(envs))
    results = [None] * len(envs)

    def run(i):
        barrier.wait()
        results[i] = envs[i].step(_ok(tasks[i]) if i % 2 == 0 else "no")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(envs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert [r["reward"] for r in results] == [1.0 if i % 2 == 0 else 0.0 for i in range(len(envs))]
    new = suite.batcher.batches[before:]
    assert sum(new) == len(envs) and len(new) < len(envs)  # fewer sandbox batches than steps
    assert all(e.suite is suite for e in envs) and Suite.get({}) is suite


# -- self-contained rows (the SkyRL exporter) ---------------------------------------------------
def _as_skyrl_reads(path):
    """The rows as SkyRL hands them to envs: read with `datasets` (as SkyRL's PromptDataset does),
    ``prompt`` and ``env_class`` taken out, the rest is the env's ``extras``."""
    datasets = need_module("datasets", "SkyRL reads its dataset files with datasets")
    kind = "parquet" if str(path).endswith(".parquet") else "json"
    out = []
    for row in datasets.load_dataset(kind, data_files=str(path), keep_in_memory=True)["train"]:
        row = dict(row)
        out.append((row.pop("prompt"), row.pop("env_class"), row))
    return out


@pytest.fixture
def no_suite(monkeypatch):
    """Building a task suite (or looking a task up in one) fails the test."""
    from se_gym.integrations._common import Suite

    def refuse(*a, **k):
        raise AssertionError("a self-contained row must not need a task suite")

    monkeypatch.setattr(Suite, "get", refuse)
    monkeypatch.setattr("se_gym.tasks.spec.load_task_spec", refuse)


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_exported_rows_need_no_suite(skyrl, tmp_path, no_suite, suffix):
    """Tasks no suite holds (new ids, from the train split) judged from the exported rows alone,
    through skyrl_gym.make; the row's library wins over env_config's seed.  Before the exporter the
    env looked the task_id up in a suite it rebuilt (and found nothing)."""
    import dataclasses

    from se_gym.integrations import export
    from se_gym.library import mint
    from se_gym.tasks import render_messages

    lib = mint(0)
    tasks = [dataclasses.replace(t, id=f"custom-{i}") for i, t in enumerate(builtin_tasks("train", seed=0)[:2])]
    path = tmp_path / f"skyrl{suffix}"
    trajs = [{"task": t, "prompt": render_messages(t, lib, book="closed")} for t in tasks]
    assert export.to_skyrl_dataset(trajs, path, library=lib) == 2
    rows = _as_skyrl_reads(path)
    assert [env_class for _, env_class, _ in rows] == ["se_gym", "se_gym"]
    assert json.loads(rows[0][2]["reward_spec"]["ground_truth"])["function_name"] == tasks[0].function_name

    envs = [skyrl.make(env_class, env_config={"seed": 1}, extras=extras) for _, env_class, extras in rows]
    assert [e.task_id for e in envs] == ["custom-0", "custom-1"]
    prompt, meta = envs[0].init(rows[0][0])
    assert prompt == rows[0][0] and meta["task_id"] == "custom-0"
    assert envs[1].init(None)[0][-1]["content"] == rows[1][0][-1]["content"]  # the env renders the same prompt
    out = [envs[0].step(_ok(tasks[0])), envs[1].step("no code")]
    assert [o["reward"] for o in out] == [1.0, 0.0] and all(o["done"] for o in out)
    assert out[0]["metadata"]["status"] == "passed"
    # one judge (and sandbox batcher) for every row of the same judge configuration
    assert envs[0].env.judge.batcher is envs[1].env.judge.batcher


def test_exported_row_multi_turn_and_config_library(skyrl, tmp_path, no_suite):
    from se_gym.integrations import export
    from se_gym.library import mint
    from se_gym.tasks import render_messages

    t = builtin_tasks("train", seed=0)[3]
    rows = export.skyrl_rows([{"task": t, "prompt": render_messages(t, mint(0))}], library="seed:0", max_turns=2)
    extras = {k: v for k, v in rows[0].items() if k not in ("prompt", "env_class")}
    env = skyrl.make("se_gym", env_config={}, extras=extras)
    assert env.max_turns == 2
    first = env.step("```python\ndef solve(x):\n    return 1/0\n```")
    assert first["done"] is False and "attempt 1 of 2" in first["observations"][0]["content"]
    assert env.step(_ok(t))["reward"] == 1.0
    # env_config's library wins over the row's: the same right answer is wrong against its names
    other = skyrl.make("se_gym", env_config={"library": "seed:1"}, extras=extras)
    assert other.step(_ok(t))["reward"] == 0.0
    with pytest.raises(ValueError, match="task's JSON"):
        skyrl.make("se_gym", env_config={}, extras={"extra_info": {"task": "{not json"}})


def test_a_named_but_unused_answer_gets_nothing_from_either_row_form(skyrl, tmp_path):
    """Issue 42: the env judges with the task's reference (strict's library dependence check), from
    an exported row (the task's JSON carries it) and from a row naming a task of the suite: the
    reference gets 1.0, an answer that names the library (on a constant) and computes in Python 0
    (judged without the reference it would get 1.0)."""
    from _dependence_corpus import adapter_answers
    from se_gym.integrations import export
    from se_gym.library import mint
    from se_gym.tasks import render_messages

    lib = mint(0)
    tasks = builtin_tasks("train", seed=0)[:2]
    path = tmp_path / "skyrl.jsonl"
    export.to_skyrl_dataset([{"task": t, "prompt": render_messages(t, lib)} for t in tasks], path, library=lib)
    rows = _as_skyrl_reads(path)
    got = []
    for t, (_, env_class, extras) in zip(tasks, rows):
        for kind in ("reference", "unused"):
            out = skyrl.make(env_class, env_config={}, extras=extras).step(adapter_answers(t, lib)[kind])
            got.append((out["reward"], out["metadata"]["status"]))
    t = builtin_tasks("train", seed=0)[2]  # by name, in the suite env_config describes
    for kind in ("reference", "unused"):
        out = skyrl.make("se_gym", env_config={"split": "train"}, extras=_row(t)).step(adapter_answers(t, lib)[kind])
        got.append((out["reward"], out["metadata"]["status"]))
    assert got == [(1.0, "passed"), (0.0, "library_unused")] * 3
