"""Memory agents in the demo's miniature (issue 34): closed book vs a memory agent vs open book.

Per base (the demo's small CPU base, ``today``, and the one pre-trained also on reading retrieved
experience, ``experience``: :func:`se_gym.bases.experience_base_config`) and per seed (a fresh minted
library and question set, the demo's world): the base answers the held-out questions closed book and
open book; a :class:`se_gym.agents.MemoryAgent` (past problems with their accepted answers, no docs)
learns on the base's open-book answers to the train questions (sampled as the demo samples them, judged;
the accepted ones enter the memory), then answers the held-out questions closed book.  Prints the table
and the rule's verdict and writes ``OUT/results.json`` and ``OUT/report.md``.  Bases are built in OUT
(resumable: a finished base is reused).

    python benchmarks/memory_miniature.py --out /tmp/memory_mini [--seeds 0 1 2] [--full] [--bases today experience]

The rule, fixed before the run: the memory agent is "clearly" above closed book when it is ahead on every
seed and by at least 0.2 on average.  Wall times are of this invocation on whatever else the machine runs.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MIN_GAP = 0.2
ARMS = ("closed", "memory", "open")


def configs(full: bool) -> dict:
    from se_gym.bases import QUICK, SMALL_BASE, SMALL_BASE_QUICK, DemoConfig, experience_base_config

    today = replace(DemoConfig(), **SMALL_BASE) if full else replace(QUICK, **SMALL_BASE_QUICK)
    return {"today": today, "experience": experience_base_config(quick=not full)}


def run_seed(demo, base: Path, seed: int, k: int) -> dict:
    import torch

    from se_gym.agents import MemoryAgent, PolicyAgent

    cfg = demo.cfg
    torch.manual_seed(seed)  # the learn phase samples (T = 0.6): the same memory on every run
    library, functions, train, test = demo.world(seed)
    runner = demo.runner(library, functions)
    row: dict = {"seed": seed, "library": library.id, "functions": functions, "n_test": len(test)}
    try:
        policy = demo.policy(base)
        t0 = time.time()
        row["closed"] = runner.evaluate(PolicyAgent(policy, book="closed", max_new_tokens=cfg.max_new_tokens), test, "closed").accuracy
        row["closed_s"] = time.time() - t0
        t0 = time.time()
        # learn: the base's open-book answers to the train questions (as the demo samples them), judged
        sampler = PolicyAgent(policy, book="open", temperature=0.6, max_new_tokens=cfg.max_new_tokens)
        trajectories = runner.rollout(sampler, [o for o in runner.observe(train, "open") for _ in range(cfg.samples)])
        agent = MemoryAgent(policy, k=k, use_docs=False, max_new_tokens=cfg.max_new_tokens)
        learned = agent.learn(trajectories)
        row["memory_learn_s"] = time.time() - t0
        t0 = time.time()
        result = runner.evaluate(agent, test, "closed")
        row["memory"] = result.accuracy
        row["memory_s"] = time.time() - t0
        row["memory_size"] = learned["memory_size"]
        remembered = {t.observation.task.functions[0] for t in trajectories if t.judged and t.reward >= 1}
        row["memory_functions"] = len(remembered)
        # reading apart from coverage: accuracy on the held-out questions whose function the memory holds
        covered = [t.reward >= 1 for t in result.trajectories if t.observation.task.functions[0] in remembered]
        row["memory_on_remembered"] = sum(covered) / len(covered) if covered else None
        row["memory_prompt_tokens"] = sum(len(policy.tokenizer(p)["input_ids"]) for p in agent.prompts([t.observation for t in result.trajectories])) / len(test)
        t0 = time.time()
        row["open"] = runner.evaluate(PolicyAgent(policy, book="open", max_new_tokens=cfg.max_new_tokens), test, "open").accuracy
        row["open_s"] = time.time() - t0
    finally:
        demo.release(runner)
    return row


def summary(rows: list[dict]) -> dict:
    out = {}
    for arm in ARMS:
        vals = [r[arm] for r in rows]
        mean = sum(vals) / len(vals)
        sd = (sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) ** 0.5 if len(vals) > 1 else 0.0
        out[arm] = {"mean": mean, "sd": sd, "per_seed": vals}
    ahead = sum(r["memory"] > r["closed"] for r in rows)
    gap = out["memory"]["mean"] - out["closed"]["mean"]
    out["verdict"] = f"memory {'CLEARLY ABOVE' if ahead == len(rows) and gap >= MIN_GAP else 'NOT clearly above'} closed book (gap {gap:+.2f}, ahead on {ahead}/{len(rows)} seeds)"
    return out


def table(results: dict) -> str:
    lines = ["| base | closed book | memory agent (closed book) | open book | memory agent, questions on remembered functions | verdict |",
             "|---|---|---|---|---|---|"]
    for name, res in results.items():
        s = res["summary"]
        cells = [f"{s[a]['mean']:.2f} ± {s[a]['sd']:.2f} (" + ", ".join(f"{v:.2f}" for v in s[a]["per_seed"]) + ")" for a in ARMS]
        cells.append(", ".join("–" if r["memory_on_remembered"] is None else f"{r['memory_on_remembered']:.2f}" for r in res["seeds"]))
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {s['verdict']} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for the bases and the results (reruns reuse finished bases)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--bases", nargs="+", choices=("today", "experience"), default=["today", "experience"])
    parser.add_argument("--full", action="store_true", help="the full small base (twice the pre-training) and the full world")
    parser.add_argument("--k", type=int, default=2, help="past problems retrieved per question (default 2)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import torch

    from se_gym.demo import Demo

    torch.set_num_threads(args.threads)
    out = Path(args.out)
    results: dict = {}
    cfgs = configs(args.full)
    for name in args.bases:
        with Demo(out / name, cfgs[name], progress=False, rl=False) as demo:
            demo.bind([])
            t0 = time.time()
            base = demo.base()
            base_s = time.time() - t0
            rows = []
            for seed in args.seeds:
                rows.append(run_seed(demo, base, seed, args.k))
                r = rows[-1]
                print(f"[{name} seed {seed}] closed {r['closed']:.2f}  memory {r['memory']:.2f} ({r['memory_size']} entries on "
                      f"{r['memory_functions']}/{len(r['functions'])} functions, {r['memory_prompt_tokens']:.0f} prompt tokens; "
                      f"{r['memory_on_remembered'] if r['memory_on_remembered'] is None else round(r['memory_on_remembered'], 2)} on their questions)  open {r['open']:.2f}; "
                      f"seconds: closed {r['closed_s']:.0f}, memory learn {r['memory_learn_s']:.0f} + answer {r['memory_s']:.0f}, open {r['open_s']:.0f}",
                      file=sys.stderr, flush=True)
            done = json.loads((out / name / "base" / "DONE").read_text())
            results[name] = {"base_seconds_this_run": base_s, "base_pretrain_seconds": done.get("seconds"), "seeds": rows, "summary": summary(rows)}
    md = table(results)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    (out / "report.md").write_text("# Memory agents in the miniature\n\n" + md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
