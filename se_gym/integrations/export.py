"""Trajectories out: SE-Bench's rollout JSONL and the parquet layouts verl's trainers read.

A *trajectory* here is a mapping with at least ``task`` (a :class:`se_gym.tasks.Task`),
``response`` (the answer text) and optionally ``verdict`` (a :class:`se_gym.judge.Verdict` or its
dict), ``prompt`` (text or chat messages) and any extra fields (kept under ``extra_info``).

verl layouts (one row per trajectory):
- RL (``kind="rl"``): ``data_source``, ``prompt`` (chat messages), ``ability``, ``reward_model``
  (``{"style": "rule", "ground_truth": <JSON of the test cases, the entry signature and the task's
  reference solution>}``: the reference is what strict's library dependence check runs beside the
  answer, issue 42), ``extra_info``.
- SFT (``kind="sft"``): ``prompt`` and ``response`` strings (verl's ``data.prompt_key`` /
  ``data.response_key``), plus ``extra_info``.

SkyRL layout (:func:`to_skyrl_dataset`): the RL row with ``env_class`` (``"se_gym"``) and
``reward_spec`` (SkyRL's name for ``reward_model``), and the whole task as JSON in
``extra_info["task"]``, so that the SkyRL env judges the row without rebuilding any task suite.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

DATA_SOURCE = "se_gym/sebench"
SKYRL_ENV_CLASS = "se_gym"  # the id se_gym.integrations.skyrl registers with skyrl_gym


def _verdict_dict(v: Any) -> dict | None:
    if v is None:
        return None
    return v.to_dict() if hasattr(v, "to_dict") else dict(v)


def _prompt_messages(traj: Mapping[str, Any]) -> list[dict]:
    p = traj.get("prompt")
    if isinstance(p, list):
        return [{"role": m["role"], "content": m["content"]} for m in p]
    if isinstance(p, str):
        return [{"role": "user", "content": p}]
    raise ValueError("a trajectory needs 'prompt' (text or chat messages) for this export")


def rollout_row(traj: Mapping[str, Any]) -> dict:
    """One row in SE-Bench's rollout format (the task's official fields + ``response``) plus verdict fields."""
    task = traj["task"]
    row = task.to_official_row()
    row["response"] = traj["response"]
    row["task_id"] = task.id
    if "prompt" in traj:
        row["prompt"] = traj["prompt"]
    v = _verdict_dict(traj.get("verdict"))
    if v is not None:
        row.update({k: v[k] for k in ("reward", "status", "sebench_code", "error_type", "infrastructure")})
        row["verdict"] = v
    for k, val in traj.items():
        if k not in ("task", "verdict", "response", "prompt"):
            row.setdefault(k, val)
    return row


def to_rollout_jsonl(trajectories: Iterable[Mapping[str, Any]], path: str | os.PathLike) -> int:
    """Write trajectories as SE-Bench rollout JSONL (atomically); returns the row count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    n = 0
    with open(tmp, "w", encoding="utf-8") as f:
        for traj in trajectories:
            f.write(json.dumps(rollout_row(traj), ensure_ascii=False, default=str) + "\n")
            n += 1
    os.replace(tmp, path)
    return n


def _judge_info(library: Any, profile: str | None) -> dict:
    """The exporter's ``library`` (as its spec) and ``profile``, for each row's judge."""
    info: dict = {}
    if library is not None:
        from ..library import from_spec

        info["library"] = from_spec(library).source
    if profile is not None:
        info["profile"] = profile
    return info


def _own_source(traj: Mapping[str, Any]) -> dict:
    """A mixed trajectory's own ``library`` (it wins over the exporter's) and ``source`` tag
    (:mod:`se_gym.integrations.mix`), for the row's judge and per-source metrics."""
    out: dict = {}
    if traj.get("library") is not None:
        from ..library import from_spec

        out["library"] = from_spec(traj["library"]).source
    if traj.get("source") is not None:
        out["source"] = str(traj["source"])
    return out


def verl_rows(trajectories: Iterable[Mapping[str, Any]], kind: str = "rl", split: str | None = None,
              library: Any = None, profile: str | None = None, agent_name: str | None = None,
              max_turns: int | None = None, sampler: Any = None, rows: int | None = None, seed: int = 0) -> list[dict]:
    """verl rows; ``library`` (a Library or spec) and ``profile`` are recorded in ``extra_info`` so
    the reward function (:mod:`se_gym.integrations.verl`) judges with the same library.  ``sampler``
    (a TaskSampler over the trajectories' tasks, in order): a weighted epoch of ``rows`` rows instead
    of one per trajectory (see :func:`se_gym.integrations.trl.make_dataset`)."""
    if kind not in ("rl", "sft"):
        raise ValueError(f"kind must be 'rl' or 'sft', got {kind!r}")
    if sampler is not None:
        from ..tasks.sampler import scheduled

        trajectories = list(trajectories)
        order = scheduled([t["task"] for t in trajectories], sampler, rows, seed, indices=True)
        trajectories = [trajectories[i] for i in order]
    judge_info = _judge_info(library, profile)
    rows = []
    for i, traj in enumerate(trajectories):
        task = traj["task"]
        messages = _prompt_messages(traj)
        v = _verdict_dict(traj.get("verdict"))
        extra = {
            "index": i,
            "split": split or task.split,
            "task_id": task.id,
            "task_hash": task.hash,
            "function_name": task.function_name,
            "reward": None if v is None else float(v["reward"]),
            **judge_info,
            **_own_source(traj),
        }
        if kind == "rl":
            truth = {"function_name": task.function_name, "test_cases": [c.__dict__ if hasattr(c, "__dict__") else dict(c) for c in task.test_cases]}
            if getattr(task, "library_solution", ""):
                truth["reference"] = task.library_solution  # (the reward's: strict's library dependence check)
            row = {
                "data_source": DATA_SOURCE,
                "prompt": messages,
                "ability": "code",
                "reward_model": {"style": "rule", "ground_truth": json.dumps(truth)},
                "extra_info": extra,
            }
            if agent_name is not None:  # verl's agent loop for the row (se_gym_agent: multi-turn, verl_agent.py)
                row["agent_name"] = agent_name
            if max_turns is not None:
                extra["max_turns"] = int(max_turns)
            rows.append(row)
        else:
            if "response" not in traj:
                raise ValueError("SFT export needs 'response' in every trajectory")
            rows.append({"prompt": messages[-1]["content"], "response": traj["response"], "extra_info": extra})
    return rows


def to_verl_parquet(trajectories: Iterable[Mapping[str, Any]], path: str | os.PathLike, kind: str = "rl", split: str | None = None,
                    library: Any = None, profile: str | None = None, agent_name: str | None = None,
                    max_turns: int | None = None, sampler: Any = None, rows: int | None = None, seed: int = 0) -> int:
    """Write verl's parquet layout (needs ``pyarrow``: the ``export`` extra); returns the row count.
    ``agent_name``/``max_turns``: the verl agent loop that plays each row and its answer budget
    (``"se_gym_agent"``: multi-turn with execution feedback, :mod:`se_gym.integrations.verl_agent`).
    ``sampler``/``rows``/``seed``: a weighted epoch (see :func:`verl_rows`)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("parquet export needs pyarrow: pip install 'se-gym[export]'") from None
    table = verl_rows(trajectories, kind=kind, split=split, library=library, profile=profile, agent_name=agent_name,
                      max_turns=max_turns, sampler=sampler, rows=rows, seed=seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    pq.write_table(pa.Table.from_pylist(table), tmp)
    os.replace(tmp, path)
    return len(table)


def skyrl_rows(trajectories: Iterable[Mapping[str, Any]], split: str | None = None, library: Any = None,
               profile: str | None = None, max_turns: int | None = None) -> list[dict]:
    """SkyRL dataset rows (SkyRL hands a row, less ``prompt`` and ``env_class``, to the env as its
    ``extras``).  Each row is self-contained: ``extra_info["task"]`` is the task's JSON
    (:meth:`se_gym.tasks.Task.to_json`), ``extra_info["library"]``/``["profile"]`` the judge's
    configuration when given, and ``max_turns`` (when given) the episode's answer budget."""
    trajs = list(trajectories)
    rows = verl_rows(trajs, kind="rl", split=split, library=library, profile=profile)
    for traj, row in zip(trajs, rows):
        row["env_class"] = SKYRL_ENV_CLASS
        row["reward_spec"] = row.pop("reward_model")
        # JSON text, not a nested struct: parquet needs one schema for every row, and the
        # test-case inputs and metadata differ between tasks
        row["extra_info"]["task"] = json.dumps(traj["task"].to_json(), ensure_ascii=False)
        if max_turns is not None:
            row["max_turns"] = int(max_turns)
    return rows


def to_skyrl_dataset(trajectories: Iterable[Mapping[str, Any]], path: str | os.PathLike, split: str | None = None,
                     library: Any = None, profile: str | None = None, max_turns: int | None = None) -> int:
    """Write :func:`skyrl_rows` as parquet (``.parquet``, needs ``pyarrow``) or JSONL (``.jsonl``),
    the two file kinds SkyRL's dataset reads; returns the row count."""
    path = Path(path)
    if path.suffix not in (".parquet", ".jsonl"):
        raise ValueError(f"SkyRL reads .parquet or .jsonl files, got {path.name!r}")
    rows = skyrl_rows(trajectories, split=split, library=library, profile=profile, max_turns=max_turns)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    if path.suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError("parquet export needs pyarrow: pip install 'se-gym[export]'") from None
        pq.write_table(pa.Table.from_pylist(rows), tmp)
    else:
        with open(tmp, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return len(rows)


def nemo_gym_rows(trajectories: Iterable[Mapping[str, Any]], library: Any = None, profile: str | None = None,
                  max_turns: int | None = None, agent: str | None = "se_gym_gymnasium_agent") -> list[dict]:
    """NeMo Gym dataset rows for :mod:`se_gym.integrations.nemo_gym` (one JSON object per line):
    ``responses_create_params`` (the model's input: the chat prompt) and, beside it, what the
    resources server reads from the row: ``task`` (the task's JSON, test cases included: the agent
    sends only ``responses_create_params`` to the model), ``library``, ``profile``, ``max_turns``,
    and ``agent_ref`` naming the agent that plays it (``None``: none)."""
    judge_info = _judge_info(library, profile)
    rows = []
    for traj in trajectories:
        task = traj["task"]
        row = {"responses_create_params": {"input": _prompt_messages(traj)}, "task_id": task.id,
               "task": json.dumps(task.to_json(), ensure_ascii=False), **judge_info, **_own_source(traj)}
        if max_turns is not None:
            row["max_turns"] = int(max_turns)
        if agent:
            row["agent_ref"] = {"type": "responses_api_agents", "name": agent}
        rows.append(row)
    return rows
