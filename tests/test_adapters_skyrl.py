"""SEBench-v0 through skyrl-gym's own registry, ``make`` and init/step loop."""
from __future__ import annotations

import threading

import pytest
from conftest import need_module

from se_gym.tasks import builtin_tasks


@pytest.fixture(scope="module")
def skyrl():
    sg = need_module("skyrl_gym", "the 'skyrl' extra (skyrl-gym) is the package under test")
    import se_gym.integrations.skyrl  # noqa: F401 - registers the env
    from se_gym.integrations._common import Suite

    yield sg
    Suite.close_all()


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
