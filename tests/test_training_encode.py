"""Policy.encode at real sizes: pairs longer than max_length are cut from the prompt's start, never
through the response (a tiny locally built model and tokenizer)."""
import logging

from conftest import need_module

torch = need_module("torch", "training needs torch (pip install 'se-gym[train]')")
need_module("transformers", "training needs transformers (pip install 'se-gym[train]')")

from se_gym.training.losses import sft_loss
from se_gym.training.policy import Policy

PROMPT = "Task: sort the array along its last axis, then flip it and return the sum of the first row.\nAnswer:\n"
RESPONSE = "```python\nimport zwc\nx = zwc.sort(a)\n```"


def _policy(init_dir, max_length):
    loaded = Policy.from_pretrained(init_dir, device="cpu")
    return Policy(loaded.model, loaded.tokenizer, device="cpu", max_length=max_length)


def _ids(policy):
    return policy._prompt_ids(PROMPT), policy._response_ids(RESPONSE)


def _check_response_kept(policy, batch, p, r):
    ids, mask = batch.input_ids[0].tolist(), batch.response_mask[0]
    n = policy.max_length
    assert len(ids) == n and ids[-len(r) :] == r  # the whole response, EOS included, ends the row
    assert ids[: n - len(r)] == p[len(p) - (n - len(r)) :]  # the prompt's end, not its start
    assert mask.sum() == len(r) and mask[: n - len(r) - 1].sum() == 0  # trained on every response token, no prompt token


def test_a_prompt_longer_than_max_length_loses_its_start_and_keeps_the_response(init_dir):
    policy = _policy(init_dir, 40)
    p, r = _ids(policy)
    assert len(p) > 40 > len(r) + 10  # the case that raised
    batch = policy.encode([PROMPT], [RESPONSE])
    _check_response_kept(policy, batch, p, r)
    loss, _ = sft_loss(policy.token_logprobs(batch), batch.response_mask)
    assert float(loss.detach()) > 0


def test_a_prompt_that_exactly_fills_max_length_still_trains_on_the_response(init_dir):
    probe = _policy(init_dir, 1000)
    p, r = _ids(probe)
    policy = _policy(init_dir, len(p))  # the response used to be cut off whole: an all-zero mask
    _check_response_kept(policy, policy.encode([PROMPT], [RESPONSE]), p, r)


def test_a_response_longer_than_the_window_keeps_its_start_and_a_quarter_of_prompt(init_dir):
    policy = _policy(init_dir, 20)
    p, r = _ids(policy)
    assert len(r) > 20
    batch = policy.encode([PROMPT], [RESPONSE])
    ids = batch.input_ids[0].tolist()
    assert ids == p[-5:] + r[:15]  # 20 // 4 prompt tokens, then the response's first 15 (no EOS)
    assert batch.response_mask[0].tolist() == [0.0] * 4 + [1.0] * 15


def test_pairs_that_fit_are_unchanged_and_a_batch_mixes_both(init_dir):
    policy = _policy(init_dir, 40)
    p, r = _ids(policy)
    batch = policy.encode(["Task: a\nAnswer:\n", PROMPT], ["y", RESPONSE])
    short = policy._prompt_ids("Task: a\nAnswer:\n") + policy._response_ids("y")
    assert batch.input_ids[0, : len(short)].tolist() == short and batch.attention_mask[0].sum() == len(short)
    assert batch.response_mask[0].sum() == 2
    assert batch.input_ids[1, -len(r) :].tolist() == r and batch.response_mask[1].sum() == len(r)
    assert policy.truncated == 1


def test_truncation_is_logged_once_per_policy(init_dir, caplog):
    policy = _policy(init_dir, 40)
    with caplog.at_level(logging.WARNING, logger="se_gym"):
        for _ in range(3):
            policy.encode([PROMPT, PROMPT], [RESPONSE, RESPONSE])
    records = [rec for rec in caplog.records if "max_length" in rec.getMessage()]
    assert len(records) == 1 and records[0].name.startswith("se_gym")
    assert "prompt keeps its last" in records[0].getMessage()
    assert policy.truncated == 6  # every cut is counted
