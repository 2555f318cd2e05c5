"""One SFT step and one RL (GRPO) step of se-gym's own trainers on CUDA.

Needs only torch, transformers and this repository (no vLLM, Ray, sandbox daemon or hub access):
the model is a tiny one built here from scratch, the reward is computed in-process.

    python examples/gpu_check.py            # fails loudly without a CUDA device
    python examples/gpu_check.py --device cpu   # the same code on CPU
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()

    import torch

    from se_gym import mint
    from se_gym.training import miniature as mini
    from se_gym.training.policy import Policy
    from se_gym.training.rl import RLConfig, RLPrompt, RLTrainer
    from se_gym.training.sft import SFTConfig, SFTExample, train_sft

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("FAIL: no CUDA device visible to torch", torch.__version__, file=sys.stderr)
        return 1
    print(f"torch {torch.__version__}, device {args.device}" + (f" ({torch.cuda.get_device_name(0)})" if args.device.startswith("cuda") else ""))
    with tempfile.TemporaryDirectory() as tmp:
        mini.build_tiny_model(Path(tmp) / "m", seed=0, hidden=256, layers=4, heads=4)
        policy = Policy.from_pretrained(Path(tmp) / "m", device=args.device)
        print("model dtype", next(policy.model.parameters()).dtype)
        lib = mint(1)
        train, _ = mini.experiment_tasks(lib, ["abs", "cumsum", "sort", "flip"], (4, 1), seed=0)
        prompts = [mini.render(lib, t, "closed", []) for t in train]
        examples = [SFTExample(p, t.library_solution) for p, t in zip(prompts, train)]

        t0 = time.time()
        before = [p.detach().clone() for p in policy.model.parameters()]
        m = train_sft(policy, examples, SFTConfig(learning_rate=1e-3, epochs=1, batch_size=len(examples), warmup_ratio=0.0), progress=False)
        changed = any(not torch.equal(a, b.detach()) for a, b in zip(before, policy.model.parameters()))
        print(f"SFT step: loss {m['loss'][0]:.3f}, weights changed: {changed}, {time.time() - t0:.2f} s")
        if not changed:
            print("FAIL: SFT did not change the weights", file=sys.stderr)
            return 1

        answers = {t.id: t.library_solution for t in train}
        reward = lambda ps, rs: [float(r.strip() == answers[p.key]) for p, r in zip(ps, rs)]  # noqa: E731
        trainer = RLTrainer(policy, RLConfig(learning_rate=1e-3, group_size=4, ppo_epochs=2, minibatch_size=8, max_new_tokens=24, kl_coef=0.01, drop_zero_advantage=False), reward)
        t0 = time.time()
        rl = trainer.step([RLPrompt(p, p, t.id) for p, t in zip(prompts, train)])
        print(f"RL step: {rl}, {time.time() - t0:.2f} s")
        if "pg_loss" not in rl:
            print("FAIL: the RL step made no update", file=sys.stderr)
            return 1
    print("OK: one SFT and one RL step ran on", args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
