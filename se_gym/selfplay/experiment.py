"""``se-gym demo --selfplay``: does self-play teach a library with SFT but not with RL? In miniature.

Stages, each saved under ``--out`` (reruns resume; see :mod:`se_gym.selfplay.miniature`):

0. ``base/``: a tiny model pre-trained on doc reading (the demo's corpus) AND on writing tasks from
   docs (:func:`se_gym.selfplay.miniature.proposal_corpus`), with functions and names the
   experiment never uses.
1. per seed (a fresh library and its functions): ``curated/`` Closed-SFT on curated tasks (open-book
   answers to the miniature's train questions, trained under the query-only prompt);
   ``sft_selfplay/`` and ``rl_selfplay/``: :class:`se_gym.selfplay.loop.SelfPlay` runs with the
   regimes ``sft`` and ``rl`` from the same base;
2. closed-book accuracy on held-out questions about the same functions, a table over seeds and a
   verdict by a rule fixed here before running: "self-play works with SFT, not with RL" is
   REPRODUCED when Closed-SFT-Self-Play is above 0 on every seed and its mean is above Self-Play
   RL's.  Its ratio to curated Closed-SFT is printed beside the paper's (22.5 / 39.6 = 57%).
3. the rounds: a table per round over seeds (valid proposals, near-duplicates, library coverage,
   closed-book accuracy of both regimes), ``rounds.png``, and a second verdict, fixed before
   running (issue 45, :func:`sustained`): self-play is SUSTAINED when the policy's proposals are
   at least 80% valid in every round (pooled over seeds) and SFT self-play's accuracy does not
   fall (the last round at least the best of rounds 1-3, and no round more than one sd over seeds
   below the round before).

Both regimes run one of :data:`SETTINGS` (``MiniSelfPlayConfig.setting``): the switches of
:mod:`se_gym.selfplay.curation` that keep the policy proposing and the solver improving.
"""
from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .. import metrics_log
from .miniature import TRAIN_PER_FUNCTION

log = logging.getLogger(__name__)

PAPER_RATIO = 22.5 / 39.6  # SE-Bench, Qwen3-8B single-function: Closed-SFT-Self-Play / Closed-SFT
METHODS = ("base", "curated", "sft_selfplay", "rl_selfplay")
LABELS = {
    "base": "Base (no training)",
    "curated": "Closed-SFT, curated tasks",
    "sft_selfplay": "Closed-SFT-Self-Play",
    "rl_selfplay": "Self-Play RL",
}


# The settings measured for issue 45, each adding one switch to the one before (SelfPlayConfig fields):
_BUDGET = {"val_share": 0.25, "patience": 2, "replay_tasks": 4}
_MIX = {**_BUDGET, "rehearsal": 0.3, "rehearsal_rounds": 0}
_NOVELTY = {**_MIX, "novelty": True}
SETTINGS: dict[str, dict] = {
    "plain": {},  # the loop before issue 45: every --sft-epochs epoch in every round, the solver's data only
    "budget": _BUDGET,  # a validation split of self-written tasks picks each round's epochs (or none); replay of earlier tasks
    "mix": _MIX,  # + the policy's own valid proposals of every round so far mixed into each update (30% of it)
    "novelty": _NOVELTY,  # + those proposals picked by novelty, functions balanced
    "band": {**_NOVELTY, "band_open": 0.5, "band": (0.0, 0.75)},  # + only tasks solved with the docs and not yet without
    # + 48 more tasks written (and validated) with the round's starting weights, rehearsed at half of each update:
    # a fresh pool of the policy's own writing (the pool of earlier valid proposals is a few dozen, and memorized)
    "fresh": {**_NOVELTY, "band_open": 0.5, "band": (0.0, 0.75), "rehearsal": 0.5, "rehearsal_samples": 48},
    # + the proposals (and the fresh pool) sampled at temperature 0.7 instead of 1.0: at 1.0 the tiny writer's
    # slips (a seventh input line closing the list, a broken literal) cost 8-28% of its proposals a round
    "cool": {**_NOVELTY, "band_open": 0.5, "band": (0.0, 0.75), "rehearsal": 0.5, "rehearsal_samples": 48, "propose_temperature": 0.7},
    # + the early stopping keeps no epoch whose 24 check proposals are valid less often than the start's and below 90%
    "checked": {**_NOVELTY, "band_open": 0.5, "band": (0.0, 0.75), "rehearsal": 0.5, "rehearsal_samples": 48, "propose_temperature": 0.7,
                "propose_check": 24, "propose_floor": 0.9},
}
DEFAULT_SETTING = "checked"
SUSTAINED_VALID = 0.8  # the policy's valid-proposal rate every round must reach (issue 45)


@dataclass(frozen=True)
class MiniSelfPlayConfig:
    """Scale of the miniature (defaults sized for about 10 minutes on 2 CPU cores)."""

    d_model: int = 128
    heads: int = 4
    layers: int = 2
    pretrain_read: int = 24_000  # doc-reading examples (the demo's skill)
    pretrain_propose: int = 8_000  # task-writing examples
    pretrain_lr: float = 3e-3
    pretrain_batch: int = 32
    functions: int = 6
    train_per_function: int = TRAIN_PER_FUNCTION  # (the self-play runs evaluate on the same test questions)
    samples: int = 4
    sft_epochs: int = 30
    sft_lr: float = 2e-3
    rounds: int = 6
    proposals: int = 12
    sp_sft_epochs: int = 10  # per round at most (the setting's validation split may stop earlier)
    setting: str = DEFAULT_SETTING  # a key of SETTINGS
    rl_lr: float = 1e-3
    min_tasks: int = 12
    max_new_tokens: int = 32
    propose_max_tokens: int = 210  # the longest corpus proposal is 203 tokens, the longest prompt 42 (256 positions)


QUICK = MiniSelfPlayConfig(pretrain_read=8_000, pretrain_propose=3_000, functions=4, rounds=3, proposals=8, sft_epochs=15, sp_sft_epochs=8)


def _log(msg: str) -> None:
    log.info(msg)


class MiniSelfPlay:
    def __init__(self, out: Path, cfg: MiniSelfPlayConfig, progress: bool = True, device: str | None = None, restart: bool = False,
                 engine_factory: Any = None):
        """``engine_factory(SelfPlayConfig)``: the engine of each self-play run (e.g. a Ray engine);
        None: in this process."""
        self.out, self.cfg, self.progress, self.device, self.restart = Path(out).resolve(), cfg, progress, device, restart
        self.engine_factory = engine_factory

    # -- stage 0 ------------------------------------------------------------------------------------
    def base(self) -> Path:
        from ..llm.tiny import build_tiny_model
        from ..storage import RunDir
        from ..training import miniature as mini
        from ..training.policy import Policy
        from ..training.sft import SFTConfig, SFTExample, train_sft
        from .miniature import proposal_corpus

        cfg = self.cfg
        bcfg = {k: getattr(cfg, k) for k in ("d_model", "heads", "layers", "pretrain_read", "pretrain_propose", "pretrain_lr", "pretrain_batch")}
        run = RunDir(self.out / "base", "selfplay-base", bcfg)
        if run.done("model"):
            return run.path / "model" / "weights"
        _log(f"[base] tiny model (d_model {cfg.d_model}, {cfg.layers} layers) pre-trained on doc reading and on writing tasks from docs")
        read = mini.pretraining_corpus(cfg.pretrain_read, seed=0)
        write = proposal_corpus(cfg.pretrain_propose, seed=0)
        corpus_text = mini.tokenizer_corpus(0) + [p + a for p, a in proposal_corpus(1500, seed=777)]
        build_tiny_model(run.path / "init", corpus_text, vocab_size=1024, n_layer=cfg.layers, d_model=cfg.d_model, n_head=cfg.heads,
                         max_position_embeddings=512, seed=0)
        policy = Policy.from_pretrained(run.path / "init", device=self.device)
        examples = [SFTExample(p, a) for p, a in read + write]
        random.Random(0).shuffle(examples)
        t0 = time.time()
        metrics_log.set_run("base")
        metrics = train_sft(policy, examples, SFTConfig(learning_rate=cfg.pretrain_lr, epochs=1, batch_size=cfg.pretrain_batch,
                                                        warmup_ratio=0.05, min_lr_ratio=0.1), progress=self.progress)
        policy.save(run.path / "model" / "weights")
        run.mark_done("model", {"loss": metrics["loss"], "seconds": time.time() - t0})
        return run.path / "model" / "weights"

    # -- per seed -------------------------------------------------------------------------------------
    def world(self, seed: int):
        from ..library import mint
        from ..training import miniature as mini

        library = mint(100 + seed)
        functions = sorted(random.Random(f"demo-functions-{seed}").sample(list(mini.EXPERIMENT_POOL), self.cfg.functions))
        train, test = mini.experiment_tasks(library, functions, (self.cfg.train_per_function, 3), seed)
        return library, functions, train, test

    def curated(self, seed: int, base: Path, library, train, sdir: Path) -> Path:
        """Closed-SFT on curated tasks: the same learner as self-play's, on the miniature's train questions."""
        from ..training.distill import ContextPair, TeacherSample, offpolicy_examples
        from ..training.policy import Policy
        from ..training.sft import SFTConfig, train_sft
        from .loop import LocalEngine
        from .miniature import MiniPrompts
        from .validate import ValidationConfig

        path = sdir / "curated"
        if (path / "DONE").is_file():
            return path / "model"
        cfg = self.cfg
        prompts = MiniPrompts()
        policy = Policy.from_pretrained(base, device=self.device)
        engine = LocalEngine(library, ValidationConfig())
        try:
            engine.attach(policy)
            opens = [prompts.solve(library, t, "open") for t in train]
            groups = engine.generate(opens, cfg.samples, 0.6, cfg.max_new_tokens, seed)
            verdicts = iter(engine.judge([t.judge_item(r) for t, g in zip(train, groups) for r in g]))
            samples = [TeacherSample(ContextPair(o, prompts.solve(library, t, "closed"), t.id), r, next(verdicts)[0])
                       for t, o, g in zip(train, opens, groups) for r in g]
        finally:
            engine.close()
        examples = offpolicy_examples(samples)
        _log(f"[seed {seed}] curated Closed-SFT on {len(examples)}/{len(samples)} accepted open-book answers")
        metrics = {"accepted": len(examples), "offered": len(samples)}
        if examples:
            metrics_log.set_run(f"seed{seed}/curated")
            m = train_sft(policy, examples, SFTConfig(learning_rate=cfg.sft_lr, epochs=cfg.sft_epochs, batch_size=8, warmup_ratio=0.1, seed=seed),
                          progress=self.progress)
            metrics["loss"] = m["loss"][-1]
        policy.save(path / "model")
        from ..storage import write_json_atomic

        write_json_atomic(path / "DONE", metrics)
        return path / "model"

    def selfplay(self, seed: int, base: Path, functions, regime: str, sdir: Path, name: str | None = None,
                 **overrides) -> tuple[Path, list[dict]]:
        """A self-play run from ``base`` in ``sdir/name``; ``overrides``: other SelfPlayConfig settings
        (``proposer``, ``rehearsal``, ``rounds``, ...)."""
        from .loop import RUN_FUNCTIONS, SelfPlay, SelfPlayConfig

        cfg = self.cfg
        sp_cfg = SelfPlayConfig(
            model=str(base), library=f"seed:{100 + seed}", prompts="miniature", regime=regime, rounds=cfg.rounds, proposals=cfg.proposals,
            k=1, functions=tuple(functions), samples=cfg.samples, proposer_reward="gap", min_tasks=cfg.min_tasks, eval=RUN_FUNCTIONS,
            eval_limit=0, propose_temperature=1.0, solve_temperature=0.6, propose_max_tokens=cfg.propose_max_tokens,
            solve_max_tokens=cfg.max_new_tokens, sft_lr=cfg.sft_lr, sft_epochs=cfg.sp_sft_epochs, sft_batch=8, rl_lr=cfg.rl_lr,
            rl_ppo_epochs=2, rl_minibatch=32, seed=seed,
        )
        if cfg.setting not in SETTINGS:
            raise ValueError(f"setting must be one of {', '.join(SETTINGS)}, got {cfg.setting!r}")
        sp_cfg = replace(sp_cfg, **{**SETTINGS[cfg.setting], **overrides})
        name = name or ("sft_selfplay" if regime == "sft" else "rl_selfplay")
        engine = self.engine_factory(sp_cfg) if self.engine_factory is not None else None
        sp = SelfPlay(sp_cfg, sdir / name, engine, progress=self.progress, log=_log, device=self.device)
        with metrics_log.scope(f"seed{seed}/{name}"):
            summaries = sp.run_all()
        last = max(s["round"] for s in summaries)
        return Path(sp._model_after(last)), summaries

    def evaluate(self, path: Path, library, tasks) -> float:
        from ..training.policy import Policy
        from .loop import LocalEngine
        from .miniature import MiniPrompts
        from .validate import ValidationConfig

        policy = Policy.from_pretrained(path, device=self.device)
        engine = LocalEngine(library, ValidationConfig())
        try:
            engine.attach(policy)
            prompts = [MiniPrompts().solve(library, t, "closed") for t in tasks]
            outs = engine.generate(prompts, 1, 0.0, self.cfg.max_new_tokens, 0)
            verdicts = engine.judge([t.judge_item(g[0]) for t, g in zip(tasks, outs)])
        finally:
            engine.close()
        return sum(1 for r, _ in verdicts if r >= 1.0) / len(verdicts)

    def run_seed(self, seed: int, base: Path) -> dict:
        from ..storage import RunDir, write_json_atomic

        bound = {k: v for k, v in asdict(self.cfg).items() if k != "rounds"}  # more rounds extend the runs
        sdir = RunDir(self.out / f"seed{seed}", "selfplay-miniature-seed", {**bound, "seed": seed, "base": str(base)},
                      restart=self.restart).path  # another scale, setting (or base) is refused, or with --restart redone
        res_path = sdir / f"results-r{self.cfg.rounds}.json"
        if res_path.is_file():
            return json.loads(res_path.read_text())
        library, functions, train, test = self.world(seed)
        t = {}
        t0 = time.time()
        curated = self.curated(seed, base, library, train, sdir)
        t["curated"] = time.time() - t0
        models = {"base": base, "curated": curated}
        rounds = {}
        for regime in ("sft", "rl"):
            t0 = time.time()
            _log(f"[seed {seed}] self-play, regime {regime}")
            path, summaries = self.selfplay(seed, base, functions, regime, sdir)
            models[f"{regime}_selfplay"] = path
            rounds[f"{regime}_selfplay"] = [round_row(s) for s in summaries]
            t[f"{regime}_selfplay"] = time.time() - t0
        acc = {}
        for m, p in models.items():
            acc[m] = self.evaluate(p, library, test)
            _log(f"[seed {seed}] {LABELS[m]}: closed-book held-out {acc[m]:.2f}")
        out = {"seed": seed, "library": library.id, "functions": functions, "n_test": len(test), "closed_test": acc, "rounds": rounds, "wall_s": t}
        write_json_atomic(res_path, out)
        return out


def round_row(s: dict) -> dict:
    """What the report keeps of a round's summary (``log.jsonl`` has the rest)."""
    row = {k: s.get(k) for k in ("round", "proposed", "valid", "valid_rate", "rejected", "closed_book_acc", "label_noise_mean", "topped_up",
                                 "replayed", "validation_tasks", "coverage", "reward_signal_share", "wall_s")}
    row["near_duplicate_rate"] = (s.get("diversity") or {}).get("near_duplicate_rate")
    losses = s.get("losses") or {}
    row["val"] = losses.get("val")
    row["sft_examples_by_role"] = losses.get("sft_examples_by_role")
    return row


def _mean_sd(vals: list[float]) -> tuple[float, float]:
    mean = sum(vals) / len(vals)
    sd = (sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) ** 0.5 if len(vals) > 1 else 0.0
    return mean, sd


def per_round(per_seed: list[dict], run: str) -> list[dict]:
    """Round by round over seeds for one run (``sft_selfplay`` or ``rl_selfplay``): valid and proposed
    (pooled), the rejection reasons (counts pooled), near-duplicate rate and coverage (means), closed-book
    accuracy (mean, sd, per seed)."""
    by_round: dict[int, list[dict]] = {}
    for r in per_seed:
        for row in r["rounds"].get(run, []):
            by_round.setdefault(row["round"], []).append(row)
    out = []
    for k in sorted(by_round):
        rows = by_round[k]
        accs = [x["closed_book_acc"] for x in rows if x.get("closed_book_acc") is not None]
        mean, sd = _mean_sd(accs) if accs else (None, None)
        entry = {"round": k, "acc_mean": mean, "acc_sd": sd, "acc": accs, "seeds": len(rows)}
        if k:
            entry["valid"] = sum(x["valid"] for x in rows)
            entry["proposed"] = sum(x["proposed"] for x in rows)
            entry["valid_rate"] = entry["valid"] / entry["proposed"] if entry["proposed"] else 0.0
            entry["valid_min"] = min(x["valid_rate"] for x in rows)
            rejected: dict[str, int] = {}
            for x in rows:
                for reason, n in (x.get("rejected") or {}).items():
                    rejected[reason] = rejected.get(reason, 0) + n
            entry["rejected"] = dict(sorted(rejected.items(), key=lambda kv: (-kv[1], kv[0])))
            dups = [x["near_duplicate_rate"] for x in rows if x.get("near_duplicate_rate") is not None]
            entry["near_duplicate_rate"] = sum(dups) / len(dups) if dups else None
            cov = [x["coverage"] for x in rows if x.get("coverage") is not None]
            entry["coverage"] = sum(cov) / len(cov) if cov else None
        out.append(entry)
    return out


def sustained(rounds: list[dict]) -> tuple[bool, str]:
    """The rule of issue 45, fixed before running: SUSTAINED when the valid-proposal rate (pooled over
    seeds) is at least 80% in every round, and closed-book accuracy (mean over seeds) does not fall:
    the last round is at least the best of rounds 1-3, and no round is more than one sd over seeds
    (the larger of the two rounds') below the round before."""
    played = [r for r in rounds if r["round"] > 0]
    if not played:
        return False, "no rounds"
    low = [r["round"] for r in played if r["valid_rate"] < SUSTAINED_VALID]
    accs = [r for r in rounds if r["acc_mean"] is not None]
    falls = [b["round"] for a, b in zip(accs, accs[1:]) if b["round"] > 1 and b["acc_mean"] < a["acc_mean"] - max(a["acc_sd"], b["acc_sd"]) - 1e-9]
    early = max((r["acc_mean"] for r in accs if 1 <= r["round"] <= 3), default=0.0)
    last = accs[-1]["acc_mean"] if accs else 0.0
    ok = not low and not falls and last >= early - 1e-9
    why = (f"valid {min(r['valid_rate'] for r in played):.0%} at worst (rounds below {SUSTAINED_VALID:.0%}: {low or 'none'}); accuracy round "
           f"{accs[-1]['round'] if accs else '-'} {last:.2f} vs best of rounds 1-3 {early:.2f}; rounds falling more than one sd: {falls or 'none'}")
    return ok, why


def render_rounds(sft: list[dict], rl: list[dict]) -> str:
    """The per-round table (valid and the rejection reasons pooled over seeds; near-duplicates, coverage
    and accuracy: means)."""
    rl_by = {r["round"]: r for r in rl}
    lines = ["| round | valid (SFT run) | rejected (SFT run) | near-duplicates | coverage | SFT self-play acc (mean ± sd; per seed) | "
             "valid (RL run) | Self-Play RL acc |",
             "|---|---|---|---|---|---|---|---|"]
    for r in sft:
        q = rl_by.get(r["round"], {})

        def acc(x):
            return "–" if x.get("acc_mean") is None else f"{x['acc_mean']:.2f} ± {x['acc_sd']:.2f} (" + ", ".join(f"{v:.2f}" for v in x["acc"]) + ")"

        if r["round"] == 0:
            lines.append(f"| 0 (base) | – | – | – | – | {acc(r)} | – | {acc(q) if q else '–'} |")
            continue
        nd = "–" if r.get("near_duplicate_rate") is None else f"{r['near_duplicate_rate']:.0%}"
        cov = "–" if r.get("coverage") is None else f"{r['coverage']:.2f}"
        rlv = f"{q['valid']}/{q['proposed']}" if q.get("proposed") else "–"
        rla = "–" if q.get("acc_mean") is None else f"{q['acc_mean']:.2f}"
        rej = ", ".join(f"{k} {n}" for k, n in (r.get("rejected") or {}).items()) or "–"
        lines.append(f"| {r['round']} | {r['valid']}/{r['proposed']} ({r['valid_rate']:.0%}) | {rej} | {nd} | {cov} | {acc(r)} | {rlv} | {rla} |")
    return "\n".join(lines)


def plot_rounds(sft: list[dict], rl: list[dict], curated: float | None, path: Path) -> bool:
    """Valid rate, near-duplicates, coverage and accuracy per round (SFT and RL self-play; curated Closed-SFT dashed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.3))
    panels = (("valid_rate", "valid proposals"), ("near_duplicate_rate", "near-duplicates"), ("coverage", "library coverage"),
              ("acc_mean", "closed-book accuracy"))
    for ax, (key, title) in zip(axes, panels):
        for rows, label, style in ((sft, "SFT self-play", "o-"), (rl, "Self-Play RL", "s--")):
            pts = [(r["round"], r[key]) for r in rows if r.get(key) is not None]
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], style, label=label)
        if key == "valid_rate":
            ax.axhline(SUSTAINED_VALID, color="gray", lw=0.8, ls=":")
        if key == "acc_mean" and curated is not None:
            ax.axhline(curated, color="gray", ls="--", label="curated Closed-SFT")
        ax.set_title(title)
        ax.set_xlabel("round")
        ax.set_ylim(0, 1.05)
    axes[-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def summarize(per_seed: list[dict]) -> dict:
    table = {}
    for m in METHODS:
        vals = [r["closed_test"][m] for r in per_seed]
        mean = sum(vals) / len(vals)
        sd = (sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) ** 0.5 if len(vals) > 1 else 0.0
        table[m] = {"mean": mean, "sd": sd, "per_seed": vals}
    return table


def verdict(table: dict) -> list[str]:
    """The rule, fixed before running: SFT self-play > 0 on every seed and its mean above Self-Play RL's."""
    sft, rl, cur = table["sft_selfplay"], table["rl_selfplay"], table["curated"]
    ok = all(v > 0 for v in sft["per_seed"]) and sft["mean"] > rl["mean"]
    lines = [f"Self-play works with SFT, not with RL (Closed-SFT-Self-Play > 0 on every seed and above Self-Play RL): "
             f"{'REPRODUCED' if ok else 'NOT reproduced'} ({sft['mean']:.2f} vs {rl['mean']:.2f}; SFT self-play per seed "
             + ", ".join(f"{v:.2f}" for v in sft["per_seed"]) + ")"]
    if cur["mean"] > 0:
        lines.append(f"Closed-SFT-Self-Play reaches {sft['mean'] / cur['mean']:.0%} of curated Closed-SFT ({sft['mean']:.2f} / {cur['mean']:.2f}); "
                     f"paper: {PAPER_RATIO:.0%} (22.5 / 39.6, Qwen3-8B single-function)")
    else:
        lines.append("curated Closed-SFT scored 0: no ratio to report")
    return lines


def render_table(table: dict) -> str:
    lines = ["| method | closed book, held-out (mean ± sd; per seed) |", "|---|---|"]
    for m, row in table.items():
        lines.append(f"| {LABELS[m]} | {row['mean']:.2f} ± {row['sd']:.2f} (" + ", ".join(f"{v:.2f}" for v in row["per_seed"]) + ") |")
    return "\n".join(lines)


def run(out: Path, seeds: list[int], base: Path | None = None, quick: bool = False, progress: bool = True, restart: bool = False,
        config: MiniSelfPlayConfig | None = None, device: str | None = None, engine_factory: Any = None) -> int:
    """The experiment in ``out``.  ``base``: a pre-trained tiny model that writes tasks (``se-gym demo
    --selfplay`` passes the demo's base pre-trained with :data:`se_gym.selfplay.miniature.PROPOSE_CORPUS`
    mixed in); None builds the experiment's own (``MiniSelfPlayConfig``'s sizes).  ``engine_factory``:
    see :class:`MiniSelfPlay` (e.g. a Ray engine per self-play run)."""
    import torch

    torch.set_num_threads(1)
    cfg = config or (QUICK if quick else MiniSelfPlayConfig())
    t0 = time.time()
    exp = MiniSelfPlay(Path(out), cfg, progress, device=device, restart=restart, engine_factory=engine_factory)
    base = Path(base) if base is not None else exp.base()
    per_seed = [exp.run_seed(s, base) for s in seeds]
    table = summarize(per_seed)
    checks = verdict(table)
    sft_rounds, rl_rounds = per_round(per_seed, "sft_selfplay"), per_round(per_seed, "rl_selfplay")
    ok, why = sustained(sft_rounds)
    checks.append(f"Self-play sustained (the policy proposing: >= {SUSTAINED_VALID:.0%} valid every round, SFT self-play accuracy not falling): "
                  f"{'SUSTAINED' if ok else 'NOT sustained'} ({why})")
    md = render_table(table)
    rounds_table = render_rounds(sft_rounds, rl_rounds)
    plotted = plot_rounds(sft_rounds, rl_rounds, table["curated"]["mean"], exp.out / "rounds.png")
    wall = time.time() - t0
    rounds_md = []
    for r in per_seed:
        for m, rs in r["rounds"].items():
            for s in rs:
                if s["round"]:
                    acc = "–" if s["closed_book_acc"] is None else f"{s['closed_book_acc']:.2f}"
                    rounds_md.append(f"| {r['seed']} | {LABELS[m]} | {s['round']} | {s['valid']}/{s['proposed']} | {s['rejected']} | "
                                     f"{acc} | " + ", ".join(f"{k} {v:.1f}s" for k, v in s["wall_s"].items()) + " |")
    report = ["# se-gym demo --selfplay: self-play in miniature", "",
              f"Seeds {', '.join(map(str, seeds))}; setting {cfg.setting} ({SETTINGS[cfg.setting] or 'no switch'}), {cfg.rounds} rounds of "
              f"{cfg.proposals} proposals; wall time of this invocation {wall:.0f} s (finished stages were skipped).", "",
              md, "", *[f"- {c}" for c in checks], "",
              "## Per round (pooled or averaged over seeds)", "", rounds_table, "",
              *(["![valid rate, near-duplicates, coverage and accuracy per round](rounds.png)", ""] if plotted else []),
              "## Rounds per seed (valid tasks, rejections, closed-book accuracy, wall time per stage)", "",
              "| seed | run | round | valid | rejected | closed-book acc | wall time |", "|---|---|---|---|---|---|---|", *rounds_md]
    (exp.out / "report.md").write_text("\n".join(report) + "\n", encoding="utf-8")
    (exp.out / "results.json").write_text(json.dumps({"config": asdict(cfg), "setting": SETTINGS[cfg.setting], "seeds": per_seed, "summary": table,
                                                      "rounds": {"sft_selfplay": sft_rounds, "rl_selfplay": rl_rounds}, "checks": checks,
                                                      "wall_s": wall}, indent=1))
    print(md)
    print()
    print(rounds_table)
    print()
    for c in checks:
        print(c)
    print(f"\nreport: {exp.out / 'report.md'}" + (f", plot: {exp.out / 'rounds.png'}" if plotted else "") + f"; wall time {wall:.0f} s")
    return 0
