"""The house plan of se_gym, read from the source with ``ast``: rooms, arrows and circles.

    python scripts/house.py            # rooms, arrows between rooms, circles
    python scripts/house.py --json     # the same as one JSON object

- a *room* is a top-level part of the package: a subpackage (``se_gym.tasks``) or a top-level module
  (``se_gym.demo``);
- an *arrow* ``a -> b`` says some module of room ``a`` imports one of room ``b`` (with how many
  imports);
- a *reach* is an import of a private name (``_x``) from another room;
- an *arrow back up* is an import of the package face (``se_gym/__init__``) by a module inside the
  package (``from .. import __version__``, ``import se_gym``): the face imports the rooms, so such an
  import runs against every layer at once.  tests/test_house.py asserts there are none;
- a *circle* is a set of modules that import each other round a loop (a strongly connected part of
  the module graph).  Imports inside functions count too: a cycle hidden there is still a cycle in
  the design, only one that import time does not reveal.

The package's ``__init__`` modules are left out of circles: ``se_gym/__init__`` re-exports the
library and registers the environments, so every module that names ``se_gym`` would close a loop
through it that says nothing about the design.  tests/test_house.py asserts there are no circles.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "se_gym"


@dataclass(frozen=True)
class House:
    """The plan: ``rooms`` (name -> modules), ``arrows`` ((from, to) -> imports), ``circles`` (each a
    sorted tuple of modules) and ``room_circles`` (rooms whose arrows run round a loop)."""

    rooms: dict[str, tuple[str, ...]]
    arrows: dict[tuple[str, str], int]
    circles: tuple[tuple[str, ...], ...]
    room_circles: tuple[tuple[str, ...], ...]
    reaches: tuple[str, ...] = ()  # "module imports other.module._name": private names across rooms
    back_up: tuple[str, ...] = ()  # modules inside the package that import the package face (se_gym/__init__)


def _modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file of every module under ``root`` (a package's ``__init__`` as the package)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> tuple[list[str], list[str]]:
    """The se_gym modules the module ``name`` imports, at any depth (functions included), and the
    private names (``module._name``) it takes from them."""
    is_package = path.name == "__init__.py"
    package = name.split(".") if is_package else name.split(".")[:-1]
    found, private = [], []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            # ``from pkg import sub`` imports the submodule; ``from mod import name`` the module
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
            found += subs or [target]
            private += [f"{target}.{a.name}" for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    # ``import se_gym.a.b`` names the deepest module that exists
    out = []
    for target in found:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.append(target)
    return out, private


def room_of(module: str) -> str:
    """``se_gym.tasks.record`` -> ``tasks``; ``se_gym.demo`` -> ``demo``; ``se_gym`` -> ``se_gym``."""
    bits = module.split(".")
    return bits[1] if len(bits) > 1 else bits[0]


def _strong_parts(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected parts of ``graph`` with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        part.append(top)
                        if top == node:
                            break
                    if len(part) > 1:
                        parts.append(sorted(part))
    return parts


def survey(root: Path = ROOT) -> House:
    """Read the package at ``root`` and return its :class:`House`.

    Args:
        root: the ``se_gym`` folder.

    Returns:
        rooms, arrows between rooms, arrows back up to the package face and module circles.
    """
    modules = _modules(root)
    known = set(modules)
    graph, reaches = {}, []
    for name, path in modules.items():
        targets, private = _imports(name, path, known)
        graph[name] = set(targets)
        reaches += [f"{name} imports {p}" for p in private if p.startswith("se_gym.") and room_of(p) != room_of(name)]
    rooms: dict[str, list[str]] = {}
    for name in modules:
        rooms.setdefault(room_of(name), []).append(name)
    arrows: Counter = Counter()
    for name, targets in graph.items():
        for target in targets:
            if room_of(name) != room_of(target) and room_of(target) != "se_gym":
                arrows[room_of(name), room_of(target)] += 1
    packages = {name for name, path in modules.items() if path.name == "__init__.py"}
    plain = {name: {t for t in targets if t not in packages} for name, targets in graph.items() if name not in packages}
    circles = tuple(tuple(part) for part in sorted(_strong_parts(plain)))
    between: dict[str, set[str]] = {room: set() for room in rooms}
    for a, b in arrows:
        between[a].add(b)
    room_circles = tuple(tuple(part) for part in sorted(_strong_parts(between)))
    back_up = tuple(sorted(name for name, targets in graph.items() if name != "se_gym" and "se_gym" in targets))
    return House({room: tuple(sorted(mods)) for room, mods in sorted(rooms.items())}, dict(sorted(arrows.items())),
                 circles, room_circles, tuple(reaches), back_up)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--root", type=Path, default=ROOT, help="the se_gym folder to read (default: this checkout's)")
    args = parser.parse_args(argv)
    house = survey(args.root)
    if args.json:
        print(json.dumps({"rooms": {r: list(m) for r, m in house.rooms.items()},
                          "arrows": [[a, b, n] for (a, b), n in house.arrows.items()],
                          "circles": [list(c) for c in house.circles],
                          "room_circles": [list(c) for c in house.room_circles],
                          "reaches": list(house.reaches), "back_up": list(house.back_up)}, indent=1))
        return 0
    print(f"rooms ({len(house.rooms)}): " + ", ".join(f"{r} ({len(m)})" for r, m in house.rooms.items()))
    print(f"arrows ({len(house.arrows)}):")
    for (a, b), n in house.arrows.items():
        print(f"  {a} -> {b} ({n})")
    print(f"arrows back up to the package face ({len(house.back_up)}):")
    for module in house.back_up:
        print(f"  {module.removeprefix('se_gym.')} -> se_gym")
    print(f"circles between rooms ({len(house.room_circles)}):")
    for circle in house.room_circles:
        print("  " + " <-> ".join(circle))
    print(f"circles ({len(house.circles)}):")
    for circle in house.circles:
        print("  " + " <-> ".join(c.removeprefix("se_gym.") for c in circle))
    print(f"private reaches across rooms ({len(house.reaches)}):")
    for reach in house.reaches:
        print("  " + reach)
    return 0


if __name__ == "__main__":
    sys.exit(main())
