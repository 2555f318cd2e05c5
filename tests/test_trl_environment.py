"""TRL's environment API: SEBenchToolEnv's tools and reward, and a real GRPOTrainer that trains on it
(``environment_factory``) with a tiny local model."""
from __future__ import annotations

import ast
import inspect
import json

import pytest

from conftest import need, need_module
from se_gym.integrations.trl import SEBenchToolEnv, close_environments, dataset_rows, make_dataset
from se_gym.judge import Status, Verdict
from se_gym.library import mint
from se_gym.tasks import builtin_tasks

LIB = mint(0)
# a short prompt keeps the tiny model's sequences short (the SFT below is then seconds)
TEMPLATE = "{query}\nExample: {example_input} gives {example_output}\n{function_name}"


@pytest.fixture(scope="module")
def task():
    """A task whose solution is one call and whose example output is a literal another hidden case does
    not share (so that a hard-coded answer passes the example and fails the hidden cases)."""
    for t in sorted(builtin_tasks("train", seed=0), key=lambda t: len(t.library_solution)):
        lines = t.library_solution.strip().splitlines()
        try:
            ast.literal_eval(t.example.output)
        except (ValueError, SyntaxError):
            continue
        if sum(l.strip().startswith("return ") for l in lines) == 1 and any(c.output != t.example.output for c in t.test_cases):
            return t
    pytest.fail("no suitable built-in task")


def _cheat(task) -> str:
    """Right on its first call only (run_tests runs the visible example alone), then the example's
    expected output hard-coded: it passes what the model can see and fails the hidden cases.  (A
    result that never comes from the library would not even pass the example under strict's
    dependence check: issue 42.)"""
    entry = task.entry_point
    real = task.library_solution.replace(f"def {entry}(", f"def _real_{entry}(", 1)
    return (f"{real}\n\n_calls = []\n\n\ndef {entry}(*args, **kwargs):\n    _calls.append(1)\n"
            f"    if len(_calls) == 1:\n        return _real_{entry}(*args, **kwargs)\n    return {task.example.output}\n")


def _env(task):
    env = SEBenchToolEnv(LIB)
    row = dataset_rows([task], LIB)[0]
    return env, row


def test_run_tests_shows_the_visible_example_only_and_submit_is_judged_on_every_case(task):
    env, row = _env(task)
    hidden = [c for c in task.test_cases if c.input != task.example.input]
    try:
        hint = env.reset(**row)
        assert "run_tests" in hint and "submit" in hint
        ok = env.run_tests(task.library_solution)
        assert ok.startswith("All 1 example(s) passed") and task.example.input in ok and task.example.output in ok
        wrong = env.run_tests(task.library_solution.replace("return ", "return 1 + 0 * "))
        assert "Not passing" in wrong and task.example.input in wrong
        # the cheat passes the example the model can see...
        cheat = _cheat(task)
        assert env.run_tests(cheat).startswith("All 1 example(s) passed")
        for text in (ok, wrong):
            assert not [c.input for c in hidden if c.input in text], "a hidden case reached the model"
        # ...and fails the hidden cases that decide the reward
        assert env.submit(cheat) == "Submitted."
        assert env.submit(task.library_solution).startswith("Already submitted")  # the first one counts
        assert env.get_reward() == 0.0 and env.verdict.status is Status.WRONG_ANSWER
        assert len(env.verdict.cases) == len(task.test_cases)

        env.reset(**row)  # a new rollout forgets the old one
        assert env.get_reward() == 0.0 and env.verdict is None  # no submission: 0
        env.submit(f"```python\n{task.library_solution}\n```")  # a fenced answer works as well as bare code
        assert env.get_reward() == 1.0 and env.verdict.passed
        assert [tool for tool, _ in env.tool_log] == ["submit"]
    finally:
        close_environments()


def test_tools_as_trl_sees_them_and_infrastructure_failures(task):
    class SandboxDown:
        library = LIB

        def judge_many(self, items):
            return [Verdict(0.0, Status.SANDBOX_ERROR, 3, infrastructure=True, detail="worker died") for _ in items]

    env = SEBenchToolEnv(judge=SandboxDown())
    try:
        _check_tools_and_failure(env, task)
    finally:
        close_environments()


def _check_tools_and_failure(env, task):
    # what GRPOTrainer exposes as tools: the public functions of the class but reset and get_reward
    names = sorted(n for n, _ in inspect.getmembers(SEBenchToolEnv, predicate=inspect.isfunction)
                   if n not in ("reset", "get_reward") and not n.startswith("_"))
    assert names == ["run_tests", "submit"]
    from transformers.utils import get_json_schema

    for n in names:  # each one's schema builds from its signature and docstring (what the chat template shows)
        schema = get_json_schema(getattr(env, n))
        assert schema["function"]["parameters"]["required"] == ["code"] and schema["function"]["description"]
    row = dataset_rows([task], LIB)[0]
    env.reset(**row)
    assert "sandbox failed" in env.run_tests(task.library_solution)
    env.submit(task.library_solution)
    assert env.get_reward() is None  # TRL leaves the rollout out instead of scoring a wrong answer
    with pytest.raises(ValueError, match="make_dataset"):
        env.reset(prompt=row["prompt"], task_id=row["task_id"])
    with pytest.raises(ValueError, match="conversational=True"):
        env.reset(**dataset_rows([task], LIB, conversational=False)[0])
    assert json.loads(row["examples"]) == [task.example.to_dict()]


def test_the_docs_snippet_runs(tmp_path):
    """docs/integrations/trl.md's offline snippet runs as written and prints what its last line says."""
    import os
    import re
    import subprocess
    import sys

    from conftest import REPO

    doc = (REPO / "docs" / "integrations" / "trl.md").read_text(encoding="utf-8")
    body = re.search(r"<!-- doc-test: trl-env -->\n```python\n(.*?)\n```", doc, flags=re.S).group(1)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["All", "1", "example(s)", "passed.", body.strip().splitlines()[-1][2:]]


def _tool_calling_model(tmp_path, prompts, task, tools_env):
    """The tiny model, taught by a short SFT to answer each of ``prompts`` (the full chat prompts TRL
    will render) with run_tests, then submit, with the task's solution (a random model never writes a
    well-formed tool call, so the tools would never run).  Its tokenizer carries Qwen3's chat template,
    whose tool-call format TRL parses."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import qwen3_chat_template

    from se_gym.llm.tiny import build_tiny_model, default_corpus

    def call(name):
        return {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": name, "arguments": {"code": task.library_solution}}}]}

    tools_env.reset(**dataset_rows([task], LIB, template=TEMPLATE)[0])
    tail = [call("run_tests"), {"role": "tool", "name": "run_tests", "content": tools_env.run_tests(task.library_solution)},
            call("submit"), {"role": "tool", "name": "submit", "content": "Submitted."}, {"role": "assistant", "content": "Done."}]
    tools = [tools_env.run_tests, tools_env.submit]
    draft = AutoTokenizer.from_pretrained(build_tiny_model(tmp_path / "draft", chat_template=qwen3_chat_template))
    texts = [draft.apply_chat_template(p + tail, tools=tools, tokenize=False) for p in prompts]
    # the conversations in the tokenizer's corpus: fewer tokens per sequence, a faster SFT
    model_dir = build_tiny_model(tmp_path / "tiny", corpus=list(default_corpus()) + texts * 40, vocab_size=2000,
                                 chat_template=qwen3_chat_template)
    tok = AutoTokenizer.from_pretrained(model_dir)
    seqs = []
    for p in prompts:
        n_prompt = len(tok(tok.apply_chat_template(p, tools=tools, add_generation_prompt=True, tokenize=False), add_special_tokens=False)["input_ids"])
        ids = torch.tensor([tok(tok.apply_chat_template(p + tail, tools=tools, tokenize=False), add_special_tokens=False)["input_ids"]])
        labels = ids.clone()
        labels[0, :n_prompt] = -100  # learn the completion: the calls (and the tool answers it will see)
        seqs.append((ids, labels))
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(300):
        losses = [model(input_ids=ids, labels=labels).loss for ids, labels in seqs]
        loss = max(float(x) for x in losses)
        opt.zero_grad()
        sum(losses).backward()
        opt.step()
        if loss < 0.02:
            break
    assert loss < 0.02, f"the tiny model did not learn the tool calls (loss {loss:.3f})"
    model.save_pretrained(model_dir)
    return model_dir


def _with_hint(prompt, hint):
    return prompt[:-1] + [{**prompt[-1], "content": prompt[-1]["content"] + hint}]


@pytest.fixture(scope="module")
def taught(tmp_path_factory, task):
    """The tool-calling tiny model, taught on both prompts TRL renders for ``task``: the dataset's row
    (system + user turn, the tools' note appended) and the env-owned one (one user turn that ``reset``
    fills: SEBenchTaskEnv's whole task)."""
    need_module("trl", "trl is not installed (extra 'trl')")
    need_module("datasets", "datasets is not installed (extra 'hf')")
    import transformers
    from packaging.version import Version

    need(Version(transformers.__version__) >= Version("5.2"), "TRL's environment_factory needs transformers >= 5.2")
    from se_gym.integrations.trl import SEBenchTaskEnv

    row = dataset_rows([task], LIB, template=TEMPLATE)[0]
    env = SEBenchToolEnv(LIB)
    owned = SEBenchTaskEnv.factory(tasks=[task], library=LIB, template=TEMPLATE)()
    prompts = [_with_hint(row["prompt"], env.reset(**row)), [{"role": "user", "content": owned.reset(prompt=[])}]]
    try:
        return _tool_calling_model(tmp_path_factory.mktemp("taught"), prompts, task, env)
    finally:
        close_environments()


def _grpo_config(trl, tmp_path):
    return trl.GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=2, num_generations=2, max_completion_length=256,
        max_steps=2, logging_steps=1, report_to=[], use_cpu=True, save_strategy="no", bf16=False, learning_rate=1e-5,
        temperature=0.1,  # near-greedy: the taught calls, not a sample of the tail
    )


def _check_tool_rollouts(trainer, made, task, reward_key):
    steps = [e for e in trainer.state.log_history if reward_key in e]
    assert len(steps) == 2 and trainer.state.global_step == 2
    assert [e["tools/call_frequency"] for e in steps] == [2.0, 2.0]  # run_tests and submit, per rollout
    assert [e[reward_key] for e in steps] == [1.0, 1.0]
    used = [e for e in made if getattr(e, "tool_log", None)]
    assert len(used) == 2  # one instance per rollout of the batch, reused across steps
    hidden = [c.input for c in task.test_cases if c.input != task.example.input]
    for env in used:
        (t1, seen), (t2, said) = env.tool_log[-2:]
        assert (t1, t2, said) == ("run_tests", "submit", "Submitted.")
        assert "passed" in seen and task.example.input in seen and not [h for h in hidden if h in seen]
        assert env.verdict.passed and len(env.verdict.cases) == len(task.test_cases)


def test_grpo_trainer_trains_on_the_tool_environment(tmp_path, task, taught, monkeypatch):
    """A real GRPOTrainer with ``environment_factory`` and a dataset: TRL renders the tools' schemas into
    the prompt, parses the model's tool calls, runs ``run_tests`` and ``submit`` on the rollout's own
    instance, and takes the reward from ``get_reward`` (the judge's verdict on the submission), for 2 steps."""
    import trl

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    ds = make_dataset([task], LIB, template=TEMPLATE)
    made: list[SEBenchToolEnv] = []

    def factory():  # what TRL calls, once per concurrent rollout (and once to read the tools)
        made.append(SEBenchToolEnv(LIB))
        return made[-1]

    try:
        trainer = trl.GRPOTrainer(model=str(taught), args=_grpo_config(trl, tmp_path), train_dataset=ds, environment_factory=factory)
        trainer.train()
    finally:
        close_environments()
    _check_tool_rollouts(trainer, made, task, "rewards/SEBenchToolEnv/mean")


def test_grpo_trainer_without_a_dataset_on_the_env_owned_tasks_and_async_reward(tmp_path, task, taught, monkeypatch):
    """TRL >= 1.16: no ``train_dataset`` and no ``reward_funcs``.  TRL feeds empty prompts; the
    environment (SEBenchTaskEnv.factory) serves the task from ``reset`` and owns the reward through an
    async ``get_reward``, which TRL awaits on its own event loop, for 2 steps."""
    import trl

    from se_gym.integrations.trl import SEBenchTaskEnv

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    cfg = _grpo_config(trl, tmp_path)
    make = SEBenchTaskEnv.factory(tasks=[task], library=LIB, template=TEMPLATE, group_size=cfg.num_generations)
    made: list[SEBenchTaskEnv] = []

    def factory():
        made.append(make())
        return made[-1]

    assert inspect.iscoroutinefunction(factory().get_reward)
    try:
        trainer = trl.GRPOTrainer(model=str(taught), args=cfg, environment_factory=factory)
        trainer.train()
    finally:
        close_environments()
    _check_tool_rollouts(trainer, made, task, "rewards/SEBenchTaskEnv/mean")
    assert {e.task.id for e in made if e.task is not None} == {task.id}


def test_the_env_owned_stream_serves_a_group_one_task_and_the_row_path_still_works(task):
    """The k-th reset over a factory's instances plays task order[k // group_size]; each pass is a seeded
    shuffle; a dataset row still picks its own task."""
    import asyncio

    from se_gym.integrations.trl import SEBenchTaskEnv

    make = SEBenchTaskEnv.factory(split="train", seed=3, group_size=2)
    envs = [make() for _ in range(4)]
    try:
        first = [e.reset(prompt=[{"role": "user", "content": ""}]) for e in envs]
        ids = [e.task.id for e in envs]
        assert ids[0] == ids[1] != ids[2] == ids[3] and first[0] == first[1]
        # seeded: a new factory with the same seed serves the same order; another seed another one
        same, other = (SEBenchTaskEnv.factory(split="train", seed=s, group_size=1).stream for s in (3, 4))
        assert [same.next().id for _ in range(2)] == [ids[0], ids[2]]
        assert [other.next().id for _ in range(3)] != [ids[0], ids[2], same.next().id]
        env = envs[0]
        assert env.task.query in first[0] and "run_tests" in first[0]
        env.submit(env.task.library_solution)
        assert asyncio.run(env.get_reward()) == 1.0 and asyncio.run(envs[1].get_reward()) == 0.0  # no submission
        row_task = envs[2].task
        env.reset(**dataset_rows([row_task], envs[2]._library)[0])  # the dataset path (a row of the env's library)
        assert env.task is None and env.run_tests(row_task.library_solution).startswith("All 1 example(s) passed")
        env.submit(row_task.library_solution)
        assert asyncio.run(env.get_reward()) == 1.0
    finally:
        close_environments()
