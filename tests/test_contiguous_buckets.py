"""A fused gradient AllReduce reads and writes contiguous blocks (graph.passes.contiguous_buckets), as real
MindSpore 2.10's does. Oracles: MindSpore's DryRun of tests/fixtures/msdryrun/mlp_data_parallel.py with
FUSION=layers (data_parallel_dryrun.json: each fused AllReduce's input and output blocks from its
memory_block.csv, its execute order: no Concat or Slice, a mean Mul per gradient), bytes computed by hand
(a part is the pool block a malloc of it takes: 32-B rounding + 32 B, then 512-B blocks), and for the
numerics a single-device training step (a world of one reduces nothing: every bit must be the same)."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.graph.graph_cache import check_compiled
from ascendemu.graph.ir import Graph
from ascendemu.graph.plan import CompiledGraph, compile_graph
from ascendemu.kernels.signature import TensorDesc

MSDRYRUN = Path(__file__).parent / "fixtures" / "msdryrun"
LAYERS = next(r for r in json.loads((MSDRYRUN / "data_parallel_dryrun.json").read_text())["runs"]
              if r["env"] == {"FUSION": "layers"})


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "RANK", "PYTEST_"))}
    return {**env, **extra}


def test_each_fused_allreduce_reads_and_writes_mindspores_blocks(tmp_path):
    """Our DryRun's memory_block.csv: each AllReduce reads one block of the size MindSpore's ContinuousMemory
    blocks add up to (16777728 + 8704 B: a 2048 x 2048 weight and its bias) and writes one as large; the input
    block is allocated by the bucket's first gradient kernel, not by a copy; no Concat or Slice runs, and the
    mean is one Mul per gradient, as many as MindSpore's execute order runs after its first AllReduce."""
    shutil.copy(MSDRYRUN / LAYERS["script"], tmp_path)
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", LAYERS["script"]], cwd=tmp_path,
                          env=_env(FUSION="layers", RANK_SIZE="8", RANK_ID="0", MS_ALLOC_CONF="memory_tracker:True"),
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rank = tmp_path / "rank_0"
    with open(rank / "memory_block.csv") as f:
        blocks = list(csv.DictReader(f))
    with open(rank / "task.csv") as f:
        allreduces = [int(r["time_stamp"]) for r in csv.DictReader(f) if r["node_name"] == "all_reduce"]
    theirs = LAYERS["memory_blocks"]["allreduces"]
    assert len(allreduces) == len(theirs) == 4 and all(a["continuous"] for a in theirs)

    def users(row: dict) -> list[int]:
        return [int(x) for x in row["user_tasks"].strip("{}").split("-") if x]

    for t, want in zip(allreduces, theirs):
        read = [b for b in blocks if t in users(b) and int(b["producer_task"]) != t and b["type"] == "Kernel"]
        written = [b for b in blocks if int(b["producer_task"]) == t]
        assert [int(b["size"]) for b in read] == [sum(want["input_sizes"])] == [16777728 + 8704]
        assert [int(b["size"]) for b in written] == [sum(want["output_sizes"])]
        assert "_Gradients/" in read[0]["task_name"]          # allocated by the bucket's first gradient kernel
    with open(rank / "execute_order" / "execute_order.csv") as f:
        order = [r["node_name"] for r in csv.DictReader(f)]
    assert not [n for n in order if "/Concat-" in n or "/Slice-" in n]
    first = next(i for i, n in enumerate(LAYERS["execute_order"]) if n.startswith("AllReduce"))
    their_means = [n for n in LAYERS["execute_order"][first:] if n.startswith("Mul-")]
    assert len([n for n in order if "DistributedGradReducer/Mul-" in n]) == len(their_means) == 8


def _bucket_graph() -> tuple[Graph, list[int], list[int]]:
    """Two gradients (a (5, 3) product and a (7,) sum) flattened, concatenated, AllReduced and sliced back."""
    g = Graph("bucket")
    x = g.add_input(TensorDesc((4, 5), "float32"))
    y = g.add_input(TensorDesc((4, 3), "float32"))
    dw = g.add_node("MatMul", [x, y], {"transpose_a": True}).outputs[0]            # (5, 3)
    db = g.add_node("ReduceSum", [g.add_input(TensorDesc((2, 7), "float32"))], {"axis": (0,)}).outputs[0]
    flat = [g.add_node("Reshape", [v], {"shape": (-1,)}).outputs[0] for v in (dw, db)]
    cat = g.add_node("Concat", flat, {"axis": 0}).outputs[0]
    red = g.add_node("AllReduce", [cat], {"reduce_op": "sum", "group": "hccl_world_group"}).outputs[0]
    parts = [g.add_node("Slice", [red], {"begin": (0,), "size": (15,)}).outputs[0],
             g.add_node("Slice", [red], {"begin": (15,), "size": (7,)}).outputs[0]]
    g.outputs = [g.add_node("Neg", [p]).outputs[0] for p in parts]
    return g, [dw, db], parts


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_a_bucket_becomes_views_of_two_blocks_at_hand_computed_offsets(level):
    """60 B of dw take a 512-B pool block (64 B asked, 512-B blocks), so db starts at 512 and the block is
    512 + 28 B (the pool pads the last part when it allocates the block); the AllReduce reads and writes such
    blocks; the plan survives the graph cache's checks."""
    g, (dw, db), parts = _bucket_graph()
    c = compile_graph(g, level)
    ops = [k.signature.op for k in c.kernels]
    assert "Concat" not in ops and "Slice" not in ops and ops.count("AllReduce") == 1
    ar = next(k for k in c.kernels if k.signature.op == "AllReduce")
    sent, got = ar.inputs[0], ar.outputs[0]
    assert c.values[sent] == c.values[got] == TensorDesc(((512 + 28) // 4,), "float32")
    assert (c.root(dw), c.view_offsets[dw]) == (sent, 0) and (c.root(db), c.view_offsets[db]) == (sent, 512)
    assert [(c.root(p), c.view_offsets[p]) for p in parts] == [(got, 0), (got, 512)]
    check_compiled(CompiledGraph.from_json(c.to_json()), c.cache_name)
    if level == "O2":
        assert {sent, got} <= set(c.offsets) and dw not in c.offsets


def test_a_bucket_whose_output_is_read_whole_stays_a_copy():
    """A reader of the whole reduced buffer would read the padding between parts: the Concat stays."""
    g, _, _ = _bucket_graph()
    red = next(n for n in g.nodes if n.op == "AllReduce").outputs[0]
    g.outputs = g.outputs + [g.add_node("Neg", [red]).outputs[0]]
    assert "Concat" in [k.signature.op for k in compile_graph(g, "O0").kernels]


STEP = """
import os, sys
import numpy as np
import mindspore as ms
from mindspore import nn, Tensor
from mindspore.communication import init
ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": sys.argv[1]})
if sys.argv[2] == "dp":
    init()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True,
                                 all_reduce_fusion_config=[1, 3])
ms.set_seed(5)
net = nn.SequentialCell([nn.Dense(12, 20), nn.ReLU(), nn.Dense(20, 9), nn.ReLU(), nn.Dense(9, 4)])
step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
rng = np.random.default_rng(0)
x, y = rng.standard_normal((8, 12)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32)
for _ in range(3):
    step(Tensor(x), Tensor(y))
np.savez(sys.argv[3], *[p.asnumpy() for p in net.trainable_params()])
"""


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_fused_buckets_train_bit_for_bit_as_one_device(level, ascendemu_kernel_cache, tmp_path):
    """One rank of data parallel with fused buckets (3 buckets of a weight and its bias, contiguous): the
    AllReduce of a world of one and the mean's x 1.0 change no bit, so three Momentum steps leave every
    Parameter exactly as the single-device step does."""
    (tmp_path / "step.py").write_text(STEP)
    got = {}
    for mode in ("dp", "single"):
        proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "step.py", level, mode, f"{mode}.npz"],
                              cwd=tmp_path, env=_env(RANK_SIZE="1", RANK_ID="0",
                                                     MS_COMPILER_CACHE_PATH=str(ascendemu_kernel_cache)),
                              capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
        assert proc.returncode == 0, proc.stderr[-3000:]
        with np.load(tmp_path / f"{mode}.npz") as f:
            got[mode] = [f[k] for k in sorted(f.files, key=lambda k: int(k.split("_")[1]))]
    assert len(got["dp"]) == 6
    for a, b in zip(got["dp"], got["single"]):
        np.testing.assert_array_equal(a, b)
