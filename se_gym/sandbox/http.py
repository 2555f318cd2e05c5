"""The ``http`` backend: SE-Bench's sandbox protocol, or the batch endpoint of a se-gym server.

Against the official server (``POST /run {"code"} -> {"stdout", "stderr"}``) there is no exit
status and no result channel: the status is read off stderr (``TLE`` -> TIMEOUT, a traceback ->
ERROR or MEMORY) and ``channel`` is None.  When the server is ``se-gym sandbox serve`` (its
``/health`` says so), batches go to ``/run_batch`` and come back as full results, channel included.
"""
from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

from .base import ExecResult, ExecStatus, Limits, Sandbox, check_programs, sandbox_error


def status_from_official(stdout: str, stderr: str) -> ExecStatus:
    """Best reading of the official reply, which has no exit status."""
    err = stderr.strip()
    if err == "TLE":
        return ExecStatus.TIMEOUT
    if "Traceback (most recent call last)" in stderr:
        last = err.splitlines()[-1] if err else ""
        return ExecStatus.MEMORY if last.startswith("MemoryError") or "ArrayMemoryError" in last else ExecStatus.ERROR
    return ExecStatus.OK


class HttpSandbox(Sandbox):
    """Talks to a sandbox server.  ``workers`` requests in flight at once; each request gets
    ``timeout`` seconds (default: the program's wall limit plus ``slack``) and ``retries`` more tries
    on connection errors and 5xx answers before the program is reported as SANDBOX_ERROR."""

    backend = "http"
    # declarations (se_gym.sandbox.base.Sandbox): a server's client (the server has the library), whose
    # channel depends on the server (se-gym's /run_batch has one, the official /run none)
    remote = True
    library_as = None
    channel = None
    required_options = {"url": "the server, http://HOST:PORT (sandbox='http://HOST:PORT', or start one with se-gym sandbox serve)"}

    def isolation_line(self) -> str:
        """The server's isolation, as one line."""
        info = self.isolation()
        return f"sandbox http at {info.get('url')}: isolation is the server's ({info.get('protocol')})"

    def __init__(
        self,
        url: str = "http://127.0.0.1:8111",
        workers: int | None = None,
        timeout: float | None = None,
        retries: int = 2,
        slack: float = 10.0,
        batch: str | bool = "auto",
        batch_size: int = 64,
    ):
        super().__init__()
        parsed = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.name = "http"
        self.url = f"{parsed.scheme}://{parsed.netloc}"
        self._parsed = parsed
        self.workers = max(1, int(workers or 8))
        self.timeout, self.retries, self.slack = timeout, max(0, int(retries)), slack
        self.batch_size = max(1, int(batch_size))
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="se-gym-http")
        self._server_info: dict[str, Any] | None = None
        self._auto = batch == "auto"
        if batch == "auto":
            self._server_info = self._probe()
            self.batch = bool(self._server_info and self._server_info.get("server") == "se-gym")
        else:
            self.batch = bool(batch)

    def server_info(self) -> dict[str, Any] | None:
        """The server's ``GET /health`` reply: se-gym's states the library it serves; ``{}`` from a
        server that answers otherwise (the official one); None while it does not answer."""
        if self._server_info is None:
            self._server_info = self._probe()
            if self._auto and self._server_info and self._server_info.get("server") == "se-gym":
                self.batch = True  # (it did not answer when we started)
        return self._server_info

    @property
    def has_channel(self) -> bool:
        return self.batch  # only se-gym's /run_batch returns the channel

    @property
    def library_modes(self) -> bool:  # (se-gym's /run_batch hands them to its workers)
        return self.batch

    # -- transport -----------------------------------------------------------------------------
    def _request(self, method: str, path: str, body: Any, timeout: float) -> tuple[int, Any]:
        cls = http.client.HTTPSConnection if self._parsed.scheme == "https" else http.client.HTTPConnection
        conn = cls(self._parsed.hostname, self._parsed.port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {"Content-Type": "application/json"} if data is not None else {}
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            try:
                return resp.status, json.loads(raw) if raw else None
            except ValueError:
                return resp.status, {"error": raw[:200].decode(errors="replace")}
        finally:
            conn.close()

    def _call(self, path: str, body: Any, timeout: float) -> tuple[Any, str]:
        """POST with retries; returns (json, "") or (None, why it failed)."""
        why = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(2.0, 0.1 * 2**attempt))
            try:
                code, data = self._request("POST", path, body, timeout)
            except (OSError, http.client.HTTPException) as exc:
                why = f"{type(exc).__name__}: {exc}"
                continue
            if code == 200 and isinstance(data, dict):
                return data, ""
            why = f"HTTP {code}: {(data or {}).get('error', '') if isinstance(data, dict) else data}"
            if 400 <= code < 500:
                break  # our request is wrong: retrying will not help
        return None, f"{self.url}{path}: {why}"

    def _probe(self) -> dict[str, Any] | None:
        try:
            code, data = self._request("GET", "/health", None, 5.0)
        except (OSError, http.client.HTTPException):
            return None  # no answer
        return data if code == 200 and isinstance(data, dict) else {}  # ({}: a server, not se-gym's)

    # -- the contract ----------------------------------------------------------------------------
    def _timeout(self, limits: Limits, n: int = 1) -> float:
        return self.timeout if self.timeout is not None else limits.wall_s * max(1, n) + self.slack

    def _run_official(self, code: str, limits: Limits) -> ExecResult:
        start = time.monotonic()
        data, why = self._call("/run", {"code": code}, self._timeout(limits))
        wall = time.monotonic() - start
        if data is None:
            return sandbox_error(self.backend, why, self.url, wall, channel=False)
        stdout, stderr = str(data.get("stdout", "")), str(data.get("stderr", ""))
        status = status_from_official(stdout, stderr)
        return ExecResult(status, None, None, stdout, stderr, None, wall, None, False, self.backend, self.url)

    def _run_batch(self, programs: list[str], limits: Limits) -> list[ExecResult]:
        # the server runs a batch across its workers; allow for them running it one by one
        body: dict[str, Any] = {"programs": programs, "limits": limits.to_json()}
        modes = [getattr(p, "library_mode", None) for p in programs]
        if any(m is not None for m in modes):
            body["library_modes"] = modes  # (Program.library_mode: a JSON body carries plain strings)
        data, why = self._call("/run_batch", body, self._timeout(limits, len(programs)))
        if data is None or len(data.get("results", [])) != len(programs):
            why = why or "malformed /run_batch reply"
            return [sandbox_error(self.backend, why, self.url) for _ in programs]
        return [ExecResult.from_json({**r, "backend": self.backend}) for r in data["results"]]

    def run(self, programs: Sequence[str], limits: Limits | None = None) -> list[ExecResult]:
        programs = check_programs(programs)
        if self._closed:
            raise RuntimeError("http sandbox is closed")
        limits = limits or Limits()
        if not self.batch:
            return list(self._pool.map(lambda c: self._run_official(c, limits), programs))
        chunks = [programs[i : i + self.batch_size] for i in range(0, len(programs), self.batch_size)]
        out: list[ExecResult] = []
        for rs in self._pool.map(lambda ch: self._run_batch(ch, limits), chunks):
            out.extend(rs)
        return out

    def isolation(self) -> dict[str, Any]:
        info = self._server_info if self._server_info is not None else self._probe()
        return {
            "backend": "http",
            "url": self.url,
            "protocol": "se-gym batch" if self.batch else "official /run",
            "channel": self.batch,
            "concurrency": self.workers,
            "retries": self.retries,
            "server": (info or {}).get("isolation", "unknown (official server)"),
        }

    def _close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
