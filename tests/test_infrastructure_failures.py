"""Infrastructure failures are never scored as wrong answers (issue 20.5).

A sandbox that cannot run an answer says nothing about the answer.  The Runner and the rollout
retry such samples, then leave what still fails out of accuracy, RL advantages and SFT example
selection, and count it.  The failing sandbox is real: the judge's HTTP backend pointed at a port
where nothing listens (connection refused -> ``sandbox_error``, ``infrastructure: true``).
"""
from __future__ import annotations

import socket

import pytest

from se_gym import mint
from se_gym.accuracy import InfrastructureError, Tally, pass_at_k
from se_gym.agents import Agent, JudgeScorer, Runner, SFTAgent, Trajectory
from se_gym.training import miniature as mini

LIB = mint(7)
FUNCS = ["abs", "cumsum", "sort", "flip"]


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/run"  # closed again: connections are refused


class RightAnswers(Agent):
    """Writes the library solution of every task (a perfect model; the answers are all right)."""

    book = "open"

    def act(self, observations):
        return [o.task.library_solution for o in observations]


class Routed:
    """A scorer that sends some tasks to a dead sandbox (``dead_for``: task ids, or a number of calls
    that fail first) and the rest to the live one; counts calls."""

    def __init__(self, live, dead, dead_ids=(), dead_calls=0):
        self.live, self.dead, self.dead_ids, self.dead_calls, self.calls = live, dead, set(dead_ids), dead_calls, 0

    def __call__(self, tasks, responses):
        self.calls += 1
        if self.calls <= self.dead_calls:
            return self.dead(tasks, responses)
        out = [None] * len(tasks)
        for scorer, pick in ((self.dead, lambda t: t.id in self.dead_ids), (self.live, lambda t: t.id not in self.dead_ids)):
            idx = [i for i, t in enumerate(tasks) if pick(t)]
            if idx:
                for i, v in zip(idx, scorer([tasks[i] for i in idx], [responses[i] for i in idx])):
                    out[i] = v
        return out


@pytest.fixture(scope="module")
def judges():
    from se_gym.judge.core import Judge

    live = Judge(LIB, profile="sebench")
    dead = Judge(LIB, profile="sebench", sandbox="http", http_url=_dead_url())
    yield JudgeScorer(live), JudgeScorer(dead)
    live.close()
    dead.close()


@pytest.fixture(scope="module")
def tasks():
    train, test = mini.experiment_tasks(LIB, FUNCS, (2, 1), seed=0)
    return train, test


def _render(task, book):
    prompt = mini.render(LIB, task, book, FUNCS)
    return prompt, tuple(line for line in prompt.splitlines() if line.startswith(f"{LIB.package}.")) if book == "open" else ()


def test_the_dead_sandbox_gives_infrastructure_verdicts(judges, tasks):
    _, dead = judges
    v = dead([tasks[1][0]], [tasks[1][0].library_solution])[0]
    assert v.infrastructure and v.status.value == "sandbox_error"


def test_a_sandbox_failure_is_retried_and_then_scored_normally(judges, tasks):
    live, dead = judges
    scorer = Routed(live, dead, dead_calls=1)  # the first judging fails, the retry reaches the sandbox
    result = Runner(scorer, _render, progress=False).evaluate(RightAnswers(), tasks[1], "open")
    assert scorer.calls == 2
    assert result.accuracy == 1.0 and result.infrastructure == 0 and result.judged == len(tasks[1])


def test_what_still_fails_is_excluded_from_accuracy_and_counted(judges, tasks):
    live, dead = judges
    _, test = tasks
    broken = {test[0].id, test[1].id}
    runner = Runner(Routed(live, dead, dead_ids=broken), _render, progress=False, infra_retries=1)
    result = runner.evaluate(RightAnswers(), test, "open")
    # every answer is right: the two the sandbox could not run are not counted as wrong
    assert result.infrastructure == 2 and result.n == len(test)
    assert result.accuracy == 1.0
    failed = [t for t in result.trajectories if not t.judged]
    assert {t.observation.task.id for t in failed} == broken and all(t.reward is None for t in failed)


def test_nothing_judged_is_an_error_not_a_zero(judges, tasks):
    _, dead = judges
    with pytest.raises(InfrastructureError, match="all 2 samples"):
        Runner(dead, _render, progress=False, infra_retries=0).evaluate(RightAnswers(), tasks[1][:2], "open")


def test_the_judge_scorer_does_not_cache_an_infrastructure_failure(judges, tasks):
    live, dead = judges
    flaky = JudgeScorer(dead.judge)
    t = tasks[1][0]
    assert flaky([t], [t.library_solution])[0].infrastructure
    flaky.judge = live.judge  # the sandbox is back
    assert flaky([t], [t.library_solution])[0].reward == 1.0


def test_training_reward_counts_infrastructure_apart(judges, tasks):
    live, dead = judges
    train, _ = tasks
    runner = Runner(Routed(live, dead, dead_ids={train[0].id}), _render, progress=False, infra_retries=0)

    class Learner(RightAnswers):
        def _learn(self, trajectories):
            return {}

    history = runner.train(Learner(), train, iterations=1)
    assert history[0]["infrastructure"] == 1 and history[0]["reward"] == 1.0


def test_sft_selection_skips_samples_that_were_not_judged(tasks):
    train, _ = tasks
    runner = Runner(lambda t, r: [], _render, progress=False)
    obs = runner.observe(train[:3], "open")
    trajs = [Trajectory(obs[0], "a", 1.0, "passed"), Trajectory(obs[1], "b", None, "sandbox_error"), Trajectory(obs[2], "c", 0.0, "wrong_answer")]
    agent = SFTAgent.__new__(SFTAgent)  # only the selection is exercised here: no model needed
    agent.mode = "closed"
    examples = agent.examples(trajs)
    assert [e.response for e in examples] == ["a"]


def test_tally_and_pass_at_k_leave_infrastructure_out():
    t = Tally.of([1.0, 0.0, None, 1.0, None], tasks=["a", "a", "a", "b", "b"])
    assert (t.samples, t.judged, t.infrastructure) == (5, 3, 2)
    assert t.accuracy == pytest.approx(2 / 3) and t.mean_reward == pytest.approx(2 / 3)
    assert t.pass_at(1) == pytest.approx((0.5 + 1.0) / 2)
    assert t.pass_at(2) == pytest.approx(pass_at_k(2, 1, 2))  # only task a has 2 judged samples
    assert Tally.of([None]).accuracy is None
    with pytest.raises(InfrastructureError):
        Tally.of([None, None]).require_accuracy()


def test_rl_advantages_ignore_samples_that_were_not_judged(tmp_path):
    from conftest import need_module

    need_module("torch", "RL needs torch")
    need_module("transformers", "RL needs transformers")
    from se_gym.llm.tiny import build_tiny_model
    from se_gym.training.policy import Policy
    from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer

    path = build_tiny_model(tmp_path / "m", d_model=64, n_head=2, n_layer=1)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    policy = Policy(AutoModelForCausalLM.from_pretrained(str(path)), AutoTokenizer.from_pretrained(str(path)), device="cpu")
    trainer = RLTrainer(policy, RLConfig(learning_rate=1e-3, group_size=4, minibatch_size=8), reward_fn=lambda p, r: [])
    prompts = [RLPrompt("q1", "q1")] * 4 + [RLPrompt("q2", "q2")] * 4
    # group 1: judged 1, 0 and two sandbox failures; group 2: all judged, all wrong (no signal)
    metrics = trainer.update(prompts, ["a", "b", "c", "d", "e", "f", "g", "h"], [1.0, 0.0, None, None, 0.0, 0.0, 0.0, 0.0])
    assert metrics["infrastructure"] == 2
    assert metrics["reward"] == pytest.approx(1 / 6)  # over the 6 judged samples, not 1/8
    assert metrics["updated_on"] == 2  # the judged pair of group 1; failures are never trained on


class _FailFirst:
    """A judge whose first ``judge_many`` goes to a dead sandbox, the rest to the live one."""

    def __init__(self, live, dead):
        self.live, self.dead, self.calls = live, dead, 0

    def judge_many(self, items):
        self.calls += 1
        return (self.dead if self.calls == 1 else self.live).judge_many(items)

    def close(self):
        pass


def test_rollout_rows_retry_then_mark_and_count_infrastructure(tmp_path):
    from _rollout_helpers import build_tiny, config, require_pipeline

    require_pipeline()
    from se_gym.judge.core import Judge
    from se_gym.llm.rollout import RolloutWorker, load_tasks, make_batches, rollout

    cfg = config(build_tiny(tmp_path), limit=2, batch_size=2)
    worker = RolloutWorker(cfg, infra_retries=1)
    dead = Judge(worker.library, profile=cfg.profile, sandbox="http", http_url=_dead_url())
    try:
        batch = make_batches(load_tasks(cfg.tasks, cfg.split, worker.library, cfg.limit), cfg.batch_size)[0]
        stage = worker.generate_batch(batch)
        # the tiny model writes no code the sandbox would run; judge the right answers instead
        import dataclasses

        stage["generations"] = [
            dataclasses.replace(g, completions=tuple(dataclasses.replace(c, text=f"```python\n{t.library_solution}\n```") for c in g.completions))
            for t, g in zip(batch.tasks, stage["generations"])
        ]
        live = worker.judge
        worker.judge = _FailFirst(live, dead)  # the first judging of the batch fails, the retry works
        rows = worker.judge_batch(stage)["rows"]
        assert worker.judge.calls == 2 and not any(r["infrastructure"] for r in rows)
        assert all(r["reward"] == 1.0 for r in rows)
        worker.judge = dead  # the sandbox stays down: rows are written, marked, not scored
        rows = worker.judge_batch(stage)["rows"]
        assert all(r["infrastructure"] and r["status"] == "sandbox_error" for r in rows)
        worker.judge = live
    finally:
        worker.close()
        dead.close()
    # through rollout(): the count reaches the stats (a run against the dead sandbox)
    import se_gym.llm.rollout as ro

    class DeadWorker(RolloutWorker):
        def __init__(self, config, generator=None, infra_retries=2, **kw):
            super().__init__(config, generator, infra_retries, **kw)
            self.judge.close()
            self.judge = Judge(self.library, profile=config.profile, sandbox="http", http_url=_dead_url())

        def generate_batch(self, batch):
            stage = super().generate_batch(batch)
            stage["generations"] = [
                dataclasses.replace(g, completions=tuple(dataclasses.replace(c, text=f"```python\n{t.library_solution}\n```") for c in g.completions))
                for t, g in zip(batch.tasks, stage["generations"])
            ]
            return stage

    original, ro.RolloutWorker = ro.RolloutWorker, DeadWorker
    try:
        stats = rollout(cfg, tmp_path / "rows.jsonl", progress=False)
    finally:
        ro.RolloutWorker = original
    assert stats.infrastructure == stats.rows_written == 4 and stats.accepted == 0
    from se_gym.llm.report import summarize

    group = summarize([tmp_path / "rows.jsonl"])[0]
    assert group.infrastructure == 4 and group.judged == 0 and group.accuracy is None
