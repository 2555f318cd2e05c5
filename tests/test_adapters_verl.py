"""verl reward module on rows written by the parquet exporter (read back as verl's dataset reads them)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from _dependence_corpus import adapter_answers
from conftest import need_module, run_in_venv
from se_gym.integrations import export
from se_gym.integrations import verl as verl_reward
from se_gym.library import mint
from se_gym.tasks import builtin_tasks, render_messages

LIB = mint(0)


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """Exported RL rows for 4 tasks, read back from parquet, with the responses to score."""
    pq = need_module("pyarrow.parquet", "the export extra (pyarrow) writes verl's parquet")
    tasks = builtin_tasks("train", seed=0)[:4]
    trajs = [{"task": t, "response": "", "prompt": render_messages(t, LIB, book="closed")} for t in tasks]
    path = tmp_path_factory.mktemp("verl") / "rl.parquet"
    assert export.to_verl_parquet(trajs, path, kind="rl", library=LIB, profile="strict") == 4
    table = pq.read_table(path).to_pylist()
    return tasks, table


def _ok(task):
    return f"```python\n{task.library_solution}\n```"


def test_compute_score_per_row_reads_exported_rows(rows):
    tasks, table = rows
    assert table[0]["extra_info"]["library"] == "seed:0" and table[0]["extra_info"]["profile"] == "strict"
    # right answer, no code, another task's answer, right answer with a think block
    responses = [_ok(tasks[0]), "I do not know.", _ok(tasks[0]), "<think>hmm</think>" + _ok(tasks[3])]
    scores = [
        verl_reward.compute_score(r["data_source"], resp, r["reward_model"]["ground_truth"], r["extra_info"])
        for r, resp in zip(table, responses)
    ]
    assert [s["score"] for s in scores] == [1.0, 0.0, 0.0, 1.0]
    assert [s["acc"] for s in scores] == [1.0, 0.0, 0.0, 1.0]
    assert all(s["infrastructure"] == 0.0 for s in scores)


def test_rows_carry_the_reference_and_a_named_but_unused_answer_gets_nothing(rows):
    """Issue 42: ground_truth carries the task's reference (its library solution), which strict's
    library dependence check runs beside the answer.  An answer that names the library (on a
    constant) and computes in Python gets 0, per row and batched; judged without the reference
    (a row from before) it would get 1.0, the check's weaker rule."""
    import json

    tasks, table = rows
    srcs, gts, extras = [r["data_source"] for r in table], [r["reward_model"]["ground_truth"] for r in table], [r["extra_info"] for r in table]
    assert [json.loads(gt)["reference"] for gt in gts] == [t.library_solution for t in tasks]
    answers = [adapter_answers(t, LIB) for t in tasks]
    assert [verl_reward.compute_score(s, a["reference"], gt, x)["score"] for s, a, gt, x in zip(srcs, answers, gts, extras)] == [1.0] * 4
    assert [verl_reward.compute_score(s, a["unused"], gt, x)["score"] for s, a, gt, x in zip(srcs, answers, gts, extras)] == [0.0] * 4
    batch = verl_reward.compute_score_batch(srcs, [a["unused"] for a in answers], gts, extras)
    assert [b["score"] for b in batch] == [0.0] * 4 and not any(b["infrastructure"] for b in batch)
    old = json.dumps({k: v for k, v in json.loads(gts[0]).items() if k != "reference"})
    assert verl_reward.compute_score(srcs[0], answers[0]["unused"], old, extras[0])["score"] == 1.0


def test_library_keyword_overrides_the_row(rows):
    tasks, table = rows
    r = table[0]
    # the same right answer is wrong against another library's names
    s = verl_reward.compute_score(r["data_source"], _ok(tasks[0]), r["reward_model"]["ground_truth"], r["extra_info"], library="seed:1")
    assert s["score"] == 0.0


def test_batched_variant_matches_per_row(rows):
    tasks, table = rows
    responses = [_ok(tasks[0]), _ok(tasks[1]), "```python\ndef solve(:\n```", _ok(tasks[2])]
    batch = verl_reward.compute_score_batch(
        data_sources=[r["data_source"] for r in table],
        solution_strs=responses,
        ground_truths=[r["reward_model"]["ground_truth"] for r in table],
        extra_infos=[r["extra_info"] for r in table],
    )
    single = [verl_reward.compute_score(r["data_source"], s, r["reward_model"]["ground_truth"], r["extra_info"]) for r, s in zip(table, responses)]
    assert batch == single
    assert [b["score"] for b in batch] == [1.0, 1.0, 0.0, 0.0]


def test_fraction_reward_and_bad_input(rows):
    tasks, table = rows
    r = table[1]
    frac = verl_reward.compute_score(r["data_source"], _ok(tasks[1]), r["reward_model"]["ground_truth"], r["extra_info"], reward="fraction")
    assert frac["score"] == 1.0
    with pytest.raises(ValueError, match="data_source"):
        verl_reward.compute_score("openai/gsm8k", "x", r["reward_model"]["ground_truth"], r["extra_info"])
    with pytest.raises(ValueError, match="ground_truth"):
        verl_reward.compute_score(r["data_source"], "x", "not json", r["extra_info"])
    with pytest.raises(ValueError, match="lengths"):
        verl_reward.compute_score_batch(["se_gym/sebench"], ["a", "b"], [r["reward_model"]["ground_truth"]])


# -- through verl's own loader, dataset and reward manager -------------------------------------
def _verl_batch(verl_data, tok, items, answers):
    """The batch verl's reward loop gets after a rollout: the dataset's rows plus left-padded prompt
    ids, right-padded response ids and their attention mask (the layout of verl's agent loop)."""
    import torch
    from verl.utils.dataset.rl_dataset import collate_fn

    prompts = [tok.apply_chat_template(list(it["raw_prompt"]), add_generation_prompt=True, tokenize=False) for it in items]
    p_ids = [tok(p, add_special_tokens=False)["input_ids"] for p in prompts]
    r_ids = [tok(a + tok.eos_token, add_special_tokens=False)["input_ids"] for a in answers]
    P, R = max(map(len, p_ids)), max(map(len, r_ids)) + 3
    pad = tok.pad_token_id
    prompt_t = torch.full((len(items), P), pad)
    resp_t = torch.full((len(items), R), pad)
    mask = torch.zeros(len(items), P + R, dtype=torch.long)
    for i, (p, r) in enumerate(zip(p_ids, r_ids)):
        prompt_t[i, P - len(p):] = torch.tensor(p)
        mask[i, P - len(p):P] = 1
        resp_t[i, :len(r)] = torch.tensor(r)
        mask[i, P:P + len(r)] = 1
    data = verl_data.DataProto.from_single_dict(collate_fn(items))
    return data.union(verl_data.DataProto.from_single_dict({"prompts": prompt_t, "responses": resp_t, "attention_mask": mask}))


@pytest.mark.parametrize("how", ["file", "pkg"])
def test_verl_loads_the_module_and_scores_exported_rows(tmp_path, tmp_path_factory, how):
    """verl 0.9's trainer config with the documented keys; verl's RLHFDataset reads the exported
    parquet, and verl's RewardLoopWorker loads the function (as a file path, or as pkg://) and scores
    through its default (naive) reward manager.  The file way failed on the relative imports."""
    import asyncio
    from pathlib import Path

    verl = need_module("verl", "verl (pip install --no-deps verl, see scripts/setup/integrations.sh) is the trainer under test")
    need_module("verl.experimental.reward_loop.reward_loop", "verl's reward loop")
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from _llm_helpers import tiny_model_dir

    model = tiny_model_dir(tmp_path_factory)
    tasks = builtin_tasks("train", seed=0)[:4]
    path = tmp_path / "rl.parquet"
    export.to_verl_parquet([{"task": t, "prompt": render_messages(t, LIB, book="closed")} for t in tasks], path, library=LIB)

    module = verl_reward.__file__ if how == "file" else "pkg://se_gym.integrations.verl"
    config = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml")
    assert config.reward.reward_manager.name == "naive"  # verl's default manager, kept
    overrides = [f"reward.custom_reward_function.path={module}", "reward.custom_reward_function.name=compute_score",
                 f"actor_rollout_ref.model.path={model}", f"data.train_files={path}", f"data.cache_dir={tmp_path / 'cache'}"]
    config = OmegaConf.merge(config, OmegaConf.from_dotlist(overrides))

    tok = AutoTokenizer.from_pretrained(model)
    dataset = RLHFDataset(str(path), tok, config.data)
    items = [dataset[i] for i in range(len(dataset))]
    assert [it["extra_info"]["task_id"] for it in items] == [t.id for t in tasks]
    # (the last: the library named, the result computed in Python: strict's dependence check, with
    # the reference the row carries, gives it 0; issue 42)
    answers = [_ok(tasks[0]), "I do not know.", "<think>hmm</think>" + _ok(tasks[2]), adapter_answers(tasks[3], LIB)["unused"]]
    data = _verl_batch(verl, tok, items, answers)

    worker = RewardLoopWorker(config, None)
    try:
        out = worker.loop.run_until_complete(worker.compute_score_batch(data))
        # reward_kwargs reach the function (hydra spells the new key +reward...): the same right
        # answer is wrong against another library
        other = OmegaConf.merge(config, OmegaConf.from_dotlist(["reward.custom_reward_function.reward_kwargs.library=seed:1"]))
        other_out = worker.loop.run_until_complete(RewardLoopWorker(other, None).compute_score_batch(data[:1]))
    finally:  # verl made this thread's event loop: close it, the next test gets a new one
        worker.loop.run_until_complete(worker.loop.shutdown_default_executor())
        worker.loop.close()
        asyncio.set_event_loop(None)
    assert [o["reward_score"] for o in out] == [1.0, 0.0, 1.0, 0.0]
    assert out[0]["reward_extra_info"] == {"score": 1.0, "acc": 1.0, "infrastructure": 0.0}
    assert other_out[0]["reward_score"] == 0.0


# -- multi-turn: verl's agent loop ---------------------------------------------------------------
_VF_VENV = Path(os.environ.get("SE_GYM_VERIFIERS_VENV", "/var/tmp/se-gym-venvs/verifiers"))
VERL_PYTHON = Path(os.environ.get("SE_GYM_VERL_VENV", str(_VF_VENV.parent / "verl"))) / "bin" / "python"


def test_multi_turn_agent_loop_through_verls_loader_rollout_to_reward(tmp_path):
    """verl 0.9's agent-loop interface: rows exported with agent_name="se_gym_agent" and max_turns=2,
    read by verl's RLHFDataset, the loop built by hydra from agent_loop_config_path as verl's worker
    does, run on CPU (verl's LLM server needs a GPU: a scripted generator and the tiny model stand in).
    Wrong then right: the feedback turn between them, masked out of the loss; the loop's reward is
    the judge's on the last answer, which verl's reward function agrees with."""
    res = run_in_venv(VERL_PYTHON, "_verl_agent_loop.py", tmp_path, str(tmp_path), probe="import hydra, verl.experimental.agent_loop",
                      what="verl's agent-loop stack (hydra)")
    assert (res["agent_name"], res["max_turns"], res["loop_class"]) == ("se_gym_agent", 2, "SEBenchAgentLoop")
    s = res["scripted"]
    assert (s["reward"], s["turn_scores"], s["statuses"], s["calls"]) == (1.0, [0.0, 1.0], ["static_gate", "passed"], 2)
    assert s["prompt_matches"] and "attempt 1 of 2" in s["inserted"] and "I am not sure." not in s["inserted"]
    assert s["sampled"].startswith("I am not sure.") and "import zwc" in s["sampled"]  # both answers train (mask 1)
    assert res["compute_score"] == s["reward"]
    r = res["right_away"]
    assert (r["reward"], r["calls"], r["mask_zeros"]) == (1.0, 1, 0)  # a passing answer ends it: no feedback turn
    u = res["unused"]  # the library named, the result in Python: 0 with the row's reference (issue 42)
    assert u["reward"] == 0.0 and u["statuses"] and set(u["statuses"]) == {"library_unused"}, u  # (one turn: it fills the tiny tokenizer's response length)
    t = res["tiny"]  # the tiny model's own tokens: a real rollout, judged (a random model cannot answer)
    assert t["calls"] == 2 and t["reward"] == 0.0 and t["mask_ones"] > 0 and "attempt 1 of 2" in t["inserted"] and t["prompt_matches"]
