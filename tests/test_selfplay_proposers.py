"""Self-play that keeps proposing: the rewards step with missing solve rates, the proposer agents
(built-in modes and a plug-in from a file outside the package) and rehearsal mixing."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

LIBRARY = "seed:100"
FUNCTIONS = ("abs", "cumsum", "add")


def _selfplay(tmp_path, **kw):
    from se_gym.selfplay.loop import SelfPlay, SelfPlayConfig

    cfg = SelfPlayConfig(model="unused", library=LIBRARY, prompts="miniature", rounds=1, proposals=3, functions=FUNCTIONS,
                         samples=2, eval="none", **kw)
    return SelfPlay(cfg, tmp_path / "run", progress=False, log=lambda m: None)


def _row(task, book, reward, infra=False):
    return {"task": task, "book": book, "sample": 0, "prompt": "p", "response": "r", "reward": reward, "infrastructure": infra}


@pytest.mark.parametrize("reward", ["gap", "learnability"])
def test_rewards_with_a_book_of_only_infrastructure_failures_are_no_signal_not_an_error(tmp_path, reward):
    """A task whose samples of one book all failed in the sandbox has no rate for that book: its
    proposer reward is None (no signal, counted), the others are as before, and the round goes on."""
    from se_gym.selfplay.validate import Outcome

    sp = _selfplay(tmp_path, proposer_reward=reward, rate_book="closed")
    tasks = [SimpleNamespace(id=i, functions=("abs",)) for i in ("a", "b")]
    outcomes = [Outcome(None, None, task=t) for t in tasks] + [Outcome(None, "no_question")]
    rows = [_row("a", "open", 1.0), _row("a", "closed", 1.0), _row("a", "closed", 0.0),  # gap and learnability: 0.5
            _row("b", "open", 1.0), _row("b", "closed", 0.0, infra=True), _row("b", "closed", 0.0, infra=True)]
    rew = sp.rewards([{}] * 3, outcomes, {"rows": rows})
    assert rew["proposer"] == [0.5, None, -1.0]
    assert rew["no_signal"] == 1
    summary = sp.summary(1, outcomes, {"rows": rows, "train": [], "topped_up": 0}, rew, {}, {"accuracy": None, "n": 0}, {}, 2)
    assert summary["no_signal"] == 1 and summary["proposer_reward_mean"] == -0.25  # None left out
