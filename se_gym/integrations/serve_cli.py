"""``se-gym serve openenv``: SEBench-v0 behind an environment protocol server."""
from __future__ import annotations

import argparse

from ..errors import CLIError


def add_env_options(p: argparse.ArgumentParser) -> None:
    """SEBench-v0's options as flags (the env's defaults apply to the ones left out)."""
    g = p.add_argument_group("SEBench-v0 options")
    g.add_argument("--tasks", default=None, help="'builtin[:SEED]' (default) or 'sebench:PATH'")
    g.add_argument("--split", default=None, help="single_test (default), train, multiple_test")
    g.add_argument("--seed", type=int, default=None, help="seed of the built-in suite and minted library (default 0)")
    g.add_argument("--library", default=None, help="'seed:N' or 'official:PATH/api_doc.jsonl'")
    g.add_argument("--book", default=None, choices=["closed", "open"], help="closed (default) or open book")
    g.add_argument("--profile", default=None, choices=["strict", "sebench"], help="judge profile (default strict)")
    g.add_argument("--reward", default=None, choices=["binary", "fraction"], help="reward (default binary)")
    g.add_argument("--sandbox", default=None, choices=["local", "docker", "ray"],
                   help="sandbox backend (default local; ray: every CPU node of the cluster at --ray-address or $RAY_ADDRESS)")
    g.add_argument("--ray-address", default=None, help="with --sandbox ray: the Ray cluster, HOST:PORT (sets RAY_ADDRESS for this server)")
    g.add_argument("--max-turns", type=int, default=None, help="answers per episode; >1 gives execution feedback (default 1)")
    g.add_argument("--max-length", type=int, default=None, help="longest answer accepted, characters (default 200000)")


def env_options_from(args: argparse.Namespace) -> dict:
    keys = ("tasks", "split", "seed", "library", "book", "profile", "reward", "sandbox", "max_turns", "max_length")
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="serve_protocol", metavar="PROTOCOL")
    oe = sub.add_parser("openenv", help="an OpenEnv environment server (WebSocket sessions; needs the 'openenv' extra)")
    oe.add_argument("--host", default="127.0.0.1")
    oe.add_argument("--port", type=int, default=8000, help="port (default 8000, OpenEnv's)")
    oe.add_argument("--max-sessions", type=int, default=64, help="concurrent sessions allowed (default 64)")
    oe.add_argument("--session-timeout", type=float, default=600.0, help="close a session idle this long, seconds (default 600; 0: never)")
    oe.add_argument("--build-image", action="store_true",
                    help="instead of serving: build the OpenEnv container image (sandbox/openenv, offline, from this checkout) "
                         "unless it exists, and print its tag")
    oe.add_argument("--image-tag", default="se-gym/openenv:latest", help="with --build-image: also tag it so (default se-gym/openenv:latest)")
    add_env_options(oe)
    oe.set_defaults(func=_openenv)
    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])


def _openenv(args: argparse.Namespace) -> int:
    if args.build_image:
        from .openenv_image import ImageError, ensure_openenv_image

        try:
            print(ensure_openenv_image(args.image_tag))
        except (ImageError, RuntimeError) as exc:
            raise CLIError(str(exc)) from None
        return 0
    try:
        from . import openenv as oe
    except ImportError as exc:
        raise CLIError(f"the OpenEnv server needs openenv-core: pip install 'se-gym[openenv]' ({exc})") from None
    from ..envs import EnvConfigError

    if args.max_sessions < 1:
        raise CLIError("--max-sessions must be >= 1")
    if args.ray_address:
        if args.sandbox != "ray":
            raise CLIError("--ray-address is for --sandbox ray")
        import os

        # the ray sandbox joins RAY_ADDRESS (the server's judges are shared by configuration, not address)
        os.environ["RAY_ADDRESS"] = args.ray_address
    opts = env_options_from(args)
    try:
        # build the suite (and check the options) before binding the port
        app = oe.create_server_app(opts, max_sessions=args.max_sessions, session_timeout=args.session_timeout or None)
    except (EnvConfigError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    import uvicorn

    print(f"se-gym serve openenv: SEBench-v0 {opts or '(defaults)'} on http://{args.host}:{args.port} "
          f"(WebSocket /ws, up to {args.max_sessions} sessions)", flush=True)
    uvicorn.run(oe.QuietDisconnect(app), host=args.host, port=args.port, log_level="warning", ws_max_size=64 * 1024 * 1024)
    return 0
