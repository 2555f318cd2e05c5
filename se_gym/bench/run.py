"""The benchmark protocol: learn on the train split, freeze, test closed book; resumable per batch.

Per seed and agent (``OUT/seed<S>/<label>/``):

* ``learn.jsonl``: one line per judged batch of the learn phase (pass, batch, answers, rewards, wall
  time, tokens); after each pass the agent learns from the pass's trajectories and is saved
  (``agent/``, atomically, with the record of the passes it learned inside it: one step).  A rerun
  reuses the batches and passes on disk.
* ``freeze.json``: the memory's digest and size at the end of the learn phase.  From here on the
  agent's ``learn()`` raises :class:`~se_gym.agents.ProtocolError`.
* ``test.jsonl``: one line per judged batch of the test phase (split, batch, answers, statuses,
  prompt tokens).  The tasks the agent sees have no tests and no solutions.
* ``result.json``: the digest after the test phase and whether the memory changed.

A line is written whole after its batch is judged, so a kill loses at most the batch in flight;
a torn last line (a kill mid-write) is dropped on the rerun.
"""
from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from ..accuracy import is_infrastructure
from ..agents import Agent, JudgeScorer, Observation, ProtocolError, Runner, Trajectory
from ..errors import CLIError
from ..progress import bar
from ..storage import RunDir, atomic_dir, recover_dir, write_json_atomic
from .agents import AgentSpec, Models, build, check, injected
from .config import BenchConfig, bench_demo_config, quick, quick_agent_options

log = logging.getLogger(__name__)
TEST_SPLITS = ("single_test", "multiple_test")
AGENT_ERROR, PROTOCOL_ERROR = "agent_error", "protocol_error"


@dataclass(frozen=True)
class World:
    """One seed's library, tasks per split and prompt renderer."""

    library: Any
    splits: dict
    renderer: Any
    official: bool


def public(task):
    """The task as an agent may see it: the question, signature and example, without the tests, the
    solutions, the functions it needs or the metadata (the judge keeps the real task)."""
    return replace(task, test_cases=(), reference_solution="", library_solution="", functions=(), metadata={})


def observe(runner: Runner, tasks, book: str, repeat: int) -> list[Observation]:
    """Observations rendered from the real tasks, each carrying the public view of its task."""
    return [replace(o, task=public(o.task)) for o in runner.observe(tasks, book) for _ in range(repeat)]


def world(config: BenchConfig, seed: int) -> World:
    """The library and tasks of ``seed``: minted per seed (builtin, miniature) or the official files.

    Args:
        config: the run's configuration (``tasks``, ``out``, ``progress``).
        seed: the seed; ``builtin`` and ``miniature`` mint a fresh library and task set from it.

    Returns:
        The :class:`World` (``official`` is True for ``sebench:PATH``).

    Raises:
        CLIError: the task spec or its files are wrong (one line).
    """
    from ..agents import default_renderer

    if config.tasks == "miniature":
        from ..demo import Demo
        from ..training import miniature as mini

        demo = Demo(Path(config.out), bench_demo_config(), progress=False)
        library, functions, train, test = demo.world(seed)
        test = [replace(t, split="single_test") for t in test]  # one-function questions only: no multiple_test

        def render(task, book):
            prompt = mini.render(library, task, book, functions)
            docs = tuple(line for line in prompt.splitlines() if line.startswith(f"{library.package}.")) if book == "open" else ()
            return prompt, docs

        return World(library, {"train": train, "single_test": test}, render, official=False)
    from ..tasks import TaskError
    from ..tasks.spec import load_task_spec, parse_task_spec

    try:
        spec = parse_task_spec(config.tasks, default_seed=seed)
        if spec.kind == "builtin":
            spec = replace(spec, seed=seed)  # a fresh library and task set per seed
        splits, library = {}, None
        for split in ("train", *TEST_SPLITS):
            tasks, library = load_task_spec(spec, split, library=library, progress=config.progress)
            splits[split] = list(tasks)
    except TaskError as exc:
        raise CLIError(f"--tasks {config.tasks}: {exc}") from None
    return World(library, splits, default_renderer(library), official=spec.kind == "sebench")


def read_lines(path: Path, repair: bool = True) -> list[dict]:
    """The whole lines of a JSONL file; a torn last line (a kill mid-write) is cut off the file."""
    if not path.is_file():
        return []
    rows, good = [], 0
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                rows.append(json.loads(raw))
            except ValueError:
                break
            good += len(raw)
    if repair and good != path.stat().st_size:
        log.warning("%s: dropping a torn last line (a kill mid-write)", path)
        with open(path, "r+b") as fh:
            fh.truncate(good)
    return rows


def _append(path: Path, row: dict) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


LEARNED = "bench_learned.json"  # inside agent/: the passes the saved agent has learned


def learned_state(adir: Path) -> dict:
    """The passes learned so far, as saved with the agent (older runs wrote it beside ``agent/``)."""
    for path in (adir / "agent" / LEARNED, adir / "learned.json"):
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    return {"passes": 0, "wall_s": 0.0, "metrics": []}


def save_agent(agent: Agent, path: Path, state: dict) -> None:
    """Save ``agent`` and the record of what it learned (``state``) in one atomic step: a kill leaves
    either the old pair or the new one, so a rerun never learns a pass twice."""
    with atomic_dir(path) as tmp:
        agent.save(tmp)
        write_json_atomic(Path(tmp) / LEARNED, state)


def test_book(agent: Agent) -> str:
    """The book of the test phase: closed unless the agent is built to read docs at test time (a ceiling)."""
    return agent.test_book or agent.book


def learns(agent: Agent) -> bool:
    """Whether the agent's class learns at all (overrides learn or _learn); the floor does not."""
    return type(agent).learn is not Agent.learn or type(agent)._learn is not Agent._learn


def _tokens(agent: Agent) -> tuple[int, int]:
    sampler = getattr(agent, "sampler", None)
    if hasattr(sampler, "take"):
        return sampler.take()
    reported = getattr(agent, "last_prompt_tokens", None)  # agents without a counted sampler (HTTP) may say
    return (int(sum(reported)), 0) if reported else (0, 0)


class Bench:
    """Runs the protocol for each (seed, agent) of ``config``; see the module docstring."""

    def __init__(self, config: BenchConfig, specs: Sequence[AgentSpec], models: Models | None = None):
        self.config, self.specs = config, list(specs)
        self.models = models  # given: the agents' models come from here (tests pass a fake sampler)
        self.out = Path(config.out)

    # -- answering and judging -------------------------------------------------------------------
    def answer(self, agent: Agent, observations: list[Observation]) -> list[tuple[str, str, str]]:
        """(text, status, detail) per observation; an agent that raises gets ``agent_error`` for the
        answers it could not give (the batch is retried one observation at a time to find them), and
        an attempt to break the protocol (learning during the test) ``protocol_error``."""
        try:
            texts = list(agent.act(observations))
            if len(texts) != len(observations):
                raise ValueError(f"act() returned {len(texts)} answers for {len(observations)} observations")
            return [(str(t), "", "") for t in texts]
        except Exception as exc:
            if len(observations) == 1:
                kind = PROTOCOL_ERROR if isinstance(exc, ProtocolError) else AGENT_ERROR
                return [("", kind, f"{type(exc).__name__}: {exc}"[:500])]
        return [a for o in observations for a in self.answer(agent, [o])]

    def judge_rows(self, scorer, tasks, answers) -> list[dict]:
        rows = [{"task": t.id, "response": text, "status": status, "reward": 0.0 if status else None, "detail": detail}
                for t, (text, status, detail) in zip(tasks, answers)]
        todo = [i for i, r in enumerate(rows) if not r["status"]]
        for _ in range(3):  # an infrastructure failure is judged again, twice
            if not todo:
                break
            verdicts = scorer([tasks[i] for i in todo], [rows[i]["response"] for i in todo])
            again = []
            for i, v in zip(todo, verdicts):
                if is_infrastructure(v):
                    again.append(i)
                    rows[i].update(status="infrastructure", reward=None, detail=str(getattr(v, "detail", ""))[:300])
                else:
                    status = getattr(getattr(v, "status", ""), "value", str(getattr(v, "status", "")))
                    rows[i].update(status=status, reward=float(v.reward), detail="")
            todo = again
        return rows

    # -- one agent on one seed ---------------------------------------------------------------------
    def run_agent(self, seed: int, spec: AgentSpec, w: World, runner: Runner, models: Models | None) -> dict:
        adir = self.out / f"seed{seed}" / spec.label
        RunDir(adir, "bench/agent", {"spec": spec.spec, "options": dict(spec.options)})  # options changed: refused
        if (adir / "result.json").is_file():
            return json.loads((adir / "result.json").read_text(encoding="utf-8"))
        cfg = self.config
        given = injected(spec, models)  # the model objects of this (seed, agent), shared by every agent built below
        recover_dir(adir / "agent")
        freeze = json.loads((adir / "freeze.json").read_text()) if (adir / "freeze.json").is_file() else None
        if freeze is None:
            agent = build(spec, models, given)
            if (adir / "agent").is_dir():
                agent.load(adir / "agent")
            elif not (adir / "learn.jsonl").exists() and callable(getattr(agent, "reset", None)):
                agent.reset()  # a service (HTTPAgent) starts from nothing
            learned = self.learn_phase(agent, spec, adir, w, runner)
            _tokens(agent)  # what was counted while building or loading is no learn cost
            entries, size = agent.memory_size()
            freeze = {**learned, "digest": agent.state_digest(), "memory_entries": entries, "memory_bytes": size}
            save_agent(agent, adir / "agent", learned_state(adir))  # the frozen agent, which the test phase loads
            write_json_atomic(adir / "freeze.json", freeze)
            del agent
        book, changed = self.test_phase(spec, adir, w, runner, models, given, freeze["digest"])
        after = changed[-1] if changed else freeze["digest"]
        result = {"seed": seed, "agent": spec.label, "spec": spec.spec, "book": book,
                  "freeze": freeze, "digest_after": after, "memory_changed": bool(changed)}
        if result["memory_changed"] and not cfg.online:
            log.warning("agent %s, seed %d: memory changed during test (digest %s -> %s)", spec.label, seed, freeze["digest"][:12], after[:12])
        write_json_atomic(adir / "result.json", result)
        return result

    def restore(self, spec: AgentSpec, models: Models | None, given: dict, frozen: Path) -> Agent:
        """A fresh agent holding exactly what was saved at freeze, frozen.

        Built anew (nothing an earlier object kept in attributes outside its memory survives) and
        loaded from the frozen save.  Learners of weights get the model object that holds the frozen
        weights (reloading them per batch would cost a model load each time; their weights are what
        is hashed, and a change shows in the digest), and load the rest of their memory.
        """
        agent = build(spec, models, given)
        if "policy" in given:
            Agent.load(agent, frozen)  # memory_state only: the weights are the shared policy's
        else:
            agent.load(frozen)
        agent.freeze()
        return agent

    def learn_phase(self, agent: Agent, spec: AgentSpec, adir: Path, w: World, runner: Runner) -> dict:
        cfg = self.config
        state = learned_state(adir)
        if not learns(agent):
            return {"learns": False, "passes": 0, "wall_s": 0.0, "prompt_tokens": 0, "completion_tokens": 0, "metrics": []}
        train = w.splits["train"][: cfg.limit]
        real = {t.id: t for t in train}
        obs = observe(runner, train, cfg.learn_book, cfg.learn_samples)
        lines = read_lines(adir / "learn.jsonl")
        for p in range(state["passes"], cfg.learn_passes):
            done = {r["batch"]: r for r in lines if r["pass"] == p}
            batches = range(0, len(obs), cfg.batch_size)
            trajectories: list[Trajectory] = []
            b = bar(total=len(obs), desc=f"{spec.label}: learn pass {p + 1}", disable=not cfg.progress, leave=False)
            try:
                for i, start in enumerate(batches):
                    chunk = obs[start : start + cfg.batch_size]
                    row = done.get(i)
                    if row is None:
                        t0 = time.monotonic()
                        answers = self.answer(agent, chunk)
                        rows = self.judge_rows(runner.scorer, [real[o.task.id] for o in chunk], answers)
                        prompt_tokens, completion_tokens = _tokens(agent)
                        row = {"pass": p, "batch": i, "rows": rows, "wall_s": time.monotonic() - t0,
                               "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
                        _append(adir / "learn.jsonl", row)
                        lines.append(row)
                    for o, r in zip(chunk, row["rows"]):
                        trajectories.append(Trajectory(o, r["response"], r["reward"], r["status"]))
                    b.update(len(chunk))
            finally:
                b.close()
            t0 = time.monotonic()
            try:
                metrics = agent.learn(trajectories)
            except Exception as exc:  # the pass's judged batches stay on disk: a rerun learns again from them
                raise CLIError(f"agent {spec.label}: learn() raised {type(exc).__name__}: {exc} (rerun to retry this pass)") from exc
            learn_s = time.monotonic() - t0
            _tokens(agent)  # (a learner that samples while learning: counted in its wall time only)
            state = {"passes": p + 1, "wall_s": state["wall_s"] + learn_s,
                     "metrics": state["metrics"] + [{k: v for k, v in metrics.items() if isinstance(v, (int, float, str))}]}
            save_agent(agent, adir / "agent", state)  # the agent and the passes it learned: one atomic step
        return {"learns": True, "passes": state["passes"], "metrics": state["metrics"],
                "wall_s": state["wall_s"] + sum(r["wall_s"] for r in lines),
                "prompt_tokens": sum(r["prompt_tokens"] for r in lines), "completion_tokens": sum(r["completion_tokens"] for r in lines)}

    def test_phase(self, spec: AgentSpec, adir: Path, w: World, runner: Runner, models: Models | None, given: dict,
                   frozen: str) -> tuple[str, list[str]]:
        """Each test batch answered by an agent loaded fresh from the frozen save (:meth:`restore`), so
        only what was hashed at freeze can be used; with ``--online`` one restored agent answers the whole
        stream and may change its memory.  Returns the test book and the digests that differ from
        ``frozen`` (the memory changed during the test), in order."""
        cfg = self.config
        lines = read_lines(adir / "test.jsonl")
        done = {(r["split"], r["batch"]) for r in lines}
        changed = [r["digest"] for r in lines if r.get("digest", frozen) != frozen]
        first = self.restore(spec, models, given, adir / "agent")
        online = first if cfg.online else None
        for split in TEST_SPLITS:
            tasks = w.splits.get(split, [])[: cfg.limit]
            if not tasks:
                continue
            real = {t.id: t for t in tasks}
            obs = observe(runner, tasks, test_book(first), cfg.samples)
            b = bar(total=len(obs), desc=f"{spec.label}: {split}", disable=not cfg.progress, leave=False)
            try:
                for i, start in enumerate(range(0, len(obs), cfg.batch_size)):
                    chunk = obs[start : start + cfg.batch_size]
                    if (split, i) not in done:
                        agent = online or self.restore(spec, models, given, adir / "agent")
                        t0 = time.monotonic()
                        answers = self.answer(agent, chunk)
                        rows = self.judge_rows(runner.scorer, [real[o.task.id] for o in chunk], answers)
                        prompt_tokens, _ = _tokens(agent)
                        line = {"split": split, "batch": i, "rows": rows, "prompt_tokens": prompt_tokens, "wall_s": time.monotonic() - t0}
                        if "policy" not in given or online:  # (a learner's weights are hashed once, after the test)
                            line["digest"] = agent.state_digest()
                            if line["digest"] != frozen:
                                changed.append(line["digest"])
                        _append(adir / "test.jsonl", line)
                    b.update(len(chunk))
            finally:
                b.close()
        if "policy" in given and not online:
            after = self.restore(spec, models, given, adir / "agent").state_digest()
            if after != frozen:
                changed.append(after)
        return test_book(first), changed

    # -- the whole run ---------------------------------------------------------------------------------
    def run(self) -> list[dict]:
        """Every (seed, agent) of the configuration, resuming what the run folder holds.

        Returns:
            The ``result.json`` of each (seed, agent), in order.

        Raises:
            CLIError: a bad agent (checked before any work), a run folder made with another
                configuration, tasks that do not load, or an agent whose ``learn()`` raised.
        """
        cfg = self.config
        RunDir(self.out, "bench", cfg.run_config(), restart=cfg.restart)
        model_path, float32 = cfg.model, False
        for spec in self.specs:  # every agent checked before any work
            check(spec, has_model=bool(self.models or model_path or (cfg.quick and not cfg.model)))
        if cfg.quick and self.models is None:
            import torch

            from ..demo import Demo

            # as the demo, with the built base or one given (--model): more threads lose on a loaded small CPU
            torch.set_num_threads(bench_demo_config().threads)
            if not cfg.model:
                model_path, float32 = str(Demo(self.out, bench_demo_config(), progress=cfg.progress).base()), True
        models = self.models
        if models is None and model_path:
            models = Models(model_path, cfg.backend, cfg.device, cfg.gpu_memory_utilization, float32=float32)
        results = []
        try:
            for seed in cfg.seeds:
                w = world(cfg, seed)
                write_json_atomic(self.out / f"seed{seed}" / "world.json", {
                    "seed": seed, "library": getattr(w.library, "id", None), "official": w.official, "tasks": cfg.tasks,
                    "splits": {k: len(v[: cfg.limit]) for k, v in w.splits.items()}})
                from ..judge.core import Judge

                judge = Judge(w.library, profile=cfg.profile, sandbox=cfg.sandbox)
                try:
                    runner = Runner(JudgeScorer(judge), w.renderer, progress=False)
                    for spec in self.specs:
                        t0 = time.monotonic()
                        log.info("seed %d: agent %s", seed, spec.label)
                        r = self.run_agent(seed, spec, w, runner, models)
                        results.append(r)
                        log.info("seed %d: agent %s done in %.0f s", seed, spec.label, time.monotonic() - t0)
                finally:
                    judge.close()
        finally:
            if models is not None:
                models.close()
        return results


def resolve(config: BenchConfig) -> tuple[BenchConfig, dict]:
    """``config`` with ``--quick`` applied, and the per-agent default options it brings."""
    if not config.quick:
        return config, {}
    return quick(config), quick_agent_options(bench_demo_config())


__all__ = ["AGENT_ERROR", "PROTOCOL_ERROR", "TEST_SPLITS", "Bench", "World", "public", "resolve", "world"]
