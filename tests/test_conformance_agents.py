"""``se_gym.testing.check_agent`` (issue 48): the built-in bench agents pass it (the prompt agents with
the checker's stand-in model, the learners of weights with a tiny model trained on CPU) and so does
the example agent of docs/bench.md; it finds each defect planted in an agent written here: a load
that loses the memory, answers kept outside the save, learning from a test split, a memory that
changes by itself, and the wrong number of answers.

The stand-in model is a test double (the checks are about the protocol the benchmark enforces, not
about a model's answers); the judge, the tasks and the tiny model's training are real."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from conftest import need_module
from se_gym.agents import AGENTS
from se_gym.testing import ConformanceError, StandInModel, check_agent

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))
from bench_my_agent import CallMemoryAgent  # noqa: E402

PROMPT_AGENTS = ["closed-book", "open-book", "memory", "doc-memory", "expel", "cheatsheet", "playbook"]
WEIGHT_LEARNERS = ["closed-sft", "closed-rl", "closed-sft-rl", "experience"]
ORDER = ["class", "build", "act", "memory", "learn", "protocol", "freeze", "save-load", "answers after load"]


def test_every_builtin_agent_is_covered_here():
    assert set(AGENTS.names()) == set(PROMPT_AGENTS) | set(WEIGHT_LEARNERS)


@pytest.mark.parametrize("name", PROMPT_AGENTS)
def test_the_builtin_prompt_agents_pass(name):
    report = check_agent(name)
    assert report.passed == ORDER, str(report)
    if name not in ("closed-book", "open-book"):  # the memories learn from the right answers
        assert report.notes["learn"] == "8/8 train answers right; memory changed"


def test_the_example_agent_passes_by_its_file_py_class_spec():
    report = check_agent(f"{REPO}/examples/bench_my_agent.py:CallMemoryAgent")
    assert report.ok and report.notes["save-load"] == "8 entries, 1195 bytes", str(report)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    need_module("torch", "the learners train a model: pip install 'se-gym[train]'")
    import torch

    from se_gym.training import miniature as mini

    torch.set_num_threads(1)
    path = tmp_path_factory.mktemp("tiny") / "init"
    mini.build_tiny_model(path, seed=0, hidden=32, layers=1, heads=1, vocab=400)
    return path


@pytest.mark.parametrize("name", ["closed-sft", "experience"])
def test_learners_of_weights_pass_with_a_fresh_tiny_policy_each(name, tiny):
    from se_gym.training.policy import Policy

    def inject():  # a fresh policy per agent: a load has to bring the learned weights back
        return {"policy": Policy.from_pretrained(tiny, device="cpu", dtype="float32"), "sampler": StandInModel()}

    options = {"epochs": 1, "max_new_tokens": 16, "mixed_precision": "no"} if name == "closed-sft" else {}
    report = check_agent(name, options=options, inject=inject)
    assert report.passed == ORDER and report.notes["learn"].endswith("memory changed"), str(report)


def test_a_learner_of_weights_without_a_policy_says_what_to_give():
    report = check_agent("closed-sft", raises=False)
    assert report.failed[0][0] == "build" and "give it a policy" in report.failed[0][1]


# ------------------------------------------------------------------ planted defects, one per check
class ForgetsOnLoad(CallMemoryAgent):
    """Saves its notes, and reads them back into nothing."""

    def set_memory_state(self, state):
        self.notes = []


class KeepsNotesAside(CallMemoryAgent):
    """Learns into an attribute its memory_state leaves out: the save holds nothing of it."""

    def memory_state(self):
        return []

    def set_memory_state(self, state):
        pass


class LearnsFromAnything(CallMemoryAgent):
    """Overrides learn() itself, skipping the base class's check of the split."""

    def learn(self, trajectories):
        return self._learn(list(trajectories))


class Restless(CallMemoryAgent):
    """Puts the time into its memory: the digest changes with nothing learned."""

    def memory_state(self):
        return {"notes": self.notes, "at": time.monotonic_ns()}


class AnswersOnce(CallMemoryAgent):
    """Answers only the first question of a batch."""

    def act(self, observations):
        return super().act(observations)[:1]


def _failed(cls) -> ConformanceError:
    with pytest.raises(ConformanceError) as caught:
        check_agent(cls)
    return caught.value


def test_an_agent_whose_load_loses_its_memory_is_caught():
    err = _failed(ForgetsOnLoad)
    assert err.check == "save-load" and "a fresh agent loaded from the save has another memory" in str(err)
    assert "agent ForgetsOnLoad fails check 'save-load'" in str(err)
    assert ("answers after load", "needs save-load") in err.report.skipped


def test_an_agent_that_answers_from_what_it_did_not_save_is_caught():
    err = _failed(KeepsNotesAside)
    assert err.check == "answers after load" and "keeps something outside what save() writes" in str(err)


def test_an_agent_that_learns_from_a_test_split_is_caught():
    err = _failed(LearnsFromAnything)
    assert err.check == "protocol" and "took a test-split trajectory" in str(err)
    assert [n for n, _ in err.report.failed] == ["protocol", "freeze"]  # nor does it refuse once frozen


def test_an_agent_whose_memory_changes_by_itself_is_caught():
    err = _failed(Restless)
    assert err.check == "memory" and "state_digest() changed between two calls" in str(err)


def test_an_agent_that_answers_part_of_a_batch_is_caught():
    err = _failed(AnswersOnce)
    assert err.check == "act" and "act() returned 1 answers for 8 train questions (open book)" in str(err)


def test_an_agent_object_is_checked_and_fresh_ones_built_from_its_class():
    agent = CallMemoryAgent(min_overlap=2)
    report = check_agent(agent, options={"min_overlap": 2})
    assert report.ok and agent.notes  # the object given is the one that learned
    assert check_agent(dict, raises=False).failed[0][0] == "class"
