"""A first episode loop: the built-in suite, closed book, strict judge.

    python examples/quickstart.py

Answers each task with its oracle solution, and then with an answer that hallucinates a NumPy
method, and prints what the judge says about each.
"""
import gymnasium as gym

import se_gym  # noqa: F401  (registers SEBench-v0)


def main() -> None:
    env = gym.make("SEBench-v0")
    obs, info = env.reset(seed=0)
    print(obs[:400], "...\n")
    task = env.unwrapped.task
    _, reward, terminated, truncated, info = env.step(f"```python\n{task.library_solution}\n```")
    print(f"oracle answer: reward={reward} status={info['status']} ({info['verdict'].detail})")

    env.reset()
    task = env.unwrapped.task
    lib = env.unwrapped.library
    wrong = f"```python\nimport {lib.package}\n{task.function_name}\n    return {lib.qualified('abs')}({lib.qualified('array')}([1, -2])).tolist()\n```"
    _, reward, *_, info = env.step(wrong)
    v = info["verdict"]
    print(f"hallucinated .tolist(): reward={reward} status={v.status.value} error_type={v.error_type.value if v.error_type else None}")
    env.close()


if __name__ == "__main__":
    main()
