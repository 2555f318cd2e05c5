"""``se-gym judge``: judge a JSONL file of SE-Bench rollouts.

Input rows use SE-Bench's rollout format: ``response``, ``test_cases`` (official dicts) and
optionally ``right_exe_result``, ``function_name`` and ``library_solution`` (the task's reference
written with the library: strict's library dependence check compares the answer with it; rows
se-gym wrote, ``export.to_rollout_jsonl``, keep it under ``se_gym``); other fields pass through
unchanged.
Each output row is the input row plus two fields: ``judge`` (the verdict as a dict: ``reward``,
``status``, ``sebench_code``, ``error_type``, ``cases``, ...) and ``judge_line`` (the input line
number, the key used to resume).  A summary is printed and written beside the output as
``<out stem>.summary.json``.  Rows are appended and flushed batch by batch, so an interrupted run
loses at most the batch in flight; rerunning skips rows already judged.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from se_gym.choices import REWARDS
from se_gym.configs import add_config_arguments, add_deprecated_alias, config_from_args
from se_gym.errors import CLIError
from se_gym.jsonl import iter_jsonl
from se_gym.judge.options import OfficialJudgeOptions


@dataclass(frozen=True)
class JudgeRunConfig(OfficialJudgeOptions):
    """What ``se-gym judge`` does (flags, or a ``--config`` TOML/JSON file with these keys); the judge's
    options (``--library``, required here, ``--profile``, ``--sandbox``, the limits) are
    :class:`~se_gym.judge.options.JudgeOptions`'."""

    input: str = field(metadata={"help": "rollouts (JSONL: response, test_cases[, right_exe_result])"})
    out: str = field(metadata={"help": "verdicts (JSONL); resumed when it exists"})
    workers: int | None = field(default=None, metadata={"help": "sandbox workers (None: CPU count)"})
    http_url: str | None = field(default=None, metadata={"help": "deprecated: give --sandbox http://HOST:PORT"})
    ray_address: str | None = field(default=None, metadata={"help": "deprecated: give --sandbox ray,address=HOST:PORT"})
    batch_size: int = field(default=256, metadata={"help": "rows per sandbox batch (and per flush)"})
    expected: str = field(default="auto", metadata={
        "help": "what results are compared with: right_exe_result split on '#' (what the official judge uses; "
                "'auto' picks it when the row has one) or the test cases' outputs",
        "choices": ("auto", "outputs", "right_exe_result")})
    reward: str = field(default="binary", metadata={"help": "reward of a verdict", "choices": REWARDS})
    quiet: bool = field(default=False, metadata={"help": "no progress bar"})

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise CLIError("--batch-size must be at least 1")
        if not self.library:  # (rollout rows do not say which library their answers were written for)
            raise CLIError("--library is required (on the command line or in --config): official:PATH_TO_api_doc.jsonl or seed:N")
        self.check_judge_flags(CLIError)


def configure(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser, JudgeRunConfig)
    add_deprecated_alias(parser, "--backend", "--sandbox", "sandbox")
    parser.set_defaults(func=run)


def _rows(path: Path) -> Iterator[tuple[int, dict]]:
    return iter_jsonl(path, CLIError)


def _item(path: Path, lineno: int, row: dict, expected_mode: str) -> tuple:
    where = f"{path}:{lineno}"
    if "response" not in row:
        raise CLIError(f"{where}: missing field 'response'")
    if not isinstance(row["response"], str):
        raise CLIError(f"{where}: field 'response' must be a string")
    cases = row.get("test_cases")
    if not isinstance(cases, list) or not cases:
        raise CLIError(f"{where}: field 'test_cases' must be a non-empty list")
    rer = row.get("right_exe_result")
    if rer is not None and not isinstance(rer, str):
        raise CLIError(f"{where}: field 'right_exe_result' must be a string")
    for i, c in enumerate(cases):
        if not isinstance(c, dict) or not isinstance(c.get("input"), str):
            raise CLIError(f"{where}: field 'test_cases[{i}].input' must be a string")
        if "output" in c and not isinstance(c["output"], str):
            raise CLIError(f"{where}: field 'test_cases[{i}].output' must be a string")
    pieces = rer.split("#") if isinstance(rer, str) else None
    if expected_mode == "right_exe_result" and pieces is None:
        raise CLIError(f"{where}: missing field 'right_exe_result' (asked for by --expected right_exe_result)")
    no_output = [i for i, c in enumerate(cases) if "output" not in c]
    if no_output and pieces is None:
        raise CLIError(f"{where}: field 'test_cases[{no_output[0]}].output' is missing and there is no right_exe_result")
    use_pieces = expected_mode == "right_exe_result" or (expected_mode == "auto" and pieces is not None) or no_output
    full = [{"input": c["input"], "output": c.get("output", pieces[i] if pieces and i < len(pieces) else "")} for i, c in enumerate(cases)]
    fname = row.get("function_name") if isinstance(row.get("function_name"), str) else None
    ref = row.get("library_solution")  # (strict's library dependence check: the task's reference)
    if ref is None and isinstance(row.get("se_gym"), dict):
        ref = row["se_gym"].get("library_solution")  # (where se-gym's rollout rows keep it: Task.to_official_row)
    if ref is not None and not isinstance(ref, str):
        raise CLIError(f"{where}: field 'library_solution' must be a string")
    return (row["response"], full, fname, pieces if use_pieces else None, ref or None)


def _done_lines(out: Path) -> set[int]:
    """Input lines already judged; a torn last line (killed mid-write) is cut off."""
    if not out.exists():
        return set()
    done: set[int] = set()
    with open(out, "rb+") as f:
        data = f.read()
        end = data.rfind(b"\n") + 1
        if end != len(data):  # a partial row from an interrupted write
            f.truncate(end)
        for raw in data[:end].splitlines():
            try:
                rec = json.loads(raw)
            except ValueError:
                raise CLIError(f"{out}: holds a line that is not JSON; not resuming into it") from None
            if isinstance(rec, dict) and isinstance(rec.get("judge_line"), int):
                done.add(rec["judge_line"])
    return done


def _verdicts_in(out: Path) -> Iterator[dict]:
    with open(out, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line).get("judge") or {}


def summarize(out: Path, verdicts: list[dict] | None = None) -> dict[str, Any]:
    """The summary of the verdict rows in ``out`` (or of ``verdicts``, the rows' ``judge`` fields
    when the caller has them: the file's whole content, in its order)."""
    from se_gym.accuracy import Tally

    status: collections.Counter = collections.Counter()
    etype: collections.Counter = collections.Counter()
    codes: collections.Counter = collections.Counter()
    tally = Tally()
    for v in _verdicts_in(out) if verdicts is None else verdicts:
        status[v.get("status")] += 1
        codes[str(v.get("sebench_code"))] += 1
        if v.get("error_type"):
            etype[v["error_type"]] += 1
        # an infrastructure failure is excluded from accuracy: not the answer's fault
        tally.add(None if v.get("infrastructure") else float(v.get("reward", 0.0)))
    return {
        "rows": tally.samples,
        "judged": tally.judged,
        "infrastructure_failures": tally.infrastructure,
        "accuracy": tally.accuracy or 0.0,
        "mean_reward": tally.mean_reward or 0.0,
        "status": dict(status.most_common()),
        "error_type": dict(etype.most_common()),
        "sebench_code": dict(sorted(codes.items())),
    }


def run(args: argparse.Namespace) -> int:
    from se_gym.library import LibraryError, from_spec

    from ..errors import SandboxUnavailable
    from .core import Judge
    from .types import JudgeError

    cfg = config_from_args(JudgeRunConfig, args)
    inp, out = Path(cfg.input), Path(cfg.out)
    try:
        library = from_spec(cfg.library)
    except LibraryError as exc:
        raise CLIError(str(exc)) from None
    # nothing judged yet: the workers start now, while the rows are read and checked (on a resumed
    # run, once it is known that rows are left)
    fresh = not out.exists() or out.stat().st_size == 0
    try:
        judge = Judge(library, **cfg.judge_kwargs(), reward=cfg.reward, workers=cfg.workers)
    except (JudgeError, SandboxUnavailable) as exc:
        raise CLIError(str(exc)) from None
    with judge:
        if fresh:
            judge.start()
        return _judge_rows(cfg, inp, out, judge, fresh)


def _judge_rows(cfg: JudgeRunConfig, inp: Path, out: Path, judge: Any, fresh: bool) -> int:
    from ..errors import SandboxUnavailable
    from .types import JudgeError

    rows = list(_rows(inp))
    items = {lineno: _item(inp, lineno, row, cfg.expected) for lineno, row in rows}  # validate all first
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _done_lines(out)
    todo = [(lineno, row) for lineno, row in rows if lineno not in done]
    from se_gym.progress import bar as progress_bar

    bar = progress_bar(total=len(rows), initial=len(rows) - len(todo), desc="judging", unit="row", disable=cfg.quiet)
    written: list[dict] | None = [] if fresh and not done else None  # (what the file holds, for the summary)
    try:
        with open(out, "a", encoding="utf-8") as f:
            if todo:
                judge.start()  # the workers start while the first batch is prepared
            batches = [todo[start : start + cfg.batch_size] for start in range(0, len(todo), cfg.batch_size)]
            # two batches in flight: the next one is prepared and its programs queued while this one's
            # last programs run and its rows are written (one at a time, the workers sat idle at each
            # batch's end); rows are still written batch by batch, in order
            with ThreadPoolExecutor(2, thread_name_prefix="se-gym-judge-batch") as ahead:
                flight = [ahead.submit(judge.judge_many, [items[lineno] for lineno, _ in b]) for b in batches[:2]]
                try:
                    for k, batch in enumerate(batches):
                        verdicts = flight[k].result()
                        if k + 2 < len(batches):
                            flight.append(ahead.submit(judge.judge_many, [items[lineno] for lineno, _ in batches[k + 2]]))
                        if not k:  # say which isolation judged these answers before the first verdict is written
                            from se_gym.sandbox.base import isolation_line

                            print(f"se-gym judge: {isolation_line(judge.sandbox)}", file=sys.stderr, flush=True)
                        dicts = [v.to_dict() for v in verdicts]
                        f.write("".join(json.dumps({**row, "judge": d, "judge_line": lineno}) + "\n" for (lineno, row), d in zip(batch, dicts)))
                        if written is not None:
                            written += dicts
                        f.flush()
                        os.fsync(f.fileno())
                        bar.update(len(batch))
                except BaseException:  # an error or an interrupt: what has not begun never will, and
                    for later in flight:  # the batch in flight ends with the judge (not judged to its end)
                        later.cancel()
                    judge.close()
                    raise
    except (JudgeError, SandboxUnavailable) as exc:  # (Ray missing; a node whose verdicts could differ)
        raise CLIError(str(exc)) from None
    finally:
        bar.close()
    # a fresh run's file holds the rows written here, in this order: summed from them, not read back
    summary = summarize(out, written if written is not None and len(written) == len(rows) else None)
    summary_path = out.parent / ((out.name[:-6] if out.name.endswith(".jsonl") else out.name) + ".summary.json")
    summary_path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=1))
    print(f"verdicts: {out}  summary: {summary_path}", file=sys.stderr)
    return 0 if summary["rows"] >= len(rows) else 1
