"""The hf backend and the tiny model, with real transformers on CPU."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest

from _llm_helpers import CHAT_PROMPTS, TEXT_PROMPTS, tiny_model_dir
from conftest import need_module
from se_gym.llm import Generation, SamplingParams, make_generator

torch = need_module("torch", "the hf backend needs torch (scripts/setup/llm.sh installs it)")
transformers = need_module("transformers", "the hf backend needs transformers")

GREEDY = SamplingParams(temperature=0, max_tokens=12)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_model_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def gen(model_dir):
    g = make_generator("hf", str(model_dir), batch_size=8, device="cpu")
    yield g
    g.close()


def test_core_imports_without_heavy_dependencies():
    code = "import sys, se_gym, se_gym.llm; bad = [m for m in ('torch', 'vllm', 'openai', 'httpx', 'ray') if m in sys.modules]; print(bad); sys.exit(bool(bad))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_tiny_model_loads_with_auto_classes(model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    assert model.config.vocab_size == len(tok)
    assert tok.pad_token_id is not None and tok.pad_token_id != tok.eos_token_id
    assert model.config.hidden_size // model.config.num_attention_heads >= 32
    messages = CHAT_PROMPTS[0]
    plain = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    no_think = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, enable_thinking=False)
    assert plain.endswith("<|im_start|>assistant\n") and "compute the sum" in plain
    assert no_think == plain + "<think>\n\n</think>\n\n"
    # special tokens are single ids and round-trip
    ids = tok("<|im_start|>user\nhi<|im_end|>", add_special_tokens=False)["input_ids"]
    assert ids[0] == tok.convert_tokens_to_ids("<|im_start|>") and ids[-1] == tok.eos_token_id
    assert tok.decode(tok("x = zwc.falekef([1, 2])")["input_ids"]) == "x = zwc.falekef([1, 2])"


def test_tiny_model_custom_corpus_and_bad_arguments(tmp_path):
    from se_gym.llm.tiny import build_tiny_model

    corpus = ["zwc.falekef(x) returns the absolute value"] * 50
    out = build_tiny_model(tmp_path / "m", corpus, vocab_size=320, d_model=64, n_head=2, n_layer=1)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(out)
    assert len(tok("zwc.falekef(x) returns")["input_ids"]) < len("zwc.falekef(x) returns")  # merges learned
    with pytest.raises(ValueError, match="head size"):
        build_tiny_model(tmp_path / "bad", corpus, d_model=64, n_head=4)
    with pytest.raises(ValueError, match="empty"):
        build_tiny_model(tmp_path / "bad2", [])


def test_batched_greedy_matches_one_by_one(gen, model_dir):
    assert gen.model_name == str(model_dir) and gen.model is not None and gen.tokenizer is not None
    prompts = TEXT_PROMPTS + CHAT_PROMPTS  # different lengths: the batch is left padded
    batched = gen.generate(prompts, GREEDY)
    assert len(batched) == len(prompts)
    for prompt, g in zip(prompts, batched):
        assert isinstance(g, Generation) and g.backend == "hf" and g.prompt == prompt and g.params == GREEDY
        assert g.model == str(model_dir)
        single = gen.generate([prompt], GREEDY)[0].completions[0]
        c = g.completions[0]
        assert c.token_ids == single.token_ids
        assert c.logprobs == pytest.approx(single.logprobs, abs=1e-4)
        assert c.text == single.text and c.finish_reason == "length" and len(c.token_ids) == GREEDY.max_tokens


def test_token_ids_and_logprobs_match_a_full_forward(gen):
    g = gen.generate([TEXT_PROMPTS[2], CHAT_PROMPTS[1]], GREEDY)
    for c in (x.completions[0] for x in g):
        ids = torch.tensor([c.prompt_token_ids + c.token_ids])
        with torch.no_grad():
            logp = torch.log_softmax(gen.model(ids).logits[0].float(), dim=-1)
        steps = logp[len(c.prompt_token_ids) - 1 : -1]  # the distribution that produced each new token
        assert steps.argmax(-1).tolist() == list(c.token_ids)  # greedy token is the most likely one
        picked = steps.gather(1, torch.tensor(c.token_ids)[:, None])[:, 0]
        assert picked.tolist() == pytest.approx(list(c.logprobs), abs=1e-4)
        assert all(lp <= 0 for lp in c.logprobs)
        assert c.text == gen.tokenizer.decode(list(c.token_ids), skip_special_tokens=True)


def test_chat_prompts_use_the_template_and_record_enable_thinking(gen):
    on = gen.generate(CHAT_PROMPTS[:1], SamplingParams(temperature=0, max_tokens=4, enable_thinking=True))[0]
    off = gen.generate(CHAT_PROMPTS[:1], SamplingParams(temperature=0, max_tokens=4, enable_thinking=False))[0]
    assert on.params.enable_thinking is True and off.params.enable_thinking is False
    expected = gen.tokenizer.apply_chat_template(CHAT_PROMPTS[0], tokenize=False, add_generation_prompt=True, enable_thinking=False)
    assert gen.tokenizer.decode(list(off.completions[0].prompt_token_ids)) == expected
    assert len(off.completions[0].prompt_token_ids) > len(on.completions[0].prompt_token_ids)
    text = gen.generate(["hello"], SamplingParams(temperature=0, max_tokens=2))[0].completions[0]
    assert gen.tokenizer.decode(list(text.prompt_token_ids)) == "hello"


def test_seeded_sampling_is_reproducible_and_batch_independent(gen):
    params = SamplingParams(temperature=1.0, top_p=0.95, max_tokens=10, n=3, seed=7)
    prompts = TEXT_PROMPTS + CHAT_PROMPTS
    first = gen.generate(prompts, params)
    gen.batch_size = 2
    try:
        second = gen.generate(prompts, params)
    finally:
        gen.batch_size = 8
    alone = gen.generate([prompts[3]], params)[0]  # index 0 instead of 3: a different stream
    for a, b in zip(first, second):
        assert [c.token_ids for c in a.completions] == [c.token_ids for c in b.completions]
    samples = [c.token_ids for c in first[0].completions]
    assert len(set(samples)) == 3  # the n samples differ
    other_seed = gen.generate(prompts, SamplingParams(temperature=1.0, top_p=0.95, max_tokens=10, n=3, seed=8))
    assert [c.token_ids for c in other_seed[0].completions] != samples
    assert [c.token_ids for c in alone.completions] != [c.token_ids for c in first[3].completions]
    # a chunk of the batch (a Ray worker's share), seeded as its part of it: the batch's samples
    tail = gen.generate(prompts[3:], replace(params, first_index=3))
    assert [[c.token_ids for c in g.completions] for g in tail] == [[c.token_ids for c in g.completions] for g in first[3:]]
    unseeded = [gen.generate(prompts[:1], SamplingParams(temperature=1.0, max_tokens=10))[0].completions[0].token_ids for _ in range(2)]
    assert unseeded[0] != unseeded[1]


def test_low_top_p_or_temperature_is_greedy(gen):
    greedy = [g.completions[0].token_ids for g in gen.generate(TEXT_PROMPTS, SamplingParams(temperature=0, max_tokens=8))]
    narrow = gen.generate(TEXT_PROMPTS, SamplingParams(temperature=1.0, top_p=1e-6, max_tokens=8, seed=1))
    cold = gen.generate(TEXT_PROMPTS, SamplingParams(temperature=1e-4, max_tokens=8, seed=1))
    hot = gen.generate(TEXT_PROMPTS, SamplingParams(temperature=1.0, max_tokens=8, seed=1))
    assert [g.completions[0].token_ids for g in narrow] == greedy
    assert [g.completions[0].token_ids for g in cold] == greedy
    assert [g.completions[0].token_ids for g in hot] != greedy


def test_stop_strings_and_eos(gen):
    full = gen.generate([TEXT_PROMPTS[0]], GREEDY)[0].completions[0]
    assert len(full.text) >= 6, full.text
    stop = full.text[3:6]
    cut = gen.generate([TEXT_PROMPTS[0]], SamplingParams(temperature=0, max_tokens=12, stop=(stop,)))[0].completions[0]
    assert cut.finish_reason == "stop"
    assert cut.text == full.text[: full.text.find(stop)]
    assert len(cut.token_ids) < len(full.token_ids) and full.token_ids[: len(cut.token_ids)] == cut.token_ids
    # an EOS id ends the completion (kept in token_ids, dropped from text as a special token)
    old = gen.eos_ids
    gen.eos_ids = [full.token_ids[1]]
    try:
        ended = gen.generate([TEXT_PROMPTS[0]], GREEDY)[0].completions[0]
    finally:
        gen.eos_ids = old
    assert ended.finish_reason == "stop" and ended.token_ids == full.token_ids[:2]


def test_update_weights_and_shared_model(model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    policy = AutoModelForCausalLM.from_pretrained(model_dir)
    from se_gym.llm.hf import HFGenerator

    shared = HFGenerator(policy, tok)  # a trainer's own model: no copy
    copy = HFGenerator(str(model_dir), device="cpu")
    before = copy.generate(TEXT_PROMPTS, GREEDY)
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    after_shared = shared.generate(TEXT_PROMPTS, GREEDY)
    assert [g.completions[0].token_ids for g in after_shared] != [g.completions[0].token_ids for g in before]
    with pytest.raises(ValueError, match="takes a state dict"):
        copy.update_weights(policy)  # one signature for every backend: a module is converted by the caller
    copy.update_weights(policy.state_dict())
    assert copy.weights_version == 1
    shared.update_weights(policy.state_dict())  # its own tensors: nothing copied, still a new version
    assert shared.weights_version == 1
    assert [g.completions[0].token_ids for g in copy.generate(TEXT_PROMPTS, GREEDY)] == [g.completions[0].token_ids for g in after_shared]
    copy.update_weights({k: v.clone() for k, v in policy.state_dict().items() if k != "lm_head.weight"})  # tied head
    with pytest.raises(ValueError, match="does not match"):
        copy.update_weights({"nope.weight": torch.zeros(1)})
    policy.train()
    shared.generate(TEXT_PROMPTS[:1], GREEDY)
    assert policy.training  # the trainer's mode is restored


def test_bad_input_is_a_one_line_error(gen):
    with pytest.raises(ValueError, match="single value"):
        gen.generate("just a string", GREEDY)
    with pytest.raises(ValueError, match="role"):
        gen.generate([[{"content": "no role"}]], GREEDY)
    with pytest.raises(ValueError, match="exceeds"):
        gen.generate(["x"], SamplingParams(max_tokens=5000))
    with pytest.raises(ValueError, match="temperature"):
        SamplingParams(temperature=-1)
    with pytest.raises(ValueError, match="top_p"):
        SamplingParams(top_p=0)
    with pytest.raises(ValueError, match="generation backend must be one of hf, vllm, openai; got .tgi."):
        make_generator("tgi", "m")
    with pytest.raises(ValueError, match="cannot load model"):
        make_generator("hf", "/nonexistent/model/dir")


def test_the_rollout_default_max_tokens_on_the_tiny_model_says_what_to_pass(model_dir, tmp_path):
    """`se-gym rollout` keeps max_tokens 8192 (room for a thinking model's answer); on the tiny model's
    2048 positions it stops with one line giving the --max-tokens that fits, not a traceback."""
    from se_gym.llm.base import ContextTooLong

    g = make_generator("hf", str(model_dir), device="cpu")
    try:
        with pytest.raises(ContextTooLong) as exc:
            g.generate(["x y z"], SamplingParams(max_tokens=8192))
    finally:
        g.close()
    room = int(str(exc.value).rsplit("--max-tokens ", 1)[1].rstrip(")"))
    assert "2048 positions" in str(exc.value) and 0 < room < 2048
    proc = subprocess.run([sys.executable, "-m", "se_gym.cli", "rollout", "--model", str(model_dir), "--backend", "hf",
                           "--limit", "1", "--n", "1", "--out", str(tmp_path / "r.jsonl")], capture_output=True, text=True, timeout=600)
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 2 and last.startswith("se-gym rollout: error: prompt 0 has") and "--max-tokens" in last, proc.stderr[-2000:]
