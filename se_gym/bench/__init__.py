"""``se-gym bench``: benchmark memory-augmented and learning agents under the SE-Bench protocol
(learn on train, freeze, test closed book), and the leaderboard over runs.  See docs/bench.md."""
from .config import BenchConfig, bench_demo_config
from .report import PAPER_ROWS, bootstrap_ci

__all__ = ["BenchConfig", "PAPER_ROWS", "bench_demo_config", "bootstrap_ci"]
