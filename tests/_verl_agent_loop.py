"""Run by tests/test_adapters_verl.py in a venv with verl's agent-loop stack (hydra): SE-Bench's
multi-turn agent loop through verl's own pieces, on CPU.

verl's AgentLoopWorker reads ``agent_loop_config_path`` into its registry and builds the row's loop
with ``hydra.utils.instantiate(..., trainer_config=, server_manager=, tokenizer=, ...)``; this script
does the same, on rows that verl's RLHFDataset reads from the exported parquet.  The LLM server
(verl's vLLM/SGLang replicas need a GPU) is replaced by the tiny local model generating with
transformers on CPU, or by a scripted generator whose answers are known (wrong, then right).

    python tests/_verl_agent_loop.py WORKDIR OUT.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


class TinyServer:
    """verl's ``server_manager.generate`` on the tiny model with transformers (greedy, CPU)."""

    def __init__(self, model_dir, max_new_tokens=24):
        import torch
        from transformers import AutoModelForCausalLM

        self.torch, self.max_new = torch, max_new_tokens
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
        self.calls = 0

    async def generate(self, request_id, prompt_ids, sampling_params, **_):
        from verl.workers.rollout.replica import TokenOutput

        self.calls += 1
        with self.torch.no_grad():
            out = self.model.generate(self.torch.tensor([prompt_ids]), max_new_tokens=self.max_new, do_sample=False)
        return TokenOutput(token_ids=out[0, len(prompt_ids):].tolist(), stop_reason="completed")


class ScriptedServer:
    """Answers by turn from a script (the token ids of known texts)."""

    def __init__(self, tokenizer, answers):
        self.ids = [tokenizer(a + tokenizer.eos_token, add_special_tokens=False)["input_ids"] for a in answers]
        self.calls = 0

    async def generate(self, request_id, prompt_ids, sampling_params, **_):
        from verl.workers.rollout.replica import TokenOutput

        ids = self.ids[min(self.calls, len(self.ids) - 1)]
        self.calls += 1
        return TokenOutput(token_ids=list(ids), stop_reason="completed")


def main() -> None:
    work, out_path = Path(sys.argv[1]), sys.argv[2]
    import hydra
    import verl
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap, _agent_loop_registry
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from se_gym.integrations import verl as verl_reward
    from se_gym.integrations.export import to_verl_parquet
    from se_gym.integrations.verl_agent import AGENT_NAME, write_agent_loop_config
    from se_gym.library import mint
    from se_gym.llm.tiny import build_tiny_model
    from se_gym.tasks import builtin_tasks, render_messages

    lib = mint(0)
    tasks = builtin_tasks("train", seed=0)[:2]
    model = build_tiny_model(work / "tiny", n_layer=1)
    parquet = work / "rl.parquet"
    to_verl_parquet([{"task": t, "prompt": render_messages(t, lib)} for t in tasks], parquet, library=lib,
                    agent_name=AGENT_NAME, max_turns=2)
    loops_yaml = write_agent_loop_config(str(work / "agent_loops.yaml"))
    config = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml")
    config = OmegaConf.merge(config, OmegaConf.from_dotlist([
        f"actor_rollout_ref.model.path={model}", f"data.train_files={parquet}", f"data.cache_dir={work / 'cache'}",
        f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loops_yaml}",
        "actor_rollout_ref.rollout.prompt_length=1024", "actor_rollout_ref.rollout.response_length=512"]))
    # what verl's AgentLoopWorker does with agent_loop_config_path
    for entry in OmegaConf.load(config.actor_rollout_ref.rollout.agent.agent_loop_config_path):
        _agent_loop_registry[entry.name] = entry
    tok = AutoTokenizer.from_pretrained(model)
    dataset = RLHFDataset(str(parquet), tok, config.data)
    rows = [dataset[i] for i in range(len(dataset))]

    def loop_for(row, server):
        return hydra.utils.instantiate(config=_agent_loop_registry[row["agent_name"]], trainer_config=DictConfigWrap(config=config),
                                       server_manager=server, tokenizer=tok, processor=None, hf_model_type="llama",
                                       dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data), tools=ToolListWrap([]))

    def run(row, server):
        loop = loop_for(row, server)
        kwargs = {k: v for k, v in row.items() if not hasattr(v, "shape")}
        # on the loop the agent loop was made on (verl's worker runs its loops on its own event loop)
        return loop.loop.run_until_complete(loop.run({"temperature": 0.0}, **kwargs)), type(loop).__name__

    def summary(out, server, row):
        ids, mask = out.response_ids, out.response_mask
        inserted = tok.decode([i for i, m in zip(ids, mask) if m == 0])
        sampled = tok.decode([i for i, m in zip(ids, mask) if m == 1])
        return {"reward": out.reward_score, "turn_scores": out.extra_fields["turn_scores"],
                "statuses": json.loads(out.extra_fields["se_gym_statuses"]), "calls": server.calls,
                "mask_ones": sum(mask), "mask_zeros": len(mask) - sum(mask), "inserted": inserted, "sampled": sampled,
                "prompt_matches": out.prompt_ids == dataset.tokenizer.apply_chat_template(
                    list(row["raw_prompt"]), add_generation_prompt=True, tokenize=True, return_dict=False)}

    res = {"agent_name": rows[0]["agent_name"], "max_turns": rows[0]["extra_info"]["max_turns"]}
    ok = f"```python\n{tasks[0].library_solution}\n```"
    scripted = ScriptedServer(tok, ["I am not sure.", ok])
    out, res["loop_class"] = run(rows[0], scripted)
    res["scripted"] = summary(out, scripted, rows[0])
    # verl's reward function on the last answer agrees with the loop's reward_score
    res["compute_score"] = verl_reward.compute_score(rows[0]["data_source"], ok, rows[0]["reward_model"]["ground_truth"],
                                                     rows[0]["extra_info"])["score"]
    right_away = ScriptedServer(tok, [ok])
    res["right_away"] = summary(run(rows[0], right_away)[0], right_away, rows[0])
    # the library named, the result computed in Python, twice: strict's dependence check, with the
    # reference the row carries, gives each 0 (issue 42)
    from _dependence_corpus import adapter_answers

    unused = ScriptedServer(tok, [adapter_answers(tasks[0], lib)["unused"]])
    res["unused"] = summary(run(rows[0], unused)[0], unused, rows[0])
    tiny = TinyServer(model)
    res["tiny"] = summary(run(rows[1], tiny)[0], tiny, rows[1])
    json.dump(res, open(out_path, "w"))


if __name__ == "__main__":
    main()
