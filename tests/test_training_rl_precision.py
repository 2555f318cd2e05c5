"""RL's importance ratio before the first update is exactly 1: old, reference and new log-probs go
through one precision path (issue 20.4).

Computed in fp32 for the old log-probs and under bf16 autocast for the new ones, the ratio of an
unchanged policy was not 1 and PPO clipping fired on the first minibatch: exactly what the clipping
ablation measures.  Dropout active in one pass and not the other did the same.  These tests run the
bf16 autocast path on the CPU (the same code as on CUDA) with a tiny model that has attention dropout.
"""
from __future__ import annotations

from conftest import need_module

torch = need_module("torch", "RL needs torch")
need_module("transformers", "RL needs transformers")

import pytest  # noqa: E402

from se_gym.training.policy import Policy  # noqa: E402
from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer  # noqa: E402

PROMPTS = ["Given the list x, return the sum.", "Return the largest element of x.", "Sort x.", "Flip x."]
ANSWERS = ["def solve(x):\n    return zwc.sum(x)", "zwc.max(x)", "return sorted(x)", "x[::-1]"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from se_gym.llm.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("rlprec") / "m", d_model=64, n_head=2, n_layer=2, init_std=0.2, seed=1)


def _policy(model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # dropout in the attention: a pass in train mode and one in eval mode differ
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), attention_dropout=0.3)
    return Policy(model, AutoTokenizer.from_pretrained(str(model_dir)), device="cpu")


def _batch(groups: int, group_size: int):
    prompts, responses, rewards = [], [], []
    for g in range(groups):
        for j in range(group_size):
            prompts.append(RLPrompt(rollout=PROMPTS[g % 4], update=PROMPTS[g % 4], key=g))
            responses.append(ANSWERS[(g + j) % 4] * (1 + j % 3))  # different lengths: padding in the batch
            rewards.append(float(j % 2))
    return prompts, responses, rewards


def _bf16_spy(policy):
    """Record the dtype of every lm_head output (bf16 proves autocast is in force)."""
    seen = []
    head = policy.model.get_output_embeddings()
    head.register_forward_hook(lambda mod, inp, out: seen.append(out.dtype))
    return seen


def test_ratio_is_one_and_nothing_clips_on_the_first_minibatch_under_bf16(model_dir):
    policy = _policy(model_dir)
    seen = _bf16_spy(policy)
    # one epoch, one minibatch: every statistic is the first minibatch's; a tiny clip range so any
    # deviation of the ratio from 1 shows up as clipping
    cfg = RLConfig(learning_rate=1e-3, group_size=2, ppo_epochs=1, minibatch_size=64, clip=True, clip_eps=1e-3,
                   mixed_precision="bf16", drop_zero_advantage=False)
    trainer = RLTrainer(policy, cfg, reward_fn=lambda p, r: [0.0] * len(r))
    metrics = trainer.update(*_batch(4, 2))
    assert seen and all(d == torch.bfloat16 for d in seen), seen  # the bf16 path really ran, old and new
    assert metrics["ratio_mean"] == 1.0, metrics
    assert metrics["clip_frac"] == 0.0, metrics
    assert metrics["first_ratio_max_dev"] == 0.0 and metrics["first_clip_frac"] == 0.0, metrics


def test_first_minibatch_of_several_epochs_and_minibatches_with_a_reference_model(model_dir):
    policy = _policy(model_dir)
    cfg = RLConfig(learning_rate=1e-2, group_size=4, ppo_epochs=3, minibatch_size=3, clip=True, clip_eps=1e-3,
                   mixed_precision="bf16", kl_coef=0.1)
    trainer = RLTrainer(policy, cfg, reward_fn=lambda p, r: [0.0] * len(r))
    metrics = trainer.update(*_batch(3, 4))
    assert metrics["first_ratio_max_dev"] == 0.0 and metrics["first_clip_frac"] == 0.0, metrics
    assert metrics["clip_frac"] > 0.0, metrics  # later minibatches follow updated weights: clipping does bite
    assert metrics["kl"] >= 0.0


def test_bad_precision_is_refused():
    with pytest.raises(ValueError, match="mixed_precision"):
        RLConfig(mixed_precision="bf17")
