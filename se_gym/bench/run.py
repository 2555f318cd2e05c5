"""The benchmark protocol: learn on the train split, freeze, test closed book; resumable per batch.

Per seed and agent (``OUT/seed<S>/<label>/``):

* ``learn.jsonl``: one line per judged batch of the learn phase (pass, batch, answers, rewards, wall
  and CPU time, tokens); after each pass the agent learns from the pass's trajectories and is saved
  (``agent/``, atomically, with the record of the passes it learned inside it: one step).  A rerun
  reuses the batches and passes on disk.
* ``freeze.json``: the memory's digest and size at the end of the learn phase, and the learn cost.
  From here on the agent's ``learn()`` raises :class:`~se_gym.agents.ProtocolError`.
* ``test.jsonl``: one line per judged batch of the test phase (split, batch, answers, statuses,
  tokens, times, the memory's digest after the batch).  Every batch is answered by an agent built
  fresh and loaded from the frozen save, so only what was hashed can be used; ``--online``: one
  restored agent answers the whole stream, in ``--orders`` orders.  The tasks the agent sees have no
  tests and no solutions.
* ``stability/`` (``--stability``, learners): the same agent learns a second, independently minted
  library (``learn.jsonl``, ``agent/``, ``freeze.json``), then answers the first library's test
  questions again (``test.jsonl``).
* ``result.json``: whether the memory changed during the test, the agent's code (a hash of its source).

A line is written whole after its batch is judged, so a kill loses at most the batch in flight;
a torn last line (a kill mid-write) is dropped on the rerun.
"""
from __future__ import annotations

import json
import logging
import os
import random
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from ..accuracy import is_infrastructure
from ..agents import Agent, JudgeScorer, Observation, ProtocolError, Runner, Trajectory
from ..errors import CLIError
from ..progress import bar
from ..storage import RunDir, atomic_dir, recover_dir, write_json_atomic, write_text_atomic
from .agents import AgentSpec, Models, build, check, injected
from .config import BenchConfig, bench_demo_config, quick, quick_agent_options

log = logging.getLogger(__name__)
TEST_SPLITS = ("single_test", "multiple_test")  # the paper's test splits
UNSEEN_SPLIT = "unseen_test"  # questions minted on functions held out of train (the miniature)
ASKED_SPLITS = TEST_SPLITS + (UNSEEN_SPLIT,)
AGENT_ERROR, PROTOCOL_ERROR = "agent_error", "protocol_error"
SECOND_LIBRARY = 1_000_000  # --stability: the second library is minted from seed + this (no run tests on it)


@dataclass(frozen=True)
class World:
    """One seed's library, tasks per split and prompt renderer.

    Attributes:
        library: the library the tasks were written for.
        splits: split -> its tasks.
        renderer: ``(task, book) -> (prompt, docs)``.
        official: the tasks are SE-Bench's official ones.
        unseen: the ids of the test tasks that call a library function no train task calls.
    """

    library: Any
    splits: dict
    renderer: Any
    official: bool
    unseen: frozenset = field(default_factory=frozenset)


def public(task):
    """The task as an agent may see it: the question, signature and example, without the tests, the
    solutions, the functions it needs or the metadata (the judge keeps the real task).

    Args:
        task: the real task.
    """
    return replace(task, test_cases=(), reference_solution="", library_solution="", functions=(), metadata={})


def observe(runner: Runner, tasks, book: str, repeat: int) -> list[Observation]:
    """Observations rendered from the real tasks, each carrying the public view of its task."""
    return [replace(o, task=public(o.task)) for o in runner.observe(tasks, book) for _ in range(repeat)]


def hold_out(train: Sequence, tests: Sequence, n: int, seed: int) -> tuple[list, frozenset, list[str]]:
    """Hold ``n`` library functions out of train, structurally.

    The functions are drawn (seeded) among those the test tasks call; every train task that calls one
    of them is removed.

    Args:
        train: the train tasks.
        tests: the test tasks.
        n: how many functions to hold out.
        seed: the draw's seed.

    Returns:
        The train tasks kept, the ids of the test tasks that call a function no kept train task calls
        (with ``n=0``: the ones the suite already has), and the functions held out.
    """
    asked = sorted({k for t in tests for k in t.functions})
    held = sorted(random.Random(f"bench-unseen-{seed}").sample(asked, min(n, len(asked)))) if n else []
    kept = [t for t in train if not set(held) & set(t.functions)]
    seen = {k for t in kept for k in t.functions}
    return kept, frozenset(t.id for t in tests if set(t.functions) - seen), held


def library_seed(config: BenchConfig, seed: int, second: bool = False) -> int:
    """The seed a world is minted from: ``seed`` (``+ SECOND_LIBRARY`` for the stability pass's second
    library), or in a season one derived from the secret (the run knows only the index ``seed``).

    Args:
        config: the run's configuration.
        seed: the seed (in a season: its index).
        second: the stability pass's second library.
    """
    if config.season is not None:
        from .season import season_seed

        return season_seed(config.season, f"{'stability-' if second else ''}{seed}")
    return seed + (SECOND_LIBRARY if second else 0)


def world(config: BenchConfig, seed: int, second: bool = False, tasks: bool = True) -> World:
    """The library and tasks of ``seed``: minted per seed (builtin, miniature) or the official files.

    Args:
        config: the run's configuration (``tasks``, ``unseen``, ``season``, ``out``, ``progress``).
        seed: the seed (in a season: its index); ``builtin`` and ``miniature`` mint a fresh library and
            task set from it.
        second: the second library of ``--stability`` (for official tasks: a built-in library minted apart).
        tasks: False: the library alone (checking a season's library).

    Returns:
        The :class:`World` (``official`` is True for ``sebench:PATH``).

    Raises:
        CLIError: the task spec or its files are wrong, or a season asked of official tasks (one line).
    """
    from ..agents import default_renderer
    from ..tasks import TaskError
    from ..tasks.spec import TASK_SUITES, load_task_spec, parse_task_spec, suite_of

    real = library_seed(config, seed, second)
    try:  # (what the kind declares decides: a minted kind gets a fresh library and task set per seed)
        spec = parse_task_spec(config.tasks, default_seed=seed)
        suite = suite_of(spec)
        if not suite.minted and (second or config.season is not None):
            if config.season is not None:
                minted = [k for k in TASK_SUITES.names() if _minted(k)]
                raise CLIError(f"--season mints the season's libraries: use --tasks {' or '.join(minted)}, not {spec.kind} tasks")
            spec = parse_task_spec("builtin")  # a second library for the stability pass: the built-in suite's, minted apart
            suite = suite_of(spec)
        spec = suite.seeded(spec, real)
        if not tasks:
            from ..library import from_spec
            from ..tasks.spec import default_library_spec

            return World(from_spec(default_library_spec(spec) if suite.minted else None), {}, None, suite.official)
        splits, library = {}, None
        for split in ("train", *TEST_SPLITS):
            loaded, library = load_task_spec(spec, split, library=library, progress=config.progress)
            splits[split] = list(loaded)
        extra = suite.held_out_split(spec, library, config.held_out) if config.held_out and not second else None
    except TaskError as exc:
        raise CLIError(f"--tasks {config.tasks}: {exc}") from None
    if extra is not None:  # the suite's own questions on functions never in train
        splits[UNSEEN_SPLIT] = extra
        unseen = frozenset(t.id for t in extra)
    else:
        tests = splits["single_test"] + splits["multiple_test"]
        splits["train"], unseen, _ = hold_out(splits["train"], tests, 0 if second else config.held_out, real)
    splits = {k: v for k, v in splits.items() if v or k == "train"}  # (a suite without a split leaves it out)
    w = World(library, splits, suite.renderer(spec, library) or default_renderer(library), official=suite.official, unseen=unseen)
    if config.season is None or not tasks:
        return w
    from .season import public_id  # task ids name their library, and so its seed: a season hides them

    splits = {k: [replace(t, id=public_id(config.season, t.id)) for t in v] for k, v in w.splits.items()}
    return replace(w, splits=splits, unseen=frozenset(public_id(config.season, i) for i in w.unseen))


def _minted(kind: str) -> bool:
    """Whether the suite kind ``kind`` mints its tasks from a seed (one that does not load: False)."""
    from ..registry import RegistryError
    from ..tasks.spec import TASK_SUITES

    try:
        return bool(TASK_SUITES.load(kind).minted)
    except RegistryError:
        return False


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
    return {"passes": 0, "wall_s": 0.0, "cpu_s": 0.0, "metrics": []}


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


class _Meter:
    """Wall and CPU seconds of a block (``with``), GPU-seconds as wall time x the GPUs the agent holds."""

    def __init__(self, gpus: int):
        self.gpus = gpus

    def __enter__(self) -> "_Meter":
        self.t0, self.c0 = time.monotonic(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.wall_s, self.cpu_s = time.monotonic() - self.t0, time.process_time() - self.c0
        self.gpu_s = self.wall_s * self.gpus

    def cost(self) -> dict:
        return {"wall_s": self.wall_s, "cpu_s": self.cpu_s, "gpu_s": self.gpu_s}


class Bench:
    """Runs the protocol for each (seed, agent) of ``config``; see the module docstring.

    Args:
        config: the run's configuration.
        specs: the agents.
        models: where the agents' models come from (tests pass a fake sampler); None: built from the config.
    """

    def __init__(self, config: BenchConfig, specs: Sequence[AgentSpec], models: Models | None = None):
        self.config, self.specs = config, list(specs)
        self.models = models  # given: the agents' models come from here (tests pass a fake sampler)
        self.out = Path(config.out)
        self._second: dict[int, tuple] = {}  # seed -> (world, judge, runner) of the stability pass's second library

    # -- answering and judging -------------------------------------------------------------------
    def answer(self, agent: Agent, observations: list[Observation]) -> list[tuple[str, str, str]]:
        """(text, status, detail) per observation; an agent that raises gets ``agent_error`` for the
        answers it could not give (the batch is retried one observation at a time to find them), and
        an attempt to break the protocol (learning during the test) ``protocol_error``.

        Args:
            agent: the agent.
            observations: the questions, as the runner rendered them for the agent's book.
        """
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
        """One row per answer: judged (an infrastructure failure judged again, twice), or kept with the
        status the agent's failure gave it.

        Args:
            scorer: judges (tasks, answers).
            tasks: the real tasks.
            answers: (text, status, detail) per task, from :meth:`answer`.
        """
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

    def batch(self, agent: Agent, chunk: list[Observation], real: dict, scorer, gpus: int) -> dict:
        """One judged batch: the rows, the tokens and the cost of answering it (judging is not the agent's cost).

        Args:
            agent: the agent.
            chunk: the observations of the batch.
            real: task id -> the real task (the observations carry the public view).
            scorer: judges (tasks, answers).
            gpus: GPUs the agent holds (for GPU-seconds).
        """
        with _Meter(gpus) as m:
            answers = self.answer(agent, chunk)
        rows = self.judge_rows(scorer, [real[o.task.id] for o in chunk], answers)
        prompt_tokens, completion_tokens = _tokens(agent)
        return {"rows": rows, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, **m.cost()}

    # -- one agent on one seed ---------------------------------------------------------------------
    def run_agent(self, seed: int, spec: AgentSpec, w: World, runner: Runner, models: Models | None) -> dict:
        """One agent on one seed: learn, freeze, test (and the stability pass), resumable.

        Args:
            seed: the seed.
            spec: the agent.
            w: the seed's world.
            runner: renders and judges.
            models: where its models come from.

        Returns:
            The result record (``result.json``).
        """
        from .season import code_identity

        adir = self.out / f"seed{seed}" / spec.label
        RunDir(adir, "bench/agent", {"spec": spec.spec, "options": dict(spec.options)})  # options changed: refused
        if (adir / "result.json").is_file():
            return json.loads((adir / "result.json").read_text(encoding="utf-8"))
        cfg = self.config
        given = injected(spec, models)  # the model objects of this (seed, agent), shared by every agent built below
        gpus = models.gpus() if models is not None and given and hasattr(models, "gpus") else 0
        freeze = self.learn_and_freeze(spec, adir, w, runner, models, given, gpus, start=None)
        book, changed = self.test_phase(seed, spec, adir, w, runner, models, given, freeze["digest"], gpus)
        after = changed[-1] if changed else freeze["digest"]
        result = {"seed": seed, "agent": spec.label, "spec": spec.spec, "book": book, "freeze": freeze, "gpus": gpus,
                  "digest_after": after, "memory_changed": bool(changed), "code": code_identity(spec.spec)}
        if result["memory_changed"] and not cfg.online:
            log.warning("agent %s, seed %d: memory changed during test (digest %s -> %s)", spec.label, seed, freeze["digest"][:12], after[:12])
        if cfg.stability and freeze["learns"]:
            result["stability"] = self.stability_phase(seed, spec, adir, w, runner, models, given, gpus)
        write_json_atomic(adir / "result.json", result)
        return result

    def learn_and_freeze(self, spec: AgentSpec, pdir: Path, w: World, runner: Runner, models: Models | None, given: dict, gpus: int,
                         start: Path | None) -> dict:
        """The learn phase in ``pdir`` (from a fresh agent, or from the save at ``start``), then the
        freeze: the agent saved with its digest and size (``freeze.json``).

        Args:
            spec: the agent.
            pdir: the phase's folder.
            w: the world it learns in.
            runner: renders and judges.
            models: where its models come from.
            given: the injected objects.
            gpus: GPUs it holds.
            start: a save to start from (None: a fresh agent).

        Returns:
            The freeze record.
        """
        if (pdir / "freeze.json").is_file():
            return json.loads((pdir / "freeze.json").read_text(encoding="utf-8"))
        recover_dir(pdir / "agent")
        agent = build(spec, models, given)
        if (pdir / "agent").is_dir():
            agent.load(pdir / "agent")
        elif start is not None:
            agent.load(start)
        elif not (pdir / "learn.jsonl").exists() and callable(getattr(agent, "reset", None)):
            agent.reset()  # a service (HTTPAgent) starts from nothing
        learned = self.learn_phase(agent, spec, pdir, w, runner, gpus)
        _tokens(agent)  # what was counted while building or loading is no learn cost
        entries, size = agent.memory_size()
        freeze = {**learned, "digest": agent.state_digest(), "memory_entries": entries, "memory_bytes": size}
        save_agent(agent, pdir / "agent", learned_state(pdir))  # the frozen agent, which the test phase loads
        write_json_atomic(pdir / "freeze.json", freeze)
        return freeze

    def restore(self, spec: AgentSpec, models: Models | None, given: dict, frozen: Path, weights: bool = False) -> Agent:
        """A fresh agent holding exactly what was saved at freeze, frozen.

        Built anew (nothing an earlier object kept in attributes outside its memory survives) and
        loaded from the frozen save.  Learners of weights share the model object that holds the frozen
        weights (``weights=True`` loads them into it: once per test phase; reloading them per batch
        would cost a model load each time; their weights are what is hashed, and a change shows in the
        digest), and load the rest of their memory.

        Args:
            spec: the agent.
            models: where its models come from.
            given: the injected objects.
            frozen: the frozen save.
            weights: load a learner's weights into the shared model too.
        """
        agent = build(spec, models, given)
        if "policy" in given and not weights:
            Agent.load(agent, frozen)  # memory_state only: the weights are the shared policy's
        else:
            agent.load(frozen)
        agent.freeze()
        return agent

    def learn_phase(self, agent: Agent, spec: AgentSpec, adir: Path, w: World, runner: Runner, gpus: int = 0) -> dict:
        """Answer the train questions (judged), then ``learn`` from them, per pass; each pass's batches
        and the saved agent resume a killed run.

        Args:
            agent: the agent.
            spec: its spec.
            adir: its folder.
            w: the world.
            runner: renders and judges.
            gpus: GPUs it holds.

        Returns:
            What was learned: passes, metrics, costs and tokens (``learns`` False for the floor).
        """
        cfg = self.config
        state = learned_state(adir)
        if not learns(agent):
            return {"learns": False, "passes": 0, "wall_s": 0.0, "cpu_s": 0.0, "gpu_s": 0.0, "prompt_tokens": 0, "completion_tokens": 0, "metrics": []}
        passes = int(getattr(agent, "learn_passes", None) or cfg.learn_passes)  # an RL agent's iterations, say
        train = w.splits["train"][: cfg.limit]
        real = {t.id: t for t in train}
        obs = observe(runner, train, cfg.learn_book, cfg.learn_samples)
        lines = read_lines(adir / "learn.jsonl")
        for p in range(state["passes"], passes):
            done = {r["batch"]: r for r in lines if r["pass"] == p}
            trajectories: list[Trajectory] = []
            b = bar(total=len(obs), desc=f"{spec.label}: learn pass {p + 1}", disable=not cfg.progress, leave=False)
            try:
                for i, start in enumerate(range(0, len(obs), cfg.batch_size)):
                    chunk = obs[start : start + cfg.batch_size]
                    row = done.get(i)
                    if row is None:
                        row = {"pass": p, "batch": i, **self.batch(agent, chunk, real, runner.scorer, gpus)}
                        _append(adir / "learn.jsonl", row)
                        lines.append(row)
                    for o, r in zip(chunk, row["rows"]):
                        trajectories.append(Trajectory(o, r["response"], r["reward"], r["status"]))
                    b.update(len(chunk))
            finally:
                b.close()
            try:
                with _Meter(gpus) as m:
                    metrics = agent.learn(trajectories)
            except Exception as exc:  # the pass's judged batches stay on disk: a rerun learns again from them
                raise CLIError(f"agent {spec.label}: learn() raised {type(exc).__name__}: {exc} (rerun to retry this pass)") from exc
            _tokens(agent)  # (a learner that samples while learning: counted in its wall time only)
            state = {"passes": p + 1, "wall_s": state["wall_s"] + m.wall_s, "cpu_s": state.get("cpu_s", 0.0) + m.cpu_s,
                     "gpu_s": state.get("gpu_s", 0.0) + m.gpu_s,
                     "metrics": state["metrics"] + [{k: v for k, v in metrics.items() if isinstance(v, (int, float, str))}]}
            save_agent(agent, adir / "agent", state)  # the agent and the passes it learned: one atomic step
        return {"learns": True, "passes": state["passes"], "metrics": state["metrics"],
                **{k: state.get(k, 0.0) + sum(r.get(k, 0.0) for r in lines) for k in ("wall_s", "cpu_s", "gpu_s")},
                "prompt_tokens": sum(r["prompt_tokens"] for r in lines), "completion_tokens": sum(r["completion_tokens"] for r in lines)}

    def test_phase(self, seed: int, spec: AgentSpec, pdir: Path, w: World, runner: Runner, models: Models | None, given: dict,
                   frozen: str, gpus: int = 0) -> tuple[str, list[str]]:
        """Closed-book test of the agent frozen in ``pdir/agent`` on ``w``'s test splits (``pdir/test.jsonl``).

        Each batch is answered by an agent loaded fresh from the frozen save (:meth:`restore`), so only
        what was hashed at freeze can be used.  ``--online``: one restored agent answers the whole stream
        (all test questions) and may change its memory; with ``--orders N`` the stream is answered N
        times from the frozen save, in the order listed first and then shuffled (seeded); an order a kill
        interrupted is answered again from its start (an online agent's memory mid-stream is not saved).

        Args:
            seed: the seed.
            spec: the agent.
            pdir: the phase's folder.
            w: the world.
            runner: renders and judges.
            models: where its models come from.
            given: the injected objects.
            frozen: the digest at the freeze.
            gpus: GPUs it holds.

        Returns:
            The test book, and the digests that differ from ``frozen`` (the memory changed), in order.
        """
        cfg = self.config
        first = self.restore(spec, models, given, pdir / "agent", weights=True)
        book = test_book(first)
        path = pdir / "test.jsonl"
        lines = read_lines(path)
        changed = [r["digest"] for r in lines if r.get("digest", frozen) != frozen]
        streams = []
        for split in ASKED_SPLITS:
            tasks = w.splits.get(split, [])[: cfg.limit]
            if tasks:
                streams.append((split, tasks, observe(runner, tasks, book, cfg.samples)))
        real = {t.id: t for _, tasks, _ in streams for t in tasks}
        hashed_per_batch = "policy" not in given or cfg.online  # (a learner's weights are hashed once, after the test)
        if cfg.online:
            flat = [(split, o) for split, _, obs in streams for o in obs]
            for order in range(cfg.orders):
                seq = list(flat)
                if order:
                    random.Random(f"bench-order-{seed}-{order}").shuffle(seq)
                batches = [seq[i : i + cfg.batch_size] for i in range(0, len(seq), cfg.batch_size)]
                mine = [ln for ln in lines if ln.get("order", 0) == order]
                if len(mine) == len(batches):
                    continue
                if mine:  # interrupted mid-stream: this order again from the frozen save
                    log.info("agent %s: the test stream in order %d was interrupted; answering it again from the frozen save", spec.label, order)
                    lines = [ln for ln in lines if ln.get("order", 0) != order]
                    write_text_atomic(path, "".join(json.dumps(ln, sort_keys=True) + "\n" for ln in lines))
                agent = first if order == 0 else self.restore(spec, models, given, pdir / "agent", weights=True)
                b = bar(total=len(seq), desc=f"{spec.label}: test stream, order {order + 1}", disable=not cfg.progress, leave=False)
                try:
                    for i, chunk in enumerate(batches):
                        line = {"order": order, "split": "stream", "batch": i, **self.batch(agent, [o for _, o in chunk], real, runner.scorer, gpus)}
                        for (split, _), r in zip(chunk, line["rows"]):
                            r["split"] = split
                        line["digest"] = agent.state_digest()
                        if line["digest"] != frozen:
                            changed.append(line["digest"])
                        _append(path, line)
                        b.update(len(chunk))
                finally:
                    b.close()
            return book, changed
        done = {(r["split"], r["batch"]) for r in lines}
        agent: Agent | None = first
        for split, tasks, obs in streams:
            b = bar(total=len(obs), desc=f"{spec.label}: {split}", disable=not cfg.progress, leave=False)
            try:
                for i, start in enumerate(range(0, len(obs), cfg.batch_size)):
                    if (split, i) not in done:
                        agent = agent or self.restore(spec, models, given, pdir / "agent")
                        line = {"split": split, "batch": i, **self.batch(agent, obs[start : start + cfg.batch_size], real, runner.scorer, gpus)}
                        if hashed_per_batch:
                            line["digest"] = agent.state_digest()
                            if line["digest"] != frozen:
                                changed.append(line["digest"])
                        _append(path, line)
                        agent = None  # the next batch: a fresh agent
                    b.update(min(cfg.batch_size, len(obs) - start))
            finally:
                b.close()
        if not hashed_per_batch:
            after = self.restore(spec, models, given, pdir / "agent").state_digest()
            if after != frozen:
                changed.append(after)
        return book, changed

    # -- stability: a second library, then the first one's test again ------------------------------------
    def second(self, seed: int) -> tuple[World, Runner]:
        """The stability pass's second library for ``seed`` (minted apart), and a runner judging against it.

        Args:
            seed: the seed.
        """
        if seed not in self._second:
            from ..judge.core import Judge

            w2 = world(self.config, seed, second=True)
            judge = Judge(w2.library, **self.config.judge_kwargs())
            self._second[seed] = (w2, judge, Runner(JudgeScorer(judge), w2.renderer, progress=False))
        w2, _, runner = self._second[seed]
        return w2, runner

    def stability_phase(self, seed: int, spec: AgentSpec, adir: Path, w: World, runner: Runner, models: Models | None, given: dict,
                        gpus: int) -> dict:
        """From the frozen save, the agent learns the second library's train split (the same learn settings),
        is frozen again, and answers the first library's test questions closed book (``adir/stability``).

        Args:
            seed: the seed.
            spec: the agent.
            adir: its folder.
            w: the first library's world.
            runner: renders and judges there.
            models: where its models come from.
            given: the injected objects.
            gpus: GPUs it holds.
        """
        sdir = adir / "stability"
        sdir.mkdir(exist_ok=True)
        w2, runner2 = self.second(seed)
        freeze = self.learn_and_freeze(spec, sdir, w2, runner2, models, given, gpus, start=adir / "agent")
        _, changed = self.test_phase(seed, spec, sdir, w, runner, models, given, freeze["digest"], gpus)
        return {"library_fingerprint": w2.library.fingerprint, "train_tasks": len(w2.splits["train"][: self.config.limit]),
                "freeze": freeze, "memory_changed": bool(changed)}

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

            from ..bases import build_base

            # as the demo, with the built base or one given (--model): more threads lose on a loaded small CPU
            torch.set_num_threads(bench_demo_config().threads)
            if not cfg.model:
                model_path, float32 = str(build_base(self.out / "base", bench_demo_config(), progress=cfg.progress)), True
        models = self.models
        if models is None and model_path:
            models = Models(model_path, cfg.backend, cfg.device, cfg.gpu_memory_utilization, float32=float32)
        results = []
        try:
            for seed in cfg.seeds:
                w = world(cfg, seed)
                write_json_atomic(self.out / f"seed{seed}" / "world.json", {
                    "seed": seed, "official": w.official, "tasks": cfg.tasks, "unseen_tasks": sorted(w.unseen),
                    # a season's library id names its seed: the fingerprint (the names) only
                    **({"library": w.library.id} if cfg.season is None else {}), "library_fingerprint": w.library.fingerprint,
                    "splits": {k: len(v[: cfg.limit]) for k, v in w.splits.items()}})
                from ..judge.core import Judge

                judge = Judge(w.library, **cfg.judge_kwargs())
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
                    if seed in self._second:
                        self._second.pop(seed)[1].close()
        finally:
            if models is not None:
                models.close()
        return results


def resolve(config: BenchConfig) -> tuple[BenchConfig, dict]:
    """``config`` with ``--quick`` applied, and the per-agent default options it brings.

    Args:
        config: the run's configuration as given.
    """
    if not config.quick:
        return config, {}
    return quick(config), quick_agent_options(bench_demo_config())


__all__ = ["AGENT_ERROR", "ASKED_SPLITS", "PROTOCOL_ERROR", "TEST_SPLITS", "UNSEEN_SPLIT", "Bench", "World", "hold_out", "library_seed", "public",
           "resolve", "world"]
