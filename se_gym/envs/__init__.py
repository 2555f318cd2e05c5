"""Gymnasium environments.  Importing ``se_gym`` registers ``SEBench-v0``."""
from gymnasium.envs.registration import register, registry

from .sebench import EnvConfigError, Latency, SEBenchEnv
from .spaces import UnicodeText

ENV_ID = "SEBench-v0"

if ENV_ID not in registry:
    register(
        id=ENV_ID,
        entry_point="se_gym.envs.sebench:SEBenchEnv",
        vector_entry_point="se_gym.envs.vector:SEBenchVectorEnv",
        disable_env_checker=False,
    )

__all__ = ["ENV_ID", "EnvConfigError", "Latency", "SEBenchEnv", "UnicodeText"]
