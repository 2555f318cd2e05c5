"""The adapters' shared batching thread (integrations/_common.BatchJudge): callers that give up,
and batches that fail, must not stop it serving everyone after them."""
from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from se_gym.integrations._common import BatchJudge, JudgeUnavailable
from se_gym.judge.types import JudgeError

WAIT_S = 20  # a bound for a dead dispatcher (the test fails instead of hanging), not a speed check


class GatedJudge:
    """Echoes each item as its verdict; a batch with ``"hold"`` in it waits for ``release``.
    ``"boom"`` fails its batch (and itself alone), ``"bad"`` is a malformed item (JudgeError)."""

    def __init__(self):
        self.release = threading.Event()
        self.holding = threading.Event()
        self.seen: list = []
        self.short = False  # return one verdict too few

    def judge_many(self, items):
        items = list(items)
        self.seen.extend(items)
        if "hold" in items:
            self.holding.set()
            assert self.release.wait(WAIT_S)
        if "bad" in items:
            raise JudgeError("item 0: expected (response, test_cases[, function_name[, expected]])")
        if "boom" in items:
            raise OSError("the sandbox pool is gone")
        out = [f"verdict:{i}" for i in items]
        return out[:-1] if self.short else out


@pytest.fixture
def gated():
    judge = GatedJudge()
    batcher = BatchJudge(judge, linger_s=0)
    yield judge, batcher
    judge.release.set()
    batcher.close()
    assert not batcher._thread.is_alive()


def test_a_cancelled_queued_call_is_skipped_and_the_next_caller_is_judged(gated):
    # a server cancels a step (its client left, a timeout, shutdown) while the step's item waits
    # behind a running batch
    judge, batcher = gated

    async def main():
        batcher.submit("hold")
        assert await asyncio.to_thread(judge.holding.wait, WAIT_S)
        task = asyncio.ensure_future(batcher.ajudge("gave-up"))
        await asyncio.sleep(0.05)  # queued behind the held batch
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.01)  # wrap_future cancels the item's future in a callback

    asyncio.run(main())
    judge.release.set()
    assert batcher.submit("next").result(timeout=WAIT_S) == "verdict:next"
    assert "gave-up" not in judge.seen  # given up before its batch started: not judged at all


def test_a_call_cancelled_while_judged_does_not_kill_the_dispatcher(gated):
    judge, batcher = gated

    async def main():
        task = asyncio.ensure_future(batcher.ajudge("hold"))
        assert await asyncio.to_thread(judge.holding.wait, WAIT_S)
        task.cancel()  # its batch is running: the verdict comes, and is dropped
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.01)

    asyncio.run(main())
    judge.release.set()
    assert batcher.submit("next").result(timeout=WAIT_S) == "verdict:next"
    assert asyncio.run(batcher.ajudge("async-next")) == "verdict:async-next"


def test_a_failed_batch_gives_its_callers_an_infrastructure_error_and_the_next_batch_is_judged(gated):
    judge, batcher = gated
    judge.release.set()
    boom, bad = batcher.submit("boom"), batcher.submit("bad")
    with pytest.raises(JudgeUnavailable, match="sandbox pool is gone"):
        boom.result(timeout=WAIT_S)
    with pytest.raises(JudgeError):  # a malformed item is the caller's own error
        bad.result(timeout=WAIT_S)
    assert batcher.submit("ok").result(timeout=WAIT_S) == "verdict:ok"


def test_a_lost_verdict_is_an_infrastructure_error_not_a_hang(gated):
    judge, batcher = gated
    judge.release.set()
    judge.short = True  # a judge that returns one verdict too few
    with pytest.raises(JudgeUnavailable):
        batcher.submit("lost").result(timeout=WAIT_S)
    judge.short = False
    assert batcher.submit("ok").result(timeout=WAIT_S) == "verdict:ok"


def test_cancelled_futures_from_another_thread_are_never_set():
    judge = GatedJudge()
    batcher = BatchJudge(judge, linger_s=0)
    try:
        batcher.submit("hold")
        assert judge.holding.wait(WAIT_S)
        futs = [batcher.submit(f"x{i}") for i in range(20)]
        for f in futs[::2]:
            assert f.cancel()
        judge.release.set()
        done, _ = concurrent.futures.wait(futs, timeout=WAIT_S)
        assert len(done) == 20
        assert [f.cancelled() for f in futs] == [i % 2 == 0 for i in range(20)]
        assert [f.result() for f in futs[1::2]] == [f"verdict:x{i}" for i in range(1, 20, 2)]
    finally:
        judge.release.set()
        batcher.close()


def test_a_long_lived_batcher_keeps_recent_batch_sizes_and_totals(gated):
    judge, batcher = gated
    judge.release.set()
    batcher.KEEP_SIZES = 8  # (a server keeps 10,000)
    for i in range(30):
        assert batcher.submit(f"x{i}").result(timeout=WAIT_S) == f"verdict:x{i}"
    assert 0 < len(batcher.batches) <= 8 and batcher.batches[-1] == 1
    assert batcher.totals == {"batches": 30, "items": 30, "max_batch": 1}
