"""``se-gym tasks``: build the built-in suite in the official layout, and summarize suites."""
from __future__ import annotations

import argparse
import collections
import time
from dataclasses import dataclass, field

from ..configs import add_config_arguments, config_from_args


@dataclass(frozen=True)
class BuildOptions:
    """``se-gym tasks build``."""

    out: str = field(metadata={"help": "output directory (absent, empty, or an earlier suite)"})
    seed: int = field(default=0, metadata={"help": "suite and library seed"})
    sizes: str = field(default="", metadata={"help": "split sizes, e.g. train=718,single_test=278,multiple_test=440 ('': the official ones)"})
    functions: str = field(default="", metadata={"help": "comma-separated catalogue keys to restrict single-function tasks to ('': all)"})
    validate: bool = field(default=True, metadata={"help": "check every task (--no-validate: faster, not recommended)"})
    in_process_only: bool = field(default=False, metadata={"help": "validate in process only, without the judge (quick look)"})


@dataclass(frozen=True)
class ShowOptions:
    """``se-gym tasks show`` (besides the folder argument)."""

    seed: int | None = field(default=None, metadata={"help": "summarize the cached built-in suite of this seed (None: 0 when no folder is given)"})
    sebench: str | None = field(default=None, metadata={"help": "summarize official SE-Bench files (folder or one JSONL file)", "metavar": "PATH"})
    examples: int = field(default=1, metadata={"help": "example queries to print per split"})


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)
    b = sub.add_parser("build", help="generate the built-in suite and write it as SE-Bench JSONL files")
    add_config_arguments(b, BuildOptions)
    b.set_defaults(func=run_build)
    s = sub.add_parser("show", help="summarize a suite: counts, functions covered, difficulty, examples")
    s.add_argument("dir", nargs="?", help="a folder written by 'tasks build' (or any official-layout folder)")
    add_config_arguments(s, ShowOptions)
    s.set_defaults(func=run_show)
    parser.set_defaults(func=None)


def parse_sizes(text: str) -> dict[str, int]:
    from ..errors import CLIError

    sizes: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not value.strip().isdigit():
            raise CLIError(f"--sizes: expected SPLIT=COUNT, got {part!r}")
        sizes[name.strip()] = int(value)
    return sizes


def run_build(args) -> int:
    from ..errors import CLIError
    from ..library import LibraryError
    from .builtin import build_suite
    from .record import TaskError

    o = config_from_args(BuildOptions, args)
    functions = [f.strip() for f in o.functions.split(",") if f.strip()] or None
    start = time.perf_counter()
    try:
        suite = build_suite(o.seed, sizes=parse_sizes(o.sizes), functions=functions, progress=True,
                            validate=False if not o.validate else ("inprocess" if o.in_process_only else True))
        out = suite.write(o.out)
    except (TaskError, LibraryError) as exc:
        raise CLIError(str(exc)) from None
    counts = ", ".join(f"{k} {v}" for k, v in suite.manifest["counts"].items())
    print(f"wrote {out}: {counts}; library {suite.library.id}; {time.perf_counter() - start:.1f} s")
    return 0


def _summary(name: str, splits: dict, examples: int) -> None:
    print(f"suite: {name}")
    for split, tasks in splits.items():
        funcs = collections.Counter(k for t in tasks for k in t.functions)
        diff = collections.Counter(t.difficulty for t in tasks)
        styles = collections.Counter(t.metadata.get("style", "-") for t in tasks)
        print(f"  {split}: {len(tasks)} tasks, {len(funcs)} functions covered, "
              f"difficulty {dict(sorted(diff.items()))}, styles {dict(sorted(styles.items()))}")
        for t in tasks[:examples]:
            first = t.query.strip().splitlines()[0]
            print(f"    e.g. {t.id} [{', '.join(t.functions)}]: {first[:150]}")


def run_show(args) -> int:
    from pathlib import Path

    from ..errors import CLIError
    from .builtin import SPLITS, builtin_tasks, load_suite
    from .record import TaskError
    from .sebench import load_sebench

    folder, o = args.dir, config_from_args(ShowOptions, args)
    try:
        if o.sebench:
            p = Path(o.sebench)
            if p.is_file():
                split = next((s for s in SPLITS if p.stem.startswith(s)), "single_test")
                splits = {split: load_sebench(split, p)}
            else:
                splits = {}
                for s in SPLITS:
                    try:
                        splits[s] = load_sebench(s, p)
                    except TaskError as exc:
                        if "holds no" not in str(exc):
                            raise
            name = str(p)
        elif folder:
            suite = load_suite(folder)
            splits, name = dict(suite.splits), folder
        else:
            seed = 0 if o.seed is None else o.seed
            splits = {s: builtin_tasks(s, seed=seed, progress=True) for s in SPLITS}
            name = f"builtin seed {seed}"
    except TaskError as exc:
        raise CLIError(str(exc)) from None
    if not splits:
        hint = " (the built-in suite: --seed N)" if folder and not Path(folder).exists() else ""
        raise CLIError(f"no task files found in {name}{hint}")
    _summary(name, splits, o.examples)
    return 0
