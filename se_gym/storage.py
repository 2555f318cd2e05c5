"""Files that survive a kill: atomic writes, and run folders bound to the configuration that made them.

Everything se-gym writes for later (checkpoints, libraries, suites, rollouts, demo stages,
self-play and experience rounds) goes through here:

* :func:`atomic_dir` / :func:`write_json_atomic` / :func:`write_text_atomic`: the new content is
  written beside the target and renamed into place, so a reader (or a rerun after ``kill -9``)
  sees the old version or the new one, never half of one.
* :class:`RunDir`: a resumable output folder that remembers the configuration it was made with.
  Reopening it with another configuration raises :class:`ConfigMismatch` naming what differs,
  instead of silently mixing results of two experiments.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, Mapping

from .errors import CLIError

RUN_FILE = "run.json"
HOLD_ENV = "SE_GYM_HOLD_AT"


def hold_at(stage: str) -> None:
    """Stop here for good when ``SE_GYM_HOLD_AT`` names this stage (e.g. ``round_001/learn``): resumability
    tests kill a run at a known point; a kill timed by polling for files races a tiny model that
    finishes the next stage before the poll sees the last one."""
    if os.environ.get(HOLD_ENV) == stage:
        print(f"[hold] before {stage} ({HOLD_ENV})", flush=True)
        while True:
            time.sleep(3600)


def _old_name(target: Path) -> Path:
    return target.with_name(f".{target.name}.old")


def _recover(target: Path) -> None:
    """Finish a replacement a kill interrupted between its two renames (target gone, old kept)."""
    old = _old_name(target)
    if old.exists():
        if target.exists():
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(old, target)


@contextlib.contextmanager
def atomic_dir(target: str | os.PathLike, mode: int | None = None) -> Iterator[Path]:
    """Yield an empty staging folder; when the block succeeds it replaces ``target``.

    The old ``target`` (if any) is renamed aside, the staging folder renamed into place, then the
    old one removed: a kill at any point leaves either version whole, and the next call (or
    :func:`recover_dir`) restores the old one if the new one never landed.  ``mode``: permissions
    of the folder (mkdtemp's are 0700).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _recover(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield tmp
        if mode is not None:
            os.chmod(tmp, mode)
        old = _old_name(target)
        if target.exists():
            os.replace(target, old)
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def recover_dir(target: str | os.PathLike) -> None:
    """Restore ``target`` if a replacement by :func:`atomic_dir` was killed half-way."""
    _recover(Path(target))


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: str | os.PathLike, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


class ConfigMismatch(CLIError):
    """A run folder holds results made with another configuration."""


def _flat(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in config.items():
        if isinstance(v, Mapping):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def config_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``key: old -> new`` for every setting that differs (nested keys dotted)."""
    a, b = _flat(old), _flat(new)
    missing = object()
    return [
        f"{k}: {a.get(k, '(unset)')!r} -> {b.get(k, '(unset)')!r}"
        for k in sorted(set(a) | set(b))
        if a.get(k, missing) != b.get(k, missing)
    ]


def _normal(config: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration as JSON will give it back (tuples become lists, keys strings)."""
    return json.loads(json.dumps(dict(config), sort_keys=True, default=str))


class RunDir:
    """A resumable output folder bound to ``(kind, config)``.

    The first open writes ``run.json``; a later open with the same kind and configuration
    resumes; anything else raises :class:`ConfigMismatch` with the differing keys, unless
    ``restart=True``, which clears the folder first.  Stages (``stage(name)``) are subfolders
    with a ``DONE`` marker; a stage may bind extra configuration of its own.

    Pass in ``config`` only what changes results (sizes, seeds, learning rates, model), not
    presentation (progress bars, thread counts).
    """

    def __init__(self, path: str | os.PathLike, kind: str, config: Mapping[str, Any], *, restart: bool = False):
        self.path = Path(path)
        self.kind = kind
        self.config = _normal(config)
        if restart and self.path.exists():
            shutil.rmtree(self.path)
        self.path.mkdir(parents=True, exist_ok=True)
        _bind(self.path, kind, self.config, hint="use another --out folder, or --restart to discard it")

    def stage(self, name: str, config: Mapping[str, Any] | None = None) -> Path:
        """The folder of stage ``name`` (created), checked against its own ``config`` if given."""
        path = self.path / name
        recover_dir(path)
        path.mkdir(parents=True, exist_ok=True)
        if config is not None:
            _bind(path, f"{self.kind}/{name}", _normal(config), hint="use another --out folder, or --restart to discard it")
        return path

    def done(self, name: str) -> bool:
        return (self.path / name / "DONE").is_file()

    def mark_done(self, name: str, info: Mapping[str, Any] | None = None) -> None:
        write_json_atomic(self.path / name / "DONE", dict(info or {}))

    def read_done(self, name: str) -> dict:
        return json.loads((self.path / name / "DONE").read_text(encoding="utf-8"))


def _bind(path: Path, kind: str, config: dict, hint: str) -> None:
    meta = path / RUN_FILE
    if meta.is_file():
        try:
            saved = json.loads(meta.read_text(encoding="utf-8"))
        except ValueError:
            raise ConfigMismatch(f"{meta} is not readable JSON; {hint}") from None
        if saved.get("kind") != kind:
            raise ConfigMismatch(f"{path} holds a {saved.get('kind')!r} run, not {kind!r}; {hint}")
        diff = config_diff(saved.get("config", {}), config)
        if diff:
            shown = "; ".join(diff[:5]) + (f"; (+{len(diff) - 5} more)" if len(diff) > 5 else "")
            raise ConfigMismatch(f"{path} was made with another configuration ({shown}); {hint}")
        return
    if any(p.name != RUN_FILE and not p.name.startswith(".") for p in path.iterdir()) and kind.count("/") == 0:
        raise ConfigMismatch(f"{path} is not empty and was not made by a se-gym {kind} run; {hint}")
    from ._version import __version__

    write_json_atomic(meta, {"kind": kind, "config": config, "se_gym": __version__})
