"""Token-exact trajectories: a rollout records the sampled ids, and the SFT and RL loaders read the
very same ids back (JSONL and parquet) without tokenizing the text again."""
from __future__ import annotations

import json

import pytest

from _rollout_helpers import build_tiny, config, require_pipeline
from conftest import need_module
from se_gym.trajectories import SCHEMA, TrajectoryError, check, read_trajectories, token_fields, write_trajectories


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    require_pipeline()
    return build_tiny(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def recorded(tiny, tmp_path_factory):
    """A rollout of 2 tasks x 2 samples with record_tokens, read back from its JSONL."""
    from se_gym.llm.rollout import rollout

    out = tmp_path_factory.mktemp("traj") / "r.jsonl"
    rollout(config(tiny, limit=2, n=2, max_tokens=16, enable_thinking=False, record_tokens=True), out, progress=False)
    return out, read_trajectories(out)


def test_rollout_rows_are_token_trajectories(tiny, recorded):
    from transformers import AutoTokenizer

    from se_gym.llm.base import encode_prompt

    _, records = recorded
    tok = AutoTokenizer.from_pretrained(tiny)
    assert len(records) == 4
    for r in records:
        assert r["schema"] == SCHEMA and r["policy_version"] == 0
        # the ids the backend fed and sampled: the rendered prompt, and ids that decode to the answer
        assert r["prompt_ids"] == encode_prompt(tok, r["prompt"], False)
        assert tok.decode(r["completion_ids"], skip_special_tokens=True) == r["response"]
        assert len(r["completion_logprobs"]) == len(r["completion_ids"]) == len(r["completion_mask"]) > 0
        assert all(m == 1 for m in r["completion_mask"]) and all(lp <= 0 for lp in r["completion_logprobs"])
        assert "reward" in r and "query" in r  # still the rollout row


def test_parquet_round_trip(recorded, tmp_path):
    need_module("pyarrow", "parquet needs pyarrow (the export extra)")
    _, records = recorded
    path = tmp_path / "t.parquet"
    assert write_trajectories(records, path) == 4
    back = read_trajectories(path)
    assert back == records  # every field, the rollout row's included


def test_sft_and_rl_loaders_give_the_recorded_ids(tiny, recorded):
    """Both loaders hold exactly prompt_ids + completion_ids, and the model's log-probs of the
    completion tokens in the SFT batch are the sampling log-probs: the ids sit where they were sampled."""
    import torch

    from se_gym.training.policy import Policy
    from se_gym.training.trajectories import rl_batch, sft_batch

    _, records = recorded
    policy = Policy.from_pretrained(tiny, device="cpu")
    pad = policy.tokenizer.pad_token_id
    sft = sft_batch(records, pad)
    rl = rl_batch(records, pad)
    P = rl["prompts"].shape[1]
    for i, r in enumerate(records):
        n_p, n_c = len(r["prompt_ids"]), len(r["completion_ids"])
        seq = r["prompt_ids"] + r["completion_ids"]
        assert sft.input_ids[i, : len(seq)].tolist() == seq and int(sft.attention_mask[i].sum()) == len(seq)
        assert sft.response_mask[i].tolist() == [0.0] * (n_p - 1) + [1.0] * n_c + [0.0] * (sft.response_mask.shape[1] - len(seq) + 1)
        assert rl["prompts"][i, P - n_p:].tolist() == r["prompt_ids"]
        assert rl["responses"][i, :n_c].tolist() == r["completion_ids"]
        assert rl["input_ids"][i][rl["attention_mask"][i].bool()].tolist() == seq  # the same ids as the SFT row
        assert rl["response_mask"][i].tolist() == [1] * n_c + [0] * (rl["responses"].shape[1] - n_c)
        assert rl["old_log_probs"][i, :n_c].tolist() == pytest.approx(r["completion_logprobs"], abs=1e-6)
        assert rl["rewards"][i].item() == r["reward"] and rl["policy_version"][i].item() == 0
    with torch.no_grad():
        lp = policy.token_logprobs(sft)
    for i, r in enumerate(records):
        n_p, n_c = len(r["prompt_ids"]), len(r["completion_ids"])
        assert lp[i, n_p - 1 : n_p - 1 + n_c].tolist() == pytest.approx(r["completion_logprobs"], abs=1e-3)


def test_train_sft_uses_the_recorded_ids(tiny, recorded, monkeypatch):
    from se_gym.training.policy import Policy
    from se_gym.training.sft import SFTConfig, SFTExample, train_sft
    from se_gym.training.trajectories import sft_examples

    _, records = recorded
    examples = sft_examples(records, accepted_only=False)
    assert [e.completion_ids for e in examples] == [tuple(r["completion_ids"]) for r in records]
    policy = Policy.from_pretrained(tiny, device="cpu")

    def no_tokenizing(*a, **k):
        raise AssertionError("token-exact examples must not be tokenized again")

    monkeypatch.setattr(Policy, "encode", no_tokenizing)
    metrics = train_sft(policy, examples, SFTConfig(learning_rate=1e-4, batch_size=4), progress=False)
    assert metrics["steps"] == 1 and metrics["loss"][0] > 0
    with pytest.raises(ValueError, match="mix"):
        train_sft(policy, examples + [SFTExample("p", "r")], SFTConfig(), progress=False)


def test_schema_checks_name_the_field():
    good = {"prompt_ids": [1, 2], "completion_ids": [3], "completion_mask": [1], "completion_logprobs": [-0.5], "policy_version": 0}
    assert check(good) is good
    for bad, field in (
        ({k: v for k, v in good.items() if k != "prompt_ids"}, "prompt_ids"),
        (dict(good, completion_mask=[1, 1]), "completion_mask"),
        (dict(good, completion_logprobs=[-0.5, -1.0]), "completion_logprobs"),
        (dict(good, completion_ids=["a"]), "completion_ids"),
        (dict(good, schema="other/9"), "schema"),
    ):
        with pytest.raises(TrajectoryError, match=field):
            check(bad)


def test_token_fields_need_the_backends_ids():
    from se_gym.llm import Completion

    c = Completion(text="x", token_ids=(5, 6), logprobs=(-0.1, -0.2), finish_reason="stop", prompt_token_ids=(1, 2, 3))
    assert token_fields(c, 3) == {"schema": SCHEMA, "prompt_ids": [1, 2, 3], "completion_ids": [5, 6],
                                  "completion_mask": [1, 1], "completion_logprobs": [-0.1, -0.2], "policy_version": 3}
    # what a plain OpenAI-compatible server gives: log-probs, no ids
    with pytest.raises(TrajectoryError, match="return_token_ids"):
        token_fields(Completion(text="x", token_ids=None, logprobs=(-0.1,), finish_reason="stop"))
    json.dumps(token_fields(c))  # JSON-ready


def test_selfplay_generation_actor_returns_the_token_fields(tiny):
    """The Ray engine's generation worker (a plain class; Ray makes it an actor) returns the samples'
    token fields when asked, for the same samples as without."""
    from se_gym.selfplay.ray_engine import GenerationWorker

    worker = GenerationWorker(str(tiny), "hf")
    try:
        item = (["import zwc\n", "def solve(x):\n"], 2, 1.0, 8, 5)
        plain = worker.run(item)
        full = worker.run(item + (True,))
    finally:
        worker.close()
    assert "records" not in plain and full["texts"] == plain["texts"]
    assert [[r["text"] for r in g] for g in full["records"]] == plain["texts"]
    for g in full["records"]:
        for r in g:
            check(r)
            assert r["prompt_ids"] and len(r["completion_ids"]) == len(r["completion_logprobs"]) <= 8


def test_agent_runs_record_token_trajectories(tiny, tmp_path):
    """An agent sampling through a se_gym.llm Generator, run by Runner(record_tokens=True): every
    trajectory carries the prompt it was asked and its token fields, exported as records."""
    from transformers import AutoTokenizer

    from se_gym.agents import ClosedBookAgent, JudgeScorer, Runner, SFTAgent, default_renderer, token_records
    from se_gym.judge import Judge
    from se_gym.library import mint
    from se_gym.llm.base import encode_prompt
    from se_gym.llm.hf import HFGenerator
    from se_gym.tasks import builtin_tasks
    from se_gym.training.policy import Policy

    lib = mint(0)
    tasks = builtin_tasks("train", seed=0)[:2]
    tok = AutoTokenizer.from_pretrained(tiny)
    with Judge(lib) as judge, HFGenerator(str(tiny), progress=False) as gen:
        runner = Runner(JudgeScorer(judge), default_renderer(lib), progress=False, record_tokens=True)
        result = runner.evaluate(ClosedBookAgent(gen, temperature=1.0, max_new_tokens=8), tasks, samples=2)
        records = token_records(result.trajectories)
        assert [(r["task_id"], r["sample_index"]) for r in records] == [(t.id, j) for t in tasks for j in (0, 1)]
        for r, t in zip(records, result.trajectories):
            assert r["prompt"] == t.observation.prompt and r["prompt_ids"] == encode_prompt(tok, r["prompt"], None)
            assert tok.decode(r["completion_ids"], skip_special_tokens=True) == r["response"] == t.response
            assert r["reward"] == t.reward and r["policy_version"] == 0 and r["book"] == "closed"
        assert write_trajectories(records, tmp_path / "agent.jsonl") == 4
        assert read_trajectories(tmp_path / "agent.jsonl") == records
        # a learner sampling with its policy in-process has text only: it says so
        policy = Policy.from_pretrained(tiny, device="cpu")
        with pytest.raises(TrajectoryError, match="token ids"):
            runner.evaluate(SFTAgent(policy, max_new_tokens=4), tasks[:1])
