"""The losses against values worked out by hand."""
import math

import pytest

from conftest import need_module

torch = need_module("torch", "the losses need torch (pip install 'se-gym[train]')")

from se_gym.training.losses import group_advantages, kl_penalty, masked_mean, policy_loss, sft_loss, token_logprobs


def t(x):
    return torch.tensor(x, dtype=torch.float32)


def test_token_logprobs_picks_the_target():
    logits = t([[[0.0, 0.0], [math.log(3.0), 0.0]]])  # p = (1/2, 1/2), (3/4, 1/4)
    lp = token_logprobs(logits, torch.tensor([[1, 0]]))
    assert lp.tolist()[0] == pytest.approx([math.log(0.5), math.log(0.75)])


def test_sft_loss_counts_response_tokens_only():
    lp = t([[-5.0, -1.0, -3.0], [-7.0, -2.0, -9.0]])
    mask = t([[0, 1, 1], [0, 1, 0]])  # prompt token and padding masked out
    loss, _ = sft_loss(lp, mask)
    assert float(loss) == pytest.approx((1 + 3 + 2) / 3)
    loss_seq, _ = sft_loss(lp, mask, aggregation="sequence")
    assert float(loss_seq) == pytest.approx(((1 + 3) / 2 + 2) / 2)
    # a change on a masked (prompt) position leaves the loss unchanged
    lp2 = lp.clone()
    lp2[0, 0] = -100.0
    assert float(sft_loss(lp2, mask)[0]) == pytest.approx(float(loss))


def test_masked_mean_rejects_unknown_aggregation():
    with pytest.raises(ValueError, match="aggregation"):
        masked_mean(t([1.0]), t([1.0]), aggregation="bogus")


def test_group_advantages_normalised_and_raw():
    r = t([1, 0, 0, 0, 1, 1, 1, 1])
    adv = group_advantages(r, group_size=4)
    # group 1: mean 0.25, population std sqrt(0.1875)
    std = math.sqrt(0.1875)
    assert adv[:4].tolist() == pytest.approx([0.75 / std, -0.25 / std, -0.25 / std, -0.25 / std], rel=1e-4)
    assert adv[4:].tolist() == pytest.approx([0, 0, 0, 0])  # all-correct group gives no signal
    raw = group_advantages(r, group_size=4, normalize=False)
    assert raw.tolist() == r.tolist()  # likelihood weighted by reward: failures get 0, no push down
    with pytest.raises(ValueError, match="groups of 3"):
        group_advantages(r, group_size=3)


@pytest.mark.parametrize("mode", ["grpo", "centered"])
@pytest.mark.parametrize("value,size", [(0.7, 8), (0.1, 8), (1 / 3, 8), (0.3, 4), (2 / 7, 3), (0.9, 16)])
def test_a_group_of_equal_rewards_gets_zero_advantages_whatever_the_value(value, size, mode):
    # float32 rounding left eight 0.7s a std of ~1e-8, and (r - mean) / (std + eps) made |A| up to 0.056
    r = t([value] * size + [0.0] * (size - 1) + [1.0])
    adv = group_advantages(r, group_size=size, mode=mode)
    assert adv[:size].tolist() == [0.0] * size
    assert all(a != 0.0 for a in adv[size:].tolist())  # a group whose rewards differ still teaches


def test_rewards_that_differ_by_one_test_in_many_are_not_taken_for_equal():
    r = t([0.7] * 7 + [0.7 + 1 / 1000])
    adv = group_advantages(r, group_size=8)
    assert adv[-1] > 2.0 and all(a < 0 for a in adv[:-1].tolist())


def test_drop_zero_advantage_drops_a_group_of_equal_fraction_rewards():
    from types import SimpleNamespace

    from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer

    policy = SimpleNamespace(model=torch.nn.Linear(2, 2), device="cpu")  # never asked to encode: nothing is kept
    trainer = RLTrainer(policy, RLConfig(group_size=8), reward_fn=None)
    prompts = [RLPrompt("p", "p")] * 16
    rewards = [0.7] * 8 + [0.7, None, 0.7, 0.7, 0.7, 0.7, None, 0.7]  # the second group's baseline from its judged members
    metrics = trainer.update(prompts, ["r"] * 16, rewards)
    assert metrics["updated_on"] == 0 and metrics["nonzero_adv"] == 0.0


def test_clipped_vs_unclipped_surrogate_values():
    old = t([[0.0, math.log(0.5), math.log(0.5)]])
    new = t([[0.0, math.log(0.9), math.log(0.25)]])  # ratios (masked), 1.8, 0.5
    mask = t([[0, 1, 1]])
    adv = t([2.0])
    unclipped, s_u = policy_loss(new, old, adv, mask, clip_eps=None)
    assert float(unclipped) == pytest.approx(-(1.8 * 2 + 0.5 * 2) / 2)
    assert s_u["clip_frac"] == 0.0
    clipped, s_c = policy_loss(new, old, adv, mask, clip_eps=0.2)
    # positive advantage: min(1.8*2, 1.2*2) = 2.4; min(0.5*2, 0.8*2) = 1.0
    assert float(clipped) == pytest.approx(-(2.4 + 1.0) / 2)
    assert s_c["clip_frac"] == pytest.approx(0.5)
    neg, _ = policy_loss(new, old, t([-1.0]), mask, clip_eps=0.2)
    # negative advantage: min(-1.8, -1.2) = -1.8; min(-0.5, -0.8) = -0.8
    assert float(neg) == pytest.approx((1.8 + 0.8) / 2)
    asym, _ = policy_loss(new, old, adv, mask, clip_eps=0.2, clip_eps_high=0.5)
    assert float(asym) == pytest.approx(-(1.5 * 2 + 1.0) / 2)


def test_clipping_stops_the_gradient_beyond_the_trust_region():
    old = t([[math.log(0.5)]])
    mask = t([[1.0]])
    for clip, expect_zero in ((0.2, True), (None, False)):
        new = t([[math.log(0.9)]]).requires_grad_(True)  # ratio 1.8 > 1.2
        loss, _ = policy_loss(new, old, t([1.0]), mask, clip_eps=clip)
        loss.backward()
        assert (float(new.grad.abs().sum()) == 0.0) is expect_zero
    # at ratio 1 the unclipped gradient is the policy gradient -A * d log p
    new = old.clone().requires_grad_(True)
    policy_loss(new, old, t([3.0]), mask, clip_eps=None)[0].backward()
    assert float(new.grad) == pytest.approx(-3.0)


def test_kl_term_is_added_with_its_coefficient():
    lp = t([[math.log(0.5), math.log(0.2)]])
    ref = t([[math.log(0.25), math.log(0.2)]])
    mask = t([[1, 1]])
    kl_tokens = kl_penalty(lp, ref)
    # k3 at delta = log(0.5): 0.5 - log 0.5 - 1; equal log-probs give 0
    assert kl_tokens.tolist()[0] == pytest.approx([0.5 + math.log(2) - 1, 0.0], abs=1e-6)
    base, _ = policy_loss(lp, lp, t([1.0]), mask, clip_eps=0.2)
    with_kl, stats = policy_loss(lp, lp, t([1.0]), mask, clip_eps=0.2, ref_logprobs=ref, kl_coef=0.1)
    assert float(with_kl - base) == pytest.approx(0.1 * (0.5 + math.log(2) - 1) / 2, abs=1e-6)
    assert stats["kl"] == pytest.approx((0.5 + math.log(2) - 1) / 2, abs=1e-6)
    with pytest.raises(ValueError, match="ref_logprobs"):
        policy_loss(lp, lp, t([1.0]), mask, kl_coef=0.1)
