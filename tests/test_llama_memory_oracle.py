"""The Llama's per-rank DryRun memory (examples/llama/dryrun_7b.py, jit O0, the plain training cell, one rank of
8 under dp x mp) against real MindSpore 2.10's DryRun of the same script (tests/fixtures/msdryrun/
llama_dryrun.json, recorded with the stub CANN by ``tools/record_msdryrun_parallel.py --llama``: the peak lines
and memory_block.csv summed by what the blocks hold).

What is compared (docs/ARCHITECTURE.md, Llama memory vs MindSpore):
- the rank's weights and optimizer states (its shards: MindFormers' strategies as MindSpore splits them),
  within 1%;
- the whole-step used peak, within USED_TOLERANCE: at AdamWeightDecay's update of the largest float16 Parameter
  (the embedding), which MindSpore runs in float32 (4 casts in, 3 results: 7 x 4 bytes per element live at
  once) with the raw gradients freed and the reduced ones alive; or (dp 8) in the loss's backward, with the
  first updated Parameter's three float32 Casts already launched (passes.first_update_loads);
- what is live there: our update temporaries against MindSpore's optimizer kernel outputs at its peak, within 1%;
- the network's own peak (forward and backward, before the optimizer's first block), from our memory tracker's
  memory_block.csv read by the recorder's own reader, within NETWORK_TOLERANCE; and that file's peak is our
  used peak line.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from limits import SUBPROCESS_TIMEOUT_S

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from record_msdryrun_parallel import memory_blocks_summary  # noqa: E402  (how MindSpore's file is read)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "llama" / "dryrun_7b.py"
RUNS = json.loads((ROOT / "tests" / "fixtures" / "msdryrun" / "llama_dryrun.json").read_text())["runs"]
USED = re.compile(r"DryRun: Used peak memory usage \(without fragments\): ([\d.]+)M")
STEP = re.compile(r"step memory: weights ([\d.]+) (MiB|GiB) .*optimizer state ([\d.]+) (MiB|GiB)")
UPDATE = re.compile(r"update temporaries ([\d.]+) (B|KiB|MiB|GiB)")        # 0 B when the peak is the network's
MIB = {"B": 1 / 2 ** 20, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}
# weights and optimizer states: the same shards, to MindSpore's block rounding (512 B per block)
WEIGHTS_TOLERANCE = 0.01
# the whole-step used peak, issue 24's bound: measured +1.6% (dp 8: the backward's, with the embedding's three
# float32 update Casts launched as it starts, as MindSpore's), -0.1% (mp 8), -1.0% and -1.7% (dp 2 x mp 4: at the
# update), -0.2% (pp 2, stage 0, with its accu_grads and their zeros); at Llama-2-7B's width, heads and sequence
# (2 layers, h4096, s4096): +4.4% (dp 8, at the loss's backward: 9939 vs 9517 MB; ours also holds a SiLU gradient
# term, a rotary BatchMatMul and an attention Transpose there, 428 MB, not yet examined), -0.1% (mp 8), -0.4%
# (dp 2 x mp 2 x pp 2, stage 0)
USED_TOLERANCE = 0.05
# the network's peak (before the optimizer's first kernel): measured +10% (dp 8), +2% (mp 8), +6% and +6%
# (dp 2 x mp 4) over MindSpore's (was +4% / +13% / +17% / +19% with a one-hot CrossEntropyLoss, RmsNorm's saved
# float32 x * rstd, and a Slice backward per reader of the logits' redistribution)
NETWORK_TOLERANCE = 0.12
# pp 2's stage 0 (two micro-batches in 1F1B): measured +12.7% (676.1 vs 599.9 MB): the embedding gradient's
# UnsortedSegmentSum with its float32 workspace (125 MiB; MindSpore's DryRun lists no workspace block) at the
# backward's end; +23% before session 39 accumulated the micro-batches' gradients into accu_grads in place here too
# (RmsNorm's recomputed x * rstd had turned the in-place accumulation off); whole-step used peak -0.2%
PIPELINE_NETWORK_TOLERANCE = 0.15


def _dryrun(tmp: Path, run: dict) -> tuple[float, float, float, float]:
    """Our DryRun of the recorded run: used peak, weights, optimizer states, update temporaries at the peak (MiB);
    with the memory tracker's files under ``tmp``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "MS_COMPILER_CACHE"))}
    env.update(RANK_SIZE=str(run["rank_size"]), RANK_ID=str(run["rank_id"]), MS_ALLOC_CONF="memory_tracker:True")
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", str(SCRIPT), *run["args"]],
                          cwd=tmp, env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0 and "step done" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
    weights, wunit, states, sunit = STEP.findall(proc.stdout)[-1]
    update, uunit = UPDATE.findall(proc.stdout)[-1]
    return (float(USED.findall(proc.stdout)[-1]), float(weights) * MIB[wunit], float(states) * MIB[sunit],
            float(update) * MIB[uunit])


@pytest.mark.parametrize("run", RUNS, ids=lambda r: "-".join(r["args"][1:12:2]))
def test_llama_dryrun_memory_is_mindspores(run, tmp_path):
    ours, weights, states, update = _dryrun(tmp_path, run)
    blocks = run["memory_blocks"]
    theirs = run["used_peak_mb"]
    print(f"{run['args']}: ascendemu {ours:.1f} MiB, MindSpore {theirs} MB; weights {weights:.1f} vs "
          f"{blocks['weights_mb']}, states {states:.1f} vs {blocks['optimizer_states_mb']}, update {update:.1f} vs "
          f"{blocks['peak_kernel_outputs_mb']['optimizer']}")
    if "--pp" in run["args"]:      # _TrainGradAccuStepCell's accu_grads: MindSpore's Weight blocks, our states
        persistent = blocks["weights_mb"] + blocks["optimizer_states_mb"]
        assert abs(weights + states - persistent) <= WEIGHTS_TOLERANCE * persistent
    else:
        assert abs(weights - blocks["weights_mb"]) <= WEIGHTS_TOLERANCE * blocks["weights_mb"]
        assert abs(states - blocks["optimizer_states_mb"]) <= WEIGHTS_TOLERANCE * blocks["optimizer_states_mb"]
    assert abs(ours - theirs) <= USED_TOLERANCE * theirs
    assert update == pytest.approx(blocks["peak_kernel_outputs_mb"]["optimizer"], rel=0.01)
    tracked = memory_blocks_summary(tmp_path / f"rank_{run['rank_id']}" / "memory_block.csv")
    print(f"network: ascendemu {tracked['network_peak_mb']} MiB, MindSpore {blocks['network_peak_mb']} MB")
    assert tracked["peak_mb"] == pytest.approx(ours, abs=0.01)
    tolerance = PIPELINE_NETWORK_TOLERANCE if "--pp" in run["args"] else NETWORK_TOLERANCE
    assert abs(tracked["network_peak_mb"] - blocks["network_peak_mb"]) <= tolerance * blocks["network_peak_mb"]


OVERSIZE = json.loads((ROOT / "tests" / "fixtures" / "msdryrun" / "oversize_dryrun.json").read_text())["runs"][0]


def test_a_strategy_over_the_memory_limit_is_reported_as_mindspore_does(tmp_path):
    """MindSpore's DryRun of a step whose peak (1631 MB) is over its max_device_memory (1GB) completes and prints
    the whole peak, above its memory size, with no error (oversize_dryrun.json): ours too, the same peak."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "MS_COMPILER_CACHE"))}
    env.update(RANK_SIZE=str(OVERSIZE["rank_size"]), RANK_ID=str(OVERSIZE["rank_id"]),
               MAX_DEVICE_MEMORY=OVERSIZE["max_device_memory"])
    script = ROOT / "tests" / "fixtures" / "msdryrun" / OVERSIZE["script"]
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    theirs = OVERSIZE["lines"]
    assert OVERSIZE["returncode"] == 0 and proc.returncode == 0, proc.stderr[-3000:]
    ours = float(USED.findall(proc.stdout)[-1])
    assert theirs["Used peak memory usage (without fragments)"] > theirs["MindSpore Used memory size"]
    assert abs(ours - theirs["Used peak memory usage (without fragments)"]) <= USED_TOLERANCE * ours
