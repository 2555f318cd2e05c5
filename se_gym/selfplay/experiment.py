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
"""
from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .. import metrics_log

log = logging.getLogger(__name__)

PAPER_RATIO = 22.5 / 39.6  # SE-Bench, Qwen3-8B single-function: Closed-SFT-Self-Play / Closed-SFT
METHODS = ("base", "curated", "sft_selfplay", "rl_selfplay")
LABELS = {
    "base": "Base (no training)",
    "curated": "Closed-SFT, curated tasks",
    "sft_selfplay": "Closed-SFT-Self-Play",
    "rl_selfplay": "Self-Play RL",
}


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
    train_per_function: int = 4
    samples: int = 4
    sft_epochs: int = 30
    sft_lr: float = 2e-3
    rounds: int = 3
    proposals: int = 12
    sp_sft_epochs: int = 10  # per round (3 rounds ~ the curated run's 30 epochs)
    rl_lr: float = 1e-3
    min_tasks: int = 12
    max_new_tokens: int = 32
    propose_max_tokens: int = 200


QUICK = MiniSelfPlayConfig(pretrain_read=8_000, pretrain_propose=3_000, functions=4, rounds=2, proposals=8, sft_epochs=15, sp_sft_epochs=8)


def _log(msg: str) -> None:
    log.info(msg)


class MiniSelfPlay:
    def __init__(self, out: Path, cfg: MiniSelfPlayConfig, progress: bool = True, device: str | None = None, restart: bool = False):
        self.out, self.cfg, self.progress, self.device, self.restart = Path(out).resolve(), cfg, progress, device, restart

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
            verdicts = iter(engine.judge([(r, t.test_cases, t.function_name) for t, g in zip(train, groups) for r in g]))
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
        from .loop import SelfPlay, SelfPlayConfig

        cfg = self.cfg
        sp_cfg = SelfPlayConfig(
            model=str(base), library=f"seed:{100 + seed}", prompts="miniature", regime=regime, rounds=cfg.rounds, proposals=cfg.proposals,
            k=1, functions=tuple(functions), samples=cfg.samples, proposer_reward="gap", min_tasks=cfg.min_tasks, eval="miniature",
            eval_limit=0, propose_temperature=1.0, solve_temperature=0.6, propose_max_tokens=cfg.propose_max_tokens,
            solve_max_tokens=cfg.max_new_tokens, sft_lr=cfg.sft_lr, sft_epochs=cfg.sp_sft_epochs, sft_batch=8, rl_lr=cfg.rl_lr,
            rl_ppo_epochs=2, rl_minibatch=32, seed=seed,
        )
        sp_cfg = replace(sp_cfg, **overrides)
        name = name or ("sft_selfplay" if regime == "sft" else "rl_selfplay")
        sp = SelfPlay(sp_cfg, sdir / name, progress=self.progress, log=_log, device=self.device)
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
            verdicts = engine.judge([(g[0], t.test_cases, t.function_name) for t, g in zip(tasks, outs)])
        finally:
            engine.close()
        return sum(1 for r, _ in verdicts if r >= 1.0) / len(verdicts)

    def run_seed(self, seed: int, base: Path) -> dict:
        from ..storage import RunDir, write_json_atomic

        sdir = RunDir(self.out / f"seed{seed}", "selfplay-miniature-seed", {**asdict(self.cfg), "seed": seed, "base": str(base)},
                      restart=self.restart).path  # another scale (or base) is refused, or with --restart redone
        res_path = sdir / "results.json"
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
            rounds[f"{regime}_selfplay"] = [{k: s.get(k) for k in ("round", "proposed", "valid", "valid_rate", "rejected", "closed_book_acc",
                                                                   "label_noise_mean", "topped_up", "reward_signal_share", "wall_s")}
                                            for s in summaries]
            t[f"{regime}_selfplay"] = time.time() - t0
        acc = {}
        for m, p in models.items():
            acc[m] = self.evaluate(p, library, test)
            _log(f"[seed {seed}] {LABELS[m]}: closed-book held-out {acc[m]:.2f}")
        out = {"seed": seed, "library": library.id, "functions": functions, "n_test": len(test), "closed_test": acc, "rounds": rounds, "wall_s": t}
        write_json_atomic(res_path, out)
        return out


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
        config: MiniSelfPlayConfig | None = None, device: str | None = None) -> int:
    """The experiment in ``out``.  ``base``: a pre-trained tiny model that writes tasks (``se-gym demo
    --selfplay`` passes the demo's base pre-trained with :data:`se_gym.selfplay.miniature.PROPOSE_CORPUS`
    mixed in); None builds the experiment's own (``MiniSelfPlayConfig``'s sizes)."""
    import torch

    torch.set_num_threads(1)
    cfg = config or (QUICK if quick else MiniSelfPlayConfig())
    t0 = time.time()
    exp = MiniSelfPlay(Path(out), cfg, progress, device=device, restart=restart)
    base = Path(base) if base is not None else exp.base()
    per_seed = [exp.run_seed(s, base) for s in seeds]
    table = summarize(per_seed)
    checks = verdict(table)
    md = render_table(table)
    wall = time.time() - t0
    rounds_md = []
    for r in per_seed:
        for m, rs in r["rounds"].items():
            for s in rs:
                if s["round"]:
                    rounds_md.append(f"| {r['seed']} | {LABELS[m]} | {s['round']} | {s['valid']}/{s['proposed']} | {s['rejected']} | "
                                     f"{s['closed_book_acc']:.2f} | " + ", ".join(f"{k} {v:.1f}s" for k, v in s["wall_s"].items()) + " |")
    report = ["# se-gym demo --selfplay: self-play in miniature", "",
              f"Seeds {', '.join(map(str, seeds))}; wall time of this invocation {wall:.0f} s (finished stages were skipped).", "",
              md, "", *[f"- {c}" for c in checks], "",
              "## Rounds (valid tasks, rejections, closed-book accuracy, wall time per stage)", "",
              "| seed | run | round | valid | rejected | closed-book acc | wall time |", "|---|---|---|---|---|---|---|", *rounds_md]
    (exp.out / "report.md").write_text("\n".join(report) + "\n", encoding="utf-8")
    (exp.out / "results.json").write_text(json.dumps({"config": asdict(cfg), "seeds": per_seed, "summary": table, "checks": checks, "wall_s": wall}, indent=1))
    print(md)
    print()
    for c in checks:
        print(c)
    print(f"\nreport: {exp.out / 'report.md'}; wall time {wall:.0f} s")
    return 0
