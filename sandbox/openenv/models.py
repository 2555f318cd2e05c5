"""SEBench-v0's typed action, observation and state (defined in se_gym.integrations.openenv)."""
from se_gym.integrations.openenv import SEBenchAction, SEBenchObservation, SEBenchState

__all__ = ["SEBenchAction", "SEBenchObservation", "SEBenchState"]
