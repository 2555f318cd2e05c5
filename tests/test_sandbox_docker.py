"""The docker backend against a real daemon: same verdicts as local on the same programs.

conftest's docker_daemon starts a daemon with scripts/docker_daemon.sh when none answers and that
is possible (root, dockerd installed), stops what it started, and skips with the reason otherwise."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import legit_skip, missing, started_docker_judge
from se_gym.sandbox import ExecStatus, Limits, make_sandbox

PROGRAMS = [
    "print('hello')",
    "import numpy as np; print(np.linalg.det(np.array([[1.0, 2.0], [3.0, 4.0]])).round(6))",
    "import os; os.write(3, b'RESULT'); print('x')",
    "raise ValueError('boom')",
    "import sys; sys.exit(4)",
    "while True: pass",
    "x = bytearray(10**11)",
    "while True: print('y' * 1000)",
    "import os\nwhile True:\n    os.fork()",
    "open('/etc/probe', 'w')",
    "import socket; socket.create_connection(('127.0.0.1', 1), timeout=1)",
    "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\ntime.sleep(60)\n",
]
LIMITS = Limits(wall_s=1.5, cpu_s=1.0, output_bytes=20_000, memory_mb=256)


@pytest.fixture(scope="module")
def daemon(docker_daemon):  # conftest's: starts (and afterwards stops) one when none answers
    yield


@pytest.fixture(scope="module")
def dbox(daemon):
    try:
        box = make_sandbox("docker", workers=2)
    except RuntimeError as exc:
        missing(f"docker backend unavailable: {exc}")
    with box:
        yield box


def test_same_verdicts_as_local(dbox):
    with make_sandbox("local", workers=2) as lbox:
        local = lbox.run(PROGRAMS, LIMITS)
    remote = dbox.run(PROGRAMS, LIMITS)
    assert [r.status for r in remote] == [r.status for r in local], [(p[:30], a.status, b.status) for p, a, b in zip(PROGRAMS, local, remote)]
    for a, b in zip(local, remote):
        if a.status in (ExecStatus.OK, ExecStatus.ERROR):
            assert (a.stdout, a.exit_code, a.channel) == (b.stdout, b.exit_code, b.channel)
    assert remote[2].channel == b"RESULT" and remote[0].backend == "docker"
    iso = dbox.isolation()
    assert iso["network"] is False and iso["program_uid"] != 0 and iso["numpy"].split(".")[0] >= "2"


# A program runs as the worker's own uid in a container: it must still not reach the worker's
# protocol pipe through /proc/1/fd (once it could, and its forged frame became its result).
FORGER = r"""
import json, os, struct
body = json.dumps({"status": "ok", "exit_code": 0, "signal": None, "stdout": "FORGED", "stderr": "",
                   "channel": "", "wall_s": 0.0, "cpu_s": 0.0, "truncated": False, "detail": "", "id": 0}).encode()
reached = []
for fd in range(64):
    try:
        w = os.open(f"/proc/1/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        continue
    try:
        os.write(w, struct.pack(">I", len(body)) + body)
        reached.append(fd)
    except OSError:
        pass
print("reached", reached)
"""


def test_a_program_cannot_forge_the_workers_reply(dbox):
    forged, after = dbox.run([FORGER, "print('next')"], LIMITS)
    assert forged.status is ExecStatus.OK and forged.stdout == "reached []\n", forged
    assert after.stdout == "next\n"


def test_the_library_dependence_check_runs_in_docker(daemon):
    """Strict's library dependence check (issue 42) in containers: the worker there hands each
    program's library mode to its server, the reference's record and the counterfactual runs alike
    (programs share the container's uid there: docs/security.md, what is left)."""
    from _dependence_corpus import backend_items, check_backend_verdicts
    from se_gym.library.writer import uses_server
    from se_gym.tasks.spec import load_task_spec

    if not uses_server("strict"):
        legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")
    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    with started_docker_judge(lib) as judge:
        assert judge.sandbox.name == "docker" and judge.sandbox.library_modes
        check_backend_verdicts(judge.judge_many(backend_items(tasks[0], lib)))


def test_containers_are_long_lived_and_removed(daemon):
    import docker

    client = docker.from_env()
    box = make_sandbox("docker", workers=1)
    label = box._label
    names = {r.worker for r in box.run(["print(1)"] * 3)}
    assert len(names) == 1  # one container served all three
    assert len(client.containers.list(filters={"label": f"se-gym-sandbox={label}"})) == 1
    box.close()
    assert client.containers.list(all=True, filters={"label": f"se-gym-sandbox={label}"}) == []


def test_rootfs_tar_lists_every_path_once_and_the_dockerfile_ships_with_the_package(tmp_path):
    """No daemon needed.  Docker refuses a layer with duplicate paths; the rootfs used to add
    numpy.libs twice for a venv (the venv layout of tests/test_layouts.py builds one for real)."""
    import tarfile

    from se_gym.sandbox import docker as dk

    assert dk._DOCKERFILE.is_file() and dk._DOCKERFILE.parent == Path(dk.__file__).resolve().parent
    with tarfile.open(dk.base_rootfs_tar(tmp_path / "rootfs.tar")) as tar:
        names = [os.path.normpath(n) for n in tar.getnames()]  # Docker sees a/b/../c as a/c
    assert len(names) == len(set(names))
    assert any(n.endswith("/numpy/__init__.py") for n in names)
