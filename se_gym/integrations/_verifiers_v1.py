"""SEBench-v0 on verifiers 0.4's v1 API: a taskset plugin with its env and harness.

Imported by :mod:`se_gym.integrations.verifiers` when verifiers 0.4.x is installed; see there.
verifiers resolves the taskset id ``se-gym`` to the ``se_gym`` package and takes from its
``__all__`` the one ``Taskset`` subclass (:class:`SEBenchTaskset`), the env that plays it
(:class:`SEBenchEnv`) and the default harness (:class:`SEBenchHarness`)::

    vf-eval se-gym -m MODEL --client.base-url http://127.0.0.1:8000/v1 --client.api-key-var KEY \\
        -n 8 -r 4 --env.taskset.max-turns 2 --env.taskset.book open

- :class:`SEBenchTaskset` yields one :class:`SEBenchTask` per SE-Bench task (``--env.taskset.*``:
  SEBench-v0's options).  The task's ``sebench_reward`` is the judge's reward for the last answer.
- :class:`SEBenchEnv` plays one task per episode: the model answers; with ``max_turns > 1`` each
  failed answer gets the execution feedback as the next user turn, and a passing answer (or the
  last turn) ends the episode.  Each answer is judged once: the reward reuses the verdict the env
  took on the final answer.  Every judged answer is listed in ``trace.info["sebench"]``.
- :class:`SEBenchHarness` asks the model in-process, one chat completion per turn through the
  rollout's interception endpoint (verifiers records and relays it as for any harness): SE-Bench
  needs no tools, and this needs neither ``uv`` nor a sandbox.  ``--env.agent.harness.id null``
  runs verifiers' own chat program instead (it bootstraps ``uv`` and its dependencies).  The agent
  runs in the ``subprocess`` runtime by default (verifiers' default is Prime's remote sandbox).

An answer the sandbox could not run is not a wrong answer: the reward raises ``vf.SandboxError``,
which verifiers records on the trace (``trace.errors``, stop condition ``sandbox_error``,
``trace.ok`` false, episode not ok).  ``vf-eval --resume`` reruns such episodes, prime-rl leaves
them out of training, and ``--env.retries.rules`` can retry them (``type: SandboxError``).
"""
from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from ..judge.options import JUDGE_DEFAULTS
from ._common import Suite

REWARD_NAME = "sebench_reward"
__all__ = ["SEBenchConfig", "SEBenchData", "SEBenchTask", "SEBenchTaskset", "SEBenchEnvConfig", "SEBenchEnv",
           "SEBenchHarnessConfig", "SEBenchHarness", "load_environment"]


class SEBenchConfig(vf.TasksetConfig):
    """SEBench-v0's options (``--env.taskset.<option>``)."""

    tasks: str = "builtin"
    split: str = "single_test"
    seed: int = 0
    library: str | None = None
    book: str = "closed"
    profile: str = JUDGE_DEFAULTS.profile
    reward: str = "binary"
    sandbox: str = JUDGE_DEFAULTS.sandbox
    strip_think: bool = True
    max_turns: int = Field(1, ge=1)


class SEBenchData(vf.TaskData):
    """What one task carries into a rollout (verifiers' ``TaskData``).

    Attributes:
        task_id: the se-gym task id.
        function_name: the signature to complete.
        test_cases: the task's test cases (``input`` / ``output``).
        max_turns: answers allowed (the feedback between them).
        judge: the options that pick the judge (and the task suite): the task is scored in any process.
    """
    task_id: str
    function_name: str
    test_cases: list[dict]
    reference: str | None = None
    """The task's library solution: strict's library dependence check runs it beside the answer (issue 42)."""
    max_turns: int = 1
    judge: dict = Field(default_factory=dict)
    """The options that pick the judge (and the task suite): the task is scored in any process."""


def _suite_options(config: SEBenchConfig) -> dict:
    opts = {k: getattr(config, k) for k in ("tasks", "split", "seed", "library", "profile", "reward", "sandbox", "strip_think")}
    return {k: v for k, v in opts.items() if v is not None}


async def _suite(options: dict) -> Suite:
    return await asyncio.to_thread(Suite.get, options)  # the first call builds the suite: seconds


def _digest(answer: str) -> str:
    return hashlib.sha1(answer.encode("utf-8", "surrogatepass")).hexdigest()


async def judge_answer(data: SEBenchData, trace: vf.Trace, answer: str, turn: int) -> dict:
    """Judge ``answer`` (the ``turn``-th) to the task of ``data``; the verdict's summary is appended
    to ``trace.info["sebench"]`` (and returned), so that no answer is judged twice."""
    suite = await _suite(data.judge)
    verdict = (await suite.front.judge_many_async([(answer, data.test_cases, data.function_name, None, data.reference)]))[0]
    rec = {"turn": turn, "answer_sha1": _digest(answer), "status": verdict.status.value, "reward": float(verdict.reward),
           "sebench_code": verdict.sebench_code, "infrastructure": bool(verdict.infrastructure)}
    trace.info.setdefault("sebench", []).append(rec)
    return {**rec, "verdict": verdict}  # the Verdict for the caller only: trace.info stays JSON


class SEBenchTask(vf.Task[SEBenchData, vf.State, vf.TaskConfig]):
    """One SE-Bench task as a verifiers task: its key is the task id, its reward the judge's.

    Attributes:
        data: the :class:`SEBenchData`.
    """
    @property
    def key(self) -> str:
        """The task id."""
        return self.data.task_id

    @vf.reward
    async def sebench_reward(self, trace: vf.Trace) -> float:
        """The judge's reward for the last answer (the env's verdict reused when it judged that very answer).

        Args:
            trace: the rollout's trace.

        Raises:
            vf.SandboxError: the sandbox could not run the answer (not a wrong answer: verifiers records it).
        """
        answer, turn = trace.last_reply, len(trace.assistant_messages)
        judged = trace.info.get("sebench") or []
        if judged and (judged[-1]["turn"], judged[-1]["answer_sha1"]) == (turn, _digest(answer)):
            rec = judged[-1]  # the env judged the final answer already
        else:
            rec = await judge_answer(self.data, trace, answer, turn)
        if rec["infrastructure"]:
            raise vf.SandboxError(f"se-gym: the sandbox could not judge the answer ({rec['status']}); not a wrong answer")
        return rec["reward"]


class SEBenchTaskset(vf.Taskset[SEBenchTask, SEBenchConfig]):
    """One :class:`SEBenchTask` per task of the suite SEBench-v0's options pick.

    Attributes:
        config: the :class:`SEBenchConfig` (``--env.taskset.*``).
    """
    def load(self):
        """Yield one task per task of the suite, with its prompt as the env renders it."""
        config = self.config
        suite = Suite.get(_suite_options(config))
        env = suite.env(book=config.book)
        for t in suite.tasks:
            messages = env.messages_for(t)
            system = next((m["content"] for m in messages if m["role"] == "system"), None)
            yield SEBenchTask(SEBenchData(
                id=t.id, name=t.function_name, prompt=messages[-1]["content"], system_prompt=system,
                task_id=t.id, function_name=t.function_name,
                test_cases=[{"input": c.input, "output": c.output} for c in t.test_cases],
                reference=t.library_solution or None, max_turns=config.max_turns, judge=_suite_options(config),
            ), config.task)


class SEBenchEnvConfig(vf.EnvConfig):
    # one seat; a local runtime: the default harness runs in-process and needs no sandbox of its own
    """The env's config: one seat whose agent runs in a local subprocess runtime (the default harness
    runs in-process and needs no sandbox of its own).

    Attributes:
        agent: the seat's agent config.
    """
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class SEBenchEnv(vf.Env[SEBenchEnvConfig]):
    """One SE-Bench episode: answer, feedback on a failed answer, answer again (``max_turns``)."""

    async def run(self, task: SEBenchTask, agents: vf.Agents) -> None:
        """Play one task: the model answers; a failed answer gets its execution feedback as the next user
        turn until it passes or ``max_turns`` are used.  Each answer is judged and listed in
        ``trace.info["sebench"]``.

        Args:
            task: the task.
            agents: the seat the model answers in.
        """
        from ..envs.sebench import feedback_text

        data = task.data
        async with agents.agent.interaction(task) as interaction:
            segment = await interaction.turn()
            turn = 1
            # a single answer is left to the task's reward; a multi-turn env judges to go on
            while not segment.terminated and turn < data.max_turns:
                rec = await judge_answer(data, interaction.trace, segment.last_reply, turn)
                if rec["infrastructure"] or rec["verdict"].passed:
                    break  # the reward reuses this verdict (and flags an infrastructure failure)
                segment = await interaction.turn(feedback_text(rec["verdict"], turn, data.max_turns))
                turn += 1


class SEBenchHarnessConfig(vf.HarnessConfig):
    """The harness's config: verifiers' defaults."""
    pass


class SEBenchHarness(vf.Harness[SEBenchHarnessConfig]):
    """A tool-less chat turn asked in-process: one chat completion per segment through the
    rollout's interception endpoint (which relays it to the model and records it on the trace)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True  # verifiers resumes by relaunching on the conversation so far
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx, trace, runtime, endpoint, secret, mcp_urls, data, tool_interception_url=None):
        """Ask the model once: one chat completion through the rollout's interception endpoint.

        Args:
            ctx: the rollout's context (the model's name).
            trace: the trace (recorded by verifiers).
            runtime: the runtime (unused: nothing runs there).
            endpoint: the interception endpoint's base URL.
            secret: its bearer token.
            mcp_urls: tool servers (unused: SE-Bench needs no tools).
            data: the task data (the prompt is resolved from it).
            tool_interception_url: unused.

        Returns:
            A ``ProgramResult``: exit code 0 on a completion, else the transport or provider error.
        """
        import httpx
        from verifiers.v1.dialects.chat import message_to_wire

        system, prompt = self.resolve_prompt(data)
        messages = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [message_to_wire(m) for m in prompt or []]
        try:
            async with httpx.AsyncClient(timeout=None) as client:
                r = await client.post(endpoint.rstrip("/") + "/chat/completions", headers={"Authorization": f"Bearer {secret}"},
                                      json={"model": ctx.model, "messages": messages})
        except httpx.TransportError as exc:
            from verifiers.v1.errors import MODEL_TRANSPORT_ERROR_EXIT_CODE

            return vf.ProgramResult(MODEL_TRANSPORT_ERROR_EXIT_CODE, "", f"{type(exc).__name__}: {exc}")
        # a provider error is raised by verifiers itself (the interception stashed it)
        return vf.ProgramResult(0 if r.is_success else 1, "", "" if r.is_success else r.text[-2000:])


def load_environment(**options: Any) -> SEBenchEnv:
    """The env ``vf-eval se-gym`` runs, built by verifiers' own loader.

    Args:
        options: SEBench-v0's options, as the taskset's config (``max_turns``, ``book``, ``split``, ...).
    """
    config = vf.resolve_env_config({"taskset": {"id": "se-gym", **options}})
    return vf.load_environment(config)
