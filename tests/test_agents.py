"""The agent contract and the protocol the Runner enforces (no torch needed).

The language model here is a scripted sampler (a test double: these tests are about what the
agents and the runner do with prompts and trajectories, not about a model).  The judge is real.
"""
import random

import pytest

from se_gym import mint
from se_gym.agents import (
    BM25,
    Agent,
    ClosedBookAgent,
    JudgeScorer,
    Memory,
    MemoryAgent,
    MemoryEntry,
    Observation,
    OpenBookAgent,
    ProtocolError,
    Runner,
    Trajectory,
)
from se_gym.training import miniature as mini

LIB = mint(5)
FUNCS = ["abs", "cumsum", "sort", "flip"]


class Scripted:
    """Answers every prompt with the library call named in its docs, or a wrong name without docs."""

    def __init__(self):
        self.seen: list[str] = []

    def sample(self, prompts, n, temperature, max_new_tokens):
        out = []
        for p in prompts:
            self.seen.append(p)
            hit = None
            for key in FUNCS:
                if LIB.qualified(key) in p and mini.FUNCTIONS[key][1] in p.split("Task:")[-1]:
                    hit = key
            out.append([mini.answer(LIB, hit) if hit else "```python\ndef solve(x):\n    return zwc.nothing(x)\n```"] * n)
        return out

    def sync(self, model):
        pass


@pytest.fixture(scope="module")
def world():
    from se_gym.judge.core import Judge

    train, test = mini.experiment_tasks(LIB, FUNCS, (2, 1), seed=0)

    def render(task, book):
        prompt = mini.render(LIB, task, book, FUNCS)
        return prompt, tuple(line for line in prompt.splitlines() if line.startswith("zwc.")) if book == "open" else ()

    judge = Judge(LIB, profile="sebench")
    yield train, test, Runner(JudgeScorer(judge), render, progress=False)
    judge.close()


def test_closed_book_observations_carry_no_docs(world):
    train, test, runner = world
    for o in runner.observe(test, "closed"):
        assert o.docs == () and "Docs:" not in o.prompt and o.closed_prompt is None
    opened = runner.observe(train, "open")
    assert all(o.docs and "Docs:" in o.prompt and o.closed_prompt and "Docs:" not in o.closed_prompt for o in opened)
    with pytest.raises(ProtocolError):
        Observation(task=test[0], prompt="p", book="closed", split="test", docs=("zwc.x: doc",))


def test_open_book_baseline_beats_closed_book_baseline(world):
    train, test, runner = world
    model = Scripted()
    closed = runner.evaluate(ClosedBookAgent(model), test, "closed")
    opened = runner.evaluate(OpenBookAgent(model), test, "open")
    assert closed.accuracy == 0.0 and opened.accuracy == 1.0
    # an open-book agent evaluated closed book never sees a doc
    model.seen.clear()
    runner.evaluate(OpenBookAgent(model), test, "closed")
    assert model.seen and not any("Docs:" in p for p in model.seen)


def test_learning_from_a_test_split_is_refused(world):
    train, test, runner = world
    agent = MemoryAgent(Scripted())
    traj = runner.rollout(agent, runner.observe(test, "open"))
    with pytest.raises(ProtocolError, match="test"):
        agent.learn(traj)
    assert agent.memory.entries == []
    with pytest.raises(ProtocolError):
        runner.train(agent, test, iterations=1)


def test_memory_agent_learns_names_from_train_experience_and_answers_closed_book(world, tmp_path):
    train, test, runner = world
    model = Scripted()
    agent = MemoryAgent(model, k=1, use_docs=True)
    before = runner.evaluate(agent, test, "closed").accuracy
    history = runner.train(agent, train, iterations=2, book="open", checkpoint_dir=tmp_path / "run")
    assert [h["iteration"] for h in history] == [1, 2]
    after = runner.evaluate(agent, test, "closed").accuracy
    assert before == 0.0 and after == 1.0  # the retrieved doc/experience supplies the name
    # resumption: a fresh agent picks up the saved memory and the finished iterations are skipped
    fresh = MemoryAgent(Scripted(), k=1)
    again = runner.train(fresh, train, iterations=2, book="open", checkpoint_dir=tmp_path / "run")
    assert again == history and len(fresh.memory.entries) == len(agent.memory.entries)


def test_bm25_ranks_the_matching_entry_first():
    bm = Memory()
    bm.add(MemoryEntry("the cumulative sum of x", "A", "experience", "t1"))
    bm.add(MemoryEntry("the elements in reverse order", "B", "experience", "t2"))
    bm.add(MemoryEntry("the absolute value of each element", "C", "experience", "t3"))
    assert [e.value for e in bm.search("return the cumulative sum", 2)][0] == "A"
    assert [e.value for e in bm.search("cumulative sum", 3)] == ["A"]  # only entries sharing a word
    assert bm.search("reverse order please", 1)[0].value == "B"
    assert bm.search("nothing shared", 3) == []
    raw = BM25()
    raw.add("a b")
    raw.add("b c c")
    s = raw.scores("c")
    assert s[0] == 0.0 and s[1] > 0


def test_embedding_retrieval_is_pluggable():
    vocab = ["sum", "reverse", "absolute"]
    embed = lambda text: [float(w in text) for w in vocab]  # noqa: E731 - a stand-in embedding model
    mem = Memory(embed=embed)
    mem.add(MemoryEntry("the cumulative sum", "A", "experience", "t1"))
    mem.add(MemoryEntry("reverse order", "B", "experience", "t2"))
    assert mem.search("reverse it", 1)[0].value == "B"


def test_base_agent_learn_checks_splits():
    class Echo(Agent):
        def act(self, observations):
            return ["" for _ in observations]

    task = mini.make_task(LIB, "abs", random.Random(0), mini.HELDOUT_TEMPLATES, "test", 0)
    obs = Observation(task=task, prompt="p", book="closed", split="test")
    with pytest.raises(ProtocolError):
        Echo().learn([Trajectory(obs, "r", 1.0)])
    # a train-labelled observation of a test task is refused too
    sneaky = Observation(task=task, prompt="p", book="closed", split="train")
    with pytest.raises(ProtocolError):
        Echo().learn([Trajectory(sneaky, "r", 1.0)])


def test_judge_scorer_remembers_a_bounded_number_of_verdicts_used_last():
    from types import SimpleNamespace

    class Counting:
        def __init__(self):
            self.judged: list[str] = []

        def judge_many(self, items):
            self.judged += [response for response, *_ in items]
            return [SimpleNamespace(reward=1.0, infrastructure=response == "flaky") for response, *_ in items]

    task = SimpleNamespace(id="t/1", hash="h", test_cases=(), function_name="def solve(x):")
    judge = Counting()
    scorer = JudgeScorer(judge, cache_size=3)
    assert JudgeScorer(judge).cache_size == 10_000  # the documented default
    scorer([task] * 4, ["a", "b", "a", "c"])
    assert judge.judged == ["a", "b", "c"]  # repeats within a call are judged once
    scorer([task] * 2, ["a", "d"])  # a: remembered (and now used last); d evicts b, the oldest
    assert judge.judged == ["a", "b", "c", "d"] and len(scorer._cache) == 3
    verdicts = scorer([task] * 5, ["b", "c", "a", "d", "e"])  # b judged again; c, a, d remembered at the start of the call
    assert judge.judged == ["a", "b", "c", "d", "b", "e"] and len(verdicts) == 5 and len(scorer._cache) == 3
    scorer([task] * 2, ["flaky", "flaky"])  # an infrastructure failure is never remembered
    scorer([task], ["flaky"])
    assert judge.judged[-2:] == ["flaky", "flaky"] and len(scorer._cache) == 3
    with pytest.raises(ValueError, match="cache_size"):
        JudgeScorer(judge, cache_size=0)
