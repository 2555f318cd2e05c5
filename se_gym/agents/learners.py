"""Parametric learners over a Hugging Face policy: SFT (Open/Closed) and RL (GRPO/PPO, Open/Closed).

Both roll out WITH the docs on train tasks (``book = "open"``) and differ in what they train on:

* ``mode="open"``: the prompt the answer was sampled under (docs in context);
* ``mode="closed"``: the query-only prompt of the same task, substituted for it.

At test time the runner evaluates them closed book like any other agent.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from se_gym.training.distill import ContextPair, TeacherSample, offpolicy_examples
from se_gym.training.rl import PolicySampler, RLConfig, RLPrompt, RLTrainer
from se_gym.training.sft import SFTConfig, train_sft

from .base import Agent, Observation, Trajectory, sample_answers

MODES = ("open", "closed")


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return mode


class PolicyAgent(Agent):
    """Acts with an HF :class:`~se_gym.training.policy.Policy` (or a separate generator for sampling).

    Args:
        policy: the :class:`~se_gym.training.policy.Policy` it trains.
        book: the book it is built for.
        temperature: sampling temperature (0: greedy).
        max_new_tokens: the longest answer.
        sampler: what samples its answers (None: the policy itself; with vLLM a sampler synced to it).
    """

    def __init__(self, policy, book: str = "open", temperature: float = 0.0, max_new_tokens: int = 512, sampler=None):
        self.policy = policy
        self.book = book
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens
        self.sampler = sampler or PolicySampler(policy)

    def act(self, observations: Sequence[Observation]) -> list[str]:
        """One answer per observation, sampled at the agent's temperature.

        Args:
            observations: the questions, as the runner rendered them for the agent's book.
        """
        return sample_answers(self.sampler, [o.prompt for o in observations], self.temperature, self.max_new_tokens)

    def act_records(self, observations: Sequence[Observation]) -> list[dict]:
        """:meth:`act` with each answer's prompt and token fields (:mod:`se_gym.trajectories`).

        Args:
            observations: the questions, as the runner rendered them for the agent's book.
        """
        return sample_answers(self.sampler, [o.prompt for o in observations], self.temperature, self.max_new_tokens, records=True)

    def token_lengths(self, responses: Sequence[str]) -> list[int]:
        """Each answer's length in the policy's tokens (what a task sampler's cost term reads).

        Args:
            responses: the answer texts.
        """
        return self.policy.count_tokens(responses)

    def save(self, directory: str | os.PathLike) -> Path:
        """The base class's files and the policy's weights (under ``policy/``).

        Args:
            directory: the folder (made if missing).
        """
        directory = super().save(directory)
        self.policy.save(directory / "policy")
        return directory

    def state_digest(self) -> str:
        """SHA-256 over the model's parameters (names and bytes): the weights are this agent's memory."""
        import hashlib

        h = hashlib.sha256()
        for name, p in sorted(self.policy.model.state_dict().items()):
            h.update(name.encode() + b"\0" + p.detach().cpu().contiguous().view(-1).view(dtype=_byte_dtype()).numpy().tobytes())
        return h.hexdigest()

    def memory_size(self) -> tuple[int | None, int]:
        """(parameters, bytes) of the model."""
        params = list(self.policy.model.parameters())
        return sum(p.numel() for p in params), sum(p.numel() * p.element_size() for p in params)

    def load(self, directory: str | os.PathLike) -> "PolicyAgent":
        """Load the weights :meth:`save` wrote (``policy/``), if there are any.

        Args:
            directory: the folder.
        """
        path = Path(directory) / "policy"
        if path.is_dir():
            self._load_weights(path)
        return self

    def _load_weights(self, path: Path) -> None:
        if (path / "adapter_config.json").is_file():  # Policy.save of a LoRA model writes only its adapter
            self._load_adapter(path)
            self.sampler.sync(self.policy.model)
            return
        import torch

        from .._deps import transformers_names

        (AutoModelForCausalLM,) = transformers_names("AutoModelForCausalLM")

        if hasattr(self.policy.model, "peft_config"):
            raise ValueError(f"{path} holds a full model but this agent's model has LoRA adapters: build the agent on the plain base")
        loaded = AutoModelForCausalLM.from_pretrained(str(path), dtype=next(self.policy.model.parameters()).dtype)
        self.policy.model.load_state_dict(loaded.state_dict())
        self.sampler.sync(self.policy.model)
        del loaded
        torch.cuda.empty_cache() if torch.cuda.is_available() else None

    def _load_adapter(self, path: Path) -> None:
        """Load a saved LoRA adapter: into the model's own adapter if it has one, else onto the plain base
        model the agent was built on (which must be the base it was trained from), trainable as in training."""
        try:
            from peft import PeftModel
            from peft.utils import load_peft_weights, set_peft_model_state_dict
        except ImportError:  # pragma: no cover - depends on the install
            raise RuntimeError(f"{path} holds a LoRA adapter, which needs peft: pip install 'se-gym[train]'") from None
        model = self.policy.model
        if not hasattr(model, "peft_config"):
            self.policy.model = PeftModel.from_pretrained(model, str(path), is_trainable=True)
            return
        result = set_peft_model_state_dict(model, load_peft_weights(str(path), device="cpu"))
        missing = [k for k in result.missing_keys if "lora_" in k]
        if result.unexpected_keys or missing:
            raise ValueError(f"adapter {path} does not fit this agent's adapters, e.g. {(result.unexpected_keys or missing)[0]}")


class SFTAgent(PolicyAgent):
    """SE-Bench's SFT: keep judge-accepted answers sampled with the docs; train on them.

    ``learn`` fine-tunes on the accepted trajectories of the call (rejection sampling); the
    runner samples ``n`` answers per task at ``temperature`` 0.6 as the paper does.

    Args:
        policy: the :class:`~se_gym.training.policy.Policy` it trains.
        mode: ``open`` (train under the doc prompt) or ``closed`` (under the query-only prompt: Closed-SFT).
        config: the fine-tuning settings (None: the defaults).
        temperature: sampling temperature.
        max_new_tokens: the longest answer.
        sampler: what samples its answers (None: the policy itself; with vLLM a sampler synced to it).
        progress: show the training's progress.
    """

    test_book = "closed"

    def __init__(self, policy, mode: str = "closed", config=None, temperature: float = 0.6, max_new_tokens: int = 512, sampler=None, progress: bool = True):
        super().__init__(policy, book="open", temperature=temperature, max_new_tokens=max_new_tokens, sampler=sampler)
        self.mode = _check_mode(mode)
        self.config = config or SFTConfig()
        self.progress = progress

    def examples(self, trajectories: Sequence[Trajectory]):
        # Closed-SFT is off-policy context distillation with the docs as the context
        """The training examples: each accepted answer under the prompt ``mode`` trains on.

        Args:
            trajectories: judged train trajectories (the rejected and the unjudged are left out).
        """
        samples = []
        for t in trajectories:
            if not t.judged or t.reward < 1.0:  # an infrastructure failure is no accepted answer
                continue
            student = t.observation.prompt if self.mode == "open" else t.observation.closed_prompt
            if student is None:
                raise ValueError(f"trajectory of task {getattr(t.observation.task, 'id', '?')} has no query-only prompt for Closed-SFT")
            samples.append(TeacherSample(ContextPair(t.observation.prompt, student, t.observation.task), t.response, t.reward))
        return offpolicy_examples(samples)

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        examples = self.examples(trajectories)
        infra = sum(not t.judged for t in trajectories)
        if not examples:
            return {"accepted": 0, "infrastructure": infra}
        metrics = train_sft(self.policy, examples, self.config, progress=self.progress)
        self.sampler.sync(self.policy.model)
        return {"accepted": len(examples), "infrastructure": infra, "final_loss": metrics["loss"][-1], "steps": metrics["steps"]}


class ClosedSFTAgent(SFTAgent):
    """Closed-SFT with its settings as plain options (the benchmark's ``closed-sft``): answers sampled
    with the docs at ``temperature``, the accepted ones trained on under the query-only prompt.

    Args:
        policy: the :class:`~se_gym.training.policy.Policy` it trains.
        epochs: passes over the accepted answers per learn call.
        learning_rate: the fine-tuning's learning rate.
        batch_size: examples per step.
        temperature: sampling temperature while learning.
        test_temperature: sampling temperature once frozen.
        max_new_tokens: the longest answer.
        seed: the training's seed.
        mixed_precision: ``auto``, ``bf16``, ``fp16`` or ``no``.
        sampler: what samples its answers (None: the policy itself; with vLLM a sampler synced to it).
        progress: show the training's progress.
    """

    def __init__(self, policy, epochs: int = 3, learning_rate: float = 1e-5, batch_size: int = 8, temperature: float = 0.6,
                 test_temperature: float = 0.0, max_new_tokens: int = 512, seed: int = 0, mixed_precision: str = "auto",
                 sampler=None, progress: bool = False):
        config = SFTConfig(learning_rate=learning_rate, epochs=epochs, batch_size=batch_size, warmup_ratio=0.1, seed=seed,
                           mixed_precision=mixed_precision)
        super().__init__(policy, mode="closed", config=config, temperature=temperature, max_new_tokens=max_new_tokens,
                         sampler=sampler, progress=progress)
        self.test_temperature = test_temperature

    def freeze(self) -> None:
        """Learning samples at ``temperature`` (rejection sampling); the test answers at ``test_temperature``."""
        super().freeze()
        self.temperature = self.test_temperature


def _byte_dtype():
    import torch

    return torch.uint8


class RLAgent(PolicyAgent):
    """GRPO/PPO learner; ``learn`` takes consecutive groups of ``config.group_size`` samples per task.

    Args:
        policy: the :class:`~se_gym.training.policy.Policy` it trains.
        mode: ``open`` or ``closed`` (the update made under the query-only prompt).
        config: the RL settings (None: the defaults).
        sampler: what samples its answers (None: the policy itself; with vLLM a sampler synced to it).
        rollout_book: the book answers are rolled out with.
    """

    test_book = "closed"

    def __init__(self, policy, mode: str = "closed", config=None, sampler=None, rollout_book: str = "open"):
        self.config = config or RLConfig()
        super().__init__(policy, book=rollout_book, temperature=self.config.temperature, max_new_tokens=self.config.max_new_tokens, sampler=sampler)
        self.mode = _check_mode(mode)
        self.trainer = RLTrainer(policy, self.config, reward_fn=_no_reward, sampler=self.sampler)

    def act(self, observations: Sequence[Observation]) -> list[str]:
        # a group of identical observations is sampled together (num_return_sequences)
        """One sampled answer per observation (a group of identical observations is sampled together).

        Args:
            observations: the questions.
        """
        return super().act(observations)

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        g = self.config.group_size
        if len(trajectories) % g:
            raise ValueError(f"{len(trajectories)} trajectories do not split into groups of {g} (samples_per_task must equal group_size)")
        prompts = []
        for t in trajectories:
            o = t.observation
            update = o.prompt if self.mode == "open" else o.closed_prompt
            if update is None:
                raise ValueError("Closed-RL needs the query-only prompt of each train observation")
            prompts.append(RLPrompt(rollout=o.prompt, update=update, key=o.task))
        for i in range(0, len(trajectories), g):
            ids = {getattr(t.observation.task, "id", None) for t in trajectories[i : i + g]}
            if len(ids) != 1:
                raise ValueError("each group of group_size trajectories must come from one task")
        return self.trainer.update(prompts, [t.response for t in trajectories], [t.reward for t in trajectories])

    def save(self, directory: str | os.PathLike) -> Path:
        """Write the weights and the trainer's checkpoint (``trainer/``).

        Args:
            directory: the folder.

        Returns:
            The folder written.
        """
        directory = super().save(directory)
        self.trainer.save(Path(directory) / "trainer")
        return directory

    def load(self, directory: str | os.PathLike) -> "RLAgent":
        """Resume from the trainer's checkpoint.  A LoRA run resumed on the plain base model first gets
        the saved adapter (the checkpoint holds the adapter's weights only) and an optimizer over it; the
        reference model stays the plain base, which is what the adapter started from.

        Args:
            directory: the folder.
        """
        from se_gym.training.checkpoint import has_checkpoint
        from se_gym.training.sft import make_optimizer

        trainer_dir, policy_dir = Path(directory) / "trainer", Path(directory) / "policy"
        if not has_checkpoint(trainer_dir):
            return self
        if (policy_dir / "adapter_config.json").is_file() and not hasattr(self.policy.model, "peft_config"):
            self._load_adapter(policy_dir)
            self.trainer.optimizer = make_optimizer(self.policy.model, self.config.learning_rate, self.config.weight_decay)
        self.trainer.load(trainer_dir)
        self.sampler.sync(self.policy.model)
        return self


def _no_reward(prompts, responses):  # RLAgent is scored by the runner's judge, not by the trainer
    raise RuntimeError("RLAgent learns from judged trajectories; call RLTrainer.step only with a reward_fn")


def _groups(trajectories: Sequence[Trajectory]) -> int:
    """The size of the runs of consecutive trajectories of one task (the benchmark asks each train
    question ``--learn-samples`` times in a row); every run must have it.

    Raises:
        ValueError: runs of different sizes, or one task in two runs.
    """
    sizes, seen, last = [], set(), object()
    for t in trajectories:
        tid = getattr(t.observation.task, "id", None)
        if tid != last:
            if tid in seen:
                raise ValueError(f"task {tid} appears in two separate runs: its answers must come together (a group)")
            seen.add(tid)
            sizes.append(0)
            last = tid
        sizes[-1] += 1
    if len(set(sizes)) > 1:
        raise ValueError(f"groups of {sorted(set(sizes))} answers per task: RL needs the same number for every task (--learn-samples)")
    return sizes[0] if sizes else 1


class ClosedRLAgent(RLAgent):
    """Closed-RL as the benchmark's ``closed-rl`` (SE-Bench, Closed-RL: answers rolled out with the docs,
    the update made under the query-only prompt), PPO **without clipping**; each learn pass is one
    rollout-and-update iteration.

    Args:
        policy: the :class:`~se_gym.training.policy.Policy` it trains.
        iterations: learn passes (each one rollout and one update).
        learning_rate: the update's learning rate.
        ppo_epochs: passes over a rollout per update.
        minibatch_size: samples per optimizer step.
        advantage: how a sample's advantage is computed (``grpo``, ``reward``, ...); the group is the
            ``--learn-samples`` answers of a train question.
        temperature: sampling temperature while learning.
        test_temperature: sampling temperature once frozen.
        max_new_tokens: the longest answer.
        seed: the training's seed.
        mixed_precision: ``auto``, ``bf16``, ``fp16`` or ``no``.
        sampler: what samples its answers (None: the policy itself; with vLLM a sampler synced to it).
    """

    def __init__(self, policy, iterations: int = 3, learning_rate: float = 1e-6, ppo_epochs: int = 1, minibatch_size: int = 16,
                 advantage: str = "grpo", temperature: float = 1.0, test_temperature: float = 0.0, max_new_tokens: int = 512,
                 seed: int = 0, mixed_precision: str = "auto", sampler=None):
        if iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {iterations}")
        config = RLConfig(learning_rate=learning_rate, group_size=1, ppo_epochs=ppo_epochs, minibatch_size=minibatch_size, clip=False,
                          advantage=advantage, temperature=temperature, max_new_tokens=max_new_tokens, seed=seed, mixed_precision=mixed_precision)
        super().__init__(policy, mode="closed", config=config, sampler=sampler)
        self.learn_passes = iterations  # the benchmark gives this agent this many learn passes
        self.test_temperature = test_temperature

    def freeze(self) -> None:
        """Rollouts sample at ``temperature``; the test answers at ``test_temperature``."""
        super().freeze()
        self.temperature = self.test_temperature

    def _rl(self, trajectories: list[Trajectory]) -> dict:
        from dataclasses import replace

        self.config = self.trainer.config = replace(self.config, group_size=_groups(trajectories))
        return RLAgent._learn(self, trajectories)

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        return self._rl(trajectories)


class ClosedSFTRLAgent(ClosedRLAgent):
    """The paper's best row as the benchmark's ``closed-sft-rl``: Closed-SFT on the first learn pass's
    accepted answers (sampled with the docs at ``sft_temperature``), then ``rl_iterations`` passes of
    PPO **without clipping and without advantage** (the reward itself weighs each answer's likelihood:
    with 0/1 rewards only accepted answers are pushed up).

    Args:
        policy: the :class:`~se_gym.training.policy.Policy` it trains.
        rl_iterations: RL passes after the SFT pass.
        sft_epochs: the SFT's passes over the accepted answers.
        sft_learning_rate: the SFT's learning rate.
        sft_batch_size: the SFT's examples per step.
        sft_temperature: sampling temperature of the SFT pass.
        learning_rate: the RL update's learning rate.
        ppo_epochs: passes over a rollout per update.
        minibatch_size: samples per optimizer step.
        temperature: sampling temperature of the RL passes.
        test_temperature: sampling temperature once frozen.
        max_new_tokens: the longest answer.
        seed: the training's seed.
        mixed_precision: ``auto``, ``bf16``, ``fp16`` or ``no``.
        sampler: what samples its answers (None: the policy itself; with vLLM a sampler synced to it).
        progress: show the SFT's progress.
    """

    def __init__(self, policy, rl_iterations: int = 2, sft_epochs: int = 3, sft_learning_rate: float = 1e-5, sft_batch_size: int = 8,
                 sft_temperature: float = 0.6, learning_rate: float = 1e-6, ppo_epochs: int = 1, minibatch_size: int = 16,
                 temperature: float = 1.0, test_temperature: float = 0.0, max_new_tokens: int = 512, seed: int = 0,
                 mixed_precision: str = "auto", sampler=None, progress: bool = False):
        super().__init__(policy, iterations=1 + rl_iterations, learning_rate=learning_rate, ppo_epochs=ppo_epochs, minibatch_size=minibatch_size,
                         advantage="reward", temperature=temperature, test_temperature=test_temperature, max_new_tokens=max_new_tokens,
                         seed=seed, mixed_precision=mixed_precision, sampler=sampler)
        self.sft_config = SFTConfig(learning_rate=sft_learning_rate, epochs=sft_epochs, batch_size=sft_batch_size, warmup_ratio=0.1, seed=seed,
                                    mixed_precision=mixed_precision)
        self.sft_temperature, self.rl_temperature, self.progress = sft_temperature, temperature, progress
        self.sft_done = False
        self.temperature = sft_temperature  # the first pass samples the SFT data

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        if self.sft_done:
            return self._rl(trajectories)
        examples = SFTAgent.examples(self, trajectories)  # accepted answers under the query-only prompt (mode "closed")
        metrics = {"stage": "sft", "accepted": len(examples), "infrastructure": sum(not t.judged for t in trajectories)}
        if examples:
            out = train_sft(self.policy, examples, self.sft_config, progress=self.progress)
            self.sampler.sync(self.policy.model)
            metrics["final_loss"] = out["loss"][-1]
        self.sft_done, self.temperature = True, self.rl_temperature
        return metrics

    def save(self, directory: str | os.PathLike) -> Path:
        """Write the weights, the trainer and the stage (``stage.json``).

        Args:
            directory: the folder.

        Returns:
            The folder written.
        """
        directory = super().save(directory)
        (Path(directory) / "stage.json").write_text(f'{{"sft_done": {str(self.sft_done).lower()}}}', encoding="utf-8")
        return directory

    def load(self, directory: str | os.PathLike) -> "ClosedSFTRLAgent":
        """Load the weights, the trainer and the stage (SFT done or not, and the temperature that goes with it).

        Args:
            directory: the folder.
        """
        import json

        stage = Path(directory) / "stage.json"
        if stage.is_file():
            self.sft_done = bool(json.loads(stage.read_text(encoding="utf-8"))["sft_done"])
            self.temperature = self.rl_temperature if self.sft_done else self.sft_temperature
        return super().load(directory)  # the trainer's checkpoint holds the weights (after SFT too) and the optimizer
