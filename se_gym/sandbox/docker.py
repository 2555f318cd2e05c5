"""The ``docker`` backend: the same worker as ``local``, one long-lived container per worker.

Containers have no network, a read-only root, all capabilities dropped, no-new-privileges, a pids
limit, one CPU and a memory cap, and run as a fresh non-root uid.  The worker is the container's
PID 1, so a program can neither kill it nor escape its clean-up (``kill -1`` reaches everything but
PID 1).  We talk to it over the attached stdin/stdout with the worker's frame protocol.

No registry is needed: :func:`ensure_image` imports a base image assembled from this machine's own
Python and NumPy (same paths, same versions, hence the same results as ``local``) and builds
``sandbox/Dockerfile`` on top.  Give ``base=`` to use another locally available base image.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from .base import Limits, worker_fast_paths
from .pool import FdTransport, Transport, WorkerDied, WorkerPool


def base_image_tag() -> str:
    """The base image made from this interpreter: it holds NumPy at this environment's path (a
    venv's site-packages differs from the base install's), so the tag names that path too."""
    import numpy

    key = f"{sys.base_prefix}|{numpy_site()}|{numpy.__version__}".encode()
    return "se-gym/sandbox-base:py{0}.{1}-{2}".format(*sys.version_info[:2], hashlib.sha256(key).hexdigest()[:10])
# inside the package (package_data), so that a non-editable install (a wheel) has it too
_DOCKERFILE = Path(__file__).resolve().with_name("Dockerfile")
_WORKER = Path(__file__).with_name("worker.py")


def _build_hash() -> str:
    h = hashlib.sha256()
    for f in (_WORKER, _DOCKERFILE):
        try:
            h.update(f.read_bytes())
        except OSError:  # a broken install: say so rather than build from nothing
            raise RuntimeError(f"the docker backend's {f.name} is missing from the installed package ({f}): "
                               "reinstall se-gym") from None
    return h.hexdigest()[:10]


# the tag names the worker and Dockerfile it is built from: a changed worker gets a fresh image
# instead of an old one silently running on
def image_tag() -> str:
    return "se-gym/sandbox:py{0}.{1}-{2}".format(*sys.version_info[:2], _build_hash())


def _image_for(base: str) -> str:
    """The worker image's tag: names the worker and Dockerfile (a changed worker gets a fresh image
    instead of an old one silently running on) and the base it is built on."""
    return image_tag() + "-" + hashlib.sha256(base.encode()).hexdigest()[:6]
_RUN_DIR = "/run/se-gym"  # the only writable place in a container (tmpfs)
# stdlib parts a sandbox does not need
_SKIP = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages", "__phello__"}


def docker_client():
    """A Docker SDK client for the local daemon (one line when the package or the daemon is missing)."""
    try:
        import docker
    except ImportError:
        raise RuntimeError("the docker backend needs the docker SDK: pip install 'se-gym[docker]'") from None
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:
        raise RuntimeError(f"no Docker daemon answers ({type(exc).__name__}); start one, e.g. scripts/docker_daemon.sh start") from None
    return client


def shared_libs(files: Sequence[str]) -> set[str]:
    """The system libraries these executables and extension modules load (via ldd)."""
    libs: set[str] = set()
    for i in range(0, len(files), 200):
        out = subprocess.run(["ldd", *files[i : i + 200]], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            for p in parts:
                if p.startswith("/") and os.path.exists(p):
                    libs.add(p)
    return libs


def base_rootfs_tar(out: str | os.PathLike) -> Path:
    """A minimal root filesystem holding this interpreter (at its own path), the standard library,
    NumPy, and the system libraries they load; written as a tar for ``docker import``."""
    import numpy

    prefix = Path(sys.base_prefix)
    stdlib = Path(os.__file__).parent
    numpy_dir = Path(numpy.__file__).parent
    site = numpy_dir.parent
    numpy_extra = [p for p in site.iterdir() if p.name.startswith("numpy") and p != numpy_dir]
    exe = Path(sys.executable).resolve()
    sos = [str(p) for p in [exe, *prefix.glob("lib/libpython*.so*"), *stdlib.glob("lib-dynload/*.so"), *numpy_dir.rglob("*.so"), *site.glob("numpy.libs/*.so*")]]

    def owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        rel = Path(info.name).relative_to(str(stdlib).lstrip("/")) if info.name.startswith(str(stdlib).lstrip("/")) else None
        if rel is not None and rel.parts and rel.parts[0] in _SKIP:
            return None
        return owned_by_root(info)

    out = Path(out)
    seen: set[str] = set()

    def add(tar: tarfile.TarFile, path: Path | str, arcname: str, filter=owned_by_root, recursive: bool = True) -> None:
        """tar.add, but each path once: the same file can be reached twice (numpy.libs/*.so through
        NumPy and through ldd, when site-packages lies outside the base prefix, as in a venv), and
        Docker refuses a layer with duplicate paths.  ldd may name the same file with a `..` in its
        path, so names are normalised first."""
        arcname = os.path.normpath(arcname).lstrip("/")
        if arcname not in seen:
            info = filter(tar.gettarinfo(str(path), arcname))
            if info is None:
                return
            seen.add(arcname)
            if info.isreg():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
        if recursive and os.path.isdir(path) and not os.path.islink(path):
            for name in sorted(os.listdir(path)):
                add(tar, os.path.join(path, name), f"{arcname}/{name}", filter)

    def add_dir(tar: tarfile.TarFile, name: str, mode: int) -> None:
        if name not in seen:
            seen.add(name)
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)

    with tarfile.open(out, "w") as tar:
        for d, mode in (("tmp", 0o1777), ("etc", 0o755), ("root", 0o755), ("run", 0o755), ("proc", 0o555), ("dev", 0o755), ("sys", 0o555)):
            add_dir(tar, d, mode)
        passwd = b"root:x:0:0:root:/root:/bin/false\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
        info = tarfile.TarInfo("etc/passwd")
        info.size = len(passwd)
        seen.add(info.name)
        tar.addfile(info, io.BytesIO(passwd))
        # parents of the interpreter's and site-packages' own paths, walkable by any uid
        for base in (prefix, site):
            for i in range(1, len(base.parts)):
                d = str(Path(*base.parts[1 : i + 1]))
                if d != "root":
                    add_dir(tar, d, 0o755)
        add(tar, prefix / "bin", str(prefix / "bin"), recursive=False)
        for name in ("python3", f"python{sys.version_info[0]}.{sys.version_info[1]}"):
            p = prefix / "bin" / name
            if p.exists():
                add(tar, p, str(p))
        add(tar, prefix / "lib", str(prefix / "lib"), recursive=False)
        for p in prefix.glob("lib/libpython*.so*"):
            add(tar, p, str(p))
        add(tar, stdlib, str(stdlib), filter=keep)
        add(tar, site, str(site), recursive=False)
        for p in [numpy_dir, *numpy_extra]:
            add(tar, p, str(p))
        for lib in sorted(shared_libs(sos)):
            if lib.startswith(str(prefix) + "/"):
                continue  # already in
            real = os.path.realpath(lib)
            add(tar, real, lib)
            if real != lib:  # keep the real name too (some loaders ask for it)
                add(tar, real, real)
    return out


def numpy_site() -> str:
    """The site-packages folder holding NumPy (a venv's, or the base install's): the image has it at
    the same path, and the worker (started with -S) puts it on its path."""
    import numpy

    return str(Path(numpy.__file__).parent.parent)


def ensure_image(client: Any = None, tag: str | None = None, base: str | None = None, rebuild: bool = False) -> str:
    """Build the sandbox image unless it exists.  ``base``: a local image with Python >= 3.10 and
    NumPy >= 2 at this interpreter's path; by default one assembled from this machine."""
    import tempfile

    client = client or docker_client()
    images = {t for img in client.images.list() for t in img.tags}
    own_base = base is None
    base = base or base_image_tag()
    tag = tag or _image_for(base)
    if tag in images and not rebuild:
        return tag
    if own_base:
        if base not in images or rebuild:
            with tempfile.TemporaryDirectory(prefix="se-gym-rootfs-") as tmp:
                tar = base_rootfs_tar(Path(tmp) / "rootfs.tar")
                repo, _, btag = base.partition(":")
                client.api.import_image_from_file(str(tar), repository=repo, tag=btag)
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        tar.add(str(_DOCKERFILE), arcname="Dockerfile")
        tar.add(str(_WORKER), arcname="worker.py")
    context.seek(0)
    pybin = str(Path(sys.base_prefix) / "bin")
    try:
        client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True, pull=False,
                            buildargs={"BASE": base, "PYBIN": pybin})
    except Exception as exc:
        raise RuntimeError(f"cannot build the sandbox image {tag} from {base}: {exc}") from None
    return tag


class _AttachTransport(FdTransport):
    """Frames over a container's attached stdin/stdout (Docker multiplexes stdout in 8-byte-headed
    blocks since there is no TTY; we undo that)."""

    def __init__(self, container: Any, sock: Any, name: str):
        self.container, self._sock = container, sock
        raw = getattr(sock, "_sock", sock)
        self._raw: socket.socket = raw
        super().__init__(raw.fileno(), raw.fileno(), name)
        self._mux = bytearray()

    def send(self, obj: dict) -> None:
        body = json.dumps(obj).encode()
        try:
            self._raw.sendall(struct.pack(">I", len(body)) + body)
        except OSError as exc:
            raise WorkerDied(f"cannot write to container: {exc}") from None

    def _fill(self, n: int, deadline: float | None) -> None:
        import select

        while len(self._buf) < n:
            # demultiplex whatever complete blocks we hold
            while len(self._mux) >= 8:
                kind, size = self._mux[0], struct.unpack(">I", self._mux[4:8])[0]
                if len(self._mux) < 8 + size:
                    break
                if kind == 1:
                    self._buf += self._mux[8 : 8 + size]
                del self._mux[: 8 + size]
            if len(self._buf) >= n:
                return
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self._raw], [], [], wait)[0]:
                raise WorkerDied("container stopped answering")
            try:
                chunk = self._raw.recv(1 << 20)
            except OSError as exc:
                raise WorkerDied(f"cannot read from container: {exc}") from None
            if not chunk:
                raise WorkerDied("container exited")
            self._mux += chunk

    def kill(self) -> None:
        try:
            self._raw.close()
        except OSError:
            pass
        try:
            self.container.remove(force=True)
        except Exception:
            pass

    def log_tail(self) -> str:
        try:
            return self.container.logs(stdout=False, stderr=True, tail=20).decode(errors="replace")
        except Exception:
            return ""


class DockerSandbox(WorkerPool):
    """Workers in long-lived Docker containers (see the module doc)."""

    backend = "docker"
    # declarations (se_gym.sandbox.base.Sandbox): the library's folder on the path (copied into the
    # containers), the result channel, a pool a judge starts in a background thread
    library_as = "path"
    channel = True
    pooled_start = "thread"
    requires = {"docker": "pip install 'se-gym[docker]'"}

    @classmethod
    def available(cls, options=None) -> tuple[bool, str]:
        """Whether a Docker daemon answers here (and the SDK is installed).

        Args:
            options: the options it would be built with.
        """
        ok, why = super().available(options)
        if not ok:
            return ok, why
        try:
            import docker

            docker.from_env().ping()
        except Exception as exc:  # noqa: BLE001 - any reason: no daemon, no permission
            return False, f"no Docker daemon answers ({type(exc).__name__})"
        return True, ""

    def __init__(
        self,
        pythonpath: Sequence[str] = (),
        preload: Sequence[str] = ("numpy",),
        workers: int | None = None,
        image: str | None = None,
        base: str | None = None,
        memory_mb: int = 4096,
        cpus: float = 1.0,
        start_timeout: float = 120.0,
    ):
        for p in pythonpath:
            if not os.path.isdir(p):
                raise ValueError(f"pythonpath entry is not a folder: {p}")
        self._client = docker_client()
        super().__init__(workers or os.cpu_count() or 1, start_timeout)
        self.pythonpath = [os.path.realpath(p) for p in pythonpath]
        self.preload = list(preload)
        self.image = image or ensure_image(self._client, base=base)
        self.memory_mb, self.cpus = int(memory_mb), float(cpus)
        self._uids = random.Random(os.urandom(8))
        self._label = f"se-gym-sandbox-{os.getpid()}-{id(self):x}"
        self._stage = self._stage_pythonpath()
        try:
            self._start()
        except BaseException:
            shutil.rmtree(self._stage, ignore_errors=True)
            raise

    def _stage_pythonpath(self) -> str:
        """World-readable copies of the pythonpath folders: the containers run as a fresh non-root
        uid, which cannot read a folder private to root (the library cache is 0700)."""
        stage = tempfile.mkdtemp(prefix="se-gym-docker-")
        for i, p in enumerate(self.pythonpath):
            dst = os.path.join(stage, str(i))
            shutil.copytree(p, dst, symlinks=False)
            for root, dirs, files in os.walk(dst):
                os.chmod(root, 0o755)
                for f in files:
                    os.chmod(os.path.join(root, f), 0o644)
        os.chmod(stage, 0o755)
        return stage

    def _spawn(self, slot: int) -> Transport:
        uid = self._uids.randrange(200_000, 2_000_000_000)  # private: NPROC counts per uid host-wide
        cfg = {"preload": self.preload, "pythonpath": self.pythonpath, "workdir": f"{_RUN_DIR}/work", "uid": None,
               "site_packages": [numpy_site()], "fast_paths": worker_fast_paths()}
        container = self._client.containers.create(
            self.image,
            command=[json.dumps(cfg)],
            stdin_open=True,
            user=f"{uid}:{uid}",
            network_mode="none",
            read_only=True,
            tmpfs={_RUN_DIR: f"rw,size=256m,mode=0700,uid={uid},gid={uid}"},
            volumes={os.path.join(self._stage, str(i)): {"bind": p, "mode": "ro"} for i, p in enumerate(self.pythonpath)},
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            pids_limit=64,
            mem_limit=f"{self.memory_mb}m",
            memswap_limit=f"{self.memory_mb}m",
            nano_cpus=int(self.cpus * 1e9),
            labels={"se-gym-sandbox": self._label},
            environment={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
        )
        try:
            sock = container.attach_socket(params={"stdin": 1, "stdout": 1, "stream": 1})
            container.start()
        except Exception:
            container.remove(force=True)
            raise
        return _AttachTransport(container, sock, f"docker-{slot}.{self._spawned}-{container.short_id}")

    def isolation(self) -> dict[str, Any]:
        hello = self.worker_info
        return {
            "backend": "docker",
            "level": "container",
            "image": self.image,
            "network": False,
            "fs": "read-only root, tmpfs work dir",
            "pid_namespace": True,
            "worker_uid": hello.get("uid"),
            "program_uid": hello.get("child_uid"),
            "workers": self.workers,
            "python": hello.get("python"),
            "numpy": hello.get("numpy"),
            "memory_cap_mb": self.memory_mb,
            "cpus": self.cpus,
            "preload": self.preload,
            "pythonpath": self.pythonpath,
            "limits": Limits().to_json(),
            "channel_fd": 3,
        }

    def _close(self) -> None:
        super()._close()
        if getattr(self, "_stage", None):
            shutil.rmtree(self._stage, ignore_errors=True)
        try:  # containers of ours that a crash may have left
            for c in self._client.containers.list(all=True, filters={"label": f"se-gym-sandbox={self._label}"}):
                c.remove(force=True)
        except Exception:
            pass
