"""Ray pieces: ordered actor pools that survive actor and node deaths (rollouts; self-play's
generation actors, with weights broadcast to them), one-object actors pinned to the driver's node
(self-play's task buffer), and the Ray sandbox (``sandbox="ray"``: a judge pool of one local
sandbox pool per node, :mod:`.sandbox`).

Ray is imported only inside the functions here, so ``import se_gym`` never needs it.
"""
from .cluster import cluster_nodes, connect, package_runtime_env, shutdown
from .objects import RemoteObject
from .pool import ActorPoolError, OrderedActorPool, run_ordered
from .sandbox import BatchStats, NodeRefused, RaySandbox

__all__ = ["ActorPoolError", "BatchStats", "NodeRefused", "OrderedActorPool", "RaySandbox", "RemoteObject", "cluster_nodes", "connect",
           "package_runtime_env", "run_ordered", "shutdown"]
