"""A plain Gymnasium loop over the vector env: a model answers N episodes per step, and the N
answers are judged together in one sandbox batch.

    python examples/gym_loop.py                          # a tiny random model, built on the spot
    python examples/gym_loop.py --model Qwen/Qwen3-0.6B --envs 8 --steps 4

The tiny model answers nonsense (its rewards are 0): it is there so that the loop runs anywhere in
seconds.  Any Hugging Face causal LM path or id works with --model (extra ``train``).
"""
from __future__ import annotations

import argparse
import tempfile

import gymnasium as gym

import se_gym  # noqa: F401  (registers SEBench-v0)
from se_gym.llm import SamplingParams, build_tiny_model, make_generator


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a Hugging Face model path or id (default: a tiny random model)")
    parser.add_argument("--envs", type=int, default=4, help="episodes judged together per step (default 4)")
    parser.add_argument("--steps", type=int, default=2, help="vector steps to run (default 2)")
    parser.add_argument("--max-tokens", type=int, default=64, help="tokens per answer (default 64)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="se-gym-tiny-") as tmp:
        model = args.model or str(build_tiny_model(tmp))
        generator = make_generator("hf", model, device="cpu")
        # the registered vector entry point: one task list, one library and one judge for all N episodes
        envs = gym.make_vec("SEBench-v0", num_envs=args.envs, max_turns=1)
        params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens, seed=0)
        try:
            obs, _ = envs.reset(seed=0)
            for step in range(args.steps):
                answers = [g.texts[0] for g in generator.generate(list(obs), params)]
                obs, rewards, terminated, truncated, infos = envs.step(answers)
                # finished episodes were reset in the same step: their last info is under "final_info"
                finished = infos.get("final_info", {})
                print(f"step {step}: rewards {rewards.tolist()}, finished {int((terminated | truncated).sum())}, "
                      f"statuses {list(finished.get('status', []))}")
        finally:
            envs.close()
            generator.close()


if __name__ == "__main__":
    main()
