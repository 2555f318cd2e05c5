"""verl reward functions for the rows that :func:`se_gym.integrations.export.to_verl_parquet` writes.

verl 0.9 (its reward loop and the default ``naive`` reward manager call ``compute_score`` once per
sample); docs/integrations/verl.md has the whole command::

    reward.custom_reward_function.path=pkg://se_gym.integrations.verl
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.profile=strict     # optional: library, profile, reward, sandbox

verl loads ``path`` either as a module (``pkg://``) or as a file (the path of this file): this module
imports se_gym by absolute names so that both work.  ``compute_score_batch`` is for the
``BatchRewardManager`` of verl before 0.9 (``reward_model.reward_manager=batch``), which judges
all responses of a step in one sandbox batch; verl 0.9's trainer no longer has that manager.

Each returns ``{"score", "acc", "infrastructure"}`` per row (verl logs the extra keys): ``score``
is the judge's reward (binary, or the fraction of passed cases with ``reward="fraction"``),
``acc`` 1.0 when every case passed, ``infrastructure`` 1.0 when the sandbox failed twice (score
0.0 then; filter those rows rather than read them as wrong answers).

The library comes from the ``library`` keyword, else the row's ``extra_info["library"]`` (written
by the exporter when it is given ``library=``), else ``seed:0`` (SEBench-v0's default).  The
row's ``ground_truth`` carries the task's reference (its library solution), which strict's library
dependence check runs beside the answer (issue 42): an answer that names the library and computes
in Python gets 0.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

# absolute imports: verl may load this file by its path, as a module outside any package
from se_gym.integrations._common import parse_ground_truth, shared_judge
from se_gym.integrations.export import DATA_SOURCE
from se_gym.judge.options import JUDGE_DEFAULTS


def _config(extra_info: Mapping[str, Any] | None, library: Any, profile: str | None, reward: str | None) -> tuple:
    extra = extra_info or {}
    lib = library if library is not None else (extra.get("library") or "seed:0")
    return lib, profile or extra.get("profile") or "strict", reward or extra.get("reward_mode") or "binary"


def _check_source(data_source: Any) -> None:
    if not (isinstance(data_source, str) and data_source.startswith("se_gym")):
        raise ValueError(f"se_gym's reward function got data_source {data_source!r}; route only {DATA_SOURCE!r} rows to it")


def _result(verdict) -> dict:
    return {
        "score": 0.0 if verdict.infrastructure else float(verdict.reward),
        "acc": float(verdict.status.value == "passed"),
        "infrastructure": float(bool(verdict.infrastructure)),
    }


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None, *,
                  library: Any = None, profile: str | None = None, reward: str | None = None, sandbox: str = JUDGE_DEFAULTS.sandbox, **_: Any) -> dict:
    """verl's custom reward signature: judge one response against its row's test cases."""
    _check_source(data_source)
    if not isinstance(solution_str, str):
        raise TypeError(f"solution_str must be the decoded response text, got {type(solution_str).__name__}")
    cases, fname, ref = parse_ground_truth(ground_truth)
    lib, prof, rew = _config(extra_info, library, profile, reward)
    verdict = shared_judge(lib, prof, rew, sandbox).judge_many([(solution_str, cases, fname, None, ref)])[0]
    return _result(verdict)


def compute_score_batch(data_sources: Sequence[str], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                        extra_infos: Sequence[Mapping[str, Any] | None] | None = None, *, library: Any = None,
                        profile: str | None = None, reward: str | None = None, sandbox: str = JUDGE_DEFAULTS.sandbox, **_: Any) -> list[dict]:
    """verl's ``BatchRewardManager`` signature: one sandbox batch per judge configuration."""
    n = len(solution_strs)
    extra_infos = list(extra_infos) if extra_infos is not None else [None] * n
    if not (len(data_sources) == len(ground_truths) == len(extra_infos) == n):
        raise ValueError(f"batch lengths differ: {len(data_sources)} data_sources, {n} solution_strs, "
                         f"{len(ground_truths)} ground_truths, {len(extra_infos)} extra_infos")
    groups: dict[tuple, list[int]] = {}
    items: list[tuple] = []
    for i, (src, sol, gt, extra) in enumerate(zip(data_sources, solution_strs, ground_truths, extra_infos)):
        _check_source(src)
        if not isinstance(sol, str):
            raise TypeError(f"solution_strs[{i}] must be text, got {type(sol).__name__}")
        cases, fname, ref = parse_ground_truth(gt)
        items.append((sol, cases, fname, None, ref))  # (with the task's reference: strict's dependence check)
        groups.setdefault(_config(extra, library, profile, reward), []).append(i)
    out: list[dict | None] = [None] * n
    for (lib, prof, rew), idx in groups.items():
        verdicts = shared_judge(lib, prof, rew, sandbox).judge_many([items[i] for i in idx])
        for i, v in zip(idx, verdicts):
            out[i] = _result(v)
    return out  # type: ignore[return-value]
