"""The RL ablation's switches against hand-computed values, and the ablation stage's resumption.

Loss switches: the advantage modes ("grpo" normalised, "centered", "reward" raw = no advantage)
and, through a real :class:`RLTrainer` update on a tiny model, which samples carry gradient and
which statistics are logged.  Resumption: ``se-gym demo --rl-ablation`` on a miniature small
enough for a test (real tiny model, real judge), killed inside a variant and between variants,
then rerun: nothing finished is redone and nothing is lost.
"""
from __future__ import annotations

import json
import math

import pytest

from conftest import need_module


def _torch():
    return need_module("torch")


def t(x):
    torch = _torch()
    return torch.tensor(x, dtype=torch.float32)


# -- advantage switches -------------------------------------------------------------------------
def test_advantage_modes_by_hand():
    from se_gym.training.losses import group_advantages

    r = t([1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0])
    # group 1: mean 0.5, population std 0.5; groups 2 and 3 are uniform
    grpo = group_advantages(r, 4, mode="grpo")
    assert grpo[:4].tolist() == pytest.approx([1, -1, -1, 1], rel=1e-4)
    assert grpo[4:].tolist() == [0.0] * 8  # all-correct and all-wrong groups teach nothing
    centered = group_advantages(r, 4, mode="centered")
    assert centered.tolist() == pytest.approx([0.5, -0.5, -0.5, 0.5] + [0.0] * 8)
    raw = group_advantages(r, 4, mode="reward")
    assert raw.tolist() == r.tolist()  # no advantage: every accepted sample is pushed up, even in a solved group
    assert group_advantages(r, 4, normalize=False).tolist() == raw.tolist()  # the old switch still means "reward"
    with pytest.raises(ValueError, match="advantage must be one of"):
        group_advantages(r, 4, mode="none")


def test_rlconfig_advantage_switch():
    from se_gym.training.rl import RLConfig

    assert RLConfig().advantage_mode == "grpo"
    assert RLConfig(normalize_advantages=False).advantage_mode == "reward"
    assert RLConfig(advantage="centered").advantage_mode == "centered"
    with pytest.raises(ValueError, match="advantage must be one of"):
        RLConfig(advantage="bogus")


def test_no_clip_no_advantage_is_reward_weighted_likelihood():
    """Unclipped with raw rewards, the gradient is -r * d log p per token at ratio 1, and stays
    proportional to the ratio beyond it; clipped, it stops at ratio 1 + eps."""
    from se_gym.training.losses import group_advantages, policy_loss

    _torch()
    old = t([[math.log(0.5), math.log(0.5)]])
    mask = t([[1, 1]])
    adv = group_advantages(t([1.0, 0.0]), 2, mode="reward")  # one accepted sample, one rejected
    for ratio, clip, expect in ((1.0, None, -0.5), (1.8, None, -0.9), (1.8, 0.2, 0.0)):
        new = (old + math.log(ratio)).repeat(2, 1).requires_grad_(True)
        loss, stats = policy_loss(new, old.repeat(2, 1), adv, mask.repeat(2, 1), clip_eps=clip)
        loss.backward()
        # token mean over 4 tokens: d/dlp of -ratio*A/4 = -ratio*A/4 per token of the accepted sample
        assert new.grad[0].tolist() == pytest.approx([expect * 0.5] * 2, abs=1e-6)
        assert new.grad[1].tolist() == [0.0, 0.0]  # reward 0: no push down
        assert stats["clip_frac"] == pytest.approx(0.5 if clip and ratio > 1.2 else 0.0)


def test_cut_after_code_block():
    from se_gym.training.rl import CutSampler, cut_after_code_block

    answer = "```python\ndef solve(x):\n    return zwc.f(x)\n```"
    assert cut_after_code_block(answer + "\njunk ```more") == answer
    assert cut_after_code_block("no block") == "no block"
    assert cut_after_code_block("```python\nunclosed") == "```python\nunclosed"

    class Fixed:
        synced = 0

        def sample(self, prompts, n, temperature, max_new_tokens):
            return [[answer + " zz"] * n for _ in prompts]

        def sync(self, model):
            self.synced += 1

    inner = Fixed()
    cut = CutSampler(inner)
    assert cut.sample(["p"], 2, 1.0, 8) == [[answer, answer]]
    cut.sync(None)
    assert inner.synced == 1


# -- a real update on a tiny model --------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_policy_dir(tmp_path_factory):
    need_module("transformers")
    torch = _torch()
    torch.set_num_threads(1)
    from se_gym.training import miniature as mini

    root = tmp_path_factory.mktemp("tiny")
    mini.build_tiny_model(root / "m", seed=0, hidden=64, layers=1, heads=2)
    return root / "m"


@pytest.mark.parametrize("advantage,clip,updated", [("grpo", True, 4), ("centered", True, 4), ("reward", False, 3)])
def test_trainer_update_switches(tiny_policy_dir, advantage, clip, updated):
    from se_gym.training.policy import Policy
    from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer

    pol = Policy.from_pretrained(tiny_policy_dir, device="cpu")
    cfg = RLConfig(learning_rate=1e-3, group_size=4, ppo_epochs=2, minibatch_size=4, clip=clip, advantage=advantage, track_kl=True)
    trainer = RLTrainer(pol, cfg, reward_fn=lambda p, r: [0.0] * len(r))
    prompts = [RLPrompt("Task: a\nAnswer:\n", "Task: a\nAnswer:\n")] * 4 + [RLPrompt("Task: b\nAnswer:\n", "Task: b\nAnswer:\n")] * 4
    responses = ["x1", "x2", "x3", "x4", "y1", "y2", "y3", "y4"]
    rewards = [1, 0, 1, 0, 1, 1, 1, 1] if advantage != "reward" else [1, 0, 1, 0, 1, 0, 0, 0]
    m = trainer.update(prompts, responses, rewards)
    # grpo/centered: the uniform group 2 gets A = 0 and is dropped; raw reward: only the 3 accepted samples
    assert m["updated_on"] == updated
    assert m["nonzero_adv"] == pytest.approx(updated / 8)
    assert m["kl_start"] > 0  # the weights moved away from the start
    assert 0.0 <= m["clip_frac"] <= 1.0
    if not clip:
        assert m["clip_frac"] == 0.0


# -- the ablation stage resumes -----------------------------------------------------------------
def _tiny_demo(out):
    from se_gym.demo import Demo, DemoConfig

    cfg = DemoConfig(hidden=64, heads=2, layers=1, pretrain_examples=64, pretrain_batch=16, functions=2, train_per_function=1,
                     test_per_function=1, samples=2, sft_epochs=1, max_new_tokens=24)
    return Demo(out, cfg, progress=False, rl=False)


def test_ablation_resumes_after_kills(tmp_path, monkeypatch):
    need_module("transformers")
    _torch().set_num_threads(1)
    from se_gym import demo_ablation as abl
    from se_gym.agents import RLAgent
    from se_gym.storage import ConfigMismatch

    calls = []
    real_learn = RLAgent._learn
    monkeypatch.setattr(RLAgent, "_learn", lambda self, traj: calls.append(1) or real_learn(self, traj))
    acfg = abl.AblationConfig(iterations=3, group=2, minibatch=4, ppo_epochs=1, max_new_tokens=24,
                              variants=("rl_std", "rl_noclip_noadv", "closed_sft"))
    demo = _tiny_demo(tmp_path)

    # a kill inside the first variant, after its first iteration
    a = abl.Ablation(demo, acfg)
    base = demo.base()
    demo_results = demo.run_seed(0, base)
    library, functions, train, test = demo.world(0)
    runner = demo.runner(library, functions)
    start = abl.VARIANTS["rl_std"]
    assert start.start == "base"
    assert a.run_variant(0, "rl_std", base, runner, train, test, stop_after=1) == {"stopped": 1}
    assert len(calls) == 1
    first = abl.load_curve(a.run_dir.path, 0, "rl_std")
    assert [r["iteration"] for r in first] == [1]
    assert set(first[0]) >= {"reward", "nonzero_adv", "clip_frac", "kl_start", "closed_train", "closed_test"}

    # rerun the whole stage: the variant continues at iteration 2, the next runs in full
    calls.clear()
    assert abl.run(demo, [0], acfg) == 0
    assert len(calls) == 2 + 3  # rl_std's 2 remaining iterations, rl_noclip_noadv's 3
    curve = abl.load_curve(a.run_dir.path, 0, "rl_std")
    assert [r["iteration"] for r in curve] == [1, 2, 3]
    assert curve[0] == first[0]  # the iteration done before the kill is kept, not redone
    results = json.loads((a.run_dir.path / "results.json").read_text())
    assert set(results["seeds"][0]["methods"]) == {"base", "rl_std", "rl_noclip_noadv", "closed_sft"}
    assert "clipping/advantage block internalization:" in results["verdict"]
    assert results["seeds"][0]["methods"]["closed_sft"] == {k: demo_results["methods"]["closed_sft"][k] for k in ("closed_test", "closed_train")}

    # a kill between variants: the finished ones are read back, nothing is trained again
    calls.clear()
    done = (a.run_dir.path / "seed0" / "rl_noclip_noadv" / "DONE").read_text()
    assert abl.run(demo, [0], acfg) == 0
    assert calls == []
    assert (a.run_dir.path / "seed0" / "rl_noclip_noadv" / "DONE").read_text() == done

    # another configuration in the same folder is refused, not mixed
    with pytest.raises(ConfigMismatch, match="iterations"):
        abl.Ablation(demo, abl.AblationConfig(iterations=4, group=2, minibatch=4, ppo_epochs=1, max_new_tokens=24,
                                              variants=acfg.variants))


def test_verdict_rule_is_fixed_and_honest():
    from se_gym.demo_ablation import summarize, verdict

    def seeds(std, free):
        return [{"methods": {"rl_std": {"closed_test": s}, "rl_noclip_noadv": {"closed_test": f}}} for s, f in zip(std, free)]

    ok = verdict(summarize(seeds([0.0, 0.1, 0.0], [0.5, 0.4, 0.3])), 0.10)
    assert "REPRODUCED" in ok and "+0.37" in ok and "3/3" in ok
    one_seed_behind = verdict(summarize(seeds([0.0, 0.5, 0.0], [0.6, 0.4, 0.6])), 0.10)
    assert "NOT reproduced" in one_seed_behind and "2/3" in one_seed_behind
    small_gap = verdict(summarize(seeds([0.0, 0.0, 0.0], [0.05, 0.05, 0.05])), 0.10)
    assert "NOT reproduced" in small_gap
    one_seed = verdict(summarize(seeds([0.0], [0.5])), 0.10)
    assert one_seed.startswith("clipping/advantage block internalization: INCONCLUSIVE (only 1 seed(s)")


def test_parallel_runs_give_what_one_process_gives(tmp_path):
    """``jobs`` > 1 trains the RL runs in separate processes: every iteration's logged numbers and
    the final table are those of the same grid trained one run after another in one process."""
    need_module("transformers")
    _torch().set_num_threads(1)
    import shutil

    from se_gym import demo_ablation as abl

    acfg = abl.AblationConfig(iterations=2, group=2, minibatch=4, ppo_epochs=1, max_new_tokens=24,
                              variants=("rl_std", "rl_noadv", "rl_noclip_noadv", "closed_sft"))
    serial = _tiny_demo(tmp_path / "serial")
    assert abl.run(serial, [0], acfg, jobs=1) == 0
    # the same base and demo stage (made once), the RL runs again, two processes at a time
    shutil.copytree(tmp_path / "serial", tmp_path / "parallel", ignore=shutil.ignore_patterns("ablation"))
    parallel = _tiny_demo(tmp_path / "parallel")
    assert abl.run(parallel, [0], acfg, jobs=2) == 0

    def numbers(root, name):
        return [{k: v for k, v in row.items() if k != "seconds"} for row in abl.load_curve(root / "ablation", 0, name)]

    for name in ("rl_std", "rl_noadv", "rl_noclip_noadv"):
        one, two = numbers(tmp_path / "serial", name), numbers(tmp_path / "parallel", name)
        assert [r["iteration"] for r in two] == [1, 2]
        assert two == one, name
    results = [json.loads((tmp_path / run / "ablation" / "results.json").read_text()) for run in ("serial", "parallel")]
    assert results[0]["summary"] == results[1]["summary"] and results[0]["verdict"] == results[1]["verdict"]
