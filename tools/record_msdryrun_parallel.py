"""Record real MindSpore 2.10's Ascend DryRun of the sharded scripts in tests/fixtures/msdryrun/ into
tests/fixtures/msdryrun/parallel_dryrun.json: per configuration, the per-rank peak memory lines and the
collectives of the first step's execute order (primitive, group ranks, shapes).

Needs an installed MindSpore 2.10 and the stub CANN of /work/shared/msdryrun/make_fakecann.sh (never a
dependency of ascendemu; CI reads the JSON):
    python tools/record_msdryrun_parallel.py /work/msvenv/bin/python /tmp/fakecann [--single]
It also records the single-device scripts of SINGLE into single_dryrun.json (only those with --single), and
with --opt-shard only OPT_SHARD and LLAMA_OPT_SHARD (optimizer parallel) into opt_shard_dryrun.json, with
--llama only the Llama of examples/llama/dryrun_7b.py (LLAMA: small shapes and two at Llama-2-7B's width, one rank of 8, jit O0, the
plain training cell) into llama_dryrun.json: the peak lines plus memory_block.csv summed by what the blocks
hold (weights, optimizer states, and at the peak the live kernel outputs by scope) and the peak before the
optimizer's first kernel (the network's own: forward activations and gradients). With --tracker-sample only
the head of the memory tracker's two files of one single-device run (MS_ALLOC_CONF=memory_tracker:True); with
--oversize only what MindSpore's DryRun does with a strategy over its memory size (oversize_dryrun.json). With
--data-parallel only DATA_PARALLEL (ParallelMode.DATA_PARALLEL, nn.DistributedGradReducer) into
data_parallel_dryrun.json: the peak lines, memory_block.csv summed by holder (weights, Momentum's moments,
gradients, the AllReduce kernels' input and output blocks, what is live at the peak), each AllReduce kernel's
blocks, the first step's collectives and the kernels of execute_order.csv (any Concat/Split/Slice copies).
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
# optimizer parallel (enable_parallel_optimizer): with --opt-shard, into opt_shard_dryrun.json
OPT_SHARD = [("mlp_opt_shard.py", 4, 1, {"DP": "2", "MP": "2"}), ("mlp_opt_shard.py", 8, 5, {"DP": "4", "MP": "2"}),
             ("mlp_opt_shard.py", 8, 5, {"DP": "4", "MP": "2", "SHARD_SIZE": "2", "OPT": "adam"}),
             ("mlp_opt_shard.py", 8, 5, {"DP": "8", "MP": "1", "OPT": "adam"}),
             ("mlp_opt_shard.py", 8, 5, {"DP": "8", "MP": "1", "THRESHOLD": "0"})]
# and the Llama of LLAMA with --optimizer_shard (MindFormers' enable_parallel_optimizer, threshold 64 KB)
LLAMA_OPT_SHARD = [(8, 1, 2, 1024, 8, 1024), (2, 4, 2, 1024, 8, 1024)]
# pipeline parallel (pipeline_stages): with --pipeline, into pipeline_dryrun.json, with memory_block.csv's summary
PIPELINE = [("mlp_pipeline.py", 2, 0, {"PP": "2", "MICRO": "4"}), ("mlp_pipeline.py", 2, 1, {"PP": "2", "MICRO": "4"}),
            ("mlp_pipeline.py", 4, 1, {"DP": "2", "PP": "2", "MICRO": "4"}),
            ("mlp_pipeline.py", 8, 6, {"DP": "2", "MP": "2", "PP": "2", "MICRO": "4"})]
# pure data parallel (DATA_PARALLEL, gradients_mean, DistributedGradReducer): with --data-parallel, into
# data_parallel_dryrun.json, memory_block.csv summed by holder (data_parallel_blocks) and the kernels around the
# AllReduces; FUSION none (MindSpore's default) or layers (all_reduce_fusion_config: one fused AllReduce per layer)
DATA_PARALLEL = [("mlp_data_parallel.py", 8, 0, {"FUSION": "none"}),
                 ("mlp_data_parallel.py", 8, 0, {"FUSION": "layers"})]
# memory_block.csv's name prefix of Momentum's moment Parameters; kernels that copy around a fused collective
MOMENTUM_STATE_PREFIX = "moments."
COPY_KERNEL = re.compile(r"/(Concat|Split|SplitV|Slice|StridedSlice|TensorMove|Reshape|Flatten)-op\d+$")
PEAK = re.compile(r"(Used peak memory usage \(without fragments\)|Actual peak memory usage \(with fragments\)): (\d+)M")


LLAMA_SCRIPT = FIXTURES.parents[2] / "examples" / "llama" / "dryrun_7b.py"
# (dp, mp, num_layers, hidden_size, num_heads, seq_length): one rank (RANK_ID 0) of RANK_SIZE=dp*mp; ~1 min each
LLAMA = [(8, 1, 2, 1024, 8, 1024), (1, 8, 2, 1024, 8, 1024), (2, 4, 2, 1024, 8, 1024),
         (2, 4, 2, 2048, 16, 2048),
         # Llama-2-7B's width, heads and sequence (two of its 32 layers: MindSpore's DryRun initialises every weight
         # on the host, ~85 s and ~2 GB of RSS each), at two of issue 24's three 8-rank configurations
         (8, 1, 2, 4096, 32, 4096), (1, 8, 2, 4096, 32, 4096)]
# and pipeline parallel: (dp, mp, num_layers, hidden_size, num_heads, seq_length, pp, micro_batch_num), rank 0 of
# dp*mp*pp (stage 0: the embedding and layer 0; _TrainGradAccuStepCell's accu_grads and their zeros)
LLAMA_PIPELINE = [(1, 1, 2, 1024, 8, 1024, 2, 2), (2, 2, 2, 4096, 32, 4096, 2, 4)]     # the second: issue 24's (2,2,2)
MB = 2 ** 20
# --keep DIR: also copy each Llama run's memory_block.csv into DIR
KEEP_FLAG = "--keep"
# memory_block.csv's name prefixes of AdamWeightDecay's moment Parameters
OPTIMIZER_STATE_PREFIXES = ("adam_m.", "adam_v.")

# --tracker-sample: the memory tracker's two files of one single-device run, their first lines, into
# TRACKER_SAMPLE (tests/test_memory_tracker.py checks ours has MindSpore's columns)
TRACKER_FLAG = "--tracker-sample"
TRACKER_SAMPLE = FIXTURES / "memory_tracker_sample"
TRACKER_SAMPLE_LINES = 12

# --oversize: the Llama of llama_dryrun.json's first run (1510 MB) under max_device_memory=1GB, into
# oversize_dryrun.json: MindSpore's DryRun neither fails nor warns, it prints a peak above its memory size
OVERSIZE_FLAG, OVERSIZE_SCRIPT, OVERSIZE_LIMIT = "--oversize", "llama_max_memory.py", "1GB"
MEMORY_LINE = re.compile(r"^(Device MOC memory size|MindSpore Used memory size|Used peak memory usage \(without "
                         r"fragments\)|Actual peak memory usage \(with fragments\)): (\d+)M", re.M)

# single-device scripts (no init(), no collectives): their peaks go to single_dryrun.json
SINGLE = ["mlp_momentum.py", "cnn_adam.py"]


def dryrun_output(python: str, cann: Path, script: str, cwd: str, env: dict[str, str],
                  args: list[str] | None = None) -> tuple[int, str]:
    """Run ``script`` under MindSpore's DryRun in ``cwd``: its return code and everything it printed."""
    env = {**os.environ, **env, "MS_SIMULATION_LEVEL": "1", "ASCEND_HOME_PATH": str(cann / "latest"),
           "LD_LIBRARY_PATH": str(cann / "latest" / "lib64"), "PYTHONPATH": str(cann / "python")}
    proc = subprocess.run([python, str(FIXTURES / script), *(args or [])], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def peaks_of(python: str, cann: Path, script: str, cwd: str, env: dict[str, str],
             args: list[str] | None = None) -> dict[str, int]:
    """Run ``script`` under MindSpore's DryRun in ``cwd``; its two peak lines (MB)."""
    returncode, text = dryrun_output(python, cann, script, cwd, env, args)
    peaks = {name: int(mb) for name, mb in PEAK.findall(text)}
    if returncode != 0 or len(peaks) != 2:
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


def record_llama(python: str, cann: Path, dp: int, mp: int, layers: int, hidden: int, heads: int, seq: int,
                 pp: int = 1, micro: int = 1, extra: tuple[str, ...] = ()) -> dict:
    args = ["--dp", str(dp), "--mp", str(mp), "--num_layers", str(layers), "--hidden_size", str(hidden),
            "--num_heads", str(heads), "--seq_length", str(seq), "--jit_level", "O0", "--train_cell", "plain", *extra]
    if pp > 1:
        args += ["--pp", str(pp), "--micro_batch_num", str(micro)]
    with tempfile.TemporaryDirectory() as tmp:
        peaks = peaks_of(python, cann, str(LLAMA_SCRIPT), tmp, {"RANK_SIZE": str(dp * mp * pp), "RANK_ID": "0",
                                                                "MS_ALLOC_CONF": "memory_tracker:True"}, args)
        blocks = memory_blocks_summary(Path(tmp) / "rank_0" / "memory_block.csv")
        if KEEP_FLAG in sys.argv:      # keep the csv for a closer look
            keep = Path(sys.argv[sys.argv.index(KEEP_FLAG) + 1]) / f"dp{dp}_mp{mp}_h{hidden}_s{seq}.csv"
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_bytes((Path(tmp) / "rank_0" / "memory_block.csv").read_bytes())
    return {"args": args, "rank_size": dp * mp * pp, "rank_id": 0,
            "used_peak_mb": peaks["Used peak memory usage (without fragments)"],
            "actual_peak_mb": peaks["Actual peak memory usage (with fragments)"], "memory_blocks": blocks}


def record_single(python: str, cann: Path, script: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        peaks = peaks_of(python, cann, script, tmp, {"RANK_SIZE": "1", "RANK_ID": "0"})
    return {"script": script, "used_peak_mb": peaks["Used peak memory usage (without fragments)"],
            "actual_peak_mb": peaks["Actual peak memory usage (with fragments)"]}


def record_tracker_sample(python: str, cann: Path, script: str) -> None:
    """MS_ALLOC_CONF=memory_tracker:True on ``script``: the head of rank_0/memory_block.csv and task.csv."""
    with tempfile.TemporaryDirectory() as tmp:
        peaks_of(python, cann, script, tmp, {"RANK_SIZE": "1", "RANK_ID": "0",
                                             "MS_ALLOC_CONF": "memory_tracker:True"})
        TRACKER_SAMPLE.mkdir(parents=True, exist_ok=True)
        for name in ("memory_block.csv", "task.csv"):
            found = sorted(Path(tmp).rglob(name))         # without init() MindSpore names no rank directory
            if not found:
                raise SystemExit(f"{script}: MindSpore wrote no {name} under {tmp}")
            lines = found[0].read_text().splitlines(keepends=True)
            (TRACKER_SAMPLE / name).write_text("".join(lines[:TRACKER_SAMPLE_LINES]))


def record_oversize(python: str, cann: Path) -> dict:
    """OVERSIZE_SCRIPT on a device limited below its peak: MindSpore's return code and its memory lines."""
    with tempfile.TemporaryDirectory() as tmp:
        returncode, text = dryrun_output(python, cann, OVERSIZE_SCRIPT, tmp, {"RANK_SIZE": "8", "RANK_ID": "0",
                                                                            "MAX_DEVICE_MEMORY": OVERSIZE_LIMIT})
    return {"script": OVERSIZE_SCRIPT, "rank_size": 8, "rank_id": 0, "max_device_memory": OVERSIZE_LIMIT,
            "returncode": returncode, "lines": {name: int(mb) for name, mb in MEMORY_LINE.findall(text)},
            "errors": [line for line in text.splitlines() if "memory" in line.lower() and "[ERROR]" in line]}


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


def record_pipeline(python: str, cann: Path, script: str, size: int, rank: int, extra: dict[str, str]) -> dict:
    """``record`` of a pipeline configuration, plus its memory_block.csv summed (``memory_blocks_summary``)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**extra, "RANK_SIZE": str(size), "RANK_ID": str(rank), "MS_ALLOC_CONF": "memory_tracker:True"}
        peaks = peaks_of(python, cann, script, tmp, env)
        with open(Path(tmp) / f"rank_{rank}" / "execute_order" / "comm_execute_order.csv") as f:
            rows = list(csv.DictReader(f))
        blocks = memory_blocks_summary(Path(tmp) / f"rank_{rank}" / "memory_block.csv")
    return {"script": script, "rank_size": size, "rank_id": rank, "env": extra,
            "used_peak_mb": peaks["Used peak memory usage (without fragments)"],
            "actual_peak_mb": peaks["Actual peak memory usage (with fragments)"], "memory_blocks": blocks,
            "step_collectives": [{"primitive": r["primitive"], "ranks": [int(x) for x in r["comm_rank"].split()],
                                  "src_rank": r["src_rank"], "dest_rank": r["dest_rank"],
                                  "input_shape": r["input_shape"], "output_shape": r["output_shape"]} for r in rows]}


def _tasks_of(path: Path) -> dict[int, str]:
    """task.csv: the node each time stamp ran (``Default/grad_reducer-DistributedGradReducer/AllReduce-op2``)."""
    with open(path) as f:
        return {int(r["time_stamp"]): r["node_name"] for r in csv.DictReader(f)}


def _users(row: dict) -> list[int]:
    """The time stamps of the tasks that read a memory_block.csv block (``{64-195}``)."""
    return [int(x) for x in row["user_tasks"].strip("{}").split("-") if x]


def data_parallel_blocks(rank_dir: Path) -> dict:
    """memory_block.csv and task.csv of a data-parallel run summed by holder (MB): weights, Momentum's moments,
    the gradients (the blocks an AllReduce reads), the AllReduce kernels' output blocks and the 1/degree Muls'
    (DistributedGradReducer's mean), and the blocks live at the peak by holder; plus each AllReduce kernel's
    input and output blocks (sizes, and whether MindSpore allocated them as ContinuousMemory)."""
    with open(rank_dir / "memory_block.csv") as f:
        rows = list(csv.DictReader(f))
    tasks = _tasks_of(rank_dir / "task.csv")

    def producer(r: dict) -> str:     # the block's task (``25_Default/AllReduce-op1``) without its index
        return re.sub(r"^\d+_", "", r["task_name"])

    def holder(r: dict) -> str:
        if r["type"] == "Weight":
            return "optimizer_states" if r["node_name"].startswith(MOMENTUM_STATE_PREFIX) else "weights"
        if r["type"] == "ConstantValue":
            return "constants"
        if "HostDSActor" in r["node_name"]:
            return "inputs"
        if any("AllReduce" in tasks.get(t, "") for t in _users(r)):
            return "allreduce_inputs"
        name = producer(r)
        return ("allreduce_outputs" if "AllReduce" in name else "mean_mul_outputs" if "grad_reducer" in name
                else "backward" if name.startswith("Gradients") else "optimizer" if "optimizer" in name
                else "forward" if name.startswith("Default/network") else "other")

    def total(kind: str) -> float:
        return round(sum(int(r["size"]) for r in rows if holder(r) == kind) / MB, 2)

    deltas: dict[int, int] = {}
    for r in rows:
        deltas[int(r["start_time_stamp"])] = deltas.get(int(r["start_time_stamp"]), 0) + int(r["size"])
        deltas[int(r["end_time_stamp"])] = deltas.get(int(r["end_time_stamp"]), 0) - int(r["size"])
    live, peak = 0, (0, 0)
    for t in sorted(deltas):
        live += deltas[t]
        peak = max(peak, (live, t))
    at_peak: dict[str, float] = {}
    for r in rows:
        if int(r["start_time_stamp"]) <= peak[1] < int(r["end_time_stamp"]):
            at_peak[holder(r)] = at_peak.get(holder(r), 0.0) + int(r["size"]) / MB
    allreduces = []
    for t, name in sorted(tasks.items()):
        if "AllReduce" in name:
            inputs = [r for r in rows if t in _users(r)]
            outputs = [r for r in rows if producer(r) == name]
            allreduces.append({"kernel": name, "input_sizes": [int(r["size"]) for r in inputs],
                               "output_sizes": [int(r["size"]) for r in outputs],
                               "continuous": all(r["type"] == "ContinuousMemory" for r in inputs + outputs)})
    return {"weights_mb": total("weights"), "optimizer_states_mb": total("optimizer_states"),
            "constants_mb": total("constants"), "inputs_mb": total("inputs"),
            "gradients_mb": total("allreduce_inputs"), "allreduce_outputs_mb": total("allreduce_outputs"),
            "mean_mul_outputs_mb": total("mean_mul_outputs"),
            "max_actual_used_mb": round(max(int(r["actual_used_memory"]) for r in rows) / MB, 2),
            "max_actual_peak_mb": round(max(int(r["actual_peak_memory"]) for r in rows) / MB, 2),
            "peak_mb": round(peak[0] / MB, 2), "peak_task": tasks.get(peak[1], ""),
            "peak_live_mb": {k: round(v, 2) for k, v in sorted(at_peak.items())}, "allreduces": allreduces}


def record_data_parallel(python: str, cann: Path, script: str, size: int, rank: int, extra: dict[str, str]) -> dict:
    """``record`` of a data-parallel configuration, plus ``data_parallel_blocks`` and execute_order.csv's kernels
    (``Name-opN@stream``, the streams' StreamSend/StreamRecv left out) and its copy kernels (COPY_KERNEL)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**extra, "RANK_SIZE": str(size), "RANK_ID": str(rank), "MS_ALLOC_CONF": "memory_tracker:True"}
        peaks = peaks_of(python, cann, script, tmp, env)
        order = Path(tmp) / f"rank_{rank}" / "execute_order"
        with open(order / "comm_execute_order.csv") as f:
            comms = list(csv.DictReader(f))
        with open(order / "execute_order.csv") as f:
            kernels = [(r["node_name"], r["stream_id"]) for r in csv.DictReader(f)]
        blocks = data_parallel_blocks(Path(tmp) / f"rank_{rank}")
    return {"script": script, "rank_size": size, "rank_id": rank, "env": extra,
            "used_peak_mb": peaks["Used peak memory usage (without fragments)"],
            "actual_peak_mb": peaks["Actual peak memory usage (with fragments)"], "memory_blocks": blocks,
            "step_collectives": [{"primitive": r["primitive"], "ranks": [int(x) for x in r["comm_rank"].split()],
                                  "input_shape": r["input_shape"], "output_shape": r["output_shape"],
                                  "output_type": r["output_type"], "input_size": int(r["input_size"]),
                                  "output_size": int(r["output_size"])} for r in comms],
            "copy_kernels": [name for name, _ in kernels if COPY_KERNEL.search(name)],
            "execute_order": [f"{name.rsplit('/', 1)[-1]}@{stream}" for name, stream in kernels
                              if not name.rsplit("/", 1)[-1].startswith(("StreamSend", "StreamRecv"))]}


def main() -> None:
    python, cann = sys.argv[1], Path(sys.argv[2])
    version = subprocess.run([python, "-c", "import mindspore; print(mindspore.__version__)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    if OVERSIZE_FLAG in sys.argv[3:]:
        run = record_oversize(python, cann)
        (FIXTURES / "oversize_dryrun.json").write_text(json.dumps({"mindspore": version, "runs": [run]}, indent=1) +
                                                       "\n")
        print(run)
        return
    if TRACKER_FLAG in sys.argv[3:]:
        record_tracker_sample(python, cann, SINGLE[0])
        return
    if "--llama" in sys.argv[3:]:
        runs = [record_llama(python, cann, *config) for config in LLAMA + LLAMA_PIPELINE]
        (FIXTURES / "llama_dryrun.json").write_text(json.dumps({"mindspore": version, "runs": runs}, indent=1) + "\n")
        for r in runs:
            print(" ".join(r["args"]), r["used_peak_mb"], r["actual_peak_mb"], r["memory_blocks"])
        return
    if "--opt-shard" in sys.argv[3:]:
        runs = [record(python, cann, *config) for config in OPT_SHARD]
        llama = [record_llama(python, cann, *config, extra=("--optimizer_shard",)) for config in LLAMA_OPT_SHARD]
        (FIXTURES / "opt_shard_dryrun.json").write_text(json.dumps({"mindspore": version, "runs": runs, "llama": llama},
                                                                   indent=1) + "\n")
        for r in llama:
            print(" ".join(r["args"]), r["used_peak_mb"], r["actual_peak_mb"], r["memory_blocks"])
        for r in runs:
            print(r["script"], r["env"], r["used_peak_mb"], r["actual_peak_mb"], len(r["step_collectives"]))
        return
    if "--data-parallel" in sys.argv[3:]:
        runs = [record_data_parallel(python, cann, *config) for config in DATA_PARALLEL]
        (FIXTURES / "data_parallel_dryrun.json").write_text(json.dumps({"mindspore": version, "runs": runs},
                                                                       indent=1) + "\n")
        for r in runs:
            print(r["env"], r["used_peak_mb"], r["actual_peak_mb"], len(r["step_collectives"]), r["copy_kernels"],
                  r["memory_blocks"])
        return
    if "--pipeline" in sys.argv[3:]:
        runs = [record_pipeline(python, cann, *config) for config in PIPELINE]
        (FIXTURES / "pipeline_dryrun.json").write_text(json.dumps({"mindspore": version, "runs": runs}, indent=1) + "\n")
        for r in runs:
            print(r["env"], r["rank_id"], r["used_peak_mb"], r["actual_peak_mb"], r["memory_blocks"])
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
