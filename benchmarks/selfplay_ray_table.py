"""The self-play demo's SFT self-play on a throw-away 2-node Ray cluster on this machine, beside the same
run in one process: the same seeds give the same run (each generation chunk is seeded as its part of the
whole batch), so the per-round tables should be identical.  Optionally the second node is stopped (its
process tree SIGKILLed) while round ``--kill-round`` of the first seed solves.

    OMP_NUM_THREADS=1 python benchmarks/selfplay_ray_table.py --base OUT/selfplay/base/model \
        --local /tmp/sp-settings --out /tmp/sp-ray --seeds 0 1 2 --rounds 10 --setting band [--kill-round 3]

``--local``: an OUT of ``benchmarks/selfplay_settings.py`` holding the in-process runs of the same
setting, seeds and rounds (``seedN/SETTING-sft``), or the ``OUT/selfplay`` of ``se-gym demo --selfplay
--rounds R`` (``seedN/results-rR.json``); the Ray runs go to ``--out`` (reruns resume).
Prints both per-round tables (valid proposals pooled over seeds, near-duplicates, coverage,
closed-book accuracy), the largest per-round differences, how many rounds decided exactly what the run in
one process decided, what the node loss cost, and whether any round's stage files are missing or a solver
row is counted twice.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ["RAY_AUTH_MODE"] = "disabled"  # the throw-away cluster has no token (read when Ray is imported)
STAGES = ("propose.json", "validate.json", "solve.json", "learn/DONE", "eval.json", "buffer.jsonl", "DONE")


def main() -> None:
    from se_gym.selfplay.experiment import SETTINGS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="weights of a base that writes tasks")
    ap.add_argument("--local", required=True, help="OUT of benchmarks/selfplay_settings.py with the same runs in one process")
    ap.add_argument("--out", required=True, help="folder of the Ray runs (reruns resume)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--setting", default="band", choices=list(SETTINGS))
    ap.add_argument("--kill-round", type=int, default=0, help="stop the second node while this round of the first seed solves (0: never)")
    args = ap.parse_args()

    import ray
    import torch

    from _ray_helpers import NodeCluster
    from se_gym.distributed import package_runtime_env
    from se_gym.selfplay import experiment as ex
    from se_gym.selfplay.ray_engine import RayEngine

    torch.set_num_threads(1)
    out = Path(args.out)
    t0 = time.monotonic()
    cluster = NodeCluster("sgsprt", head_cpus=3)
    engines: list = []
    events: list[str] = []
    try:
        cluster.add_node("node2", cpus=2)
        ray.init(address=cluster.address, runtime_env=package_runtime_env(), include_dashboard=False, log_to_driver=False)
        print(f"cluster of 2 nodes up in {time.monotonic() - t0:.0f} s", flush=True)
        node2 = {n["NodeID"] for n in ray.nodes() if n["Alive"] and "node2" in n["Resources"]}

        def engine_factory(config):
            engines.append(RayEngine.from_config(config, address=cluster.address, generators=2, judges=2, num_cpus=0.5, chunk=4))
            return engines[-1]

        def kill() -> None:
            engine = engines[-1]
            slots = engine.gen.nodes()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not any(slots[i] in node2 for i in engine.gen.busy() if i < len(slots)):
                time.sleep(0.005)
            n = cluster.kill("node2")
            events.append(f"{time.monotonic() - t0:.0f} s: stopped the second node ({n} processes SIGKILLed)")
            print(events[-1], flush=True)

        def log(msg: str) -> None:
            print(f"{time.monotonic() - t0:7.1f} s  {msg}", flush=True)
            if args.kill_round and msg.startswith(f"[round {args.kill_round}] solving") and not events:
                events.append("armed")
                threading.Thread(target=kill, daemon=True).start()

        ex._log = log  # the experiment's log lines, with the time since start
        exp = ex.MiniSelfPlay(out, ex.MiniSelfPlayConfig(setting=args.setting), progress=False, engine_factory=engine_factory)
        for seed in args.seeds:
            f = out / f"seed{seed}" / f"{args.setting}-sft-r{args.rounds}.json"
            if f.is_file():
                continue
            library, functions, train, test = exp.world(seed)
            t1 = time.monotonic()
            path, summaries = exp.selfplay(seed, Path(args.base), functions, "sft", out / f"seed{seed}", name=f"{args.setting}-sft",
                                           rounds=args.rounds)
            replaced = sum(e.gen.replacements for e in engines)
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(json.dumps({"final": exp.evaluate(path, library, test), "wall_s": time.monotonic() - t1, "rounds": summaries,
                                     "generators_replaced": replaced}))
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.close()
    report(args, out, Path(args.local), events)


def _rows(folder: Path, seeds, setting: str, rounds: int) -> list[dict]:
    from se_gym.selfplay.experiment import round_row

    out = []
    for seed in seeds:
        f = folder / f"seed{seed}" / f"{setting}-sft-r{rounds}.json"
        demo = folder / f"seed{seed}" / f"results-r{rounds}.json"  # se-gym demo --selfplay's OUT/selfplay
        if f.is_file():
            out.append({"rounds": {"sft_selfplay": [round_row(s) for s in json.loads(f.read_text())["rounds"]]}})
        elif demo.is_file():
            out.append({"rounds": {"sft_selfplay": json.loads(demo.read_text())["rounds"]["sft_selfplay"]}})
    return out


def _stages(run: Path, r: int) -> dict | None:
    """What a round of a run decided (proposals, verdicts, solver samples and rewards, the update's
    metrics, accuracy), wall times left out; None when the round is not there."""
    d = run / f"round_{r:03d}"
    if not (d / "DONE").is_file():
        return None
    read = lambda name: json.loads((d / name).read_text())  # noqa: E731
    return {"propose": [i["text"] for i in read("propose.json")["items"]], "validate": read("validate.json")["outcomes"],
            "solve": [(x["task"], x["book"], x["sample"], x["response"], x["reward"]) for x in read("solve.json")["rows"]],
            "learn": {k: v for k, v in read("learn/DONE").items() if k != "wall_s"}, "eval": read("eval.json")["accuracy"]}


def identical(local: Path, out: Path, seeds, setting: str, rounds: int) -> tuple[int, int, list[str]]:
    """Rounds whose stage files say the same in both runs: (identical, compared, the first stage that
    differs in each other round)."""
    same, n, diffs = 0, 0, []
    for seed in seeds:
        runs = [f / f"seed{seed}" / name for f, name in ((local, f"{setting}-sft"), (local, "sft_selfplay"), (out, f"{setting}-sft"))]
        a, b = next((x for x in runs[:2] if x.is_dir()), runs[0]), runs[2]
        for r in range(1, rounds + 1):
            x, y = _stages(a, r), _stages(b, r)
            if x is None or y is None:
                continue
            n += 1
            first = next((k for k in x if x[k] != y[k]), None)
            same += first is None
            if first:
                diffs.append(f"seed {seed} round {r}: {first}")
    return same, n, diffs


def report(args, out: Path, local: Path, events: list[str]) -> None:
    from se_gym.selfplay.experiment import per_round, render_rounds, sustained

    tables = {}
    for name, folder in (("in one process", local), ("2-node Ray cluster", out)):
        rows = _rows(folder, args.seeds, args.setting, args.rounds)
        tables[name] = per_round(rows, "sft_selfplay") if rows else []
        print(f"\n## {name}: {folder} ({len(rows)} seeds)")
        if rows:
            print(render_rounds(tables[name], []))
            ok, why = sustained(tables[name])
            print(f"sustained: {'SUSTAINED' if ok else 'NOT sustained'} ({why})")
    a, b = tables["in one process"], tables["2-node Ray cluster"]
    if a and b:
        diffs = [(x["round"], abs(x["acc_mean"] - y["acc_mean"]), max(x["acc_sd"], y["acc_sd"]), abs(x.get("valid_rate", 0) - y.get("valid_rate", 0)))
                 for x, y in zip(a, b)]
        print("\nper round |accuracy difference| (largest sd of the two) and |valid-rate difference|: "
              + "; ".join(f"r{r} {d:.2f} ({sd:.2f}), {v:.0%}" for r, d, sd, v in diffs))
    same, n, diffs = identical(local, out, args.seeds, args.setting, args.rounds)
    print(f"rounds identical to the run in one process (proposals, verdicts, solver samples and rewards, update, accuracy): {same} of {n}"
          + (f"; first differences: {', '.join(diffs[:6])}" if diffs else ""))
    for seed in args.seeds:  # nothing lost, nothing counted twice
        run = out / f"seed{seed}" / f"{args.setting}-sft"
        for d in sorted(run.glob("round_0*")):
            if d.name == "round_000":
                continue
            files = sum((d / f).is_file() for f in STAGES)
            rows = json.loads((d / "solve.json").read_text())["rows"] if (d / "solve.json").is_file() else []
            keys = [(x["task"], x["book"], x["sample"]) for x in rows]
            if files != len(STAGES) or len(keys) != len(set(keys)):
                print(f"seed {seed} {d.name}: {files}/{len(STAGES)} stage files, {len(keys) - len(set(keys))} rows twice")
    print("events: " + ("; ".join(e for e in events if e != "armed") or "none"))


if __name__ == "__main__":
    main()
