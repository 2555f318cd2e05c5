"""``se-gym demo --rl-ablation``: SE-Bench's RL ablation grid on the demo's miniature.

SE-Bench's second finding: standard Closed-RL (PPO/GRPO: clipped ratio, group-normalised
advantage) does not internalize the new library; a larger learning rate or batch helps a little;
removing BOTH the clipping and the advantage (plain likelihood weighted by reward) is what makes
Closed-RL internalize.  This stage runs that grid per seed, from the demo's base (and its
Closed-SFT model for the SFT->RL row), and logs per RL iteration why each variant does what it
does: the reward, the share of samples with a non-zero advantage (the rest teach nothing), the
clip fraction, the KL to the start and the closed-book accuracy.

Layout under ``--out`` (the demo's folder; the base and each seed's rollouts and SFT models are
the demo's own, made first if missing)::

    ablation/run.json                      # the grid's configuration (RunDir: another one is refused)
    ablation/seed{S}/{variant}/state/      # policy + optimizer + history after the last iteration
    ablation/seed{S}/{variant}/iterations.jsonl
    ablation/seed{S}/{variant}/DONE        # final closed-book accuracies
    ablation/report.md, results.json, plot.png

A kill loses at most the iteration in progress: the state is replaced atomically after every
iteration and a rerun continues from it; finished variants are never redone.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Sequence

from . import metrics_log
from .accuracy import seed_table, spread

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class Variant:
    label: str
    clip: bool = True
    advantage: str = "grpo"  # "grpo" (normalised) | "centered" | "reward" (no advantage)
    lr_mult: float = 1.0
    batch_mult: int = 1  # samples per question (and minibatch size) multiplied: a larger batch
    start: str = "base"  # "base" or "closed_sft"
    rl: bool = True  # False: a reference row read from the demo (Closed-SFT)


VARIANTS: dict[str, Variant] = {
    "rl_std": Variant("Closed-RL (clip + normalised adv.)"),
    "rl_lr": Variant("Closed-RL, larger LR", lr_mult=4.0),
    "rl_batch": Variant("Closed-RL, larger batch", batch_mult=2),
    "rl_noclip": Variant("Closed-RL, no clipping", clip=False),
    "rl_noadv": Variant("Closed-RL, no advantage", advantage="reward"),
    "rl_noclip_noadv": Variant("Closed-RL, no clip + no adv.", clip=False, advantage="reward"),
    "closed_sft": Variant("Closed-SFT (reference)", rl=False),
    "sft_rl": Variant("Closed-SFT -> RL (no clip + no adv.)", clip=False, advantage="reward", start="closed_sft"),
}


@dataclass(frozen=True)
class AblationConfig:
    """RL settings shared by every variant (a variant changes one or two of them)."""

    iterations: int = 10
    tasks_per_iteration: int | None = None  # None: every train question each iteration
    group: int = 4
    # small steps (per iteration the policy moves little), as at the paper's 1e-6 on an 8B model: at
    # 1e-3 with 4 epochs one unclipped iteration moved the tiny model by KL ~400 and broke it (device run)
    learning_rate: float = 5e-4
    minibatch: int = 32
    ppo_epochs: int = 2
    clip_eps: float = 0.2
    temperature: float = 1.0
    max_new_tokens: int = 32
    variants: tuple[str, ...] = tuple(VARIANTS)
    # the verdict's rule, fixed before any run: no-clip+no-adv beats standard RL on EVERY seed and
    # by at least this much on average (closed book, held-out questions)
    min_gap: float = 0.10
    # which train questions each iteration gets (se_gym.tasks.sampler: uniform, learnability, module:Class);
    # with tasks_per_iteration None every question is asked each iteration, so only the order changes
    sampler: str = "uniform"
    # stop a run once its answers reach this many tokens (None: after `iterations`; with a budget,
    # `iterations` is the cap): samplers compared at the same generation cost
    token_budget: int | None = None
    eval_every: int = 1  # closed-book evaluation every N iterations (and after the first and the last)


def folder_name(config: AblationConfig) -> str:
    """``ablation`` for the grid as it always ran (every question each iteration, uniform order, no
    budget); otherwise ``ablation-<sampler>[-k<questions per iteration>][-t<token budget>][-g<group>]``
    (the group where it is not the default 4), so runs of other samplers, budgets or groups each keep
    a folder of their own."""
    if config.sampler == "uniform" and config.tasks_per_iteration is None and config.token_budget is None:
        return "ablation"
    tag = "".join(c if c.isalnum() else "_" for c in config.sampler.rsplit(":", 1)[-1].removesuffix(".py"))
    return ("ablation-" + tag + (f"-k{config.tasks_per_iteration}" if config.tasks_per_iteration else "")
            + (f"-t{config.token_budget}" if config.token_budget is not None else "")
            + (f"-g{config.group}" if config.group != AblationConfig.group else ""))


QUICK_ABLATION = AblationConfig(iterations=6)
REAL_ABLATION = AblationConfig(iterations=20, group=8, learning_rate=1e-6, minibatch=64, ppo_epochs=2, max_new_tokens=1024)


def rl_config(acfg: AblationConfig, v: Variant, seed: int, precision: str = "auto"):
    from .training.rl import RLConfig

    return RLConfig(
        learning_rate=acfg.learning_rate * v.lr_mult, group_size=acfg.group * v.batch_mult, ppo_epochs=acfg.ppo_epochs,
        minibatch_size=acfg.minibatch * v.batch_mult, clip=v.clip, clip_eps=acfg.clip_eps, advantage=v.advantage,
        temperature=acfg.temperature, max_new_tokens=acfg.max_new_tokens, track_kl=True, seed=seed, mixed_precision=precision,
    )


class Ablation:
    def __init__(self, demo, config: AblationConfig, restart: bool = False):
        from .storage import RunDir

        self.demo, self.cfg = demo, config
        unknown = [v for v in config.variants if v not in VARIANTS]
        if unknown:
            from .errors import CLIError

            raise CLIError(f"unknown ablation variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
        bound = {"ablation": asdict(config), "demo": asdict(demo.cfg), "model": demo.model_id}
        bound["demo"].pop("threads", None)  # presentation, not results
        bound["ablation"].pop("variants")  # which variants run changes no variant's result (parallel runs share the folder)
        bound["ablation"].pop("eval_every")  # when to evaluate changes no training (greedy evaluation draws nothing)
        for key, default in (("sampler", "uniform"), ("token_budget", None)):
            if bound["ablation"][key] == default:
                bound["ablation"].pop(key)  # added later: folders bound before them still resume
        self.run_dir = RunDir(demo.out / folder_name(config), "demo-rl-ablation", bound, restart=restart)

    # -- one RL variant on one seed -----------------------------------------------------------
    def run_variant(self, seed: int, name: str, start_path: Path, runner, train, test, stop_after: int | None = None) -> dict:
        """Train (resuming) and evaluate one variant; ``stop_after`` iterations (tests: a kill)."""
        import random

        import torch

        from .agents import RLAgent
        from .agents.runner import record_groups
        from .storage import atomic_dir, write_text_atomic
        from .training.rl import CutSampler, PolicySampler

        acfg, v = self.cfg, VARIANTS[name]
        stage = f"seed{seed}/{name}"
        vdir = self.run_dir.stage(stage)
        if self.run_dir.done(stage):
            return self.run_dir.read_done(stage)
        pol = self.demo.policy(start_path)
        inner = self.demo.sampler(pol) or PolicySampler(pol)
        inner.sync(pol.model)  # an external engine (vLLM) starts from --model: give it this variant's start (SFT->RL)
        # answers end at the closing fence: unclipped runs otherwise learn junk after the block
        agent = RLAgent(pol, mode="closed", config=rl_config(acfg, v, seed, self.demo.precision), sampler=CutSampler(inner))
        group = agent.config.group_size
        chooser = self.task_sampler(train, group, v)
        state = vdir / "state"
        history: list[dict] = []
        if (state / "history.json").is_file():
            history = json.loads((state / "history.json").read_text(encoding="utf-8"))
            agent.load(state)
            chooser.load(state / "sampler.json")
        t_start = time.time()
        metrics_log.set_run(f"ablation/seed{seed}/{name}")
        for it in range(len(history), acfg.iterations):
            if stop_after is not None and it >= stop_after:
                return {"stopped": it}
            if acfg.token_budget is not None and history and history[-1]["tokens_total"] >= acfg.token_budget:
                break
            t0 = time.time()
            rng = random.Random(seed * 1_000_003 + it)
            # the iteration's samples depend on (seed, iteration) alone, not on what this process ran
            # before: a resumed run, a run in its own process (jobs > 1) and one after others agree
            torch.manual_seed(seed * 1_000_003 + it)
            picked = chooser.batch(acfg.tasks_per_iteration or len(train), rng)
            chosen = [train[i] for i in picked]
            obs = [o for o in runner.observe(chosen, "open") for _ in range(group)]
            traj = runner.rollout(agent, obs)
            learn = agent.learn(traj)
            record_groups(chooser, picked, traj, group, agent.token_lengths)
            row = {
                "iteration": it + 1,
                "reward": _mean([t.reward for t in traj if t.reward is not None] or [0.0]),  # sandbox failures left out
                "nonzero_adv": learn.get("nonzero_adv"),
                "zero_adv_groups": learn.get("zero_adv_groups"),
                "updated_on": learn.get("updated_on"),
                "clip_frac": learn.get("clip_frac", 0.0),
                "kl_start": learn.get("kl_start", history[-1]["kl_start"] if history else 0.0),
                "tokens": learn.get("tokens"),
                "tokens_total": (history[-1].get("tokens_total") or 0 if history else 0) + (learn.get("tokens") or 0),
                "tasks": [t.id for t in chosen],
                **{f"sampler_{k}": x for k, x in chooser.stats().items()},
                "examples": [t.response for t in traj[:: max(1, len(traj) // 3)]][:3],  # what the policy writes now
            }
            last = it + 1 == acfg.iterations or (acfg.token_budget is not None and row["tokens_total"] >= acfg.token_budget)
            if it == 0 or last or (it + 1) % acfg.eval_every == 0:
                row.update(self.evaluate(agent.policy, runner, train, test))
                metrics_log.log({k: row[k] for k in ("closed_train", "closed_test")}, it + 1)
            row["seconds"] = round(time.time() - t0, 2)
            history.append(row)
            with atomic_dir(state) as tmp:  # policy, optimizer, sampler and history land together or not at all
                agent.save(tmp)
                chooser.save(tmp / "sampler.json")
                (tmp / "history.json").write_text(json.dumps(history), encoding="utf-8")
            write_text_atomic(vdir / "iterations.jsonl", "".join(json.dumps(r) + "\n" for r in history))
            evaluated = f", closed train {row['closed_train']:.2f}, held-out {row['closed_test']:.2f}" if "closed_test" in row else ""
            log.info(f"[seed {seed}] {name} it {it + 1}/{acfg.iterations}: reward {row['reward']:.2f}, non-zero adv {row['nonzero_adv'] or 0:.2f}, "
                     f"zero-adv groups {row['zero_adv_groups'] or 0:.2f}, clip {row['clip_frac']:.3f}, KL {row['kl_start']:.3f}, "
                     f"tokens {row['tokens_total']}{evaluated}")
        final = dict(history[-1]) if history and "closed_test" in history[-1] else self.evaluate(agent.policy, runner, train, test)
        info = {"closed_test": final["closed_test"], "closed_train": final["closed_train"], "iterations": len(history),
                "tokens_total": history[-1].get("tokens_total") if history else 0, "seconds_this_call": round(time.time() - t_start, 1)}
        self.run_dir.mark_done(stage, info)
        import shutil

        shutil.rmtree(state / "trainer", ignore_errors=True)  # optimizer state is not needed once done
        return info

    def task_sampler(self, train, group: int, v: Variant):
        """The configured task sampler over ``train``, for ``v``'s group size and advantage (the
        signal a group can carry differs: reward weighting learns from any pass)."""
        from .tasks.sampler import SAMPLERS, LearnabilitySampler, make_sampler

        options: dict = {"group_size": group}
        if issubclass(SAMPLERS.load(self.cfg.sampler), LearnabilitySampler):
            options["advantage"] = v.advantage
        return make_sampler(self.cfg.sampler, train, **options)

    def evaluate(self, policy, runner, train, test) -> dict:
        from .agents import PolicyAgent

        agent = PolicyAgent(policy, book="closed", temperature=0.0, max_new_tokens=self.cfg.max_new_tokens)
        return {"closed_train": runner.evaluate(agent, train, "closed").accuracy, "closed_test": runner.evaluate(agent, test, "closed").accuracy}

    # -- one seed ------------------------------------------------------------------------------
    def run_seed(self, seed: int, base_path: Path, demo_results: dict, report_only: bool = False) -> dict:
        library, functions, train, test = self.demo.world(seed)
        runner = self.demo.runner(library, functions)
        try:
            out = {"seed": seed, "methods": {"base": {k: demo_results["methods"]["base"][k] for k in ("closed_test", "closed_train", "open_test")}}}
            for name in self.cfg.variants:
                v = VARIANTS[name]
                if not v.rl:
                    out["methods"][name] = {k: demo_results["methods"][name][k] for k in ("closed_test", "closed_train")}
                    continue
                if report_only and not self.run_dir.done(f"seed{seed}/{name}"):
                    continue
                start = base_path if v.start == "base" else self.demo.out / f"seed{seed}" / v.start / "model"
                log.info(f"[seed {seed}] ablation: {v.label}")
                info = self.run_variant(seed, name, start, runner, train, test)
                out["methods"][name] = {"closed_test": info["closed_test"], "closed_train": info["closed_train"]}
            return out
        finally:
            self.demo.release(runner)  # its sandbox workers: one seed's at a time


# -- summary, verdict, report -------------------------------------------------------------------
def summarize(per_seed: Sequence[dict]) -> dict:
    """The base and every variant: metric -> mean, sd and values over the seeds."""
    return seed_table(per_seed, ["base", *VARIANTS])


def _mean(vals):
    return sum(vals) / len(vals)


MIN_SEEDS = 3


def verdict(table: dict, min_gap: float) -> str:
    """The rule fixed in code before running: no-clip+no-adv beats standard Closed-RL on every seed
    (closed book, held-out) and by >= ``min_gap`` on average."""
    a, b = table.get("rl_noclip_noadv"), table.get("rl_std")
    if not a or not b:
        return "clipping/advantage block internalization: NOT tested (rl_std and rl_noclip_noadv are both needed)"
    diffs = [x - y for x, y in zip(a["closed_test"]["per_seed"], b["closed_test"]["per_seed"])]
    wins = sum(d > 0 for d in diffs)
    ok = wins == len(diffs) and _mean(diffs) >= min_gap
    word = "REPRODUCED" if ok else "NOT reproduced"
    if len(diffs) < MIN_SEEDS:  # one or two seeds say nothing about spread
        word = f"INCONCLUSIVE (only {len(diffs)} seed(s); the rule needs {MIN_SEEDS}; on these: {word})"
    return (f"clipping/advantage block internalization: {word} "
            f"(closed book, held-out: no clip + no adv. {a['closed_test']['mean']:.2f} vs standard {b['closed_test']['mean']:.2f}; "
            f"gap {_mean(diffs):+.2f} ± {spread(diffs)['sd']:.2f} sd over {len(diffs)} seeds, per seed "
            + ", ".join(f"{d:+.2f}" for d in diffs) + f"; ahead on {wins}/{len(diffs)}; rule: ahead on every seed and mean gap >= {min_gap:.2f})")


def render_table(table: dict) -> str:
    cols = [("closed_test", "closed book, held-out"), ("closed_train", "closed book, train questions"), ("open_test", "open book, held-out")]
    lines = ["| variant | " + " | ".join(c[1] for c in cols) + " |", "|---|" + "---|" * len(cols)]
    for method, row in table.items():
        label = "Base (no training)" if method == "base" else VARIANTS[method].label
        cells = [f"{row[k]['mean']:.2f} ± {row[k]['sd']:.2f} (" + ", ".join(f"{v:.2f}" for v in row[k]["per_seed"]) + ")" if k in row else "–" for k, _ in cols]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def curves_summary(run_dir: Path, seeds: Sequence[int], variants: Sequence[str]) -> str:
    """Per variant: mean over seeds of the per-iteration stats at the first and last iteration."""
    keys = ("reward", "nonzero_adv", "zero_adv_groups", "clip_frac", "kl_start", "tokens_total", "closed_train", "closed_test")
    lines = ["| variant | " + " | ".join(f"{k} (first → last)" for k in keys) + " |", "|---|" + "---|" * len(keys)]
    for name, runs in _curves(run_dir, seeds, variants):
        cells = []
        for k in keys:
            first = _mean([float(r[0].get(k) or 0.0) for r in runs])
            last = _mean([float(r[-1].get(k) or 0.0) for r in runs])
            cells.append(f"{first:.0f} → {last:.0f}" if k == "tokens_total" else f"{first:.2f} → {last:.2f}")
        lines.append(f"| {VARIANTS[name].label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _curves(run_dir: Path, seeds: Sequence[int], variants: Sequence[str]):
    """(variant, its seeds' iteration records) for each RL variant with at least one recorded run."""
    for name in variants:
        if VARIANTS[name].rl:
            runs = [r for r in (load_curve(run_dir, s, name) for s in seeds) if r]
            if runs:
                yield name, runs


def load_curve(run_dir: Path, seed: int, name: str) -> list[dict]:
    path = Path(run_dir) / f"seed{seed}" / name / "iterations.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def plot(table: dict, run_dir: Path, seeds: Sequence[int], variants: Sequence[str], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.2))
    methods = list(table)
    labels = ["Base" if m == "base" else VARIANTS[m].label for m in methods]
    ax1.bar(range(len(methods)), [table[m]["closed_test"]["mean"] for m in methods], yerr=[table[m]["closed_test"]["sd"] for m in methods], capsize=3)
    ax1.set_xticks(range(len(methods)), labels, rotation=30, ha="right", fontsize=7)
    ax1.set_ylim(0, 1)
    ax1.set_ylabel("closed-book accuracy (held-out)")
    ax1.set_title("RL ablation: what internalizes the library")
    for name, runs in _curves(run_dir, seeds, variants):
        n = min(len(r) for r in runs)
        shown = [i for i in range(n) if all(r[i].get("closed_train") is not None for r in runs)]  # evaluated iterations
        ax2.plot([i + 1 for i in shown], [_mean([r[i]["closed_train"] for r in runs]) for i in shown], label=VARIANTS[name].label)
    ax2.set_xlabel("RL iteration")
    ax2.set_ylabel("closed-book accuracy (train questions)")
    ax2.set_ylim(0, 1)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def _variant_job(demo_type, out: str, demo_cfg, model, backend: str, device, config: AblationConfig, seed: int, name: str,
                 log=None) -> str:
    """One RL run in a process of its own (``jobs`` > 1): the same Demo and Ablation, bound to the
    same folders, train one variant of one seed (resuming like any run); ``demo_type``: the parent's
    Demo class (passed, not imported: the demo is the room below, and it dispatches to this one);
    ``log``: the parent's ``--log`` (:func:`se_gym.metrics_log.settings`)."""
    with metrics_log.session(*(log or (None, ""))):
        return _variant(demo_type, out, demo_cfg, model, backend, device, config, seed, name)


def _variant(Demo, out: str, demo_cfg, model, backend: str, device, config: AblationConfig, seed: int, name: str) -> str:
    try:
        import torch

        torch.set_num_threads(demo_cfg.threads)
    except ImportError:  # pragma: no cover - the stage needs torch anyway
        pass
    with Demo(Path(out), demo_cfg, model=model, backend=backend, device=device, progress=False, rl=False) as demo:
        base = demo.base()
        abl = Ablation(demo, replace(config, variants=(name,)))
        abl.run_seed(seed, base, demo.run_seed(seed, base))
    return f"seed{seed}/{name}"


def run_parallel(demo, abl: Ablation, seeds: Sequence[int], jobs: int) -> None:
    """Train the grid's unfinished RL runs ``jobs`` at a time, each in a process of its own (one
    thread each: the runs are independent and seeded, so the results are those of one process)."""
    import multiprocessing
    from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait

    if demo.backend != "hf":
        from .errors import CLIError

        raise CLIError("--jobs > 1 needs --backend hf (each process would start its own vLLM engine)")
    base = demo.base()
    for s in seeds:  # the demo's per-seed stages first: every RL run of the seed reads them
        demo.run_seed(s, base)
    todo = [(s, name) for s in seeds for name in abl.cfg.variants
            if VARIANTS[name].rl and not abl.run_dir.done(f"seed{s}/{name}")]
    if not todo:
        return
    log.info(f"[ablation] {len(todo)} RL runs, {min(jobs, len(todo))} at a time in separate processes")
    with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_variant_job, type(demo), str(demo.out), demo.cfg, demo.model_id, demo.backend, demo.device, abl.cfg, s, name,
                               metrics_log.settings()) for s, name in todo]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in done if f.exception() is not None]
        if failed:  # stop what has not started; what runs keeps its saved iterations for a rerun
            for f in futures:
                f.cancel()
            raise failed[0].exception()
        for f in futures:
            log.info(f"[ablation] done {f.result()}")


def run(demo, seeds: Sequence[int], config: AblationConfig, restart: bool = False, report_only: bool = False, jobs: int = 1) -> int:
    """The whole stage: the demo's base and per-seed SFT (made if missing), then the grid.

    ``report_only``: train nothing; summarize the variants already finished (e.g. by parallel
    invocations that each ran one ``--variants`` of one seed).  ``jobs`` > 1: that many RL runs at
    once, each in its own process (on a CPU, one per core)."""
    t0 = time.time()
    abl = Ablation(demo, config, restart=restart)
    if jobs > 1 and not report_only:
        run_parallel(demo, abl, seeds, jobs)
    base = demo.base()
    per_seed = []
    for s in seeds:
        demo_results = demo.run_seed(s, base)
        per_seed.append(abl.run_seed(s, base, demo_results, report_only=report_only))
    table = summarize(per_seed)
    line = verdict(table, config.min_gap)
    wall = time.time() - t0
    md = render_table(table)
    curves = curves_summary(abl.run_dir.path, seeds, config.variants)
    # the RL runs' own time (iterations' seconds summed), which a resumed or parallel invocation's wall time hides
    rl_seconds = sum(float(r.get("seconds") or 0.0) for s in seeds for v in config.variants for r in load_curve(abl.run_dir.path, s, v))
    out = abl.run_dir.path
    report = [
        "# se-gym demo --rl-ablation: clipping and advantage against internalization", "",
        f"Seeds {', '.join(map(str, seeds))}; base: {demo.model_id or 'the demo tiny model'}; {config.iterations} RL iterations, "
        f"group {config.group}, LR {config.learning_rate:g}, {config.ppo_epochs} PPO epochs; task sampler {config.sampler}, "
        f"{config.tasks_per_iteration or 'all'} questions per iteration"
        + (f", token budget {config.token_budget} (iterations: the cap)" if config.token_budget is not None else "")
        + f"; wall time of this invocation {wall:.0f} s "
        f"(stages already done were skipped); RL iterations took {rl_seconds:.0f} s summed over all runs.", "",
        "Closed-book accuracy after training (mean ± sd over seeds, then per seed):", "", md, "",
        f"- {line}", "",
        "Per-iteration statistics, mean over seeds (first → last iteration); the full curves are "
        "`seed*/<variant>/iterations.jsonl`:", "", curves, "",
    ]
    from .storage import write_json_atomic, write_text_atomic

    write_text_atomic(out / "report.md", "\n".join(report) + "\n")
    write_json_atomic(out / "results.json", {"config": asdict(config), "seeds": per_seed, "summary": table, "verdict": line, "wall_s": wall,
                                             "rl_seconds_summed": rl_seconds})
    plotted = plot(table, out, seeds, config.variants, out / "plot.png")
    print(md)
    print()
    print(curves)
    print()
    print(line)
    print(f"\nreport: {out / 'report.md'}" + (f", plot: {out / 'plot.png'}" if plotted else "") + f"; wall time {wall:.0f} s")
    return 0
