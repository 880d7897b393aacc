"""Optimizer parallel's per-rank DryRun memory, without / with ``--optimizer_shard``, beside real MindSpore 2.10's
(tests/fixtures/msdryrun/opt_shard_dryrun.json and llama_dryrun.json, recorded by
tools/record_msdryrun_parallel.py), and the CPU time each DryRun took here; ``--7b`` adds the Llama-2-7B
seq-4096 step on rank 0 of dp 8 (MindFormers' loss-scale cell, O2).

    python bench/bench_optimizer_shard.py [--7b]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from bench_recompute import LLAMA, dryrun

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "msdryrun"


def main() -> None:
    recorded = json.loads((FIXTURES / "llama_dryrun.json").read_text())["runs"]
    without = {tuple(r["args"]): r["used_peak_mb"] for r in recorded}
    print("Llama 2 layers h1024, rank 0 of 8, O0 plain cell: used peak MiB, ascendemu vs MindSpore; CPU s")
    for run in json.loads((FIXTURES / "opt_shard_dryrun.json").read_text())["llama"]:
        args = run["args"]
        env = {"RANK_SIZE": str(run["rank_size"]), "RANK_ID": str(run["rank_id"])}
        off, off_cpu = dryrun(str(LLAMA), args[:-1], env)
        on, on_cpu = dryrun(str(LLAMA), args, env)
        print(f"  dp {args[1]} mp {args[3]}: without {off:.0f} vs {without.get(tuple(args[:-1]), '-')}, with "
              f"{on:.0f} vs {run['used_peak_mb']}; CPU {off_cpu:.1f} / {on_cpu:.1f}")
    if "--7b" in sys.argv:
        env = {"RANK_SIZE": "8", "RANK_ID": "0"}
        off, off_cpu = dryrun(str(LLAMA), ["--dp", "8", "--mp", "1"], env)
        on, on_cpu = dryrun(str(LLAMA), ["--dp", "8", "--mp", "1", "--optimizer_shard"], env)
        print(f"Llama-2-7B seq 4096, rank 0 of dp 8, O2 loss-scale cell: used peak without {off:.0f} MiB, with "
              f"{on:.0f} MiB; CPU {off_cpu:.1f} / {on_cpu:.1f} s")


if __name__ == "__main__":
    main()
