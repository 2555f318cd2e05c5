"""Strict's run-time library dependence check (issue 42): who it accepts, what it changes, what it costs.

Prints figures (not a test):
  corpora  the honest-but-unusual answers of tests/_gate_corpus.py (with their task's reference),
           the honest alternatives and the named-but-unused answers of tests/_dependence_corpus.py
           (with and without references) and N fuzzed named-but-unused programs
  parity   parity_dev (/work/shared/sebench) under strict with the check off and on (each task's
           reference: its ``b_notolist`` translation, else ``b_notolist_np``, where strict accepts it;
           and with no references at all): every row the check changes, with its reason; and
           sebench's agreement with the official verdicts (it must stay 780/780)
  redteam  wave 4's red-team round (tests/_reward_redteam_corpus.py) and the query and conversion
           tasks (tests/_dependence_corpus.py QUERY_TASKS): how many hostile answers earn reward
           with the check and without it, how many honest ones pass, each one's verdict
  speed    the parity_dev answers judged under sebench, strict without the check and strict with
           it, in alternating rounds (one judge each, started before the rounds; the first round
           with the check records the references, later ones find them cached): rows/s and CPU
           per row split by process (judge; workers and zygotes; answers; library servers), and
           how many programs each ran

The machine may be shared: say the load with the figures and compare only within one run.

    PYTHONPATH=.:tests python benchmarks/dependence.py [corpora] [parity] [redteam] [speed] [--rounds N] [--fuzz N]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

DATA = Path(os.environ.get("SE_GYM_SHARED", "/work/shared")) / "sebench"


def corpora(fuzz: int) -> None:
    from _dependence_corpus import DETECTORS, ORACLES, SHAPES, fuzz_named_unused, honest_alternatives, named_unused
    from _gate_corpus import block, honest_answers
    from se_gym.judge import Judge
    from se_gym.tasks.spec import load_task_spec

    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    by_id = {t.id: t for t in tasks}
    styles = honest_answers([by_id[i] for i in ("builtin/s0/train/0000", "builtin/s0/train/0001", "builtin/s0/train/0012")], lib)
    mine = [by_id[i] for i in ORACLES]
    alts, unused, fuzzed = honest_alternatives(mine, lib), named_unused(mine, lib), fuzz_named_unused(mine, lib, 0, fuzz)

    def items(rows, ref=True):
        return [(block(code), t.test_cases, t.function_name, None, t.library_solution if ref else None) for *_, code, t in rows]

    with Judge(lib, profile="strict") as judge, Judge(lib, profile="strict", dependence=False) as off:
        t0 = time.perf_counter()
        v_styles = judge.judge_many(items(styles))
        v_alts = judge.judge_many(items(alts))
        base = off.judge_many(items(unused) + items(fuzzed))
        v_unused = judge.judge_many(items(unused))
        v_plain = judge.judge_many(items(unused, ref=False))
        v_fuzz = judge.judge_many(items(fuzzed))
        dt = time.perf_counter() - t0
    print(f"honest-but-unusual answers (tests/_gate_corpus.py, 3 tasks), with references: {sum(v.passed for v in v_styles)}/{len(styles)} pass")
    for (name, *_, t), v in zip(styles, v_styles):
        if not v.passed:
            print(f"    {name} ({t.id}): {v.status.value} {v.detail[:100]}")
    ok = sum(v.passed == (e == "pass") for (_, e, _, _), v in zip(alts, v_alts))
    honest = [v for (_, e, _, _), v in zip(alts, v_alts) if e == "pass"]
    print(f"honest alternatives: {sum(v.passed for v in honest)}/{len(honest)} of those meant to pass pass; "
          f"{sum(not v.passed for (_, e, _, _), v in zip(alts, v_alts) if e == 'reject')}/{len(alts) - len(honest)} "
          f"core-elsewhere ones refused ({ok}/{len(alts)} as the corpus says)")
    for (name, e, _, t), v in zip(alts, v_alts):
        print(f"    [{e:6s}] {name} ({t.id[-4:]}): {v.status.value} {(v.dependence or {}).get('cases')}")
    earned = sum(v.passed for v in base[:len(unused)])
    print(f"named-but-unused answers ({len(SHAPES)} shapes + {len(DETECTORS)} detectors x {len(mine)} tasks = {len(unused)}): "
          f"{earned} earn 1.0 without the check; with it and references: {sum(v.reward > 0 for v in v_unused)} earn reward; "
          f"without references: {sum(v.reward > 0 for v in v_plain)}")
    for (name, _, t), v in zip(unused, v_plain):
        if v.reward > 0:
            print(f"    without a reference: {name} ({t.id[-4:]}) earns {v.reward}")
    print(f"fuzzed named-but-unused programs (seed 0): {len(fuzzed)}; {sum(v.passed for v in base[len(unused):])} earn 1.0 "
          f"without the check; {sum(v.reward > 0 for v in v_fuzz)} with it; statuses {dict(Counter(v.status.value for v in v_fuzz))}")
    print(f"({dt:.1f} s)")


def redteam() -> None:
    from _dependence_corpus import QUERY_TASKS, query_answers
    from _gate_corpus import block
    from _reward_redteam_corpus import TASKS, render
    from se_gym.judge import Judge
    from se_gym.tasks.spec import load_task_spec

    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    by_id = {t.id: t for t in tasks}
    hostile, honest = render(by_id, lib)
    queries = query_answers([by_id[i] for i in QUERY_TASKS], lib)
    plain = [(name, code, t) for name, e, code, t in queries if e == "plain"]
    honest = honest + [r for r in queries if r[1] != "plain"]
    hostile = hostile + plain

    def items(rows):
        return [(block(code), t.test_cases, t.function_name, None, t.library_solution) for *_, code, t in rows]

    with Judge(lib, profile="strict") as judge, Judge(lib, profile="strict", dependence=False) as off:
        t0 = time.perf_counter()
        on, without, good = judge.judge_many(items(hostile)), off.judge_many(items(hostile)), judge.judge_many(items(honest))
        dt = time.perf_counter() - t0
    print(f"red-team round ({len(TASKS)} tasks) and query/conversion tasks: hostile {len(hostile)}: "
          f"{sum(v.reward > 0 for v in on)} earn reward with the check, {sum(v.reward > 0 for v in without)} without it")
    for (name, _, t), v in zip(hostile, on):
        print(f"    {'EARNS' if v.reward > 0 else 'ok   '} {name} ({t.id[-4:]}): {v.status.value}")
    meant = [(e, v) for (_, e, _, _), v in zip(honest, good)]
    print(f"honest: {sum(v.passed for e, v in meant if e == 'pass')}/{sum(e == 'pass' for e, _ in meant)} pass; "
          f"{sum(not v.passed for e, v in meant if e == 'reject')}/{sum(e == 'reject' for e, _ in meant)} refused by design  ({dt:.0f} s)")
    for (name, e, _, t), v in zip(honest, good):
        print(f"    [{e:6s}] {name} ({t.id[-4:]}): {v.status.value} {(v.dependence or {}).get('cases')}")


def _parity_items():
    from se_gym.library import official

    rows = [json.loads(line) for line in (DATA / "parity_dev.jsonl").read_text().splitlines() if line.strip()]
    lib = official(DATA / "api_doc.jsonl")
    return rows, lib


def _references(rows, lib) -> dict[int, str]:
    """Per task, the code of its first translated variant strict accepts (check off): the reference."""
    from se_gym.judge import Judge
    from se_gym.judge.extract import extract_code

    order = ("b_notolist", "b_notolist_np")
    cands = [r for name in order for r in rows if r["variant"] == name]
    with Judge(lib, profile="strict", dependence=False) as j:
        got = j.judge_many([(r["response"], r["test_cases"], None, r["right_exe_result"].split("#")) for r in cands])
    refs: dict[int, str] = {}
    for r, v in zip(cands, got):
        if v.passed and r["task_index"] not in refs:
            refs[r["task_index"]] = extract_code(r["response"])
    return refs


def parity() -> None:
    from se_gym.judge import Judge

    rows, lib = _parity_items()
    refs = _references(rows, lib)
    tasks = {r["task_index"] for r in rows}
    print(f"parity_dev: {len(rows)} rows, {len(tasks)} tasks; a reference for {len(refs)} tasks")
    plain = [(r["response"], r["test_cases"], None, r["right_exe_result"].split("#")) for r in rows]
    with_ref = [(*it, refs.get(r["task_index"])) for it, r in zip(plain, rows)]
    t0 = time.perf_counter()
    with Judge(lib, profile="sebench") as j:
        seb = j.judge_many(with_ref)
    agree = sum(v.sebench_code == r["verdict"] for v, r in zip(seb, rows))
    print(f"sebench agrees with the official verdicts on {agree}/{len(rows)} rows; accepts {sum(v.passed for v in seb)}")
    with Judge(lib, profile="strict", dependence=False) as j:
        off = j.judge_many(with_ref)
    with Judge(lib, profile="strict") as j:
        on = j.judge_many(with_ref)
        bare = j.judge_many(plain)
    print(f"strict, check off: accepts {sum(v.passed for v in off)}; on, with references: {sum(v.passed for v in on)}; "
          f"on, no references: {sum(v.passed for v in bare)}  ({time.perf_counter() - t0:.0f} s)")
    for label, got in (("with references", on), ("without references", bare)):
        changed = [i for i, (a, b) in enumerate(zip(off, got)) if (a.status, a.reward) != (b.status, b.reward)]
        print(f"rows the check changes under strict ({label}): {len(changed)}")
        for i in changed:
            v, r = got[i], rows[i]
            print(f"  row {i} (task {r['task_index']}, {r['variant']}): {off[i].status.value} -> {v.status.value}: {v.detail[:160]}"
                  f"  cases {(v.dependence or {}).get('cases')}")
        kinds = Counter(c for v in got if v.dependence and v.dependence.get("ran") for c in v.dependence.get("cases", ()))
        print(f"  per-case findings of the accepted answers checked ({label}): {dict(kinds)}")


def speed(rounds: int) -> None:
    from library_server import _tree_cpu, program_cpu


    rows, lib = _parity_items()
    refs = _references(rows, lib)
    items = [(r["response"], r["test_cases"], None, r["right_exe_result"].split("#"), refs.get(r["task_index"])) for r in rows]
    with program_cpu() as seen:
        figures = _speed_rounds(rows, items, lib, seen, rounds, _tree_cpu)
    _speed_report(rows, figures, rounds)


def _speed_rounds(rows, items, lib, seen, rounds, tree_cpu) -> dict:
    from se_gym.judge import Judge

    judges = {"sebench": Judge(lib, profile="sebench"), "strict": Judge(lib, profile="strict", dependence=False),
              "strict+check": Judge(lib, profile="strict")}
    figures: dict[str, list] = {k: [] for k in judges}
    try:
        for j in judges.values():
            j.judge(*items[1][:2])  # start the pool
        for k in range(rounds):
            for name, j in judges.items():
                seen.clear()
                c0, p0 = tree_cpu(), time.process_time()
                t = time.perf_counter()
                got = j.judge_many(items)
                dt = time.perf_counter() - t
                judge_cpu = time.process_time() - p0
                children = tree_cpu() - c0
                answer, server = sum(x[0] for x in seen), sum(x[1] for x in seen)
                figures[name].append((len(rows) / dt, judge_cpu, children - answer - server, answer, server, len(seen),
                                      sum(v.passed for v in got)))
    finally:
        for j in judges.values():
            j.close()
    return figures


def _speed_report(rows, figures, rounds) -> None:
    load = os.getloadavg()
    print(f"parity_dev speed, {rounds} alternating rounds of {len(rows)} rows (load {load[0]:.1f} {load[1]:.1f}); "
          "CPU in ms per row; round 1 of strict+check records the references")
    for name, runs in figures.items():
        for k, r in enumerate(runs):
            print(f"  {name:13s} round {k + 1}: {r[0]:6.1f} rows/s  judge={r[1] / len(rows) * 1e3:.2f} workers={r[2] / len(rows) * 1e3:.2f} "
                  f"answers={r[3] / len(rows) * 1e3:.2f} servers={r[4] / len(rows) * 1e3:.2f} "
                  f"total={sum(r[1:5]) / len(rows) * 1e3:.2f}  programs={r[5]} accepted={r[6]}")
    warm = lambda runs: runs[1:] or runs  # noqa: E731
    for a, b in (("strict+check", "sebench"), ("strict+check", "strict"), ("strict", "sebench")):
        x, y = figures[a], figures[b]
        for label, rx, ry in (("rounds 2+", warm(x), warm(y)), ("round 1", x[:1], y[:1])):
            rate = sum(r[0] for r in rx) / len(rx) / (sum(r[0] for r in ry) / len(ry))
            cpu = sum(sum(r[1:5]) for r in rx) / len(rx) / (sum(sum(r[1:5]) for r in ry) / len(ry))
            print(f"  {a} against {b} ({label}): rows/s x{rate:.2f}, CPU per row x{cpu:.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="*", default=["corpora", "parity", "redteam", "speed"], choices=["corpora", "parity", "redteam", "speed"])
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of the speed figures")
    ap.add_argument("--fuzz", type=int, default=200, help="fuzzed named-but-unused programs")
    args = ap.parse_args()
    for what in args.what:
        if what == "corpora":
            corpora(args.fuzz)
        elif what == "parity":
            parity()
        elif what == "redteam":
            redteam()
        else:
            speed(args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
