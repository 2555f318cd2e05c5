"""``se-gym serve openenv``: SEBench-v0 behind an environment protocol server."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field, fields

from ..choices import BOOKS, REWARDS, SPLITS, ProfileOption
from ..configs import add_config_arguments, config_from_args
from ..errors import CLIError
from ..sandbox.options import LibraryOption
from ..sandbox.spec import SandboxFlags, SandboxSpec


@dataclass(frozen=True)
class EnvOptions(SandboxFlags, LibraryOption, ProfileOption):
    """SEBench-v0's options as flags; None leaves the env's own default.  The judge's (``--profile``,
    ``--sandbox``, ``--sandbox-option``, ``--library``) are the shared ones, with the env's defaults
    (:mod:`se_gym.judge.options`)."""

    tasks: str | None = field(default=None, metadata={"help": "'builtin[:SEED]' (None: builtin) or 'sebench:PATH'"})
    split: str | None = field(default=None, metadata={"help": "task split (None: single_test)", "choices": SPLITS})
    seed: int | None = field(default=None, metadata={"help": "seed of the built-in suite and minted library (None: 0)"})
    book: str | None = field(default=None, metadata={"help": "closed or open book (None: closed)", "choices": BOOKS})
    reward: str | None = field(default=None, metadata={"help": "reward (None: binary)", "choices": REWARDS})
    ray_address: str | None = field(default=None, metadata={
        "help": "with a cluster sandbox (--sandbox ray): the Ray cluster, HOST:PORT (sets RAY_ADDRESS for this server)"})
    max_turns: int | None = field(default=None, metadata={"help": "answers per episode; >1 gives execution feedback (None: 1)"})
    max_length: int | None = field(default=None, metadata={"help": "longest answer accepted, characters (None: 200000)"})

    def __post_init__(self) -> None:
        from ..registry import RegistryError

        try:
            cluster = SandboxSpec.parse(self.sandbox, self.sandbox_option).load().cluster  # (ray_address is not an old flag here)
        except RegistryError as exc:
            raise CLIError(str(exc)) from None
        if self.ray_address and not cluster:
            raise CLIError("--ray-address is for a cluster sandbox (--sandbox ray)")

    def env_kwargs(self) -> dict:
        """The options given, as ``gym.make`` keyword arguments (the env checks them; the sandbox as
        one spec string, its options in it)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if f.name not in ("ray_address", "sandbox_option") and getattr(self, f.name) not in (None, f.default)}
        if self.sandbox_option:
            out["sandbox"] = str(SandboxSpec.parse(self.sandbox, self.sandbox_option))
        return out


@dataclass(frozen=True)
class OpenEnvServeOptions:
    """The OpenEnv server around the env."""

    host: str = field(default="127.0.0.1", metadata={"help": "address to listen on"})
    port: int = field(default=8000, metadata={"help": "port (8000 is OpenEnv's)"})
    max_sessions: int = field(default=64, metadata={"help": "concurrent sessions allowed"})
    session_timeout: float = field(default=600.0, metadata={"help": "close a session idle this long, seconds (0: never)"})
    build_image: bool = field(default=False, metadata={
        "help": "instead of serving: build the OpenEnv container image (sandbox/openenv, offline, from this checkout) "
                "unless it exists, and print its tag"})
    image_tag: str = field(default="se-gym/openenv:latest", metadata={"help": "with --build-image: also tag it so"})

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise CLIError("--max-sessions must be >= 1")


def add_env_options(p: argparse.ArgumentParser) -> None:
    """SEBench-v0's options as flags (the env's defaults apply to the ones left out)."""
    add_config_arguments(p.add_argument_group("SEBench-v0 options"), EnvOptions, config_flag=False)


def env_options_from(args: argparse.Namespace) -> dict:
    """The ``gym.make`` keyword arguments the command line (and its ``--config``) gives."""
    return config_from_args(EnvOptions, args, also=(OpenEnvServeOptions,)).env_kwargs()


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="serve_protocol", metavar="PROTOCOL")
    oe = sub.add_parser("openenv", help="an OpenEnv environment server (WebSocket sessions; needs the 'openenv' extra)")
    add_config_arguments(oe, OpenEnvServeOptions)
    add_env_options(oe)
    oe.set_defaults(func=_openenv)
    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])


def _openenv(args: argparse.Namespace) -> int:
    o = config_from_args(OpenEnvServeOptions, args, also=(EnvOptions,))
    env = config_from_args(EnvOptions, args, also=(OpenEnvServeOptions,))
    if o.build_image:
        from .openenv_image import ImageError, ensure_openenv_image

        try:
            print(ensure_openenv_image(o.image_tag))
        except (ImageError, RuntimeError) as exc:
            raise CLIError(str(exc)) from None
        return 0
    try:
        from . import openenv as oe
    except ImportError as exc:
        raise CLIError(f"the OpenEnv server needs openenv-core: pip install 'se-gym[openenv]' ({exc})") from None
    from ..envs import EnvConfigError

    if env.ray_address:
        import os

        # the ray sandbox joins RAY_ADDRESS (the server's judges are shared by configuration, not address)
        os.environ["RAY_ADDRESS"] = env.ray_address
    opts = env.env_kwargs()
    try:
        # build the suite (and check the options) before binding the port
        app = oe.create_server_app(opts, max_sessions=o.max_sessions, session_timeout=o.session_timeout or None)
    except (EnvConfigError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    import uvicorn

    print(f"se-gym serve openenv: SEBench-v0 {opts or '(defaults)'} on http://{o.host}:{o.port} "
          f"(WebSocket /ws, up to {o.max_sessions} sessions)", flush=True)
    uvicorn.run(oe.QuietDisconnect(app), host=o.host, port=o.port, log_level="warning", ws_max_size=64 * 1024 * 1024)
    return 0
