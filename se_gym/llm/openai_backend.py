"""The ``openai`` backend: any OpenAI-compatible server (vLLM, SGLang, TGI, the OpenAI API), over httpx.

Chat prompts go to ``{base_url}/chat/completions``, text prompts to ``{base_url}/completions``; a
``base_url`` includes the API prefix, as in the OpenAI SDK (``http://127.0.0.1:8000/v1``).

Requests run on ``concurrency`` threads and are spread over ``base_urls`` (``least_busy``: the URL with
the fewest requests in flight, ties in turn; or ``round_robin``).  A refused connection, a timeout, a 429
or a 5xx is retried up to ``max_retries`` times after ``backoff * 2**attempt`` seconds, on another URL
when there is one; a failing URL sits out ``backoff * 2**(its failures in a row)`` seconds.  Other HTTP errors fail at once.

Reproducibility: with ``seed`` set, prompt ``i`` is sent with seed ``derive_seed(seed, i)``; vLLM honours
per-request seeds, so results are reproducible there; hosted APIs treat seeds as best effort.

Non-standard fields: ``enable_thinking`` is sent as ``chat_template_kwargs`` (vLLM and SGLang read it);
``return_token_ids=True`` asks a vLLM server for prompt and completion token ids.
"""
from __future__ import annotations

import itertools
import os
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Mapping, Sequence

from .base import (
    Completion,
    Generation,
    GenerationError,
    Generator,
    Prompt,
    SamplingParams,
    WeightUpdateUnsupported,
    check_prompts,
    derive_seed,
    is_chat,
)

# the documented defaults; every one is a keyword argument of OpenAIGenerator
DEFAULT_CONCURRENCY = 8
DEFAULT_MAX_RETRIES = 3
DEFAULT_BACKOFF_S = 0.5
DEFAULT_TIMEOUT_S = 120.0
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class OpenAIGenerator(Generator):
    """Client for OpenAI-compatible servers.

    ``base_urls``: one URL or several to balance over (default: ``$OPENAI_BASE_URL``).
    ``api_key``: sent as a bearer token (default: ``$OPENAI_API_KEY``; none sent when neither is set).
    ``concurrency``: requests in flight at once, over all URLs.  ``max_retries``: extra tries per request.
    ``backoff``: seconds before the first retry, doubled each time.  ``timeout``: seconds per request.
    ``logprobs``: ask for the sampled tokens' log-probs.  ``extra_body``: more JSON fields for every request.
    """

    backend = "openai"

    def __init__(
        self,
        model: str,
        base_urls: str | Sequence[str] | None = None,
        *,
        api_key: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff: float = DEFAULT_BACKOFF_S,
        timeout: float = DEFAULT_TIMEOUT_S,
        balance: str = "least_busy",
        logprobs: bool = True,
        return_token_ids: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        progress: bool | None = None,
    ) -> None:
        import httpx

        if base_urls is None:
            base_urls = os.environ.get("OPENAI_BASE_URL")
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls or ())
        if not urls or any(not isinstance(u, str) or not u.startswith(("http://", "https://")) for u in urls):
            raise ValueError(f"base_urls must be http(s) URLs (or set OPENAI_BASE_URL), got {base_urls!r}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if max_retries < 0 or backoff < 0 or timeout <= 0:
            raise ValueError("max_retries and backoff must be >= 0 and timeout > 0")
        if balance not in ("least_busy", "round_robin"):
            raise ValueError(f"balance must be 'least_busy' or 'round_robin', got {balance!r}")
        self.model = model
        self.base_urls = [u.rstrip("/") for u in urls]
        self.concurrency, self.max_retries, self.backoff, self.timeout = concurrency, max_retries, backoff, timeout
        self.balance = balance
        self.logprobs, self.return_token_ids = logprobs, return_token_ids
        self.extra_body = dict(extra_body or {})
        self.progress = progress
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(
            headers=headers,
            timeout=timeout,
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )
        self._lock = threading.Lock()
        self._in_flight: Counter[str] = Counter()
        self._resting_until: dict[str, float] = {}
        self._streak: Counter[str] = Counter()
        self._turn = itertools.count()
        self.requests: Counter[str] = Counter()  # per URL: requests sent
        self.failures: Counter[str] = Counter()  # per URL: retryable failures seen
        self.peak_in_flight = 0  # most requests in flight at once so far

    # -- balancing -------------------------------------------------------------------------------------
    def _acquire(self, avoid: str | None = None) -> str:
        with self._lock:
            now = time.monotonic()
            ready = [u for u in self.base_urls if self._resting_until.get(u, 0.0) <= now] or self.base_urls
            ready = [u for u in ready if u != avoid] or ready  # a retry goes elsewhere when it can
            start = next(self._turn) % len(ready)
            ordered = ready[start:] + ready[:start]  # rotating start: ties go round in turn
            url = ordered[0] if self.balance == "round_robin" else min(ordered, key=lambda u: self._in_flight[u])
            self._in_flight[url] += 1
            self.requests[url] += 1
            self.peak_in_flight = max(self.peak_in_flight, sum(self._in_flight.values()))
            return url

    def _release(self, url: str, failed: bool = False) -> None:
        with self._lock:
            self._in_flight[url] -= 1
            if not failed:
                self._streak[url] = 0
                return
            self.failures[url] += 1
            self._streak[url] += 1
            # a failing URL sits out backoff * 2**(failures in a row), so others take its share meanwhile
            self._resting_until[url] = time.monotonic() + self.backoff * 2 ** min(self._streak[url], 10)

    # -- requests --------------------------------------------------------------------------------------
    def _body(self, index: int, prompt: Prompt, params: SamplingParams) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {
            "model": self.model,
            "n": params.n,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
        }
        if params.seed is not None:
            body["seed"] = derive_seed(params.seed, params.first_index + index)
        if params.stop:
            body["stop"] = list(params.stop)
        if self.return_token_ids:
            body["return_token_ids"] = True
        if is_chat(prompt):
            body["messages"] = [dict(m) for m in prompt]
            if self.logprobs:
                body["logprobs"], body["top_logprobs"] = True, 0
            if params.enable_thinking is not None:
                body["chat_template_kwargs"] = {"enable_thinking": params.enable_thinking}
            path = "/chat/completions"
        else:
            body["prompt"] = prompt
            if self.logprobs:
                body["logprobs"] = 0
            path = "/completions"
        body.update(self.extra_body)
        return path, body

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        last, url = "", None
        for attempt in range(self.max_retries + 1):
            url = self._acquire(avoid=url)
            try:
                response = self._client.post(url + path, json=body)
            except httpx.TransportError as exc:
                self._release(url, failed=True)
                last = f"{url}: {type(exc).__name__}: {exc}"
            else:
                if response.status_code in RETRY_STATUS:
                    self._release(url, failed=True)
                    last = f"{url}: HTTP {response.status_code}: {_error_text(response)}"
                elif response.status_code >= 400:
                    self._release(url)
                    raise GenerationError(f"{url}{path}: HTTP {response.status_code}: {_error_text(response)}")
                else:
                    self._release(url)
                    return response.json()
            if attempt < self.max_retries:
                time.sleep(self.backoff * 2**attempt)
        raise GenerationError(f"request failed after {self.max_retries + 1} tries; last: {last}")

    def _one(self, index: int, prompt: Prompt, params: SamplingParams) -> Generation:
        path, body = self._body(index, prompt, params)
        data = self._post(path, body)
        choices = sorted(data.get("choices") or [], key=lambda c: c.get("index", 0))
        if len(choices) != params.n:
            raise GenerationError(f"server returned {len(choices)} choices for n={params.n}")
        completions = tuple(_parse_choice(c, data, chat=is_chat(prompt)) for c in choices)
        return Generation(prompt=prompt, completions=completions, model=self.model, backend=self.backend, params=params)

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        from ..progress import bar as tqdm  # plain lines off a terminal

        prompts = check_prompts(prompts)
        if self._client.is_closed:
            raise GenerationError("the client is closed")
        disable = (None if len(prompts) > 1 else True) if self.progress is None else not self.progress
        with ThreadPoolExecutor(max_workers=min(self.concurrency, max(1, len(prompts)))) as pool:
            futures = [pool.submit(self._one, i, p, params) for i, p in enumerate(prompts)]
            try:
                with tqdm(total=len(futures), desc="openai generate", unit="prompt", disable=disable) as bar:
                    for f in futures:
                        f.add_done_callback(lambda _f: bar.update(1))
                    return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise

    def update_weights(self, state_dict: Mapping[str, Any]) -> None:
        raise WeightUpdateUnsupported(
            "the openai backend talks to a server in another process and cannot load new weights; "
            "save a checkpoint and restart the server on it (se_gym.llm.VLLMServer), or sample with the hf/vllm backend"
        )

    def close(self) -> None:
        self._client.close()


def _error_text(response: Any) -> str:
    try:
        data = response.json()
        err = data.get("error", data) if isinstance(data, dict) else data
        msg = err.get("message", err) if isinstance(err, dict) else err
    except ValueError:
        msg = response.text
    return " ".join(str(msg).split())[:300]


def _parse_choice(choice: Mapping[str, Any], response: Mapping[str, Any], *, chat: bool) -> Completion:
    if chat:
        text = (choice.get("message") or {}).get("content") or ""
        content = (choice.get("logprobs") or {}).get("content")
        logprobs = tuple(float(t["logprob"]) for t in content) if content is not None else None
        prompt_ids = response.get("prompt_token_ids")
    else:
        text = choice.get("text") or ""
        token_logprobs = (choice.get("logprobs") or {}).get("token_logprobs")
        logprobs = tuple(float(x) for x in token_logprobs) if token_logprobs is not None else None
        prompt_ids = choice.get("prompt_token_ids", response.get("prompt_token_ids"))
    ids = choice.get("token_ids")
    return Completion(
        text=text,
        token_ids=tuple(int(t) for t in ids) if ids is not None else None,
        logprobs=logprobs,
        finish_reason=str(choice.get("finish_reason") or "stop"),
        prompt_token_ids=tuple(int(t) for t in prompt_ids) if prompt_ids is not None else None,
    )
