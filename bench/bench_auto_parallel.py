"""AUTO_PARALLEL's cost on the host: the CPU time of a DryRun of the same MLP (512-1024-512, batch 64 per
rank, Momentum, rank 1 of 4) with its strategies written out (SEMI_AUTO_PARALLEL, mlp_dp_mp.py) beside
AUTO_PARALLEL's (auto_mlp.py: one MatMul shard, the rest propagated; nothing shard, recursive programming),
which captures the step twice (a recording capture to search on, then the sharded one).

    python bench/bench_auto_parallel.py [repeats]
"""
from __future__ import annotations

import sys
from pathlib import Path

from bench_recompute import dryrun

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "msdryrun"
RUNS = [("semi-auto, strategies written out", "mlp_dp_mp.py", {"DP": "2", "MP": "2"}),
        ("auto, sharding_propagation from mm1", "auto_mlp.py", {"SHARD": "mm1"}),
        ("auto, recursive_programming", "auto_mlp.py", {"SHARD": "none", "SEARCH": "recursive_programming"})]


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    print(f"{'run':40} {'used peak MiB':>14} {'CPU s (min of ' + str(repeats) + ')':>18}")
    for label, script, env in RUNS:
        results = [dryrun(FIXTURES / script, [], {**env, "RANK_SIZE": "4", "RANK_ID": "1",
                                                  "STRATEGY_FILE": "/dev/null"}) for _ in range(repeats)]
        print(f"{label:40} {results[0][0]:14.1f} {min(cpu for _, cpu in results):18.2f}")


if __name__ == "__main__":
    main()
