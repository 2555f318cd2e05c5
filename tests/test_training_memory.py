"""Log-probs and KL at real vocabulary sizes: chosen-token log-probs without the full-vocabulary
log-softmax of the batch, a chunk of positions at a time, and the KL to the start a minibatch at a time.

Checked by value against the plain formulas and by what is allocated (every float32 tensor any
operation produces is seen by a dispatch mode): no timing.
"""
from __future__ import annotations

from conftest import need_module

torch = need_module("torch", "training needs torch (pip install 'se-gym[train]')")

import pytest  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_leaves  # noqa: E402

from se_gym.training.losses import full_kl, token_logprobs  # noqa: E402

B, T, V = 3, 7, 50


class LargestFloat32(TorchDispatchMode):
    """The largest float32 tensor any operation returns while the mode is on (backward included)."""

    def __init__(self):
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.dtype == torch.float32:
                self.largest = max(self.largest, t.numel())
        return out


def _reference(logits, targets):
    return torch.log_softmax(logits.float(), -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def _data(seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(B, T, V, generator=g) * 4).to(dtype)
    return logits, torch.randint(0, V, (B, T), generator=g)


@pytest.mark.parametrize("chunk", [1, 3 * V, 2 * T * V, 10_000_000])  # a position per chunk, three, two sequences, all
def test_selective_logprobs_equal_the_full_log_softmax_in_fp32(chunk):
    logits, targets = _data()
    got = token_logprobs(logits, targets, chunk_elements=chunk)
    assert got.dtype == torch.float32 and got.shape == (B, T)
    torch.testing.assert_close(got, _reference(logits, targets), atol=1e-5, rtol=0)
    torch.testing.assert_close(token_logprobs(logits[:, :-1], targets[:, 1:], chunk_elements=chunk), _reference(logits[:, :-1], targets[:, 1:]), atol=1e-5, rtol=0)


def test_selective_logprobs_in_bf16_and_their_gradients():
    exact, targets = _data(1)
    logits = exact.to(torch.bfloat16)
    got = token_logprobs(logits, targets, chunk_elements=2 * V)
    torch.testing.assert_close(got, _reference(logits, targets), atol=1e-5, rtol=0)  # the same bf16 values, upcast
    torch.testing.assert_close(got, _reference(exact, targets), atol=0.1, rtol=0)  # bf16 rounding of logits ~4 in size
    for dtype in (torch.float32, torch.bfloat16):  # bf16 takes the recompute-in-backward path
        a, b = (exact.to(dtype).clone().requires_grad_() for _ in range(2))
        token_logprobs(a, targets, chunk_elements=2 * V).sum().backward()
        _reference(b, targets).sum().backward()
        torch.testing.assert_close(a.grad.float(), b.grad.float(), atol=1e-5 if dtype == torch.float32 else 1e-2, rtol=0)


def test_full_kl_equals_the_formula_and_differentiates_the_first_argument_only():
    p, _ = _data(2)
    q, _ = _data(3)
    lp, lq = torch.log_softmax(p, -1), torch.log_softmax(q, -1)
    want = (lp.exp() * (lp - lq)).sum(-1)
    torch.testing.assert_close(full_kl(p, q, chunk_elements=V), want, atol=1e-5, rtol=0)
    p.requires_grad_(), q.requires_grad_()
    full_kl(p, q, chunk_elements=2 * V).sum().backward()
    assert p.grad is not None and p.grad.abs().sum() > 0 and q.grad is None


@pytest.mark.parametrize("grad", [False, True])
def test_no_float32_tensor_of_the_batch_vocabulary_is_made(grad):
    logits, targets = _data(4, torch.bfloat16)
    logits.requires_grad_(grad)
    chunk = 2 * V
    with torch.set_grad_enabled(grad), LargestFloat32() as seen:
        lp = token_logprobs(logits[:, :-1], targets[:, 1:], chunk_elements=chunk)
        if grad:
            lp.sum().backward()
    assert seen.largest <= chunk < B * (T - 1) * V  # the old log_softmax made B * (T - 1) * V
    if grad:
        assert logits.grad is not None and logits.grad.dtype == torch.bfloat16


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_backward_keeps_no_float32_copy_of_the_logits(dtype):
    logits, targets = _data(5, dtype)
    logits.requires_grad_()
    kept = []

    def pack(t):  # what autograd saves for backward, other than (views of) the logits themselves
        if t.dtype == torch.float32 and t.untyped_storage().data_ptr() != logits.untyped_storage().data_ptr():
            kept.append(t.numel())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        lp = token_logprobs(logits[:, :-1], targets[:, 1:], chunk_elements=2 * V)
    lp.sum().backward()
    assert sum(kept) <= B * T  # per-position values at most; the old log_softmax kept (B, T - 1, V) float32
    ref = logits.detach().clone().requires_grad_()
    _reference(ref[:, :-1], targets[:, 1:]).sum().backward()
    torch.testing.assert_close(logits.grad.float(), ref.grad.float(), atol=1e-5 if dtype == torch.float32 else 1e-2, rtol=0)


def test_the_kl_to_the_start_runs_a_minibatch_at_a_time_and_equals_the_whole_batch(tmp_path):
    need_module("transformers", "training needs transformers")
    from se_gym.llm.tiny import build_tiny_model
    from se_gym.training.policy import Policy
    from se_gym.training.rl import RLConfig, RLTrainer

    path = build_tiny_model(tmp_path / "m", d_model=32, n_head=1, n_layer=1, vocab_size=300, init_std=0.2, seed=0)
    policy = Policy.from_pretrained(path, device="cpu")
    trainer = RLTrainer(policy, RLConfig(minibatch_size=2, track_kl=True), reward_fn=None)
    with torch.no_grad():  # move the policy away from its start
        for p in policy.model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    batch = policy.encode(["a prompt", "another prompt here", "p", "x = 1", "q"], ["answer one", "b", "c c c c", "d", "ee"])
    rows = {"policy": [], "start": []}
    policy.model.register_forward_hook(lambda m, i, k, o: rows["policy"].append(k["input_ids"].shape[0]), with_kwargs=True)
    trainer.ref_model.register_forward_hook(lambda m, i, k, o: rows["start"].append(k["input_ids"].shape[0]), with_kwargs=True)
    got = trainer._kl_to_start(batch)
    assert rows == {"policy": [2, 2, 1], "start": [2, 2, 1]}  # minibatch_size honoured, for both models

    with torch.no_grad():  # the whole batch at once, as before: the same mean over response tokens
        lp = torch.log_softmax(policy.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1], -1)
        lq = torch.log_softmax(trainer.ref_model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1], -1)
        kl = (lp.exp() * (lp - lq)).sum(-1)
        want = float((kl * batch.response_mask).sum() / batch.response_mask.sum())
    assert want > 1e-4 and got == pytest.approx(want, rel=1e-5)
