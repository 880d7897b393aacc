"""The Llama's per-rank DryRun memory (examples/llama/dryrun_7b.py, jit O0, the plain training cell, one rank of
8 under dp x mp) against real MindSpore 2.10's DryRun of the same script (tests/fixtures/msdryrun/
llama_dryrun.json, recorded with the stub CANN by ``tools/record_msdryrun_parallel.py --llama``: the peak lines
and memory_block.csv summed by what the blocks hold).

What is compared, and why not only the whole-step peak (docs/ARCHITECTURE.md, Llama memory vs MindSpore):
- the rank's weights and optimizer states (its shards: MindFormers' strategies as MindSpore splits them),
  within 1%;
- the peak of the network (forward and backward, before the optimizer's first kernel: weights, states,
  saved activations, gradients) against our used peak, within NETWORK_TOLERANCE;
- the whole-step used peak (ours 14-46% under): MindSpore's peak is in its AdamWeightDecay, which casts the
  largest float16 Parameter, its two moments and its gradient to float32 and computes three float32 results
  (7 x 4 bytes per element held at once, 875 MB for the 32000 x 1024 embedding) where our update is one
  in-place kernel in float16; the test checks that our weights and states plus these temporaries (plus at
  most the gradients still alive) make MindSpore's figure.
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

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "llama" / "dryrun_7b.py"
RUNS = json.loads((ROOT / "tests" / "fixtures" / "msdryrun" / "llama_dryrun.json").read_text())["runs"]
USED = re.compile(r"DryRun: Used peak memory usage \(without fragments\): ([\d.]+)M")
STEP = re.compile(r"step memory: weights ([\d.]+) (MiB|GiB) .*optimizer state ([\d.]+) (MiB|GiB)")
MIB = {"MiB": 1.0, "GiB": 1024.0}
# weights and optimizer states: the same shards, to MindSpore's block rounding (512 B per block)
WEIGHTS_TOLERANCE = 0.01
# the network's peak (forward + backward, before the optimizer): measured +4% (dp 8), +13% (mp 8), +17% and
# +19% (dp 2 x mp 4) over MindSpore's. What ours holds beyond it (docs/ARCHITECTURE.md): CrossEntropyLoss's
# float32 one-hot labels (2 casts) and the loss mask's gradient (2 blocks), computed at the step's start and
# held to the loss, each tokens/rank x vocabulary x 4 B, which MindSpore does not hold there; and our
# composite RmsNorm keeps x * rstd (float32) for its backward where MindSpore's RmsNormGrad reads x and rstd
NETWORK_TOLERANCE = 0.22
# MindSpore's AdamWeightDecay on a float16 Parameter holds 4 float32 casts (param, m, v, gradient) and 3
# float32 results at once: bytes per element of the Parameter
ADAM_FP32_TEMPORARY_BYTES = 7 * 4


def _dryrun(tmp: Path, run: dict) -> tuple[float, float, float]:
    """Our DryRun of the recorded run: used peak, weights and optimizer states (MiB)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "MS_COMPILER_CACHE"))}
    env.update(RANK_SIZE=str(run["rank_size"]), RANK_ID=str(run["rank_id"]))
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", str(SCRIPT), *run["args"]],
                          cwd=tmp, env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0 and "step done" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
    weights, wunit, states, sunit = STEP.findall(proc.stdout)[-1]
    return float(USED.findall(proc.stdout)[-1]), float(weights) * MIB[wunit], float(states) * MIB[sunit]


def _largest_parameter_elements(run: dict) -> int:
    """The embedding / lm_head (vocabulary x hidden) as the rank holds it: replicated with vocab_emb_dp."""
    args = dict(zip(run["args"][::2], run["args"][1::2]))
    return 32000 * int(args["--hidden_size"])


@pytest.mark.parametrize("run", RUNS, ids=lambda r: "-".join(r["args"][1:12:2]))
def test_llama_dryrun_memory_is_mindspores(run, tmp_path):
    ours, weights, states = _dryrun(tmp_path, run)
    blocks = run["memory_blocks"]
    theirs, network = run["used_peak_mb"], blocks["network_peak_mb"]
    print(f"{run['args']}: ascendemu {ours:.1f} MiB, MindSpore {theirs} MB (network {network} MB); weights "
          f"{weights:.1f} vs {blocks['weights_mb']}, states {states:.1f} vs {blocks['optimizer_states_mb']}")
    assert abs(weights - blocks["weights_mb"]) <= WEIGHTS_TOLERANCE * blocks["weights_mb"]
    assert abs(states - blocks["optimizer_states_mb"]) <= WEIGHTS_TOLERANCE * blocks["optimizer_states_mb"]
    assert abs(ours - network) <= NETWORK_TOLERANCE * network
    # MindSpore's whole-step peak is its optimizer's: our weights and states, the float32 temporaries of the
    # largest Parameter, and the gradients not yet consumed (at most one float16 copy of the weights)
    floor = weights + states + ADAM_FP32_TEMPORARY_BYTES * _largest_parameter_elements(run) / 2 ** 20
    assert floor <= theirs <= floor + weights + blocks["constants_mb"]
