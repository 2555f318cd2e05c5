"""The package's layers import one way only, checked on the source with ``ast``.

library -> sandbox -> judge -> tasks -> envs/llm/integrations -> training -> agents -> rooms above
(selfplay, experience) -> the applications (demo, cli, bench) and the conformance checkers (testing).  A module may import its own layer and the
layers below it, never one above, not even inside a function (where a cycle hides from import-time
checks).  ``se_gym.distributed`` is a side package used by llm and above; it imports nothing of
those layers.
"""
from __future__ import annotations

import ast
from pathlib import Path

import se_gym

ROOT = Path(se_gym.__file__).resolve().parent

# rank of each top-level part of se_gym; equal ranks may import each other
RANK = {
    "errors": 0, "_version": 0, "storage": 0, "jsonl": 0, "accuracy": 0, "choices": 0, "progress": 0, "_deps": 0, "trajectories": 0,
    "metrics_log": 0, "prometheus": 0, "registry": 0, "configs": 0, "retrieval": 0, "logs": 0,
    "library": 1,
    "sandbox": 2,
    "judge": 3,
    "tasks": 4,
    "distributed": 5,
    "envs": 6, "llm": 6, "integrations": 6, "validate": 6,
    "training": 7,
    "agents": 8, "bases": 8,  # bases: the miniature's tiny pre-trained models (demo, bench, experience build them)
    "selfplay": 9, "experience": 9,
    "demo": 10, "demo_ablation": 10, "bench": 10, "doctor": 10, "cli": 10, "cli_reference": 10,
    "testing": 10,  # the conformance checkers: they run plug-ins as the benchmark and the judge do
}


def test_every_part_of_the_package_has_a_layer():
    # a new top-level module or package must be placed in RANK, or the check would skip it
    parts = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()
             if (p.suffix == ".py" or (p / "__init__.py").is_file()) and p.name != "__init__.py"}
    assert not parts - set(RANK), sorted(parts - set(RANK))


def _part(module: str) -> str | None:
    """The top-level part of ``se_gym.x.y`` (``x``), or None for modules outside se_gym."""
    bits = module.split(".")
    if bits[0] != "se_gym":
        return None
    return bits[1] if len(bits) > 1 else ""


def _imports(rel: Path, source: str) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in the module at ``rel`` (``se_gym/x/y.py``), at any
    depth (functions included)."""
    package = list(rel.with_suffix("").parts[:-1])  # the package relative imports start from
    out = []
    for node in ast.walk(ast.parse(source, str(rel))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:  # from . import x: each name may be a submodule
                    out += [(node.lineno, f"{target}.{a.name}") for a in node.names]
                    continue
            else:
                target = node.module or ""
            out.append((node.lineno, target))
    return out


def _violations(modules) -> list[str]:
    """Imports of a higher layer in ``modules``, pairs of (path relative to the checkout, source)."""
    bad = []
    for rel, source in modules:
        parts = rel.with_suffix("").parts
        own = parts[1] if len(parts) > 1 else ""
        if own not in RANK:
            continue
        for line, module in _imports(rel, source):
            part = _part(module)
            if part in (None, "", own) or part not in RANK:
                continue
            if RANK[part] > RANK[own]:
                bad.append(f"{rel}:{line} ({own}) imports {module} ({part}, a higher layer)")
    return bad


def _package(under: Path):
    return [(p.relative_to(ROOT.parent), p.read_text(encoding="utf-8")) for p in sorted(under.rglob("*.py"))]


def test_the_import_checker_sees_imports_hidden_in_functions():
    # the check itself: a lower layer importing a higher one inside a function is caught,
    # in relative and absolute form; the same import from the higher layer is fine
    probe = "def f():\n    from ..agents import Runner\n    import se_gym.demo\n    from . import rl\n"
    assert len(_violations([(Path("se_gym/training/probe.py"), probe)])) == 2
    assert _violations([(Path("se_gym/agents/probe.py"), "from ..training import rl\n")]) == []
    assert len(_violations([(Path("se_gym/training/sub/probe.py"), "from ...agents import x\n")])) == 1


def test_training_never_imports_agents_or_anything_above():
    found = _violations(_package(ROOT / "training"))
    assert not found, "\n".join(found)


def test_the_package_imports_one_way():
    found = _violations(_package(ROOT))
    assert not found, "\n".join(found)
