"""``check_sandbox``: does a sandbox backend keep the contract of :mod:`se_gym.sandbox.base`?

The checks run real programs through the backend and, where it can import a library, answers
through a real :class:`~se_gym.judge.Judge` over it:

- ``isolation``: ``name`` is text and ``isolation()`` a dict;
- ``declarations``: what the class declares for its callers (``library_as``, ``channel``, ``warmup``,
  ``pooled_start``, ``remote``, ``cluster``, ``required_options``, ``requires``) is of the kinds a judge
  reads, agrees with the box (``has_channel`` is the declared ``channel``), and its constructor takes
  what the declarations promise a judge will pass (``warmup=``, ``ready=``, ``library=``...);
- ``reference``: a program that prints runs ``ok`` with exit code 0 and its output, a batch comes
  back in order, an empty batch gives no results;
- ``channel``: what a program writes to fd 3 comes back as ``channel`` exactly, and ``b""`` when it
  writes nothing, where ``has_channel`` is True; ``None`` where it is False.  A backend that leaves
  ``has_channel`` at its default (True) but never carries fd 3 fails here (and its judge would score
  every answer an infrastructure failure);
- ``wrong``: an uncaught exception and ``sys.exit(3)`` are ``error`` with their exit code;
- ``crash``: a program that kills itself (``os.abort()``) is ``error``: the program's own doing is its
  answer's fault, never ``sandbox_error``, which would leave a crashing answer unscored (retried,
  then left out of accuracy and advantages: a policy could learn to crash to dodge its zero).
  A backend that reports no exit status (the official ``/run`` protocol: ``exit_code`` None on a
  program that ran ok) is held to what it can report: a traceback is ``error``, and nothing the
  program does is ``sandbox_error``;
- ``timeout``: a program that sleeps, and one that spins, past ``wall_s`` are ``timeout``, and
  ``run`` returns within ``wall_s + slack_s`` seconds;
- ``judge: reference``, ``judge: wrong``, ``judge: crash``, ``judge: timeout``: through a Judge on the
  box, a right answer passes and the others score 0 without being called infrastructure failures;
- ``infrastructure`` (last): the box closed under a running program answers it ``sandbox_error``
  (or, where a close lets work in flight finish, the program's own result): infrastructure going
  away is never a wrong answer or a timeout.

Given a Sandbox *object*, the checker runs what needs no more (the judge's checks when ``library=``
names the library its programs import) and leaves the box open.  Given a *backend* (a registered
name, ``module:Class``, a Sandbox subclass or any callable that builds one from
``pythonpath=``, ``preload=``, ``workers=`` and the ``options``), it builds the box on a library of its
own, runs every check and closes it.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Mapping

from ..sandbox.base import ExecResult, ExecStatus, Limits, Sandbox
from .report import Checks, Report, require

PROBE = b"se-gym conformance \x00\xff probe"


def _name(obj: Any) -> str:
    """How messages name what is checked: a backend's name, a box's name, or a factory's."""
    if isinstance(obj, str):
        return repr(obj)
    if isinstance(obj, Sandbox):
        return repr(obj.name)
    return getattr(obj, "__qualname__", type(obj).__qualname__)


def _build(backend: Any, library: Any, profile: str, workers: int | None, options: Mapping[str, Any]) -> Sandbox:
    """The box for ``backend``, its programs able to import ``library``: a spec or a Sandbox class is
    given what its class declares (as a judge gives it); any other factory the path and preloads."""
    from ..judge.core import sandbox_preload, sandbox_warmup
    from ..sandbox.spec import SandboxSpec, build_sandbox

    given = {"library": library, "profile": profile, "preload": sandbox_preload(library), "workers": workers,
             "warmup": sandbox_warmup(library, profile)}
    if isinstance(backend, str):
        box = SandboxSpec.parse(backend, options).build(**given)
    elif isinstance(backend, type) and issubclass(backend, Sandbox):
        box = build_sandbox(backend, options, **given)
    else:
        kwargs: dict[str, Any] = {"workers": workers, **options}
        if not getattr(backend, "remote", False):  # a client of a server imports what the server has
            kwargs.setdefault("pythonpath", [str(library.materialize(profile, docs=False))])
            kwargs.setdefault("preload", sandbox_preload(library))
        box = backend(**kwargs)
    require(isinstance(box, Sandbox), f"the factory built {type(box).__name__}, not a se_gym.sandbox.Sandbox")
    return box


def _declarations(box: Sandbox) -> str:
    """The class's declarations (se_gym.sandbox.base.Sandbox) are of the kinds a judge reads, and its
    constructor takes what they promise a judge will give it."""
    from ..sandbox.spec import constructor_options

    cls = type(box)
    require(cls.library_as in ("path", "object", None), f"library_as must be 'path', 'object' or None, got {cls.library_as!r}")
    require(cls.channel in (True, False, None), f"channel must be True, False or None, got {cls.channel!r}")
    require(cls.pooled_start in (None, "thread", "launch"), f"pooled_start must be None, 'thread' or 'launch', got {cls.pooled_start!r}")
    for name in ("required_options", "requires"):
        value = getattr(cls, name)
        require(hasattr(value, "items") and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()),
                f"{name} must map names to what they are, got {value!r}")
    # (a class that words has_channel itself and declares no channel keeps the older contract: judges ask it)
    declared = any("channel" in vars(k) for k in cls.__mro__ if k is not Sandbox) or cls.has_channel is Sandbox.has_channel
    if cls.channel is not None and declared:
        require(box.has_channel == cls.channel, f"the class declares channel = {cls.channel} but has_channel is {box.has_channel}: "
                "a judge that trusts the declaration before the box starts picks the wrong harness")
    require(not cls.remote or cls.library_as is None, "remote = True (a server's client) but library_as is not None: the server has "
            "the library; a judge gives a remote backend none")
    takes = constructor_options(cls)
    promised = {"warmup": cls.warmup, "ready": cls.pooled_start == "launch", "library": cls.library_as == "object",
                "profile": cls.library_as == "object", "address": cls.cluster, **{k: True for k in cls.required_options}}
    if takes is not None:
        missing = [k for k, given in promised.items() if given and k not in takes]
        require(not missing, f"its constructor takes no {', '.join(missing)}, which its declarations promise a judge will pass")
    return ", ".join(f"{k}={getattr(cls, k)!r}" for k in ("library_as", "channel", "warmup", "pooled_start", "remote", "cluster"))


def _one(box: Sandbox, program: str, limits: Limits) -> ExecResult:
    results = box.run([program], limits)
    require(isinstance(results, list) and len(results) == 1, f"run() of one program returned {results!r}, not a list of one ExecResult")
    require(isinstance(results[0], ExecResult), f"run() returned a {type(results[0]).__name__}, not an ExecResult")
    return results[0]


def _said(r: ExecResult) -> str:
    tail = (r.stderr or r.detail or "").strip().splitlines()[-1:] or [""]
    return f"status {r.status.value}, exit code {r.exit_code}, signal {r.signal}" + (f": {tail[0][:160]}" if tail[0] else "")


def check_sandbox(box_or_factory: Any, *, library: Any = None, profile: str = "sebench", options: Mapping[str, Any] | None = None,
                  workers: int | None = 2, wall_s: float = 1.0, slack_s: float = 10.0, judge: bool = True,
                  raises: bool = True) -> Report:
    """Check a sandbox backend against the contract (see the module docstring for each check).

    Args:
        box_or_factory: a :class:`~se_gym.sandbox.Sandbox` object (checked as it is and left open), or
            a backend to build: a registered name (``"local"``), ``"module:Class"`` / ``"file.py:Class"``,
            a Sandbox subclass, or a callable taking ``pythonpath=``, ``preload=``, ``workers=`` and the
            ``options`` (built on the checker's library, closed at the end).
        library: the library programs import (a :class:`~se_gym.library.Library` or a spec such as
            ``"seed:0"``).  For a backend to build: None is ``mint(0)``; a remote backend (``remote =
            True``, e.g. ``http``) must serve this very library.  For a box: None skips the judge's
            checks (the checker cannot know what its programs import).
        profile: the judge's profile for the judge's checks (``sebench``: every backend serves it).
        options: the backend's own constructor options (``{"url": ...}`` for ``http``).
        workers: worker processes for a backend the checker builds.
        wall_s: the wall and CPU limit the timeout check sets.
        slack_s: how long past ``wall_s`` ``run`` may take to return a timed-out program.
        judge: also judge answers through the box.
        raises: raise :class:`~se_gym.testing.ConformanceError` on the first failed check (after
            running them all); False returns the report with the failures in it.

    Returns:
        The :class:`~se_gym.testing.Report`.

    Raises:
        ConformanceError: a check failed (with ``raises``).
    """
    from ..library import from_spec

    checks = Checks("sandbox", _name(box_or_factory))
    owned = not isinstance(box_or_factory, Sandbox)
    lib = from_spec(library if library is not None else 0) if (owned or library is not None) else None
    box: Sandbox | None = None if owned else box_or_factory

    def build() -> None:
        nonlocal box
        box = _build(box_or_factory, lib, profile, workers, dict(options or {}))

    if owned and not checks.run("build", build):
        return checks.finish(raises)
    assert box is not None
    try:
        _contract_checks(checks, box, Limits(wall_s=wall_s, cpu_s=wall_s), slack_s)
        if not judge:
            checks.skip("judge", "judge=False")
        elif lib is None:
            checks.skip("judge", "give library= (the library this box's programs import) to judge answers through it")
        else:
            _judge_checks(checks, box, lib, profile)
        if owned:
            checks.run("infrastructure", lambda: _closed_under_a_program(box, slack_s), needs=("reference",))
        else:
            checks.skip("infrastructure", "closes the box under a running program: give the backend (a factory), not a box")
    finally:
        if owned:
            box.close()
    return checks.finish(raises)


def _contract_checks(checks: Checks, box: Sandbox, limits: Limits, slack_s: float) -> None:
    generous = Limits(wall_s=max(10.0, limits.wall_s), cpu_s=max(10.0, limits.cpu_s))
    exits = {"reported": True}  # False: the backend reports no exit status (the official /run protocol)

    def isolation() -> None:
        require(isinstance(box.name, str) and box.name, f"name must be a non-empty string, got {box.name!r}")
        info = box.isolation()
        require(isinstance(info, dict), f"isolation() must return a dict, got {type(info).__name__}")

    def reference() -> None:
        r = _one(box, "print('hello from the sandbox')", generous)
        require(r.status is ExecStatus.OK and r.exit_code in (0, None), f"a program that prints ran with {_said(r)}")
        exits["reported"] = r.exit_code is not None
        require(r.stdout == "hello from the sandbox\n", f"stdout {r.stdout!r}, expected 'hello from the sandbox\\n'")
        require(isinstance(r.backend, str) and isinstance(r.wall_s, (int, float)), "backend must be a string and wall_s a number")
        batch = box.run([f"print({i})" for i in range(3)], generous)
        require([x.stdout for x in batch] == ["0\n", "1\n", "2\n"], f"a batch of 3 came back as {[x.stdout for x in batch]!r}, "
                "expected their outputs in input order")
        require(box.run([], generous) == [], "an empty batch must give an empty list")

    def channel() -> None:
        wrote = _one(box, f"import os\nos.write(3, {PROBE!r})\nprint('done')", generous)
        silent = _one(box, "print('no channel record')", generous)
        if box.has_channel:
            require(wrote.status is ExecStatus.OK, f"has_channel is True, but a program writing to fd 3 ran with {_said(wrote)} "
                    "(a backend without the result channel must say so: has_channel returning False)")
            require(wrote.channel == PROBE, f"has_channel is True, but what the program wrote to fd 3 came back as {wrote.channel!r}, "
                    f"not {PROBE!r} (a backend without the result channel must say so: has_channel returning False)")
            require(silent.channel == b"", f"has_channel is True: a program that writes nothing to fd 3 must give channel b'', got {silent.channel!r}")
        else:
            require(wrote.channel is None and silent.channel is None, "has_channel is False: every result's channel must be None, "
                    f"got {wrote.channel!r} and {silent.channel!r}")
        return f"has_channel={box.has_channel}"

    def wrong() -> None:
        raised = _one(box, "raise ValueError('a wrong answer')", generous)
        require(raised.status is ExecStatus.ERROR, f"an uncaught exception ran with {_said(raised)}; expected status error")
        require(raised.exit_code != 0 and "ValueError" in raised.stderr,
                f"an uncaught exception: expected a non-zero exit code and its traceback on stderr, got {_said(raised)}")
        exited = _one(box, "import sys\nsys.exit(3)", generous)
        require(exited.status is not ExecStatus.SANDBOX_ERROR, f"sys.exit(3) was reported sandbox_error ({exited.detail})")
        if not exits["reported"]:
            return "no exit status reported (exit_code None): only an exception's traceback can say error"
        require(exited.status is ExecStatus.ERROR and exited.exit_code == 3, f"sys.exit(3) ran with {_said(exited)}; expected error, exit code 3")

    def crash() -> None:
        r = _one(box, "import os\nos.abort()", generous)
        require(r.status is not ExecStatus.SANDBOX_ERROR, "a program that crashed itself (os.abort()) was reported sandbox_error: the "
                "program's own crash is its answer's fault (status error); an infrastructure failure would leave it unscored")
        if not exits["reported"]:
            return f"no exit status reported: os.abort() ran with status {r.status.value}"
        require(r.status is ExecStatus.ERROR, f"os.abort() ran with {_said(r)}; expected status error")

    def timeout() -> None:
        longer = limits.wall_s + slack_s + 2  # past the bound: a box that ignores the limit returns late, and ok
        for what, program in (("sleeps", f"import time\ntime.sleep({longer})\nprint('woke')"),
                              ("spins", f"import time\nend = time.monotonic() + {longer}\nwhile time.monotonic() < end:\n    pass\nprint('done')")):
            t0 = time.monotonic()
            r = _one(box, program, limits)
            took = time.monotonic() - t0
            require(r.status is ExecStatus.TIMEOUT, f"a program that {what} {longer:.0f} s under wall_s={limits.wall_s} ran with {_said(r)} "
                    f"after {took:.1f} s; expected status timeout")
            require(took <= limits.wall_s + slack_s, f"a program that {what} past wall_s={limits.wall_s} came back after {took:.1f} s "
                    f"(more than wall_s + {slack_s} s)")

    checks.run("isolation", isolation)
    checks.run("declarations", lambda: _declarations(box))
    checks.run("reference", reference)
    for name, fn in (("channel", channel), ("wrong", wrong), ("crash", crash), ("timeout", timeout)):
        checks.run(name, fn, needs=("reference",))


def _judge_checks(checks: Checks, box: Sandbox, library: Any, profile: str) -> None:
    from ..judge.core import Judge

    pkg, absf, sumf = library.package, library.qualified("abs"), library.qualified("sum")
    cases = [{"input": "x=[-1, 2]", "output": "[1, 2]"}, {"input": "x=[3, -4, 0]", "output": "[3, 4, 0]"}]
    answers = {
        "reference": f"```python\nimport {pkg}\ndef solve(x):\n    return {absf}(x)\n```",
        "wrong": f"```python\nimport {pkg}\ndef solve(x):\n    return {sumf}(x)\n```",
        "crash": f"```python\nimport os\nimport {pkg}\ndef solve(x):\n    os.abort()\n    return {absf}(x)\n```",
        "timeout": f"```python\nimport {pkg}\ndef solve(x):\n    while True:\n        pass\n    return {absf}(x)\n```",
    }
    verdicts: dict[str, Any] = {}

    def judged(name: str):
        if name not in verdicts:  # the three quick answers in one batch; the one that never returns alone
            names = [name] if name == "timeout" else [n for n in answers if n != "timeout"]
            with Judge(library, profile=profile, sandbox=box) as j:  # (a borrowed box: the judge leaves it open)
                verdicts.update(zip(names, j.judge_many([(answers[n], cases) for n in names])))
        return verdicts[name]

    def reference() -> None:
        v = judged("reference")
        require(v.reward == 1.0, f"a right answer was judged {v.status.value} ({v.detail})")

    def scored(name: str, what: str):
        def check() -> None:
            v = judged(name)
            require(not v.infrastructure, f"{what} was judged an infrastructure failure ({v.detail}): the box blamed itself for the answer")
            require(v.reward == 0.0, f"{what} was judged {v.status.value} with reward {v.reward}")
            return v.status.value
        return check

    checks.run("judge: reference", reference, needs=("reference",))
    checks.run("judge: wrong", scored("wrong", "a wrong answer"), needs=("reference",))
    checks.run("judge: crash", scored("crash", "an answer that crashes itself"), needs=("reference",))
    # (after the box was seen to stop a program at its limit: a box that does not would never return here)
    checks.run("judge: timeout", scored("timeout", "an answer that never returns"), needs=("timeout",))


def _closed_under_a_program(box: Sandbox, slack_s: float) -> str:
    """Close ``box`` while it runs a program; the program's result must be ``sandbox_error`` (or its own)."""
    sleep = 2.0  # under the official server's own 3 s (its /run takes no limits)
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["results"] = box.run([f"import time\ntime.sleep({sleep})\nprint('finished')"], Limits(wall_s=sleep + 10, cpu_s=5))
        except Exception as exc:  # noqa: BLE001 - reported below
            out["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    time.sleep(0.7)  # the program is running
    box.close()
    worker.join(sleep + slack_s + 10)
    require(not worker.is_alive(), f"run() had not returned {sleep + slack_s + 10:.0f} s after the box was closed under it")
    if "error" in out:
        exc = out["error"]
        return f"closed under a program, run() raised {type(exc).__name__}: {exc}"
    results = out["results"]
    require(isinstance(results, list) and len(results) == 1, f"run() returned {results!r}")
    r = results[0]
    if r.status is ExecStatus.OK:
        require(r.stdout == "finished\n", f"the program ran ok but printed {r.stdout!r}")
        return "a close lets the program in flight finish"
    require(r.status is ExecStatus.SANDBOX_ERROR, f"closed under a running program, the box reported {_said(r)}: infrastructure going "
            "away must be sandbox_error (not the answer's fault), never a wrong answer or a timeout")
    return f"sandbox_error: {r.detail}"

__all__ = ["check_sandbox"]
