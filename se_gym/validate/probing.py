"""Judging a batch of tasks' probes, and what an agent is shown of them (shared by both processes)."""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..choices import PROFILES
from . import probes
from .checks import forms_allowed, printed_form, text_digest, verdict_digest

# probes of a task whose verdicts the second process (and the other sandboxes) judge again
SAMPLED = (("strict", "oracle:native"), ("sebench", "oracle:native"), ("strict", "floor:hardcoded_example_gated"), ("strict", probes.ECHO))
RETRY_STATUSES = ("timeout",)


def judge_supports_dependence() -> tuple[bool, str]:
    """Whether ``Judge`` can check that results depend on the library (``Judge(dependence=True)``)."""
    from ..judge import Judge

    if "dependence" in inspect.signature(Judge.__init__).parameters:
        return True, ""
    return False, "judge has no dependence check yet"


# strict probes judged with the library dependence check, when the judge has one: the reference (whose
# results must depend on the library) and the answer key behind a library call (which must earn nothing).
# The others need no check (it costs a second run and more per passing answer): a judge without it
DEPENDENT = ("oracle:native", probes.ANSWER_KEY_GATED)
WITH_DEPENDENCE = "strict+dependence"


def make_judges(library: Any, sandbox: Any = "local", wall_s: float = 3.0, workers: int | None = None,
                dependence: bool = False, *, cpu_s: float | None = None, memory_mb: int | None = None) -> dict[str, Any]:
    """profile -> a Judge over its own sandbox; with ``dependence`` (the judge has the check), strict's
    is told not to check and a third, ``strict+dependence``, checks on strict's sandbox."""
    from ..judge import Judge
    from ..sandbox import Limits

    limits = Limits(wall_s=wall_s, cpu_s=cpu_s or wall_s, **({"memory_mb": memory_mb} if memory_mb else {}))
    out = {}
    for profile in PROFILES:
        extra = {"dependence": False} if dependence and profile == "strict" else {}
        out[profile] = Judge(library, profile=profile, sandbox=sandbox, limits=limits, workers=workers, **extra)
    if dependence:
        out[WITH_DEPENDENCE] = _Borrowing(lambda: _quiet(Judge(library, profile="strict", sandbox=out["strict"].sandbox, limits=limits, dependence=True)))
    return out


def _quiet(judge: Any) -> Any:
    """A judge that does not warn of a reference failing its own tests: ``se-gym validate`` reports
    that itself (its ``oracle`` check), task by task."""
    judge._warned_reference_fails = True
    return judge


class _Borrowing:
    """A judge made on first use (it borrows a sandbox that starts only when something runs)."""

    def __init__(self, make: Any):
        self._make, self._judge = make, None

    def __getattr__(self, name: str) -> Any:
        if self._judge is None:
            self._judge = self._make()
        return getattr(self._judge, name)

    def close(self) -> None:
        if self._judge is not None:
            self._judge.close()


def judge_name(judges: dict[str, Any], profile: str, key: str) -> str:
    """Which of ``judges`` judges the probe ``key`` of ``profile``."""
    return WITH_DEPENDENCE if profile == "strict" and key in DEPENDENT and WITH_DEPENDENCE in judges else profile


def close_judges(judges: dict[str, Any]) -> None:
    for j in judges.values():
        j.close()


@dataclass
class TaskProbes:
    """One task's probe answers: (profile, key) -> answer text."""

    task: Any
    answers: dict[tuple[str, str], str] = field(default_factory=dict)


def task_probes(task: Any, library: Any, dependence: bool, echo: bool = True) -> TaskProbes:
    """The first round of probes of ``task``: the reference as written under both profiles, the
    floor probes under strict, and on a sample of tasks (``echo``) the echo probe (the feedback it
    draws is the env's code for every task) and, when the judge checks dependence, the gated answer
    key (whether the check can see it follows from what it finds on the reference)."""
    tp = TaskProbes(task)
    if task.library_solution.strip():
        for profile in PROFILES:
            tp.answers[(profile, "oracle:native")] = probes.fenced(task.library_solution)
    for name, text in probes.floor_answers(task, library).items():
        tp.answers[("strict", f"floor:{name}")] = text
    echo_text = probes.echo_answer(task, library) if echo and len(task.test_cases) > 1 else None
    if echo_text is not None:
        tp.answers[("strict", probes.ECHO)] = echo_text
    if dependence and echo:
        key = probes.answer_key_gated(task, library)
        if key is not None:
            tp.answers[("strict", probes.ANSWER_KEY_GATED)] = key
    return tp


def second_forms(tp: TaskProbes, verdicts: dict[tuple[str, str], Any], library: Any) -> dict[tuple[str, str], str]:
    """The reference in the other container (a list where it returned an array, and the reverse),
    under each profile whose expected output allows both, for a reference that passed as written."""
    task, out = tp.task, {}
    for profile in PROFILES:
        v = verdicts.get((profile, "oracle:native"))
        if v is None or v.reward != 1.0 or "list" not in forms_allowed(task, profile, library.array_type):
            continue
        native = printed_form(v)
        if native is None:
            continue
        other = "array" if native == "list" else "list"
        code = probes.reference_form(task.library_solution, task.entry_point, other, library.package, library.names.get("array", "array"))
        if code is not None:
            out[(profile, f"oracle:{other}")] = probes.fenced(code)
    return out


def judge_answers(judges: dict[str, Any], items: Sequence[tuple[Any, str, str, str]], retry_wall_s: float | None = None) -> list[Any]:
    """Verdicts of ``items`` (task, profile, key, answer), one ``judge_many`` batch per profile; an
    answer that timed out runs once more with ``retry_wall_s`` on the same sandbox."""
    from ..judge import Judge
    from ..sandbox import Limits

    out: list[Any] = [None] * len(items)
    names = [judge_name(judges, it[1], it[2]) for it in items]
    for name, judge in judges.items():
        idx = [i for i, n in enumerate(names) if n == name]
        if not idx:
            continue
        batch = [_item(items[i], judge) for i in idx]
        for i, v in zip(idx, judge.judge_many(batch)):
            out[i] = v
        again = [i for i in idx if out[i].status.value in RETRY_STATUSES]
        if again and retry_wall_s:
            kw = {"dependence": judge.dependence} if isinstance(getattr(judge, "dependence", None), bool) else {}
            slow = _quiet(Judge(judge.library, profile=judge.profile, sandbox=judge.sandbox, limits=Limits(wall_s=retry_wall_s, cpu_s=retry_wall_s), **kw))
            for i, v in zip(again, slow.judge_many([_item(items[i], slow) for i in again])):
                out[i] = v
    return out


def _item(item: tuple[Any, str, str, str], judge: Any) -> tuple:
    """The judge's item for one probe: with the task's reference when the judge checks dependence
    (its check compares the probe's results with the reference's)."""
    task, _, _, answer = item
    if getattr(judge, "dependence", False):
        return (answer, task.test_cases, task.function_name, None, task.library_solution or None)
    return (answer, task.test_cases, task.function_name)


def judge_probes(judges: dict[str, Any], tps: Sequence[TaskProbes], library: Any, retry_wall_s: float | None) -> list[dict[tuple[str, str], Any]]:
    """Every probe of ``tps``: the first round, then the reference's second forms."""
    results: list[dict[tuple[str, str], Any]] = [{} for _ in tps]
    items = [(tp.task, p, k, a) for tp in tps for (p, k), a in tp.answers.items()]
    owners = [n for n, tp in enumerate(tps) for _ in tp.answers]
    for n, (it, v) in zip(owners, zip(items, judge_answers(judges, items, retry_wall_s))):
        results[n][(it[1], it[2])] = v
    more = []
    for n, tp in enumerate(tps):
        for (p, k), a in second_forms(tp, results[n], library).items():
            tp.answers[(p, k)] = a
            more.append((n, (tp.task, p, k, a)))
    for (n, it), v in zip(more, judge_answers(judges, [it for _, it in more], retry_wall_s)):
        results[n][(it[1], it[2])] = v
    return results


# -- what the agent is shown ------------------------------------------------------------------------
def make_envs(tasks: Sequence[Any], library: Any, judge: Any, visible_cases: int) -> dict[str, Any]:
    """book -> a two-turn SEBench-v0 over ``tasks`` (sharing ``judge``: nothing is judged through it)."""
    from ..envs.sebench import SEBenchEnv

    # (the judge's own sandbox object: a name would be looked up among the plug-ins again)
    return {book: SEBenchEnv(tasks=list(tasks), library=library, book=book, max_turns=2, visible_cases=visible_cases,
                             return_messages=True, judge=judge, sandbox=judge.sandbox) for book in ("closed", "open")}


def prompts(envs: dict[str, Any], index: int) -> dict[str, str]:
    """book -> the first observation of the task at ``index``."""
    return {book: env.reset(options={"index": index})[0] for book, env in envs.items()}


def observations(envs: dict[str, Any], index: int, answers: dict[tuple[str, str], str],
                 verdicts: dict[tuple[str, str], Any]) -> list[tuple[str, str]]:
    """(where, text) of every observation of the task at ``index``: each book's prompt and chat
    messages, and the second turn after each failed probe (the probe's own text cut out)."""
    from ..envs.sebench import Latency

    out = []
    for book, env in envs.items():
        obs, info = env.reset(options={"index": index})
        out.append((f"{book}-book prompt", obs))
        out += [(f"{book}-book {m['role']} message", m["content"]) for m in info.get("messages", ())]
        for (profile, key), v in verdicts.items():
            if profile != "strict" or key.startswith("oracle") or v.status.value == "passed" or v.infrastructure:
                continue
            env.reset(options={"index": index})
            action = answers[(profile, key)]
            obs2, _, _, _, info2 = env.apply_verdict(action, v, Latency(0.0))
            out.append((f"{book}-book turn 2 after {key}", obs2.replace(action, "")))
            out += [(f"{book}-book turn 2 {m['role']} message after {key}", m["content"]) for m in info2.get("messages", ())[-1:]]
    return out


def digests(task: Any, shown: dict[str, str], verdicts: dict[tuple[str, str], Any], sampled: bool) -> dict[str, str]:
    """What must be byte-identical in another process: the task, its prompts and (sampled) verdicts."""
    out = {"task": task.hash, "prompts": text_digest(*(shown[b] for b in sorted(shown)))}
    if sampled:
        for pk in SAMPLED:
            if pk in verdicts:
                out[f"verdict {pk[0]} {pk[1]}"] = verdict_digest(verdicts[pk])
    return out


def sampled_answers(tp: TaskProbes) -> dict[tuple[str, str], str]:
    return {pk: tp.answers[pk] for pk in SAMPLED if pk in tp.answers}


def episode_order(tasks: Sequence[Any], library: Any, judge: Any, seed: int = 0, n: int = 8) -> list[str]:
    """The ids of the first ``n`` episodes of a seeded env over ``tasks``, split by split."""
    from ..envs.sebench import SEBenchEnv

    out = []
    by_split: dict[str, list[Any]] = {}
    for t in tasks:
        by_split.setdefault(t.split, []).append(t)
    for split in sorted(by_split):
        env = SEBenchEnv(tasks=by_split[split], library=library, judge=judge, sandbox=judge.sandbox)
        env.reset(seed=seed)
        out.append(f"{split}:{env.task.id}")
        for _ in range(min(n, len(by_split[split])) - 1):
            env.reset()
            out.append(f"{split}:{env.task.id}")
    return out


def library_digest(library: Any) -> str:
    import json

    return text_digest(json.dumps(library.to_json(), sort_keys=True), *(library.docs()[k] for k in sorted(library.docs())))
