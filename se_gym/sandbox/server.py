"""``se-gym sandbox serve``: SE-Bench's sandbox protocol on top of a local sandbox.

Endpoints (JSON in, JSON out):
- ``POST /run`` ``{"code": str}`` -> ``{"stdout": str, "stderr": str}``; stderr is ``"TLE"`` on a
  timeout, as the official server says it (official port 8111).
- ``POST /run_batch`` ``{"programs": [str], "limits": {...}, "library_modes": [{...} | null]}`` ->
  ``{"results": [ExecResult]}`` (full results, the result channel included, base64;
  ``library_modes``, optional: each program's ``Program.library_mode``, strict's dependence check).
- ``GET /health`` -> ``{"ok": true, "server": "se-gym", "version": str, "library": {...} | null,
  "isolation": {...}}``; ``library`` states the library on the programs' path (its id, profile,
  content hash and se-gym's version, ``se_gym.library.writer.served_identity``): a judge over
  http refuses a server whose library is not its own.
- ``GET /metrics`` -> counters in the Prometheus text format: programs by status, sandbox errors,
  request latency (:class:`se_gym.prometheus.SandboxMetrics`).
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .base import ExecStatus, Limits, Program, Sandbox

MAX_BODY = 64 << 20  # refuse absurd requests instead of reading them into memory


def official_reply(status: ExecStatus, stdout: str, stderr: str) -> dict[str, str]:
    """What the official server answers: a timeout is stderr ``TLE`` and no output."""
    if status is ExecStatus.TIMEOUT:
        return {"stdout": "", "stderr": "TLE"}
    return {"stdout": stdout, "stderr": stderr}


class _Handler(BaseHTTPRequestHandler):
    server: "SandboxServer"
    protocol_version = "HTTP/1.1"  # keep-alive for clients that reuse connections

    def log_message(self, format: str, *args: Any) -> None:  # quiet unless asked
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, code: int, obj: Any, content_type: str = "application/json") -> None:
        body = obj.encode() if isinstance(obj, str) else json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> Any:
        size = int(self.headers.get("Content-Length") or 0)
        if size <= 0 or size > MAX_BODY:
            raise ValueError(f"request body must be 1..{MAX_BODY} bytes of JSON, got {size}")
        return json.loads(self.rfile.read(size))

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.rstrip("/") in ("/health", ""):
            from .._version import __version__

            self._send(200, {"ok": True, "server": "se-gym", "version": __version__, "library": self.server.library,
                             "isolation": self.server.sandbox.isolation()})
        elif self.path == "/metrics":
            from ..prometheus import CONTENT_TYPE

            self._send(200, self.server.metrics.render(), CONTENT_TYPE)
        else:
            self._send(404, {"error": f"no such endpoint: GET {self.path}"})

    def do_POST(self) -> None:  # noqa: N802
        try:
            data = self._body()
            if self.path == "/run":
                code = data.get("code") if isinstance(data, dict) else None
                if not isinstance(code, str):
                    raise ValueError('expected {"code": str}')
                t0 = time.perf_counter()
                r = self.server.sandbox.run([code], self.server.limits)[0]
                self.server.metrics.record([r], time.perf_counter() - t0)
                if r.status is ExecStatus.SANDBOX_ERROR:
                    self._send(503, {"error": f"sandbox error: {r.detail}"})
                    return
                self._send(200, official_reply(r.status, r.stdout, r.stderr))
            elif self.path == "/run_batch":
                programs = data.get("programs") if isinstance(data, dict) else None
                if not isinstance(programs, list) or not all(isinstance(p, str) for p in programs):
                    raise ValueError('expected {"programs": [str, ...], "limits": {...}}')
                limits = Limits.from_json({**self.server.limits.to_json(), **(data.get("limits") or {})})
                modes = data.get("library_modes")
                if modes is not None:  # (each program's Program.library_mode: its library server's mode)
                    if not isinstance(modes, list) or len(modes) != len(programs) or not all(m is None or isinstance(m, dict) for m in modes):
                        raise ValueError('"library_modes" must be a list of objects or nulls, one per program')
                    programs = [Program(p, library_mode=m) if m is not None else p for p, m in zip(programs, modes)]
                t0 = time.perf_counter()
                results = self.server.sandbox.run(programs, limits)
                self.server.metrics.record(results, time.perf_counter() - t0)
                self._send(200, {"results": [r.to_json() for r in results]})
            else:
                self._send(404, {"error": f"no such endpoint: POST {self.path}"})
        except (ValueError, TypeError) as exc:  # JSON errors are ValueErrors too
            self._send(400, {"error": str(exc)})


class SandboxServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, sandbox: Sandbox, host: str = "127.0.0.1", port: int = 8111, limits: Limits | None = None, verbose: bool = False,
                 library: dict | None = None):
        """``library``: the served library's identity (``served_identity``), None when it serves none."""
        super().__init__((host, port), _Handler)
        from ..prometheus import SandboxMetrics

        self.sandbox, self.limits, self.verbose, self.library = sandbox, limits or Limits(), verbose, library
        self.metrics = SandboxMetrics([s.value for s in ExecStatus], ExecStatus.SANDBOX_ERROR.value)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "SandboxServer":
        """Serve in a background thread (tests, notebooks)."""
        self._thread = threading.Thread(target=self.serve_forever, name="se-gym-sandbox-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
