"""Seasons (``se-gym bench --season SECRET``) and the provenance of a report (``se-gym bench verify``).

A season's libraries are minted from seeds derived from the organiser's secret, so an agent's author
cannot have seen them (nor tuned on them).  The secret never reaches an agent or a report:

* the seeds are 64-bit values derived from it (:func:`season_seed`): the run's folders, logs and
  results name only the seed's index (``seed0``, ``seed1``, ...);
* task ids, which name their library (and so its seed), are replaced by keyed hashes (:func:`public_id`);
* the run folder (``run.json``) and the report hold only a commitment to it (:func:`commitment`), which
  the organiser can open after the season by publishing the secret;
* the command line's copy of the secret is blanked once it is read (``/proc/PID/cmdline`` and
  ``sys.argv``); ``env:NAME`` or ``file:PATH`` keep it off the command line altogether.

A Python agent runs inside the benchmark's process and could read its memory; an untrusted agent in a
season is run as a service (``--agent http:URL``), which sees observations and nothing else.

Every report records what it was computed from: per (seed, agent) the agent's code (the class's source
file, hashed), the memory's digest at freeze and after the test, and a digest of each run folder's
judged answers; :func:`se_gym.bench.verify.verify` recomputes all of it from the run folders.
"""
from __future__ import annotations

import hashlib
import hmac
import inspect
import json
import os
from pathlib import Path
from typing import Any, Sequence

from ..errors import CLIError


def resolve_secret(value: str) -> str:
    """The secret a ``--season`` value names: ``env:NAME`` (an environment variable), ``file:PATH``
    (the file's text, stripped) or the value itself.

    Args:
        value: what ``--season`` was given.

    Raises:
        CLIError: the variable is unset, the file is missing, or the secret is empty.
    """
    if value.startswith("env:"):
        secret = os.environ.get(value[4:])
        if secret is None:
            raise CLIError(f"--season {value}: the environment variable {value[4:]} is not set")
    elif value.startswith("file:"):
        try:
            secret = Path(value[5:]).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise CLIError(f"--season {value}: {exc.strerror}") from None
    else:
        secret = value
    if not secret.strip():
        raise CLIError("--season: the secret is empty")
    return secret


def commitment(secret: str) -> str:
    """A SHA-256 commitment to the secret: published now, checkable once the secret is revealed.
    (Use a long random secret, e.g. ``python -c "import secrets; print(secrets.token_hex(16))"``: a
    short one could be guessed from its commitment.)

    Args:
        secret: the season's secret.
    """
    return hashlib.sha256(b"se-gym season commitment\0" + secret.encode()).hexdigest()


def season_seed(secret: str, tag: str) -> int:
    """A 64-bit library seed derived from the secret.

    Args:
        secret: the season's secret.
        tag: which seed of the season.
    """
    return int.from_bytes(hmac.new(secret.encode(), b"se-gym season seed\0" + tag.encode(), hashlib.sha256).digest()[:8], "big")


def public_id(secret: str, task_id: str) -> str:
    """A task id that does not name the library it was minted for.

    Args:
        secret: the season's secret.
        task_id: the task's own id.
    """
    return "t" + hmac.new(secret.encode(), b"se-gym season task\0" + task_id.encode(), hashlib.sha256).hexdigest()[:16]


def sha256_file(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, as hex.

    Args:
        path: the file.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def code_identity(spec: str) -> dict:
    """What ran as the agent ``spec``: the class and a SHA-256 of its source file (a service: its URL).

    Args:
        spec: the agent as typed.
    """
    from .._version import __version__
    from .agents import agent_class

    if spec.startswith(("http:", "https:")):
        return {"service": spec}
    cls = agent_class(spec)
    out: dict[str, Any] = {"class": f"{cls.__module__}:{cls.__qualname__}", "se_gym": __version__}
    try:
        source = inspect.getsourcefile(cls)
    except TypeError:
        source = None
    if source:
        out.update(file=Path(source).name, source=str(Path(source).resolve()), sha256=sha256_file(source))
    return out


RESULT_FILES = ("test.jsonl", "result.json", "freeze.json", "learn.jsonl")


def results_digest(run_dir: str | os.PathLike) -> str:
    """SHA-256 over a run folder's configuration and every judged answer and result in it (the
    ``seed*/<agent>/`` files named in :data:`RESULT_FILES`, the stability pass's too), by relative path.

    Args:
        run_dir: the run folder.
    """
    root = Path(run_dir)
    h = hashlib.sha256()
    files = [root / "run.json"] + sorted(p for p in root.glob("seed*/**/*") if p.is_file() and p.name in RESULT_FILES)
    for p in files:
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0" + sha256_file(p).encode() + b"\n")
    return h.hexdigest()


def provenance(run_dirs: Sequence[str]) -> dict:
    """Per run folder: its results digest, and per (seed, agent) the code and the memory digests.

    Args:
        run_dirs: the run folders (``se-gym bench --out``).
    """
    out = {}
    for d in run_dirs:
        agents = {}
        for result_path in sorted(Path(d).glob("seed*/*/result.json")):
            r = json.loads(result_path.read_text(encoding="utf-8"))
            agents[f"seed{r['seed']}/{r['agent']}"] = {"code": r.get("code"), "memory_at_freeze": r["freeze"]["digest"],
                                                      "memory_after_test": r["digest_after"]}
        out[str(d)] = {"results_sha256": results_digest(d), "agents": agents}
    return out


def season_of(run_dirs: Sequence[str]) -> str | None:
    """The season commitment the run folders were made under (None: not a season).

    Args:
        run_dirs: the run folders (``se-gym bench --out``).

    Raises:
        CLIError: the folders come from different seasons.
    """
    seasons = set()
    for d in run_dirs:
        meta = Path(d) / "run.json"
        if meta.is_file():
            seasons.add(json.loads(meta.read_text(encoding="utf-8")).get("config", {}).get("season"))
    seasons.discard(None)
    if len(seasons) > 1:
        raise CLIError("these run folders come from different seasons (different commitments): report them apart")
    return seasons.pop() if seasons else None


__all__ = ["code_identity", "commitment", "provenance", "sha256_file", "public_id", "resolve_secret", "results_digest", "season_of", "season_seed"]
