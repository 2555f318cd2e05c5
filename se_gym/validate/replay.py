"""The second process of ``se-gym validate``: make a suite again from scratch and say what it got.

    python -m se_gym.validate.replay REQUEST.json ANSWER.json

The request names one suite (:class:`se_gym.validate.suites.SuiteRef`), the splits and limit, the
indices of the tasks whose verdicts to judge again, and the modules to import first (plug-ins that
register task suite kinds).  The answer holds, per task, the digests of
:func:`se_gym.validate.probing.digests`, the seeded env's first episodes and the library's digest.
It is started with another ``PYTHONHASHSEED`` than its parent's.
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any


def replay(request: dict[str, Any]) -> dict[str, Any]:
    from ..library import from_spec
    from . import probing, suites

    for module in request.get("imports", ()):
        importlib.import_module(module)
    ref = suites.SuiteRef(request["spec"], request.get("library"))
    loaded, _, _ = suites.load(ref, request.get("splits", ()), request.get("limit"))
    # a fresh library object from its spec (for a minted one: minted again here)
    library = from_spec(request["library_spec"])
    tasks = [suites.regenerate(ref, t, library) for t in loaded]
    sample = set(request.get("sample", ()))
    judges = probing.make_judges(library, request.get("sandbox", "local"), request.get("wall_s", 3.0), request.get("workers"),
                                 request.get("dependence", False), cpu_s=request.get("cpu_s"), memory_mb=request.get("memory_mb"))
    try:
        envs = probing.make_envs(tasks, library, judges["strict"], request.get("visible_cases", 1))
        picked = [i for i in range(len(tasks)) if i in sample]
        chosen = [probing.TaskProbes(tasks[i], probing.sampled_answers(probing.task_probes(tasks[i], library, request.get("dependence", False))))
                  for i in picked]
        items = [(tp.task, p, k, a) for tp in chosen for (p, k), a in tp.answers.items()]
        verdicts: dict[int, dict] = {i: {} for i in picked}
        owners = [i for i, tp in zip(picked, chosen) for _ in tp.answers]
        for i, it, v in zip(owners, items, probing.judge_answers(judges, items, request.get("retry_wall_s"))):
            verdicts[i][(it[1], it[2])] = v
        out = [probing.digests(t, probing.prompts(envs, i), verdicts.get(i, {}), i in sample) for i, t in enumerate(tasks)]
        order = probing.episode_order(tasks, library, judges["strict"])
    finally:
        probing.close_judges(judges)
    return {"tasks": out, "episode_order": order, "library": probing.library_digest(library)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        raise SystemExit("usage: python -m se_gym.validate.replay REQUEST.json ANSWER.json")
    request = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    answer = replay(request)
    from ..storage import write_text_atomic

    write_text_atomic(argv[1], json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
