"""Token-exact trajectories: what a trainer needs from a sampled answer, without tokenizing again.

One record per sampled answer (schema ``se_gym.trajectory/1``, docs/integrations/trajectories.md):

- ``prompt_ids``: the token ids the model was given (chat template applied, as the backend fed them);
- ``completion_ids``: every token after the prompt; ``completion_mask`` is 1 on the tokens the
  model sampled (trained on) and 0 on tokens inserted by an environment (multi-turn feedback);
- ``completion_logprobs``: per completion token, its log-probability under the sampling model's
  raw distribution (temperature 1, before top-p; 0.0 on masked tokens), or None when the backend
  gave none;
- ``policy_version``: how many weight updates the generator had taken when it sampled;
- ``task_id``, ``sample_index``, ``reward``, ``infrastructure``, ``finish_reason``, ``model``,
  ``backend`` and the text (``prompt``, ``response``) for reference: loaders read the ids.

Rollout rows written with ``record_tokens`` are such records (plus SE-Bench's row fields).
Files are JSONL (``.jsonl``) or parquet (``.parquet``, needs pyarrow).  Nothing here imports torch;
the training loaders are in :mod:`se_gym.training.trajectories`.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import SEGymError

SCHEMA = "se_gym.trajectory/1"
TOKEN_FIELDS = ("prompt_ids", "completion_ids", "completion_mask", "completion_logprobs", "policy_version")
# the columns of a parquet file; every other field of a record goes, as JSON, into its "extra" column
COLUMNS = ("schema", *TOKEN_FIELDS, "task_id", "sample_index", "reward", "infrastructure", "finish_reason",
           "model", "backend", "prompt", "response")


class TrajectoryError(SEGymError, ValueError):
    """A record that is not a token trajectory (names the field)."""


def token_fields(completion: Any, policy_version: int = 0) -> dict[str, Any]:
    """The token fields of one sampled completion (a :class:`se_gym.llm.Completion`).

    Raises :class:`TrajectoryError` when the backend did not return the token ids (an OpenAI
    server other than vLLM's, or vLLM's without ``return_token_ids``)."""
    if completion.prompt_token_ids is None or completion.token_ids is None:
        raise TrajectoryError("the backend returned no token ids for this completion (the openai backend has them only "
                              "from a vLLM server with return_token_ids=True)")
    ids = [int(t) for t in completion.token_ids]
    logprobs = None if completion.logprobs is None else [float(x) for x in completion.logprobs]
    if logprobs is not None and len(logprobs) != len(ids):
        raise TrajectoryError(f"{len(logprobs)} log-probs for {len(ids)} completion tokens")
    return {
        "schema": SCHEMA,
        "prompt_ids": [int(t) for t in completion.prompt_token_ids],
        "completion_ids": ids,
        "completion_mask": [1] * len(ids),
        "completion_logprobs": logprobs,
        "policy_version": int(policy_version),
    }


def check(record: Mapping[str, Any], where: str = "record") -> Mapping[str, Any]:
    """``record`` if it is a token trajectory, else :class:`TrajectoryError` naming the field."""
    missing = [k for k in TOKEN_FIELDS if k not in record]
    if missing:
        raise TrajectoryError(f"{where}: no {missing[0]!r}: not a token trajectory (rollouts write them with record_tokens)")
    if record.get("schema", SCHEMA) != SCHEMA:
        raise TrajectoryError(f"{where}: schema {record.get('schema')!r}, this reader knows {SCHEMA!r}")
    for key in ("prompt_ids", "completion_ids", "completion_mask"):
        value = record[key]
        if not isinstance(value, (list, tuple)) or not all(isinstance(t, int) and not isinstance(t, bool) for t in value):
            raise TrajectoryError(f"{where}: {key} must be a list of ints")
    if not record["prompt_ids"]:
        raise TrajectoryError(f"{where}: prompt_ids is empty")
    n = len(record["completion_ids"])
    if len(record["completion_mask"]) != n or any(m not in (0, 1) for m in record["completion_mask"]):
        raise TrajectoryError(f"{where}: completion_mask must be {n} zeros and ones (one per completion token)")
    lp = record["completion_logprobs"]
    if lp is not None and (not isinstance(lp, (list, tuple)) or len(lp) != n):
        raise TrajectoryError(f"{where}: completion_logprobs must be None or {n} numbers")
    return record


def _plain(record: Mapping[str, Any]) -> dict:
    """JSON-ready, with the token lists as lists (parquet gives numpy arrays back)."""
    out = {}
    for k, v in record.items():
        if hasattr(v, "tolist"):
            v = v.tolist()
        out[k] = v
    return out


def write_trajectories(records: Iterable[Mapping[str, Any]], path: str | os.PathLike) -> int:
    """Write token trajectories as JSONL or parquet (by the suffix, atomically); returns the count."""
    path = Path(path)
    if path.suffix not in (".jsonl", ".parquet"):
        raise ValueError(f"trajectories are written as .jsonl or .parquet, got {path.name!r}")
    rows = [dict(check(r, f"record {i}")) for i, r in enumerate(records)]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    if path.suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError("parquet needs pyarrow: pip install 'se-gym[export]'") from None
        # one type per column: the prompt (chat messages or text) and the fields outside the
        # schema (SE-Bench's row, the verdict...) go in as JSON text
        table = []
        for r in rows:
            row = {k: r.get(k) for k in COLUMNS}
            row["schema"] = SCHEMA
            row["prompt"] = json.dumps(r.get("prompt"), ensure_ascii=False)
            row["extra"] = json.dumps({k: v for k, v in r.items() if k not in COLUMNS}, ensure_ascii=False, default=str)
            table.append(row)
        pq.write_table(pa.Table.from_pylist(table), tmp)
    else:
        with open(tmp, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
    os.replace(tmp, path)
    return len(rows)


def read_trajectories(path: str | os.PathLike) -> list[dict]:
    """Token trajectories from a JSONL (a rollout file written with ``record_tokens`` included) or
    parquet file, each checked; :class:`TrajectoryError` names the first bad line or row."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = []
        for r in pq.read_table(path).to_pylist():
            extra = r.pop("extra", None)
            r.update(json.loads(extra) if extra else {})
            r["prompt"] = json.loads(r["prompt"]) if r.get("prompt") is not None else None
            rows.append(r)
        return [_plain(check(r, f"{path.name} row {i}")) for i, r in enumerate(rows)]
    out = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                out.append(dict(check(json.loads(line), f"{path.name}:{number}")))
    return out
