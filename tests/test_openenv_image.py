"""The OpenEnv container (sandbox/openenv): built offline by se_gym.integrations.openenv_image on
the sandbox image, run with ``--network host`` on a free port of 127.0.0.1, and driven by
openenv-core's own client, in four ways: with Docker's defaults (the sandbox inside falls back to
rlimits: Docker's seccomp profile refuses namespaces), with --cap-add SYS_ADMIN (unshare), with
what bubblewrap needs (SYS_ADMIN, NET_ADMIN, seccomp=unconfined: bwrap), and started as OpenEnv's
runtimes start an environment.  Either way the judged
programs run in sandbox workers: a program sees a private uid, not the server's root.  Containers
are removed afterwards, and the daemon stopped when this module started it (conftest's docker_daemon).

The first build takes minutes (it validates the default task suite through the judge); a second
call with nothing changed builds nothing (the tag is a hash of the inputs)."""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import REPO, need, need_module
from se_gym.tasks import builtin_tasks

TASKS = builtin_tasks("single_test", seed=0)
# the answer of TASKS[i] with a first line that fails unless the program runs as another uid than
# the server's (root in the container): only a sandbox worker gives it one
PROBE = "import os\nassert os.getuid() {op} 0, 'judged as uid %d' % os.getuid()\n"
# ... and one that fails when the program can reach the server's port (so the network)
NET_PROBE = ("import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=1).close()\n    reached = True\n"
             "except OSError:\n    reached = False\nassert not reached, 'network reachable'\n")
# how the container runs: Docker's defaults (its seccomp profile refuses namespaces: the sandbox
# inside falls back to rlimits), with what bubblewrap needs inside a container, or started the way
# OpenEnv's runtimes start an environment (uvicorn on openenv.yaml's `app`, from /app/env)
RUN_ARGS = {"default": [], "sys-admin": ["--cap-add", "SYS_ADMIN"],
            "namespaces": ["--cap-add", "SYS_ADMIN", "--cap-add", "NET_ADMIN", "--security-opt", "seccomp=unconfined"]}
LEVEL = {"default": "rlimits", "sys-admin": "unshare", "namespaces": "bwrap", "openenv-runtime": "rlimits"}
MODES = list(LEVEL)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _ok(task, head: str = "") -> str:
    return f"```python\n{head}{task.library_solution}\n```"


@pytest.fixture(scope="module")
def image(docker_daemon):
    need_module("openenv.core", "the image installs the openenv extra at the versions installed here")
    from se_gym.integrations.openenv_image import ensure_openenv_image

    tag = ensure_openenv_image(tag="se-gym/openenv:test", quiet=True)
    again = ensure_openenv_image(tag="se-gym/openenv:test", quiet=True)  # nothing changed: nothing built
    assert again == tag
    return tag


@pytest.fixture(scope="module", params=MODES)
def server(image, request):
    need(shutil.which("docker") is not None, "the docker CLI runs the container")
    mode = request.param
    if mode == "namespaces":
        need(shutil.which("bwrap") is not None, "the image copies bubblewrap from this machine (apt-get install bubblewrap)")
    if mode == "sys-admin":
        need(shutil.which("unshare") is not None, "the image copies util-linux unshare from this machine")
    port = _free_port()
    name = f"se-gym-openenv-test-{os.getpid()}-{mode}"
    # the sebench profile, so that a program may import os (the uid probe); max 2 turns: feedback
    if mode == "openenv-runtime":
        import yaml

        app = yaml.safe_load((REPO / "sandbox" / "openenv" / "openenv.yaml").read_text())["app"]
        cmd = ["-w", "/app/env", "-e", 'SE_GYM_OPENENV={"profile": "sebench", "max_turns": 2}', "--entrypoint", "python3", image,
               "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)]
    else:
        cmd = [*RUN_ARGS[mode], image,
               "--host", "127.0.0.1", "--port", str(port), "--profile", "sebench", "--max-turns", "2"]
    run = subprocess.run(["docker", "run", "-d", "--name", name, "--network", "host", *cmd], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + 300  # a bound for a hung server, not a speed assertion
        while True:
            state = subprocess.run(["docker", "inspect", "-f", "{{.State.Running}}", name], capture_output=True, text=True).stdout.strip()
            logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True)
            assert state == "true", logs.stdout + logs.stderr
            try:
                if _get(url + "/health")["status"] == "healthy":
                    break
            except OSError:
                pass
            assert time.monotonic() < end, "the container's server did not answer /health"
            time.sleep(0.5)
        yield url, name, mode, port
    finally:
        logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True)
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=120)
        gone = subprocess.run(["docker", "ps", "-a", "-q", "-f", f"name={name}"], capture_output=True, text=True).stdout.strip()
        assert gone == "", "the container was not removed"
    assert "Traceback" not in logs.stdout + logs.stderr, (logs.stdout + logs.stderr)[-3000:]


def _client(url):
    from se_gym.integrations.openenv import SEBenchClient

    return SEBenchClient(base_url=url, message_timeout_s=120)


def test_health_and_typed_schema(server):
    url = server[0]
    assert _get(url + "/health")["status"] == "healthy"
    schema = _get(url + "/schema")
    assert schema["action"]["properties"]["answer"]["type"] == "string"


def test_oracle_answer_gets_1_and_a_wrong_one_0(server):
    from se_gym.integrations.openenv import SEBenchAction

    url = server[0]
    t = TASKS[5]
    with _client(url).sync() as env:
        r = env.reset(task_id=t.id)
        assert r.done is False and r.observation.task_id == t.id and t.query in r.observation.prompt
        r = env.step(SEBenchAction(answer=_ok(t)))
        assert (r.reward, r.done, r.observation.status) == (1.0, True, "passed")
        env.reset(task_id=t.id)
        r = env.step(SEBenchAction(answer="```python\ndef solve(*args):\n    return [0.0]\n```"))
        assert r.reward == 0.0 and r.done is False and "attempt 1 of 2" in r.observation.feedback
        r = env.step(SEBenchAction(answer="no code at all"))
        assert r.reward == 0.0 and r.done is True
        assert env.state().done is True


def test_judged_programs_run_in_the_sandbox_not_in_the_server(server):
    from se_gym.integrations.openenv import SEBenchAction

    url, name, mode, port = server
    t = TASKS[5]
    with _client(url).sync() as env:
        env.reset(task_id=t.id)
        r = env.step(SEBenchAction(answer=_ok(t, PROBE.format(op="!="))))
        assert r.reward == 1.0, r.observation.feedback  # not root: a sandbox worker's private uid
        env.reset(task_id=t.id)
        r = env.step(SEBenchAction(answer=_ok(t, PROBE.format(op="=="))))
        assert r.reward == 0.0 and "judged as uid" in r.observation.feedback
        env.reset(task_id=t.id)
        net = env.step(SEBenchAction(answer=_ok(t, NET_PROBE.format(port=port))))
    # the server's processes: it runs as root, its sandbox workers hold the judged programs
    # ww: full command lines (ps cuts them to 80 columns when not writing to a terminal)
    top = subprocess.run(["docker", "top", name, "-ww", "-eo", "pid,uid,args"], capture_output=True, text=True, timeout=60)
    server_cmd = "uvicorn se_gym.integrations.openenv_app:app" if mode == "openenv-runtime" else "se_gym.cli serve openenv"
    # the workers run worker.py's compiled form from se-gym's cache (worker-<tag>-<hash>.pyc) or worker.py
    workers = re.findall(r"\bworker(?:-[\w-]+)?\.pyc?\b", top.stdout)
    assert top.returncode == 0 and server_cmd in top.stdout and workers, top.stdout
    info = subprocess.run(["docker", "exec", name, "se-gym", "sandbox", "info", "--json"], capture_output=True, text=True, timeout=300)
    assert info.returncode == 0, info.stderr
    iso = json.loads(info.stdout)
    print(f"\n[{mode}] isolation inside the container: {iso['level']} ({iso['reason']}); "
          f"a judged program reaching 127.0.0.1:{port}: {'no' if net.reward == 1.0 else 'YES'}")
    assert iso["backend"] == "local" and iso["program_uid"] == "private per worker" and iso["no_new_privs"] is True
    assert iso["level"] == LEVEL[mode], iso["reason"]
    if iso["level"] == "rlimits":  # Docker's seccomp profile refuses namespaces; with --network host programs reach the host's
        assert iso["network"] is True
        assert net.reward == 0.0 and "network reachable" in net.observation.feedback
    else:  # bubblewrap or unshare: no network, a read-only view of the files
        assert iso["network"] is False and iso["mount_namespace"] is True
        assert net.reward == 1.0, net.observation.feedback


def test_openenv_from_docker_image_starts_and_removes_the_container(image):
    """openenv-core's own ``EnvClient.from_docker_image`` on the built image: with openenv-core's
    provider where the daemon has a bridge network (``-p <port>:8000``), else (``dockerd
    --bridge=none``, as scripts/docker_daemon.sh starts it) with se-gym's provider that shares the
    host's network; ``close()`` removes the container."""
    import asyncio

    from openenv.core.containers.runtime import LocalDockerProvider

    from se_gym.integrations.openenv import HostNetworkDockerProvider, SEBenchAction, SEBenchClient

    bridge = subprocess.run(["docker", "network", "ls", "-q", "--filter", "name=^bridge$"], capture_output=True, text=True).stdout.strip()
    provider = LocalDockerProvider() if bridge else HostNetworkDockerProvider()
    t, u = TASKS[1], TASKS[2]

    async def main():
        env = await SEBenchClient.from_docker_image(image, provider=provider)
        cid = provider._container_id
        try:
            await env.reset(task_id=t.id)
            ok = await env.step(SEBenchAction(answer=_ok(t)))
            await env.reset(task_id=u.id)
            wrong = await env.step(SEBenchAction(answer=_ok(t)))
        finally:
            await env.close()
        return cid, ok, wrong

    cid, ok, wrong = asyncio.run(main())
    assert (ok.reward, ok.done, ok.observation.status) == (1.0, True, "passed")
    assert wrong.reward == 0.0 and wrong.done is True and wrong.observation.task_id == u.id
    left = subprocess.run(["docker", "ps", "-a", "-q", "--filter", f"id={cid}"], capture_output=True, text=True).stdout.strip()
    assert cid and left == "", "the container was not removed"
    # the name AutoEnv starts for "se_gym" when no image is given is the same image
    ids = [subprocess.run(["docker", "image", "inspect", "-f", "{{.Id}}", name], capture_output=True, text=True).stdout.strip()
           for name in (image, "se-gym-env:latest")]
    assert ids[0] and ids[0] == ids[1]


def test_build_without_a_daemon_says_so_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["DOCKER_HOST"] = f"unix://{tmp_path}/no-daemon.sock"
    out = subprocess.run([sys.executable, "-m", "se_gym.cli", "serve", "openenv", "--build-image"],
                         capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert out.returncode != 0 and "no Docker daemon answers" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
