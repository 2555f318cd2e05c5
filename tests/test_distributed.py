"""The Ray actor pool on a real local Ray cluster: order, actor deaths, clean shutdown, and the
2-actor rollout (tiny model, hf backend) against the single-process one.

Ray start-up costs seconds, so the module shares one cluster; the CLI test starts its own (in a
child process) to check that the command leaves no Ray process behind.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time

import pytest

from conftest import need_module

ray = need_module("ray", "Ray is not installed (bash scripts/setup/ray.sh)")

from _ray_helpers import local_cluster, wait_gone  # noqa: E402
from _rollout_helpers import build_tiny, cli, comparable, config, require_pipeline, rows  # noqa: E402
from se_gym.distributed import ActorPoolError, OrderedActorPool, run_ordered  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with local_cluster("sgray", sys.modules[__name__]) as temp:
        assert os.environ.get("RAY_AUTH_MODE") == "token"  # what Ray sets for a local cluster of its own
        yield temp


class Square:
    """A cheap worker: later items finish sooner, so out-of-order completion is the norm."""

    def __init__(self, factor: int):
        self.factor = factor

    def run(self, item: int) -> tuple[int, int]:
        time.sleep(0.02 * (5 - item % 5))
        return item * self.factor, os.getpid()


class Broken:
    def __init__(self):
        raise RuntimeError("no model here")

    def run(self, item):  # pragma: no cover - never reached
        return item


def test_pool_yields_in_order_and_uses_every_actor(cluster):
    with OrderedActorPool(Square, (3,), num_actors=2) as pool:
        out = list(pool.map_ordered(list(range(30))))
    assert [v for v, _ in out] == [3 * i for i in range(30)]
    assert len({pid for _, pid in out}) == 2
    assert ray.is_initialized()  # the pool joined the module's cluster and left it running


def test_pool_redoes_the_work_of_a_killed_actor(cluster):
    with OrderedActorPool(Square, (2,), num_actors=2) as pool:
        seen = []
        for i, (value, _) in enumerate(pool.map_ordered(list(range(24)))):
            seen.append(value)
            if i == 2:
                ray.kill(pool.actors[0], no_restart=True)  # dies with work in flight
        assert pool.replacements >= 1
    assert seen == [2 * i for i in range(24)]


def test_pool_gives_up_when_actors_cannot_start(cluster):
    with pytest.raises(ActorPoolError, match="died"):
        list(run_ordered(Broken, (), [1, 2, 3], num_actors=1))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    require_pipeline()
    return build_tiny(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def single(tiny, tmp_path_factory):
    """The single-process rollout every pooled run must reproduce (6 tasks x 2 samples, 6 batches)."""
    from se_gym.llm.rollout import rollout

    cfg = config(tiny, limit=6, batch_size=1)
    path = tmp_path_factory.mktemp("single") / "single.jsonl"
    rollout(cfg, path, progress=False)
    return cfg, rows(path)


def test_two_actor_rollout_equals_single_process(cluster, single, tmp_path):
    from se_gym.llm.rollout import rollout

    cfg, expected = single
    pooled = tmp_path / "ray.jsonl"
    stats = rollout(cfg, pooled, ray_actors=2, progress=False)
    assert stats.rows_written == len(expected) == 12
    assert [comparable(r) for r in rows(pooled)] == [comparable(r) for r in expected]


def test_rollout_pool_survives_a_killed_actor(cluster, single):
    import threading

    from se_gym.library import from_spec
    from se_gym.llm.rollout import RolloutWorker, load_tasks, make_batches

    cfg, expected = single
    batches = make_batches(load_tasks(cfg.tasks, cfg.split, from_spec(cfg.library), cfg.limit), cfg.batch_size)
    killed: list[int] = []

    def kill_a_busy_actor(pool: OrderedActorPool) -> None:
        # the moment an actor holds work (it is still loading its model then), kill it
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            busy = pool.busy()
            if busy:
                killed.append(busy[-1])
                ray.kill(pool.actors[busy[-1]], no_restart=True)
            time.sleep(0.005)

    with OrderedActorPool(RolloutWorker, (cfg,), num_actors=2, in_flight=2) as pool:
        killer = threading.Thread(target=kill_a_busy_actor, args=(pool,))
        killer.start()
        got = [row for result in pool.map_ordered(batches) for row in result["rows"]]
        killer.join()
        assert killed and pool.replacements >= 1
    assert [comparable(r) for r in got] == [comparable(r) for r in expected]


def test_cli_ray_rollout_leaves_no_process_behind(tiny, tmp_path):
    # a Ray cluster of its own, started and stopped by the command in a child process
    temp = tempfile.mkdtemp(prefix="sgcli", dir="/tmp")
    out = tmp_path / "cli.jsonl"
    try:
        proc = cli(["rollout", "--model", str(tiny), "--backend", "hf", "--tasks", "builtin", "--limit", "2",
                    "--n", "2", "--max-tokens", "16", "--seed", "1", "--batch-size", "1", "--out", str(out),
                    "--ray-actors", "2", "--no-progress"], env={"RAY_TMPDIR": temp})
        assert proc.wait(timeout=180) == 0
        assert len(rows(out)) == 4
        assert not wait_gone(temp), "the rollout command left Ray processes running"
    finally:
        shutil.rmtree(temp, ignore_errors=True)
