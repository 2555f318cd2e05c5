"""End to end on CPU with a real tiny model: what Closed-SFT, Open-SFT and RL do to closed-book reward.

A session fixture pre-trains one tiny model on doc reading (the demo's stage 0, shortened to
2,400 steps: about three minutes on one core); every test starts from a copy of it.  The judge is
the real one.  For the SFT test the answers "sampled with the docs" come from a teacher that reads
docs perfectly (``DocReadingTeacher``): a stand-in for the capable model of the paper (an 8B
model, which cannot run here); the tiny base reads docs only part of the time, which would leave
too few accepted answers for a 3-minute test.
"""
import pytest

from conftest import need_module

torch = need_module("torch", "training needs torch (pip install 'se-gym[train]')")
need_module("transformers", "training needs transformers (pip install 'se-gym[train]')")

from se_gym import mint
from se_gym.agents import Agent, JudgeScorer, PolicyAgent, Runner, SFTAgent
from se_gym.demo import DemoConfig
from se_gym.training import miniature as mini
from se_gym.training.policy import Policy
from se_gym.training.sft import SFTConfig, SFTExample, train_sft

LIB = mint(101)
FUNCS = ["abs", "cumsum", "flip", "sort", "max"]
# the small pre-issue-18 base (fast; reads docs only part of the time, so RL has a signal to learn from)
CFG = DemoConfig(hidden=64, layers=2, pretrain_lr=3e-3, pretrain_batch=32)
PRETRAIN_STEPS = 2400


@pytest.fixture(scope="session")
def base_dir(tmp_path_factory):
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("pretrained")
    mini.build_tiny_model(root / "init", seed=0, hidden=CFG.hidden, layers=CFG.layers)
    policy = Policy.from_pretrained(root / "init", device="cpu")
    corpus = [SFTExample(p, a) for p, a in mini.pretraining_corpus(PRETRAIN_STEPS * CFG.pretrain_batch, seed=0, synthetic_share=0.0)]
    train_sft(policy, corpus, SFTConfig(learning_rate=CFG.pretrain_lr, batch_size=CFG.pretrain_batch, warmup_ratio=0.05, min_lr_ratio=0.1), progress=False)
    policy.save(root / "model")
    return root / "model"


@pytest.fixture(scope="module")
def world():
    from se_gym.judge.core import Judge

    train, test = mini.experiment_tasks(LIB, FUNCS, (3, 2), seed=0)

    def render(task, book):
        prompt = mini.render(LIB, task, book, FUNCS)
        return prompt, tuple(line for line in prompt.splitlines() if line.startswith("zwc.")) if book == "open" else ()

    judge = Judge(LIB, profile="sebench")
    yield train, test, Runner(JudgeScorer(judge), render, progress=False)
    judge.close()


def _agent(path, book="closed"):
    return PolicyAgent(Policy.from_pretrained(path, device="cpu"), book=book, temperature=0.0, max_new_tokens=CFG.max_new_tokens)


class DocReadingTeacher(Agent):
    """Test double for a capable model: with the docs in its prompt it writes the right call."""

    book = "open"

    def act(self, observations):
        assert all(o.docs for o in observations)  # it is only ever asked with the docs
        return [o.task.library_solution for o in observations]


@pytest.fixture(scope="module")
def rollouts(world):
    train, _, runner = world
    obs = [o for o in runner.observe(train, "open") for _ in range(2)]
    return runner.rollout(DocReadingTeacher(), obs)


def test_pretrained_base_reads_docs_but_knows_no_names(base_dir, world):
    train, test, runner = world
    agent = _agent(base_dir)
    # it has learned to read a doc (on functions it never saw) but cannot know this library's names
    assert runner.evaluate(agent, test, "open").accuracy >= 0.2
    assert runner.evaluate(agent, train, "closed").accuracy == 0.0


def test_closed_sft_learns_the_train_questions_closed_book_and_open_sft_does_not(base_dir, world, rollouts):
    # measured on the TRAIN questions, closed book (what SFT saw, without the docs): this shows the
    # names went into the weights, not that they generalise; held-out accuracy is what the demo
    # measures and reports (se_gym/demo.py, tests/test_demo*.py)
    train, test, runner = world
    assert all(t.reward == 1.0 for t in rollouts)  # the judge accepts the teacher's answers
    base = runner.evaluate(_agent(base_dir), train, "closed").accuracy
    assert base == 0.0
    cfg = SFTConfig(learning_rate=CFG.sft_lr, epochs=CFG.sft_epochs, batch_size=CFG.sft_batch, warmup_ratio=0.1, seed=0)
    scores = {}
    for mode in ("open", "closed"):
        agent = SFTAgent(Policy.from_pretrained(base_dir, device="cpu"), mode=mode, config=cfg, progress=False)
        agent.learn(rollouts)
        agent.temperature = 0.0
        scores[mode] = runner.evaluate(agent, train, "closed").accuracy
    assert scores["closed"] >= 0.6, scores  # from about 0 to a clear majority
    assert scores["open"] <= 0.3, scores
    assert scores["closed"] - scores["open"] >= 0.4, scores

# The end-to-end "RL improves reward on tasks the base solves sometimes" test had no learning signal on
# this base (measured: tasks solved 0% or ~95% of the time): tests/test_rl_learns.py replaces it.
