"""Record real MindSpore 2.10's Ascend DryRun of the sharded scripts in tests/fixtures/msdryrun/ into
tests/fixtures/msdryrun/parallel_dryrun.json: per configuration, the per-rank peak memory lines and the
collectives of the first step's execute order (primitive, group ranks, shapes).

Needs an installed MindSpore 2.10 and the stub CANN of /work/shared/msdryrun/make_fakecann.sh (never a
dependency of ascendemu; CI reads the JSON):
    python tools/record_msdryrun_parallel.py /work/msvenv/bin/python /tmp/fakecann
"""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "msdryrun"
# (script, RANK_SIZE, RANK_ID, extra environment)
CONFIGS = [("mp_dryrun.py", 8, 3, {"MP": str(mp)}) for mp in (1, 2, 4, 8)] + \
          [("mlp_dp_mp.py", 4, 1, {"DP": "2", "MP": "2"}), ("mlp_dp_mp.py", 8, 5, {"DP": "2", "MP": "4"}),
           ("mlp_dp_mp.py", 8, 5, {"DP": "4", "MP": "2"}),
           ("relayout_dryrun.py", 8, 3, {"ALLTOALL": "0"}), ("relayout_dryrun.py", 8, 3, {"ALLTOALL": "1"})]
PEAK = re.compile(r"(Used peak memory usage \(without fragments\)|Actual peak memory usage \(with fragments\)): (\d+)M")


def record(python: str, cann: Path, script: str, size: int, rank: int, extra: dict[str, str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, **extra, "MS_SIMULATION_LEVEL": "1", "RANK_SIZE": str(size), "RANK_ID": str(rank),
               "ASCEND_HOME_PATH": str(cann / "latest"), "LD_LIBRARY_PATH": str(cann / "latest" / "lib64"),
               "PYTHONPATH": str(cann / "python")}
        proc = subprocess.run([python, str(FIXTURES / script)], cwd=tmp, env=env, capture_output=True, text=True,
                              timeout=600)
        text = proc.stdout + proc.stderr
        peaks = {name: int(mb) for name, mb in PEAK.findall(text)}
        if proc.returncode != 0 or len(peaks) != 2:
            raise SystemExit(f"{script} {extra}: MindSpore's DryRun failed:\n{text[-3000:]}")
        with open(Path(tmp) / f"rank_{rank}" / "execute_order" / "comm_execute_order.csv") as f:
            rows = list(csv.DictReader(f))
    comms = [{"primitive": r["primitive"], "ranks": [int(x) for x in r["comm_rank"].split()],
              "input_shape": r["input_shape"], "output_shape": r["output_shape"]} for r in rows]
    steps = 2 if script == "mp_dryrun.py" else 1
    return {"script": script, "rank_size": size, "rank_id": rank, "env": extra,
            "used_peak_mb": peaks["Used peak memory usage (without fragments)"],
            "actual_peak_mb": peaks["Actual peak memory usage (with fragments)"],
            "step_collectives": comms[:len(comms) // steps]}


def main() -> None:
    python, cann = sys.argv[1], Path(sys.argv[2])
    version = subprocess.run([python, "-c", "import mindspore; print(mindspore.__version__)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    runs = [record(python, cann, *config) for config in CONFIGS]
    (FIXTURES / "parallel_dryrun.json").write_text(json.dumps({"mindspore": version, "runs": runs}, indent=1) + "\n")
    for r in runs:
        print(r["script"], r["env"], r["used_peak_mb"], r["actual_peak_mb"], len(r["step_collectives"]))


if __name__ == "__main__":
    main()
