"""The miniature's base models live in a room of their own (issue 48): the demo, ``se-gym bench`` and
the experience grid build them from ``se_gym.bases``, and no product command imports the demo."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "se_gym"
DEMO_MODULES = {"se_gym/demo.py", "se_gym/demo_ablation.py"}  # the demo itself (and its ablation, run by `se-gym demo`)


def _imports_demo(source: str, rel: str) -> list[int]:
    """Lines of ``source`` (the module at ``rel``, ``se_gym/x/y.py``) that import the demo, at any depth."""
    package = list(Path(rel).with_suffix("").parts[:-1])
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            names = [module] + ([f"{module}.{a.name}" for a in node.names] if node.module is None or module == "se_gym" else [])
        else:
            continue
        if any(n == "se_gym.demo" or n.startswith("se_gym.demo.") for n in names):
            lines.append(node.lineno)
    return lines


def test_no_module_outside_the_demo_imports_the_demo():
    found = [f"{rel}:{line}" for p in sorted(ROOT.rglob("*.py")) if (rel := str(p.relative_to(ROOT.parent))) not in DEMO_MODULES
             for line in _imports_demo(p.read_text(encoding="utf-8"), rel)]
    assert not found, "import the miniature's bases from se_gym.bases, not the demo: " + ", ".join(found)
    # (the check sees what bench/run.py did before: a relative import inside a function, and the other spellings)
    assert _imports_demo("def f():\n    from ..demo import Demo\n", "se_gym/bench/run.py") == [2]
    assert _imports_demo("from .. import demo\nimport se_gym.demo\n", "se_gym/bench/run.py") == [1, 2]


def test_the_demo_and_bench_share_the_bases_and_the_world():
    from se_gym import bases, demo
    from se_gym.bench.config import bench_demo_config

    assert demo.DemoConfig is bases.DemoConfig and demo.experience_base_config is bases.experience_base_config
    assert bench_demo_config() == bases.experience_base_config(quick=True)
    cfg = bases.QUICK
    lib, functions, train, test = bases.miniature_world(1, cfg)
    d_lib, d_functions, d_train, d_test = demo.Demo(Path("unused"), cfg).world(1)
    assert (lib.id, functions, [t.id for t in train], [t.id for t in test]) == (d_lib.id, d_functions, [t.id for t in d_train], [t.id for t in d_test])
    assert len(functions) == cfg.functions and len(train) == cfg.functions * cfg.train_per_function
