"""Counters and histograms in the Prometheus text format, written by hand (no client library).

The judge keeps a :class:`JudgeMetrics` (``Judge.metrics``): verdicts by status, infrastructure
failures and the latency of judge calls.  The servers publish them at ``GET /metrics``: ``se-gym
serve openenv`` its suite's judge's, ``se-gym sandbox serve`` its own :class:`SandboxMetrics`
(programs by status, request latency, sandbox errors).  Format: text exposition 0.0.4
(https://prometheus.io/docs/instrumenting/exposition_formats/).
"""
from __future__ import annotations

import bisect
import math
import threading
from typing import Iterable, Sequence

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# seconds: from one warm answer (a few ms) to a batch behind a slow program (the sandbox's wall limit)
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def _value(v: float) -> str:
    if v == math.inf:
        return "+Inf"
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _labels(names: Sequence[str], values: Sequence[str]) -> str:
    if not names:
        return ""
    esc = (str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"') for v in values)
    return "{" + ",".join(f'{n}="{v}"' for n, v in zip(names, esc)) + "}"


class Counter:
    """A monotonic count, optionally by one or more labels (every label set seen, and those given in
    ``initial``, is exposed: a series at 0 exists before its first event)."""

    def __init__(self, name: str, help: str, labels: Sequence[str] = (), initial: Iterable[Sequence[str]] = ()):
        self.name, self.help, self.labels = name, help, tuple(labels)
        self._values: dict[tuple[str, ...], float] = {tuple(v): 0.0 for v in initial} if labels else {(): 0.0}
        self._lock = threading.Lock()

    def inc(self, amount: float = 1.0, *label_values: str) -> None:
        if amount < 0:
            raise ValueError("a counter only goes up")
        key = tuple(label_values)
        if len(key) != len(self.labels):
            raise ValueError(f"{self.name} takes labels {self.labels}, got {key}")
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, *label_values: str) -> float:
        return self._values.get(tuple(label_values), 0.0)

    def render(self) -> list[str]:
        with self._lock:
            items = sorted(self._values.items())
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} counter",
                *(f"{self.name}{_labels(self.labels, k)} {_value(v)}" for k, v in items)]


class Histogram:
    """Observations counted in cumulative buckets, with their sum and count."""

    def __init__(self, name: str, help: str, buckets: Sequence[float] = LATENCY_BUCKETS):
        self.name, self.help = name, help
        self.buckets = tuple(sorted(buckets))
        self._counts = [0] * (len(self.buckets) + 1)  # the last one: above every bound
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe(self, value: float, times: int = 1) -> None:
        i = bisect.bisect_left(self.buckets, value)  # the first bound >= value (le is inclusive)
        with self._lock:
            self._counts[i] += times
            self._sum += value * times

    @property
    def count(self) -> int:
        return sum(self._counts)

    def render(self) -> list[str]:
        with self._lock:
            counts, total = list(self._counts), self._sum
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        running = 0
        for bound, c in zip((*self.buckets, math.inf), counts):
            running += c
            lines.append(f'{self.name}_bucket{{le="{_value(bound)}"}} {running}')
        lines += [f"{self.name}_sum {_value(total)}", f"{self.name}_count {running}"]
        return lines


def render(*collectors) -> str:
    """The exposition text of ``collectors`` (Counters, Histograms, or objects with ``collectors()``)."""
    lines: list[str] = []
    for c in collectors:
        for m in (c.collectors() if hasattr(c, "collectors") else (c,)):
            lines += m.render()
    return "\n".join(lines) + "\n"


class JudgeMetrics:
    """What a :class:`se_gym.judge.Judge` counts: every verdict by status, the infrastructure failures
    among them, and per answer the wall time of the judge call that judged it."""

    def __init__(self, statuses: Sequence[str]):
        # statuses: se_gym.judge.Status's values (passed in: this module sits below the judge)
        self.verdicts = Counter("se_gym_judge_verdicts_total", "Verdicts by status.", ("status",), [(s,) for s in statuses])
        self.infrastructure = Counter("se_gym_judge_infrastructure_failures_total",
                                      "Answers the sandbox could not run (after the judge's retry): not wrong answers.")
        self.latency = Histogram("se_gym_judge_latency_seconds",
                                 "Per answer: wall time of the judge call (a batch) that judged it.")

    def record(self, verdicts: Sequence, seconds: float) -> None:
        for v in verdicts:
            self.verdicts.inc(1, v.status.value)
            if v.infrastructure:
                self.infrastructure.inc()
        if verdicts:
            self.latency.observe(seconds, len(verdicts))

    def collectors(self):
        return (self.verdicts, self.infrastructure, self.latency)

    def render(self) -> str:
        return render(self)


class SandboxMetrics:
    """What ``se-gym sandbox serve`` counts: programs by result status, sandbox errors (infrastructure
    failures) and the latency of its requests."""

    def __init__(self, statuses: Sequence[str], error_status: str = "sandbox_error"):
        # statuses: se_gym.sandbox.ExecStatus's values (passed in: this module sits below the sandbox)
        self.error_status = error_status
        self.programs = Counter("se_gym_sandbox_programs_total", "Programs run, by result status.", ("status",),
                                [(s,) for s in statuses])
        self.errors = Counter("se_gym_sandbox_errors_total", "Programs the sandbox failed to run (infrastructure failures).")
        self.latency = Histogram("se_gym_sandbox_request_seconds", "Wall time of each /run or /run_batch request.")

    def record(self, results: Sequence, seconds: float) -> None:
        for r in results:
            self.programs.inc(1, r.status.value)
            if r.status.value == self.error_status:
                self.errors.inc()
        self.latency.observe(seconds)

    def collectors(self):
        return (self.programs, self.errors, self.latency)

    def render(self) -> str:
        return render(self)


def add_metrics_route(app, metrics) -> None:
    """``GET /metrics`` on a FastAPI ``app``: ``metrics.render()`` in the Prometheus text format."""
    from starlette.responses import Response

    @app.get("/metrics", include_in_schema=False)
    def _metrics() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)
