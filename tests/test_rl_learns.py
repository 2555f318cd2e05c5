"""RL raises the reward of behaviour that is rewarded some of the time (issue 15).

This replaces an end-to-end test ("RL improves reward on tasks the base solves sometimes") that passed
on one machine only.  Measured on its base (16 seeded samples per task), 12 of its 15 train tasks were
never solved and 3 almost always: GRPO groups were all-0 or all-1, so there was no signal to learn from,
and the old `after > before` compared two independent 60-answer estimates (sd of the difference ~0.09).

Here the premise holds by construction of the reward, not of the outcome: the reward accepts the first
characters that make up ~40% of the base's own samples, so groups are mixed and the advantage is
non-zero.  The real trainer (sampling, GRPO advantage, clipped PPO update) must then lift the accepted
share by a margin far outside the sampling noise (128 seeded samples: sd ~0.045; margin 0.3).
"""
from collections import Counter

from conftest import need_module

torch = need_module("torch", "RL needs torch (pip install 'se-gym[train]')")
need_module("transformers", "RL needs transformers (pip install 'se-gym[train]')")


def test_rl_lifts_the_share_of_rewarded_samples(tmp_path):
    from se_gym.training import miniature as mini
    from se_gym.training.policy import Policy
    from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer

    torch.set_num_threads(1)
    mini.build_tiny_model(tmp_path / "m", seed=0, hidden=64, layers=1, heads=2)
    policy = Policy.from_pretrained(tmp_path / "m", device="cpu")
    prompts = [RLPrompt(f"Task: {t}\nAnswer:\n", f"Task: {t}\nAnswer:\n") for t in "ab"]

    def samples(n=64, seed=123):
        torch.manual_seed(seed)
        groups = policy.generate([p.rollout for p in prompts], n=n, temperature=1.0, max_new_tokens=3, batch_size=64)
        return [s for g in groups for s in g]

    base = samples()
    accepted, mass = set(), 0
    for first, count in Counter(s[:1] for s in base).most_common():
        if mass >= 0.4 * len(base):
            break
        accepted.add(first)
        mass += count
    share = lambda outs: sum(s[:1] in accepted for s in outs) / len(outs)  # noqa: E731
    before = share(base)
    assert 0.2 <= before <= 0.8, before  # groups will be mixed: the advantage is not zero

    cfg = RLConfig(learning_rate=2e-2, group_size=16, ppo_epochs=2, minibatch_size=16, clip=True, advantage="grpo",
                   temperature=1.0, max_new_tokens=3, seed=0)
    trainer = RLTrainer(policy, cfg, reward_fn=lambda ps, rs: [1.0 if r[:1] in accepted else 0.0 for r in rs])
    history = [trainer.step(prompts) for _ in range(15)]
    after = share(samples())
    assert after >= before + 0.3, (before, after, [h["reward"] for h in history])
