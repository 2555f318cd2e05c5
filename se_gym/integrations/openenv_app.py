"""A module-level ASGI ``app`` for OpenEnv's tooling, which starts an environment with
``python -m uvicorn <openenv.yaml's app> --host 0.0.0.0 --port 8000`` (no factory flag):

    SE_GYM_OPENENV='{"max_turns": 2, "book": "open", "max_sessions": 64}' \\
        python -m uvicorn se_gym.integrations.openenv_app:app --port 8000

``SE_GYM_OPENENV`` (JSON, optional) holds SEBench-v0's options plus ``max_sessions`` and
``session_timeout``; ``se-gym serve openenv`` is the same server with flags instead.
"""
from __future__ import annotations

import json
import os

from .openenv import QuietDisconnect, create_server_app


def _options() -> tuple[dict, dict]:
    raw = os.environ.get("SE_GYM_OPENENV", "").strip()
    try:
        opts = json.loads(raw) if raw else {}
    except json.JSONDecodeError as exc:
        raise SystemExit(f"SE_GYM_OPENENV is not JSON ({exc.msg} at {exc.pos}): {raw[:80]!r}") from None
    if not isinstance(opts, dict):
        raise SystemExit(f"SE_GYM_OPENENV must be a JSON object, got {type(opts).__name__}")
    server = {k: opts.pop(k) for k in ("max_sessions", "session_timeout") if k in opts}
    if server.get("session_timeout") == 0:
        server["session_timeout"] = None  # as the CLI's 0: never
    return opts, server


_env_opts, _server_opts = _options()
app = QuietDisconnect(create_server_app(_env_opts, **_server_opts))
