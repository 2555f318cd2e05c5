"""Env lifecycle (issue 20.6, 15.6): errors before the sandbox runs, option typos at gym.make, the
action space as the contract, judge ownership in the vector env, step_wait timeouts."""
from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest

import se_gym  # noqa: F401  (registers SEBench-v0)
from conftest import REPO
from se_gym.envs import EnvConfigError, SEBenchEnv
from se_gym.envs.sebench import InvalidAction
from se_gym.envs.vector import SEBenchVectorEnv
from se_gym.judge import Judge
from se_gym.tasks import build_suite

SMALL = {"train": 0, "single_test": 4, "multiple_test": 0}


@pytest.fixture(scope="module")
def tasks():
    return list(build_suite(0, sizes=SMALL, progress=False, validate="inprocess").splits["single_test"])


def answer(code: str) -> str:
    return f"```python\n{code}\n```"


class CountingJudge:
    """The real judge, counting its calls (to show a refused step never reached the sandbox)."""

    def __init__(self, library):
        self.inner = Judge(library)
        self.calls = 0
        self.closed = False

    def judge_many(self, items):
        self.calls += 1
        return self.inner.judge_many(items)

    def close(self):
        self.closed = True
        self.inner.close()


def test_step_before_reset_and_after_done_raise_before_judging(tasks):
    env = SEBenchEnv(tasks=tasks)
    spy = CountingJudge(env.library)
    env._judge, env._owns_judge = spy, True
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        env.step(answer("x = 1"))
    assert spy.calls == 0
    env.reset(seed=0)
    _, r, term, _, _ = env.step(answer(env.task.library_solution))
    assert r == 1.0 and term and spy.calls == 1
    with pytest.raises(gym.error.ResetNeeded, match="episode is over"):
        env.step(answer(env.task.library_solution))
    assert spy.calls == 1  # the finished episode did not run the sandbox again
    env.close()
    assert spy.closed


def test_action_longer_than_the_space_is_refused_as_the_space_says(tasks):
    env = SEBenchEnv(tasks=tasks, max_length=500)
    spy = CountingJudge(env.library)
    env._judge = spy
    env.reset(seed=0)
    long = answer(env.task.library_solution) + "\n#" + "x" * 600
    assert not env.action_space.contains(long)
    with pytest.raises(InvalidAction, match="at most|500"):
        env.step(long)
    with pytest.raises(InvalidAction, match="str"):
        env.step(b"bytes")
    assert spy.calls == 0
    # the episode is still open: a valid action is judged
    _, r, *_ = env.step(answer(env.task.library_solution))
    assert r == 1.0 and env.action_space.contains(answer(env.task.library_solution))
    env.close()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sandbox": "dockr"}, r"sandbox must be one of local, docker, http, ray; got 'dockr' \(did you mean 'docker'\?\)"),
        ({"profile": "strcit"}, r"profile must be one of strict, sebench; got 'strcit' \(did you mean 'strict'\?\)"),
        ({"book": "opne"}, r"book must be one of closed, open; got 'opne'"),
        ({"reward": "binay"}, r"reward must be one of binary, fraction"),
        ({"split": "test"}, r"split must be one of train, single_test, multiple_test"),
        ({"tasks": "biultin"}, r"task spec kind must be one of builtin, sebench"),
        ({"sandbox": "http"}, r"sandbox http needs url"),
        ({"sandbox": 3}, r"sandbox must be one of"),
        ({"max_length": 0}, r"max_length"),
    ],
)
def test_option_typos_fail_at_make_with_one_line_listing_choices(kwargs, match):
    with pytest.raises(EnvConfigError, match=match) as exc:
        gym.make("SEBench-v0", **kwargs)
    assert "\n" not in str(exc.value)


def test_vector_close_leaves_a_judge_it_was_given_open(tasks):
    with Judge("seed:0") as judge:
        venv = SEBenchVectorEnv(num_envs=2, tasks=tasks, judge=judge)
        venv.reset(seed=0)
        venv.step([answer(e.task.library_solution) for e in venv.envs])
        box = judge._sandbox
        assert box is not None
        venv.close()
        assert judge._sandbox is box  # not closed (a closed judge would start a new sandbox on use)
        v = judge.judge(answer(tasks[0].library_solution), tasks[0].test_cases, tasks[0].function_name)
        assert v.status.value == "passed"
    own = SEBenchVectorEnv(num_envs=2, tasks=tasks)
    own.reset(seed=0)
    j = own.judge
    own.close()
    assert j._sandbox is None  # a judge the env made is closed with it


def test_gymnasium_async_vector_env_hands_back_tasks(tasks):
    """get_attr pickles the attribute in the worker process (a Task's metadata once refused)."""
    venv = gym.make_vec("SEBench-v0", num_envs=2, vectorization_mode="async", vector_kwargs={"shared_memory": False}, tasks=tasks)
    try:
        _, infos = venv.reset(seed=0)
        got = venv.get_attr("task")
        assert [t.id for t in got] == list(infos["task_id"]) and all(t in tasks for t in got)
    finally:
        venv.close()


def test_vector_step_refuses_before_reset_and_bad_actions_before_judging(tasks):
    venv = SEBenchVectorEnv(num_envs=2, tasks=tasks)
    with pytest.raises(gym.error.ResetNeeded, match="sub-env 0"):
        venv.step(["a", "b"])
    venv.reset(seed=0)
    with pytest.raises(InvalidAction, match="sub-env 1"):
        venv.step([answer(venv.envs[0].task.library_solution), 7])
    assert venv.envs[0].judge.metrics.latency.count == 0  # nothing was judged (its workers started at reset)
    venv.close()


def test_step_wait_timeout_keeps_the_job_and_a_later_wait_collects_it(tasks):
    venv = SEBenchVectorEnv(num_envs=2, tasks=tasks)
    venv.reset(seed=0)
    ids = [e.task.id for e in venv.envs]
    spin = answer(venv.envs[0].task.library_solution + "\nwhile True:  # runs until the sandbox's time limit\n    pass\n")
    good = answer(venv.envs[1].task.library_solution)
    venv.step_async([spin, good])
    with pytest.raises(TimeoutError, match="still running"):
        venv.step_wait(timeout=0.01)  # the spinning answer runs until the sandbox's time limit
    obs, r, term, trunc, infos = venv.step_wait()
    assert list(infos["final_info"]["task_id"]) == ids
    assert list(r) == [0.0, 1.0] and infos["final_info"]["status"][0] == "timeout"
    # cancelling: the sub-envs stay on their tasks, and the next step works
    before = [e.task.id for e in venv.envs]
    venv.step_async([spin, good])
    venv.step_cancel()
    assert [e.task.id for e in venv.envs] == before and venv._pending is None
    _, r, *_ = venv.step([answer(e.task.library_solution) for e in venv.envs])
    assert list(r) == [1.0, 1.0]
    venv.close()


def test_first_make_says_it_is_building_the_suite(tmp_path):
    # a program sees se-gym's info lines as it configures logging (the se-gym command does it with -v/-q)
    code = ("import logging; logging.basicConfig(level=logging.INFO, format='%(message)s')\n"
            "import gymnasium as gym, se_gym\n"
            "from se_gym.tasks import builtin\n"
            "builtin.DEFAULT_SIZES = dict(train=0, single_test=2, multiple_test=0)  # a tiny suite: the message is the point\n"
            "gym.make('SEBench-v0', tasks='builtin:3')\n")
    env = {"SE_GYM_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(tmp_path.parent), timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "building the built-in task suite (seed 3" in out.stderr
    assert "\r" not in out.stderr and "\x1b[" not in out.stderr  # plain lines when not on a terminal


def test_reset_with_a_step_pending_drops_it_and_never_gives_its_verdicts_to_the_new_episodes(tasks, caplog):
    """Issue 43.1: a reset while step_async judges replaced the episodes but kept the step, so the next
    step_wait gave the NEW episodes the OLD answers' verdicts (1.0 for an answer to another task)."""
    import asyncio
    import logging

    from se_gym.envs.vector import StepCancelled

    venv = SEBenchVectorEnv(num_envs=2, tasks=tasks)
    venv.reset(seed=0)
    old = [e.task.id for e in venv.envs]
    venv.step_async([answer(e.task.library_solution) for e in venv.envs])  # right for the OLD tasks
    with caplog.at_level(logging.WARNING, logger="se_gym"):
        venv.reset(seed=5)
    assert "dropped" in caplog.text
    assert [e.task.id for e in venv.envs] != old
    with pytest.raises(RuntimeError, match="without step_async"):
        venv.step_wait()  # nothing pending: the old verdicts are gone
    # the new episodes are judged on their own answers only
    _, r, *_ = venv.step([answer("def f():\n    return 0")] * 2)
    assert list(r) == [0.0, 0.0]

    async def astep_then_reset():
        venv.reset(seed=0)
        step = asyncio.ensure_future(venv.astep([answer(e.task.library_solution) for e in venv.envs]))
        await asyncio.sleep(0)  # the step is submitted
        venv.reset(seed=7)
        with pytest.raises(StepCancelled):
            await step

    asyncio.run(astep_then_reset())
    venv.close()
