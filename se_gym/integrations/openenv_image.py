"""Build the OpenEnv server image (``sandbox/openenv/Dockerfile``) offline and reproducibly.

    python -m se_gym.integrations.openenv_image [--tag se-gym/openenv:latest] [--rebuild]
    se-gym serve openenv --build-image                    # the same

Docker builds here cannot reach PyPI, and the sandbox image (the base) has no pip.  So the host,
which reaches PyPI through its own pip, prepares everything the server needs:

- the requirement closure of se-gym's ``openenv`` extra, taken from the distributions installed in
  this environment at their installed versions (gradio left out: it only serves OpenEnv's optional
  web UI; NumPy left out: the base image holds this environment's own NumPy, at its site-packages
  path, which the image puts on the server's PYTHONPATH);
- a wheelhouse of exactly those versions (``pip download --no-deps --only-binary=:all:``, cached under
  ``$SE_GYM_CACHE/openenv-wheelhouse``), se-gym's wheel built from this checkout, and pip's own wheel;
- the system libraries the wheels' extension modules load beyond what the base holds, and
  bubblewrap and util-linux unshare with their libraries, copied from this machine (the judge
  inside the container uses them where the container may make namespaces: see sandbox/openenv/README.md).

The Dockerfile then installs with ``pip --no-index --find-links`` (pip run from its wheel) in a
build stage and copies only the installed folder into the final image.  The image is tagged with a
hash of everything that goes into it, so a second call with nothing changed builds nothing.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.metadata as md
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable

from ..errors import SEGymError
from ..logs import setup

log = logging.getLogger(__name__)

LEAVE_OUT = {"gradio", "numpy"}  # see the module doc
ROOTS = ("openenv-core", "fastapi", "uvicorn", "websockets", "gymnasium", "tqdm")
DEFAULT_TAG = "se-gym/openenv:latest"
# the image OpenEnv's AutoEnv starts for "se_gym" by default (its name + ":latest", see sandbox/openenv)
AUTOENV_TAG = "se-gym-env:latest"


class ImageError(SEGymError, RuntimeError):
    """Something the image cannot be built without (one line)."""


def _canon(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def server_requirements(roots: Iterable[str] = ROOTS) -> list[tuple[str, str]]:
    """(name, installed version) of every distribution the server imports, from this environment's
    metadata: the closure of ``roots`` over their requirements (with the extras they name, markers
    evaluated here), without :data:`LEAVE_OUT`."""
    from packaging.requirements import Requirement

    seen: dict[tuple[str, tuple], str] = {}
    stack = [Requirement(r) for r in roots]
    while stack:
        req = stack.pop()
        name = _canon(req.name)
        key = (name, tuple(sorted(req.extras)))
        if name in LEAVE_OUT or key in seen:
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            raise ImageError(f"{req.name} is not installed here; install se-gym's openenv extra first "
                             "(bash scripts/setup/integrations.sh)") from None
        seen[key] = dist.version
        envs = [{"extra": ""}] + [{"extra": e} for e in req.extras]
        for line in dist.requires or []:
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate(e) for e in envs):
                stack.append(sub)
    return sorted({k[0]: v for k, v in seen.items()}.items())


def wheelhouse_dir() -> Path:
    from ..library.writer import cache_root

    return cache_root() / "openenv-wheelhouse"


def _wheel_for(folder: Path, name: str, version: str) -> Path | None:
    from packaging.utils import canonicalize_name, parse_wheel_filename

    for f in folder.glob("*.whl"):
        try:
            wname, wver, _, _ = parse_wheel_filename(f.name)
        except Exception:
            continue
        if canonicalize_name(wname) == canonicalize_name(name) and str(wver) == version:
            return f
    return None


def fill_wheelhouse(reqs: list[tuple[str, str]], folder: Path | None = None) -> dict[str, Path]:
    """The wheel of each (name, version), downloading (with this environment's pip) only the missing
    ones; a package published without a wheel is built from its sdist."""
    folder = folder or wheelhouse_dir()
    folder.mkdir(parents=True, exist_ok=True)
    missing = [(n, v) for n, v in reqs if _wheel_for(folder, n, v) is None]
    if missing:
        pins = [f"{n}=={v}" for n, v in missing]
        log.info("openenv image: downloading %d wheels into %s", len(pins), folder)
        got = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(folder), *pins],
                             capture_output=True, text=True)
        if got.returncode != 0:  # one at a time: wheels where published, else built from the sdist
            for pin in pins:
                ok = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(folder), pin],
                                    capture_output=True, text=True)
                if ok.returncode != 0:
                    ok = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder), pin], capture_output=True, text=True)
                if ok.returncode != 0:
                    last = (ok.stderr.strip().splitlines() or ["?"])[-1]
                    raise ImageError(f"cannot get a wheel of {pin} (pip needs to reach the package index once): {last}")
    out = {}
    for n, v in reqs:
        w = _wheel_for(folder, n, v)
        if w is None:
            raise ImageError(f"pip did not leave a wheel of {n}=={v} in {folder}")
        out[n] = w
    return out


def source_root() -> Path:
    """The checkout se_gym is imported from (the image is built from source)."""
    root = Path(__file__).resolve().parents[2]  # se_gym/integrations/ -> the checkout
    if not (root / "setup.py").is_file() or not (root / "sandbox" / "openenv" / "Dockerfile").is_file():
        raise ImageError(f"the OpenEnv image is built from a source checkout of se-gym; {root} has no setup.py "
                         "and sandbox/openenv/Dockerfile")
    return root


def _source_files(root: Path) -> list[Path]:
    files = [root / "setup.py", root / "README.md"]
    for folder in (root / "sandbox" / "openenv", root / "se_gym"):  # the environment package, the sources
        for p in sorted(folder.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith((".pyc", ".pyo")):
                files.append(p)
    return files


def system_files(reqs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(source, path in the image) of the system libraries that the installed extension modules of
    ``reqs`` load (pydantic-core needs librt, for one) and of bubblewrap with its libraries; the
    base image holds only what Python and NumPy load.  Found with ldd on this machine's installed
    copies, which are the same wheels."""
    from ..sandbox.docker import shared_libs

    native = []
    for name, _ in reqs:
        for f in md.distribution(name).files or []:
            if f.name.endswith(".so") or ".so." in f.name:
                native.append(str(f.locate()))
    out = []
    # bubblewrap, and /bin/true to check that it works; util-linux unshare, the sandbox's fallback
    # (it works with just --cap-add SYS_ADMIN, where bubblewrap wants more)
    tools = [(shutil.which("bwrap"), "/usr/bin/bwrap"), (shutil.which("bwrap") and "/bin/true", "/bin/true"),
             (shutil.which("unshare"), "/usr/bin/unshare")]
    for path, where in tools:
        if path is not None and os.path.exists(path):
            native.append(os.path.realpath(path))
            out.append((os.path.realpath(path), where))
    prefix = str(Path(sys.base_prefix)) + "/"
    for lib in sorted(shared_libs(native)):
        # the interpreter's own and the wheels' bundled libraries (*.libs/) come with them
        if not lib.startswith(prefix) and "site-packages" not in lib:
            real = os.path.realpath(lib)
            out += [(real, lib)] + ([(real, real)] if real != lib else [])  # both names, as the base has
    return out


def image_key(base_id: str, reqs: list[tuple[str, str]], root: Path) -> str:
    """A hash of everything the image is made of: the base image, the pinned requirements, the source
    files and the Dockerfile, the system libraries copied in."""
    h = hashlib.sha256(base_id.encode())
    h.update(json.dumps(reqs).encode())
    for f in _source_files(root):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    for src, dst in system_files(reqs):
        h.update(dst.encode() + hashlib.sha256(Path(src).read_bytes()).digest())
    return h.hexdigest()[:12]


def _build_se_gym_wheel(root: Path, out: Path) -> Path:
    import importlib.util

    # this environment's setuptools makes wheels itself from 70.1 (or with `wheel`); otherwise pip
    # fetches a build environment from the index (as tests/test_packaging.py does).  Versions from
    # the metadata: importing setuptools next to pip trips its distutils check.
    own = tuple(int(x) for x in md.version("setuptools").split(".")[:2]) >= (70, 1) or importlib.util.find_spec("wheel") is not None
    with tempfile.TemporaryDirectory(prefix="se-gym-src-") as tmp:
        # a copy: the build must not leave build/ and *.egg-info in the checkout
        src = Path(tmp) / "src"
        shutil.copytree(root, src, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", "*.pyc",
                                                                   "se_gym_demo", "runs", "tests", "benchmarks", "notebooks"))
        # fixed zip timestamps: the same sources give the same wheel, so Docker's layer cache holds
        got = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *(["--no-build-isolation"] if own else []), "-q", "-w", str(out), str(src)],
                             capture_output=True, text=True, env={**os.environ, "SOURCE_DATE_EPOCH": "315532800"})
    if got.returncode != 0:
        raise ImageError(f"cannot build se-gym's wheel: {(got.stderr.strip().splitlines() or ['?'])[-1]}")
    (wheel,) = out.glob("se_gym-*.whl")
    return wheel


def build_context(ctx: Path, reqs: list[tuple[str, str]], root: Path) -> dict:
    """Write the build context: Dockerfile, openenv.yaml, wheels/ and se-gym/ (each with its requirements.txt), pip/pip.whl, sysroot/."""
    wheels = ctx / "wheels"
    wheels.mkdir(parents=True)
    house = fill_wheelhouse(reqs + [("pip", md.version("pip"))])
    for name, w in house.items():
        if name != "pip":
            shutil.copy2(w, wheels / w.name)
    (ctx / "pip").mkdir()
    shutil.copy2(house["pip"], ctx / "pip" / "pip.whl")  # run from the zip (the base has no pip)
    (wheels / "requirements.txt").write_text("".join(f"{n}=={v}\n" for n, v in reqs))
    # se-gym apart: its layer changes with every source change, the dependencies' layer does not
    own = ctx / "se-gym"
    own.mkdir()
    se_wheel = _build_se_gym_wheel(root, own)
    (own / "requirements.txt").write_text("se-gym==" + se_wheel.name.split("-")[1] + "\n")
    sysroot = ctx / "sysroot"
    sysroot.mkdir()
    for src, dst in system_files(reqs):
        target = sysroot / dst.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    for name in ("Dockerfile", "openenv.yaml"):
        shutil.copy2(root / "sandbox" / "openenv" / name, ctx / name)
    return {"wheels": len(house)}


def ensure_openenv_image(tag: str = DEFAULT_TAG, rebuild: bool = False, client=None, quiet: bool = False) -> str:
    """Build the OpenEnv server image unless one built from the same inputs exists; returns its
    content tag (``se-gym/openenv:<hash>``), also tagged ``tag``."""
    from ..sandbox.docker import docker_client, ensure_image, numpy_site

    client = client or docker_client()  # one clear line when no daemon answers
    root = source_root()
    base = ensure_image(client)
    reqs = server_requirements()
    key = image_key(client.images.get(base).id, reqs, root)
    repo = tag.rsplit(":", 1)[0] if ":" in tag.rsplit("/", 1)[-1] else tag
    content_tag = f"{repo}:{key}"
    have = {t for img in client.images.list(name=repo) for t in img.tags}
    if content_tag in have and not rebuild:
        _tag(client, content_tag, tag)
        return content_tag
    with tempfile.TemporaryDirectory(prefix="se-gym-openenv-ctx-") as tmp:
        ctx = Path(tmp)
        info = build_context(ctx, reqs, root)
        if not quiet:
            log.info("openenv image: building %s on %s (%s wheels, offline)", content_tag, base, info["wheels"])
        error, tail = None, []
        for chunk in client.api.build(path=str(ctx), tag=content_tag, rm=True, forcerm=True, pull=False, decode=True,
                                      buildargs={"BASE": base, "NUMPY_SITE": numpy_site()}, nocache=rebuild):
            if "error" in chunk:
                error = chunk["error"].strip()
            elif chunk.get("stream", "").strip():
                tail = (tail + [chunk["stream"].rstrip()])[-20:]
                if not quiet and chunk["stream"].startswith("Step "):
                    log.info("  %s", chunk["stream"].strip())
        if error:
            log.error("\n".join(tail))  # the failing step's own output
            raise ImageError(f"cannot build {content_tag}: {error.splitlines()[-1] if error else '?'}")
    _tag(client, content_tag, tag)
    _remove_older(client, repo, content_tag)
    return content_tag


def _tag(client, content_tag: str, tag: str) -> None:
    """``tag`` and AutoEnv's default name point at ``content_tag`` (a no-op where they do)."""
    image = client.images.get(content_tag)
    for name in (tag, AUTOENV_TAG):
        if name not in image.tags:
            image.tag(name)


def _remove_older(client, repo: str, keep: str) -> None:
    """Untag the images this function built from older inputs (``repo:<12 hex>``): otherwise every
    source change leaves one more image on disk.  An image a container still uses stays."""
    import re

    for img in client.images.list(name=repo):
        old = [t for t in img.tags if t != keep and re.fullmatch(re.escape(repo) + r":[0-9a-f]{12}", t)]
        for t in old:
            try:
                client.images.remove(t, noprune=False)
            except Exception:
                pass  # in use, or already gone


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m se_gym.integrations.openenv_image", description=__doc__.split("\n")[0])
    p.add_argument("--tag", default=DEFAULT_TAG, help=f"also tag the image so (default {DEFAULT_TAG})")
    p.add_argument("--rebuild", action="store_true", help="build again even when an image of the same inputs exists")
    args = p.parse_args(argv)
    setup()
    try:
        print(ensure_openenv_image(args.tag, rebuild=args.rebuild))
    except (ImageError, RuntimeError) as exc:
        log.error("error: %s", exc)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
