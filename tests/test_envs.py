"""SEBench-v0: Gymnasium contract, seeding, episode protocol, vector env and async stepping."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import se_gym  # noqa: F401  (registers SEBench-v0)
from conftest import need_module, shared_path
from se_gym.envs import EnvConfigError, SEBenchEnv, UnicodeText
from se_gym.envs.vector import SEBenchVectorEnv


def answer(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}\n```"


@pytest.fixture(scope="module")
def default_env():
    env = gym.make("SEBench-v0")
    yield env
    env.close()


@pytest.fixture(scope="module")
def few_tasks(default_env):
    return default_env.unwrapped.tasks[:6]


def test_default_env_is_offline_builtin_closed_book_strict(default_env):
    env = default_env.unwrapped
    assert isinstance(env, SEBenchEnv)
    assert env.split == "single_test" and env.book == "closed" and env.profile == "strict"
    assert env.library.id == se_gym.mint(0).id
    assert len(env.tasks) >= 278 and all(t.split == "single_test" for t in env.tasks)
    obs, info = default_env.reset(seed=0)
    assert isinstance(obs, str) and env.task.query in obs and env.task.function_name in obs
    assert "Codebase Functions" not in obs  # closed book: no docs
    assert info["task_id"] == env.task.id and info["library_id"] == env.library.id


@pytest.mark.parametrize("book", ["closed", "open"])
@pytest.mark.parametrize("profile", ["strict", "sebench"])
def test_check_env_passes(book, profile, few_tasks):
    env = SEBenchEnv(tasks=few_tasks, book=book, profile=profile)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_open_book_prompt_holds_the_docs_of_the_task_functions(few_tasks):
    env = SEBenchEnv(tasks=few_tasks, book="open")
    obs, _ = env.reset(seed=1)
    lib = env.library
    for key in env.task.functions:
        assert lib.qualified(key).rsplit(".", 1)[-1] in obs
    env.close()


def test_oracle_scores_one_and_numpy_reference_zero(default_env):
    tasks = default_env.unwrapped.tasks
    venv = SEBenchVectorEnv(num_envs=16, tasks=tasks)
    try:
        venv.reset(seed=0)
        n = len(tasks)
        seen, rewards = set(), []
        while len(seen) < n:
            batch = [answer(env.task.library_solution) for env in venv.envs]
            ids = [env.task.id for env in venv.envs]
            _, r, term, trunc, _ = venv.step(batch)
            for tid, rew in zip(ids, r):
                if tid not in seen:
                    seen.add(tid)
                    rewards.append(rew)
            assert term.all() and not trunc.any()
        assert len(rewards) == n and all(r == 1.0 for r in rewards)
        # the same tasks answered with their NumPy reference are all rejected
        venv.reset(seed=0)
        bad = [answer(env.task.reference_solution) for env in venv.envs]
        _, r, _, _, infos = venv.step(bad)
        assert (r == 0.0).all()
    finally:
        venv.close()


def test_seeded_reset_determines_the_episode_and_epochs_have_no_repeats(few_tasks):
    env = SEBenchEnv(tasks=few_tasks)
    first = [env.reset(seed=42)[1]["task_id"]] + [env.reset()[1]["task_id"] for _ in range(len(few_tasks) - 1)]
    assert sorted(first) == sorted(t.id for t in few_tasks)  # one epoch = every task once
    again = [env.reset(seed=42)[1]["task_id"]] + [env.reset()[1]["task_id"] for _ in range(len(few_tasks) - 1)]
    assert first == again
    other = [env.reset(seed=7)[1]["task_id"]] + [env.reset()[1]["task_id"] for _ in range(len(few_tasks) - 1)]
    assert other != first
    env.close()


def test_determinism_across_processes():
    code = (
        "import gymnasium as gym, json\n"
        "env = gym.make('se_gym:SEBench-v0')\n"
        "obs, info = env.reset(seed=123)\n"
        "obs2, info2 = env.reset()\n"
        "print(json.dumps([info['task_id'], obs, info2['task_id']]))\n"
    )
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300) for _ in range(2)]
    for o in outs:
        assert o.returncode == 0, o.stderr[-2000:]
    a, b = (json.loads(o.stdout.strip().splitlines()[-1]) for o in outs)
    assert a == b and a[0] != a[2]


def test_reset_options_pick_tasks(few_tasks):
    env = SEBenchEnv(tasks=few_tasks)
    _, info = env.reset(options={"task_id": few_tasks[3].id})
    assert info["task_id"] == few_tasks[3].id
    _, info = env.reset(options={"index": 2})
    assert info["task_id"] == few_tasks[2].id
    with pytest.raises(EnvConfigError, match="no task with id"):
        env.reset(options={"task_id": "nope"})
    with pytest.raises(EnvConfigError, match="index must be"):
        env.reset(options={"index": 99})
    with pytest.raises(EnvConfigError, match="one of"):
        env.reset(options={"foo": 1})
    env.close()


def test_step_info_explains_the_verdict(few_tasks):
    env = SEBenchEnv(tasks=few_tasks)
    env.reset(options={"index": 0})
    _, r, term, trunc, info = env.step("I don't know.")
    assert r == 0.0 and term and not trunc
    v = info["verdict"]
    assert info["status"] == v.status.value and v.status.value in ("static_gate", "runtime_error")
    assert info["task_hash"] == few_tasks[0].hash and info["latency"].judge_s > 0
    with pytest.raises(gym.error.ResetNeeded):
        env.step("again")
    env.close()


def test_multi_turn_feedback_then_success(few_tasks):
    task = few_tasks[0]
    env = SEBenchEnv(tasks=few_tasks, max_turns=3, return_messages=True)
    obs0, _ = env.reset(options={"index": 0})
    wrong = answer(f"import {env.library.package}\n{task.function_name}\n    return {env.library.qualified('array')}([123456789])\n")
    obs1, r, term, trunc, info = env.step(wrong)
    assert r == 0.0 and not term and not trunc
    assert obs1.startswith(obs0) and "Feedback" in obs1 and "not accepted" in obs1
    assert [m["role"] for m in info["messages"]][-2:] == ["assistant", "user"]
    obs2, r, term, trunc, _ = env.step(answer(task.library_solution))
    assert r == 1.0 and term and not trunc
    env.reset(options={"index": 0})
    for turn in range(3):
        _, r, term, trunc, info = env.step(wrong)
    assert r == 0.0 and not term and trunc and info["turn"] == 3
    env.close()


# one visible example, then hidden cases whose expected outputs are nowhere else in the episode
_VISIBLE = ("x=[-1.125, 2.0]", "[1.125, 2.0]")
_HIDDEN = [("x=[-7.4375, 31.0625]", "[7.4375, 31.0625]"), ("x=[113.5, -9.8125]", "[113.5, 9.8125]"),
           ("x=[-0.3125, 66.75]", "[0.3125, 66.75]")]


def _replay(package: str, fn: str, table: dict) -> str:
    """An answer that counts its calls and returns, for call i, the value feedback taught it."""
    return answer(f"import {package}\n_calls = [0]\n_table = {table!r}\n{fn}\n"
                  f"    i = _calls[0]\n    _calls[0] += 1\n    zero = {package}.{{abs}}([0.0])\n"
                  f"    return _table.get(i, [0.0])")


@pytest.mark.parametrize("profile", ["sebench", "strict"])
def test_multi_turn_feedback_never_shows_hidden_outputs(profile):
    """An answer that replays what feedback shows cannot pass: the hidden cases' expected outputs
    (and what the answer returned on them) never reach the agent, while the visible example's do."""
    import ast
    import re

    from se_gym import mint
    from se_gym.tasks import Task

    lib = mint(0)
    task = Task(id="replay-0", split="single_test", source="test", query="Return the absolute values of x.",
                function_name="def solve(x):", test_cases=[_VISIBLE, *_HIDDEN], example=_VISIBLE, functions=("abs",),
                reference_solution="import numpy as np\ndef solve(x):\n    return np.abs(x).tolist()")
    env = SEBenchEnv(tasks=[task], library=lib, profile=profile, max_turns=4, return_messages=True)
    try:
        obs, _ = env.reset(options={"index": 0})
        table: dict = {}
        feedbacks = []
        for turn in range(4):
            code = _replay(lib.package, task.function_name, table).replace("{abs}", lib.names["abs"])
            obs, reward, terminated, truncated, info = env.step(code)
            assert reward == 0.0 and not terminated, (turn, info["verdict"].detail)
            if truncated:
                break
            fb = info["messages"][-1]["content"]
            feedbacks.append(fb)
            for n, value in re.findall(r"Test (\d+): expected (.*?), got", fb):
                table[int(n) - 1] = ast.literal_eval(value)
        assert truncated and len(feedbacks) == 3
        # the visible example was shown and learnt; the hidden cases are counted, never shown
        assert table == {0: [1.125, 2.0]} and "Hidden tests: 3 of 3 failed (3 wrong values, 0 errors)" in feedbacks[0]
        for text in (*feedbacks, obs):
            for inp, out in _HIDDEN:
                assert out not in text and out.strip("[]").split(", ")[0] not in text, (out, text)
                assert inp.split("=")[1] not in text
    finally:
        env.close()


def test_feedback_on_a_hidden_case_error_names_its_type_only(few_tasks):
    """An error raised on a hidden case is reported by its type: its message (the answer's own
    text, which could carry the hidden input) is not shown; on the visible example it is."""
    task = few_tasks[0]
    env = SEBenchEnv(tasks=few_tasks, max_turns=2, profile="sebench", return_messages=True)
    pkg = env.library.package
    try:
        for first, shown in ((False, "Error on a hidden test: ValueError (its message is not shown)"), (True, "Error on test 1: ValueError: secret")):
            env.reset(options={"index": 0})
            args = task.function_name[task.function_name.index("(") + 1:task.function_name.rindex(")")]
            cond = "not _seen" if first else "_seen"
            code = answer(f"import {pkg}\n_seen = []\n{task.function_name}\n    zero = {env.library.qualified('abs')}([0.0])\n"
                          f"    if {cond}:\n        _seen.append(1)\n        raise ValueError('secret' + repr(({args},)))\n"
                          f"    _seen.append(1)\n    return None\n")
            _, _, _, _, info = env.step(code)
            fb = info["messages"][-1]["content"]
            assert shown in fb and ("secret" in fb) == first, fb
    finally:
        env.close()


def test_fraction_reward(few_tasks):
    env = SEBenchEnv(tasks=few_tasks, reward="fraction")
    env.reset(options={"index": 0})
    _, r, *_ = env.step(answer(few_tasks[0].library_solution))
    assert r == 1.0
    env.close()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"book": "half"}, "book must be one of"),
        ({"profile": "lax"}, "profile must be one of"),
        ({"reward": "dense"}, "reward must be one of"),
        ({"max_turns": 0}, "max_turns"),
        ({"seed": -1}, "seed"),
        ({"tasks": "nowhere"}, r"builtin\[:SEED\]"),
        ({"tasks": "builtin:x"}, "integer seed"),
        ({"tasks": []}, "empty"),
        ({"library": "seed:abc"}, "library"),
        ({"tasks": "builtin", "split": "nosuchsplit"}, "split"),
    ],
)
def test_bad_options_are_clear_errors(kwargs, match):
    with pytest.raises((EnvConfigError, ValueError), match=match):
        SEBenchEnv(**kwargs)


def test_text_space():
    space = UnicodeText(50)
    space.seed(0)
    s = space.sample()
    assert space.contains(s) and space.contains("def f():\n    return {'é': 1}")
    assert not space.contains("x" * 51) and not space.contains(3)


def test_make_vec_judges_a_step_in_one_batch(few_tasks):
    venv = gym.make_vec("SEBench-v0", num_envs=4, tasks=few_tasks)
    assert isinstance(venv.unwrapped, SEBenchVectorEnv)
    obs, infos = venv.reset(seed=3)
    assert len(obs) == 4 and list(infos["task_id"]) == [e.task.id for e in venv.unwrapped.envs]
    judge = venv.unwrapped.judge
    calls = []
    original = judge.judge_many
    judge.judge_many = lambda items: calls.append(len(items)) or original(items)
    actions = [answer(e.task.library_solution) for e in venv.unwrapped.envs]
    actions[1] = "no code"
    finished = [e.task.id for e in venv.unwrapped.envs]
    obs, r, term, trunc, infos = venv.step(actions)
    judge.judge_many = original
    assert calls == [4]
    assert list(r) == [1.0, 0.0, 1.0, 1.0] and term.all()
    # SAME_STEP autoreset: the finished episodes' data is in final_info, obs are new episodes
    assert infos["_final_obs"].all() and list(infos["final_info"]["task_id"]) == finished
    venv.close()


def test_async_step_apis_match_sync(few_tasks):
    def run(mode):
        venv = SEBenchVectorEnv(num_envs=3, tasks=few_tasks)
        venv.reset(seed=11)
        acts = [answer(e.task.library_solution) for e in venv.envs]
        if mode == "sync":
            out = venv.step(acts)
        elif mode == "future":
            fut = venv.step_async(acts)
            assert hasattr(fut, "result")
            out = venv.step_wait()
        else:
            out = asyncio.run(venv.astep(acts))
        venv.close()
        return out[0], list(out[1])

    assert run("sync") == run("future") == run("await")


def test_async_vector_env_workers_make_the_env_without_prior_import():
    code = (
        "import gymnasium as gym\n"
        "if __name__ == '__main__':\n"
        "    venv = gym.make_vec('se_gym:SEBench-v0', num_envs=2, vectorization_mode='async',\n"
        "                        vector_kwargs={'shared_memory': False})\n"
        "    obs, info = venv.reset(seed=0)\n"
        "    print(len(obs), type(venv).__name__)\n"
        "    venv.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["2", "AsyncVectorEnv"]


def test_env_in_a_ray_actor():
    ray = need_module("ray", "ray is not installed (extra 'ray')")
    from se_gym.distributed import connect, shutdown

    connect(num_cpus=1)
    try:
        @ray.remote
        class Holder:
            def run(self):
                import gymnasium as gym

                env = gym.make("se_gym:SEBench-v0")
                obs, info = env.reset(seed=5)
                _, r, *_ = env.step("```python\n" + env.unwrapped.task.library_solution + "\n```")
                env.close()
                return info["task_id"], r

        task_id, reward = ray.get(Holder.remote().run.remote(), timeout=300)
        assert reward == 1.0 and isinstance(task_id, str)
    finally:
        shutdown()


def test_official_tasks_and_names():

    shared = shared_path("sebench", "single_test_dev.jsonl").parent
    env = SEBenchEnv(tasks=f"sebench:{shared / 'single_test_dev.jsonl'}", profile="sebench", book="open")
    try:
        assert len(env.tasks) == 130 and env.library.qualified("abs") == "zwc.falekef"  # names found beside the file
        obs, info = env.reset(options={"index": 0})
        task = env.task
        assert "Codebase Functions" in obs and env.library.names[task.functions[0]] in obs
        # the official judge gives the NumPy reference code 4 on every one of these tasks
        _, r, *_, info = env.step(f"```python\n{task.reference_solution}\n```")
        assert r == 0.0 and info["verdict"].sebench_code == 4 and info["status"] == "static_gate"
        assert info["library_id"] == env.library.id and info["task_id"] == task.id
    finally:
        env.close()


def test_a_built_suite_takes_its_own_api_doc_over_a_stray_one_in_the_parent_folder(tmp_path, caplog):
    """Issue 43.9: `sebench:PATH` tried PATH/../api_doc.jsonl before the suite's own
    PATH/datasets/train/api_doc.jsonl, so a suite written into a folder whose parent holds another
    api_doc.jsonl loaded with the wrong names and every reference answer failed (0 of 24)."""
    import logging

    from se_gym.tasks import build_suite
    from se_gym.tasks.builtin import api_doc_rows

    suite = build_suite(3, sizes={"train": 0, "single_test": 3, "multiple_test": 0}, progress=False, validate="inprocess")
    out = suite.write(tmp_path / "suite")
    stray = build_suite(4, sizes={"train": 0, "single_test": 1, "multiple_test": 0}, progress=False, validate="inprocess")
    (tmp_path / "api_doc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in api_doc_rows(stray.library)))
    with caplog.at_level(logging.INFO, logger="se_gym"):
        env = SEBenchEnv(tasks=f"sebench:{out}", profile="strict")
    try:
        assert str(out / "datasets" / "train" / "api_doc.jsonl") in caplog.text  # it says which one it took
        assert env.library.names == suite.library.names
        for i in range(len(env.tasks)):
            env.reset(options={"index": i})
            _, r, *_ = env.step(f"```python\n{env.task.library_solution}\n```")
            assert r == 1.0, env.task.id
    finally:
        env.close()
