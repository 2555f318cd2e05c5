"""Running episodes with experience injected, on :class:`se_gym.envs.SEBenchEnv`'s multi-turn protocol.

Each episode is one :class:`SEBenchEnv` (sharing one judge): a passing answer terminates it, a failed
one returns the execution feedback (:func:`se_gym.envs.sebench.feedback_text`) until ``max_turns``
answers were given.  All live episodes of a turn are generated in one batch and judged in one sandbox
batch (the env's ``judge_answers`` / ``apply_verdict``, as its vector env does).  Before every action
the :class:`~se_gym.experience.inject.Injector` picks the experience and a *prompter* renders the
prompt from the task, that experience and the turns so far.
"""
from __future__ import annotations

from typing import Protocol, Sequence

from .inject import Injector
from .records import Episode, Experience, Turn


class Prompter(Protocol):
    def render(self, task, experience: Sequence[Experience], turns: Sequence[Turn]) -> str: ...


class SEBenchPrompter:
    """SE-Bench's closed-book prompt, the experience as a list before the next action, and the
    earlier answers with their feedback in the layout of :class:`SEBenchEnv`'s observations."""

    def __init__(self, library, template: str | None = None, header: str = "### Experience from earlier episodes"):
        self.library, self.template, self.header = library, template, header

    def render(self, task, experience, turns):
        from ..tasks import render_prompt

        text = render_prompt(task, self.library, book="closed", template=self.template)
        for t in turns:
            text += f"\n\n### Your previous answer\n{t.answer}\n\n### Feedback\n{t.feedback}"
        if experience:
            text += f"\n\n{self.header}\n" + "\n".join(f"- {e.text}" for e in experience) + "\n"
        return text


def run_episodes(sampler, tasks: Sequence, library, injector: Injector, prompter: Prompter, *, judge=None, max_turns: int = 1,
                 samples: int = 1, temperature: float = 0.0, max_new_tokens: int = 512, iteration: int = 0, model: str = "",
                 profile: str = "sebench", id_prefix: str = "ep", progress: bool = False) -> list[Episode]:
    """``samples`` episodes per task, each of up to ``max_turns`` answers; returns finished episodes in
    task order.  ``sampler``: anything with ``sample(prompts, n, temperature, max_new_tokens)`` (see
    :mod:`se_gym.training.rl`)."""
    from ..envs.sebench import SEBenchEnv, feedback_text
    from ..judge import Judge
    from ..progress import bar as tqdm  # plain lines off a terminal

    if max_turns < 1 or samples < 1:
        raise ValueError("max_turns and samples must be >= 1")
    own = judge is None
    judge = judge or Judge(library, profile=profile)
    tasks = list(tasks)
    if not tasks:
        return []
    envs, state = [], []
    for i, task in enumerate(tasks):
        for s in range(samples):
            env = SEBenchEnv(tasks=tasks, library=library, judge=judge, max_turns=max_turns, profile=profile)
            env.reset(options={"index": i})
            envs.append(env)
            state.append({"task": task, "turns": [], "done": False, "id": f"{id_prefix}-{iteration}-{task.id}-{s}"})
    bar = tqdm(total=max_turns, desc="turns", disable=not progress, leave=False)
    try:
        for _ in range(max_turns):
            live = [i for i, st in enumerate(state) if not st["done"]]
            if not live:
                break
            chosen = {i: injector.select(state[i]["task"], state[i]["turns"]) for i in live}
            prompts = [prompter.render(state[i]["task"], chosen[i], state[i]["turns"]) for i in live]
            answers = [g[0] for g in sampler.sample(prompts, 1, temperature, max_new_tokens)]
            judged = envs[live[0]].judge_answers(answers, [state[i]["task"] for i in live])
            for i, prompt, answer, (verdict, latency) in zip(live, prompts, answers, judged):
                _, _, terminated, truncated, _ = envs[i].apply_verdict(answer, verdict, latency)
                done = terminated or truncated
                fb = "" if done else feedback_text(verdict, len(state[i]["turns"]) + 1, max_turns, envs[i].visible_cases)
                state[i]["turns"].append(Turn(prompt, answer, verdict, fb, tuple(e.id for e in chosen[i])))
                state[i]["done"] = done
            bar.update(1)
    finally:
        bar.close()
        for env in envs:
            env.close()  # the envs do not own the shared judge
        if own:
            judge.close()
    return [Episode(st["id"], st["task"], tuple(st["turns"]), iteration, injector.context, model) for st in state]


def accuracy(episodes: Sequence[Episode], first_turn: bool = False) -> float:
    """Share of episodes that passed (``first_turn``: passed on the first answer)."""
    if not episodes:
        return 0.0
    return sum((ep.turns[0].passed if first_turn else ep.passed) for ep in episodes) / len(episodes)
