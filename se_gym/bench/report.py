"""``se-gym bench report``: one leaderboard (Markdown, JSON, plots) over benchmark run folders.

The headline is the **gain over the floor**: per seed and task, the agent's closed-book accuracy minus
that of the same model's ``closed-book`` run of the same configuration, averaged, with a bootstrap
interval over seeds and tasks (the paired differences resampled).  Beside it: accuracy per split, the
test questions on functions no train task uses (``unseen``), retention and forgetting after a second
library (``--stability``), cost (tokens, wall, CPU and GPU seconds, dollars at given prices) and the
sample size of every row (tasks x seeds x samples).
"""
from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..accuracy import pass_at_k
from ..errors import CLIError
from .run import AGENT_ERROR, PROTOCOL_ERROR, TEST_SPLITS

log = logging.getLogger(__name__)

# SE-Bench's published closed-book accuracy (%, Qwen3-8B; single / multiple), shown only beside official runs
PAPER_ROWS = (("Closed-SFT", 39.6, 11.6), ("ExpeL", 47.1, 15.5), ("Closed-SFT-RL", 54.4, 17.9))


def bootstrap_ci(scores: Mapping[Any, Sequence[float]], resamples: int = 10_000, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """Mean and percentile bootstrap interval of a score over tasks and seeds.

    Each resample draws the seeds with replacement, then within each drawn seed its tasks with
    replacement, and pools the drawn task scores.

    Args:
        scores: seed -> per-task scores (each a task's accuracy over its samples).
        resamples: bootstrap resamples.
        level: coverage of the interval.
        seed: of the resampling (the interval is reproducible).

    Returns:
        (mean over all tasks, low, high).
    """
    import numpy as np

    groups = [np.asarray(v, dtype=float) for v in scores.values() if len(v)]
    if not groups:
        raise ValueError("no scores to bootstrap")
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples)
    count = np.zeros(resamples)
    chosen = rng.integers(0, len(groups), size=(resamples, len(groups)))
    for slot in range(len(groups)):
        for g, values in enumerate(groups):
            pick = chosen[:, slot] == g
            k = int(pick.sum())
            if not k:
                continue
            draws = values[rng.integers(0, len(values), size=(k, len(values)))]
            total[pick] += draws.sum(axis=1)
            count[pick] += len(values)
    means = total / count
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    pooled = np.concatenate(groups)
    return float(pooled.mean()), float(low), float(high)


def _load_run(path: Path) -> dict:
    meta = path / "run.json"
    if not meta.is_file():
        raise CLIError(f"{path} is not a se-gym bench run folder (no run.json)")
    run = json.loads(meta.read_text(encoding="utf-8"))
    if run.get("kind") != "bench":
        raise CLIError(f"{path} holds a {run.get('kind')!r} run, not a bench run")
    return run["config"]


KEY_FIELDS = ("tasks", "library", "profile", "model", "book", "samples", "learn_book", "learn_passes", "learn_samples", "limit", "online",
              "orders", "unseen", "season")
FLOOR = "closed-book"  # the spec whose runs are the floor of a configuration
UNSEEN = "unseen"  # the cell of the test questions on functions no train task uses


def _library(config: dict, world: dict) -> str:
    """The library a run's tests were judged against: the official one by id, else minted per seed."""
    return str(world.get("library")) if world.get("official") else f"minted per seed ({config.get('tasks')})"


def collect(run_dirs: Sequence[str]) -> dict:
    """Per configuration: the finished (seed, agent) results of ``run_dirs`` and their test rows.

    Rows are keyed by the whole configuration (:data:`KEY_FIELDS`, the agent's spec and options): one
    agent label run over two task suites, libraries, judge profiles, models, books or sample counts
    gives two rows, never one pooled accuracy.  Runs of one configuration in several folders pool
    their seeds.

    Args:
        run_dirs: the run folders (``se-gym bench --out``).

    Raises:
        CLIError: a folder that is not a bench run, no finished agent, or one seed of one
            configuration found twice (it would be counted twice).
    """
    from .run import read_lines

    agents: dict[tuple, dict] = {}
    official = []
    for d in run_dirs:
        path = Path(d)
        config = _load_run(path)
        for seed_dir in sorted(path.glob("seed*")):
            world = json.loads((seed_dir / "world.json").read_text()) if (seed_dir / "world.json").is_file() else {}
            for adir in sorted(p for p in seed_dir.iterdir() if (p / "result.json").is_file()):
                result = json.loads((adir / "result.json").read_text(encoding="utf-8"))
                bound = json.loads((adir / "run.json").read_text(encoding="utf-8")).get("config", {}) if (adir / "run.json").is_file() else {}
                official.append(bool(world.get("official")))
                setting = {**{k: config.get(k) for k in KEY_FIELDS}, "library": _library(config, world), "book": result["book"]}
                key = (result["agent"], json.dumps(setting, sort_keys=True, default=str), result.get("spec"),
                       json.dumps(bound.get("options", {}), sort_keys=True, default=str))
                entry = agents.setdefault(key, {"runs": [], "config": config, "setting": setting, "agent": result["agent"],
                                                "spec": result.get("spec")})
                clash = next((r for r in entry["runs"] if r["result"]["seed"] == result["seed"]), None)
                if clash is not None:
                    raise CLIError(f"seed {result['seed']} of {result['agent']} appears twice with the same configuration "
                                   f"({clash['dir']} and {path}): give only one of the two folders")
                entry["runs"].append({"dir": str(path), "result": result, "world": world,
                                      "test": read_lines(adir / "test.jsonl", repair=False),
                                      "stability": read_lines(adir / "stability" / "test.jsonl", repair=False),
                                      "accepted": [_accepted(read_lines(p, repair=False)) for p in (adir / "learn.jsonl", adir / "stability" / "learn.jsonl")]})
    if not agents:
        raise CLIError("no finished agent in " + ", ".join(run_dirs) + " (run se-gym bench first, or let it finish)")
    return {"agents": _named(agents), "official": bool(official) and all(official)}


def _accepted(lines: Sequence[dict]) -> tuple[int, int]:
    """(accepted, judged) answers of a learn phase."""
    rows = [r for line in lines for r in line["rows"] if r["reward"] is not None]
    return sum(float(r["reward"]) >= 1.0 for r in rows), len(rows)


def _learn_rates(runs: Sequence[dict]) -> tuple[float | None, float | None]:
    """Shares of learn answers accepted on the first and on the second library, pooled over ``runs``."""
    out = []
    for i in (0, 1):
        ok, judged = (sum(run["accepted"][i][j] for run in runs) for j in (0, 1))
        out.append(ok / judged if judged else None)
    return out[0], out[1]


def _named(entries: dict[tuple, dict]) -> dict[str, dict]:
    """Row names: the agent (model) [online], and where one name covers several configurations, the
    fields in which they differ ("expel (profile strict)")."""
    def base(e):
        s = e["setting"]
        return e["agent"] + (f" ({s['model']})" if s.get("model") else "") + (" [online]" if s.get("online") else "")

    groups: dict[str, list[dict]] = defaultdict(list)
    for e in entries.values():
        groups[base(e)].append(e)
    out = {}
    for name, group in groups.items():
        if len(group) == 1:
            out[name] = group[0]
            continue
        differ = [k for k in KEY_FIELDS if len({json.dumps(e["setting"].get(k), default=str) for e in group}) > 1]
        for i, e in enumerate(group):
            tag = ", ".join(f"{k} {e['setting'][k]}" for k in differ) or f"configuration {i + 1}"
            out[f"{name} ({tag})"] = e
    return out


def _mean(values) -> float | None:
    """The mean of the values that are not None (a memory size per seed), None when there are none."""
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


Outcomes = dict  # seed (str) -> task -> list of bools (judged answers only)


def _outcomes(lines: Sequence[dict], keep) -> tuple[dict[str, dict], Counter]:
    """Per split: task -> judged outcomes (right or not) of the rows ``keep(row, split)`` admits; and
    the infrastructure answers per split (neither right nor wrong: counted out)."""
    out: dict[str, dict] = defaultdict(lambda: defaultdict(list))
    infra: Counter = Counter()
    for line in lines:
        for r in line["rows"]:
            split = r.get("split") or line["split"]
            if not keep(r, split):
                continue
            outcomes = out[split][r["task"]]  # (a task all of whose answers failed for infrastructure scores nowhere)
            if r["reward"] is not None:
                outcomes.append(float(r["reward"]) >= 1.0)
            elif r["status"] == "infrastructure":
                infra[split] += 1
    return out, infra


def _scores(per_seed: Outcomes) -> dict[str, dict[str, float]]:
    """seed -> task -> accuracy over its judged answers (tasks without one left out)."""
    return {s: {t: sum(v) / len(v) for t, v in tasks.items() if v} for s, tasks in per_seed.items()}


def _cell(per_seed: Outcomes, samples: int, infra: int) -> dict | None:
    """Accuracy with its interval, the tasks, pass@k over the tasks with k judged answers, per seed."""
    scores = {s: list(v.values()) for s, v in _scores(per_seed).items() if v}
    if not scores:
        return None
    mean, low, high = bootstrap_ci(scores)
    cell = {"accuracy": mean, "ci95": [low, high], "tasks": sum(len(v) for v in scores.values()), "k": samples, "infrastructure": infra,
            "per_seed": {s: sum(v) / len(v) for s, v in scores.items()}}
    if samples > 1:  # an infrastructure answer is neither right nor wrong: pass@k over the tasks with k judged answers
        complete = [v for tasks in per_seed.values() for v in tasks.values() if len(v) >= samples]
        cell["pass@k_tasks"] = len(complete)
        if complete:
            cell[f"pass@{samples}"] = sum(pass_at_k(len(v), sum(v), samples) for v in complete) / len(complete)
    return cell


def paired_difference(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> dict | None:
    """Mean of ``a - b`` over the (seed, task) pairs both have, a bootstrap interval over seeds and tasks
    (the paired differences resampled), and the mean per seed; None when no pair is shared.

    Args:
        a: seed -> task -> score of one agent.
        b: the same of the other.
    """
    diffs = {s: [a[s][t] - b[s][t] for t in sorted(a[s]) if t in b[s]] for s in sorted(a) if s in b}
    diffs = {s: d for s, d in diffs.items() if d}
    if not diffs:
        return None
    mean, low, high = bootstrap_ci(diffs)
    return {"mean": mean, "ci95": [low, high], "per_seed": {s: sum(d) / len(d) for s, d in diffs.items()}, "pairs": sum(map(len, diffs.values()))}


def summarize(collected: dict, prices: Mapping[str, float] | None = None) -> dict:
    """The leaderboard rows (JSON-ready), sorted by the gain over the floor on the headline split.

    Args:
        collected: what :func:`collect` returned.
        prices: US dollars per million tokens, ``{"prompt": P, "completion": C}``; None: no dollar column.
    """
    rows, scores_of = {}, {}
    for name, entry in collected["agents"].items():
        samples = int(entry["config"].get("samples") or 1)
        per_split: dict[str, Outcomes] = defaultdict(dict)
        unseen: Outcomes = {}
        by_order: dict[int, Outcomes] = defaultdict(dict)
        stab_after: Outcomes = {}
        infra: Counter = Counter()
        statuses: Counter = Counter()
        cost = {"test": Counter(), "learn": Counter()}
        answers = 0
        for run in entry["runs"]:
            seed = str(run["result"]["seed"])
            held = set(run["world"].get("unseen_tasks", ()))
            outs, inf = _outcomes(run["test"], lambda r, split: True)
            infra.update(inf)
            for split, tasks in outs.items():
                if split in TEST_SPLITS:
                    per_split[split][seed] = {t: v for t, v in tasks.items()}
            unseen[seed] = {t: v for tasks in outs.values() for t, v in tasks.items() if t in held}
            for line in run["test"]:
                by_order[line.get("order", 0)].setdefault(seed, defaultdict(list))
                for r in line["rows"]:
                    answers += 1
                    statuses[r["status"] or "?"] += 1
                    if r["reward"] is not None:
                        by_order[line.get("order", 0)][seed][r["task"]].append(float(r["reward"]) >= 1.0)
                for k in ("prompt_tokens", "completion_tokens", "wall_s", "cpu_s", "gpu_s"):
                    cost["test"][k] += line.get(k, 0) or 0
            freeze = run["result"]["freeze"]
            for k in ("prompt_tokens", "completion_tokens", "wall_s", "cpu_s", "gpu_s"):
                cost["learn"][k] += freeze.get(k, 0) or 0
            if run["stability"]:
                stab_after[seed] = {t: v for tasks in _outcomes(run["stability"], lambda r, split: True)[0].values() for t, v in tasks.items()}
        n_seeds = len(entry["runs"])
        row: dict[str, Any] = {"book": entry["runs"][0]["result"]["book"], "seeds": n_seeds, "config": entry["setting"],
                               "floor": entry.get("spec") == FLOOR}
        for split in TEST_SPLITS:
            cell = _cell(per_split.get(split, {}), samples, infra[split])
            if cell:
                row[split] = cell
        cell = _cell({s: v for s, v in unseen.items() if v}, samples, 0)
        if cell:
            row[UNSEEN] = cell
        headline = next((s for s in TEST_SPLITS if s in row), None)
        orders = int(entry["config"].get("orders") or 1)
        row["n"] = {"tasks_per_seed": (row[headline]["tasks"] / n_seeds) if headline else 0, "seeds": n_seeds, "samples": samples, "orders": orders}
        if orders > 1:
            accs = []
            for o in sorted(by_order):
                flat = [x for tasks in _scores(by_order[o]).values() for x in tasks.values()]
                accs.append(sum(flat) / len(flat) if flat else 0.0)
            mean = sum(accs) / len(accs)
            row["order_spread"] = {"orders": len(accs), "accuracy": accs, "min": min(accs), "max": max(accs),
                                   "sd": (sum((a - mean) ** 2 for a in accs) / len(accs)) ** 0.5}
        if stab_after:  # forgetting: before - after on the first library's test questions, paired by task
            before = {s: {t: v for split in per_split.values() for t, v in _scores(split).get(s, {}).items()} for s in stab_after}
            for s in stab_after:
                before[s].update(_scores(unseen).get(s, {}))
            after = _scores(stab_after)
            diff = paired_difference(before, after)
            if diff:
                b = [before[s][t] for s in after for t in after[s] if t in before[s]]
                a = [after[s][t] for s in after for t in after[s] if t in before[s]]
                # plasticity, as a proxy: how many of its learn answers the judge accepted on each library
                first, second = _learn_rates([run for run in entry["runs"] if run["stability"]])
                row["stability"] = {"before": sum(b) / len(b), "after": sum(a) / len(a), "retention": (sum(a) / sum(b)) if sum(b) else None,
                                    "forgetting": diff["mean"], "ci95": diff["ci95"], "per_seed": diff["per_seed"], "seeds": len(after),
                                    "learn_accepted_first": first, "learn_accepted_second": second}
        per_seed_cost = {phase: {k: v / n_seeds for k, v in c.items()} for phase, c in cost.items()}
        if prices:
            for phase in per_seed_cost.values():
                phase["dollars"] = (phase.get("prompt_tokens", 0) * prices.get("prompt", 0) + phase.get("completion_tokens", 0) * prices.get("completion", 0)) / 1e6
        freezes = [run["result"]["freeze"] for run in entry["runs"]]
        row.update({
            "cost": per_seed_cost,
            "prompt_tokens_per_answer": cost["test"]["prompt_tokens"] / answers if answers else None,
            "learn_wall_s": sum(f.get("wall_s", 0.0) for f in freezes) / n_seeds,
            "learn_tokens": sum(f.get("prompt_tokens", 0) + f.get("completion_tokens", 0) for f in freezes) / n_seeds,
            "test_wall_s": cost["test"]["wall_s"] / n_seeds,
            "memory_entries": _mean(f.get("memory_entries") for f in freezes), "memory_bytes": _mean(f.get("memory_bytes") for f in freezes),
            "memory_changed": sum(run["result"]["memory_changed"] for run in entry["runs"]),
            "online": bool(entry["config"].get("online")),
            "protocol_refusals": statuses.get(PROTOCOL_ERROR, 0), "agent_errors": statuses.get(AGENT_ERROR, 0),
            "statuses": dict(statuses.most_common()),
        })
        rows[name] = row
        scores_of[name] = ({split: _scores(per_split.get(split, {})) for split in TEST_SPLITS}, _scores(unseen), entry)
    _gains(rows, scores_of)
    order = sorted(rows, key=lambda n: (_gain_of(rows[n]) is None, -(_gain_of(rows[n]) or 0.0), -_accuracy_of(rows[n]), n))
    rows = {n: rows[n] for n in order}
    return {"agents": rows, "official": collected["official"], "prices": dict(prices) if prices else None, "pareto": pareto(rows)}


def _group(entry: dict) -> str:
    """What must match for a floor to be an agent's floor: the configuration but the book."""
    return json.dumps({k: v for k, v in entry["setting"].items() if k != "book"}, sort_keys=True, default=str)


def _gains(rows: dict, scores_of: dict) -> None:
    """Each row's gain over the floor of its configuration, per split, in place."""
    floors = {}
    for name, (_, _, entry) in scores_of.items():
        if entry.get("spec") == FLOOR:
            floors.setdefault(_group(entry), name)
    for name, (splits, unseen, entry) in scores_of.items():
        floor = floors.get(_group(entry))
        if floor is None:
            continue
        f_splits, f_unseen, _ = scores_of[floor]
        gain = {}
        for split in TEST_SPLITS:
            d = paired_difference(splits[split], f_splits[split])
            if d:
                gain[split] = d
        d = paired_difference(unseen, f_unseen)
        if d:
            gain[UNSEEN] = d
        rows[name]["gain"] = gain
        rows[name]["floor_row"] = floor


def _headline(row: dict) -> str | None:
    return next((s for s in TEST_SPLITS if s in row), None)


def _gain_of(row: dict) -> float | None:
    h = _headline(row)
    g = row.get("gain", {}).get(h) if h else None
    return g["mean"] if g else None


def _accuracy_of(row: dict) -> float:
    h = _headline(row)
    return row[h]["accuracy"] if h else 0.0


def cost_of(row: dict) -> tuple[float, str]:
    """The cost a Pareto plot weighs gain against: dollars per seed at the given prices, else the tokens
    per seed (prompt and generated, learn and test phases).

    Args:
        row: one row of the summary.

    Returns:
        (the cost, its unit).
    """
    c = row.get("cost", {})
    if "dollars" in c.get("test", {}):
        return sum(c[p].get("dollars", 0.0) for p in ("learn", "test")), "US dollars per seed"
    return sum(c.get(p, {}).get(k, 0.0) for p in ("learn", "test") for k in ("prompt_tokens", "completion_tokens")), "tokens per seed (learn + test)"


def pareto(rows: dict) -> list[str]:
    """The rows no other row beats on both gain (higher) and cost (lower): the Pareto front, cheapest first.

    Args:
        rows: label -> row of the summary.
    """
    points = {n: (cost_of(r)[0], _gain_of(r)) for n, r in rows.items() if _gain_of(r) is not None and r["book"] == "closed"}
    front = [n for n, (c, g) in points.items()
             if not any((c2 <= c and g2 >= g) and (c2 < c or g2 > g) for m, (c2, g2) in points.items() if m != n)]
    return sorted(front, key=lambda n: points[n])


def _pct(x: float | None, signed: bool = False) -> str:
    return "–" if x is None else (f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}")


def _acc_cell(row: dict, split: str) -> str:
    c = row.get(split)
    if not c:
        return "–"
    return f"{100 * c['accuracy']:.1f} [{100 * c['ci95'][0]:.1f}, {100 * c['ci95'][1]:.1f}]"


def _gain_cell(row: dict) -> tuple[str, str]:
    if row.get("floor"):
        return "0 (the floor)", "–"
    g = row.get("gain", {}).get(_headline(row) or "")
    if not g:
        return "– (no closed-book run of this configuration)" if "gain" not in row else "–", "–"
    per = ", ".join(_pct(v, True) for _, v in sorted(g["per_seed"].items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else kv[0]))
    return f"**{_pct(g['mean'], True)}** [{_pct(g['ci95'][0], True)}, {_pct(g['ci95'][1], True)}]", per


def _unseen_cell(row: dict) -> str:
    c = row.get(UNSEEN)
    if not c:
        return "–"
    g = row.get("gain", {}).get(UNSEEN)
    return _acc_cell(row, UNSEEN) + (f" (gain {_pct(g['mean'], True)})" if g and not row.get("floor") else "")


def _stability_cell(row: dict) -> str:
    st = row.get("stability")
    if not st:
        return "–"
    ret = f"{100 * st['retention']:.0f}%" if st["retention"] is not None else "– (nothing to retain)"
    return f"{ret}; forgot {_pct(st['forgetting'], True)} [{_pct(st['ci95'][0], True)}, {_pct(st['ci95'][1], True)}]"


def _plasticity_cell(row: dict) -> str:
    st = row.get("stability")
    if not st or st.get("learn_accepted_second") is None:
        return "–"
    return f"{_pct(st['learn_accepted_first'])} / {_pct(st['learn_accepted_second'])}"


def _n_cell(row: dict) -> str:
    n = row.get("n")
    if not n:
        return "–"
    t = n["tasks_per_seed"]
    tasks = f"{t:.0f}" if float(t).is_integer() else f"{t:.1f}"
    return f"{tasks} × {n['seeds']} × {n['samples']}" + (f" × {n['orders']} orders" if n["orders"] > 1 else "")


def _num(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else f"{x:.1f}" if x else "0"


def _pass_at_k(cell: dict, split: str) -> str:
    k = cell["k"]
    if f"pass@{k}" not in cell:
        return f"{split} pass@{k}: – (no task with {k} judged answers)"
    total = cell["tasks"]
    return f"{split} pass@{k}: {100 * cell[f'pass@{k}']:.1f}" + (f" ({cell['pass@k_tasks']} of {total} tasks)" if cell["pass@k_tasks"] < total else "")


def render(summary: dict) -> str:
    """The leaderboard as Markdown: the gains, the costs, the protocol.

    Args:
        summary: what :func:`summarize` returned.
    """
    rows = summary["agents"]
    label = {n: n + (" (open book: ceiling, not closed book)" if r["book"] == "open" else "") for n, r in rows.items()}
    lines = ["Closed-book accuracy unless marked. **Gain**: points over the same model's closed-book floor of the same configuration, "
             "per seed and task, with a bootstrap 95% interval over seeds and tasks; rows sorted by it. Retention and forgetting: "
             "the first library's test asked again after learning a second one (--stability); beside them, how many of the learn answers "
             "the judge accepted on each library (learning the second at all). n: tasks of the headline split per seed × seeds × samples.", "",
             "| agent | gain over the floor, points [95% CI] | gain per seed | single_test % [95% CI] | multiple_test % [95% CI] "
             "| unseen functions % [95% CI] | retention; forgetting, points [95% CI] | learn answers accepted, 1st / 2nd library % | n |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        gain, per = _gain_cell(r)
        lines.append(f"| {label[name]} | {gain} | {per} | {_acc_cell(r, 'single_test')} | {_acc_cell(r, 'multiple_test')} | {_unseen_cell(r)} "
                     f"| {_stability_cell(r)} | {_plasticity_cell(r)} | {_n_cell(r)} |")
    priced = bool(summary.get("prices"))
    lines += ["", "Cost per seed (mean over seeds): tokens of the learn / test phases, wall time of the learn phase, CPU and GPU seconds "
              "(GPU: wall time while the agent's model holds a GPU) of the learn / test phases" + (", dollars at the given prices" if priced else "")
              + "; memory at freeze.", "",
              "| agent | prompt tokens, learn / test | generated tokens, learn / test | prompt tokens / answer | learn phase "
              "| CPU s, learn / test | GPU s | " + ("$ | " if priced else "") + "memory (entries, bytes) |",
              "|---|---|---|---|---|---|---|" + ("---|" if priced else "") + "---|"]
    for name, r in rows.items():
        c = r.get("cost", {"learn": {}, "test": {}})
        le, te = c.get("learn", {}), c.get("test", {})
        tok = f"{r['prompt_tokens_per_answer']:.0f}" if r.get("prompt_tokens_per_answer") else "–"
        learn = (f"{r['learn_wall_s']:.0f} s" + (f", {r['learn_tokens']:,.0f} tokens" if r.get("learn_tokens") else "")) if r.get("learn_wall_s") else "–"
        mem = ", ".join(f"{v:.0f}" if v is not None else "–" for v in (r.get("memory_entries"), r.get("memory_bytes")))
        gpu = le.get("gpu_s", 0) + te.get("gpu_s", 0)
        dollars = f"{le.get('dollars', 0) + te.get('dollars', 0):.4f} | " if priced else ""
        lines.append(f"| {label[name]} | {_num(le.get('prompt_tokens', 0))} / {_num(te.get('prompt_tokens', 0))} "
                     f"| {_num(le.get('completion_tokens', 0))} / {_num(te.get('completion_tokens', 0))} | {tok} | {learn} "
                     f"| {_num(le.get('cpu_s', 0))} / {_num(te.get('cpu_s', 0))} | {_num(gpu)} | {dollars}{mem} |")
    if summary.get("pareto"):
        lines += ["", "Pareto front of gain against cost (" + cost_of(rows[summary["pareto"][0]])[1] + "): " + ", ".join(summary["pareto"]) + "."]
    lines += ["", "| agent | pass@k | memory during test | online: memory changed | order spread (accuracy %) | answers by status |",
              "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        pk = "; ".join(_pass_at_k(r[s], s) for s in TEST_SPLITS if s in r and r[s].get("k", 1) > 1) or "–"
        changed = r["memory_changed"]
        if r["online"]:  # the online setting: a change is allowed, and reported in its own column
            during, online = "– (online)", f"in {changed} of {r['seeds']} run(s)"
        else:
            during, online = ("unchanged" if not changed else f"**memory changed during test** ({changed} run(s))"), "–"
        sp = r.get("order_spread")
        spread = f"{sp['orders']} orders: {_pct(sp['min'])}-{_pct(sp['max'])} (sd {_pct(sp['sd'])})" if sp else "–"
        errors = ", ".join(f"{k} {v}" + (" (counted out)" if k == "infrastructure" else "") for k, v in r["statuses"].items() if k != "passed") or "–"
        lines.append(f"| {label[name]} | {pk} | {during} | {online} | {spread} | {errors} |")
    refused = {n: r["protocol_refusals"] for n, r in rows.items() if r["protocol_refusals"]}
    if refused:
        lines += ["", "Protocol: refused attempts to learn during the test phase (each answer counted wrong): "
                  + ", ".join(f"{n} {c}" for n, c in refused.items()) + "."]
    if summary.get("season"):
        lines = _season_lines(summary) + lines
    if summary["official"]:
        lines += ["", "Reference values, **the paper's** (SE-Bench, Qwen3-8B, closed book; not measured here):", "",
                  "| paper's method | single_test % | multiple_test % |", "|---|---|---|"]
        lines += [f"| {m} (paper) | {s} | {t} |" for m, s, t in PAPER_ROWS]
    return "\n".join(lines) + "\n"


def _season_lines(summary: dict) -> list[str]:
    """A season's header: the commitment, and per (seed, agent) the code that ran and its memory digests."""
    out = [f"**Season** with commitment `{summary['season']}` (SHA-256 of the organiser's secret; the libraries were minted "
           "from seeds derived from it, which no agent saw; `se-gym bench verify REPORT --secret SECRET` checks them once it is revealed).", "",
           "| seed / agent | agent code (source file, SHA-256) | memory at freeze | memory after the test |", "|---|---|---|---|"]
    for d, prov in (summary.get("provenance") or {}).items():
        for key, a in prov["agents"].items():
            code = a.get("code") or {}
            shown = f"{code.get('class', code.get('service', '?'))} ({code.get('file', '–')}, `{code.get('sha256', '–')[:16]}`)"
            out.append(f"| {key} | {shown} | `{a['memory_at_freeze'][:16]}` | `{a['memory_after_test'][:16]}` |")
        out.append(f"| results of {Path(d).name} | SHA-256 of every judged answer and result: `{prov['results_sha256'][:32]}` | | |")
    return out + [""]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def plot(summary: dict, path: Path) -> bool:
    """Bars of closed-book accuracy with the intervals; False when matplotlib is not installed.

    Args:
        summary: what :func:`summarize` returned.
        path: the PNG to write.
    """
    plt = _pyplot()
    if plt is None:
        return False
    names = list(summary["agents"])
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(names)), 3.6))
    width = 0.38
    for j, split in enumerate(TEST_SPLITS):
        xs, ys, errs = [], [], [[], []]
        for i, n in enumerate(names):
            c = summary["agents"][n].get(split)
            if c:
                xs.append(i + (j - 0.5) * width)
                ys.append(c["accuracy"])
                errs[0].append(c["accuracy"] - c["ci95"][0])
                errs[1].append(c["ci95"][1] - c["accuracy"])
        if xs:
            ax.bar(xs, ys, width, yerr=errs, capsize=3, label=split)
    ax.set_xticks(range(len(names)), names, rotation=15, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy (95% CI)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_pareto(summary: dict, path: Path) -> bool:
    """Gain over the floor against cost, one point per closed-book agent, the Pareto front joined; False
    when matplotlib is not installed or no row has a gain.

    Args:
        summary: what :func:`summarize` returned.
        path: the PNG to write.
    """
    rows = {n: r for n, r in summary["agents"].items() if _gain_of(r) is not None and r["book"] == "closed"}
    plt = _pyplot() if rows else None
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    unit = cost_of(next(iter(rows.values())))[1]
    at: dict[tuple, list[str]] = defaultdict(list)  # rows on the same point share one label
    for n, r in rows.items():
        at[(cost_of(r)[0], _gain_of(r))].append(n)
    for (c, g), names in at.items():
        r = rows[names[0]]
        ci = r["gain"][_headline(r)]["ci95"] if not r.get("floor") else [g, g]
        ax.errorbar([c], [100 * g], yerr=[[100 * (g - ci[0])], [100 * (ci[1] - g)]], fmt="o", capsize=3)
        ax.annotate(", ".join(names), (c, 100 * g), textcoords="offset points", xytext=(4, 4), fontsize=8)
    front = summary.get("pareto") or []
    if len(front) > 1:
        ax.plot([cost_of(rows[n])[0] for n in front], [100 * _gain_of(rows[n]) for n in front], "--", color="grey", label="Pareto front")
        ax.legend()
    ax.set_xlabel(unit)
    ax.set_ylabel("gain over the floor, points (95% CI)")
    ax.axhline(0, color="black", linewidth=0.5)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def summarize_runs(run_dirs: Sequence[str], prices: Mapping[str, float] | None = None) -> dict:
    """:func:`summarize` of :func:`collect`, with the provenance of the run folders and a season's commitment.

    Args:
        run_dirs: the run folders (``se-gym bench --out``).
        prices: dollars per million tokens (``prompt``, ``completion``), for the cost column.
    """
    from .season import provenance, season_of

    summary = summarize(collect(run_dirs), prices)
    summary["provenance"] = provenance(run_dirs)
    summary["season"] = season_of(run_dirs)
    return summary


def write(run_dirs: Sequence[str], out: str | Path, prices: Mapping[str, float] | None = None) -> dict:
    """Write ``out`` (Markdown), ``out`` with ``.json``, ``.png`` (accuracy) and ``_pareto.png``; returns the summary.

    Args:
        run_dirs: the run folders (``se-gym bench --out``).
        out: the Markdown file.
        prices: dollars per million tokens (``prompt``, ``completion``), for the cost column.
    """
    from ..storage import write_json_atomic, write_text_atomic

    out = Path(out)
    summary = summarize_runs(run_dirs, prices)
    md = render(summary)
    plotted = plot(summary, out.with_suffix(".png"))
    pareto_png = out.with_name(out.stem + "_pareto.png")
    pareto_plotted = plotted and plot_pareto(summary, pareto_png)
    if not plotted:
        md += "\n(no plot: matplotlib is not installed; pip install 'se-gym[plot]')\n"
    write_text_atomic(out, md)
    write_json_atomic(out.with_suffix(".json"), summary)
    summary["plot"] = str(out.with_suffix(".png")) if plotted else None
    summary["pareto_plot"] = str(pareto_png) if pareto_plotted else None
    return summary


__all__ = ["FLOOR", "KEY_FIELDS", "PAPER_ROWS", "bootstrap_ci", "collect", "cost_of", "paired_difference", "pareto", "plot", "plot_pareto",
           "render", "summarize", "summarize_runs", "write"]
