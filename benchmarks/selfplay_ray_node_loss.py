"""A self-play run of several rounds on a throw-away 2-node Ray cluster on this machine (``ray start
--head`` and a second ``ray start --address``), the second node stopped (its process tree SIGKILLed)
while one round is solving.  Prints each round's log line (wall time split by stage), then what the
run folder holds: per round the stage files, the solver rows against the tasks x books x samples
they should be, and the buffer's growth, so a lost round or a double count shows.

    OMP_NUM_THREADS=1 python benchmarks/selfplay_ray_node_loss.py [--rounds 6] [--kill-round 3] [--out DIR]

The model is the tiny random one (it writes no valid task: the rounds train on the seeded buffer's
top-up), so the figures are the machinery's, not learning.  Both nodes share this machine's cores.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ["RAY_AUTH_MODE"] = "disabled"  # the throw-away cluster has no token (read when Ray is imported)

LIBRARY = "seed:100"
FUNCTIONS = ("abs", "cumsum", "add")
STAGES = ("propose.json", "validate.json", "solve.json", "learn/DONE", "eval.json", "buffer.jsonl", "DONE")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=6, help="self-play rounds (default 6)")
    ap.add_argument("--kill-round", type=int, default=3, help="the round whose solving loses the second node (default 3)")
    ap.add_argument("--proposals", type=int, default=6, help="proposals per round (default 6)")
    ap.add_argument("--out", help="run folder (default: a temporary one)")
    args = ap.parse_args()
    import ray

    from _ray_helpers import NodeCluster
    from se_gym.distributed import package_runtime_env
    from se_gym.library import from_spec
    from se_gym.llm import build_tiny_model
    from se_gym.selfplay import TaskBuffer, Validator
    from se_gym.selfplay.loop import SelfPlay, SelfPlayConfig
    from se_gym.selfplay.miniature import proposal_answer
    from se_gym.selfplay.ray_engine import RayEngine

    tmp = Path(tempfile.mkdtemp(prefix="sgspnl-"))
    out = Path(args.out) if args.out else tmp / "run"
    tiny = build_tiny_model(tmp / "tiny", max_position_embeddings=512)
    lib = from_spec(LIBRARY)
    rng = random.Random(0)
    with Validator(lib) as v:
        seeds = [o.task for o in v.validate_texts([proposal_answer(lib, k, rng) for k in FUNCTIONS for _ in range(2)]) if o.accepted]
    TaskBuffer(seeds).save(tmp / "seed.jsonl")
    config = SelfPlayConfig(model=str(tiny), library=LIBRARY, prompts="miniature", regime="sft+rl", rounds=args.rounds,
                            proposals=args.proposals, samples=2, functions=FUNCTIONS, propose_max_tokens=40, solve_max_tokens=24,
                            eval="functions", min_tasks=3, seed_tasks=str(tmp / "seed.jsonl"), sft_epochs=1, sft_lr=1e-3, rl_lr=1e-4)
    t0 = time.monotonic()
    cluster = NodeCluster("sgspnl", head_cpus=3)
    try:
        cluster.add_node("node2", cpus=2)
        ray.init(address=cluster.address, runtime_env=package_runtime_env(), include_dashboard=False, log_to_driver=False)
        print(f"cluster of 2 nodes up in {time.monotonic() - t0:.0f} s", flush=True)
        engine = RayEngine.from_config(config, address=cluster.address, generators=2, judges=2, num_cpus=0.5, chunk=1)
        killed = threading.Event()
        node2 = {n["NodeID"] for n in ray.nodes() if n["Alive"] and "node2" in n["Resources"]}

        def kill() -> None:
            # as soon as a generation actor on the second node holds work (within 10 s), stop the node
            slots = engine.gen.nodes()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not any(slots[i] in node2 for i in engine.gen.busy() if i < len(slots)):
                time.sleep(0.005)
            busy = any(slots[i] in node2 for i in engine.gen.busy() if i < len(slots))
            n = cluster.kill("node2")
            print(f"{time.monotonic() - t0:7.1f} s  stopped the second node ({n} processes SIGKILLed; "
                  f"{'with' if busy else 'without'} generation in flight there)", flush=True)
            killed.set()

        def log(msg: str) -> None:
            print(f"{time.monotonic() - t0:7.1f} s  {msg}", flush=True)
            if msg.startswith(f"[round {args.kill_round}] solving") and not getattr(log, "armed", False):
                log.armed = True
                threading.Thread(target=kill, daemon=True).start()
            if msg.startswith(f"[round {args.kill_round}] learning"):
                killed.wait(120)  # the node goes within this round

        summaries = SelfPlay(config, out, engine, progress=False, log=log).run_all()
        lost = sum(j.sandbox.stats.replaced + j.sandbox.stats.infra_retries for j in engine.validator.judges())
        print(f"\nrounds finished: {[s['round'] for s in summaries]}; generation actors replaced {engine.gen.replacements}, "
              f"judge chunks redone or actors replaced {lost}; total {time.monotonic() - t0:.0f} s")
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.close()
    buffer = len(seeds)
    print("round  stage files  proposed  valid  solver rows (want)  duplicates  buffer (want)  wall by stage")
    for s in summaries[1:]:
        d = out / f"round_{s['round']:03d}"
        files = sum((d / f).is_file() for f in STAGES)
        solve = json.loads((d / "solve.json").read_text())
        keys = [(x["task"], x["book"], x["sample"]) for x in solve["rows"]]
        want = len(solve["train"]) * len(config.books) * config.samples
        buffer += s["valid"]
        walls = ", ".join(f"{k} {v:.0f}" for k, v in s["wall_s"].items())
        print(f"{s['round']:5d}  {files}/{len(STAGES):<10d}  {s['proposed']:8d}  {s['valid']:5d}  {len(keys):6d} ({want:3d})      "
              f"{len(keys) - len(set(keys)):10d}  {s['buffer']:6d} ({buffer:3d})   {walls} s")
    shutil.rmtree(tmp, ignore_errors=True)  # the tiny model, and the run unless --out kept it elsewhere


if __name__ == "__main__":
    main()
