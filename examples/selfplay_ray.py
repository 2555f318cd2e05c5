"""Self-play on a Ray cluster: generation actors sample proposals and answers, judge pools run the
programs on the nodes, and the learner (this process) pushes its weights to the actors after each
round's update.

    python examples/selfplay_ray.py                                  # a local Ray cluster, a tiny model
    python examples/selfplay_ray.py --address auto --out runs/sp-ray  # a cluster started by `ray start`
    python examples/selfplay_ray.py --model runs/base --rounds 6 --proposals 12

The tiny random model writes no valid task and solves nothing: it is there so that every stage of a
round runs anywhere in a minute or two.  The buffer starts with a few tasks written by the
miniature's task writer, so each round has something to solve and learn from.  The same run from
the command line is ``se-gym selfplay --ray-address ...`` (docs/selfplay.md).
"""
from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from se_gym.distributed import connect, shutdown
from se_gym.library import from_spec
from se_gym.llm import build_tiny_model
from se_gym.selfplay import TaskBuffer, Validator
from se_gym.selfplay.loop import SelfPlay, SelfPlayConfig
from se_gym.selfplay.miniature import proposal_answer
from se_gym.selfplay.ray_engine import RayEngine

FUNCTIONS = ("abs", "cumsum", "add")


def seed_buffer(library: str, path: Path) -> int:
    """Two validated tasks per function, written by the miniature's task writer, saved as the buffer's start."""
    lib = from_spec(library)
    rng = random.Random(0)
    with Validator(lib) as v:
        outcomes = v.validate_texts([proposal_answer(lib, k, rng) for k in FUNCTIONS for _ in range(2)])
    tasks = [o.task for o in outcomes if o.accepted]
    TaskBuffer(tasks).save(path)
    return len(tasks)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", help="a Ray cluster to join ('auto' or HOST:PORT; default: start one in this process)")
    parser.add_argument("--model", help="the starting model (default: a tiny random model)")
    parser.add_argument("--out", help="run folder (reruns resume; default: a temporary folder)")
    parser.add_argument("--rounds", type=int, default=2, help="self-play rounds (default 2)")
    parser.add_argument("--proposals", type=int, default=4, help="tasks proposed per round (default 4)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="se-gym-sp-") as tmp:
        model = args.model or str(build_tiny_model(Path(tmp) / "tiny", max_position_embeddings=512))
        library = "seed:100"
        n_seed = seed_buffer(library, Path(tmp) / "seed.jsonl")
        config = SelfPlayConfig(model=model, library=library, prompts="miniature", regime="sft", rounds=args.rounds,
                                proposals=args.proposals, samples=2, functions=FUNCTIONS, min_tasks=3,
                                seed_tasks=str(Path(tmp) / "seed.jsonl"), eval="functions", eval_limit=6,
                                propose_max_tokens=40, solve_max_tokens=24, sft_epochs=1, sft_lr=1e-3)
        # a local cluster with 4 logical CPUs: two generation actors and the judge pools of one node
        started = connect(args.address, **({} if args.address else {"num_cpus": 4}))
        try:
            engine = RayEngine.from_config(config, address=args.address, generators=2, judges=1, num_cpus=0.5)
            run = SelfPlay(config, args.out or Path(tmp) / "run", engine, progress=False)
            summaries = run.run_all()  # (closes the engine)
        finally:
            if started:
                shutdown()
        print(f"seed tasks {n_seed}")
        for s in summaries[1:]:
            acc = s["closed_book_acc"]
            print(f"round {s['round']}: valid {s['valid']}/{s['proposed']}, trained on {s['train_tasks']} tasks, "
                  f"closed-book acc {'-' if acc is None else f'{acc:.2f}'}, wall {sum(s['wall_s'].values()):.1f} s")


if __name__ == "__main__":
    main()
