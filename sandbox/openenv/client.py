"""The client AutoEnv loads for ``se_gym``: ``<package>.client.SeGymEnv`` (OpenEnv derives the class
name from openenv.yaml's ``name``) and the action/observation types that openenv.yaml names."""
from se_gym.integrations.openenv import SEBenchAction, SEBenchClient, SEBenchObservation, SEBenchState

__all__ = ["SeGymEnv", "SEBenchAction", "SEBenchObservation", "SEBenchState"]


class SeGymEnv(SEBenchClient):
    """openenv-core's ``EnvClient`` for SEBench-v0 (:class:`se_gym.integrations.openenv.SEBenchClient`)."""
