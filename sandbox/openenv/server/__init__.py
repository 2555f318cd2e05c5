"""SEBench-v0's OpenEnv server (se_gym.integrations.openenv)."""
from se_gym.integrations.openenv import SEBenchEnvironment

__all__ = ["SEBenchEnvironment"]
