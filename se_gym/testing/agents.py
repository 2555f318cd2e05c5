"""``check_agent``: does an agent keep the protocol ``se-gym bench`` runs it under?

The benchmark learns on train, freezes, saves the agent, and answers every test batch with an agent
built afresh and loaded from that save (se_gym/bench/run.py).  So an agent must:

- ``class``: be a :class:`~se_gym.agents.Agent` subclass whose ``book`` (and ``test_book``) is a book;
- ``build``: be built the way the benchmark builds it (the options it is given, a ``model`` injected);
- ``act``: answer a batch with one string per observation, open book and closed;
- ``memory``: give JSON-able ``memory_state()`` (or None), a 64-hex ``state_digest()`` that is the same
  for two fresh agents and on every call, and a ``memory_size()`` of (entries or None, bytes);
- ``learn`` (agents that learn): take judged train trajectories and return a dict of metrics;
- ``protocol``: refuse (:class:`~se_gym.agents.ProtocolError`) to learn from a test split, unchanged;
- ``freeze``: once frozen, ``learn`` is refused and the memory stays as it was;
- ``save-load``: ``save(dir)`` writes a folder from which a fresh agent's ``load`` gets the same memory
  (digest, ``memory_state()`` and size): what the freeze hashed is what the test phase uses;
- ``answers after load``: the freshly loaded (and frozen) agent answers the test questions as the
  saved one does.

The world is the miniature's (four library functions, eight train and four test questions, judged
for real).  An agent that needs a language model gets :class:`StandInModel`, a deterministic
stand-in that reads the library calls a prompt shows (docs, remembered answers) and answers with
the one whose description fits the question: a test double, since these checks are about the
agent's protocol, not a model's answers, and the same prompt always gets the same answer.
"""
from __future__ import annotations

import json
import re
import tempfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, Sequence

from .report import CheckFailed, Checks, Report, require

FUNCTIONS = ("abs", "cumsum", "sort", "flip")  # the miniature functions of the checker's world
_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class StandInModel:
    """A deterministic stand-in for a language model (``sample`` as the agents' samplers have it).

    It answers a prompt with the library call whose one-line doc (``pkg.fn(x): description.``) shares
    the most words with the prompt's ``Task:`` line; without a doc, with the first call a remembered
    answer in the prompt makes (``return pkg.fn(``); without either, with a wrong answer that still
    depends on the prompt.  The same prompt always gets the same answer.

    Args:
        package: the library's package name (``zwc``); calls of other names are not read.  None: any
            dotted name (``pkg.fn``) is read as a library call.
    """

    def __init__(self, package: str | None = None):
        self.package = package
        self.prompts: list[str] = []
        pkg = re.escape(package) if package else r"[A-Za-z_]\w*"
        self._doc = re.compile(rf"^\s*[-*]?\s*({pkg}(?:\.\w+)+)\(([^)]*)\):\s*(.*)$", re.MULTILINE)
        self._call = re.compile(rf"return\s+({pkg}(?:\.\w+)+)\(")

    def sample(self, prompts: Sequence[str], n: int, temperature: float, max_new_tokens: int) -> list[list[str]]:
        """``n`` copies of the one answer to each prompt.

        Args:
            prompts: the prompts.
            n: answers per prompt.
            temperature: ignored (the stand-in is deterministic).
            max_new_tokens: ignored.

        Returns:
            One list of ``n`` answers per prompt.
        """
        self.prompts += list(prompts)
        return [[self.answer(p)] * n for p in prompts]

    def sync(self, model: Any) -> None:
        """Nothing to sync (learners call this after updating their weights).

        Args:
            model: ignored.
        """

    def answer(self, prompt: str) -> str:
        """The answer to ``prompt`` (see the class docstring).

        Args:
            prompt: the whole prompt.

        Returns:
            Free text with one python block.
        """
        signatures = re.findall(r"def (\w+)\(([^)]*)\):", prompt)
        name, args = signatures[-1] if signatures else ("solve", "x")
        task = [line for line in prompt.splitlines() if line.startswith("Task:")]
        want = _words(task[-1] if task else prompt)
        best, score = None, 1
        for call, _, description in self._doc.findall(prompt):
            overlap = len(want & _words(description))
            if overlap > score:
                best, score = call, overlap
        if best is None:
            remembered = self._call.findall(prompt)
            best = remembered[0] if remembered else None
        body = f"return {best}({args})" if best else f"return None  # no library call known ({zlib.crc32(prompt.encode()):08x})"
        return f"```python\ndef {name}({args}):\n    {body}\n```"


class _World:
    """The checker's miniature: library, train and test tasks, a renderer and a real judge."""

    def __init__(self, seed: int = 11):
        from ..agents import JudgeScorer, Runner
        from ..judge.core import Judge
        from ..library import mint
        from ..training import miniature as mini

        self.library = library = mint(seed)
        self.train, self.test = mini.experiment_tasks(library, FUNCTIONS, (2, 1), seed=0)

        def render(task, book):
            prompt = mini.render(library, task, book, FUNCTIONS)
            docs = tuple(line for line in prompt.splitlines() if line.startswith(f"{library.package}.")) if book == "open" else ()
            return prompt, docs

        self.judge = Judge(library, profile="sebench", workers=1)
        self.runner = Runner(JudgeScorer(self.judge), render, progress=False)

    def observe(self, tasks: Sequence[Any], book: str) -> list:
        from ..bench.run import observe

        return observe(self.runner, tasks, book, 1)

    def trajectories(self, observations: Sequence[Any], answers: Sequence[str], tasks: Sequence[Any]) -> list:
        """Judged answers as the benchmark hands them to ``learn`` (the real tasks judged, the public ones shown)."""
        from ..agents import Trajectory

        verdicts = self.runner.scorer(list(tasks), list(answers))
        return [Trajectory(o, a, None if v.infrastructure else float(v.reward), v.status.value) for o, a, v in zip(observations, answers, verdicts)]

    def close(self) -> None:
        self.judge.close()


def _resolve(agent_or_class: Any) -> tuple[type, Any]:
    """(class, the agent given or None)."""
    from ..agents import Agent
    from ..bench.agents import agent_class

    if isinstance(agent_or_class, Agent):
        return type(agent_or_class), agent_or_class
    if isinstance(agent_or_class, str):
        return agent_class(agent_or_class), None
    require(isinstance(agent_or_class, type) and issubclass(agent_or_class, Agent),
            f"{agent_or_class!r} is not a se_gym.agents.Agent subclass (nor an agent, a registered name or 'module:Class')")
    return agent_or_class, None


def _digest(agent: Any) -> str:
    digest = agent.state_digest()
    require(isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest), f"state_digest() returned {digest!r}, not 64 hex digits")
    return digest


def check_agent(agent_or_class: Any, *, options: Mapping[str, Any] | None = None, model: Any = None,
                inject: Callable[[], Mapping[str, Any]] | None = None, learn_book: str = "open", raises: bool = True) -> Report:
    """Check an agent against the benchmark's protocol (see the module docstring for each check).

    Args:
        agent_or_class: an :class:`~se_gym.agents.Agent` subclass, a registered name (``"memory"``),
            ``"module:Class"`` / ``"file.py:Class"``, or an agent (checked first; the fresh agents the
            save is loaded into are built from its class and ``options``).
        options: the constructor's options, as ``--agent-option`` gives them; ``model`` / ``policy`` /
            ``sampler`` here are taken as what the benchmark injects.
        model: the model injected into a constructor that takes ``model`` (default: a
            :class:`StandInModel` of the checker's library).
        inject: builds, for each agent the checker makes, what the benchmark injects into it (e.g.
            ``lambda: {"policy": Policy.from_pretrained(path)}`` for a learner of weights: a fresh
            policy per agent, so that a load has to bring the weights back).
        learn_book: the book train questions are shown with (the benchmark's default: open).
        raises: raise :class:`~se_gym.testing.ConformanceError` on the first failed check (after
            running them all); False returns the report.

    Returns:
        The :class:`~se_gym.testing.Report`.

    Raises:
        ConformanceError: a check failed (with ``raises``).
    """
    given = agent_or_class
    subject = repr(given) if isinstance(given, str) else getattr(given if isinstance(given, type) else type(given), "__qualname__", "agent")
    checks = Checks("agent", subject)
    world = _World()
    got: dict[str, Any] = {}
    try:
        _run_checks(checks, world, given, dict(options or {}), model, inject, learn_book, got)
    finally:
        world.close()
        if "tmp" in got:
            got["tmp"].cleanup()
    return checks.finish(raises)


def _run_checks(checks: Checks, world: _World, given: Any, options: dict, model: Any, inject: Any, learn_book: str, got: dict) -> None:
    from ..agents import BOOKS, Agent, Observation, ProtocolError, Trajectory
    from ..bench.agents import INJECTED, check_options, wants
    from ..bench.run import learns, test_book

    def klass() -> str:
        cls, agent = _resolve(given)
        require(cls.book in BOOKS, f"book is {cls.book!r}, not one of {BOOKS}")
        require(cls.test_book is None or cls.test_book in BOOKS, f"test_book is {cls.test_book!r}, not None or one of {BOOKS}")
        got.update(cls=cls, agent=agent)
        return f"{cls.__module__}.{cls.__qualname__}"

    def build() -> str:
        cls = got["cls"]
        given_objects = {k: options.pop(k) for k in INJECTED if k in options}
        stand_in = model if model is not None else StandInModel(world.library.package)

        def injected() -> dict:
            out = {**given_objects, **(dict(inject()) if inject is not None else {})}
            if wants(cls, "model") and "model" not in out:
                out["model"] = stand_in
            return out

        probe = injected()
        if wants(cls, "policy") and "policy" not in probe:
            raise CheckFailed(f"{cls.__name__} trains weights: give it a policy (inject=lambda: {{'policy': Policy.from_pretrained(...)}})")
        try:
            check_options(cls.__name__, cls, options, list(probe))
        except Exception as exc:  # the benchmark's own check, in its words
            raise CheckFailed(str(exc)) from None

        def fresh() -> Any:
            agent = cls(**options, **injected())
            require(isinstance(agent, Agent), f"{cls.__name__}(...) built {type(agent).__name__}, not an Agent")
            return agent

        got["fresh"] = fresh
        got["first"] = got["agent"] if got["agent"] is not None else fresh()
        got["book"] = test_book(got["first"])
        return ", ".join(sorted(probe)) + " injected" if probe else ""

    def act() -> None:
        first = got["first"]
        got["train_obs"] = world.observe(world.train, learn_book)
        got["test_obs"] = world.observe(world.test, got["book"])
        for what, obs in (("train questions (open book)" if learn_book == "open" else "train questions", got["train_obs"]),
                          (f"test questions ({got['book']} book)", got["test_obs"])):
            answers = first.act(obs)
            require(isinstance(answers, list), f"act() on {what} returned {type(answers).__name__}, not a list")
            require(len(answers) == len(obs), f"act() returned {len(answers)} answers for {len(obs)} {what}")
            require(all(isinstance(a, str) for a in answers), f"act() on {what} returned {sorted({type(a).__name__ for a in answers})}, not strings")
            got.setdefault("train_answers", answers)

    def memory() -> str:
        first = got["first"]
        state = first.memory_state()
        if state is not None:
            try:
                json.dumps(state)
            except (TypeError, ValueError) as exc:
                raise CheckFailed(f"memory_state() is not JSON: {exc}") from None
        d = _digest(first)
        require(_digest(first) == d, "state_digest() changed between two calls with nothing learned")
        require(_digest(got["fresh"]()) == _digest(got["fresh"]()), "two fresh agents have different digests: the freeze hash "
                "would report a memory change that never happened")
        size = first.memory_size()
        require(isinstance(size, tuple) and len(size) == 2 and (size[0] is None or isinstance(size[0], int)) and isinstance(size[1], int)
                and size[1] >= 0, f"memory_size() returned {size!r}, not (entries or None, bytes)")
        return "memory_state() given" if state is not None else "digest of what save() writes"

    def learn() -> str:
        first = got["first"]
        if not learns(first):
            return "does not learn (the floor)"
        before = _digest(first)
        trajectories = world.trajectories(got["train_obs"], got["train_answers"], world.train)
        got["trajectories"] = trajectories
        metrics = first.learn(trajectories)
        require(isinstance(metrics, Mapping), f"learn() returned {type(metrics).__name__}, not a dict of metrics")
        right = sum(t.reward == 1.0 for t in trajectories)
        return f"{right}/{len(trajectories)} train answers right; memory {'changed' if _digest(first) != before else 'unchanged'}"

    def protocol() -> None:
        first = got["first"]
        before = _digest(first)
        o = got["test_obs"][0]
        leak = Trajectory(Observation(world.test[0], o.prompt, o.book, o.split, o.docs), "```python\npass\n```", 1.0, "passed")
        try:
            first.learn([leak])
        except ProtocolError:
            pass
        else:
            raise CheckFailed("learn() took a test-split trajectory: it must go through Agent.learn (or check_learnable) and raise "
                              "ProtocolError")
        require(_digest(first) == before, "learn() raised on a test-split trajectory, but the memory changed first")

    def save_load() -> str:
        first = got["first"]
        got["tmp"] = tmp = tempfile.TemporaryDirectory(prefix="se-gym-check-agent-")
        root = first.save(Path(tmp.name) / "agent")
        require(isinstance(root, (str, Path)) and Path(root).is_dir(), f"save() returned {root!r}, not the folder it wrote")
        got["saved_answers"] = first.act(got["test_obs"])
        fresh = got["fresh"]()
        fresh.load(root)
        fresh.freeze()
        require(_digest(fresh) == _digest(first), "a fresh agent loaded from the save has another memory (state_digest differs): "
                "load() must restore everything save() wrote (memory_state / set_memory_state)")
        require(fresh.memory_state() == first.memory_state(), "a fresh agent loaded from the save has another memory_state()")
        require(fresh.memory_size() == first.memory_size(), f"memory_size() {fresh.memory_size()} after load, {first.memory_size()} saved")
        got["loaded"] = fresh
        return f"{first.memory_size()[0]} entries, {first.memory_size()[1]} bytes" if first.memory_size()[0] is not None else ""

    def answers_after_load() -> None:
        again = got["loaded"].act(got["test_obs"])
        differ = [o.task.id for o, a, b in zip(got["test_obs"], got["saved_answers"], again) if a != b]
        require(not differ, f"a fresh agent loaded from the save answers {len(differ)} of {len(again)} test questions otherwise than the "
                f"saved one (first: {differ[0] if differ else ''}): it keeps something outside what save() writes")

    def freeze() -> None:
        first = got["first"]
        before = _digest(first)
        first.freeze()
        trajectories = got.get("trajectories") or world.trajectories(got["train_obs"], got["train_answers"], world.train)
        try:
            first.learn(trajectories)
        except ProtocolError:
            pass
        else:
            raise CheckFailed("learn() after freeze() did not raise ProtocolError")
        require(_digest(first) == before, "the memory changed when a frozen agent was asked to learn")

    checks.run("class", klass)
    checks.run("build", build, needs=("class",))
    checks.run("act", act, needs=("build",))
    checks.run("memory", memory, needs=("build",))
    checks.run("learn", learn, needs=("act", "memory"))
    checks.run("protocol", protocol, needs=("act", "memory"))
    checks.run("freeze", freeze, needs=("learn",))
    # (the benchmark saves the agent at the freeze and answers the test with one loaded fresh, then frozen)
    checks.run("save-load", save_load, needs=("learn",))
    checks.run("answers after load", answers_after_load, needs=("save-load",))


__all__ = ["StandInModel", "check_agent"]
