"""The layout matrix (issue 15): the judge gives the same verdicts wherever Python lives and however
the machine is set up.  Each layout is built for real and the judge runs in it as a user would run
it, in a fresh process started from a folder outside the checkout:

- the host's Python (pyenv under /root here), bubblewrap as found;
- a venv under /tmp made from the system Python, se-gym installed into it from a copy of the
  checkout (a non-editable install); the built-in suite is built here (one layout only: it is slow);
- bubblewrap hidden from PATH (namespaces through ``unshare``);
- neither bubblewrap nor ``unshare`` (rlimits only: the network stays reachable and is reported);
- a throwaway non-root uid (``setpriv``), with and without bubblewrap.

In each: the official parity rows are judged (correct answers pass, wrong ones fail, and the
verdicts agree with SE-Bench's as on the reference layout), programs import lazily imported NumPy
modules and the standard library, the network is unreachable, and nothing is written outside the
work dir.  Under SE_GYM_CI=1 a layout that cannot be built fails instead of skipping.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import REPO, legit_skip, need, shared_path

DRIVER = r'''
import collections, json, os, socket, sys, time
t0 = time.time()
import se_gym
from se_gym.judge import Judge
from se_gym.library import official
from se_gym.sandbox import Limits

shared, outside, token, build_suite, limit = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", int(sys.argv[5])
rows = [json.loads(l) for l in open(os.path.join(shared, "parity_dev.jsonl")) if l.strip()]
if limit:  # the model-written variants (b: right, d: wrong) of the first tasks
    rows = [r for r in rows if r["variant"][0] in "bd"][:limit]
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(8)
port = srv.getsockname()[1]
probes = [
    # NumPy's median and percentile import numpy.ma etc. on first use; no preload list may decide that
    "import numpy as np\nprint(np.median([3.0, 1.0, 2.0]), np.percentile([1, 2, 3, 4], 50), np.nanmedian([1.0, np.nan, 3.0]))",
    "import traceback, decimal, fractions, statistics, sqlite3, numpy.ma, numpy.polynomial\nprint('imports ok')",
    "import socket\ntry:\n    socket.create_connection(('127.0.0.1', %d), timeout=1)\n    print('network reachable')\n"
    "except OSError as e:\n    print('network unreachable')" % port,
    "import os\nfor d in ('/tmp', '/var/tmp', '/dev/shm', %r, os.path.expanduser('~')):\n"
    "    try:\n        open(os.path.join(d, 'se-gym-layout-%s'), 'w').write('x')\n    except OSError:\n        pass\n"
    "open('mine.txt', 'w').write('x')\nprint('wrote')" % (outside, token),
]
t_import = time.time() - t0
with Judge(official(os.path.join(shared, "api_doc.jsonl")), profile="sebench", workers=2) as j:
    box = j.sandbox
    t_start = time.time() - t0
    verdicts = j.judge_many([(r["response"], r["test_cases"], None, r["right_exe_result"].split("#")) for r in rows])
    box = j.sandbox
    res = box.run(probes, Limits(wall_s=10, cpu_s=10))
    level = box.isolation()["level"]
    replaced = box.restarts + box.retired
srv.close()
out = {
    "se_gym": se_gym.__file__, "python": sys.executable, "level": level, "uid": os.getuid(), "replaced": replaced,
    "codes": [v.sebench_code for v in verdicts],
    "statuses": dict(collections.Counter(v.status.value for v in verdicts)),
    "agree": sum(v.sebench_code == r["verdict"] for v, r in zip(verdicts, rows)), "rows": len(rows),
    "probes": [[r.status.value, r.stdout, r.stderr[-400:]] for r in res],
    "judge_s": time.time() - t0, "import_s": t_import, "start_s": t_start,
}
if build_suite:
    # the docker backend from this install: its Dockerfile is in the package, and the image's root
    # file system lists every path once (a venv's numpy.libs used to come twice: Docker refuses that)
    import tarfile, tempfile
    from se_gym.sandbox import docker as dk

    out["dockerfile"] = dk._DOCKERFILE.is_file() and dk.image_tag()
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(dk.base_rootfs_tar(os.path.join(tmp, "rootfs.tar"))) as tar:
            names = tar.getnames()
    out["rootfs"] = [len(names), len(set(names)), sum("numpy.libs/" in n for n in names)]
    from se_gym.tasks.builtin import build_suite as build

    t1 = time.time()
    # median and percentile import numpy.ma lazily (the failure of issue 15); the full default
    # build (SE_GYM_LAYOUT_FULL_SUITE=1) takes minutes on a small shared machine
    full = os.environ.get("SE_GYM_LAYOUT_FULL_SUITE") == "1"
    suite = build(0, progress=False) if full else build(
        0, sizes={"train": 16, "single_test": 8, "multiple_test": 8},
        functions=["median", "percentile", "mean", "abs", "sum", "sort", "cumsum", "dot"], progress=False)
    out["suite"] = dict(suite.manifest["counts"])
    out["suite_s"] = time.time() - t1
print("LAYOUT-RESULT " + json.dumps(out))
'''


# rows of parity_dev.jsonl judged per layout (0: all 780, for the closing note's parity figures)
ROWS = int(os.environ.get("SE_GYM_LAYOUT_ROWS", "120"))


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def layouts_root():
    root = Path(tempfile.mkdtemp(prefix="se-gym-layouts-", dir="/tmp"))
    os.chmod(root, 0o755)
    (root / "outside").mkdir(mode=0o777)
    os.chmod(root / "outside", 0o777)  # world-writable: a program could write here if it could see it
    (root / "driver.py").write_text(DRIVER)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def venv(layouts_root):
    """A venv under /tmp from the system Python (readable by every uid), with se-gym installed from
    a copy of this checkout (not editable) and NumPy at the host's version."""
    base = shutil.which("python3", path="/usr/bin:/bin") or ""
    if not base or os.path.realpath(base) == os.path.realpath(sys.executable):
        base = sys.executable
    env_dir = layouts_root / "venv"
    r = _run([base, "-m", "venv", str(env_dir)], timeout=300)
    need(r.returncode == 0, f"cannot make a venv with {base}: {r.stderr.strip()[-300:]}")
    py = str(env_dir / "bin" / "python")
    import numpy

    src = layouts_root / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "build", "runs", ".pytest_cache"))
    r = _run([py, "-m", "pip", "install", "--quiet", f"numpy=={numpy.__version__}", str(src)], timeout=600)
    need(r.returncode == 0, f"cannot install se-gym into the venv: {r.stderr.strip()[-500:]}")
    shutil.rmtree(src)
    return py


def _path_without(root: Path, *tools: str) -> str:
    """A PATH folder holding the usual tools but ``tools`` (links), as on a machine without them."""
    d = Path(tempfile.mkdtemp(prefix="se-gym-path-", dir=root))
    os.chmod(d, 0o755)
    for name in ("unshare", "setpriv", "ldd", "env", "sh", "true"):
        exe = shutil.which(name)
        if exe and name not in tools:
            os.symlink(exe, d / name)
    return str(d)


def _throwaway_uid() -> int:
    used = {int(line.split(":")[2]) for line in open("/etc/passwd") if line.count(":") >= 3}
    uid = 61000 + os.getpid() % 3000
    while uid in used:
        uid += 1
    return uid


def _layout(name: str, root: Path, python: str, path: str | None = None, uid: int | None = None,
            build: bool = False) -> dict:
    shared = shared_path("sebench", "parity_dev.jsonl").parent
    token = f"{name}-{os.getpid()}"
    home = Path(tempfile.mkdtemp(prefix="se-gym-home-", dir=root))
    env = {"PATH": path or os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "OMP_NUM_THREADS": "1", "SE_GYM_CACHE": str(home / "cache")}
    if python == sys.executable:
        env["PYTHONPATH"] = str(REPO)  # the host's Python runs this checkout's se_gym
    if os.environ.get("SE_GYM_LAYOUT_FULL_SUITE"):
        env["SE_GYM_LAYOUT_FULL_SUITE"] = os.environ["SE_GYM_LAYOUT_FULL_SUITE"]
    cmd = [python, str(root / "driver.py"), str(shared), str(root / "outside"), token, "1" if build else "0", str(ROWS)]
    if uid is not None:
        os.chown(home, uid, uid)
        cmd = [shutil.which("setpriv"), f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *cmd]
    r = _run(cmd, cwd=str(home), env=env, timeout=900)
    lines = [line for line in r.stdout.splitlines() if line.startswith("LAYOUT-RESULT ")]
    assert r.returncode == 0 and lines, f"layout {name} failed:\n{r.stderr[-3000:]}"
    out = json.loads(lines[-1][len("LAYOUT-RESULT "):])
    out["stderr"] = r.stderr
    leaked = [str(p) for d in ("/tmp", "/var/tmp", "/dev/shm", str(root / "outside"), str(home))
              if (p := Path(d) / f"se-gym-layout-{token}").exists()]
    leaked += [str(p) for p in home.rglob("mine.txt")]
    out["leaked"] = leaked
    for p in leaked:
        os.unlink(p)
    print(f"layout {name}: level {out['level']}, uid {out['uid']}, verdicts {out['statuses']}, "
          f"parity {out['agree']}/{out['rows']}, {out['judge_s']:.1f} s (import {out['import_s']:.1f}, sandbox up {out['start_s']:.1f})" + (f", suite {out.get('suite')}" if build else ""))
    return out


def _check(out: dict, reference: dict | None, networked: bool = False) -> None:
    """``networked``: the rlimits-only layout, where programs keep the network and the host's
    world-writable folders (reported, not hidden); correctness must hold all the same."""
    probes = out["probes"]
    assert probes[0][:2] == ["ok", "2.0 2.5 2.0\n"], probes[0]
    assert probes[1][:2] == ["ok", "imports ok\n"], probes[1]
    assert probes[2][1] == ("network reachable\n" if networked else "network unreachable\n"), probes[2]
    assert probes[3][:2] == ["ok", "wrote\n"], probes[3]
    if not networked:
        assert out["leaked"] == [], out["leaked"]
    assert out["statuses"].get("sandbox_error", 0) == 0 and out["statuses"].get("passed", 0) > 0
    assert out["replaced"] == 0  # no worker died or had to be replaced on the way
    assert out["statuses"].get("wrong_answer", 0) > 0
    assert out["agree"] >= 0.98 * out["rows"], (out["agree"], out["rows"])
    if reference is not None:  # the same verdict for every row as on the reference layout
        diff = [i for i, (a, b) in enumerate(zip(out["codes"], reference["codes"])) if a != b]
        assert not diff, f"{len(diff)} rows judged differently, e.g. row {diff[:5]}"


@pytest.fixture(scope="module")
def reference(layouts_root):
    """The host's Python, started from outside the checkout, with whatever isolation it finds."""
    out = _layout("host", layouts_root, sys.executable)
    _check(out, None, networked=out["level"] == "rlimits")
    return out


def test_layout_host_python_outside_the_checkout(reference):
    assert reference["se_gym"].startswith(str(REPO))


def test_layout_venv_under_tmp_non_editable_install_builds_the_suite(layouts_root, venv, reference):
    out = _layout("venv-tmp", layouts_root, venv, build=True)
    assert out["python"].startswith("/tmp/") and "site-packages" in out["se_gym"]  # installed, not the checkout
    _check(out, reference, networked=out["level"] == "rlimits")
    assert sum(out["suite"].values()) > 0
    assert out["dockerfile"]  # read from the installed package
    total, unique, libs = out["rootfs"]
    assert total == unique and libs > 0, out["rootfs"]


def test_layout_bwrap_hidden_from_path(layouts_root, reference):
    from se_gym.sandbox.local import unshare_status

    need(unshare_status()[0], f"unshare does not work here: {unshare_status()[1]}")
    out = _layout("no-bwrap", layouts_root, sys.executable, path=_path_without(layouts_root, "bwrap"))
    assert out["level"] == ("unshare" if os.getuid() == 0 else "userns")
    _check(out, reference)


def test_layout_neither_bwrap_nor_unshare(layouts_root, reference):
    out = _layout("rlimits", layouts_root, sys.executable, path=_path_without(layouts_root, "bwrap", "unshare"))
    assert out["level"] == "rlimits"
    _check(out, reference, networked=True)  # honest: the network stays, and it is said once on stderr
    assert out["stderr"].count("WARNING: programs can reach the network") == 1


@pytest.mark.parametrize("hide_bwrap", [False, True], ids=["bwrap", "no-bwrap"])
def test_layout_non_root_uid(layouts_root, venv, reference, hide_bwrap):
    if os.getuid() != 0:
        legit_skip("needs root to switch to a throwaway uid (this run is already non-root)")
    need(shutil.which("setpriv") is not None, "setpriv (util-linux) is missing")
    uid = _throwaway_uid()
    out = _layout(f"uid{uid}" + ("-no-bwrap" if hide_bwrap else ""), layouts_root, venv, uid=uid,
                  path=_path_without(layouts_root, "bwrap") if hide_bwrap else None)
    assert out["uid"] == uid
    assert out["level"] in (("userns", "rlimits") if hide_bwrap else ("bwrap", "userns", "rlimits"))
    _check(out, reference, networked=out["level"] == "rlimits")
