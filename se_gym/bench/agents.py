"""Building the agents of a benchmark: specs, options (checked against the constructor before any
work), the model handed to them, and the token counter around their sampler."""
from __future__ import annotations

import inspect
import json
import logging
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..agents import AGENTS, Agent
from ..errors import CLIError
from ..registry import RegistryError

log = logging.getLogger(__name__)
INJECTED = ("model", "policy", "sampler")  # constructor parameters the benchmark fills, never options


@dataclass(frozen=True)
class AgentSpec:
    """One ``--agent``: its label in the report, the spec typed, and its options.

    Attributes:
        label: its name in the report (the spec's last part; ``#2`` and on for repeats).
        spec: what was typed (a registered name, ``module:Class``, ``file.py:Class``, ``http:URL``).
        options: the constructor's options.
    """

    label: str
    spec: str
    options: Mapping[str, Any]


def parse_value(text: str) -> Any:
    """JSON when it parses (``3``, ``true``, ``[1, 2]``), else the string itself.

    Args:
        text: an option's value as typed.
    """
    try:
        return json.loads(text)
    except ValueError:
        return text


def label_of(spec: str) -> str:
    if spec.startswith(("http:", "https:")):
        return "http"
    if ":" in spec:
        return spec.rpartition(":")[2].split(".")[-1]
    return spec


def agent_specs(agents: Sequence[str], options: Sequence[str], table: Mapping[str, Mapping[str, Any]] = (),
                defaults: Mapping[str, Mapping[str, Any]] = ()) -> list[AgentSpec]:
    """The agents with their options: ``defaults`` (per label) < ``table`` (config file) < ``KEY=VALUE``
    (every agent) < ``LABEL/KEY=VALUE`` (one agent).

    Args:
        agents: the ``--agent`` specs, in order.
        options: the ``--agent-option`` items.
        table: per label, options from a config file.
        defaults: per label, options the run brings (``--quick``).

    Raises:
        CLIError: no agent, an option without ``=``, or a label that names no agent.
    """
    if not agents:
        raise CLIError("no agent: give --agent NAME (built-ins: " + ", ".join(AGENTS.names()) + ") or use --quick")
    labels, seen = [], {}
    for spec in agents:
        base = label_of(spec)
        seen[base] = seen.get(base, 0) + 1
        labels.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    per = {lab: {**dict(dict(defaults).get(lab.split("#")[0], {})), **dict(dict(table).get(lab, {}))} for lab in labels}
    for item in options:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise CLIError(f"--agent-option {item!r}: expected KEY=VALUE or LABEL/KEY=VALUE")
        target, slash, name = key.rpartition("/")
        if slash and target not in per:
            raise CLIError(f"--agent-option {item!r}: no agent labelled {target!r} (labels: {', '.join(labels)})")
        for lab in ([target] if slash else labels):
            per[lab][name] = parse_value(value)
    unknown = sorted(set(dict(table)) - set(labels))
    if unknown:
        raise CLIError(f"agent_options names no agent {unknown[0]!r} (labels: {', '.join(labels)})")
    return [AgentSpec(lab, spec, per[lab]) for lab, spec in zip(labels, agents)]


def agent_class(spec: str) -> type:
    """The Agent subclass behind ``spec`` (``http:URL`` is the reference HTTP client).

    Args:
        spec: a registered name, ``module:Class``, ``file.py:Class`` or ``http:URL``.

    Raises:
        CLIError: a bad path or module, a missing attribute, or a class that is not an Agent.
    """
    if spec.startswith(("http:", "https:")):
        from .http import HTTPAgent

        return HTTPAgent
    try:
        return AGENTS.load(spec)
    except RegistryError as exc:
        raise CLIError(str(exc)) from None


def check_options(label: str, cls: type, options: Mapping[str, Any], injected: Sequence[str]) -> None:
    """Refuse, before any work, an option the constructor does not take or a required one not given.

    Args:
        label: the agent's label, for messages.
        cls: its class.
        options: the options given.
        injected: the constructor parameters the benchmark fills (``model``, ``policy``).

    Raises:
        CLIError: an unknown, reserved or missing option.
    """
    params = inspect.signature(cls).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    named = {n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    reserved = sorted(set(options) & set(INJECTED))
    if reserved:
        raise CLIError(f"agent {label}: option {reserved[0]!r} is given by the benchmark (--model, --backend), not an option")
    unknown = sorted(set(options) - named) if not takes_any else []
    if unknown:
        raise CLIError(f"agent {label}: unknown option {unknown[0]!r}; {cls.__name__} takes: "
                       + (", ".join(sorted(named - set(INJECTED))) or "no options"))
    missing = [n for n, p in params.items() if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               and n not in options and n not in injected]
    if missing:
        raise CLIError(f"agent {label}: missing option {missing[0]!r} (give --agent-option {label}/{missing[0]}=VALUE)")


def wants(cls: type, name: str) -> bool:
    return name in inspect.signature(cls).parameters


class CountingSampler:
    """Wraps an agent's sampler and counts the tokens of the prompts and answers that pass through it.

    Args:
        inner: the agent's sampler.
        count: text -> its number of tokens.
    """

    def __init__(self, inner: Any, count):
        self.inner, self.count = inner, count
        self.prompt_tokens = self.completion_tokens = self.answers = 0

    def __getattr__(self, name: str) -> Any:  # sync(), version, ... of the wrapped sampler
        return getattr(self.inner, name)

    def _tally(self, prompts, groups, texts) -> None:
        self.prompt_tokens += sum(self.count(p) * len(g) for p, g in zip(prompts, groups))
        self.completion_tokens += sum(self.count(t) for t in texts)
        self.answers += sum(len(g) for g in groups)

    def sample(self, prompts, n, temperature, max_new_tokens):
        """The inner sampler's answers, counted.

        Args:
            prompts: the prompts.
            n: samples per prompt.
            temperature: sampling temperature.
            max_new_tokens: the longest sample.
        """
        groups = self.inner.sample(list(prompts), n, temperature, max_new_tokens)
        self._tally(prompts, groups, [t for g in groups for t in g])
        return groups

    def sample_records(self, prompts, n, temperature, max_new_tokens):
        """The inner sampler's answer records, counted.

        Args:
            prompts: the prompts.
            n: samples per prompt.
            temperature: sampling temperature.
            max_new_tokens: the longest sample.
        """
        groups = self.inner.sample_records(list(prompts), n, temperature, max_new_tokens)
        self._tally(prompts, groups, [r["text"] for g in groups for r in g])
        return groups

    def take(self) -> tuple[int, int]:
        """(prompt, completion) tokens since the last take."""
        out = (self.prompt_tokens, self.completion_tokens)
        self.prompt_tokens = self.completion_tokens = self.answers = 0
        return out


def token_counter(tokenizer: Any):
    """Tokens of a text with ``tokenizer``; without one, an estimate of 4 characters a token."""
    if tokenizer is not None:
        return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])
    return lambda text: (len(text) + 3) // 4


class Models:
    """The model the agents share (``model``) and fresh trainable copies (``policy``), per backend.

    Args:
        path: the model (a folder or a hub id; None: agents that need one are refused).
        backend: ``hf``, ``vllm`` or ``openai``.
        device: where a policy is loaded (None: the default).
        gpu_memory_utilization: vLLM's share of the GPU.
        float32: load in float32 (the tiny models on a CPU).
    """

    def __init__(self, path: str | None, backend: str, device: str | None = None, gpu_memory_utilization: float = 0.5,
                 float32: bool = False):
        self.path, self.backend, self.device = path, backend, device
        self.gpu_memory_utilization, self.float32 = gpu_memory_utilization, float32
        self._shared: Any = None
        self._engine: Any = None

    def _require_torch(self, label: str) -> None:
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError:
            raise CLIError(f"agent {label} trains weights and needs torch and transformers: pip install 'se-gym[train]'") from None

    def _policy(self):
        from ..training.policy import Policy

        return Policy.from_pretrained(self.path, device=self.device, **({"dtype": "float32"} if self.float32 else {}))

    def _generator(self):
        if self._engine is None:
            from ..llm import make_generator

            options = {"gpu_memory_utilization": self.gpu_memory_utilization} if self.backend == "vllm" else {}
            if self.backend == "vllm" and self.float32:
                options["dtype"] = "float32"
            try:
                self._engine = make_generator(self.backend, str(self.path), **options)
            except (ValueError, ImportError) as exc:  # no server URL, no vllm: say so in one line
                raise CLIError(f"--backend {self.backend}: {exc}") from None
        return self._engine

    def shared(self, label: str):
        """The model the agents share (loaded on first use): a policy on ``hf``, else a generator.

        Args:
            label: the agent asking, for messages.

        Raises:
            CLIError: no ``--model``, or torch missing for ``hf``.
        """
        if self.path is None:
            raise CLIError(f"agent {label} answers with a model: give --model (or use --quick)")
        if self._shared is None:
            if self.backend == "hf":
                self._require_torch(label)
                self._shared = self._policy()
            else:
                self._shared = self._generator()
        return self._shared

    def trainable(self, label: str) -> dict:
        """``policy`` (and with vLLM, a ``sampler`` that syncs the engine to it) for a learner.

        Args:
            label: the agent asking, for messages.

        Raises:
            CLIError: no ``--model``, a backend that cannot train (openai), or torch missing.
        """
        if self.path is None:
            raise CLIError(f"agent {label} trains a model: give --model (or use --quick)")
        if self.backend == "openai":
            raise CLIError(f"agent {label} trains weights, which an OpenAI-compatible server does not expose: use --backend hf or vllm")
        self._require_torch(label)
        policy = self._policy()
        if self.backend != "vllm":
            return {"policy": policy}
        from ..training.rl import GeneratorSampler

        return {"policy": policy, "sampler": GeneratorSampler(self._generator(), model=policy.model)}

    def gpus(self) -> int:
        """GPUs the agents' model runs on: 1 on a CUDA machine (one process, one device), 0 on a CPU or
        behind an OpenAI-compatible server (its GPUs are not this run's to count)."""
        if self.backend == "openai" or (self.device or "").startswith("cpu"):
            return 0
        try:
            import torch
        except ImportError:
            return 0
        return 1 if torch.cuda.is_available() else 0

    def tokenizer(self):
        """The shared model's tokenizer (None before one is loaded, or when it has none)."""
        shared = self._shared or self._engine
        return getattr(shared, "tokenizer", None) if shared is not None else None

    def close(self) -> None:
        """Close the generation engine, if one was started."""
        if self._engine is not None and hasattr(self._engine, "close"):
            self._engine.close()
        self._engine = self._shared = None


def _url_options(spec: AgentSpec, cls: type) -> dict:
    options = dict(spec.options)
    if spec.spec.startswith(("http:", "https:")):
        url = spec.spec[len("http:"):] if spec.spec.startswith("http:") and not spec.spec.startswith("http://") else spec.spec
        options.setdefault("url", url)
    return options


def check(spec: AgentSpec, has_model: bool) -> type:
    """Everything about ``spec`` that can be checked without building it (the class, the options, a
    model for agents that need one); returns the class.

    Args:
        spec: the agent.
        has_model: whether the run has a model to give it.

    Raises:
        CLIError: one line saying what is wrong.
    """
    cls = agent_class(spec.spec)
    injected = [n for n in ("model", "policy") if wants(cls, n)]
    check_options(spec.label, cls, _url_options(spec, cls), injected)
    if injected and not has_model:
        raise CLIError(f"agent {spec.label} answers with a model: give --model (or use --quick)")
    return cls


def injected(spec: AgentSpec, models: Models | None) -> dict:
    """What the benchmark gives ``spec``'s constructor: ``model`` (shared), or ``policy`` (a fresh
    trainable copy, and with vLLM a ``sampler`` synced to it).  Made once per (seed, agent): the agents
    loaded fresh for each test batch get the same objects (see :meth:`se_gym.bench.run.Bench.restore`).

    Args:
        spec: the agent.
        models: where the models come from (None: none).
    """
    cls = check(spec, models is not None)
    kwargs: dict = {}
    if wants(cls, "policy"):
        extra = models.trainable(spec.label)
        kwargs["policy"] = extra["policy"]
        if "sampler" in extra and wants(cls, "sampler"):
            kwargs["sampler"] = extra["sampler"]
    if wants(cls, "model"):
        kwargs["model"] = models.shared(spec.label)
    return kwargs


def build(spec: AgentSpec, models: Models | None, given: Mapping[str, Any] | None = None) -> Agent:
    """A fresh agent for ``spec``, its sampler wrapped in a :class:`CountingSampler`.

    Args:
        spec: the agent.
        models: where its model comes from.
        given: the injected objects (:func:`injected`) to build it on; None: new ones.

    Raises:
        CLIError: see :func:`agent_class` and :func:`check_options`; or the constructor raised.
    """
    cls = check(spec, models is not None or bool(given))
    inj = dict(injected(spec, models) if given is None else given)
    kwargs = {**_url_options(spec, cls), **inj}
    try:
        agent = cls(**kwargs)
    except CLIError:
        raise
    except Exception as exc:
        raise CLIError(f"agent {spec.label}: {cls.__name__}(...) raised {type(exc).__name__}: {exc}") from None
    if not isinstance(agent, Agent):
        raise CLIError(f"agent {spec.label}: {cls.__name__} did not build an Agent")
    if hasattr(getattr(agent, "sampler", None), "sample"):
        tokenizer = (models.tokenizer() if models else None) or getattr(kwargs.get("policy"), "tokenizer", None)
        agent.sampler = CountingSampler(agent.sampler, token_counter(tokenizer))
    return agent


__all__ = ["AgentSpec", "CountingSampler", "Models", "agent_class", "agent_specs", "build", "check", "check_options", "injected", "parse_value"]
