"""``se_gym.testing.check_sandbox`` (issue 48): every backend of the package passes it, on real
processes (local, docker, a real ``se-gym sandbox serve`` over http in both protocols, a real Ray
cluster), and it finds each defect planted in a backend written here: a box that loses the result
channel while saying it has one, one that scores its own failure as a wrong answer, one that blames
itself for a program's crash, and one that ignores the time limit."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need_module
from se_gym.library import mint
from se_gym.sandbox import ExecStatus, Limits, Sandbox, make_sandbox
from se_gym.sandbox.local import LocalSandbox
from se_gym.testing import ConformanceError, check_sandbox

REPO = Path(__file__).resolve().parents[1]
LIB = mint(0)


def test_the_local_backend_passes_every_check():
    report = check_sandbox("local")
    assert report.ok and not report.skipped, str(report)
    assert report.passed[:2] == ["build", "isolation"] and "infrastructure" in report.passed
    assert report.notes["channel"] == "has_channel=True" and report.notes["infrastructure"].startswith("sandbox_error")


def test_a_backend_in_a_file_passes_by_its_file_py_class_spec():
    # tests/plugins/subprocess_sandbox.py: a fresh interpreter per program, no result channel
    report = check_sandbox(f"{REPO}/tests/plugins/subprocess_sandbox.py:SubprocessSandbox")
    assert report.ok and report.notes["channel"] == "has_channel=False", str(report)


def test_a_box_given_as_an_object_is_checked_and_left_open():
    with make_sandbox("local", pythonpath=[str(LIB.materialize("sebench", docs=False))], preload=["numpy", LIB.package]) as box:
        report = check_sandbox(box, library=LIB)
        assert "judge: reference" in report.passed
        assert [name for name, _ in report.skipped] == ["infrastructure"]  # closing it is the checker's only with a factory
        assert not box.closed and box.run(["print(1)"])[0].stdout == "1\n"
        bare = check_sandbox(box)  # no library: nothing to judge against
        assert ("judge", "give library= (the library this box's programs import) to judge answers through it") in bare.skipped


def test_the_docker_backend_passes(docker_daemon):
    report = check_sandbox("docker", workers=1)
    assert report.ok and not report.skipped, str(report)


@pytest.fixture(scope="module")
def server():
    """`se-gym sandbox serve --library 0` in its own process, as a user runs it."""
    from _procs import sandbox_server

    with sandbox_server("--library", "0", workers=2) as url:
        yield url


def test_the_http_backend_passes_against_a_se_gym_server(server):
    report = check_sandbox("http", library=LIB, options={"url": server})
    assert report.ok and not report.skipped and report.notes["channel"] == "has_channel=True", str(report)


def test_the_http_backend_passes_in_the_official_protocol_on_what_it_can_report(server):
    # POST /run gives stdout and stderr only: no exit status, no channel; the judge still scores right
    report = check_sandbox("http", library=LIB, options={"url": server + "/run", "batch": False})
    assert report.ok and not report.skipped, str(report)
    assert report.notes["channel"] == "has_channel=False" and report.notes["crash"].startswith("no exit status reported")


def test_the_ray_backend_passes_on_a_local_cluster():
    need_module("ray", "the ray sandbox needs ray (bash scripts/setup/ray.sh)")
    code = ("from se_gym.testing import check_sandbox\nfrom se_gym.library import mint\nlib = mint(0)\n"
            "r = check_sandbox('ray', library=lib, options={'library': lib, 'profile': 'sebench', 'num_cpus': 1}, workers=2)\n"
            "print('OK', r.ok, len(r.passed), len(r.skipped))\n")
    # a fresh interpreter with Ray's token auth off, like the cluster it starts (see tests/test_ray_sandbox.py)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})
    assert done.returncode == 0 and "OK True 13 0" in done.stdout, (done.stdout[-3000:], done.stderr[-3000:])


# ------------------------------------------------------------------ planted defects, one per check
class Planted(Sandbox):
    """The local backend with one thing wrong (``alter`` changes each result)."""

    name = "planted"

    def __init__(self, pythonpath=(), preload=(), workers=None, **options):
        super().__init__()
        self.inner = LocalSandbox(pythonpath=pythonpath, preload=preload, workers=workers)

    def isolation(self):
        return self.inner.isolation()

    def run(self, programs, limits=None):
        return [self.alter(r) for r in self.inner.run(programs, self.limits(limits))]

    def limits(self, limits):
        return limits

    def alter(self, r):
        return r

    def _close(self):
        self.inner.close()


class LosesTheChannel(Planted):
    """has_channel left at its default (True), but fd 3 never reaches the result."""

    def alter(self, r):
        return dataclasses.replace(r, channel=None)


class BlamesTheAnswer(Planted):
    """Reports its own failures (a closed pool, a dead worker) as the program's error."""

    def alter(self, r):
        return dataclasses.replace(r, status=ExecStatus.ERROR, exit_code=1) if r.status is ExecStatus.SANDBOX_ERROR else r


class ExcusesCrashes(Planted):
    """Reports a program killed by its own signal as an infrastructure failure."""

    def alter(self, r):
        return dataclasses.replace(r, status=ExecStatus.SANDBOX_ERROR, detail="worker lost") if r.signal else r


class IgnoresTheTimeLimit(Planted):
    """Runs every program under a minute's limit, whatever it was asked."""

    def limits(self, limits):
        return Limits(wall_s=60, cpu_s=60)


def _failure(cls, **kwargs) -> ConformanceError:
    with pytest.raises(ConformanceError) as caught:
        check_sandbox(cls, **kwargs)
    return caught.value


def test_a_box_that_loses_the_channel_is_caught():
    err = _failure(LosesTheChannel)
    assert err.check == "channel" and "has_channel is True" in str(err) and "has_channel returning False" in str(err)
    # and through the judge: every right answer would be an infrastructure failure
    assert dict(err.report.failed)["judge: reference"].startswith("a right answer was judged sandbox_error")


def test_a_backend_without_fd_3_that_keeps_has_channel_at_its_default_is_caught():
    # the case issue 48 names: a new backend forgets to say it has no result channel
    sys.path.insert(0, str(REPO / "tests" / "plugins"))
    from subprocess_sandbox import SubprocessSandbox

    class Forgetful(SubprocessSandbox):
        has_channel = Sandbox.has_channel  # the contract's default (True); no fd 3 reaches the program

    report = check_sandbox(Forgetful, raises=False)
    failed = dict(report.failed)
    assert report.failed[0][0] == "channel" and "a program writing to fd 3 ran with status error" in failed["channel"]
    assert failed["judge: reference"].startswith("a right answer was judged sandbox_error")  # every right answer: unscored


def test_a_box_that_scores_its_own_failure_as_a_wrong_answer_is_caught():
    err = _failure(BlamesTheAnswer)
    assert err.check == "infrastructure" and [n for n, _ in err.report.failed] == ["infrastructure"]
    assert "reported status error" in str(err) and "must be sandbox_error" in str(err)


def test_a_box_that_blames_itself_for_a_programs_crash_is_caught():
    err = _failure(ExcusesCrashes)
    assert err.check == "crash" and "crashed itself (os.abort()) was reported sandbox_error" in str(err)
    assert "judge: crash" in dict(err.report.failed)  # the judge then calls the crashing answer not the answer's fault


def test_a_box_that_ignores_the_time_limit_is_caught():
    err = _failure(IgnoresTheTimeLimit, slack_s=2.0)
    assert err.check == "timeout" and "expected status timeout" in str(err)
    # its judge check is not run: an answer that never returns would hold the checker for ever
    assert ("judge: timeout", "needs timeout") in err.report.skipped


def test_the_report_comes_back_instead_with_raises_false():
    report = check_sandbox(LosesTheChannel, raises=False, judge=False)
    assert not report.ok and report.failed[0][0] == "channel" and "FAILED  channel" in str(report)
    with pytest.raises(ConformanceError, match="sandbox LosesTheChannel fails check 'channel'"):
        report.raise_for_failures()


def test_a_factory_that_does_not_build_a_sandbox_fails_the_build_check():
    report = check_sandbox(lambda **kw: object(), raises=False)
    assert report.failed == [("build", "the factory built object, not a se_gym.sandbox.Sandbox")]
    assert check_sandbox("nope", raises=False).failed[0][0] == "build"


def test_a_backend_whose_declarations_promise_what_it_does_not_take_is_caught():
    # it declares warm-up code (a judge will pass warmup=) but its constructor takes none: every judge's start would fail
    class PromisesWarmUp(LocalSandbox):
        def __init__(self, pythonpath=(), preload=("numpy",), workers=None, ready="all"):
            super().__init__(pythonpath, preload, workers, ready=ready)

    report = check_sandbox(PromisesWarmUp, raises=False, judge=False)
    assert report.failed[0][0] == "build"  # the checker builds it as a judge does: with warmup=

    class DeclaresNoWarmUp(PromisesWarmUp):
        warmup = False
        pooled_start = "launch"
        cluster = True  # (promises address=, which it does not take)

    failed = dict(check_sandbox(DeclaresNoWarmUp, raises=False, judge=False).failed)
    assert list(failed) == ["declarations"] and "takes no address" in failed["declarations"]


def test_every_backend_s_declarations_are_checked():
    report = check_sandbox("local", judge=False)
    assert "declarations" in report.passed and "library_as='path'" in report.notes["declarations"]
