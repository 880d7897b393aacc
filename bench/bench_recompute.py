"""Recompute's DryRun memory, ascendemu beside real MindSpore 2.10's (tests/fixtures/msdryrun/recompute_dryrun.json,
recorded by tools/record_msdryrun_recompute.py), and the CPU time each DryRun took here; ``--7b`` adds the
Llama-2-7B seq-4096 step on one rank of dp 1 x mp 8 (``--batch_size``, default 1) without and with recompute.

    python bench/bench_recompute.py [--7b] [--batch_size 4]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from dryrun_child import run_dryrun

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "msdryrun" / "recompute_dryrun.json"
LLAMA = ROOT / "examples" / "llama" / "dryrun_7b.py"


def dryrun(script: Path, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(used peak MiB, CPU seconds of the child) of ``ascendemu run --dry-run script args``."""
    child = run_dryrun(script, args, env)
    return child.used_mib, child.cpu_s


def main() -> None:
    runs = json.loads(FIXTURE.read_text())["runs"]
    print(f"{'run':44} {'ascendemu MiB':>14} {'MindSpore 1st step MB':>22} {'MindSpore reported MB':>22} {'CPU s':>6}")
    for r in runs:
        script = FIXTURE.parent / r["script"] if r["script"] == "mlp_recompute.py" else LLAMA
        used, cpu = dryrun(script, r["args"], r["env"])
        label = f"{r['script']} {r['env'] or ' '.join(r['args'][-2:])}"
        print(f"{label:44} {used:14.1f} {r['first_step_peak_mb']:22.1f} {r['used_peak_mb']:22d} {cpu:6.1f}")
    if "--7b" in sys.argv:
        batch = sys.argv[sys.argv.index("--batch_size") + 1] if "--batch_size" in sys.argv else "1"
        for mode in ("none", "full", "select"):
            used, cpu = dryrun(LLAMA, ["--dp", "1", "--mp", "8", "--batch_size", batch, "--recompute", mode],
                               {"RANK_SIZE": "8", "RANK_ID": "0"})
            print(f"{'Llama-2-7B seq 4096 mp8 batch ' + batch + ' recompute ' + mode:44} {used:14.1f} "
                  f"{'-':>22} {'-':>22} {cpu:6.1f}")


if __name__ == "__main__":
    main()
