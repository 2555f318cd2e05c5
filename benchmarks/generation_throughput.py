"""Generated tokens per second of the tiny model (or a given one) with each generation backend.

    python benchmarks/generation_throughput.py                       # hf, vllm, openai on a fresh tiny model
    python benchmarks/generation_throughput.py --backends hf --prompts 64 --max-tokens 256
    python benchmarks/generation_throughput.py --model PATH --base-url http://127.0.0.1:8000/v1

Sampling runs at temperature 1; a random tiny model rarely emits EOS, so nearly every completion is
``max_tokens`` long.  Each backend does one warm-up
call, then ``--repeats`` timed calls; the best is printed.  ``openai`` starts a local vLLM server unless
``--base-url`` is given.  Start-up times are printed too.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from se_gym.llm import SamplingParams, make_generator  # noqa: E402


def prompts(n: int) -> list:
    words = ["import zwc\n", "The value of the array", "def solve(x):\n    return zwc.", "Sort the list"]
    out: list = []
    for i in range(n):
        text = f"{words[i % len(words)]} {i}"
        out.append(text if i % 2 else [{"role": "user", "content": text}])
    return out


def measure(name: str, gen, batch: list, params: SamplingParams, repeats: int) -> None:
    gen.generate(batch[:2], params)  # warm-up
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = gen.generate(batch, params)
        dt = time.perf_counter() - t0
        tokens = sum(len(c.token_ids or ()) for g in out for c in g.completions)
        best = max(best, tokens / dt)
        print(f"  {name}: {tokens} tokens in {dt:.2f}s = {tokens / dt:,.0f} tok/s", flush=True)
    print(f"{name:8s} best {best:,.0f} generated tok/s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="hf,vllm,openai", help="comma-separated: hf, vllm, openai")
    ap.add_argument("--model", help="checkpoint directory (default: build the tiny model)")
    ap.add_argument("--prompts", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--hf-batch-size", type=int, default=32)
    ap.add_argument("--concurrency", type=int, default=16, help="openai: requests in flight")
    ap.add_argument("--base-url", help="openai: an already running server (model name = --served-name)")
    ap.add_argument("--served-name", default="tiny")
    args = ap.parse_args()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]

    if args.model:
        model = args.model
    else:
        from se_gym.llm.tiny import build_tiny_model

        t0 = time.perf_counter()
        model = str(build_tiny_model(Path(tempfile.mkdtemp(prefix="tiny_llm_")) / "model"))
        print(f"tiny model built in {time.perf_counter() - t0:.1f}s: {model}")
    batch = prompts(args.prompts)
    params = SamplingParams(temperature=1.0, max_tokens=args.max_tokens, seed=0)
    print(f"{args.prompts} prompts x {args.max_tokens} max new tokens, {os.cpu_count()} CPUs, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")

    for name in backends:
        t0 = time.perf_counter()
        if name == "hf":
            gen = make_generator("hf", model, batch_size=args.hf_batch_size, progress=False)
        elif name == "vllm":
            gen = make_generator("vllm", model, dtype="float32", max_model_len=1024, progress=False)
        elif name == "openai":
            server = None
            url = args.base_url
            if url is None:
                from se_gym.llm.vllm_server import VLLMServer

                server = VLLMServer(model, served_model_name=args.served_name, dtype="float32", max_model_len=1024).start()
                url = server.url
            gen = make_generator("openai", args.served_name, base_urls=url, concurrency=args.concurrency,
                                 max_retries=2, backoff=0.5, timeout=300.0, return_token_ids=True, progress=False)
        else:
            print(f"unknown backend {name!r}", file=sys.stderr)
            return 2
        print(f"{name}: ready in {time.perf_counter() - t0:.1f}s", flush=True)
        try:
            measure(name, gen, batch, params, args.repeats)
        finally:
            gen.close()
            if name == "openai" and server is not None:
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
