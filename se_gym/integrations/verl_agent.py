"""Multi-turn SE-Bench in verl's own agent loop (verl 0.9: ``verl.experimental.agent_loop``).

verl's rollout runs one *agent loop* per sample, picked by the row's ``agent_name``; an agent loop
asks verl's LLM server for tokens and builds the trajectory (response tokens, a mask that is 1 on
what the model sampled and 0 on what the environment inserted, and optionally the reward).
:class:`SEBenchAgentLoop` (``se_gym_agent``) plays a row written by
``to_verl_parquet(..., agent_name="se_gym_agent", max_turns=N)``: the model answers; a failed
answer gets the execution feedback as the next user turn (masked out of the loss); a passing
answer or the last turn ends it.  Its ``reward_score`` is the judge's reward for the last answer
(verl's reward loop then computes nothing more), each turn's verdict is in
``extra_fields["turn_scores"]``, and an answer the sandbox could not run ends the rollout with
``extra_fields["se_gym_infrastructure"] = 1`` (and score 0.0: leave such samples out).

verl finds the loop through ``actor_rollout_ref.rollout.agent.agent_loop_config_path``, a YAML
list naming it (docs/integrations/verl.md): ``- {name: se_gym_agent, _target_:
se_gym.integrations.verl_agent.SEBenchAgentLoop}``; importing this module also registers it.
"""
from __future__ import annotations

import json
import logging
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from se_gym.integrations._common import parse_ground_truth, shared_batched_judge

log = logging.getLogger(__name__)
AGENT_NAME = "se_gym_agent"
CONFIG_YAML = f"- name: {AGENT_NAME}\n  _target_: se_gym.integrations.verl_agent.SEBenchAgentLoop\n"


def write_agent_loop_config(path: str) -> str:
    """Write the YAML that ``actor_rollout_ref.rollout.agent.agent_loop_config_path`` points at; returns ``path``."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(CONFIG_YAML)
    return path


@register(AGENT_NAME)
class SEBenchAgentLoop(AgentLoopBase):
    """Answer, execution feedback, answer again (``extra_info.max_turns``, default 1), judged by se-gym."""

    async def run(self, sampling_params: dict[str, Any], priority: int = 0, **kwargs: Any) -> AgentLoopOutput:
        from se_gym.envs.sebench import feedback_text

        messages = [dict(m) for m in kwargs["raw_prompt"]]
        extra = dict(kwargs.get("extra_info") or {})
        truth = (kwargs.get("reward_model") or {}).get("ground_truth")
        cases, fname, ref = parse_ground_truth(truth)
        max_turns = int(extra.get("max_turns") or 1)
        judge = shared_batched_judge(extra.get("library") or "seed:0", extra.get("profile") or "strict",
                                     extra.get("reward_mode") or "binary")
        response_length = self.rollout_config.response_length
        metrics: dict = {}
        request_id = uuid4().hex
        prompt_ids = await self.ct_build_initial_tokens(messages)
        mask: list[int] = []
        logprobs: list[float] | None = None
        scores: list[float] = []
        statuses: list[str] = []
        infrastructure = 0
        reward = 0.0
        for turn in range(1, max_turns + 1):
            out = await self.server_manager.generate(request_id=request_id, prompt_ids=prompt_ids, sampling_params=sampling_params)
            merged, mask, logprobs = await self.ct_merge_assistant_token(
                prompt_ids, out.token_ids, mask, logprobs if (logprobs or out.log_probs) else None,
                assistant_logprobs=out.log_probs or None)
            prompt_ids = merged.token_ids
            answer = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
            verdict = (await judge.judge_many_async([(answer, cases, fname, None, ref)]))[0]  # (ref: strict's dependence check)
            statuses.append(verdict.status.value)
            if verdict.infrastructure:
                infrastructure, reward = 1, 0.0
                break
            reward = float(verdict.reward)
            scores.append(reward)
            if verdict.passed or turn == max_turns or len(mask) >= response_length:
                break
            messages.append({"role": "assistant", "content": answer})  # already in the tokens, as sampled
            before = list(messages)
            messages.append({"role": "user", "content": feedback_text(verdict, turn, max_turns)})
            merged, mask, logprobs = await self.ct_merge_context_msg(before, messages, prompt_ids, mask, logprobs)
            prompt_ids = merged.token_ids
            if len(mask) >= response_length:
                break
        response_ids = prompt_ids[len(prompt_ids) - len(mask):] if mask else []
        prompt_only = prompt_ids[: len(prompt_ids) - len(mask)]
        output = AgentLoopOutput(
            prompt_ids=prompt_only, response_ids=response_ids[:response_length], response_mask=mask[:response_length],
            response_logprobs=logprobs[:response_length] if logprobs else None, reward_score=reward,
            num_turns=2 * len(statuses), metrics=metrics,
        )
        output.extra_fields.update({"turn_scores": scores, "tool_rewards": [], "se_gym_statuses": json.dumps(statuses),
                                    "se_gym_infrastructure": infrastructure})
        return output
