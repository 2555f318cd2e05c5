"""Context distillation (se_gym.training.distill): hand-computed losses and real updates on a tiny model."""
import math

import pytest

from conftest import need_module

torch = need_module("torch", "context distillation needs torch (pip install 'se-gym[train]')")

from se_gym.training.distill import (  # noqa: E402
    ContextPair,
    OnPolicyConfig,
    OnPolicyDistiller,
    TeacherSample,
    aligned_response_positions,
    offpolicy_distill,
    offpolicy_examples,
    onpolicy_loss,
    token_kl,
)
from se_gym.training.sft import SFTConfig  # noqa: E402

# student p = (1/2, 1/2), teacher p = (3/4, 1/4)
S = torch.tensor([[0.0, 0.0]])
T = torch.tensor([[math.log(3.0), 0.0]])
KL_EXACT = 0.5 * math.log(0.5 / 0.75) + 0.5 * math.log(0.5 / 0.25)  # 0.143841...


def test_full_kl_matches_the_hand_computed_value():
    kl = token_kl(S, T, estimator="full")
    assert kl.shape == (1,)
    assert float(kl[0]) == pytest.approx(KL_EXACT, abs=1e-6)
    # and it is KL(student || teacher), not the reverse
    reverse = 0.75 * math.log(0.75 / 0.5) + 0.25 * math.log(0.25 / 0.5)
    assert float(kl[0]) != pytest.approx(reverse, abs=1e-3)


def test_sampled_estimate_is_the_log_ratio_at_the_sampled_token():
    assert float(token_kl(S, T, torch.tensor([0]), "sampled")[0]) == pytest.approx(math.log(0.5 / 0.75), abs=1e-6)
    assert float(token_kl(S, T, torch.tensor([1]), "sampled")[0]) == pytest.approx(math.log(0.5 / 0.25), abs=1e-6)
    # its expectation under the student's own distribution is the exact KL
    both = token_kl(S.repeat(2, 1), T.repeat(2, 1), torch.tensor([0, 1]), "sampled")
    assert float(both.mean()) == pytest.approx(KL_EXACT, abs=1e-6)


def test_loss_gradients_flow_to_the_student_only():
    s = S.clone().requires_grad_(True)
    t = T.clone().requires_grad_(True)
    loss, stats = onpolicy_loss(s, t, torch.tensor([0]), "full")
    loss.backward()
    assert stats == {"kl": pytest.approx(KL_EXACT, abs=1e-6), "tokens": 1}
    assert s.grad is not None and float(s.grad.abs().sum()) > 0
    assert t.grad is None
    # d KL / d student logit 0 at p=(.5,.5): p0 * ((log p0 - log t0) - KL) = 0.5 * (log(2/3) - KL)
    assert float(s.grad[0, 0]) == pytest.approx(0.5 * (math.log(0.5 / 0.75) - KL_EXACT), abs=1e-5)


def test_response_positions_are_paired_across_prompts_of_different_length():
    student = torch.tensor([[0, 0, 1, 1, 1, 0], [0, 1, 1, 0, 0, 0]], dtype=torch.float32)
    teacher = torch.tensor([[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 0, 0, 0]], dtype=torch.float32)
    s, t = aligned_response_positions(student, teacher)
    assert [x.tolist() for x in s] == [[2, 3, 4], [1]]  # row 2: the teacher side was truncated to 1 token
    assert [x.tolist() for x in t] == [[4, 5, 6], [3]]


def test_offpolicy_examples_keep_accepted_answers_under_the_student_prompt():
    pair = ContextPair("Docs: zwc.f is abs\nQ", "Q", key="t1")
    samples = [TeacherSample(pair, "A1", 1.0), TeacherSample(pair, "A2", 0.0), TeacherSample(pair, "A3", 0.5)]
    ex = offpolicy_examples(samples)
    assert [(e.prompt, e.response) for e in ex] == [("Q", "A1")]
    assert [e.response for e in offpolicy_examples(samples, min_reward=0.5)] == ["A1", "A3"]


@pytest.fixture(scope="module")
def tiny_policy_dir(tmp_path_factory):
    need_module("transformers", "needs transformers (pip install 'se-gym[train]')")
    from se_gym.llm.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("distill") / "tiny", init_std=0.2, seed=3)


def _policy(path):
    from se_gym.training.policy import Policy

    torch.manual_seed(0)
    return Policy.from_pretrained(path, device="cpu")


def _nll(policy, prompt, response):
    batch = policy.encode([prompt], [response])
    with torch.no_grad():
        lp = policy.token_logprobs(batch)
    return float(-(lp * batch.response_mask).sum())


def test_offpolicy_distill_moves_the_teacher_answer_into_the_student_prompt(tiny_policy_dir):
    policy = _policy(tiny_policy_dir)
    pair = ContextPair("Docs: the answer is zwc.falekef\nTask: abs of x\n", "Task: abs of x\n")
    good, bad = "return zwc.falekef(x)", "return zwc.morabu(x)"
    before_good, before_bad = _nll(policy, pair.student_prompt, good), _nll(policy, pair.student_prompt, bad)
    m = offpolicy_distill(policy, [TeacherSample(pair, good, 1.0), TeacherSample(pair, bad, 0.0)],
                          SFTConfig(learning_rate=3e-3, epochs=8, batch_size=2, warmup_ratio=0.0), progress=False)
    assert m["accepted"] == 1 and m["offered"] == 2
    after_good = _nll(policy, pair.student_prompt, good)
    assert after_good < 0.5 * before_good  # the accepted answer became likely without the docs
    assert after_good < _nll(policy, pair.student_prompt, bad)
    assert before_good > 0 and before_bad > 0
    empty = offpolicy_distill(policy, [TeacherSample(pair, bad, 0.0)], SFTConfig(), progress=False)
    assert empty == {"accepted": 0, "offered": 1}


def test_onpolicy_distillation_lowers_kl_on_the_students_own_samples(tiny_policy_dir):
    policy = _policy(tiny_policy_dir)
    pairs = [ContextPair("Docs: zwc.falekef is the absolute value.\nTask: abs of x\n", "Task: abs of x\n"),
             ContextPair("Docs: zwc.morabu sorts.\nTask: sort x\n", "Task: sort x\n")]
    cfg = OnPolicyConfig(learning_rate=3e-3, samples_per_prompt=3, temperature=1.0, max_new_tokens=12, epochs=6, batch_size=6)
    distiller = OnPolicyDistiller(policy, cfg)
    frozen = {k: v.clone() for k, v in distiller.teacher.state_dict().items()}
    flat, responses = distiller.sample(pairs)
    assert len(flat) == len(responses) == 6
    assert all(isinstance(r, str) for r in responses)
    m = distiller.update(flat, responses)
    assert m["tokens"] > 0 and m["kl_before"] > 0
    assert m["kl"] < 0.7 * m["kl_before"]
    # the frozen teacher did not move while the student did
    assert all(torch.equal(frozen[k], v) for k, v in distiller.teacher.state_dict().items())
    moved = any(not torch.equal(frozen[k], v) for k, v in policy.model.state_dict().items())
    assert moved


def test_onpolicy_config_rejects_unknown_switches():
    with pytest.raises(ValueError, match="estimator"):
        OnPolicyConfig(estimator="forward")
    with pytest.raises(ValueError, match="teacher"):
        OnPolicyConfig(teacher="ema")
