"""``SEBench-v0``: one coding question per episode, judged in a sandbox.

Observation: the prompt text (``return_messages=True``: the chat messages as well, in ``info``).
Action: the model's full answer text.  Reward: from the judge (binary, or the fraction of passed
test cases).  ``info`` explains the verdict.

Episode protocol
- ``reset(seed=s)`` reseeds the env's generator and starts a new *epoch*: a permutation of the
  split drawn from that generator; each later ``reset()`` takes the next task of the epoch, so
  tasks are sampled without replacement until the split is exhausted.  The same seed gives the same
  task sequence and prompts in every process.  ``options={"task_id": ...}`` or ``{"index": i}``
  picks a task explicitly (the epoch position does not move).  That order is the ``uniform`` task
  sampler's (the default); ``sampler="learnability"`` (or a :class:`se_gym.tasks.sampler.TaskSampler`)
  draws tasks by how likely a group of answers is to carry signal, and every finished episode's
  reward is reported to the sampler (``env.unwrapped.sampler``; save its state with the run).
- ``step(answer)`` judges the answer.  With ``max_turns=1`` the episode terminates after one answer.
  With ``max_turns > 1`` a failed answer returns the execution feedback as the next observation;
  a passing answer terminates, and the last failed turn truncates.
- Multi-turn feedback splits a task's test cases: the first ``visible_cases`` (default 1: the first
  case, which is the example the prompt already shows, in the built-in suite and in SE-Bench) are
  *visible examples*, shown with their expected output, what the answer returned and its error
  message; the others are *hidden*: every case is judged, but the feedback says only how many hidden
  cases failed and how (a wrong value, an error, and the error's type), never a hidden expected
  output nor anything the answer returned, printed or raised on a hidden case.  An answer cannot
  learn the hidden outputs from the feedback and replay them.  ``visible_cases=0`` hides every case.
- ``info`` after a step: ``task_id``, ``task_hash``, ``library_id``, ``split``, ``turn``,
  ``verdict`` (the full :class:`se_gym.judge.Verdict`), ``status``, ``latency`` (wall time of the
  judge call; a measurement, excluded from equality so seeded episodes compare equal).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import gymnasium as gym
import numpy as np

from ..choices import BOOKS, PROFILES, REWARDS, SPLITS, check
from ..errors import SEGymError
from ..judge.options import JUDGE_DEFAULTS
from ..registry import RegistryError
from ..sandbox.spec import sandbox_spec
from .spaces import UnicodeText


class EnvConfigError(SEGymError, ValueError):
    """An invalid option for the environment (one line naming the option)."""


class InvalidAction(SEGymError, ValueError):
    """An action outside the action space (not text, or longer than its ``max_length``)."""


@dataclass(frozen=True)
class Latency:
    """Wall time of one judge call.  Measurements never make two infos unequal."""

    judge_s: float = field(compare=False)
    sandbox_s: float = field(compare=False, default=0.0)


def resolve_tasks(tasks: Any, split: str, seed: int, library: Any):
    """Turn the ``tasks`` option into ``(list[Task], Library)``.

    ``tasks``: ``"builtin"`` / ``"builtin:SEED"`` (the procedural suite; no SEED: the env's
    ``seed``), ``"sebench"`` / ``"sebench:PATH"`` (official files; the Hugging Face dataset when no
    path), or a sequence of :class:`se_gym.tasks.Task`.  ``library``: ``None`` (the tasks' own:
    ``mint(SEED)`` for the built-in suite, the official names from ``api_doc.jsonl`` beside official
    files), ``"seed:N"``, ``"official:PATH"``, an int seed or a :class:`se_gym.library.Library`.
    Parsing is :mod:`se_gym.tasks.spec`'s, the same as ``se-gym rollout --tasks``.
    """
    from ..library import from_spec
    from ..library.core import LibraryError
    from ..tasks import TaskError
    from ..tasks.spec import load_task_spec

    if isinstance(tasks, str):
        check("split", split, SPLITS, EnvConfigError)
        try:
            return load_task_spec(tasks, split, library, default_seed=seed)
        except TaskError as exc:
            raise EnvConfigError(f"tasks={tasks!r}: {exc}") from None
    if isinstance(tasks, Sequence) and tasks:
        from ..tasks import Task

        bad = [type(t).__name__ for t in tasks if not isinstance(t, Task)]
        if bad:
            raise EnvConfigError(f"tasks: a list must hold Task records, found {bad[0]}")
        try:
            return list(tasks), from_spec(library if library is not None else seed)
        except LibraryError as exc:
            raise EnvConfigError(f"library: {exc}") from None
    raise EnvConfigError("tasks is empty" if isinstance(tasks, Sequence) else f"tasks: unsupported value {tasks!r}")


# the number of leading test cases of a task that multi-turn feedback shows with their expected
# outputs (the first is the example of the prompt); the rest are hidden (see the module docstring)
DEFAULT_VISIBLE_CASES = 1
_SHOW = 200  # characters of an expected or returned value shown
# statuses whose detail is the judge's own words about the answer's code or the sandbox's limits
# (a runtime refusal's detail names what the program asked for: the program's words)
_HOST_DETAIL = frozenset({"static_gate", "uses_numpy", "timeout", "memory_limit", "output_limit", "sandbox_error"})


def _short(text: Any) -> str:
    text = str(text)
    return text if len(text) <= _SHOW else text[: _SHOW - 1] + "…"


def feedback_text(verdict, turn: int, max_turns: int, visible: int = DEFAULT_VISIBLE_CASES) -> str:
    """What a failed answer teaches the agent on the next turn.  On the first ``visible`` test cases
    (the visible examples): the expected output, what the answer returned, the error it raised.  On
    the others (hidden): how many failed, as a wrong value or an error, and the first error's type;
    never a hidden expected output nor what the answer returned, printed or raised on one."""
    status = verdict.status.value
    lines = [f"Your answer was not accepted ({status}; attempt {turn} of {max_turns})."]
    cases = verdict.cases
    shown_cases = max(0, min(visible, len(cases)))
    if status in _HOST_DETAIL or (status == "forbidden" and not verdict.detail.startswith("forbidden at run time")):
        lines.append(verdict.detail)
    elif status == "forbidden":
        lines.append("The program did something the judge forbids while it ran.")
    elif status == "library_unused":
        lines.append("Every test passed, but the results do not come from the library: when the library's results "
                     "change, yours do not follow them as a solution computing with it would. Compute the result "
                     "with the library's functions.")
    if status in ("runtime_error", "wrong_answer"):
        where = (verdict.extra or {}).get("error_case")
        if verdict.exception and where is not None and where < shown_cases:
            lines.append(f"Error on test {where + 1}: {verdict.exception}: {verdict.exception_message or ''}".rstrip(": "))
        elif verdict.exception and where is not None:
            lines.append(f"Error on a hidden test: {verdict.exception} (its message is not shown)")
        elif status == "runtime_error":
            what = f" ({verdict.exception})" if verdict.exception else ""
            lines.append(f"The program ended before reporting its results{what}.")
        if where is not None or status == "wrong_answer":
            shown = 0
            for i, case in enumerate(cases[:shown_cases]):
                if not case.ok and shown < 3:
                    got = "an error" if case.got is None else _short(case.got)
                    lines.append(f"Test {i + 1}: expected {_short(case.expected)}, got {got}")
                    shown += 1
            hidden = cases[shown_cases:]
            if hidden:
                failed = [c for c in hidden if not c.ok]
                errors = sum(c.got is None for c in failed)
                wrong = len(failed) - errors
                how = f" ({wrong} wrong value{'s' * (wrong != 1)}, {errors} error{'s' * (errors != 1)})" if failed else ""
                lines.append(f"Hidden tests: {len(failed)} of {len(hidden)} failed{how}.")
    lines.append("Fix the problem and answer again with the complete function in one ```python block.")
    return "\n".join(lines)


def _make_sampler(spec: Any, options: dict | None, tasks: Sequence[Any]):
    from ..tasks.sampler import SamplerError, make_sampler

    if options is not None and not isinstance(options, dict):
        raise EnvConfigError(f"sampler_options must be a dict, got {type(options).__name__}")
    try:
        return make_sampler(spec, tasks, **(options or {}))
    except (RegistryError, SamplerError) as exc:
        raise EnvConfigError(f"sampler: {exc}") from None


class SEBenchEnv(gym.Env[str, str]):
    """SE-Bench as a Gymnasium environment (see the module docstring for the protocol).

    Args:
        tasks: ``"builtin"`` (default), ``"builtin:SEED"``, ``"sebench[:PATH]"`` or a list of Tasks.
        split: ``"single_test"`` (default), ``"train"``, ``"multiple_test"``.
        seed: seed of the built-in suite and of the minted library (default 0).
        library: ``None``, ``"seed:N"``, ``"official:PATH"``, an int or a Library.
        book: ``"closed"`` (query only, default) or ``"open"`` (query + docs of the task's functions).
        template: a custom prompt template (``str.format`` fields, see ``se_gym.tasks.prompts``).
        profile: judge profile, ``"strict"`` (default) or ``"sebench"``.
        reward: ``"binary"`` (default) or ``"fraction"`` of passed test cases.
        sandbox: a sandbox spec (:class:`se_gym.sandbox.SandboxSpec`): ``"local"`` (default),
            ``"docker"``, ``"http://HOST:PORT"``, ``{"name": "ray", "address": "auto"}`` (every CPU
            node of a Ray cluster; see ``se_gym.distributed.sandbox``), any name registered with
            ``se_gym.sandbox.register_sandbox`` or ``file.py:Class``, with options of its own (a dict,
            or ``"NAME,KEY=VALUE"``); or a Sandbox.  ``http_url``/``ray_address``: the old spellings
            of the ``url``/``address`` options (deprecated).  ``limits``: sandbox Limits.
        max_turns: answers allowed per episode (default 1).
        visible_cases: with ``max_turns > 1``, how many leading test cases are visible examples in the
            feedback (default 1, the prompt's example); the rest are hidden (module docstring).
        strip_think: drop ``<think>...</think>`` before extracting the code (default True).
        return_messages: also put the chat messages in ``info["messages"]``.
        max_length: the longest prompt/answer accepted by the spaces (characters).
        judge: an existing :class:`se_gym.judge.Judge` to share (its library/profile win).
        sampler: which task each ``reset()`` gets: ``"uniform"`` (default: a seeded permutation per
            epoch), ``"learnability"``, ``"module:Class"`` / ``"file.py:Class"``, or a
            :class:`se_gym.tasks.sampler.TaskSampler` built over the same tasks; ``sampler_options``:
            its options (``{"group_size": 8, "floor": 0.1, ...}``).
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(
        self,
        tasks: Any = "builtin",
        split: str = "single_test",
        seed: int = 0,
        library: Any = JUDGE_DEFAULTS.library,
        book: str = "closed",
        template: str | None = None,
        profile: str = JUDGE_DEFAULTS.profile,
        reward: str = "binary",
        sandbox: Any = JUDGE_DEFAULTS.sandbox,
        limits: Any = None,
        max_turns: int = 1,
        strip_think: bool = True,
        return_messages: bool = False,
        max_length: int = 200_000,
        judge: Any = None,
        render_mode: str | None = None,
        http_url: str | None = None,
        visible_cases: int = DEFAULT_VISIBLE_CASES,
        ray_address: str | None = None,
        sampler: Any = None,
        sampler_options: dict | None = None,
    ):
        # every option is checked here, at gym.make, not at the first step
        check("book", book, BOOKS, EnvConfigError)
        check("profile", profile, PROFILES, EnvConfigError)
        check("reward", reward, REWARDS, EnvConfigError)
        check("render_mode", render_mode, (None, *self.metadata["render_modes"]), EnvConfigError)
        if not callable(getattr(sandbox, "run", None)):  # a spec, parsed once here and handed to the judge
            try:  # (a backend registered anywhere is accepted, with the options it takes and the modules it needs)
                sandbox = sandbox_spec(sandbox, http_url=http_url, ray_address=ray_address, where="SEBench-v0")
                if judge is None:
                    sandbox.check(requirements=True)
            except RegistryError as exc:
                raise EnvConfigError(str(exc)) from None
        if not isinstance(split, str) or not split:
            raise EnvConfigError(f"split must be a split name, got {split!r}")
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
            raise EnvConfigError(f"max_length must be an int >= 1, got {max_length!r}")
        if judge is not None and not callable(getattr(judge, "judge_many", None)):
            raise EnvConfigError(f"judge must be a se_gym.judge.Judge, got {type(judge).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise EnvConfigError(f"seed must be a non-negative int, got {seed!r}")
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise EnvConfigError(f"max_turns must be an int >= 1, got {max_turns!r}")
        if isinstance(visible_cases, bool) or not isinstance(visible_cases, int) or visible_cases < 0:
            raise EnvConfigError(f"visible_cases must be an int >= 0, got {visible_cases!r}")
        if template is not None and not isinstance(template, str):
            raise EnvConfigError("template must be a str (str.format fields) or None")
        self.tasks, self.library = resolve_tasks(tasks, split, seed, library)
        if not self.tasks:
            raise EnvConfigError(f"split {split!r} has no tasks")
        self.split, self.book, self.template = split, book, template
        self.profile, self.reward_mode, self.max_turns = profile, reward, max_turns
        self.visible_cases = visible_cases
        self.strip_think, self.return_messages = strip_think, return_messages
        self.render_mode = render_mode
        self._sandbox_spec, self._limits = sandbox, limits
        self._judge = judge
        self._owns_judge = judge is None
        self._index_of = {t.id: i for i, t in enumerate(self.tasks)}
        self.sampler = _make_sampler(sampler, sampler_options, self.tasks)
        self._sampler_stream = 0  # this env's draw stream (a vector env numbers its sub-envs)
        self._task_index: int | None = None
        self.observation_space = UnicodeText(max_length)
        self.action_space = UnicodeText(max_length)
        self._task = None
        self._turn = 0
        self._messages: list[dict] = []
        self._last_obs = ""
        self._done = True

    # ------------------------------------------------------------------ helpers
    @property
    def judge(self):
        """The judge (created on first use: the sandbox starts lazily)."""
        if self._judge is None:
            from ..judge import Judge

            self._judge = Judge(
                self.library,
                profile=self.profile,
                sandbox=self._sandbox_spec,
                reward=self.reward_mode,
                strip_think=self.strip_think,
                limits=self._limits,
            )
        return self._judge

    def prompt_for(self, task) -> str:
        from ..tasks import render_prompt

        return render_prompt(task, self.library, book=self.book, template=self.template)

    def messages_for(self, task) -> list[dict]:
        from ..tasks import render_messages

        return render_messages(task, self.library, book=self.book, template=self.template)

    @property
    def task(self):
        """The current episode's task."""
        return self._task

    def _next_index(self) -> int:
        if not self.sampler.has_stream(self._sampler_stream):  # first draw without a seed: the env's generator
            self.sampler.attach(self._sampler_stream, self.np_random)
        return self.sampler.next_index(self._sampler_stream)

    def _pick(self, options: dict | None) -> int:
        if not options:
            return self._next_index()
        unknown = set(options) - {"task_id", "index"}
        if unknown or len(options) > 1:
            raise EnvConfigError(f"reset options take one of 'task_id' or 'index', got {sorted(options)}")
        if "task_id" in options:
            try:
                return self._index_of[options["task_id"]]
            except KeyError:
                raise EnvConfigError(f"no task with id {options['task_id']!r} in split {self.split!r}") from None
        i = options["index"]
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(self.tasks):
            raise EnvConfigError(f"index must be an int in [0, {len(self.tasks)}), got {i!r}")
        return int(i)

    def _info(self, **extra) -> dict:
        t = self._task
        info = {"task_id": t.id, "task_hash": t.hash, "library_id": self.library.id, "split": self.split, "turn": self._turn}
        if self.return_messages:
            info["messages"] = [dict(m) for m in self._messages]
        info.update(extra)
        return info

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        """Start an episode; ``seed`` restarts the epoch from a new permutation."""
        super().reset(seed=seed)
        if seed is not None:  # a new epoch from the freshly seeded generator
            self.sampler.attach(self._sampler_stream, self.np_random)
        self._task_index = self._pick(options)
        self._task = self.tasks[self._task_index]
        start = getattr(self.judge, "start", None) if self._owns_judge else None
        if start is not None:
            start()  # its workers start while the answer is written (local, docker; once; else nothing)
        self._turn = 0
        self._done = False
        self._last_obs = self.prompt_for(self._task)
        self._messages = self.messages_for(self._task) if self.return_messages else []
        return self._last_obs, self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        """Judge ``action`` (the model's answer text) for the current task.

        Raises ``gymnasium.error.ResetNeeded`` before ``reset()`` and after the episode ended, and
        :class:`InvalidAction` for an action outside ``action_space`` (not a str, or longer than
        its ``max_length``), both before anything runs in the sandbox.
        """
        self.check_ready()
        self.check_action(action)
        verdict, latency = self.judge_answers([action], [self._task])[0]
        return self.apply_verdict(action, verdict, latency)

    def check_ready(self) -> None:
        if self._task is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self._done:
            raise gym.error.ResetNeeded("the episode is over: call reset() before step()")

    def check_action(self, action: Any) -> None:
        """The action space is the contract: what it does not contain is refused, not judged."""
        if not isinstance(action, str):
            raise InvalidAction(f"an action is the answer text (str), got {type(action).__name__}")
        if not self.action_space.contains(action):
            space = self.action_space
            raise InvalidAction(f"the action has {len(action)} characters; the action space takes "
                                f"{space.min_length} to {space.max_length} (SEBenchEnv(max_length=...))")

    # split so the vector env can judge many answers in one batch and then apply each verdict
    def judge_answers(self, actions: Sequence[str], tasks: Sequence[Any]) -> list[tuple[Any, Latency]]:
        for a in actions:
            self.check_action(a)
        t0 = time.perf_counter()
        verdicts = self.judge.judge_many([t.judge_item(a) for a, t in zip(actions, tasks)])
        dt = time.perf_counter() - t0
        return [(v, Latency(judge_s=dt, sandbox_s=getattr(v, "wall_s", 0.0))) for v in verdicts]

    def apply_verdict(self, action: str, verdict, latency: Latency) -> tuple[str, float, bool, bool, dict]:
        self.check_ready()
        self._turn += 1
        reward = float(verdict.reward)
        passed = verdict.status.value == "passed"
        terminated = passed or self.max_turns == 1
        truncated = not terminated and self._turn >= self.max_turns
        if self.return_messages:
            self._messages.append({"role": "assistant", "content": action})
        obs = self._last_obs
        if not (terminated or truncated):
            fb = feedback_text(verdict, self._turn, self.max_turns, self.visible_cases)
            obs = f"{self._last_obs}\n\n### Your previous answer\n{action}\n\n### Feedback\n{fb}"
            if self.return_messages:
                self._messages.append({"role": "user", "content": fb})
            self._last_obs = obs
        self._done = terminated or truncated
        if self._done:  # the episode's outcome teaches the sampler (uniform ignores it)
            self.sampler.update(self._task_index, [reward])
        info = self._info(verdict=verdict, status=verdict.status.value, latency=latency)
        if self.render_mode == "human":
            print(self._render_text(action, verdict))
        self._last_render = self._render_text(action, verdict)
        return obs, reward, terminated, truncated, info

    def _render_text(self, action: str, verdict) -> str:
        return f"[{self._task.id}] turn {self._turn}: {verdict.status.value} reward={verdict.reward:g} {verdict.detail}".rstrip()

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return getattr(self, "_last_render", self._last_obs)
        return None

    def close(self) -> None:
        if self._owns_judge and self._judge is not None:
            self._judge.close()
            self._judge = None
        super().close()

