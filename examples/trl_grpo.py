"""TRL's GRPOTrainer on SEBench-v0's tasks: each completion is judged by se-gym's sandboxed judge,
and the verdict is the reward (``se_gym.integrations.trl.SEBenchReward``).

    python examples/trl_grpo.py                          # a tiny random model, 2 steps on the CPU
    python examples/trl_grpo.py --model Qwen/Qwen3-0.6B --tasks 256 --steps 200

Needs the extras ``train``, ``trl`` and ``hf``.  The tiny model earns no reward (it answers
nonsense): it is there so that the whole loop, generation -> judge -> policy update, runs in a
minute anywhere.  docs/integrations/trl.md has the tool-calling variant (``environment_factory``).
"""
from __future__ import annotations

import argparse
import os
import tempfile

import gymnasium as gym

import se_gym  # noqa: F401  (registers SEBench-v0)
from se_gym.integrations.trl import SEBenchReward, make_dataset
from se_gym.llm import build_tiny_model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a Hugging Face model path or id (default: a tiny random model)")
    parser.add_argument("--tasks", type=int, default=4, help="train tasks in the dataset (default 4)")
    parser.add_argument("--steps", type=int, default=2, help="GRPO steps (default 2)")
    parser.add_argument("--max-tokens", type=int, default=32, help="tokens per completion (default 32)")
    args = parser.parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    # the environment's own task list and library: the tasks an agent meets in SEBench-v0
    env = gym.make("SEBench-v0", split="train")
    tasks, library = env.unwrapped.tasks[: args.tasks], env.unwrapped.library
    env.close()
    reward = SEBenchReward(library)  # strict profile, binary reward, the local sandbox
    with tempfile.TemporaryDirectory(prefix="se-gym-grpo-") as tmp:
        model = args.model or str(build_tiny_model(os.path.join(tmp, "tiny")))
        config = GRPOConfig(
            output_dir=os.path.join(tmp, "out"), per_device_train_batch_size=2, num_generations=2,
            max_completion_length=args.max_tokens, max_steps=args.steps, logging_steps=1, report_to=[],
            use_cpu=args.model is None, save_strategy="no", bf16=False, learning_rate=1e-5,
        )
        # plain-text prompts: any causal LM works, chat template or not
        dataset = make_dataset(tasks, library, conversational=False)
        trainer = GRPOTrainer(model=model, args=config, train_dataset=dataset, reward_funcs=reward)
        try:
            trainer.train()
        finally:
            reward.close()
    for entry in trainer.state.log_history:
        if "reward" in entry:
            print(f"step {entry['step']}: reward {entry['reward']:.3f}, loss {entry.get('loss', float('nan')):.4f}")
    print(f"trained {trainer.state.global_step} steps")


if __name__ == "__main__":
    main()
