"""SEBench-v0 as a verifiers environment, for verifiers 0.3 (classic API) and 0.4 (v1 tasksets).

verifiers finds an environment by id: ``"se-gym"`` imports the ``se_gym`` package, which answers
both ways (see ``se_gym/__init__.py``)::

    # verifiers 0.3.x: the classic load_environment entry point
    env = vf.load_environment("se-gym", max_turns=2, book="closed")      # or: vf-eval se-gym -a '{...}'
    env.evaluate_sync(client=vf.ClientConfig(api_base_url=URL, api_key_var="OPENAI_API_KEY"), model=M,
                      num_examples=8, rollouts_per_example=4)

    # verifiers 0.4.x: a taskset plugin (SEBenchTaskset) with its env (SEBenchEnv) and harness
    vf-eval se-gym -m M --client.base-url URL -n 8 -r 4 --env.taskset.max-turns 2

``load_environment(**options)`` here returns the version's environment directly: a
``vf.SingleTurnEnv`` / ``SEBenchMultiTurnEnv`` on 0.3, a ``SEBenchEnv`` (built by verifiers' own
loader) on 0.4.  Options are SEBench-v0's (tasks, split, seed, library, book, profile, reward,
sandbox, max_turns, strip_think).  On either version, an answer the sandbox could not run is not a
wrong answer: the rollout carries verifiers' own error (0.3: ``state["error"]`` is a
``vf.SandboxError``; 0.4: the trace records a ``SandboxError`` and is not ok), which keeps it out
of training and of the evaluated reward.

The version is picked from the installed distribution's metadata; anything but 0.3.x or 0.4.x is
refused with one line.
"""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    VERIFIERS_VERSION = version("verifiers")
except PackageNotFoundError:
    raise ImportError("se_gym.integrations.verifiers needs verifiers: pip install 'se-gym[verifiers]' (0.4.x, v1 "
                      "tasksets), or add 'verifiers==0.3.1' for the classic load_environment API") from None

SERIES = ".".join(VERIFIERS_VERSION.split(".")[:2])
if SERIES == "0.3":
    from ._verifiers_classic import REWARD_NAME, SEBenchMultiTurnEnv, SEBenchRubric, load_environment  # noqa: F401
elif SERIES == "0.4":
    from ._verifiers_v1 import (  # noqa: F401
        REWARD_NAME,
        SEBenchConfig,
        SEBenchData,
        SEBenchEnv,
        SEBenchEnvConfig,
        SEBenchHarness,
        SEBenchTask,
        SEBenchTaskset,
        load_environment,
    )
else:
    raise ImportError(f"se_gym.integrations.verifiers supports verifiers 0.3.x (classic API) and 0.4.x "
                      f"(v1 tasksets); verifiers {VERIFIERS_VERSION} is installed")
