"""Throughput of se-gym's trainers on the demo's tiny model: SFT steps/s, RL step time, sampling rate.

    python benchmarks/training_throughput.py [--threads 1] [--device cpu] [--log tensorboard|wandb --log-dir DIR]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=40)
    from se_gym import metrics_log

    metrics_log.add_flags(parser)  # the trainers' per-step metrics (default dir: se_gym_bench/logs)
    args = parser.parse_args()
    with metrics_log.from_args(args, "se_gym_bench"):
        run(args)


def run(args) -> None:
    import torch

    from se_gym import metrics_log, mint
    from se_gym.bases import DemoConfig
    from se_gym.training import miniature as mini
    from se_gym.training.policy import Policy
    from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer
    from se_gym.training.sft import SFTConfig, SFTExample, train_sft

    torch.set_num_threads(args.threads)
    cfg = DemoConfig()
    with tempfile.TemporaryDirectory() as tmp:
        mini.build_tiny_model(Path(tmp) / "m", hidden=cfg.hidden, layers=cfg.layers)
        policy = Policy.from_pretrained(Path(tmp) / "m", device=args.device)
        corpus = [SFTExample(p, a) for p, a in mini.pretraining_corpus(args.steps * cfg.pretrain_batch, seed=0)]
        t0 = time.perf_counter()
        metrics_log.set_run("sft")
        train_sft(policy, corpus, SFTConfig(learning_rate=1e-3, batch_size=cfg.pretrain_batch), progress=False)
        dt = time.perf_counter() - t0
        print(f"SFT: {args.steps / dt:.2f} steps/s at batch {cfg.pretrain_batch} ({args.steps * cfg.pretrain_batch / dt:.0f} examples/s)")

        lib = mint(1)
        train, _ = mini.experiment_tasks(lib, list(mini.EXPERIMENT_POOL[:8]), (2, 1), seed=0)
        prompts = [mini.render(lib, t, "open", mini.EXPERIMENT_POOL[:8]) for t in train]
        t0 = time.perf_counter()
        out = policy.generate(prompts, n=4, temperature=1.0, max_new_tokens=cfg.max_new_tokens)
        dt = time.perf_counter() - t0
        print(f"sampling: {sum(len(g) for g in out) / dt:.1f} answers/s ({len(prompts)} prompts x 4, {cfg.max_new_tokens} new tokens max)")

        trainer = RLTrainer(policy, RLConfig(learning_rate=1e-3, group_size=4, ppo_epochs=cfg.rl_ppo_epochs, minibatch_size=32, max_new_tokens=cfg.max_new_tokens, drop_zero_advantage=False),
                            reward_fn=lambda ps, rs: [float("zwc." in r) for r in rs])
        t0 = time.perf_counter()
        metrics_log.set_run("rl")
        trainer.step([RLPrompt(p, p) for p in prompts])
        print(f"RL step ({len(prompts)} prompts x 4, {cfg.rl_ppo_epochs} PPO epochs): {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
