"""The strict gate's corpora (issue 31): acceptance rates of the closed and the permissive gate, and
what each lets earn reward end to end.

    PYTHONPATH=.:tests python benchmarks/gate_corpora.py [--fuzz N] [--walks N] [--seed S] [--no-run]

Prints:
* honest-but-unusual answers (tests/_gate_corpus.py, on three seed-0 built-in tasks) accepted by
  the closed gate and by the permissive one (the default with the out-of-process library);
* hostile answers and fuzzed programs the permissive gate accepts (it leaves them to the run time):
  reflective chains and hooks (--fuzz), and frame and signal-handler walks (--walks, issue 42);
* for each gate (gates.set_permissive, in this process) judged end to end under strict, with the
  library where SE_GYM_STRICT_SERVER puts it (out of process by default): the hostile answers and
  fuzzed programs that earn reward > 0 (there must be none), and the honest answers that fail;
* fuzzed "library named but unused" programs (tests/_dependence_corpus.py, issue 42): the reward they
  earn without strict's run-time dependence check, and with it (there must be none).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _dependence_corpus import ORACLES, fuzz_named_unused  # noqa: E402
from _gate_corpus import CASES, block, fuzz_programs, fuzz_walk_programs, honest_answers, hostile_answers  # noqa: E402
from se_gym.judge import Judge, gates  # noqa: E402
from se_gym.library import mint, writer  # noqa: E402
from se_gym.tasks.spec import load_task_spec  # noqa: E402

TASK_IDS = ("builtin/s0/train/0000", "builtin/s0/train/0001", "builtin/s0/train/0012")


def code_of(answer: str) -> str:
    return answer.split("```python\n")[1].split("```")[0]




def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuzz", type=int, default=200, help="fuzzed programs")
    ap.add_argument("--walks", type=int, default=None, help="fuzzed frame and handler walks (default: as --fuzz)")
    ap.add_argument("--seed", type=int, default=0, help="the fuzzer's seed")
    ap.add_argument("--no-run", action="store_true", help="gate figures only (judge nothing)")
    args = ap.parse_args()

    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    honest = honest_answers([t for t in tasks if t.id in TASK_IDS], lib)
    closed = [not gates.strict_check(c, lib.package, lib.linalg, permissive=False) for _, _, c, _ in honest]
    # (as the judge applies it: refused code only in a main block, or in definitions only it uses, is skipped)
    opened = [not (v := gates.strict_check(c, lib.package, lib.linalg, permissive=True))
              or gates.without_refused_demo(c, lib.package, v, "solve") is not None for _, _, c, _ in honest]
    styles = sorted({n for n, *_ in honest})
    by_style = {s: all(ok for (n, *_), ok in zip(honest, closed) if n == s) for s in styles}
    print(f"honest answers: {len(honest)} ({len(styles)} styles x {len(TASK_IDS)} tasks)")
    print(f"  closed gate accepts     {sum(closed)}/{len(honest)} ({100 * sum(closed) / len(honest):.0f}%); "
          f"styles {sum(by_style.values())}/{len(styles)}")
    print(f"  permissive gate accepts {sum(opened)}/{len(honest)} ({100 * sum(opened) / len(honest):.0f}%)")
    print("  closed gate refuses: " + ", ".join(s for s, ok in by_style.items() if not ok))

    lib7 = mint(7)
    hostile = hostile_answers(lib7)
    fuzz = fuzz_programs(lib7, args.seed, args.fuzz)
    walks = fuzz_walk_programs(lib7, args.seed, args.fuzz if args.walks is None else args.walks)
    print(f"fuzzed frame and handler walks (seed {args.seed}): {len(walks)}; permissive gate accepts "
          f"{sum(not gates.strict_check(code_of(a), lib7.package, lib7.linalg, permissive=True) for a in walks)}")
    h_open = {n for n, (_, a) in hostile.items() if not gates.strict_check(code_of(a), lib7.package, lib7.linalg, permissive=True)}
    f_open = sum(not gates.strict_check(code_of(a), lib7.package, lib7.linalg, permissive=True) for a in fuzz)
    h_closed = {n for n, (_, a) in hostile.items() if not gates.strict_check(code_of(a), lib7.package, lib7.linalg, permissive=False)}
    print(f"hostile answers: {len(hostile)}; closed gate accepts {len(h_closed)}, permissive gate accepts {len(h_open)}")
    print(f"fuzzed programs (seed {args.seed}): {len(fuzz)}; permissive gate accepts {f_open}")
    if args.no_run:
        return

    ref7 = f"import {lib7.package}\ndef solve(x):\n    return [float(v) for v in {lib7.qualified('abs')}(x)]\n"
    honest7 = block(ref7)
    for on in (False, True):
        gates.set_permissive(on)
        t0 = time.perf_counter()
        with Judge(lib7, profile="strict", reward="fraction") as judge:
            names = list(hostile)
            # (each with the task's reference, ref7: strict's dependence check runs it beside the answer, issue 42)
            v = judge.judge_many([(hostile[n][1], CASES, None, None, ref7) for n in names]
                                 + [(a, CASES, None, None, ref7) for a in fuzz + walks] + [(honest7, CASES, None, None, ref7)])
        gamed = [(n, x) for n, x in zip(names, v) if x.reward > 0]
        fgamed = [x for x in v[len(names):len(names) + len(fuzz)] if x.reward > 0]
        wgamed = [x for x in v[len(names) + len(fuzz):-1] if x.reward > 0]
        # a hostile answer computes a right value only where its route worked: a wall's failure even
        # where the dependence check then took the reward away
        through = [x for x in v[:-1] if any(c.ok for c in x.cases)]
        where = "library out of process" if writer.STRICT_SERVER else "NumPy in the answer's process"
        label = f"{'permissive' if on else 'closed'} gate, {where}"
        print(f"{label}: hostile with reward > 0: {len(gamed)}/{len(names)}, fuzzed: {len(fgamed)}/{len(fuzz)}, "
              f"walks: {len(wgamed)}/{len(walks)}; with a case right (a wall passed): {len(through)} "
              f"(honest control passed: {v[-1].passed}; {time.perf_counter() - t0:.1f} s)")
        for n, x in gamed:
            print(f"    earned reward: [{hostile[n][0]}] {n} (reward {x.reward})")
        with Judge(lib, profile="strict") as judge:
            hv = judge.judge_many([t.judge_item(block(c)) for _, _, c, t in honest])  # (with its reference: issue 42)
        fails = Counter()
        for (n, *_), x in zip(honest, hv):
            if not x.passed:
                fails[f"{n}: {x.status.value} {x.detail[:90]}"] += 1
        print(f"{label}: honest answers passing end to end under strict: {sum(x.passed for x in hv)}/{len(hv)}")
        for why, k in sorted(fails.items()):
            print(f"    x{k} {why}")
    gates.set_permissive(writer.STRICT_SERVER)
    if writer.STRICT_SERVER:  # the library named but unused (issue 42): the run-time dependence check
        named = fuzz_named_unused([t for t in tasks if t.id in ORACLES], lib, args.seed, args.fuzz)
        t0 = time.perf_counter()
        got = {}
        for on in (False, True):
            with Judge(lib, profile="strict", dependence=on, reward="fraction") as judge:
                got[on] = judge.judge_many([t.judge_item(block(c)) for _, c, t in named])
        print(f"named-but-unused fuzz (seed {args.seed}): {len(named)} programs; reward > 0 without the dependence check: "
              f"{sum(v.reward > 0 for v in got[False])}, with it: {sum(v.reward > 0 for v in got[True])} "
              f"({time.perf_counter() - t0:.1f} s)")
        for (name, _, t), v in zip(named, got[True]):
            if v.reward > 0:
                print(f"    earned reward: {name} ({t.id}) {v.status.value} {v.reward}")


if __name__ == "__main__":
    main()
