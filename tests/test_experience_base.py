"""The demo's experience-reading base (issue 34): its pre-training examples hold retrieved experience
in exactly the layouts the memory agent and the experience loop write, never the experiment's
functions; the plain demo's base is unchanged; the new mix trains."""
from __future__ import annotations

import hashlib
import random
import re
from dataclasses import asdict
from types import SimpleNamespace

from conftest import need_module
from se_gym.agents import MemoryAgent, MemoryEntry, Observation
from se_gym.demo import EXPERIENCE_EXTRA, Demo, DemoConfig, experience_base_config
from se_gym.experience import miniworld
from se_gym.library import mint
from se_gym.training import miniature as mini

# a memory agent's prompt: the header, past problems with their accepted answers, maybe remembered
# docs, then the task's own prompt
MEMORY_LAYOUT = re.compile(
    r"### Experience from training\n"
    r"Past problem: [^\n]+\nAccepted answer:\n```python\ndef solve\([^\n]*\):\n    return zwc\.\w+\([^\n]*\)\n```\n\n"
    r"(Past problem: [^\n]+\nAccepted answer:\n```python\ndef solve\([^\n]*\):\n    return zwc\.\w+\([^\n]*\)\n```\n\n)*"
    r"(Remembered doc:\nzwc\.\w+\([^\n]*\): [^\n]+\n\n)*"
    r"Task: [^\n]+\ndef solve\([^\n]*\):\nAnswer:\n$")


class _NoModel:
    def sample(self, prompts, n, temperature, max_new_tokens):
        return [["" for _ in range(n)] for _ in prompts]


def _agent_prompt(use_docs: bool) -> str:
    library = mint(7)
    agent = MemoryAgent(_NoModel(), k=2, use_docs=use_docs)
    past = "Given the list x, return the cumulative sum."
    agent.memory.add(MemoryEntry(past, mini.answer(library, "cumsum"), "experience", "t1"))
    agent.memory.add(MemoryEntry(mini.doc_line(library, "cumsum"), mini.doc_line(library, "cumsum"), "doc", "t1"))
    task = mini.make_task(library, "cumsum", random.Random(0), mini.HELDOUT_TEMPLATES, "test", 0)
    obs = Observation(task=task, prompt=mini.closed_prompt(task.query, "cumsum"), book="closed", split="test")
    return agent.prompts([obs])[0]


def test_memory_examples_are_laid_out_as_the_memory_agent_writes_its_prompts():
    for use_docs in (False, True):
        assert MEMORY_LAYOUT.match(_agent_prompt(use_docs)), _agent_prompt(use_docs)
    corpus = mini.memory_corpus(400, 0)
    with_memory = [p for p, _ in corpus if p.startswith("### Experience from training\n")]
    assert len(with_memory) == len(corpus)
    assert all(MEMORY_LAYOUT.match(p) for p, _ in corpus), next(p for p, _ in corpus if not MEMORY_LAYOUT.match(p))
    assert any("Remembered doc:" in p for p, _ in corpus) and any(p.count("Past problem:") == 2 for p, _ in corpus)
    # the answer is the call of the matching past problem whenever one is shown
    shown = [(p, a) for p, a in corpus if a.split("return ")[1] in p]
    assert len(shown) >= 0.85 * len(corpus)


def test_the_experience_mix_holds_both_retrieval_layouts_and_never_the_experiments_functions():
    mix = mini.pretraining_mix(1000, 0, EXPERIENCE_EXTRA, 0.0)
    memory = [p for p, _ in mix if p.startswith("### Experience from training\n")]
    lessons = [p for p, _ in mix if p.startswith("Docs:\n") and p.count("\n") > 4]  # more than one line in the Docs section
    assert 250 <= len(memory) <= 350 and len(lessons) >= 50
    # the lessons examples are laid out as the experience loop's prompter renders injected lessons
    task = mini.make_task(mint(3), "sort", random.Random(1), mini.TRAIN_TEMPLATES, "train", 0)
    exp = [SimpleNamespace(text="zwc.abc(x): the elements sorted in ascending order."), SimpleNamespace(text="Call only functions the docs list.")]
    rendered = miniworld.MiniPrompter().render(task, exp, ())
    assert rendered == mini.docs_prompt([e.text for e in exp], task.query, "sort")
    # no example is about an experiment function: with real descriptions only (made-up ones can
    # happen to spell one, under a fresh name that means nothing), none of theirs appears
    real = mini.memory_corpus(1000, 0, synthetic_share=0.0) + miniworld.pretraining_corpus(1000, 0)
    held_out = [re.compile(rf"\b{re.escape(mini.FUNCTIONS[k][1])}\b") for k in mini.EXPERIMENT_POOL]
    leaks = [(d.pattern, p) for p, a in real for d in held_out if d.search(p + a)]
    assert not leaks, leaks[:2]


def test_the_default_demo_configuration_and_its_base_are_unchanged(tmp_path):
    # today's numbers and resume bindings (base and seeds) rest on these values
    assert asdict(DemoConfig()) == {
        "hidden": 256, "layers": 2, "heads": 8, "pretrain_examples": 102_400, "pretrain_lr": 1e-3, "pretrain_batch": 64,
        "pretrain_synthetic": 0.5, "pretrain_extra": (), "functions": 10, "train_per_function": 4, "test_per_function": 3, "samples": 4,
        "sft_epochs": 30, "sft_lr": 2e-3, "sft_batch": 8, "rl_iterations": 8, "rl_group": 4, "rl_lr": 1e-3, "rl_ppo_epochs": 4,
        "max_new_tokens": 32, "threads": 1}
    # the doc-reading corpus of the default mix, as it was before the experience corpora existed
    digest = hashlib.md5(repr(mini.pretraining_mix(500, 0, (), 0.0)).encode()).hexdigest()
    assert digest == "19a816dbbb14cb0be82a4d27fbafcb29"
    new = experience_base_config(quick=True)
    assert new.pretrain_extra == EXPERIENCE_EXTRA
    plain = Demo(tmp_path / "a", DemoConfig(**{**asdict(new), "pretrain_extra": ()})).base_config()
    assert Demo(tmp_path / "b", new).base_config() == {**plain, "pretrain_extra": [list(e) for e in EXPERIENCE_EXTRA]}


def test_the_command_line_builds_the_experience_base_on_request():
    from se_gym.demo import demo_config
    from test_demo_resume import _args

    assert demo_config(_args("--quick", "--base", "experience"), "cpu") == experience_base_config(True)
    assert demo_config(_args("--base", "experience"), "cpu") == experience_base_config(False)
    assert demo_config(_args("--quick"), "cpu").pretrain_extra == ()


def test_the_experience_mix_trains_a_very_small_model(tmp_path):
    need_module("torch", "pre-training needs torch (pip install 'se-gym[train]')")
    from se_gym.training.policy import Policy
    from se_gym.training.sft import SFTConfig, SFTExample, train_sft

    mini.build_tiny_model(tmp_path / "init", seed=0, hidden=32, layers=1, heads=1, extra=EXPERIENCE_EXTRA)
    policy = Policy.from_pretrained(tmp_path / "init", device="cpu", dtype="float32")
    corpus = [SFTExample(p, a) for p, a in mini.pretraining_mix(64, 0, EXPERIENCE_EXTRA, 0.0)]
    metrics = train_sft(policy, corpus, SFTConfig(learning_rate=1e-2, epochs=6, batch_size=16, mixed_precision="no"), checkpoint_dir=None,
                        progress=False)
    assert metrics["loss"][-1] < 0.8 * metrics["loss"][0], metrics["loss"]
    # the memory prompts fit the tiny model's 256 positions: nothing was cut
    assert policy.truncated == 0


def test_the_grid_takes_the_on_policy_scale_from_the_command_line(tmp_path):
    """The on-policy cells need more updates than --quick's four to move a tiny model (issue 34's
    measurement): --onpolicy-steps and --onpolicy-lr set them, over the scale's defaults."""
    import argparse

    from se_gym.cli import main
    from se_gym.configs import config_from_args
    from se_gym.experience.cli import CellOptions, GridOptions, cell_config, configure
    from se_gym.experience.loop import QUICK

    p = argparse.ArgumentParser()
    configure(p)

    def options(argv):
        return config_from_args(CellOptions, p.parse_args(argv), also=(GridOptions,))

    cfg = cell_config(options(["--quick", "--onpolicy-steps", "64", "--onpolicy-lr", "3e-3"]), **QUICK)
    assert (cfg.onpolicy_steps, cfg.onpolicy_lr, cfg.functions_per_round) == (64, 3e-3, QUICK["functions_per_round"])
    assert cell_config(options(["--quick"]), **QUICK).onpolicy_steps == QUICK["onpolicy_steps"]
    assert main(["experience", "--out", str(tmp_path / "o"), "--onpolicy-steps", "0"]) == 2
