"""Experience records, extractors (on recorded episodes), retrieval for injection, and the episode loop.

tests/data/experience_episodes.jsonl holds four miniature episodes judged by the real judge
(recorded by tests/data/record_experience_episodes.py): hallucinated name then the right call
(passed on turn 2); a wrong function then a hallucinated name (failed); right at once (passed);
a NumPy method on the array type then a hallucinated name (failed).
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from se_gym.experience import (
    DocSource,
    Episode,
    Experience,
    ExperienceBank,
    ExperienceError,
    Injector,
    InstanceExtractor,
    LLMInstanceExtractor,
    LLMPrincipleExtractor,
    OracleExtractor,
    PrincipleExtractor,
    Provenance,
    Retriever,
    make_extractor,
    parse_lessons,
    state_text,
)
from se_gym.experience import miniworld as mw
from se_gym.experience.records import dump_jsonl, load_jsonl

DATA = Path(__file__).parent / "data" / "experience_episodes.jsonl"


@pytest.fixture(scope="module")
def recorded():
    eps = load_jsonl(DATA.read_text(encoding="utf-8"), Episode)
    library, groups, train, test = mw.world(0, 2, 2, 2, 1)
    return eps, library


# -- records ------------------------------------------------------------------------------------------
def test_recorded_episodes_round_trip_and_expose_the_verdicts(recorded):
    eps, _ = recorded
    assert [len(e.turns) for e in eps] == [2, 2, 1, 2]
    assert [e.passed for e in eps] == [True, False, True, False]
    assert eps[0].turns[0].error_type == "library_function_hallucination" and "has no attribute 'lofaki'" in eps[0].turns[0].error
    assert "attempt 1 of 2" in eps[0].turns[0].feedback and eps[0].turns[1].feedback == ""  # no feedback after the end
    assert eps[3].error_types == ("array_attribute_hallucination", "library_function_hallucination")
    again = load_jsonl(dump_jsonl(eps), Episode)
    assert again == eps
    with pytest.raises(dataclasses.FrozenInstanceError):
        eps[0].iteration = 3


def test_experience_records_are_frozen_content_addressed_and_validated():
    e = Experience("zwc.foo(x): the sum.", "principle", "function:sum", ("sum",), None, 2, Provenance(("ep1", "ep2"), 1, "deterministic-principle"))
    assert Experience.from_json(json.loads(json.dumps(e.to_json()))) == e
    assert e.id == Experience("zwc.foo(x): the sum.", "principle", "function:sum").id  # id: granularity, topic, text only
    bad = e.to_json()
    bad["text"] = "edited"
    with pytest.raises(ExperienceError, match="does not match"):
        Experience.from_json(bad)
    with pytest.raises(ExperienceError, match="task_id"):
        Experience("a lesson", "instance", "task:x")
    with pytest.raises(ExperienceError, match="granularity"):
        Experience("a lesson", "episode", "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.text = "x"


# -- extractors ---------------------------------------------------------------------------------------
def test_instance_extractor_ties_each_episode_to_its_task_and_ending(recorded):
    eps, library = recorded
    docs = mw.mini_docs(library)
    out = InstanceExtractor(docs).extract(eps, iteration=1)
    assert len(out) == len(eps)
    for e, ep in zip(out, eps):
        assert e.granularity == "instance" and e.task_id == ep.task.id and e.topic == f"task:{ep.task.id}"
        assert e.provenance == Provenance((ep.id,), 1, "deterministic-instance")
        assert e.text.startswith(docs.call(ep.task.functions[0]) + ": " + ep.query)
    assert out[0].text.endswith("(passed on attempt 2)")
    assert out[2].text.endswith("(passed)")
    wrong_function = library.names[eps[2].task.functions[0]]  # episode 1 first called the other task's function
    assert out[1].text.endswith(f"(failed: library_function_hallucination after trying {wrong_function}, mexor)")
    assert "failed: library_function_hallucination after trying" in out[3].text and "pudaro" in out[3].text


def test_principle_extractor_groups_and_deduplicates_across_episodes(recorded):
    eps, library = recorded
    docs = mw.mini_docs(library)
    out = PrincipleExtractor(docs, min_support=2).extract(eps, iteration=0)
    funcs = [e for e in out if e.topic.startswith("function:")]
    # one lesson per function however many episodes were about it, with their support
    assert sorted(e.keys[0] for e in funcs) == sorted({ep.task.functions[0] for ep in eps})
    for e in funcs:
        assert e.text == docs.line(e.keys[0])
        assert e.support == sum(ep.task.functions[0] == e.keys[0] for ep in eps) == len(e.provenance.episodes)
    mistakes = {e.topic: e for e in out if e.topic.startswith("mistake:")}
    # hallucinated names recur in 3 episodes; the array-method mistake and the wrong function once each
    assert set(mistakes) == {"mistake:library_function_hallucination"}
    assert mistakes["mistake:library_function_hallucination"].support == 3
    assert all(name not in e.text for e in out for name in ("lofaki", "mexor", "pudaro"))  # abstract: no task details
    once = PrincipleExtractor(docs, min_support=1).extract(eps)
    assert {"mistake:array_attribute_hallucination", "mistake:return_value_misunderstanding"} <= {e.topic for e in once}
    assert "ZWCArray" in next(e.text for e in once if e.topic == "mistake:array_attribute_hallucination")


def test_oracle_is_the_library_docs_and_the_default_docsource_reads_the_library(recorded):
    eps, library = recorded
    out = OracleExtractor(DocSource(library)).extract(eps, iteration=2)
    keys = sorted({ep.task.functions[0] for ep in eps})
    assert [e.keys[0] for e in out] == keys
    assert [e.text for e in out] == [library.doc(k).strip() for k in keys]
    line = DocSource(library).line(keys[0])
    assert line.startswith(library.qualified(keys[0]) + ": ") and "\n" not in line


def test_bank_merges_principles_across_rounds_and_caps(recorded):
    eps, library = recorded
    ex = PrincipleExtractor(mw.mini_docs(library))
    bank = ExperienceBank()
    first = bank.add(ex.extract(eps[:2], iteration=0))
    assert not any(e.topic.startswith("mistake:") for e in ex.extract(eps[2:]))  # one hallucination alone is no pattern
    second = bank.add(ex.extract(eps[2:], iteration=1, current=bank.items()))  # ... but it recurs across rounds
    topics = [e.topic for e in bank]
    assert len(topics) == len(set(topics))  # deduplicated across rounds
    assert first == 2 and second == 1  # round 1: a new function; the hallucination lesson merged
    lfh = next(e for e in bank if e.topic == "mistake:library_function_hallucination")
    assert lfh.support == 3 and lfh.provenance.iteration == 1 and len(lfh.provenance.episodes) == 3
    assert ExperienceBank.from_jsonl(bank.to_jsonl()).items() == bank.items()
    inst = ExperienceBank(InstanceExtractor(mw.mini_docs(library)).extract(eps), max_entries=2)
    assert len(inst) == 2


class ScriptedLLM:
    """A capable LLM cannot run here: this stands in for one, answering from a script and recording
    the prompts it was given (the tests check what the extractors ask and how they parse)."""

    model_name = "scripted"

    def __init__(self, answers):
        self.answers, self.prompts = list(answers), []

    def generate(self, prompts, params):
        from se_gym.llm.base import Completion, Generation

        out = []
        for p in prompts:
            self.prompts.append(p)
            text = self.answers.pop(0) if self.answers else ""
            out.append(Generation(p, (Completion(text, None, None, "stop"),), "scripted", "scripted", params))
        return out


def test_llm_instance_extractor_shows_verdicts_and_feedback_and_clips(recorded):
    eps, library = recorded
    llm = ScriptedLLM(["<think>hmm</think>Call zwc.mizida(x); the guess zwc.lofaki does not exist. " + "word " * 100, ""])
    out = LLMInstanceExtractor(llm, "zwc", max_words=20).extract(eps[:2], iteration=4)
    assert len(llm.prompts) == 2
    p = llm.prompts[0]
    assert eps[0].query in p and "library_function_hallucination" in p and "has no attribute 'lofaki'" in p and "passed" in p
    assert len(out) == 1  # the empty answer gives nothing
    assert out[0].text.startswith("Call zwc.mizida(x)") and "<think>" not in out[0].text and len(out[0].text.split()) == 21  # 20 + "..."
    assert out[0].task_id == eps[0].task.id and out[0].provenance.extractor == "llm-instance:scripted"


def test_llm_principle_extractor_consolidates_and_parses(recorded):
    eps, library = recorded
    docs = mw.mini_docs(library)
    key = eps[0].task.functions[0]
    name = library.names[key]
    answer = f"Here you go:\n- [{name}] {docs.line(key)}\n- [hallucination] Only call documented functions.\n- [hallucination] Only call documented functions.\n* loose lesson\nnot a lesson"
    llm = ScriptedLLM([answer, "nothing usable"])
    ex = LLMPrincipleExtractor(llm, docs, batch=2)
    out = ex.extract(eps, iteration=1, current=[Experience("old lesson", "principle", "lesson:old")])
    assert len(llm.prompts) == 2  # two batches of two episodes
    assert "old lesson" in llm.prompts[0] and docs.line(key) in llm.prompts[0] and eps[1].turns[-1].error in llm.prompts[0]
    assert [e.text for e in out] == [docs.line(key), "Only call documented functions.", "loose lesson"]  # dedup; bad 2nd answer keeps the list
    assert out[0].keys == (key,) and out[1].topic == "mistake:hallucination"
    assert parse_lessons("1. [a] x\n2) y\n- z") == [("a", "x"), ("", "y"), ("", "z")]


def test_make_extractor_rejects_bad_choices(recorded):
    _, library = recorded
    docs = mw.mini_docs(library)
    assert isinstance(make_extractor("oracle", "llm", docs), OracleExtractor)
    with pytest.raises(ExperienceError, match="generator"):
        make_extractor("principle", "llm", docs)
    with pytest.raises(ExperienceError, match="granularity"):
        make_extractor("episode", "deterministic", docs)


# -- retrieval ----------------------------------------------------------------------------------------
def _lessons(library):
    docs = mw.mini_docs(library)
    from se_gym.training import miniature as mini

    keys = ["cumsum", "argmax", "flip", "diff"]
    out = [Experience(docs.line(k), "principle", f"function:{k}", (k,), None, 1) for k in keys]
    out.append(Experience("Call only functions the zwc docs list; a guessed name fails with AttributeError (module has no attribute).",
                          "principle", "mistake:library_function_hallucination", (), None, 5))
    return out, docs, mini


def test_global_injection_retrieves_by_the_question_within_the_budget(recorded):
    _, library = recorded
    lessons, docs, mini = _lessons(library)
    task = mini.make_task(library, "argmax", __import__("random").Random(0), mini.TRAIN_TEMPLATES, "train", 0)
    inj = Injector("global", lessons, budget=1000)
    chosen = inj.select(task)
    assert chosen[0].keys == ("argmax",)  # the question's wording matches its doc line first
    assert all(e.keys != ("flip",) for e in chosen)  # nothing in common with the question: not injected
    tight = Injector("global", lessons, budget=inj.retriever.count_tokens(lessons[1].text))
    assert tight.select(task) == [lessons[1]]
    # global ignores the state: the same lessons on every turn

    eps = load_jsonl(DATA.read_text(encoding="utf-8"), Episode)
    assert inj.select(task, eps[0].turns[:1]) == chosen
    assert Injector("none", lessons).select(task) == []


def test_stepwise_injection_follows_the_last_error(recorded):
    eps, library = recorded
    lessons, docs, mini = _lessons(library)
    ep = eps[0]  # turn 1 failed: module 'zwc' has no attribute 'lofaki'
    step = Injector("stepwise", lessons, budget=40)
    glob = Injector("global", lessons, budget=40)
    assert step.select(ep.task, ()) == glob.select(ep.task, ())  # the first turn: the question only
    after = step.select(ep.task, ep.turns[:1])
    assert after[0].topic == "mistake:library_function_hallucination"  # the lesson about the error just made
    assert after != glob.select(ep.task, ep.turns[:1])
    s = state_text(ep.task, ep.turns[:1])
    assert ep.query in s and "lofaki" in s and "library_function_hallucination" in s
    for sel in (after, glob.select(ep.task, ep.turns[:1])):
        assert sum(step.retriever.count_tokens(e.text) for e in sel) <= 40


def test_retriever_skips_a_lesson_too_long_for_the_budget_but_fits_a_later_one():
    long = Experience("sum " * 60, "principle", "lesson:long", (), None, 9)
    short = Experience("the sum of all elements", "principle", "lesson:short", (), None, 1)
    r = Retriever([long, short])
    assert [e.topic for _, e in r.rank("return the sum")][:2] == ["lesson:long", "lesson:short"]
    assert r.select("return the sum", budget=10) == [short]
    assert r.select("return the sum", budget=10, max_entries=0) == []
    with pytest.raises(ExperienceError):
        Injector("everywhere")


# -- the episode loop on the environment's multi-turn protocol -------------------------------------------
class ReadsTheLastLine:
    """A scripted policy (the tiny model cannot be steered to fail, then succeed, on purpose): answers
    with a hallucinated name unless a doc line is in the prompt, then calls the last line's function."""

    def __init__(self):
        self.prompts = []

    def sample(self, prompts, n, temperature, max_new_tokens):
        import re

        out = []
        for p in prompts:
            self.prompts.append(p)
            docs = p.split("Task:", 1)[0]
            m = re.findall(r"(zwc\.\w+)\((x|x1, x2)\)", docs)
            sig = re.search(r"^(def solve\(.*\):)$", p, flags=re.M).group(1)
            args = sig[len("def solve("):-2]
            body = f"{m[-1][0]}({args})" if m else f"zwc.nosuch({args})"
            out.append([f"```python\n{sig}\n    return {body}\n```"] * n)
        return out


def test_run_episodes_multi_turn_with_stepwise_injection(recorded):
    from se_gym.experience.episodes import accuracy, run_episodes

    _, library = recorded
    library2, groups, train, test = mw.world(0, 2, 2, 2, 1)
    docs = mw.mini_docs(library2)
    task = train[0][0]
    key = task.functions[0]
    # a lesson that shares no word with the question, only with the error
    lessons = [Experience(f"A guessed name raises AttributeError (module has no attribute); call {docs.call(key)} instead.", "principle", "mistake:lfh", (), None, 1)]
    policy = ReadsTheLastLine()
    closed = run_episodes(policy, [task], library2, Injector("none"), mw.MiniPrompter(), max_turns=3, id_prefix="t")
    assert len(closed[0].turns) == 3 and not closed[0].passed  # truncated after the last failed turn
    assert all(t.feedback for t in closed[0].turns[:2]) and closed[0].turns[2].feedback == ""
    step = run_episodes(policy, [task], library2, Injector("stepwise", lessons, budget=200), mw.MiniPrompter(), max_turns=3, samples=2, id_prefix="t")
    assert len(step) == 2 and step[0].id != step[1].id
    for ep in step:
        # the question alone does not retrieve the lesson; the error of turn 1 does; the pass terminates
        assert [t.injected for t in ep.turns] == [(), (lessons[0].id,)]
        assert ep.passed and ep.context == "experience:stepwise"
        assert "Docs:" in ep.turns[1].prompt and "Docs:" not in ep.turns[0].prompt
    assert accuracy(step) == 1.0 and accuracy(step, first_turn=True) == 0.0


def test_real_world_rounds_and_prompts_for_the_real_recipe(recorded):
    """The built-in suite as rounds (what --model runs on a GPU), and SE-Bench prompts with experience and feedback."""
    from se_gym.experience.episodes import SEBenchPrompter
    from se_gym.experience.loop import builtin_world

    library, groups, train, test = builtin_world(0, 2, 2, 2, 2)
    flat = [k for g in groups for k in g]
    assert len(flat) == len(set(flat)) == 4  # disjoint function groups, one per round
    for g, tasks in zip(groups, train):
        assert tasks and all(t.split == "train" and t.functions[0] in g for t in tasks)
    assert test and all(t.split != "train" and t.functions[0] in flat for t in test)
    eps, _ = recorded
    lesson = Experience("Call only documented functions.", "principle", "mistake:x")
    text = SEBenchPrompter(library).render(train[0][0], [lesson], eps[0].turns[:1])
    assert train[0][0].query.strip() in text and "### Feedback\n" + eps[0].turns[0].feedback in text
    assert text.index("### Feedback") < text.index("- Call only documented functions.")  # experience just before the next action
    assert "Docs" not in text and library.doc(train[0][0].functions[0]).strip()[:40] not in text  # closed book
