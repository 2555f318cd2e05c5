"""``se-gym bench report``: one leaderboard (Markdown, JSON, plot) over benchmark run folders."""
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


KEY_FIELDS = ("tasks", "library", "profile", "model", "book", "samples", "learn_book", "learn_passes", "learn_samples", "limit", "online")


def _library(config: dict, world: dict) -> str:
    """The library a run's tests were judged against: the official one by id, else minted per seed."""
    return str(world.get("library")) if world.get("official") else f"minted per seed ({config.get('tasks')})"


def collect(run_dirs: Sequence[str]) -> dict:
    """Per configuration: the finished (seed, agent) results of ``run_dirs`` and their test rows.

    Rows are keyed by the whole configuration (:data:`KEY_FIELDS`, the agent's spec and options): one
    agent label run over two task suites, libraries, judge profiles, models, books or sample counts
    gives two rows, never one pooled accuracy.  Runs of one configuration in several folders pool
    their seeds.

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
                entry = agents.setdefault(key, {"runs": [], "config": config, "setting": setting, "agent": result["agent"]})
                clash = next((r for r in entry["runs"] if r["result"]["seed"] == result["seed"]), None)
                if clash is not None:
                    raise CLIError(f"seed {result['seed']} of {result['agent']} appears twice with the same configuration "
                                   f"({clash['dir']} and {path}): give only one of the two folders")
                entry["runs"].append({"dir": str(path), "seed_key": f"{path}:{result['seed']}", "result": result, "world": world,
                                      "test": read_lines(adir / "test.jsonl", repair=False)})
    if not agents:
        raise CLIError("no finished agent in " + ", ".join(run_dirs) + " (run se-gym bench first, or let it finish)")
    return {"agents": _named(agents), "official": bool(official) and all(official)}


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


def summarize(collected: dict) -> dict:
    """The leaderboard rows (JSON-ready): accuracy with intervals, pass@k, costs, memory, errors."""
    rows = {}
    for name, entry in collected["agents"].items():
        per_split: dict[str, dict] = {s: defaultdict(lambda: defaultdict(list)) for s in TEST_SPLITS}
        statuses: Counter = Counter()
        prompt_tokens = answers = 0
        test_wall = 0.0
        infra: Counter = Counter()
        for run in entry["runs"]:
            for line in run["test"]:
                prompt_tokens += line.get("prompt_tokens", 0)
                test_wall += line.get("wall_s", 0.0)
                for r in line["rows"]:
                    answers += 1
                    statuses[r["status"] or "?"] += 1
                    outcomes = per_split[line["split"]][run["seed_key"]][r["task"]]  # (a task all of whose answers failed
                    if r["reward"] is not None:                                       # for infrastructure is no score)
                        outcomes.append(float(r["reward"]) >= 1.0)
                    elif r["status"] == "infrastructure":
                        infra[line["split"]] += 1
        row: dict[str, Any] = {"book": entry["runs"][0]["result"]["book"], "seeds": len(entry["runs"]), "config": entry["setting"]}
        samples = int(entry["config"].get("samples") or 1)
        for split, seeds in per_split.items():
            scores = {s: [sum(v) / len(v) for v in tasks.values() if v] for s, tasks in seeds.items()}
            scores = {s: v for s, v in scores.items() if v}
            if not scores:
                continue
            mean, low, high = bootstrap_ci(scores)
            cell = {"accuracy": mean, "ci95": [low, high], "tasks": sum(len(v) for v in scores.values()), "k": samples,
                    "infrastructure": infra[split]}
            if samples > 1:  # pass@k over the tasks with k judged answers; an infrastructure answer is neither right nor wrong
                complete = [v for tasks in seeds.values() for v in tasks.values() if len(v) >= samples]
                cell["pass@k_tasks"] = len(complete)
                if complete:
                    cell[f"pass@{samples}"] = sum(pass_at_k(len(v), sum(v), samples) for v in complete) / len(complete)
            row[split] = cell
        freezes = [run["result"]["freeze"] for run in entry["runs"]]
        row.update({
            "prompt_tokens_per_answer": prompt_tokens / answers if answers else None,
            "learn_wall_s": sum(f.get("wall_s", 0.0) for f in freezes) / len(freezes),
            "learn_tokens": sum(f.get("prompt_tokens", 0) + f.get("completion_tokens", 0) for f in freezes) / len(freezes),
            "test_wall_s": test_wall / len(entry["runs"]),
            "memory_entries": _mean(f.get("memory_entries") for f in freezes), "memory_bytes": _mean(f.get("memory_bytes") for f in freezes),
            "memory_changed": sum(run["result"]["memory_changed"] for run in entry["runs"]),
            "online": bool(entry["config"].get("online")),
            "protocol_refusals": statuses.get(PROTOCOL_ERROR, 0), "agent_errors": statuses.get(AGENT_ERROR, 0),
            "statuses": dict(statuses.most_common()),
        })
        rows[name] = row
    return {"agents": rows, "official": collected["official"]}


def _cell(row: dict, split: str) -> str:
    c = row.get(split)
    if not c:
        return "–"
    return f"{100 * c['accuracy']:.1f} [{100 * c['ci95'][0]:.1f}, {100 * c['ci95'][1]:.1f}]"


def _pass_at_k(cell: dict, split: str) -> str:
    k = cell["k"]
    if f"pass@{k}" not in cell:
        return f"{split} pass@{k}: – (no task with {k} judged answers)"
    total = cell["tasks"]
    return f"{split} pass@{k}: {100 * cell[f'pass@{k}']:.1f}" + (f" ({cell['pass@k_tasks']} of {total} tasks)" if cell["pass@k_tasks"] < total else "")


def render(summary: dict) -> str:
    """The leaderboard as Markdown."""
    lines = ["Closed-book accuracy unless marked; wall times and memory sizes are per seed (mean over seeds).", "",
             "| agent | single_test % [95% CI] | multiple_test % [95% CI] | pass@k | prompt tokens / answer | learn phase "
             "| test phase | memory (entries, bytes) | memory during test | online: memory changed | errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in summary["agents"].items():
        label = name + (" (open book: ceiling, not closed book)" if r["book"] == "open" else "")
        pk = "; ".join(_pass_at_k(r[s], s) for s in TEST_SPLITS if s in r and r[s].get("k", 1) > 1) or "–"
        tok = f"{r['prompt_tokens_per_answer']:.0f}" if r["prompt_tokens_per_answer"] else "–"
        learn = (f"{r['learn_wall_s']:.0f} s" + (f", {r['learn_tokens']:.0f} tokens" if r["learn_tokens"] else "")) if r["learn_wall_s"] else "–"
        test = f"{r['test_wall_s']:.0f} s"
        mem = ", ".join(f"{v:.0f}" if v is not None else "–" for v in (r["memory_entries"], r["memory_bytes"]))
        changed = r["memory_changed"]
        if r["online"]:  # the online setting: a change is allowed, and reported in its own column
            during, online = "– (online)", f"in {changed} of {r['seeds']} run(s)"
        else:
            during, online = ("unchanged" if not changed else f"**memory changed during test** ({changed} run(s))"), "–"
        errors = ", ".join(f"{k} {v}" + (" (counted out)" if k == "infrastructure" else "") for k, v in r["statuses"].items() if k != "passed") or "–"
        lines.append(f"| {label} | {_cell(r, 'single_test')} | {_cell(r, 'multiple_test')} | {pk} | {tok} | {learn} | {test} | {mem} | {during} | {online} | {errors} |")
    refused = {n: r["protocol_refusals"] for n, r in summary["agents"].items() if r["protocol_refusals"]}
    if refused:
        lines += ["", "Protocol: refused attempts to learn during the test phase (each answer counted wrong): "
                  + ", ".join(f"{n} {c}" for n, c in refused.items()) + "."]
    if summary["official"]:
        lines += ["", "Reference values, **the paper's** (SE-Bench, Qwen3-8B, closed book; not measured here):", "",
                  "| paper's method | single_test % | multiple_test % |", "|---|---|---|"]
        lines += [f"| {m} (paper) | {s} | {t} |" for m, s, t in PAPER_ROWS]
    return "\n".join(lines) + "\n"


def plot(summary: dict, path: Path) -> bool:
    """Bars of closed-book accuracy with the intervals; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
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


def write(run_dirs: Sequence[str], out: str | Path) -> dict:
    """Write ``out`` (Markdown), ``out`` with ``.json`` and ``.png``; returns the summary."""
    from ..storage import write_json_atomic, write_text_atomic

    out = Path(out)
    summary = summarize(collect(run_dirs))
    md = render(summary)
    plotted = plot(summary, out.with_suffix(".png"))
    if not plotted:
        md += "\n(no plot: matplotlib is not installed; pip install 'se-gym[plot]')\n"
    write_text_atomic(out, md)
    write_json_atomic(out.with_suffix(".json"), summary)
    summary["plot"] = str(out.with_suffix(".png")) if plotted else None
    return summary


__all__ = ["PAPER_ROWS", "bootstrap_ci", "collect", "plot", "render", "summarize", "write"]
