"""Tokenization masks, and checkpoint-then-resume reproducing an uninterrupted run (real tiny models)."""
import pytest

from conftest import need_module

torch = need_module("torch", "training needs torch (pip install 'se-gym[train]')")
need_module("transformers", "training needs transformers (pip install 'se-gym[train]')")

from se_gym import mint
from se_gym.training import miniature as mini
from se_gym.training.policy import Policy
from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer
from se_gym.training.sft import SFTConfig, SFTExample, train_sft

LIB = mint(9)


@pytest.fixture(scope="module")
def examples():
    train, _ = mini.experiment_tasks(LIB, ["abs", "sort", "flip"], (3, 1), seed=0)
    return [SFTExample(mini.render(LIB, t, "closed", []), t.library_solution) for t in train]


def _params(policy):
    return {k: v.detach().clone() for k, v in policy.model.state_dict().items()}


def test_encode_masks_everything_but_the_response(init_dir):
    policy = Policy.from_pretrained(init_dir, device="cpu")
    batch = policy.encode(["Task: a\nAnswer:\n", "Task: longer prompt here\nAnswer:\n"], ["```python\nx\n```", "y"])
    tok = policy.tokenizer
    for i, (p, r) in enumerate([("Task: a\nAnswer:\n", "```python\nx\n```"), ("Task: longer prompt here\nAnswer:\n", "y")]):
        n_p = len(tok(p)["input_ids"])
        n_r = len(tok(r, add_special_tokens=False)["input_ids"]) + 1  # + EOS
        mask = batch.response_mask[i]
        assert mask[: n_p - 1].sum() == 0  # no prompt token is a target
        assert mask.sum() == n_r  # every response token and the EOS are
        assert batch.input_ids[i, n_p + n_r - 1] == tok.eos_token_id
    assert batch.response_mask.shape[1] == batch.input_ids.shape[1] - 1


def test_sft_resume_after_interruption_matches_an_uninterrupted_run(init_dir, examples, tmp_path):
    cfg = SFTConfig(learning_rate=3e-3, epochs=3, batch_size=4, warmup_ratio=0.2, seed=1)
    straight = Policy.from_pretrained(init_dir, device="cpu")
    m_straight = train_sft(straight, examples, cfg, progress=False)

    first = Policy.from_pretrained(init_dir, device="cpu")
    train_sft(first, examples, cfg, checkpoint_dir=tmp_path / "ckpt", progress=False, stop_after_epochs=1)
    resumed = Policy.from_pretrained(init_dir, device="cpu")  # a new process would start like this
    torch.manual_seed(12345)  # resumption must not depend on the RNG state at start
    m_resumed = train_sft(resumed, examples, cfg, checkpoint_dir=tmp_path / "ckpt", progress=False)

    assert m_resumed["steps"] == m_straight["steps"] and m_resumed["loss"] == pytest.approx(m_straight["loss"], rel=1e-5)
    a, b = _params(straight), _params(resumed)
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    # and training did move the weights
    init = _params(Policy.from_pretrained(init_dir, device="cpu"))
    assert any(not torch.allclose(init[k], a[k]) for k in a)


def test_rl_checkpoint_then_resume_gives_the_same_state(init_dir, examples, tmp_path):
    prompts = [RLPrompt(e.prompt, e.prompt, key=e.response) for e in examples[:4]]

    def reward(ps, rs):  # deterministic: reward answers that mention the library
        return [float("zwc." in r) + 0.1 * len(r) % 1 for r in rs]

    cfg = RLConfig(learning_rate=1e-2, group_size=3, ppo_epochs=2, minibatch_size=4, max_new_tokens=12, kl_coef=0.05, drop_zero_advantage=False)
    straight = RLTrainer(Policy.from_pretrained(init_dir, device="cpu"), cfg, reward)
    straight.step(prompts)
    straight.step(prompts)

    first = RLTrainer(Policy.from_pretrained(init_dir, device="cpu"), cfg, reward)
    first.step(prompts)
    first.save(tmp_path / "rl")
    resumed = RLTrainer(Policy.from_pretrained(init_dir, device="cpu"), cfg, reward)
    assert resumed.load(tmp_path / "rl") and resumed.step_count == 1
    resumed.step(prompts)

    assert resumed.history == straight.history
    a, b = _params(straight.policy), _params(resumed.policy)
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    assert not RLTrainer(Policy.from_pretrained(init_dir, device="cpu"), cfg, reward).load(tmp_path / "nothing")


def test_bad_configs_are_rejected():
    with pytest.raises(ValueError, match="warmup_ratio"):
        SFTConfig(warmup_ratio=1.5)
    with pytest.raises(ValueError, match="clip_eps"):
        RLConfig(clip_eps=0.0)
    with pytest.raises(ValueError, match="kl_coef"):
        RLConfig(kl_coef=-1)


def test_lora_sft_trains_only_adapters_and_lowers_the_loss(init_dir, examples, tmp_path):
    need_module("peft", "peft is not installed (extra 'train')")
    policy = Policy.from_pretrained(init_dir, device="cpu")
    base = {k: v.clone() for k, v in policy.model.state_dict().items()}
    cfg = SFTConfig(learning_rate=1e-2, epochs=4, batch_size=4, warmup_ratio=0.0, lora_rank=4, lora_alpha=8, seed=0)
    metrics = train_sft(policy, examples, cfg, progress=False)
    trainable = [n for n, p in policy.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    assert metrics["loss"][-1] < metrics["loss"][0]
    # the frozen base weights did not move
    after = {k.replace(".base_layer", ""): v for k, v in policy.model.get_base_model().state_dict().items() if "lora_" not in k}
    assert set(after) == set(base)
    moved = [k for k, v in after.items() if not torch.equal(v, base[k])]
    assert not moved, moved[:3]
    policy.save(tmp_path / "adapter")
    assert (tmp_path / "adapter" / "adapter_config.json").exists()
