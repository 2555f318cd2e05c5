"""Your own agent under `se-gym bench`: a custom memory of the library calls the judge accepted.

    se-gym bench --agent examples/bench_my_agent.py:CallMemoryAgent --tasks miniature --out runs/mine

Learn phase (open book, the miniature's one-line docs 'pkg.fn(x): description.'): answer with the
call whose description matches the question best; the judge's feedback decides what is remembered.
Test phase (closed book): answer with the remembered answer whose question matches best.
"""
import re

from se_gym.agents import Agent


def words(text):
    return set(re.findall(r"[a-z]+", text.lower()))


class CallMemoryAgent(Agent):
    book = "closed"  # answers the test questions without docs

    def __init__(self, min_overlap: int = 2):
        self.min_overlap = min_overlap
        self.notes = []  # [question words, accepted answer]: the whole memory

    def best(self, query, candidates):
        score, answer = max(((len(query & set(w)), a) for w, a in candidates), default=(0, ""), key=lambda s: s[0])
        return answer if score >= self.min_overlap else ""

    def act(self, observations):
        answers = []
        for o in observations:
            query = words(o.task.query)
            if not o.docs:  # closed book: only the memory
                answers.append(self.best(query, self.notes))
                continue
            call = self.best(query, [(words(d.split(":", 1)[-1]), d.split("(", 1)[0]) for d in o.docs])
            args = o.task.function_name.split("(", 1)[1].rsplit(")", 1)[0]
            answers.append(f"```python\n{o.task.function_name}\n    return {call}({args})\n```" if call else "")
        return answers

    def _learn(self, trajectories):  # only train trajectories reach here (the base class checks)
        for t in trajectories:
            if t.reward == 1.0:
                self.notes.append([sorted(words(t.observation.task.query)), t.response])
        return {"notes": len(self.notes)}

    def memory_state(self):  # saved, hashed at freeze and after the test, and sized by the benchmark
        return self.notes

    def set_memory_state(self, state):
        self.notes = [list(n) for n in state]
