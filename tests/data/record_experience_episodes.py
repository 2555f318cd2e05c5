"""Records tests/data/experience_episodes.jsonl: miniature episodes judged by the real judge.

The answers are scripted (wrong name, wrong function, NumPy method on the array type, then the right
call), so that every kind of ending the extractors must handle is present; the verdicts, error types
and feedback are the real judge's and the real environment's.  Rerun: python3 tests/data/record_experience_episodes.py
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from se_gym.experience import miniworld as mw  # noqa: E402
from se_gym.experience.episodes import run_episodes  # noqa: E402
from se_gym.experience.inject import Injector  # noqa: E402
from se_gym.experience.records import dump_jsonl  # noqa: E402
from se_gym.training import miniature as mini  # noqa: E402


def main() -> None:
    library, groups, train, test = mw.world(0, 2, 2, 2, 1)
    tasks = train[0]  # two functions, two questions each
    a, b = tasks[0].functions[0], tasks[2].functions[0]
    call = lambda key, tail="": f"```python\n{mini.signature(key)}\n    return {library.qualified(key)}({mw._args(key)}){tail}\n```"
    bad = lambda name, key: f"```python\n{mini.signature(key)}\n    return {library.package}.{name}({mw._args(key)})\n```"
    script = {
        tasks[0].id: [bad("lofaki", a), call(a)],  # hallucinated name, then right: passed on turn 2
        tasks[1].id: [call(b) if mini.FUNCTIONS[b][0] == mini.FUNCTIONS[a][0] else bad("mexor", a), bad("mexor", a)],  # never right
        tasks[2].id: [call(b)],  # right at once
        tasks[3].id: [call(b, ".tolist()"), bad("pudaro", b)],  # NumPy method on the array type, then a guessed name
    }

    class Sampler:
        def __init__(self):
            self.turn = 0

        def sample(self, prompts, n, temperature, max_new_tokens):
            out = []
            for p in prompts:
                tid = next(t.id for t in tasks if t.query in p)
                out.append([script[tid][min(self.turn, len(script[tid]) - 1)]])
            self.turn += 1
            return out

    eps = run_episodes(Sampler(), tasks, library, Injector("none"), mw.MiniPrompter(), max_turns=2, iteration=0, model="scripted", id_prefix="rec")
    (ROOT / "tests" / "data" / "experience_episodes.jsonl").write_text(dump_jsonl(eps), encoding="utf-8")
    for ep in eps:
        print(ep.id, [(t.status, t.error_type) for t in ep.turns])


if __name__ == "__main__":
    main()
