"""Several task sources in one run: weights, and metrics per source.

A *source* is a task spec with its own library (``builtin:0``, ``builtin:1``: two minted libraries;
``sebench:PATH``: the official files with their names), a split and a weight::

    from se_gym.integrations.mix import load_mixture, parse_sources, SourceMetrics
    sources = parse_sources("builtin:0=2,builtin:1=1,sebench:/data/sebench=1")   # SPEC=WEIGHT, ...
    mix = load_mixture(sources, split="train", seed=0, n=256)     # [{"task", "library", "source", "prompt"}...]
    to_verl_parquet(mix, "mix.parquet")                          # each row names its own library and source

Each entry is judged with its own source's library (the exporters write it per row: verl's
``extra_info.library``, SkyRL's and NeMo Gym's self-contained rows; TRL's
:class:`~se_gym.integrations.trl.SEBenchTaskEnv` switches judges per task).  The draw is a seeded
weighted choice of the source, then the next task of that source's own seeded shuffle, so a source
is not repeated before it runs out.  :class:`SourceMetrics` keeps reward, pass rate and tokens per
source (the ``source`` tag each entry carries).
"""
from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..errors import SEGymError


class MixError(SEGymError, ValueError):
    """A mixture that cannot be built (a bad weight, an empty source): one line."""


@dataclass(frozen=True)
class Source:
    spec: str                  # a task spec: builtin[:SEED] or sebench[:PATH]
    weight: float = 1.0
    library: str | None = None  # default: the library the tasks were written for
    split: str | None = None    # default: the mixture's split
    name: str | None = None     # default: the spec

    @property
    def label(self) -> str:
        return self.name or self.spec


def parse_sources(text: str) -> list[Source]:
    """``SPEC[=WEIGHT],...`` (``builtin:0=2,builtin:1,sebench:PATH=0.5``) -> sources."""
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        spec, _, weight = part.rpartition("=") if "=" in part else (part, "", "1")
        try:
            w = float(weight)
        except ValueError:
            raise MixError(f"source {part!r}: the weight after '=' must be a number") from None
        out.append(Source(spec=spec.strip(), weight=w))
    return _check(out)


def _check(sources: Sequence[Source]) -> list[Source]:
    if not sources:
        raise MixError("a mixture needs at least one source")
    for s in sources:
        if not s.weight > 0:
            raise MixError(f"source {s.label!r}: weight must be > 0, got {s.weight}")
    labels = [s.label for s in sources]
    if len(set(labels)) != len(labels):
        raise MixError(f"two sources share a name: {labels} (give one a name=)")
    return list(sources)


def load_sources(sources: Sequence[Source], split: str = "train", progress: bool = False) -> list[tuple[Source, list, Any]]:
    """Each source's (source, tasks, library), loaded once."""
    from ..tasks.spec import load_task_spec

    out = []
    for s in _check(sources):
        tasks, lib = load_task_spec(s.spec, s.split or split, library=s.library, progress=progress)
        tasks = list(tasks)
        if not tasks:
            raise MixError(f"source {s.label!r} has no tasks in split {s.split or split!r}")
        out.append((s, tasks, lib))
    return out


class MixStream:
    """The seeded draw over loaded sources: a weighted choice of the source, then that source's next
    task (each source walks its own seeded shuffle, reshuffled each pass).  Thread-safe."""

    def __init__(self, loaded: Sequence[tuple[Source, list, Any]], seed: int = 0):
        self.loaded, self.seed = list(loaded), seed
        self._rng = random.Random(f"mix/{seed}")
        self._orders: list[list[int]] = [[] for _ in self.loaded]
        self._passes = [0] * len(self.loaded)
        self._lock = threading.Lock()

    def next(self) -> dict:
        """``{"task", "library", "source"}`` of the next draw."""
        with self._lock:
            k = self._rng.choices(range(len(self.loaded)), weights=[s.weight for s, _, _ in self.loaded])[0]
            source, tasks, lib = self.loaded[k]
            if not self._orders[k]:
                order = list(range(len(tasks)))
                random.Random(f"{self.seed}/{source.label}/{self._passes[k]}").shuffle(order)
                self._orders[k], self._passes[k] = order, self._passes[k] + 1
            return {"task": tasks[self._orders[k].pop()], "library": lib, "source": source.label}


def load_mixture(sources: Sequence[Source] | str, split: str = "train", seed: int = 0, n: int | None = None,
                 book: str = "closed", prompts: bool = True) -> list[dict]:
    """``n`` draws (default: as many as the sources hold together) as trajectories for the exporters:
    ``{"task", "library", "source", "prompt"}`` (``prompt``: the chat messages in the source's library)."""
    from ..tasks import render_messages

    loaded = load_sources(parse_sources(sources) if isinstance(sources, str) else sources, split)
    stream = MixStream(loaded, seed)
    total = n if n is not None else sum(len(t) for _, t, _ in loaded)
    out = []
    for _ in range(total):
        d = stream.next()
        if prompts:
            d["prompt"] = render_messages(d["task"], d["library"], book=book)
        out.append(d)
    return out


class SourceMetrics:
    """Reward, pass rate and tokens per source: ``add(source, reward, passed, tokens)`` per judged
    answer (an infrastructure failure: ``reward=None``, counted apart), ``summary()`` per source."""

    def __init__(self):
        self._rows: dict[str, list[tuple[float | None, bool, int | None]]] = {}
        self._lock = threading.Lock()

    def add(self, source: str, reward: float | None, passed: bool, tokens: int | None = None) -> None:
        with self._lock:
            self._rows.setdefault(source, []).append((reward, bool(passed), tokens))

    def summary(self) -> dict[str, dict[str, float]]:
        """``{source: {"n", "reward", "pass_rate", "tokens", "infrastructure"}}`` (means over judged answers;
        ``tokens`` over the answers that carried a count)."""
        out = {}
        with self._lock:
            items = {k: list(v) for k, v in self._rows.items()}
        for source, rows in sorted(items.items()):
            judged = [r for r in rows if r[0] is not None]
            toks = [t for _, _, t in rows if t is not None]
            out[source] = {
                "n": float(len(judged)),
                "reward": sum(r for r, _, _ in judged) / len(judged) if judged else float("nan"),
                "pass_rate": sum(p for _, p, _ in judged) / len(judged) if judged else float("nan"),
                "tokens": sum(toks) / len(toks) if toks else float("nan"),
                "infrastructure": float(len(rows) - len(judged)),
            }
        return out

    def flat(self, prefix: str = "source") -> dict[str, float]:
        """``{"source/<name>/<metric>": value}``: one scalar per source and metric, for loggers."""
        return {f"{prefix}/{s}/{k}": v for s, m in self.summary().items() for k, v in m.items()}


def summarize(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per-source metrics of judged records carrying ``source``, ``reward`` (None: infrastructure),
    ``passed`` (or ``status == "passed"``) and optionally ``tokens``."""
    m = SourceMetrics()
    for r in records:
        passed = r.get("passed", r.get("status") == "passed")
        m.add(str(r.get("source", "?")), r.get("reward"), bool(passed), r.get("tokens"))
    return m.summary()
