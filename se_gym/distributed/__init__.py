"""Ray pools for rollouts: actors that each own a generator and a judge, results in order.

Ray is imported only inside the functions here, so ``import se_gym`` never needs it.
"""
from .pool import ActorPoolError, OrderedActorPool, run_ordered

__all__ = ["ActorPoolError", "OrderedActorPool", "run_ordered"]
