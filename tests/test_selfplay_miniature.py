"""Self-play in miniature: the task-writing corpus the tiny model is pre-trained on (valid tasks that
fit the demo base's context, registered with the demo's pre-training hook) and the verdict rule of
``se-gym demo --selfplay`` on hand-made tables."""
from __future__ import annotations

import random

from conftest import need_module
from se_gym.library import mint
from se_gym.selfplay import Validator, parse_proposal
from se_gym.selfplay import miniature as spm
from se_gym.selfplay.experiment import PAPER_RATIO, verdict
from se_gym.training import miniature as mini


def test_the_writer_corpus_is_registered_and_mixed_into_pretraining():
    assert mini.PRETRAINING_EXTRAS[spm.PROPOSE_CORPUS] is spm.proposal_corpus_restating
    assert mini.PRETRAINING_EXTRAS[spm.PROPOSE_CORPUS_V1] is spm.proposal_corpus  # bases pre-trained with it are still found
    mix = mini.pretraining_mix(400, 0, ((spm.PROPOSE_CORPUS, 0.25),))
    writes = [a for p, a in mix if p.endswith("Write a task:\n")]
    assert len(mix) == 400 and len(writes) == 100


def test_written_tasks_are_valid_on_a_fresh_library_and_use_only_pretraining_functions():
    corpus = spm.proposal_corpus(50, seed=3)
    assert all(k not in mini.EXPERIMENT_POOL for p, _ in corpus for k in mini.FUNCTIONS if f": {mini.FUNCTIONS[k][1]}." in p)
    lib = mint(100)
    rng = random.Random(1)
    texts = [spm.proposal_answer(lib, k, rng) for k in mini.EXPERIMENT_POOL]
    assert all(len(parse_proposal(t).inputs) == spm.N_INPUTS for t in texts)
    with Validator(lib) as v:
        outs = v.validate_texts(texts)
    # a one-call reference on 8 distinct inputs is valid unless the function is constant on them
    bad = {o.reason for o in outs if not o.accepted}
    assert bad <= {"constant_outputs"} and sum(o.accepted for o in outs) >= len(texts) - 2, [(o.reason, o.detail) for o in outs]
    assert all(o.noise == 0.0 for o in outs if o.accepted)


def test_prompt_and_proposal_fit_the_demo_bases_context(tmp_path):
    need_module("transformers", "the tiny model's tokenizer")
    from transformers import AutoTokenizer

    extra = ((spm.PROPOSE_CORPUS, spm.PROPOSE_SHARE),)
    path = mini.build_tiny_model(tmp_path / "m", hidden=64, layers=1, heads=2, extra=extra)
    tok = AutoTokenizer.from_pretrained(str(path))
    lib = mint(100)
    rng = random.Random(0)
    longest = max(len(tok(spm.propose_prompt(lib, k) + spm.proposal_answer(lib, k, rng))["input_ids"]) + 1
                  for k in mini.EXPERIMENT_POOL for _ in range(5))
    assert longest <= 256


def _table(sft, rl, cur=(0.5, 0.5, 0.5)):
    def row(v):
        return {"mean": sum(v) / len(v), "sd": 0.0, "per_seed": list(v)}

    return {"base": row((0, 0, 0)), "curated": row(cur), "sft_selfplay": row(sft), "rl_selfplay": row(rl)}


def test_verdict_rule():
    ok = verdict(_table((0.3, 0.2, 0.1), (0.0, 0.0, 0.0)))
    assert ok[0].split(":")[1].strip().startswith("REPRODUCED") and "40%" in ok[1] and f"{PAPER_RATIO:.0%}" in ok[1]
    assert "NOT reproduced" in verdict(_table((0.3, 0.0, 0.3), (0.0, 0.0, 0.0)))[0]  # a seed at 0
    assert "NOT reproduced" in verdict(_table((0.2, 0.2, 0.2), (0.3, 0.3, 0.3)))[0]  # RL above
    assert "no ratio" in verdict(_table((0.2, 0.2, 0.2), (0, 0, 0), cur=(0, 0, 0)))[1]


def test_the_writer_corpus_restates_the_doc_it_reads():
    """Half of the restating corpus has made-up descriptions, and every question restates its doc's
    description (issue 45: the first corpus's base wrote pre-training descriptions whatever the doc said)."""
    corpus = spm.proposal_corpus_restating(400, seed=0)
    real = {d for _, d in mini.FUNCTIONS.values()}
    descs = [p.split("): ", 1)[1].split(".\n", 1)[0] for p, _ in corpus]
    assert all(d in a.split("\nInputs:", 1)[0] for d, (_, a) in zip(descs, corpus))
    made_up = sum(d not in real for d in descs)
    assert 150 < made_up < 250
    assert spm.proposal_corpus(50, seed=0) == spm.proposal_corpus(50, seed=0, synthetic_share=0.0)

