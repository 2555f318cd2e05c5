"""``se-gym library``: build, document and summarize libraries."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from .. import choices
from ..configs import add_config_arguments, config_from_args


def _add_source(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--seed", type=int, default=None, help="mint a library from this seed (default 0)")
    g.add_argument("--official", metavar="API_DOC_JSONL", help="use SE-Bench's names from its api_doc.jsonl")
    p.add_argument("--package", default="zwc", help="package name of a minted library (default zwc; 'random' mints one)")


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="library_command", metavar="ACTION", required=True)
    b = sub.add_parser("build", help="write an importable library package and its docs")
    _add_source(b)
    b.add_argument("--out", required=True, help="output directory (absent or empty)")
    # the profile the library is written for (strict's is a thin client of a library server): the shared flag
    add_config_arguments(b, choices.OfficialProfileOption, config_flag=False)
    b.set_defaults(func=run_build)
    d = sub.add_parser("doc", help="print one function's doc")
    _add_source(d)
    d.add_argument("name", help="a library name (falekef), or a NumPy name (abs, np.linalg.norm)")
    d.set_defaults(func=run_doc)
    s = sub.add_parser("show", help="summary table of a library")
    _add_source(s)
    s.add_argument("--json", action="store_true", help="print the full mapping as JSON")
    s.set_defaults(func=run_show)
    parser.set_defaults(func=None)


def load(args) -> "Library":  # noqa: F821
    from ..errors import CLIError
    from .core import LibraryError, mint, official

    try:
        if args.official:
            return official(args.official)
        package = None if args.package == "random" else args.package
        return mint(0 if args.seed is None else args.seed, package=package)
    except LibraryError as exc:
        raise CLIError(str(exc)) from None


def run_build(args) -> int:
    from ..errors import CLIError
    from .catalogue import entry
    from .core import LibraryError

    lib = load(args)
    profile = config_from_args(choices.OfficialProfileOption, args).profile
    try:
        out = lib.write(args.out, profile=profile)
    except LibraryError as exc:
        raise CLIError(str(exc)) from None
    with open(Path(out) / "api_doc.jsonl", "w", encoding="utf-8") as f:
        for key, doc in lib.docs().items():
            row = {
                "original_name": entry(key).short,
                "curr_name": lib.names[key],
                "rewritten_doc": doc,
                "func_mapping": json.dumps({entry(key).numpy_path: lib.qualified(key)}),
            }
            f.write(json.dumps(row) + "\n")
    print(f"wrote library {lib.id} ({len(lib.names)} functions, profile {profile}) to {out}/{lib.package}")
    print(f"docs: {out}/api_doc.jsonl   use it: PYTHONPATH={out} python -c 'import {lib.package}'")
    return 0


def run_doc(args) -> int:
    from ..errors import CLIError

    lib = load(args)
    name = args.name
    try:
        key = lib.key_of(name)
    except KeyError:
        try:
            from .catalogue import entry

            key = entry(name).key
        except KeyError:
            raise CLIError(f"{name!r} is neither a name of library {lib.id} nor a catalogue function") from None
    print(f"# {lib.qualified(key)}  (numpy: {key})\n")
    print(lib.doc(key))
    return 0


def run_show(args) -> int:
    from collections import Counter

    from .catalogue import entry

    lib = load(args)
    if args.json:
        print(json.dumps(lib.to_json(), indent=1))
        return 0
    groups = Counter(entry(k).group for k in lib.names)
    print(f"library     {lib.id}")
    print(f"source      {lib.source}")
    print(f"package     {lib.package}   linalg submodule: {lib.package}.{lib.linalg}   array type: {lib.package}.{lib.array_type}")
    print(f"functions   {len(lib.names)}  (" + ", ".join(f"{g} {n}" for g, n in groups.items()) + ")")
    print("\nsample:")
    for key in list(lib.names)[:: max(1, len(lib.names) // 12)][:12]:
        print(f"  {lib.qualified(key):<28} = np.{key}")
    return 0
