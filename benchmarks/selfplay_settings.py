"""Self-play that lasts (issue 45): each setting of :data:`se_gym.selfplay.experiment.SETTINGS` over rounds.

    python benchmarks/selfplay_settings.py --base OUT/selfplay/base/model --out /tmp/sp-settings \
        --seeds 0 1 2 --rounds 10 --settings plain budget mix novelty band [--rl plain band] [--set rehearsal=0.5]

``--base``: the weights of a base that writes tasks (``se-gym demo --selfplay`` builds one in
``OUT/selfplay/base/model``).  Per seed: the miniature's world (a fresh library and six functions),
curated Closed-SFT once, then one SFT self-play run per setting (and, for the settings named in
``--rl``, one Self-Play RL run), the policy proposing in every round.  Every run is its own folder
(``OUT/seedN/SETTING-sft``): reruns resume, and invocations with other settings can share an OUT.

Prints per setting the round table (valid proposals pooled over seeds, near-duplicate rate, library
coverage, closed-book accuracy mean ± sd and per seed), the verdict of the rule fixed before running
(:func:`se_gym.selfplay.experiment.sustained`), and the final accuracy against curated Closed-SFT
(paper ratio 57%); writes OUT/results.json and OUT/rounds-SETTING.png.
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path


def main() -> None:
    from se_gym.selfplay.experiment import SETTINGS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="weights of a base that writes tasks")
    ap.add_argument("--out", required=True, help="results folder (reruns resume)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    ap.add_argument("--rl", nargs="*", default=[], choices=list(SETTINGS), help="settings that also get a Self-Play RL run")
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                    help="SelfPlayConfig fields changed on top of each setting (VALUE as JSON), e.g. rehearsal=0.5; the runs are "
                         "named SETTING+KEY=VALUE")
    ap.add_argument("--report-only", action="store_true", help="run nothing, report what OUT holds")
    args = ap.parse_args()
    args.extra = {k: json.loads(v) for k, v in (x.split("=", 1) for x in args.set)}
    args.tag = "".join(f"+{x}" for x in args.set)

    import torch

    from se_gym.selfplay.experiment import MiniSelfPlay, MiniSelfPlayConfig

    torch.set_num_threads(1)
    out = Path(args.out)
    exp = MiniSelfPlay(out, MiniSelfPlayConfig(), progress=False)
    base = Path(args.base)
    if not args.report_only:
        for seed in args.seeds:
            sdir = out / f"seed{seed}"
            sdir.mkdir(parents=True, exist_ok=True)
            library, functions, train, test = exp.world(seed)
            if not (sdir / "curated.json").is_file():
                t0 = time.time()
                model = exp.curated(seed, base, library, train, sdir)
                _dump(sdir / "curated.json", {"final": exp.evaluate(model, library, test), "wall_s": time.time() - t0})
            runs = [(s, "sft") for s in args.settings] + [(s, "rl") for s in args.rl]
            for setting, regime in runs:
                f = sdir / f"{setting}{args.tag}-{regime}-r{args.rounds}.json"
                if f.is_file():
                    continue
                t0 = time.time()
                exp.cfg = replace(exp.cfg, setting=setting)
                path, summaries = exp.selfplay(seed, base, functions, regime, sdir, name=f"{setting}{args.tag}-{regime}", rounds=args.rounds,
                                               **args.extra)
                _dump(f, {"final": exp.evaluate(path, library, test), "wall_s": time.time() - t0, "rounds": summaries})
    report(out, args)


def _dump(path: Path, obj: dict) -> None:
    from se_gym.storage import write_json_atomic

    write_json_atomic(path, obj)


def report(out: Path, args: argparse.Namespace) -> None:
    from se_gym.selfplay.experiment import PAPER_RATIO, SETTINGS, _mean_sd, per_round, plot_rounds, render_rounds, round_row, sustained

    results: dict = {"rounds": args.rounds, "seeds": args.seeds, "settings": {}}
    curated = {}
    for seed in args.seeds:
        f = out / f"seed{seed}" / "curated.json"
        if f.is_file():
            curated[seed] = json.loads(f.read_text())["final"]
    cur_mean = sum(curated.values()) / len(curated) if curated else None
    print(f"{args.rounds} rounds, seeds {args.seeds}; curated Closed-SFT per seed {curated} (mean {cur_mean})")
    for setting in SETTINGS:
        per_seed: dict[int, dict] = {}
        finals: dict[str, list[float]] = {"sft": [], "rl": []}
        walls: dict[str, list[float]] = {"sft": [], "rl": []}
        for seed in args.seeds:
            for regime in ("sft", "rl"):
                f = out / f"seed{seed}" / f"{setting}{args.tag}-{regime}-r{args.rounds}.json"
                if not f.is_file():
                    continue
                res = json.loads(f.read_text())
                per_seed.setdefault(seed, {"rounds": {}})["rounds"][f"{regime}_selfplay"] = [round_row(s) for s in res["rounds"]]
                finals[regime].append(res["final"])
                walls[regime].append(res["wall_s"])
        if not per_seed:
            continue
        seeds = list(per_seed.values())
        sft, rl = per_round(seeds, "sft_selfplay"), per_round(seeds, "rl_selfplay")
        ok, why = sustained(sft) if sft else (False, "no SFT run")
        entry = {"sft_rounds": sft, "rl_rounds": rl, "sustained": ok, "why": why, "final": finals, "wall_s": walls,
                 "switches": SETTINGS[setting]}
        results["settings"][setting + args.tag] = entry
        print(f"\n## {setting}{args.tag} ({SETTINGS[setting] or 'no switch'}{' + ' + str(args.extra) if args.extra else ''}); "
              f"SFT seeds {len(finals['sft'])}, RL seeds {len(finals['rl'])}")
        print(render_rounds(sft, rl))
        print(f"sustained: {'SUSTAINED' if ok else 'NOT sustained'} ({why})")
        for regime in ("sft", "rl"):
            if finals[regime]:
                m, sd = _mean_sd(finals[regime])
                ratio = f"{m / cur_mean:.0%} of curated {cur_mean:.2f}" if cur_mean else "no curated"
                print(f"final closed-book ({regime}): {m:.2f} ± {sd:.2f} ({', '.join(f'{v:.2f}' for v in finals[regime])}); {ratio} "
                      f"(paper {PAPER_RATIO:.0%}); wall per run {min(walls[regime]):.0f}-{max(walls[regime]):.0f} s")
        plot_rounds(sft, rl, cur_mean, out / f"rounds-{setting}{args.tag}.png")
    results["curated"] = curated
    (out / f"results{args.tag}.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
