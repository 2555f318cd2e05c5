"""``se-gym sandbox info|serve|run``."""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field

from ..choices import OfficialProfileOption
from ..configs import add_config_arguments, add_deprecated_alias, config_from_args
from ..errors import CLIError
from .options import LibraryOption, LimitOptions
from .spec import SandboxFlags

ISOLATIONS = ("auto", "bwrap", "unshare", "userns", "rlimits")  # (se_gym.sandbox.local.LEVELS, without importing it)


@dataclass(frozen=True)
class SandboxOptions(SandboxFlags, LimitOptions, LibraryOption, OfficialProfileOption):
    """The sandbox every ``se-gym sandbox`` action starts (flags, or a ``--config`` TOML/JSON file): the
    judge's sandbox options (:mod:`se_gym.sandbox.options`: the sandbox, the limits, the library put on
    the path and preloaded, None: none, and the profile it is written for)."""

    ray_address: str | None = field(default=None, metadata={"help": "deprecated: give --sandbox ray,address=HOST:PORT"})
    workers: int | None = field(default=None, metadata={"help": "worker processes (None: CPU count)"})
    isolation: str = field(default="auto", metadata={
        "help": "for a backend that takes isolation= (local, ray): its level (auto: the strongest that works here)", "choices": ISOLATIONS})

    def __post_init__(self) -> None:
        spec = self.check_sandbox_flags(CLIError)
        if spec.load().remote:  # a client of a server has nothing to serve or inspect here
            raise CLIError(f"--sandbox {spec.name} is a client of a sandbox server: inspect or serve the backend that server runs")
        if self.workers is not None and self.workers < 1:
            raise CLIError("--workers must be at least 1")
        if self.isolation != "auto" and not spec.takes("isolation"):
            raise CLIError(f"--isolation is for a backend that takes isolation= (the {spec.name} sandbox does not)")


@dataclass(frozen=True)
class InfoOptions(SandboxOptions):
    json: bool = field(default=False, metadata={"help": "machine-readable output"})


@dataclass(frozen=True)
class ServeOptions(SandboxOptions):
    host: str = field(default="127.0.0.1", metadata={"help": "address to listen on"})
    port: int = field(default=8111, metadata={"help": "port (8111 is the official one)"})
    verbose: bool = field(default=False, metadata={"help": "log every request"})

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.port <= 65535:
            raise CLIError(f"--port must be 0..65535, got {self.port}")


def _action(sub, name: str, cls: type, func, help_text: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help_text, description=help_text)
    add_config_arguments(p, cls)
    add_deprecated_alias(p, "--backend", "--sandbox", "sandbox")
    add_deprecated_alias(p, "--wall", "--wall-s", "wall_s", type=float)
    p.set_defaults(func=func, options_class=cls)
    return p


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sandbox_command", metavar="ACTION")
    _action(sub, "info", InfoOptions, _info, "print the isolation in force and the default limits")
    _action(sub, "serve", ServeOptions, _serve, "serve SE-Bench's POST /run (and POST /run_batch)")
    run = _action(sub, "run", SandboxOptions, _run, "run Python files in the sandbox and print the results as JSON lines")
    run.add_argument("files", nargs="+", help="Python files ('-' for stdin)")
    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])


def _library(o: SandboxOptions):
    """The --library, or None."""
    if o.library is None:
        return None
    from ..library import LibraryError, from_spec

    spec = o.library
    try:  # (a bare seed too, the old spelling)
        return from_spec(int(spec) if spec.lstrip("-").isdigit() else spec)
    except (LibraryError, OSError, ValueError) as exc:
        raise CLIError(f"bad --library {spec!r}: {exc}") from None


def _spec(o: SandboxOptions):
    """The spec the flags give, ``--isolation`` among its options where the backend takes it."""
    spec = o.sandbox_spec
    if spec.takes("isolation") and "isolation" not in spec.options:
        spec = spec.with_options(isolation=o.isolation)
    return spec


def _sandbox(o: SandboxOptions):
    preload = ["numpy"]
    lib = _library(o)
    if lib is not None:
        preload += [lib.package, f"{lib.package}.{lib.linalg}"]
    try:  # (the library as the judge's: a path, or the object where the backend writes it on every node)
        return _spec(o).build(library=lib, profile=o.profile, preload=preload, workers=o.workers)
    except (RuntimeError, ValueError, ImportError) as exc:
        raise CLIError(str(exc).splitlines()[0]) from None


def _limits(o: SandboxOptions):
    from .base import Limits

    try:
        return o.limits() or Limits()
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def _info(args: argparse.Namespace) -> int:
    o = config_from_args(args.options_class, args)
    limits = _limits(o)
    spec = _spec(o)
    report = spec.load().isolation_report(spec.options)  # measured by a probe program, where the backend has one
    with _sandbox(o) as box:
        info = box.isolation()
        probe = box.run(["import os; print(os.getuid())"], limits)[0]
    info["program_uid_seen"] = probe.stdout.strip() or probe.status.value
    info["limits"] = limits.to_json()
    if report is not None:
        info.update(holds=report["holds"], missing=report["missing"], fix=report["fix"], measured=report.get("measured"))
    if o.json:
        print(json.dumps(info, indent=2, default=str))
        return 0
    for key, value in info.items():
        if key not in ("holds", "missing", "fix", "measured"):
            print(f"{key:18} {value}")
    if report is not None:
        for line in report["holds"]:
            print(f"  holds    {line}")
        for line in report["missing"]:
            print(f"  MISSING  {line}")
        if report["fix"]:
            print(f"  fix      {report['fix']}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from .server import SandboxServer

    o = config_from_args(ServeOptions, args)
    limits = _limits(o)
    lib = _library(o)
    if lib is not None:
        from ..library.writer import served_identity

        identity = served_identity(lib, o.profile)  # (what /health states: a judge checks it is its own)
    with _sandbox(o) as box:
        try:
            server = SandboxServer(box, o.host, o.port, limits, verbose=o.verbose, library=identity if lib is not None else None)
        except OSError as exc:
            raise CLIError(f"cannot listen on {o.host}:{o.port}: {exc.strerror or exc}") from None
        served = f"library {lib.id}, profile {o.profile}" if lib is not None else "no library"
        print(f"se-gym sandbox: serving {box.isolation().get('level', box.name)} sandbox on {server.url} "
              f"({served}; POST /run, POST /run_batch, GET /health, GET /metrics); Ctrl-C to stop", file=sys.stderr, flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0


def _run(args: argparse.Namespace) -> int:
    o = config_from_args(args.options_class, args)
    programs = []
    for path in args.files:
        if path == "-":
            programs.append(sys.stdin.read())
            continue
        if not os.path.isfile(path):
            raise CLIError(f"no such file: {path}")
        with open(path, encoding="utf-8") as f:
            programs.append(f.read())
    limits = _limits(o)
    with _sandbox(o) as box:
        results = box.run(programs, limits)
    for path, r in zip(args.files, results):
        print(json.dumps({"file": path, **r.to_json()}))
    return 0 if all(r.ok for r in results) else 1
