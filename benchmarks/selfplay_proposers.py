"""Does self-play keep proposing? The miniature's Closed-SFT-Self-Play per proposer mode, over rounds.

    python benchmarks/selfplay_proposers.py --out /tmp/sp --seeds 0 --rounds 6 \
        --modes policy rehearsal gap frozen rl [--base PATH] [--rehearsal 0.3] [--no-curated]

Modes: ``policy`` (the learner proposes, no rehearsal: the behaviour before issue 35),
``rehearsal`` (the learner proposes, and each SFT step mixes in its own valid proposals at the
``--rehearsal`` share), ``rehearsal_all`` (the same, drawing on the valid proposals of every
round so far), ``gap`` (rehearsal plus the gap curriculum), ``frozen`` (the starting model proposes throughout), ``frozen_gap`` (with the gap curriculum), ``rl`` (Self-Play RL,
both roles, the learner proposing).  Per seed: the miniature's world (a fresh library and its
functions, see :mod:`se_gym.selfplay.experiment`), curated Closed-SFT once, then one self-play run
per mode from the same base.  ``--base``: a pre-trained tiny model that writes tasks (default: the
experiment's own, built in OUT/base, minutes to tens of minutes on a CPU).

Prints per mode and round: valid proposals, rejection reasons, functions covered, label noise and
closed-book accuracy on held-out questions, then the final accuracy beside curated Closed-SFT's
(the paper's ratio is 57%).  Writes OUT/results.json and OUT/plot.png (accuracy, valid rate and
coverage over rounds per mode).  Every stage is saved (one file per seed and mode): a rerun
resumes, and invocations with other ``--modes`` can run side by side on one OUT.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

MODES = {
    "policy": ("sft", {"proposer": "policy"}),
    "rehearsal": ("sft", {"proposer": "policy"}),  # the share comes from --rehearsal
    "rehearsal_all": ("sft", {"proposer": "policy", "rehearsal_rounds": 0}),  # rehearsing every round's valid proposals
    "gap": ("sft", {"proposer": "policy", "curriculum": "gap"}),  # rehearsal and the gap curriculum
    "frozen": ("sft", {"proposer": "frozen"}),
    "frozen_gap": ("sft", {"proposer": "frozen", "curriculum": "gap"}),
    "rl": ("rl", {"proposer": "policy"}),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="results folder (reruns resume)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds (a library and functions each)")
    ap.add_argument("--rounds", type=int, default=6, help="self-play rounds per run")
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES), help="proposer modes to run")
    ap.add_argument("--rehearsal", type=float, default=0.3, help="share of proposer examples in the rehearsal and gap modes' SFT steps")
    ap.add_argument("--base", default=None, help="pre-trained tiny model that writes tasks (default: build OUT/base)")
    ap.add_argument("--warm-start", type=int, default=0,
                    help="first fine-tune the base on N examples about this seed's library: half task writing, half open-book "
                         "answers (a retention check for a base that cannot yet write or read; not the paper's setting)")
    ap.add_argument("--no-curated", action="store_true",
                    help="skip curated Closed-SFT here (another invocation on the same OUT runs it; the report reads it when there)")
    args = ap.parse_args()

    import torch

    from se_gym.selfplay.experiment import MiniSelfPlay, MiniSelfPlayConfig

    torch.set_num_threads(1)
    out = Path(args.out)
    exp = MiniSelfPlay(out, MiniSelfPlayConfig(), progress=False)
    base = Path(args.base) if args.base else exp.base()
    for seed in args.seeds:  # each result is its own file: invocations with other modes can run side by side
        sdir = out / f"seed{seed}"
        sdir.mkdir(parents=True, exist_ok=True)
        library, functions, train, test = exp.world(seed)
        seed_base = warm_start(base, library, functions, args.warm_start, sdir / "warm", seed) if args.warm_start else base
        if not args.no_curated and not (sdir / "curated.json").is_file():
            t0 = time.time()
            curated = exp.curated(seed, seed_base, library, train, sdir)
            _dump(sdir / "curated.json", {"final": exp.evaluate(curated, library, test), "wall_s": time.time() - t0})
        for mode in args.modes:
            f = sdir / f"{mode}-r{args.rounds}.json"
            if f.is_file():
                continue
            regime, overrides = MODES[mode]
            if mode in ("rehearsal", "rehearsal_all", "gap"):
                overrides = {**overrides, "rehearsal": args.rehearsal}
            t0 = time.time()
            path, summaries = exp.selfplay(seed, seed_base, functions, regime, sdir, name=mode, rounds=args.rounds, **overrides)
            rounds = [{k: s.get(k) for k in ("round", "proposed", "valid", "valid_rate", "rejected", "diversity", "coverage", "proposed_functions",
                                             "label_noise_mean", "closed_book_acc", "topped_up", "losses", "wall_s")} for s in summaries]
            _dump(f, {"final": exp.evaluate(path, library, test), "wall_s": time.time() - t0, "rounds": rounds, "overrides": overrides})
    report(out, args)


def warm_start(base: Path, library, functions, n: int, out: Path, seed: int) -> Path:
    """``base`` fine-tuned on ``n`` examples about ``library``'s ``functions`` (once; reused after):
    task writing from a doc line, and open-book answers (the docs in the prompt, one call)."""
    import random

    from se_gym.selfplay.miniature import proposal_answer, propose_prompt
    from se_gym.training import miniature as mini
    from se_gym.training.policy import Policy
    from se_gym.training.sft import SFTConfig, SFTExample, train_sft

    if (out / "DONE").is_file():
        return out / "model"
    rng = random.Random(f"warm-{seed}")
    examples = []
    for i in range(n):
        key = functions[(i // 2) % len(functions)]  # each function in both kinds
        if i % 2 == 0:
            examples.append(SFTExample(propose_prompt(library, key), proposal_answer(library, key, rng)))
        else:
            args = "x" if mini.FUNCTIONS[key][0] == 1 else "x1, x2"
            question = f"Given {'the list x' if args == 'x' else 'x1 and x2'}, return {mini.FUNCTIONS[key][1]}."
            prompt = f"Docs:\n{mini.doc_line(library, key)}\nTask: {question}\n{mini.signature(key)}\nAnswer:\n"
            examples.append(SFTExample(prompt, f"```python\n{mini.signature(key)}\n    return {library.qualified(key)}({args})\n```"))
    policy = Policy.from_pretrained(base)
    train_sft(policy, examples, SFTConfig(learning_rate=2e-3, epochs=2, batch_size=16, warmup_ratio=0.05, seed=seed), progress=False)
    policy.save(out / "model")
    (out / "DONE").write_text(str(len(examples)))
    return out / "model"


def _dump(path: Path, obj: dict) -> None:
    from se_gym.storage import write_json_atomic

    write_json_atomic(path, obj)


def report(out: Path, args: argparse.Namespace) -> None:
    from se_gym.selfplay.experiment import PAPER_RATIO

    results: dict = {"rounds": args.rounds, "rehearsal": args.rehearsal, "seeds": {}}
    for seed in args.seeds:
        sdir = out / f"seed{seed}"
        cur = json.loads((sdir / "curated.json").read_text()) if (sdir / "curated.json").is_file() else None
        modes = {m: json.loads((sdir / f"{m}-r{args.rounds}.json").read_text()) for m in MODES if (sdir / f"{m}-r{args.rounds}.json").is_file()}
        results["seeds"][str(seed)] = {"curated": cur["final"] if cur else None, "curated_s": cur["wall_s"] if cur else None, "modes": modes}
    (out / "results.json").write_text(json.dumps(results, indent=1))

    print(f"\n{args.rounds} rounds, seeds {args.seeds}; closed book on held-out questions (curated Closed-SFT and final per mode)")
    for seed, res in results["seeds"].items():
        cur = res["curated"]
        print(f"seed {seed}: curated Closed-SFT " + ("not run" if cur is None else f"{cur:.2f} ({res['curated_s']:.0f} s)"))
        for mode, m in res["modes"].items():
            valid = " ".join(f"{r['valid']}/{r['proposed']}" for r in m["rounds"][1:])
            acc = " ".join("-" if r["closed_book_acc"] is None else f"{r['closed_book_acc']:.2f}" for r in m["rounds"])
            cov = " ".join(f"{r['coverage']:.2f}" for r in m["rounds"][1:])
            ratio = f"{m['final'] / cur:.0%}" if cur else "-"
            print(f"  {mode:10s} valid per round {valid} | acc per round {acc} | coverage {cov} | final {m['final']:.2f} "
                  f"({ratio} of curated; paper {PAPER_RATIO:.0%}) | {m['wall_s']:.0f} s")
            for r in m["rounds"][1:]:
                print(f"    round {r['round']}: rejected {r['rejected']}, diversity {r['diversity']}, noise {r['label_noise_mean']}, "
                      f"topped up {r['topped_up']}, examples {r['losses'].get('sft_examples_by_role')}, wall "
                      + ", ".join(f"{k} {v:.0f}s" for k, v in r["wall_s"].items()))
    if plot(results, out / "plot.png"):
        print(f"plot: {out / 'plot.png'}")


def plot(results: dict, path: Path) -> bool:
    """Accuracy, valid rate and coverage over rounds, one line per mode (the mean over seeds)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    seeds = list(results["seeds"].values())
    modes = list(dict.fromkeys(m for res in seeds for m in res["modes"]))
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    for ax, key, title in zip(axes, ("closed_book_acc", "valid_rate", "coverage"), ("closed-book accuracy", "valid proposals", "library coverage")):
        for mode in modes:
            per_round: dict[int, list[float]] = {}
            for res in seeds:
                for r in res["modes"].get(mode, {}).get("rounds", []):
                    if r.get(key) is not None:
                        per_round.setdefault(r["round"], []).append(r[key])
            xs = sorted(per_round)
            ax.plot(xs, [sum(per_round[x]) / len(per_round[x]) for x in xs], "o-", label=mode)
        cur = [res["curated"] for res in seeds if res["curated"] is not None]
        if key == "closed_book_acc" and cur:
            ax.axhline(sum(cur) / len(cur), color="gray", ls="--", label="curated Closed-SFT")
        ax.set_title(title)
        ax.set_xlabel("round")
        ax.set_ylim(0, 1.05)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


if __name__ == "__main__":
    main()
