"""SEBench-v0 for OpenEnv (package ``se_gym_env``, distribution ``openenv-se_gym_env``).

    from openenv import AutoEnv
    env = AutoEnv.from_env("se_gym", base_url="http://127.0.0.1:8000")    # or docker_image=...
"""
from .client import SeGymEnv
from .models import SEBenchAction, SEBenchObservation, SEBenchState

__all__ = ["SeGymEnv", "SEBenchAction", "SEBenchObservation", "SEBenchState"]
