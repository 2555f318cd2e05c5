"""Task samplers (issue 44): the contract and its registry, ``uniform`` against the order the env and
the training loops drew before samplers existed, ``learnability``'s estimates, P(signal), cost term and
exploration floor against hand computations, save/resume of the state, and the wiring (env, vector
env, Runner.train, the RL ablation, ``se-gym rollout``, the TRL/verl exports, self-play's curriculum,
the RL trainer's zero-advantage and token statistics).

Real pieces throughout (the judge, the tiny model, the CLI in a child process); the one scripted
agent answers with the task's own reference solution or with nothing, to give tasks known solve rates.
"""
from __future__ import annotations

import json
import random
from types import SimpleNamespace

import gymnasium as gym
import pytest

import se_gym  # noqa: F401  (registers SEBench-v0)
from conftest import need_module
from se_gym.envs import EnvConfigError


def answer(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}\n```"


@pytest.fixture(scope="module")
def tasks():
    from se_gym.tasks import builtin_tasks

    return list(builtin_tasks("train", seed=0)[:8])


def fake(*spec):
    """Task-like records (id, functions): all a sampler reads."""
    return [SimpleNamespace(id=i, functions=(f,) if f else ()) for i, f in spec]


# -- the contract ---------------------------------------------------------------------------------
def test_registry_plugins_and_one_line_errors(tasks, tmp_path):
    from se_gym.registry import RegistryError
    from se_gym.tasks.sampler import SAMPLERS, LearnabilitySampler, SamplerError, UniformSampler, make_sampler

    assert {"uniform", "learnability"} <= set(SAMPLERS.names())
    assert type(make_sampler(None, tasks)) is UniformSampler  # the default
    assert type(make_sampler("learnability", tasks, group_size=4)) is LearnabilitySampler
    assert make_sampler("se_gym.tasks.sampler:LearnabilitySampler", tasks, floor=0.5).floor == 0.5  # module:Class
    # a user's sampler in a file: only weights() written, every draw derived from it
    plug = tmp_path / "plug.py"
    plug.write_text("from se_gym.tasks.sampler import TaskSampler\n\n\nclass LastOnly(TaskSampler):\n"
                    "    def weights(self):\n        return [0.0] * (len(self.tasks) - 1) + [1.0]\n")
    last = len(tasks) - 1
    mine = make_sampler(f"{plug}:LastOnly", tasks)
    assert mine.next_index() == last and mine.batch(1, random.Random(0)) == [last] and set(mine.schedule(4)) == {last}
    env = gym.make("SEBench-v0", tasks=tasks, sampler=f"{plug}:LastOnly")
    assert env.reset(seed=1)[1]["task_id"] == tasks[last].id
    env.close()

    with pytest.raises(RegistryError) as bad:
        make_sampler("learnabilty", tasks)
    assert "\n" not in str(bad.value) and "did you mean 'learnability'" in str(bad.value)
    with pytest.raises(RegistryError, match="not a subclass"):
        make_sampler("se_gym.tasks.sampler:SamplerError", tasks)
    with pytest.raises(SamplerError, match="takes no option 'flor'"):
        make_sampler("learnability", tasks, flor=0.1)
    with pytest.raises(SamplerError, match="floor must be"):
        make_sampler("learnability", tasks, floor=2)
    from se_gym.cli import main

    assert main(["demo", "--rl-ablation", "--sampler", "learnabilty", "--out", str(tmp_path / "d")]) == 2  # before any work
    for kwargs, match in (({"sampler": "nope"}, "sampler: task sampler must be one of uniform, learnability"),
                          ({"sampler": "learnability", "sampler_options": {"flor": 0.1}}, "takes no option 'flor'"),
                          ({"sampler": make_sampler("learnability", tasks[:3])}, "another task list")):
        with pytest.raises(EnvConfigError, match=match) as bad:
            gym.make("SEBench-v0", tasks=tasks, **kwargs)
        assert "\n" not in str(bad.value)


def test_uniform_is_the_order_from_before_samplers(tasks):
    """The env's epochs: a permutation of the split from the env's seeded generator per epoch (sub-env i
    of a vector env seeded seed + i); the training loops': ``random.Random(...).sample(tasks, k)``."""
    from gymnasium.utils import seeding

    from se_gym.tasks.sampler import make_sampler

    def before(seed, count):
        rng, _ = seeding.np_random(seed)
        order: list[int] = []
        while len(order) < count:
            order += [int(i) for i in rng.permutation(len(tasks))]
        return [tasks[i].id for i in order[:count]]

    for spec in ("uniform", None):
        env = gym.make("SEBench-v0", tasks=tasks, sampler=spec)
        got = [env.reset(seed=5)[1]["task_id"]] + [env.reset()[1]["task_id"] for _ in range(2 * len(tasks) + 3)]
        assert got == before(5, 2 * len(tasks) + 4)
        assert env.reset(seed=9)[1]["task_id"] == before(9, 1)[0]  # a seed restarts the epoch
        env.close()
    venv = gym.make_vec("SEBench-v0", num_envs=3, tasks=tasks, sampler="uniform")
    _, infos = venv.reset(seed=2)
    assert list(infos["task_id"]) == [before(2 + i, 1)[0] for i in range(3)]
    venv.close()
    uniform = make_sampler("uniform", tasks)
    for k in (3, len(tasks), 50):
        assert [tasks[i] for i in uniform.batch(k, random.Random(1234))] == random.Random(1234).sample(list(tasks), min(k, len(tasks)))


# -- learnability by hand -------------------------------------------------------------------------
def test_p_signal_by_hand():
    from se_gym.tasks.sampler import p_signal

    assert p_signal(0.5, 8) == pytest.approx(1 - 2 / 256)
    assert p_signal(0.1, 8) == pytest.approx(1 - 0.1 ** 8 - 0.9 ** 8)
    assert p_signal(0.0, 4) == 0.0 and p_signal(1.0, 4) == 0.0  # all fail / all pass: no gradient
    assert p_signal(0.25, 4, advantage="reward") == pytest.approx(1 - 0.75 ** 4)  # reward weighting learns from any pass
    assert p_signal(1.0, 4, advantage="reward") == 1.0


def test_learnability_estimates_weights_and_cost_by_hand():
    from se_gym.tasks.sampler import LearnabilitySampler

    ts = fake(("A", "f"), ("B", "f"), ("C", "g"), ("D", ""))
    opts = dict(group_size=4, prior_mean=0.5, prior_strength=2.0, function_strength=4.0, decay=0.5, floor=0.2)
    s = LearnabilitySampler(ts, **opts)
    assert s.weights() == pytest.approx([0.25] * 4)  # nothing seen: every task at the prior
    s.update(0, [1, 1, 1, 0], [10, 10, 10, 30])
    s.update(2, [0, 0, 0, 0], [5, 5, 5, 5])
    s.update(0, [1, 1, None, 1])  # decay 0.5 first; the unjudged answer is no evidence
    # A: s = 0.5 * 3 + 3 = 4.5, n = 0.5 * 4 + 3 = 5; function f the same sums; g: 0 of 4
    p_f, p_g = (4.5 + 2 * 0.5) / (5 + 2), (0 + 2 * 0.5) / (4 + 2)
    rates = [(4.5 + 4 * p_f) / (5 + 4), p_f, (0 + 4 * p_g) / (4 + 4), 0.5]  # B unseen: its function's; D: the prior
    assert [s.solve_rate(i) for i in range(4)] == pytest.approx(rates)
    assert s.function_rate("f") == pytest.approx(p_f) and s.function_rate("g") == pytest.approx(p_g)
    signal_ = [1 - p ** 4 - (1 - p) ** 4 for p in rates]
    assert [s.signal(i) for i in range(4)] == pytest.approx(signal_)
    total = sum(signal_)
    assert s.weights() == pytest.approx([0.8 * x / total + 0.2 / 4 for x in signal_])
    assert s.function_weights(["f", "g"]) == pytest.approx(
        dict(zip("fg", [0.8 * x / (1 - p_f ** 4 - (1 - p_f) ** 4 + 1 - p_g ** 4 - (1 - p_g) ** 4) + 0.1
                        for x in (1 - p_f ** 4 - (1 - p_f) ** 4, 1 - p_g ** 4 - (1 - p_g) ** 4)])))

    # the cost term: tokens per answer A 15 (60 / 4), B 15 (its function's), C 5, D the mean of all 10
    c = LearnabilitySampler(ts, **opts, cost=1.0)
    c.update(0, [1, 1, 1, 0], [10, 10, 10, 30])
    c.update(2, [0, 0, 0, 0], [5, 5, 5, 5])
    c.update(0, [1, 1, None, 1])
    assert [c.tokens_per_answer(i) for i in range(4)] == pytest.approx([15, 15, 5, 10])
    scores = [signal_[0] / 1.5, signal_[1] / 1.5, signal_[2] / 0.5, signal_[3] / 1.0]
    assert c.weights() == pytest.approx([0.8 * x / sum(scores) + 0.05 for x in scores])


def test_exploration_floor():
    """Every task keeps floor / n of the draws, even one whose groups never carry signal."""
    from se_gym.tasks.sampler import LearnabilitySampler

    ts = fake(("a", "f1"), ("b", "f2"), ("c", "f3"), ("d", "f4"))
    s = LearnabilitySampler(ts, group_size=4, prior_mean=1.0, floor=0.2)  # the prior says: solved, no signal
    assert s.weights() == pytest.approx([0.25] * 4)  # no task scores: all alike
    s.update(0, [0, 0, 0, 0])  # now only task a can teach
    assert s.weights() == pytest.approx([0.85, 0.05, 0.05, 0.05])
    s.attach(0, __import__("numpy").random.default_rng(0))
    draws = [s.next_index() for _ in range(4000)]
    for i in (1, 2, 3):
        assert 0.03 < draws.count(i) / 4000 < 0.07
    assert LearnabilitySampler(ts, prior_mean=1.0, floor=0.0).weights() == pytest.approx([0.25] * 4)
    s0 = LearnabilitySampler(ts, group_size=4, prior_mean=1.0, floor=0.0)
    s0.update(0, [0, 0, 0, 0])
    assert s0.weights() == pytest.approx([1, 0, 0, 0])  # floor 0: no exploration at all
    assert s0.batch(2, random.Random(0))[0] == 0


def test_state_saved_and_resumed_gives_the_same_next_tasks(tasks, tmp_path):
    from se_gym.tasks.sampler import SamplerError, make_sampler, restore_sampler

    def env():
        return gym.make("SEBench-v0", tasks=tasks, sampler="learnability", sampler_options={"group_size": 2})

    first = env()
    first.reset(seed=3)
    sampler = first.unwrapped.sampler
    for i in range(6):
        task_id = first.reset()[1]["task_id"]
        sampler.update(sampler.index_of(task_id), [i % 2, 1])
    sampler.save(tmp_path / "state.json")
    expected = [first.reset()[1]["task_id"] for _ in range(10)]
    first.close()

    second = env()  # a new process would do the same: build the env, load the state, reset() without a seed
    assert second.unwrapped.sampler.load(tmp_path / "state.json")
    assert [second.reset()[1]["task_id"] for _ in range(10)] == expected
    second.close()
    restored = restore_sampler(tmp_path / "state.json", tasks)  # its name and options come from the file
    assert restored.group_size == 2 and restored.weights() == pytest.approx(sampler.weights())
    with pytest.raises(SamplerError, match="other sampler options"):
        make_sampler("learnability", tasks, group_size=8).load(tmp_path / "state.json")
    with pytest.raises(SamplerError, match="another task list"):
        make_sampler("learnability", tasks[:4], group_size=2).load(tmp_path / "state.json")
    with pytest.raises(SamplerError, match="of sampler 'learnability', not 'uniform'"):
        make_sampler("uniform", tasks).load(tmp_path / "state.json")


# -- wiring ----------------------------------------------------------------------------------------
def test_env_and_vector_env_report_episodes_to_one_shared_sampler(tasks):
    from se_gym.tasks.sampler import LearnabilitySampler

    env = gym.make("SEBench-v0", tasks=tasks, sampler="learnability", sampler_options={"group_size": 4})
    sampler = env.unwrapped.sampler
    assert isinstance(sampler, LearnabilitySampler) and sampler.group_size == 4
    env.reset(seed=0)
    task = env.unwrapped.task
    before = sampler.task_rate(task)
    env.step(answer(task.library_solution))
    assert sampler.updates == 1 and sampler.task_rate(task) > before  # a pass raised its estimate
    env.close()

    venv = gym.make_vec("SEBench-v0", num_envs=3, tasks=tasks, sampler="learnability")
    shared = venv.unwrapped.sampler
    assert all(e.sampler is shared for e in venv.unwrapped.envs)
    venv.reset(seed=0)
    assert all(shared.has_stream(i) for i in range(3))  # one stream per sub-env, one state
    actions = [answer(e.task.library_solution) for e in venv.unwrapped.envs]
    actions[1] = "no code"
    venv.step(actions)
    assert shared.updates == 3
    assert sum(v[0] for v in shared._by_task.values()) == 2 and sum(v[1] for v in shared._by_task.values()) == 3
    venv.close()


def _scripted_agent():
    from se_gym.agents import Agent

    class Half(Agent):
        """Answers even-numbered tasks right every time, odd-numbered ones right on the first sample of a
        group only (solve rate 1/2): the odd ones are where groups carry signal."""

        def __init__(self):
            self.seen: list[list[str]] = []

        def act(self, observations):
            self.seen.append([o.task.id for o in observations])
            out, count = [], {}
            for o in observations:
                j = count[o.task.id] = count.get(o.task.id, -1) + 1
                right = int(o.task.id[-1]) % 2 == 0 or j == 0
                out.append(answer(o.task.library_solution) if right else "no code")
            return out

    return Half()


def test_runner_train_picks_by_learnability_and_resumes_with_the_same_tasks(tasks, tmp_path):
    from se_gym.agents import JudgeScorer, Runner, default_renderer
    from se_gym.judge import Judge
    from se_gym.library import mint

    library = mint(0)
    with Judge(library, profile="strict") as judge:
        runner = Runner(JudgeScorer(judge), default_renderer(library), progress=False)
        kw = dict(samples_per_task=2, tasks_per_iteration=3, seed=1, sampler="learnability")
        whole = _scripted_agent()
        history = runner.train(whole, tasks, iterations=6, checkpoint_dir=tmp_path / "whole", **kw)
        assert "sampler/expected_signal" in history[-1]
        killed = _scripted_agent()
        runner.train(killed, tasks, iterations=3, checkpoint_dir=tmp_path / "killed", **kw)  # stopped after 3
        resumed = _scripted_agent()
        runner.train(resumed, tasks, iterations=6, checkpoint_dir=tmp_path / "killed", **kw)
    assert killed.seen + resumed.seen == whole.seen  # the same tasks after the resume
    state = json.loads((tmp_path / "whole" / "runner.json").read_text())["sampler"]
    assert state["sampler"] == "learnability" and state["options"]["group_size"] == 2
    late = [t for batch in whole.seen[3:] for t in batch[::2]]  # (each task twice: a group)
    odd = sum(int(t[-1]) % 2 == 1 for t in late)
    assert odd > len(late) / 2  # the tasks whose groups teach were drawn more than the solved ones


def _tiny_demo(out):
    from se_gym.demo import Demo, DemoConfig

    cfg = DemoConfig(hidden=64, heads=2, layers=1, pretrain_examples=64, pretrain_batch=16, functions=2, train_per_function=2,
                     test_per_function=1, samples=2, sft_epochs=1, max_new_tokens=24)
    return Demo(out, cfg, progress=False, rl=False)


def test_ablation_with_the_sampler_resumes_with_the_same_tasks_and_stops_at_the_token_budget(tmp_path):
    need_module("transformers")
    need_module("torch").set_num_threads(1)
    from se_gym import demo_ablation as abl

    acfg = abl.AblationConfig(iterations=3, group=2, minibatch=4, ppo_epochs=1, max_new_tokens=24, variants=("rl_std",),
                              sampler="learnability", tasks_per_iteration=2, eval_every=2)
    assert abl.folder_name(acfg) == "ablation-learnability-k2-g2" and abl.folder_name(abl.AblationConfig()) == "ablation"
    assert abl.folder_name(abl.AblationConfig(sampler="learnability", tasks_per_iteration=2)) == "ablation-learnability-k2"
    curves = []
    for name, kill in (("whole", False), ("killed", True)):
        demo = _tiny_demo(tmp_path / name)
        a = abl.Ablation(demo, acfg)
        base = demo.base()
        demo.run_seed(0, base)
        library, functions, train, test = demo.world(0)
        runner = demo.runner(library, functions)
        if kill:
            assert a.run_variant(0, "rl_std", base, runner, train, test, stop_after=1) == {"stopped": 1}
            assert (a.run_dir.path / "seed0" / "rl_std" / "state" / "sampler.json").is_file()
        a.run_variant(0, "rl_std", base, runner, train, test)
        demo.release(runner)
        demo.close()
        curves.append(abl.load_curve(a.run_dir.path, 0, "rl_std"))
    whole, resumed = curves
    assert [r["tasks"] for r in resumed] == [r["tasks"] for r in whole] and len(whole) == 3
    assert all(len(r["tasks"]) == 2 for r in whole)
    assert [r["tokens_total"] for r in resumed] == [r["tokens_total"] for r in whole]
    assert all(0.0 <= r["zero_adv_groups"] <= 1.0 for r in whole) and whole[-1]["tokens_total"] > 0
    assert ["closed_test" in r for r in whole] == [True, True, True]  # the first, every 2nd and the last

    # a budget: the run stops once its answers reach it
    budget = abl.AblationConfig(iterations=3, group=2, minibatch=4, ppo_epochs=1, max_new_tokens=24, variants=("rl_std",),
                                sampler="learnability", tasks_per_iteration=2, token_budget=1)
    demo = _tiny_demo(tmp_path / "whole")
    a = abl.Ablation(demo, budget)
    assert a.run_dir.path.name == "ablation-learnability-k2-t1-g2"
    assert abl.run(demo, [0], budget) == 0
    assert len(abl.load_curve(a.run_dir.path, 0, "rl_std")) == 1
    demo.close()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from _rollout_helpers import build_tiny, require_pipeline

    require_pipeline()
    return build_tiny(tmp_path_factory.mktemp("tiny"))


def test_rollout_cli_samples_resumes_after_a_kill_and_chains_state(tiny, tmp_path, capsys):
    from _rollout_helpers import cli, comparable, config, kill_after_rows, rows
    from se_gym.cli import main
    from se_gym.llm.rollout import rollout
    from se_gym.tasks.sampler import restore_sampler

    assert main(["rollout", "--model", "m", "--sampler", "bogus", "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "--sampler: task sampler must be one of uniform, learnability" in err and err.count("\n") == 1
    assert main(["rollout", "--model", "m", "--sampler-state", "s.json", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "--sampler-state needs --sampler learnability" in capsys.readouterr().err

    args = ["rollout", "--model", str(tiny), "--backend", "hf", "--tasks", "builtin", "--limit", "8", "--n", "2",
            "--temperature", "1.0", "--max-tokens", "24", "--seed", "7", "--batch-size", "1", "--no-progress",
            "--sampler", "learnability"]
    out = tmp_path / "killed.jsonl"
    assert 2 <= kill_after_rows(args, out, timeout=180).count(b"\n") < 16
    assert cli(args + ["--out", str(out)]).wait(timeout=240) == 0

    reference = tmp_path / "reference.jsonl"  # the same run, never interrupted
    rollout(config(tiny, limit=8, n=2, temperature=1.0, max_tokens=24, seed=7, batch_size=1, sampler="learnability"), reference,
            progress=False)
    got, ref = rows(out), rows(reference)
    assert [comparable(r) for r in got] == [comparable(r) for r in ref]
    plan = json.loads((tmp_path / "killed.jsonl.sampler.json").read_text())
    plan_ref = json.loads((tmp_path / "reference.jsonl.sampler.json").read_text())
    assert plan == plan_ref and len(plan["plan"]) == 8 and [r["task_id"] for r in got[::2]] == plan["plan"]
    assert plan["state"]["learned"]["updates"] == 8

    # the next round starts from this state (its sampler and options): the plan comes from those weights
    from se_gym.library import from_spec
    from se_gym.llm.rollout import load_tasks

    suite = load_tasks("builtin", "single_test", from_spec("seed:0"))
    weights = restore_sampler(plan["state"], suite).weights()
    nxt = tmp_path / "next.jsonl"
    rollout(config(tiny, limit=3, n=2, sampler="learnability"), nxt, progress=False, sampler_state=tmp_path / "killed.jsonl.sampler.json")
    second = json.loads((tmp_path / "next.jsonl.sampler.json").read_text())
    assert second["initial"]["learned"] == plan["state"]["learned"] and len(second["plan"]) == 3
    assert second["state"]["learned"]["updates"] == 11
    assert max(weights) > min(weights)  # what the first round learned changed the weights


def test_exports_write_weighted_epochs(tasks):
    need_module("datasets")
    from se_gym.integrations.export import verl_rows
    from se_gym.integrations.trl import make_dataset
    from se_gym.library import mint
    from se_gym.tasks.sampler import SamplerError, make_sampler

    library = mint(0)
    plain = make_dataset(tasks, library)
    assert plain["task_id"] == [t.id for t in tasks]  # no sampler: one row per task, in order (as before)
    s = make_sampler("learnability", tasks, group_size=4, floor=0.0)
    for i in range(len(tasks)):  # task 0 half solved, the others always: only task 0 can teach
        s.update(i, [1, 0, 1, 0] if i == 0 else [1, 1, 1, 1])
    order = s.schedule(40, seed=3)
    ds = make_dataset(tasks, library, sampler=s, rows=40, seed=3)
    assert ds["task_id"] == [tasks[i].id for i in order]
    counts = {t.id: ds["task_id"].count(t.id) for t in tasks}
    w = s.weights()
    assert all(abs(counts[t.id] - 40 * w[i]) < 1 for i, t in enumerate(tasks))  # largest remainders
    assert counts[tasks[0].id] == max(counts.values())
    trajs = [{"task": t, "prompt": t.query} for t in tasks]
    rl = verl_rows(trajs, sampler=s, rows=40, seed=3)
    assert [r["extra_info"]["task_id"] for r in rl] == ds["task_id"] and [r["extra_info"]["index"] for r in rl] == list(range(40))
    assert [r["extra_info"]["task_id"] for r in verl_rows(trajs)] == [t.id for t in tasks]
    uni = make_dataset(tasks, library, sampler="uniform", rows=2 * len(tasks))  # a uniform weighted epoch: each task twice
    assert sorted(uni["task_id"]) == sorted([t.id for t in tasks] * 2)
    with pytest.raises(SamplerError, match="another task list"):
        verl_rows(trajs[:3], sampler=s)


def test_selfplay_learnability_curriculum_reads_the_rounds(tmp_path):
    from se_gym.selfplay.loop import SelfPlay, SelfPlayConfig
    from se_gym.selfplay.prompts import Curriculum
    from se_gym.tasks import builtin_tasks
    from se_gym.tasks.sampler import LearnabilitySampler

    cfg = SelfPlayConfig(model="unused", curriculum="learnability", samples=4, functions=("abs", "cumsum", "sort"), eval="none")
    sp = SelfPlay(cfg, tmp_path / "run", progress=False, log=lambda m: None)
    done = [t for t in builtin_tasks("train", seed=0, functions=("abs", "cumsum"))][:2]
    rows = [{"task": done[0].id, "book": "closed", "sample": k, "reward": float(k < 2), "infrastructure": False} for k in range(4)]
    rows += [{"task": done[1].id, "book": "closed", "sample": k, "reward": 1.0, "infrastructure": k == 3} for k in range(4)]
    rows += [{"task": done[1].id, "book": "open", "sample": k, "reward": 0.0, "infrastructure": False} for k in range(4)]  # not rate_book
    (tmp_path / "run" / "round_001").mkdir(parents=True)
    (tmp_path / "run" / "round_001" / "solve.json").write_text(json.dumps({"train": [t.to_json() for t in done], "rows": rows}))
    pool = list(builtin_tasks("train", seed=1, functions=("abs", "sort")))[:4]  # (other ids: another seed)
    got = sp._learnability(2, pool)
    by_hand = LearnabilitySampler(pool, group_size=4)
    by_hand.observe(done[0], [1, 1, 0, 0])
    by_hand.observe(done[1], [1, 1, 1, None])
    assert got.weights() == pytest.approx(by_hand.weights())
    weights = got.function_weights(sp.curriculum.keys)
    assert weights["abs"] > weights["cumsum"]  # half solved teaches; always solved does not
    groups = Curriculum(["abs", "cumsum", "sort"], 1, 0).prefer(30, 1, {}, weights=weights)
    count = {k: sum(g == (k,) for g in groups) for k in weights}
    assert count == {k: round(30 * w) for k, w in weights.items()} or sum(count.values()) == 30
    assert count["abs"] > count["cumsum"]


def test_selfplay_judges_answers_with_the_tasks_reference(tmp_path):
    """Issue 42 where self-play's rewards (the learnability curriculum's evidence) come from: an answer
    that names the library on a constant and computes its result in Python earns 1.0 when judged
    without the task's reference, 0 (library_unused) with it.  The solve step builds its items the
    same way (``Task.judge_item``)."""
    from _dependence_corpus import ORACLES, adapter_answers
    from se_gym.selfplay.loop import LocalEngine, SelfPlay, SelfPlayConfig
    from se_gym.tasks import builtin_tasks

    class Scripted(LocalEngine):  # generation scripted (no model); validation and judging real
        reply = ""

        def generate(self, prompts, n, temperature, max_tokens, seed):
            return [[self.reply] * n for _ in prompts]

    sp = SelfPlay(SelfPlayConfig(model="unused", library="seed:0", eval="none"), tmp_path / "run", progress=False, log=lambda m: None)
    sp.engine = Scripted(sp.library, sp.validation)
    try:
        for task in [t for t in builtin_tasks("train", seed=0) if t.id in ORACLES][:2]:
            sp.eval_tasks = [task]
            for kind, accuracy in (("reference", 1.0), ("unused", 0.0)):
                sp.engine.reply = adapter_answers(task, sp.library)[kind]
                assert sp.evaluate(1)["accuracy"] == accuracy, (task.id, kind)
    finally:
        sp.engine.close()


def test_rl_trainer_logs_zero_advantage_groups_and_tokens(init_dir):
    need_module("torch").set_num_threads(1)
    from se_gym.training.policy import Policy
    from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer

    pol = Policy.from_pretrained(init_dir, device="cpu")
    trainer = RLTrainer(pol, RLConfig(learning_rate=1e-3, group_size=4, minibatch_size=4), reward_fn=lambda p, r: [0.0] * len(r))
    prompts = [RLPrompt("Task: a\nAnswer:\n", "Task: a\nAnswer:\n")] * 8 + [RLPrompt("Task: b\nAnswer:\n", "Task: b\nAnswer:\n")] * 4
    responses = ["x1", "x2 y", "x3", "x4", "y1", "y2", "y3", "y4", "z1", "z2", "z3", "z4"]
    m = trainer.update(prompts, responses, [1, 0, 1, 0, 1, 1, 1, 1, None, 0, 0, 0])  # mixed, all pass, all fail (one unjudged)
    assert m["zero_adv_groups"] == pytest.approx(2 / 3)
    lengths = pol.count_tokens(responses)
    assert m["tokens"] == sum(lengths) and m["tokens_total"] == sum(lengths)
    assert m["reward_per_1k_tokens"] == pytest.approx(1000 * 6 / sum(lengths))
    again = trainer.update(prompts[:4], responses[:4], [1, 1, 1, 1])
    assert again["zero_adv_groups"] == 1.0 and again["tokens_total"] == sum(lengths) + sum(lengths[:4])
