"""A LoRA-trained agent resumes: saved, loaded into a fresh agent built on the base model, it gives the
same log-probs and generations, and trains on (a tiny locally built model; peft)."""
import pytest

from conftest import need_module

torch = need_module("torch", "training needs torch (pip install 'se-gym[train]')")
need_module("transformers", "training needs transformers (pip install 'se-gym[train]')")
need_module("peft", "LoRA needs peft (extra 'train')")

from se_gym import mint  # noqa: E402
from se_gym.agents import RLAgent, SFTAgent  # noqa: E402
from se_gym.agents.base import Observation, Trajectory  # noqa: E402
from se_gym.training import miniature as mini  # noqa: E402
from se_gym.training.policy import Policy  # noqa: E402
from se_gym.training.rl import RLConfig  # noqa: E402
from se_gym.training.sft import SFTConfig, apply_lora  # noqa: E402

LIB = mint(9)
LORA = SFTConfig(learning_rate=3e-2, epochs=1, batch_size=4, warmup_ratio=0.0, lora_rank=4, lora_alpha=8, seed=0)


@pytest.fixture(scope="module")
def trajectories():
    train, _ = mini.experiment_tasks(LIB, ["abs", "sort"], (2, 1), seed=0)
    out = []
    for t in train:
        obs = Observation(task=t, prompt=mini.render(LIB, t, "open", ["abs", "sort"]), book="open", split="train",
                          closed_prompt=mini.render(LIB, t, "closed", []))
        out += [Trajectory(obs, t.library_solution, 1.0), Trajectory(obs, "x = 1", 0.0)]
    return out


def _probe(policy, trajectories):
    prompts = [t.observation.closed_prompt for t in trajectories]
    batch = policy.encode(prompts, [t.response for t in trajectories])
    with torch.no_grad():
        lp = policy.token_logprobs(batch) * batch.response_mask
    return lp, policy.generate(prompts[:2], max_new_tokens=8)


def _adapters(policy):
    return {k: v.detach().clone() for k, v in policy.model.named_parameters() if "lora_" in k}


def test_a_lora_sft_agent_resumes_with_the_same_outputs_and_trains_on(init_dir, trajectories, tmp_path):
    agent = SFTAgent(Policy.from_pretrained(init_dir, device="cpu"), mode="closed", config=LORA, progress=False)
    agent.learn(trajectories)
    assert hasattr(agent.policy.model, "peft_config")
    agent.save(tmp_path / "agent")
    want = _probe(agent.policy, trajectories)

    fresh = SFTAgent(Policy.from_pretrained(init_dir, device="cpu"), mode="closed", config=LORA, progress=False)
    base = _probe(fresh.policy, trajectories)
    fresh.load(tmp_path / "agent")  # raised RuntimeError: the adapter was loaded into the plain model
    got = _probe(fresh.policy, trajectories)
    assert torch.equal(got[0], want[0]) and got[1] == want[1]
    assert not torch.equal(base[0], want[0])  # the adapter did change the model

    # and it trains on: only the adapters, from where they were
    trainable = [n for n, p in fresh.policy.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    before = _adapters(fresh.policy)
    fresh.learn(trajectories)
    after = _adapters(fresh.policy)
    assert set(after) == set(before) and any(not torch.equal(after[k], before[k]) for k in before)

    # loading again into a model that already has the adapter (a resume inside one process) also works
    fresh.load(tmp_path / "agent")
    assert torch.equal(_probe(fresh.policy, trajectories)[0], want[0])


def test_a_lora_rl_agent_resumes_and_trains_on(init_dir, trajectories, tmp_path):
    def lora_policy():
        policy = Policy.from_pretrained(init_dir, device="cpu")
        apply_lora(policy, rank=4, alpha=8)
        return policy

    cfg = RLConfig(learning_rate=3e-2, group_size=2, minibatch_size=4, kl_coef=0.05, seed=0)
    agent = RLAgent(lora_policy(), mode="closed", config=cfg)
    agent.learn(trajectories)
    agent.save(tmp_path / "agent")
    want = _probe(agent.policy, trajectories)

    for fresh_policy in (Policy.from_pretrained(init_dir, device="cpu"), lora_policy()):  # a plain base, or built as before
        fresh = RLAgent(fresh_policy, mode="closed", config=cfg)
        fresh.load(tmp_path / "agent")
        got = _probe(fresh.policy, trajectories)
        assert torch.equal(got[0], want[0]) and got[1] == want[1]
        assert fresh.trainer.step_count == 1
        before = _adapters(fresh.policy)
        m = fresh.learn(trajectories)
        assert m["updated_on"] == len(trajectories) and m["first_clip_frac"] == 0.0
        assert any(not torch.equal(v, before[k]) for k, v in _adapters(fresh.policy).items())
