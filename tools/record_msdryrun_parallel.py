"""Record real MindSpore 2.10's Ascend DryRun of the sharded scripts in tests/fixtures/msdryrun/ into
tests/fixtures/msdryrun/parallel_dryrun.json: per configuration, the per-rank peak memory lines and the
collectives of the first step's execute order (primitive, group ranks, shapes).

Needs an installed MindSpore 2.10 and the stub CANN of /work/shared/msdryrun/make_fakecann.sh (never a
dependency of ascendemu; CI reads the JSON):
    python tools/record_msdryrun_parallel.py /work/msvenv/bin/python /tmp/fakecann [--single]
It also records the single-device scripts of SINGLE into single_dryrun.json (only those with --single), and
with --llama only the Llama of examples/llama/dryrun_7b.py (LLAMA: small shapes, one rank of 8, jit O0, the
plain training cell) into llama_dryrun.json: the peak lines plus memory_block.csv summed by what the blocks
hold (weights, optimizer states, and at the peak the live kernel outputs by scope) and the peak before the
optimizer's first kernel (the network's own: forward activations and gradients).
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


LLAMA_SCRIPT = FIXTURES.parents[2] / "examples" / "llama" / "dryrun_7b.py"
# (dp, mp, num_layers, hidden_size, num_heads, seq_length): one rank (RANK_ID 0) of RANK_SIZE=dp*mp; ~1 min each
LLAMA = [(8, 1, 2, 1024, 8, 1024), (1, 8, 2, 1024, 8, 1024), (2, 4, 2, 1024, 8, 1024),
         (2, 4, 2, 2048, 16, 2048)]
MB = 2 ** 20
# --keep DIR: also copy each Llama run's memory_block.csv into DIR
KEEP_FLAG = "--keep"
# memory_block.csv's name prefixes of AdamWeightDecay's moment Parameters
OPTIMIZER_STATE_PREFIXES = ("adam_m.", "adam_v.")

# single-device scripts (no init(), no collectives): their peaks go to single_dryrun.json
SINGLE = ["mlp_momentum.py", "cnn_adam.py"]


def peaks_of(python: str, cann: Path, script: str, cwd: str, env: dict[str, str],
             args: list[str] | None = None) -> dict[str, int]:
    """Run ``script`` under MindSpore's DryRun in ``cwd``; its two peak lines (MB)."""
    env = {**os.environ, **env, "MS_SIMULATION_LEVEL": "1", "ASCEND_HOME_PATH": str(cann / "latest"),
           "LD_LIBRARY_PATH": str(cann / "latest" / "lib64"), "PYTHONPATH": str(cann / "python")}
    proc = subprocess.run([python, str(FIXTURES / script), *(args or [])], cwd=cwd, env=env, capture_output=True,
                          text=True,
                          timeout=600)
    text = proc.stdout + proc.stderr
    peaks = {name: int(mb) for name, mb in PEAK.findall(text)}
    if proc.returncode != 0 or len(peaks) != 2:
        raise SystemExit(f"{script} {env}: MindSpore's DryRun failed:\n{text[-3000:]}")
    return peaks


def _in_optimizer(node_name: str) -> bool:
    """A kernel of the optimizer's update: in its cell's scope, or one of the float32 Casts its per-Parameter
    function (AdamWeightDecay's _update_run_op) adds at the graph's top level (``Default/Cast-opN``)."""
    return "optimizer" in node_name or (node_name.startswith("Default/Cast") and node_name.count("/") == 1)


def memory_blocks_summary(path: Path) -> dict:
    """memory_block.csv (MS_ALLOC_CONF=memory_tracker:True) summed by what its blocks hold (MB): weights and
    optimizer states (persistent), and the blocks live at the peak and at the peak before the optimizer's first
    kernel, by scope (forward ``Default/network``, backward ``Gradients``, ``Default/optimizer``, other)."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    weights = [r for r in rows if r["type"] == "Weight"]
    states = sum(int(r["size"]) for r in weights if r["node_name"].startswith(OPTIMIZER_STATE_PREFIXES))
    deltas: dict[int, int] = {}
    for r in rows:
        deltas[int(r["start_time_stamp"])] = deltas.get(int(r["start_time_stamp"]), 0) + int(r["size"])
        deltas[int(r["end_time_stamp"])] = deltas.get(int(r["end_time_stamp"]), 0) - int(r["size"])
    optimizer_start = min((int(r["start_time_stamp"]) for r in rows if _in_optimizer(r["node_name"])),
                          default=max(deltas))
    live, peak, network = 0, (0, 0), (0, 0)
    for t in sorted(deltas):
        live += deltas[t]
        peak = max(peak, (live, t))
        if t < optimizer_start:
            network = max(network, (live, t))

    def by_scope(t: int) -> dict[str, float]:
        out: dict[str, float] = {}
        for r in rows:
            if r["type"] == "Kernel" and int(r["start_time_stamp"]) <= t < int(r["end_time_stamp"]):
                name = r["node_name"]
                scope = ("backward" if name.startswith("Gradients") else "optimizer" if _in_optimizer(name)
                         else "forward" if name.startswith("Default/network") else "other")
                out[scope] = out.get(scope, 0.0) + int(r["size"]) / MB
        return {k: round(v, 2) for k, v in sorted(out.items())}

    return {"weights_mb": round((sum(int(r["size"]) for r in weights) - states) / MB, 2),
            "optimizer_states_mb": round(states / MB, 2),
            "constants_mb": round(sum(int(r["size"]) for r in rows if r["type"] == "ConstantValue") / MB, 2),
            "peak_mb": round(peak[0] / MB, 2), "peak_kernel_outputs_mb": by_scope(peak[1]),
            "network_peak_mb": round(network[0] / MB, 2), "network_peak_kernel_outputs_mb": by_scope(network[1])}


def record_llama(python: str, cann: Path, dp: int, mp: int, layers: int, hidden: int, heads: int, seq: int) -> dict:
    args = ["--dp", str(dp), "--mp", str(mp), "--num_layers", str(layers), "--hidden_size", str(hidden),
            "--num_heads", str(heads), "--seq_length", str(seq), "--jit_level", "O0", "--train_cell", "plain"]
    with tempfile.TemporaryDirectory() as tmp:
        peaks = peaks_of(python, cann, str(LLAMA_SCRIPT), tmp, {"RANK_SIZE": str(dp * mp), "RANK_ID": "0",
                                                                "MS_ALLOC_CONF": "memory_tracker:True"}, args)
        blocks = memory_blocks_summary(Path(tmp) / "rank_0" / "memory_block.csv")
        if KEEP_FLAG in sys.argv:      # keep the csv for a closer look
            keep = Path(sys.argv[sys.argv.index(KEEP_FLAG) + 1]) / f"dp{dp}_mp{mp}_h{hidden}_s{seq}.csv"
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_bytes((Path(tmp) / "rank_0" / "memory_block.csv").read_bytes())
    return {"args": args, "rank_size": dp * mp, "rank_id": 0,
            "used_peak_mb": peaks["Used peak memory usage (without fragments)"],
            "actual_peak_mb": peaks["Actual peak memory usage (with fragments)"], "memory_blocks": blocks}


def record_single(python: str, cann: Path, script: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        peaks = peaks_of(python, cann, script, tmp, {"RANK_SIZE": "1", "RANK_ID": "0"})
    return {"script": script, "used_peak_mb": peaks["Used peak memory usage (without fragments)"],
            "actual_peak_mb": peaks["Actual peak memory usage (with fragments)"]}


def record(python: str, cann: Path, script: str, size: int, rank: int, extra: dict[str, str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        peaks = peaks_of(python, cann, script, tmp, {**extra, "RANK_SIZE": str(size), "RANK_ID": str(rank)})
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
    if "--llama" in sys.argv[3:]:
        runs = [record_llama(python, cann, *config) for config in LLAMA]
        (FIXTURES / "llama_dryrun.json").write_text(json.dumps({"mindspore": version, "runs": runs}, indent=1) + "\n")
        for r in runs:
            print(" ".join(r["args"]), r["used_peak_mb"], r["actual_peak_mb"], r["memory_blocks"])
        return
    singles = [record_single(python, cann, script) for script in SINGLE]
    (FIXTURES / "single_dryrun.json").write_text(json.dumps({"mindspore": version, "runs": singles}, indent=1) + "\n")
    if "--single" in sys.argv[3:]:
        return
    runs = [record(python, cann, *config) for config in CONFIGS]
    (FIXTURES / "parallel_dryrun.json").write_text(json.dumps({"mindspore": version, "runs": runs}, indent=1) + "\n")
    for r in runs:
        print(r["script"], r["env"], r["used_peak_mb"], r["actual_peak_mb"], len(r["step_collectives"]))


if __name__ == "__main__":
    main()
