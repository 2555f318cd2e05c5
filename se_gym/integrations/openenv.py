"""SEBench-v0 as an OpenEnv environment server (``pip install 'se-gym[openenv]'``).

Serve::

    se-gym serve openenv --host 127.0.0.1 --port 8000 --book closed --max-turns 2 --max-sessions 64

Use (openenv-core's own WebSocket client, one session = one env instance on the server)::

    from se_gym.integrations.openenv import SEBenchAction, SEBenchClient
    with SEBenchClient(base_url="http://127.0.0.1:8000").sync() as env:
        r = env.reset(seed=0)                         # r.observation.prompt / .messages
        r = env.step(SEBenchAction(answer=text))      # r.reward, r.done, r.observation.status / .feedback
        env.state()                                   # SEBenchState: task_id, turn, done, ...

Each session holds its own episode (``reset`` starts the next one: its task, ``task_id=`` or
``index=`` to pick one); every session's steps go to one shared judge, and the steps that arrive
together from many sessions are judged in one sandbox batch.  An action is typed: ``answer`` is
non-empty text of at most ``max_length`` characters; anything else is refused with a validation
error and the session (and the server) keep serving.  A client that disconnects, or is killed,
has its session closed by the server (``GET /se_gym/sessions`` counts the open ones), and its
step, if it still waits for the judge, is not judged.

Plain HTTP (``POST /reset``, ``POST /step``) is stateless: openenv-core builds a new environment
for every HTTP request, so no episode outlives a request.  ``POST /reset`` returns a task's prompt
(``{"task_id": ...}`` or ``{"index": ...}``, else the next task); ``POST /step`` judges one answer
to the task the request names and ends that episode::

    POST /step  {"action": {"answer": "..."}, "task_id": "builtin/s0/single_test/0003"}   # or "index": 3
    -> {"observation": {... "status": "passed"}, "reward": 1.0, "done": true}

A step that names no task is answered 400 with a pointer to the session API (``/ws``), as is a
task id that the server's split does not hold.  Multi-turn episodes need a session.
"""
from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import uuid
from typing import Any, Dict, List, Optional

from openenv.core.client_types import StepResult
from openenv.core.containers.runtime import LocalDockerProvider
from openenv.core.env_client import EnvClient
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field, StrictStr, field_validator
from pydantic_core import PydanticCustomError

from ..errors import SEGymError
from ..judge.options import JUDGE_DEFAULTS
from ._common import Suite

log = logging.getLogger(__name__)

# set by QuietDisconnect for the connection whose handler runs in this task: the client is gone
_CLIENT_LEFT: contextvars.ContextVar[Optional[asyncio.Event]] = contextvars.ContextVar("se_gym_client_left", default=None)


class ClientLeft(SEGymError, ConnectionError):
    """The client closed its connection before its step's verdict: the step is not judged."""

MAX_ANSWER_CHARS = 200_000  # SEBench-v0's default action space length


class SEBenchRequestError(SEGymError, ValueError):
    """A request the environment cannot serve (no episode, an unknown task): HTTP 400, or the
    session's error message."""


class SEBenchAction(Action):
    """The model's full answer for the current task (text with one ```python block)."""

    answer: StrictStr = Field(..., description="the model's answer text (non-empty, at most 200,000 characters)")

    @field_validator("answer")
    @classmethod
    def _check_answer(cls, v: str) -> str:
        # PydanticCustomError, not ValueError: openenv-core's server puts e.errors() in its JSON
        # reply, and a ValueError object in the error's ctx cannot be serialized (the session dies)
        if not v.strip():
            raise PydanticCustomError("empty_answer", "answer is empty: send the model's full answer text")
        if len(v) > MAX_ANSWER_CHARS:
            raise PydanticCustomError("answer_too_long", "answer has {n} characters, more than the {limit} allowed",
                                      {"n": len(v), "limit": MAX_ANSWER_CHARS})
        return v


class SEBenchObservation(Observation):
    """What the model sees next, and the verdict on its last answer."""

    prompt: str = Field("", description="the text for the model: the task, then (multi-turn) its answers and the feedback")
    messages: List[Dict[str, str]] = Field(default_factory=list, description="the same as chat messages")
    task_id: str = ""
    turn: int = 0
    max_turns: int = 1
    status: Optional[str] = Field(None, description="the verdict's status (passed, wrong_answer, ...); None after reset")
    sebench_code: Optional[int] = None
    feedback: Optional[str] = Field(None, description="execution feedback on a failed answer (multi-turn)")
    infrastructure: bool = Field(False, description="the sandbox failed: not a wrong answer")


class SEBenchState(State):
    task_id: Optional[str] = None
    split: str = ""
    library_id: str = ""
    book: str = "closed"
    turn: int = 0
    max_turns: int = 1
    done: bool = True


class SEBenchEnvironment(Environment[SEBenchAction, SEBenchObservation, SEBenchState]):
    """One OpenEnv session: a SEBench-v0 episode over a shared :class:`Suite`."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    # one thread for every session's sync calls (its creation, its close: fractions of a
    # millisecond; reset and step run on the event loop): openenv otherwise starts a thread per
    # session, and under a burst of connections each start waits for the GIL in the event loop
    REQUIRES_SINGLE_THREAD_EXECUTOR = True
    live: set = set()  # ids of the open instances (one per session), for GET /se_gym/sessions

    def __init__(self, suite: Suite, **episode: Any):
        super().__init__()
        self.suite = suite
        self.env = suite.env(**episode)
        self._episode_id: Optional[str] = None
        self._steps = 0
        self._messages: list[dict] = []
        self._stateless = False
        self._key = uuid.uuid4().hex
        SEBenchEnvironment.live.add(self._key)

    # -- helpers ---------------------------------------------------------------------------
    def _obs(self, prompt: str, reward: float | None = None, done: bool = False, verdict: Any = None, feedback: str | None = None) -> SEBenchObservation:
        env = self.env
        return SEBenchObservation(
            prompt=prompt, messages=[dict(m) for m in self._messages], task_id=env.task.id, turn=env._turn,
            max_turns=env.max_turns, status=None if verdict is None else verdict.status.value,
            sebench_code=None if verdict is None else verdict.sebench_code, feedback=feedback,
            infrastructure=bool(verdict is not None and verdict.infrastructure), reward=reward, done=done,
        )

    # -- OpenEnv API -----------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, task_id: Optional[str] = None,
              index: Optional[int] = None, split: Optional[str] = None, **_: Any) -> SEBenchObservation:
        from ..envs import EnvConfigError

        if split is not None:  # the Task API's way to pick a task: reset(split=..., index=...)
            self._split_tasks(split)

        if task_id is not None and index is not None:
            raise SEBenchRequestError("reset takes task_id or index, not both")
        options = {"task_id": task_id} if task_id is not None else ({"index": index} if index is not None else None)
        try:
            prompt, _ = self.env.reset(seed=seed, options=options)
        except EnvConfigError as exc:
            raise SEBenchRequestError(str(exc)) from None
        self._messages = self.env.messages_for(self.env.task)
        self._episode_id = episode_id or uuid.uuid4().hex
        self._steps = 0
        self._stateless = False  # a stateless step's one-answer episode ends with its request, not the session's next ones
        return self._obs(prompt)

    async def reset_async(self, seed: Optional[int] = None, episode_id: Optional[str] = None, task_id: Optional[str] = None,
                          index: Optional[int] = None, split: Optional[str] = None, **kw: Any) -> SEBenchObservation:
        # on the event loop (a fraction of a millisecond), not queued on the one thread that
        # every session's sync calls share
        return self.reset(seed=seed, episode_id=episode_id, task_id=task_id, index=index, split=split, **kw)

    def _check(self, action: Any, task_id: Optional[str], index: Optional[int]) -> str:
        if not isinstance(action, SEBenchAction):
            raise TypeError(f"the action must be a SEBenchAction, got {type(action).__name__}")
        if task_id is not None or index is not None:  # a stateless step (HTTP): a new one-answer episode
            self.reset(task_id=task_id, index=index)
            self._stateless = True  # until the next reset
        elif self.env.task is None or self.env._done:
            raise SEBenchRequestError(
                "no episode in progress: send reset first (one episode at a time per session). Over plain HTTP "
                "every request gets a new environment: name the task in the step ({\"action\": {\"answer\": ...}, "
                "\"task_id\": ...} or \"index\"), or hold an episode in a session (WebSocket /ws, SEBenchClient)")
        if len(action.answer) > self.env.action_space.max_length:
            raise ValueError(f"answer has {len(action.answer)} characters, more than this server's max_length {self.env.action_space.max_length}")
        return action.answer

    def _apply(self, answer: str, verdict: Any, started: float) -> SEBenchObservation:
        from ..envs.sebench import Latency, feedback_text

        self._steps += 1
        obs, reward, terminated, truncated, info = self.env.apply_verdict(answer, verdict, Latency(judge_s=time.perf_counter() - started))
        done = terminated or truncated
        self._messages.append({"role": "assistant", "content": answer})
        fb = None
        if not done:
            fb = feedback_text(verdict, info["turn"], self.env.max_turns, self.env.visible_cases)
            self._messages.append({"role": "user", "content": fb})
        # a stateless step's episode ends with the request (its feedback is what a next turn would see)
        if self._stateless and not done:
            self.env._done = True  # a later step without a task must reset first, as after any ended episode
        return self._obs(obs, reward=float(reward), done=done or self._stateless, verdict=verdict, feedback=fb)

    def step(self, action: SEBenchAction, timeout_s: Optional[float] = None, task_id: Optional[str] = None,
             index: Optional[int] = None, **_: Any) -> SEBenchObservation:
        answer, t0 = self._check(action, task_id, index), time.perf_counter()
        task = self.env.task
        verdict = self.suite.front.judge_many([task.judge_item(answer)])[0]  # (with its reference: strict's dependence check)
        return self._apply(answer, verdict, t0)

    async def step_async(self, action: SEBenchAction, timeout_s: Optional[float] = None, task_id: Optional[str] = None,
                         index: Optional[int] = None, **_: Any) -> SEBenchObservation:
        # judged on the batcher's thread: the event loop keeps serving the other sessions
        answer, t0 = self._check(action, task_id, index), time.perf_counter()
        task = self.env.task
        waiter = asyncio.wrap_future(self.suite.batcher.submit(task.judge_item(answer)))
        left = _CLIENT_LEFT.get()
        if left is not None:
            # a client that leaves mid-step takes its step along: still queued, it is never judged
            gone = asyncio.ensure_future(left.wait())
            try:
                await asyncio.wait((waiter, gone), return_when=asyncio.FIRST_COMPLETED)
            finally:
                gone.cancel()
                if not waiter.done():
                    waiter.cancel()
            if waiter.cancelled():
                raise ClientLeft("the client left before its verdict; the step was not judged")
        verdict = await waiter
        return self._apply(answer, verdict, t0)

    @property
    def state(self) -> SEBenchState:
        env = self.env
        return SEBenchState(
            episode_id=self._episode_id, step_count=self._steps, task_id=None if env.task is None else env.task.id,
            split=env.split, library_id=env.library.id, book=env.book, turn=env._turn, max_turns=env.max_turns, done=env._done,
        )

    # -- OpenEnv's Task API (TaskProvider): discovery only, no episode state touched -----------
    def _split_tasks(self, split: str) -> list:
        if split != self.env.split:
            raise SEBenchRequestError(f"unknown split {split!r}: this server serves {self.env.split!r} "
                                      "(se-gym serve openenv --split NAME serves another)")
        return self.suite.tasks

    @staticmethod
    def _spec(task: Any, index: int, split: str) -> dict:
        return {"id": task.id, "index": index, "split": split, "function_name": task.function_name}

    def list_splits(self) -> list[dict]:
        split = self.env.split
        return [{"name": split, "type": split if split in ("train", "validation", "test") else "test"}]

    def num_tasks(self, split: str) -> int:
        return len(self._split_tasks(split))

    def list_tasks(self, split: str) -> list[dict]:
        return [self._spec(t, i, split) for i, t in enumerate(self._split_tasks(split))]

    def get_task(self, split: str, index: int) -> dict:
        tasks = self._split_tasks(split)
        if not 0 <= index < len(tasks):
            raise IndexError(f"index {index} out of range for split {split!r} ({len(tasks)} tasks)")
        return self._spec(tasks[index], index, split)

    def get_task_range(self, split: str, start: Optional[int] = None, stop: Optional[int] = None) -> list[dict]:
        tasks = self._split_tasks(split)
        return [self._spec(tasks[i], i, split) for i in range(*slice(start, stop).indices(len(tasks)))]

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="SEBench-v0", version="0.1.0",
            description="SE-Bench coding questions against an obfuscated NumPy; answers are judged in a sandbox.",
        )

    def close(self) -> None:
        SEBenchEnvironment.live.discard(self._key)
        self.env.close()  # the shared judge stays with the suite


def create_server_app(options: dict | None = None, max_sessions: int = 64, session_timeout: float | None = 600.0, episode: dict | None = None):
    """The FastAPI app: OpenEnv's routes (``/ws``, ``/reset``, ``/step``, ``/state``, ``/schema``,
    ``/health``) for SEBench-v0 with ``options``, plus ``GET /se_gym/sessions``."""
    import functools

    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.types import ConcurrencyConfig

    episode = dict(episode or {})
    suite_opts = dict(options or {})
    for k in Suite.EPISODE_OPTIONS:
        if k in suite_opts:
            episode.setdefault(k, suite_opts.pop(k))
    suite = Suite.get(suite_opts)
    factory = functools.partial(SEBenchEnvironment, suite, **episode)
    app = create_app(factory, SEBenchAction, SEBenchObservation, env_name=ENV_NAME,
                     concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=session_timeout))

    @app.exception_handler(SEBenchRequestError)
    async def bad_request(request, exc: SEBenchRequestError):  # plain HTTP; a session gets the message
        from fastapi.responses import JSONResponse

        return JSONResponse(status_code=400, content={"detail": str(exc)})

    @app.get("/se_gym/sessions", tags=["Health"], summary="open SE-Bench sessions and judge batch sizes")
    def sessions() -> dict:
        t = dict(suite.batcher.totals)
        return {"open": len(SEBenchEnvironment.live), "max": max_sessions, "judged": t["items"], "batches": t["batches"],
                "mean_batch": (t["items"] / t["batches"]) if t["batches"] else 0.0, "max_batch": t["max_batch"]}

    @app.get("/se_gym/library", tags=["Health"], summary="the library and profile this server judges with")
    def library() -> dict:
        from ..library.writer import served_identity

        return {"server": "se-gym", "library": served_identity(suite.library, suite.judge.profile)}

    add_task_routes(app, factory, ENV_NAME)
    from ..prometheus import add_metrics_route

    add_metrics_route(app, suite.judge.metrics)  # GET /metrics: the judge's counters
    app.state.se_gym_suite = suite
    return app


ENV_NAME = "se_gym"  # create_app's env_name: the Task API's routes are /se_gym/splits, /se_gym/tasks, ...


def add_task_routes(app: Any, factory: Any, env_name: str) -> None:
    """OpenEnv's Task API routes (``GET /list_environments``, ``GET /{env_name}/splits``, ``POST
    /{env_name}/tasks | num_tasks | task | task_range``), answered by a short-lived environment's
    TaskProvider methods, with OpenEnv's error semantics (IndexError: 400, a request the env cannot
    serve: 400).  openenv-core releases that register these routes themselves (OpenEnv PR 726; not
    in 0.3.0) keep theirs: a route already there is left alone."""
    from fastapi import HTTPException

    have = {getattr(r, "path", None) for r in app.routes}

    def call(method: str, *args: Any) -> Any:
        env = factory()
        try:
            return getattr(env, method)(*args)
        except IndexError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None
        finally:
            env.close()

    def route(verb: str, path: str, endpoint) -> None:
        if path not in have:
            getattr(app, verb)(path, tags=["Task API"])(endpoint)

    route("get", "/list_environments", lambda: [env_name])
    route("get", f"/{env_name}/splits", lambda: call("list_splits"))

    def tasks(body: Dict[str, Any]) -> dict:
        return {"tasks": call("list_tasks", _field(body, "split")), "env_name": env_name}

    def num_tasks(body: Dict[str, Any]) -> dict:
        return {"num_tasks": call("num_tasks", _field(body, "split"))}

    def task(body: Dict[str, Any]) -> dict:
        return {"task": call("get_task", _field(body, "split"), int(_field(body, "index")))}

    def task_range(body: Dict[str, Any]) -> dict:
        return {"tasks": call("get_task_range", _field(body, "split"), body.get("start"), body.get("stop"))}

    for path, endpoint in (("tasks", tasks), ("num_tasks", num_tasks), ("task", task), ("task_range", task_range)):
        route("post", f"/{env_name}/{path}", endpoint)


def _field(body: dict, key: str) -> Any:
    if key not in body:
        raise SEBenchRequestError(f"the request needs {key!r}")
    return body[key]


# what the ASGI stack raises on a send to a client that is gone: uvicorn's ClientDisconnected,
# starlette's WebSocketDisconnect and (starlette >= 1.0) WebSocketDisconnected
_DISCONNECTS = ("ClientDisconnected", "WebSocketDisconnect", "WebSocketDisconnected")


class QuietDisconnect:
    """ASGI wrapper for the sessions' WebSockets.  A client that leaves (closes, or dies) while its
    step waits for the judge has that step cancelled: openenv's handler reads nothing during a
    step, so it would judge the answer and only then find nobody to reply to.  The sends that
    then fail (openenv's reply, its error replies, its final close, all after the session is
    destroyed) are one debug line, not a traceback per client."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "websocket":
            return await self.app(scope, receive, send)
        left = asyncio.Event()
        inbox: asyncio.Queue = asyncio.Queue(maxsize=4)  # (a client pipelining more is read later)

        async def pump():  # the client's messages, read while the handler is busy
            while True:
                try:
                    msg = await receive()
                except Exception:  # noqa: BLE001 - the handler must not wait for a message forever
                    msg = {"type": "websocket.disconnect", "code": 1006}
                if msg["type"] == "websocket.disconnect":
                    left.set()
                await inbox.put(msg)
                if msg["type"] == "websocket.disconnect":
                    return

        pumping = asyncio.ensure_future(pump())
        token = _CLIENT_LEFT.set(left)  # the handler runs in this task: its steps see it
        try:
            await self.app(scope, inbox.get, send)
        except Exception as exc:
            if type(exc).__name__ in _DISCONNECTS:
                log.debug("a client left before its reply (%s); its session is closed", type(exc).__name__)
                return
            raise
        finally:
            _CLIENT_LEFT.reset(token)
            pumping.cancel()


class LibraryMismatch(SEGymError):
    """The OpenEnv server judges with another library, profile or se-gym than the client expects."""


def check_server_library(base_url: str, library: Any, profile: str = JUDGE_DEFAULTS.profile, timeout_s: float = 10.0) -> dict:
    """The handshake the ``http`` sandbox backend has, for an OpenEnv server: it states its library
    (id, content hash of the sandbox's copy, profile, se-gym version) on ``GET /se_gym/library``,
    and a client that trains on its rewards checks it before the first episode (a ``sebench``
    server rewards what ``strict`` refuses).

    Args:
        base_url: the server's address (``http://host:port``; ``ws://`` is read as ``http://``).
        library: the library the client expects (a Library or a spec: ``"seed:0"``...).
        profile: the judge's profile the client expects.
        timeout_s: how long to wait for the server's answer.

    Returns:
        The server's identity (a dict), when it is the expected one.

    Raises:
        LibraryMismatch: another identity, or none stated (one line naming both)."""
    import json
    import urllib.request

    from ..library import from_spec
    from ..library.writer import identity_text, served_identity

    url = base_url.rstrip("/").replace("ws://", "http://", 1).replace("wss://", "https://", 1) + "/se_gym/library"
    want = served_identity(from_spec(library), profile)
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as r:
            body = json.loads(r.read())
    except (OSError, ValueError) as exc:
        raise LibraryMismatch(f"the OpenEnv server at {base_url} states no library ({type(exc).__name__}: {exc}); "
                              f"this client expects {identity_text(want)}") from None
    got = body.get("library") if isinstance(body, dict) and body.get("server") == "se-gym" else None
    if not isinstance(got, dict) or any(got.get(k) != want[k] for k in ("content", "profile", "se_gym")):
        raise LibraryMismatch(f"the OpenEnv server at {base_url} serves {identity_text(got)}; this client expects {identity_text(want)}")
    return got


class SEBenchClient(EnvClient[SEBenchAction, SEBenchObservation, SEBenchState]):
    """openenv-core's ``EnvClient`` for this server (async; ``.sync()`` for the blocking form).
    :func:`check_server_library` checks that the server judges with the library and profile the
    client expects."""

    def _step_payload(self, action: SEBenchAction) -> Dict[str, Any]:
        if isinstance(action, SEBenchAction):
            return {"answer": action.answer}
        if isinstance(action, str):
            return {"answer": action}
        return dict(action)  # a raw payload goes to the server's validation as is

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[SEBenchObservation]:
        obs = dict(payload.get("observation", {}))
        observation = SEBenchObservation(**obs, reward=payload.get("reward"), done=payload.get("done", False))
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: Dict[str, Any]) -> SEBenchState:
        return SEBenchState(**payload)

    # -- OpenEnv's Task API (plain HTTP beside the session; async here, blocking under .sync()) ----
    async def _task_api(self, path: str, body: Optional[dict] = None) -> Any:
        import httpx

        ws = self._ws_url[: -len("/ws")]  # openenv-core keeps only the session's URL: the HTTP base is beside it
        base = ws.replace("ws://", "http://", 1).replace("wss://", "https://", 1).rstrip("/")
        async with httpx.AsyncClient(timeout=60) as client:
            url = f"{base}/{path}" if path == "list_environments" else f"{base}/{ENV_NAME}/{path}"
            r = await (client.get(url) if body is None else client.post(url, json=body))
        if r.status_code >= 400:
            detail = r.json().get("detail") if r.headers.get("content-type", "").startswith("application/json") else r.text
            raise SEBenchRequestError(f"{path}: HTTP {r.status_code}: {detail}")
        return r.json()

    async def list_splits(self) -> List[str]:
        """The split names the server serves (``GET /se_gym/splits``)."""
        return [s["name"] for s in await self._task_api("splits")]

    async def num_tasks(self, split: str) -> int:
        return int((await self._task_api("num_tasks", {"split": split}))["num_tasks"])

    async def list_tasks(self, split: str) -> List[Dict[str, Any]]:
        """Every task of ``split``: ``{"id", "index", "split", "function_name"}`` (no test case)."""
        return (await self._task_api("tasks", {"split": split}))["tasks"]

    async def get_task(self, split: str, index: int) -> Dict[str, Any]:
        return (await self._task_api("task", {"split": split, "index": index}))["task"]

    async def get_task_range(self, split: str, start: Optional[int] = None, stop: Optional[int] = None) -> List[Dict[str, Any]]:
        """Tasks ``start:stop`` of ``split`` (Python slice bounds); ``reset(split=..., index=...)`` plays one."""
        return (await self._task_api("task_range", {"split": split, "start": start, "stop": stop}))["tasks"]


class HostNetworkDockerProvider(LocalDockerProvider):
    """openenv-core's ``LocalDockerProvider`` for a Docker daemon without a bridge network
    (``dockerd --bridge=none``, as scripts/docker_daemon.sh starts it), where ``docker run -p``
    publishes nothing: the container shares the host's network and its server listens on
    ``127.0.0.1:<port>`` (the image's entrypoint takes ``--host``/``--port``).  For the image
    ``se-gym serve openenv --build-image`` builds::

        env = await SEBenchClient.from_docker_image("se-gym/openenv:latest", provider=HostNetworkDockerProvider())

    ``run_args``: more ``docker run`` flags (``["--cap-add", "SYS_ADMIN"]``); ``server_args``: the
    server's flags (``["--max-turns", "2"]``).  On a daemon with a bridge network openenv-core's own
    provider works as is (``-p <port>:8000``)."""

    def __init__(self, run_args: tuple = (), server_args: tuple = (), ready_timeout_s: float = 300.0):
        super().__init__()
        self.run_args, self.server_args, self.ready_timeout_s = list(run_args), list(server_args), ready_timeout_s

    def start_container(self, image: str, port: Optional[int] = None, env_vars: Optional[Dict[str, str]] = None, **_: Any) -> str:
        import subprocess

        port = port or self._find_available_port()
        self._container_name = self._generate_container_name(image)
        env = [f for k, v in (env_vars or {}).items() for f in ("-e", f"{k}={v}")]
        cmd = ["docker", "run", "-d", "--name", self._container_name, "--network", "host", *env, *self.run_args,
               image, "--host", "127.0.0.1", "--port", str(port), *self.server_args]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"cannot start {image}: {run.stderr.strip() or run.stdout.strip()}")
        self._container_id = run.stdout.strip()
        return f"http://127.0.0.1:{port}"

    def wait_for_ready(self, base_url: str, timeout_s: Optional[float] = None) -> None:
        """/health answers; a container that exits meanwhile fails at once, with its log's tail."""
        import subprocess
        import urllib.request

        end = time.monotonic() + (timeout_s or self.ready_timeout_s)  # a bound for a hung server
        while time.monotonic() < end:
            running = subprocess.run(["docker", "inspect", "-f", "{{.State.Running}}", self._container_id],
                                     capture_output=True, text=True).stdout.strip()
            if running != "true":
                logs = subprocess.run(["docker", "logs", "--tail", "20", self._container_id], capture_output=True, text=True)
                raise RuntimeError(f"the container exited: {(logs.stdout + logs.stderr).strip()[-2000:]}")
            try:
                with urllib.request.urlopen(base_url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"the container at {base_url} did not answer /health within {timeout_s or self.ready_timeout_s:.0f} s")

    def stop_container(self) -> None:
        import subprocess

        if self._container_id is not None:
            subprocess.run(["docker", "rm", "-f", self._container_id], capture_output=True, timeout=120)
            self._container_id = self._container_name = None
