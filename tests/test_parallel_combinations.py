"""Issue 24's features combined (pipeline with recompute, with optimizer shard, with float16 casts of float32
weights) on a tiny DryRun (tests/fixtures/parallel_combinations.py), and ``mindspore.lazy_inline``.

Expectations are hand-computed: the 1F1B Send/Receive order of a 2-stage pipeline (as without recompute),
one recompute copy of each marked node per micro-batch, the optimizer shard's weight halves and one AllGather
per weight; lazy_inline against numpy and real MindSpore 2.10's recorded behaviour
(tools/record_lazy_inline.py -> tests/fixtures/lazy_inline.json)."""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, nn, ops

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCRIPT = FIXTURES / "parallel_combinations.py"
RECORDED = json.loads((FIXTURES / "lazy_inline.json").read_text())
sys.path.insert(0, str(FIXTURES))
from lazy_inline_cases import bad_calls, cells  # noqa: E402


def _dry_run(tmp: Path, rank: int, size: int, env: dict[str, str]) -> tuple[str, list[dict], list[dict]]:
    """One rank's DryRun of the fixture: its log, its collectives and its kernels in execution order."""
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", str(SCRIPT)], cwd=tmp,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RANK_SIZE": str(size), "RANK_ID": str(rank), **env})
    assert proc.returncode == 0 and "loss" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
    order = tmp / f"rank_{rank}" / "execute_order"
    with open(order / "comm_execute_order.csv") as f:
        comms = list(csv.DictReader(f))
    with open(order / "execute_order.csv") as f:
        kernels = list(csv.DictReader(f))
    return proc.stdout + proc.stderr, comms, kernels


@pytest.mark.parametrize("rank, pattern", [(0, "SSRSRSRR"), (1, "RSRSRSRS")])
def test_a_recomputed_pipeline_copies_per_micro_batch_and_keeps_its_1f1b_transfers(tmp_path, rank, pattern):
    """pp 2, 4 micro-batches of (8, 64) float16, every block recomputed: each stage sends and receives in 1F1B
    order as without recompute (the stage input's Receive is never copied), and each of its 2 blocks copies
    its 4 marked nodes (2 weight Casts, MatMul, ReLU; the block's output MatMul is kept) once per micro-batch:
    32 copies. Before the fix, the Casts CSE shares between micro-batches tied their backwards in a cycle,
    and stage 0 could not type another stage's float16 Cast of a float32 weight."""
    _, comms, kernels = _dry_run(tmp_path, rank, 2, {"PP": "2", "MICRO": "4", "RECOMPUTE": "1"})
    assert "".join(r["primitive"][0] for r in comms) == pattern
    assert {(r["input_shape"], r["input_type"]) for r in comms} == {("(8, 64)", "Float16")}
    assert sum(r["node_name"].startswith("recompute_") or "/recompute_" in r["node_name"] for r in kernels) == 32


@pytest.mark.parametrize("rank, group", [(0, "0 1"), (2, "2 3")])
def test_a_pipeline_with_optimizer_shard_and_recompute_gathers_each_weight_once(tmp_path, rank, group):
    """dp 2 x pp 2, the parallel optimizer at threshold 0 with recompute: a stage's 4 float32 (64, 64) weights
    (64 KiB), their momenta and accu_grads are stored halved over its 2 data-parallel ranks (32 KiB) and each is
    gathered once, (32, 64)
    float16 shards in the stage's group, as without recompute (MindSpore keeps the optimizer's AllGather out
    of recompute: parallel_optimizer_comm_recompute=False)."""
    text, comms, _ = _dry_run(tmp_path, rank, 4, {"PP": "2", "MICRO": "2", "SHARD": "1", "RECOMPUTE": "1"})
    assert re.search(r"step memory: weights 32\.00 KiB", text)
    # the stage's momenta and its own accu_grads (the cell clears them itself under optimizer parallel), each stored
    # as its weight, 32 KiB apiece, and the accu_grads' zeros: not the whole model's accu_grads unsliced on every
    # rank with as many zeros (160 KiB of states and 160 KiB of constants before)
    assert re.search(r"optimizer state 64\.01 KiB \(10 tensors\), constants 64\.0\d KiB", text)
    gathers = [r for r in comms if r["primitive"] == "AllGather"]
    assert [(r["comm_rank"], r["input_shape"], r["input_type"]) for r in gathers] == \
        [(group, "(32, 64)", "Float16")] * 4


class _Block(nn.Cell):
    def __init__(self, width: int, scale: float = 2.0):
        super().__init__()
        self.dense = nn.Dense(width, width, weight_init="ones", bias_init="zeros")
        self.scale = scale

    def construct(self, x):
        return ops.relu(self.dense(x)) * self.scale


class _LazyBlock(_Block):
    @ms.lazy_inline
    def __init__(self, width: int, scale: float = 2.0):
        super().__init__(width, scale)


class _Stack(nn.Cell):
    def __init__(self, block: type, layers: int):
        super().__init__()
        self.layers = nn.CellList([block(4) for _ in range(layers)])

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_a_lazy_inline_cell_computes_and_names_as_the_plain_one(mode, ex, restore_context):
    """Three layers of relu(x @ ones) * 2 on x = 0.1 * arange(8).reshape(2, 4): numpy's values, the same
    parameter names as the undecorated stack (MindSpore's lazy_inline changes compilation, not the cell)."""
    ms.set_context(mode=mode)
    x = (np.arange(8, dtype=np.float32).reshape(2, 4) * 0.1)
    expected = x
    for _ in range(3):
        expected = np.maximum(expected @ np.ones((4, 4), np.float32), 0) * 2
    plain, lazy = _Stack(_Block, 3), _Stack(_LazyBlock, 3)
    np.testing.assert_allclose(lazy(Tensor(x)).asnumpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(plain(Tensor(x)).asnumpy(), expected, rtol=1e-6)
    assert [p.name for p in lazy.get_parameters()] == [p.name for p in plain.get_parameters()]


def test_lazy_inline_sets_what_mindspore_sets():
    """cell_init_args and no_inline as real MindSpore 2.10 sets them, and the same object under
    mindspore.common."""
    Block, Front = cells(ms)
    assert (ms.lazy_inline is ms.common.lazy_inline) == RECORDED["same_object"]
    assert Block(4).cell_init_args == RECORDED["cell_init_args"]
    assert Block(4, scale=3).cell_init_args == RECORDED["keyword_cell_init_args"]
    assert Front().no_inline == RECORDED["front_no_inline"]
    assert [p.name for p in Block(4).get_parameters()] == RECORDED["parameter_names"]


def test_lazy_inline_refuses_what_mindspore_refuses():
    """Bad policy or attrs (at construction), a class or a method other than __init__ (at decoration):
    MindSpore's ValueError and message, with ascendemu's error code."""
    cases = bad_calls(ms)
    for name, call in cases.items():
        recorded = RECORDED["errors"][name]
        with pytest.raises(ValueError) as info:
            call()
        assert recorded["type"] == "ValueError" and recorded["message"] in str(info.value), name
        assert getattr(info.value, "code", None) is not None, name
