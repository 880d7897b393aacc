"""Pipeline parallel's DryRun memory per rank, ascendemu beside real MindSpore 2.10's
(tests/fixtures/msdryrun/pipeline_dryrun.json, tools/record_msdryrun_parallel.py --pipeline): the used peak and
the kernel outputs live at it (MindSpore's DryRun also holds every other stage's Parameters), and the CPU time
of each DryRun here; ``--7b`` adds Llama-2-7B seq 4096 at dp 2 x mp 2 x pp 2 (4 micro-batches, plain cell),
first and last stage: used peak, CPU seconds and peak RSS of the child.

    python bench/bench_pipeline.py [--7b]
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from dryrun_child import run_dryrun

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "msdryrun" / "pipeline_dryrun.json"
LLAMA = ROOT / "examples" / "llama" / "dryrun_7b.py"
OUTPUTS = re.compile(r"node outputs at the peak ([\d.]+) (MiB|GiB)")


def dryrun(script: Path, args: list[str], env: dict[str, str]) -> tuple[float, float, float, float]:
    """(used peak MiB, node outputs at the peak MiB, CPU seconds, peak RSS MiB) of one child DryRun."""
    child = run_dryrun(script, args, {"MS_SIMULATION_LEVEL": "1", **env})
    value, unit = OUTPUTS.findall(child.log)[-1]
    return child.used_mib, float(value) * (1024 if unit == "GiB" else 1), child.cpu_s, child.rss_mib


def main() -> None:
    runs = json.loads(FIXTURE.read_text())["runs"]
    print(f"{'run':36} {'used MiB ours':>14} {'MindSpore MB':>13} {'transient ours':>15} {'MindSpore':>10} "
          f"{'CPU s':>6}")
    for r in runs:
        env = {**r["env"], "RANK_SIZE": str(r["rank_size"]), "RANK_ID": str(r["rank_id"])}
        used, outputs, cpu, _ = dryrun(FIXTURE.parent / r["script"], [], env)
        theirs = sum(r["memory_blocks"]["peak_kernel_outputs_mb"].values())
        label = f"{r['env']} rank {r['rank_id']}"
        print(f"{label:36} {used:14.1f} {r['used_peak_mb']:13d} {outputs:15.1f} {theirs:10.1f} {cpu:6.1f}")
    if "--7b" in sys.argv:
        for rank in ("0", "7"):
            used, outputs, cpu, rss = dryrun(LLAMA, ["--dp", "2", "--mp", "2", "--pp", "2", "--micro_batch_num", "4",
                                                     "--train_cell", "plain"], {"RANK_SIZE": "8", "RANK_ID": rank})
            print(f"Llama-2-7B (2,2,2) M=4 rank {rank}: used peak {used:.0f} MiB, node outputs {outputs:.0f} MiB, "
                  f"{cpu:.1f} CPU-s, peak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
