"""Which self-written data trains what: the switches that keep self-play going (issue 45).

* **Validation split** (:func:`validation_ids`): a share of each round's valid self-written tasks,
  spread over the functions they are about, is held out. Those tasks are solved (their solve rates
  feed the proposer reward) but never trained on, never replayed and never rehearsed. The learn step
  scores the solver on them closed book after every SFT epoch (:class:`EpochPicker`) and keeps the
  best epoch, or the round's starting weights when no epoch beats them. The held-out test split is
  never read for this.
* **Band filter** (:func:`in_band`): a fresh task trains the solver, and its proposal enters the
  proposer's replay, only when the solver answers it with the docs (open-book solve rate at least
  ``band_open``) and its closed-book solve rate lies in the band (a task the solver already knows
  closed book teaches nothing).
* **Novelty** (:func:`novelty_weights`, :func:`pick`): the proposer's replay of its own earlier valid
  proposals prefers the ones least like the others (the same question on overlapping inputs) and
  balances functions, so replay teaches the format without teaching the model to repeat a few tasks.
"""
from __future__ import annotations

import hashlib
import random
from collections import Counter
from typing import Any, Callable, Mapping, Sequence

from .dedup import jaccard, normalize_inputs, normalize_question


def _unit(seed: int, text: str) -> float:
    """A number in [0, 1) fixed by ``seed`` and ``text``."""
    return int(hashlib.sha256(f"val-{seed}-{text}".encode()).hexdigest()[:8], 16) / 16**8


def validation_ids(tasks: Sequence[Any], share: float, seed: int) -> set[str]:
    """The ids of one round's valid tasks that form its part of the validation split.

    A systematic sample stratified by function: the tasks ordered by their functions (then by a hash
    of id and seed) and every ``1 / share``-th held out, so the split spreads over the functions the
    round wrote about; a task is held out only while another task of the same functions stays in
    training (held-out questions about a function nothing teaches measure nothing the round can
    change).  The same tasks give the same split (a rerun, a resume).

    Args:
        tasks: the round's valid tasks (``id``, ``functions``).
        share: the validation share in [0, 1).
        seed: the run's seed (another seed holds out other tasks).

    Returns:
        the held-out ids.
    """
    if share <= 0 or not tasks:
        return set()

    def group(t: Any) -> tuple:
        return tuple(sorted(t.functions))

    order = sorted(tasks, key=lambda t: (group(t), _unit(seed, t.id)))
    size = Counter(group(t) for t in order)
    held_in: Counter = Counter()
    acc = _unit(seed, "offset")
    held: set[str] = set()
    for t in order:
        acc += share
        if acc >= 1.0 and held_in[group(t)] < size[group(t)] - 1:
            held.add(t.id)
            held_in[group(t)] += 1
            acc -= 1.0
    return held


def solve_rates(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean reward per task and book over solver rows (sandbox failures left out)."""
    acc: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        if row.get("infrastructure"):
            continue  # a sandbox failure is nobody's answer
        acc.setdefault(row["task"], {}).setdefault(row["book"], []).append(float(row["reward"]))
    return {tid: {b: sum(v) / len(v) for b, v in books.items()} for tid, books in acc.items()}


def in_band(rates: Mapping[str, float] | None, band_open: float, band: Sequence[float]) -> bool:
    """Whether a task with these solve rates is in the training band: open-book rate at least
    ``band_open`` and closed-book rate within ``band`` (inclusive). A book without a rate (not
    solved, or only sandbox failures) passes only a bound that asks nothing of it."""
    rates = rates or {}
    lo, hi = band
    op, cl = rates.get("open"), rates.get("closed")
    if band_open > 0 and (op is None or op < band_open):
        return False
    if (lo > 0 or hi < 1) and (cl is None or not lo <= cl <= hi):
        return False
    return True


def novelty_weights(items: Sequence[Mapping[str, Any]]) -> list[float]:
    """A weight per replay candidate (``question``, ``inputs``, ``functions``): its novelty, 1 minus
    its largest input overlap with another candidate asking the same (normalized) question, floored
    at 0.05, divided by how many candidates share its functions."""
    keys = [normalize_question(i["question"]) for i in items]
    ins = [normalize_inputs(i["inputs"]) for i in items]
    fn_count = Counter(tuple(sorted(i["functions"])) for i in items)
    out = []
    for a in range(len(items)):
        sim = max((jaccard(ins[a], ins[b]) for b in range(len(items)) if b != a and keys[b] == keys[a]), default=0.0)
        out.append(max(0.05, 1.0 - sim) / fn_count[tuple(sorted(items[a]["functions"]))])
    return out


def pick(items: Sequence[Any], n: int, rng: random.Random, weights: Sequence[float] | None = None) -> list[Any]:
    """``n`` of ``items``: every item once before any twice. Each pass is a weighted order without
    replacement (Efraimidis-Spirakis keys ``u ** (1 / w)``: heavier first), or uniform with no
    weights; deterministic for a given ``rng``."""
    if not items or n <= 0:
        return []
    out: list[Any] = []
    while len(out) < n:
        if weights is None:
            order = rng.sample(range(len(items)), len(items))
        else:
            keyed = [(rng.random() ** (1.0 / max(w, 1e-9)), i) for i, w in enumerate(weights)]
            order = [i for _, i in sorted(keyed, reverse=True)]
        out += [items[i] for i in order[: n - len(out)]]
    return out


class EpochPicker:
    """Early stopping on the validation split: ``score()`` is the solver's closed-book accuracy on
    it. The starting weights are epoch 0; after each epoch (:meth:`after_epoch`, handed to
    :func:`se_gym.training.sft.train_sft`) a strictly better score keeps a copy of the weights, and
    once some epoch has beaten the start, ``patience`` epochs without a better one stop training
    (before that, training goes on: a few epochs may pass before the first answer comes out right).
    :meth:`restore` puts the best weights back (the starting ones when no epoch beat them) and says
    which epoch they are. A start that already scores 1.0 cannot be beaten: :attr:`saturated`, and
    the caller need not train at all.

    ``check()`` (optional): the proposer's valid share on held-out proposal prompts with the current
    weights. An epoch that would be kept is kept only when its check is at least the start's, or at
    least ``floor`` (the start is checked at the first such epoch, so a round where no epoch beats the
    start checks nothing): an update that teaches the solver but spoils the task writing is not taken."""

    def __init__(self, model: Any, score: Callable[[], float], patience: int, check: Callable[[], float] | None = None,
                 floor: float = 1.0):
        self.model, self.score, self.patience, self.check, self.floor = model, score, max(1, patience), check, floor
        self.scores = [score()]
        self.best_epoch = 0
        self.saturated = self.scores[0] >= 1.0
        self._best = {} if self.saturated else self._copy()
        self.checks: dict[int, float] = {}  # epoch (0: the start) -> its check
        self.refused: list[int] = []  # epochs a better score did not keep: their check fell below the start's

    def _copy(self) -> dict:
        return {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}

    def _checked(self, epoch: int) -> bool:
        if self.check is None:
            return True
        if 0 not in self.checks:  # the first epoch to beat the start: check the start too (its weights are the best copy)
            now = self._copy()
            self.model.load_state_dict(self._best)
            self.checks[0] = self.check()
            self.model.load_state_dict(now)
        self.checks[epoch] = self.check()
        if self.checks[epoch] < min(self.checks[0], self.floor):
            self.refused.append(epoch)
            return False
        return True

    def after_epoch(self, epoch: int) -> bool:
        s = self.score()
        self.scores.append(s)
        if s > self.scores[self.best_epoch] and self._checked(epoch):
            self.best_epoch = epoch
            self._best = self._copy()
        return self.best_epoch > 0 and epoch - self.best_epoch >= self.patience

    def restore(self) -> int:
        if self._best:
            self.model.load_state_dict(self._best)
        self._best = {}
        return self.best_epoch

    def metrics(self) -> dict:
        out = {"scores": self.scores, "best_epoch": self.best_epoch, "best": self.scores[self.best_epoch]}
        if self.check is not None:
            out["propose_check"] = {"valid": {str(k): v for k, v in sorted(self.checks.items())}, "refused": self.refused}
        return out
