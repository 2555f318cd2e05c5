"""``se-gym sandbox info|serve|run``."""
from __future__ import annotations

from .. import choices

import argparse
import json
import os
import sys

from ..errors import CLIError


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sandbox_command", metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--backend", default="local", choices=["local", "docker", "ray"],
                        help="backend (default: local; ray: every CPU node of a Ray cluster)")
    common.add_argument("--ray-address", default=None, help="with --backend ray: the cluster, HOST:PORT (default: $RAY_ADDRESS, else a local one)")
    common.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    common.add_argument("--library", default=None, help="library to put on the path and preload: a seed, 'official:PATH' or a spec")
    common.add_argument("--profile", default="sebench", choices=choices.PROFILES, help="library profile (default: sebench)")
    common.add_argument("--isolation", default="auto", choices=["auto", "bwrap", "unshare", "userns", "rlimits"],
                        help="local backend: isolation level (default auto: the strongest that works here)")
    common.add_argument("--wall", type=float, default=None, help="wall-clock limit per program, seconds (default 3)")

    info = sub.add_parser("info", parents=[common], help="print the isolation in force and the default limits")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(func=_info)

    serve = sub.add_parser("serve", parents=[common], help="serve SE-Bench's POST /run (and POST /run_batch)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8111, help="port (default 8111, the official one)")
    serve.add_argument("--verbose", action="store_true", help="log every request")
    serve.set_defaults(func=_serve)

    run = sub.add_parser("run", parents=[common], help="run Python files in the sandbox and print the results as JSON lines")
    run.add_argument("files", nargs="+", help="Python files ('-' for stdin)")
    run.set_defaults(func=_run)
    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])


def _library(args: argparse.Namespace):
    """The --library, or None."""
    if args.library is None:
        return None
    from ..library import LibraryError, from_spec

    spec = args.library
    try:
        return from_spec(int(spec) if spec.lstrip("-").isdigit() else spec)
    except (LibraryError, OSError, ValueError) as exc:
        raise CLIError(f"bad --library {spec!r}: {exc}") from None


def _sandbox(args: argparse.Namespace):
    from . import make_sandbox

    pythonpath: list[str] = []
    preload = ["numpy"]
    ray_options: dict = {}
    lib = _library(args)
    if lib is not None:
        preload += [lib.package, f"{lib.package}.{lib.linalg}"]
        if args.backend == "ray":  # every node writes its own copy (and must match ours)
            ray_options = {"library": lib, "profile": args.profile}
        else:
            pythonpath.append(str(lib.materialize(args.profile, docs=False)))  # as the judge's (se_gym.judge)
    if args.workers is not None and args.workers < 1:
        raise CLIError("--workers must be at least 1")
    if args.ray_address and args.backend != "ray":
        raise CLIError("--ray-address is for --backend ray")
    try:
        extra = {"isolation": args.isolation} if args.backend in ("local", "ray") else {}
        if args.backend == "ray":
            extra.update(ray_options, address=args.ray_address)
        return make_sandbox(args.backend, pythonpath=pythonpath, preload=preload, workers=args.workers, **extra)
    except (RuntimeError, ValueError, ImportError) as exc:
        raise CLIError(str(exc).splitlines()[0]) from None


def _limits(args: argparse.Namespace):
    from .base import Limits

    try:
        return Limits() if args.wall is None else Limits(wall_s=args.wall, cpu_s=args.wall)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def _info(args: argparse.Namespace) -> int:
    limits = _limits(args)
    report = None
    if args.backend == "local":
        from .local import isolation_report

        report = isolation_report(args.isolation)  # measured by a probe program (see its doc)
    with _sandbox(args) as box:
        info = box.isolation()
        probe = box.run(["import os; print(os.getuid())"], limits)[0]
    info["program_uid_seen"] = probe.stdout.strip() or probe.status.value
    info["limits"] = limits.to_json()
    if report is not None:
        info.update(holds=report["holds"], missing=report["missing"], fix=report["fix"], measured=report.get("measured"))
    if args.json:
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

    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be 0..65535, got {args.port}")
    limits = _limits(args)
    lib = _library(args)
    if lib is not None:
        from ..library.writer import served_identity

        identity = served_identity(lib, args.profile)  # (what /health states: a judge checks it is its own)
    with _sandbox(args) as box:
        try:
            server = SandboxServer(box, args.host, args.port, limits, verbose=args.verbose, library=identity if lib is not None else None)
        except OSError as exc:
            raise CLIError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
        served = f"library {lib.id}, profile {args.profile}" if lib is not None else "no library"
        print(f"se-gym sandbox: serving {box.isolation()['level'] if box.name == 'local' else box.name} sandbox on {server.url} "
              f"({served}; POST /run, POST /run_batch, GET /health, GET /metrics); Ctrl-C to stop", file=sys.stderr, flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0


def _run(args: argparse.Namespace) -> int:
    programs = []
    for path in args.files:
        if path == "-":
            programs.append(sys.stdin.read())
            continue
        if not os.path.isfile(path):
            raise CLIError(f"no such file: {path}")
        with open(path, encoding="utf-8") as f:
            programs.append(f.read())
    limits = _limits(args)
    with _sandbox(args) as box:
        results = box.run(programs, limits)
    for path, r in zip(args.files, results):
        print(json.dumps({"file": path, **r.to_json()}))
    return 0 if all(r.ok for r in results) else 1
