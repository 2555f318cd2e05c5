"""The task sampler in the demo's miniature (issue 44): uniform vs learnability, Closed-RL, same token budget.

Per base (``--base small``: the demo's CPU default; ``--base wide``: the base the RL-gap numbers were
measured on) and per seed (the demo's world: a fresh minted library, 10 functions, 40 train and 30
held-out questions), each task sampler picks ``--tasks`` of the 40 train questions per RL iteration;
each is answered ``group`` (4) times with the docs (Closed-RL: updates on the query-only prompt), until
the run's answers reach ``--budget`` tokens.  Two variants per sampler: standard Closed-RL (clip +
group-normalised advantage, where a group that all passes or all fails teaches nothing) and the
RL-gap grid's no clip + no advantage.  Everything runs through ``se-gym demo --rl-ablation --sampler S
--rl-tasks K --rl-token-budget B`` (the same code, in ``OUT/ablation-<sampler>-k<K>-t<B>/``), so each run
resumes after a kill; the demo's base and per-seed stages in OUT are reused (made if missing).

Reported per base, sampler, variant and seed: the share of zero-advantage groups (mean over the run's
iterations), of samples with a non-zero advantage, answer tokens generated and per answer, closed-book
accuracy (held-out and train questions) at half the budget and at the end, and held-out accuracy per
1,000 generated tokens; then the RL-gap verdict of each sampler (the grid's own rule) and the sampler's.
And per seed, what any sampler could find at the start: the base answers each train question 16 times
with the docs at T = 1.0; from those pass rates, the zero-advantage share expected under uniform draws
and under an oracle that knows every rate and draws the best ``--tasks`` (``OUT/sampler_ceiling_<base>.json``).

The rules, fixed here before any run:
* the issue's goal: standard Closed-RL under learnability has at most 30% zero-advantage groups, on
  every seed (mean over its iterations);
* "learnability helps": standard Closed-RL under learnability ends above uniform closed book on held-out
  questions on every seed, and by at least 0.05 on average, at the same token budget.

    nice -n 10 python benchmarks/task_sampler.py --base small --out runs/small [--seeds 0 1 2] [--jobs 2]
    python benchmarks/task_sampler.py --base small --out runs/small --report-only   # the table from what ran

Wall times are of this invocation on whatever else the machine runs.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SAMPLERS = ("uniform", "learnability")
VARIANTS = ("rl_std", "rl_noclip_noadv")
GOAL_ZERO_ADV = 0.30
MIN_GAIN = 0.05


def _mean(v):
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def run_summary(curve: list[dict], budget: int, group: int) -> dict:
    """One run's numbers from its per-iteration records."""
    evaluated = [r for r in curve if r.get("closed_test") is not None]
    half = [r for r in evaluated if r["tokens_total"] <= budget / 2] or evaluated[:1]
    last = evaluated[-1]
    tokens = curve[-1]["tokens_total"]
    answers = sum(len(r["tasks"]) for r in curve)
    return {
        "iterations": len(curve),
        "zero_adv_groups": _mean([r.get("zero_adv_groups") for r in curve]),
        "nonzero_adv": _mean([r.get("nonzero_adv") for r in curve]),
        "reward": _mean([r.get("reward") for r in curve]),
        "tokens": tokens,
        "tokens_per_answer": tokens / max(1, answers * group),
        "half_test": half[-1]["closed_test"], "half_train": half[-1]["closed_train"],
        "end_test": last["closed_test"], "end_train": last["closed_train"],
        "test_per_1k_tokens": last["closed_test"] / (tokens / 1000) if tokens else None,
    }


def ceiling(demo, base: Path, seed: int, k: int, group: int, samples: int = 16) -> dict:
    """What any sampler could find at the start: the base answers every train question ``samples``
    times with the docs at the RL temperature (1.0); from each question's pass rate p, the share of
    zero-advantage groups of ``group`` answers expected under uniform draws, and under an oracle that
    knows every p and draws the ``k`` questions of highest P(signal)."""
    import torch

    from se_gym.agents import PolicyAgent
    from se_gym.tasks.sampler import p_signal

    torch.manual_seed(10_007 + seed)
    library, functions, train, test = demo.world(seed)
    runner = demo.runner(library, functions)
    try:
        agent = PolicyAgent(demo.policy(base), book="open", temperature=1.0, max_new_tokens=demo.cfg.max_new_tokens)
        traj = runner.rollout(agent, [o for o in runner.observe(train, "open") for _ in range(samples)])
    finally:
        demo.release(runner)
    rates = [_mean([t.reward for t in traj[i * samples:(i + 1) * samples]]) or 0.0 for i in range(len(train))]
    sig = sorted((p_signal(p, group) for p in rates), reverse=True)
    return {"rates": rates, "mixed": sum(0 < p < 1 for p in rates), "n": len(rates),
            "uniform_zero_adv": 1 - _mean(sig), "oracle_zero_adv": 1 - _mean(sig[:k])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", choices=("small", "wide"), required=True)
    ap.add_argument("--out", required=True, help="the demo's folder (its base and seed stages are reused)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--tasks", type=int, default=10, help="train questions per RL iteration (of 40)")
    ap.add_argument("--group", type=int, default=4, help="answers per question (RFC 013 measured groups of 8)")
    ap.add_argument("--budget", type=int, default=16_000, help="answer tokens per run")
    ap.add_argument("--cap", type=int, default=80, help="most iterations per run")
    ap.add_argument("--samplers", nargs="+", default=list(SAMPLERS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args(argv)

    import torch

    from se_gym import demo_ablation as abl
    from se_gym.demo import Demo, DemoOptions, demo_config

    torch.set_num_threads(1)
    t0 = time.time()
    opts = DemoOptions(seeds=tuple(args.seeds), base=args.base, device="cpu", rl_ablation=True, progress=False)
    cfg = demo_config(opts, "cpu")
    out = Path(args.out)
    per: dict = {}
    verdicts: dict = {}
    for sampler in args.samplers:
        every = max(1, (cfg.functions * cfg.train_per_function) // args.tasks)
        acfg = abl.AblationConfig(variants=VARIANTS, sampler=sampler, tasks_per_iteration=args.tasks, token_budget=args.budget,
                                  iterations=args.cap, eval_every=every, group=args.group)
        with Demo(out, cfg, device="cpu", progress=False, rl=False) as demo:
            demo.bind(args.seeds)
            abl.run(demo, args.seeds, acfg, report_only=args.report_only, jobs=args.jobs)
            run_dir = out / abl.folder_name(acfg)
            verdicts[sampler] = json.loads((run_dir / "results.json").read_text())["verdict"]
            for seed in args.seeds:
                for v in VARIANTS:
                    curve = abl.load_curve(run_dir, seed, v)
                    if curve:
                        per[(sampler, v, seed)] = run_summary(curve, args.budget, acfg.group)

    ceilings = {}
    cfile = out / f"sampler_ceiling_{args.base}.json"
    saved = json.loads(cfile.read_text()) if cfile.is_file() else {}
    with Demo(out, cfg, device="cpu", progress=False, rl=False) as demo:
        for seed in args.seeds:
            key = f"{seed}/k{args.tasks}" + (f"/g{args.group}" if args.group != 4 else "")
            if key not in saved and not args.report_only:
                saved[key] = ceiling(demo, demo.base(), seed, args.tasks, args.group)
                from se_gym.storage import write_json_atomic

                write_json_atomic(cfile, saved)
            if key in saved:
                ceilings[seed] = saved[key]

    lines = [f"Base {args.base}; seeds {', '.join(map(str, args.seeds))}; {args.tasks} of 40 train questions per iteration, "
             f"group {args.group}, answer-token budget {args.budget} per run; wall {time.time() - t0:.0f} s this invocation.", "",
             "| sampler | variant | seed | iterations | zero-adv groups | non-zero adv samples | tokens (per answer) | "
             "closed held-out: half budget → end | closed train: half → end | held-out per 1k tokens |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (sampler, v, seed), s in sorted(per.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        lines.append(f"| {sampler} | {v} | {seed} | {s['iterations']} | {s['zero_adv_groups']:.2f} | {s['nonzero_adv']:.2f} | "
                     f"{s['tokens']} ({s['tokens_per_answer']:.1f}) | {s['half_test']:.2f} → {s['end_test']:.2f} | "
                     f"{s['half_train']:.2f} → {s['end_train']:.2f} | {s['test_per_1k_tokens']:.3f} |")
    lines.append("")
    for seed, c in ceilings.items():
        lines.append(f"- seed {seed}, the base with the docs at T = 1.0 (16 answers per train question): {c['mixed']} of {c['n']} questions "
                     f"mixed (0 < p < 1); expected zero-advantage groups of {args.group} at the start: uniform {c['uniform_zero_adv']:.2f}, "
                     f"an oracle that knows every p and draws the best {args.tasks} {c['oracle_zero_adv']:.2f}")
    for sampler, line in verdicts.items():
        lines.append(f"- RL gap with {sampler}: {line}")
    checks = []
    if all(("learnability", "rl_std", s) in per and ("uniform", "rl_std", s) in per for s in args.seeds):
        zero = [per[("learnability", "rl_std", s)]["zero_adv_groups"] for s in args.seeds]
        zero_u = [per[("uniform", "rl_std", s)]["zero_adv_groups"] for s in args.seeds]
        ok = all(z <= GOAL_ZERO_ADV for z in zero)
        checks.append(f"zero-advantage groups <= {GOAL_ZERO_ADV:.0%} under learnability (standard Closed-RL, every seed): "
                      f"{'MET' if ok else 'NOT met'} (learnability " + ", ".join(f"{z:.2f}" for z in zero)
                      + "; uniform " + ", ".join(f"{z:.2f}" for z in zero_u) + ")")
        gain = [per[("learnability", "rl_std", s)]["end_test"] - per[("uniform", "rl_std", s)]["end_test"] for s in args.seeds]
        ok = all(g > 0 for g in gain) and _mean(gain) >= MIN_GAIN
        checks.append(f"learnability helps standard Closed-RL (closed book, held-out, same token budget; ahead on every seed and "
                      f"by >= {MIN_GAIN}): {'YES' if ok else 'NO'} (gain per seed " + ", ".join(f"{g:+.2f}" for g in gain) + ")")
    lines += [f"- {c}" for c in checks]
    text = "\n".join(lines) + "\n"
    print(text)
    from se_gym.storage import write_json_atomic, write_text_atomic

    tag = f"{args.base}_k{args.tasks}_t{args.budget}" + (f"_g{args.group}" if args.group != 4 else "")
    write_text_atomic(out / f"sampler_report_{tag}.md", text)
    write_json_atomic(out / f"sampler_results_{tag}.json", {"runs": {"|".join(map(str, k)): v for k, v in per.items()},
                                                                 "verdicts": verdicts, "checks": checks, "ceilings": ceilings,
                                                                 "args": vars(args)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
