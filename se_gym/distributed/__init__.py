"""Ray pieces: ordered actor pools that survive actor and node deaths (rollouts; self-play's
generation and judge actors, with weights broadcast to them), and one-object actors pinned to the
driver's node (self-play's task buffer).

Ray is imported only inside the functions here, so ``import se_gym`` never needs it.
"""
from .objects import RemoteObject, cluster_nodes, connect, package_runtime_env, shutdown
from .pool import ActorPoolError, OrderedActorPool, run_ordered

__all__ = ["ActorPoolError", "OrderedActorPool", "RemoteObject", "cluster_nodes", "connect", "package_runtime_env", "run_ordered", "shutdown"]
