"""Semi-auto parallel (issue 24, item 3): ``Primitive.shard`` and the sharding pass (graph/parallel/).

Oracles: hand-computed layouts and groups; real MindSpore 2.10's Ascend DryRun of the same scripts
(tests/fixtures/msdryrun/parallel_dryrun.json, recorded by tools/record_msdryrun_parallel.py with the
stub CANN): the collectives of one training step, their kinds, groups and shapes, and how per-rank peak
memory falls as the weights are split; float64 numpy for a Megatron-style MLP trained 3 steps on 2 and
4 mpiexec ranks, and a one-device run for an embedding net (tests/fixtures/ranks/sap_worker.py).
"""
from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

import ascendemu.frontend as ms
from ascendemu.frontend import ops
from ascendemu.frontend.common import dtype as mstype
from ascendemu.frontend.common.initializer import DeferredFill, Normal
from ascendemu.frontend.parallel._sharding import SlicedFill
from ascendemu.graph.parallel.layout import Layout, LayoutError
from ascendemu.graph.parallel.rules import MatMulRule, ReduceRule, rule_for
from ascendemu.graph.parallel.strategy import ShardTypeError, StrategyError
from test_collectives import mpiexec, outside_mpi

FIXTURES = Path(__file__).parent / "fixtures"
MSDRYRUN = FIXTURES / "msdryrun"
RECORDED = json.loads((MSDRYRUN / "parallel_dryrun.json").read_text())["runs"]
WORKER = FIXTURES / "ranks" / "sap_worker.py"
PEAK = re.compile(r"DryRun: (Used peak memory usage \(without fragments\)|"
                  r"Actual peak memory usage \(with fragments\)): ([\d.]+)M")
# the one collective ascendemu runs and MindSpore does not: the backward of the loss's forward AllReduce
# (MindSpore differentiates it as the identity after a _VirtualDiv; here it is AllReduce's own rule after
# the sens is divided by the loss's copies: the same gradients, one 4-byte AllReduce more per step)
EXTRA_LOSS_GRAD = ("AllReduce", "()", "()")
# the registry's op is MindSpore's primitive AlltoAll; MindSpore's execute order names its kernel AllToAll
KERNEL_NAMES = {"AlltoAll": "AllToAll"}


# ---------------------------------------------------------------------------------------------- layouts
def test_layout_places_slices_on_ranks_row_major():
    # MatMul ((2, 1), (1, 2)) on 4 devices: device matrix (repeat 1, m 2, k 1, n 2); w is split on n
    w = Layout((1, 2, 1, 2), (2, 3))
    assert [w.coord(r) for r in range(4)] == [(0, 0, 0, 0), (0, 0, 0, 1), (0, 1, 0, 0), (0, 1, 0, 1)]
    assert w.local_shape((6, 8)) == (6, 4)
    assert w.slices(3, (6, 8)) == (slice(0, 6), slice(4, 8))
    assert w.replica_group(1) == (1, 3) and w.replicas == 2      # the dp ranks holding w's columns 4..7
    assert w.dim_group(2, 1) == (2, 3)                             # the mp ranks holding the other columns
    x = Layout((1, 2, 1, 2), (1, 2))
    assert not x.same(w) and x.same_dim(Layout((2, 2), (0, -1)), 0)
    with pytest.raises(LayoutError, match="not divisible"):
        Layout((4,), (0, -1)).local_shape((6, 8))


def test_matmul_rule_splits_transposed_operands_and_marks_partial_sums():
    # x (8, 6) split (dp=2, k=2); w given transposed, (n, k) = (4, 6) split (1, 2): partial sums over k
    plan = MatMulRule().plan(4, ((2, 2), (1, 2)), [(8, 6), (4, 6)], [(8, 4)], {"transpose_b": True}, [None, None],
                             "MatMul")
    assert [lay.local_shape(s) for lay, s in zip(plan.inputs, [(8, 6), (4, 6)])] == [(4, 3), (4, 3)]
    assert plan.outputs[0].local_shape((8, 4)) == (4, 4)
    assert plan.partial[0].axes == (2,) and plan.outputs[0].group(1, plan.partial[0].axes) == (0, 1)
    with pytest.raises(StrategyError, match="reduction dimension") as err:
        MatMulRule().plan(4, ((2, 2), (1, 2)), [(8, 6), (6, 4)], [(8, 4)], {}, [None, None], "MatMul")
    assert isinstance(err.value, RuntimeError)                 # MindSpore's parallel compiler raises RuntimeError
    with pytest.raises(StrategyError, match="divide the device number"):
        MatMulRule().plan(4, ((8, 1), (1, 1)), [(8, 6), (6, 4)], [(8, 4)], {}, [None, None], "MatMul")


def test_reduce_mean_over_a_split_batch_is_a_sum_of_shard_means():
    plan = ReduceRule().plan(8, ((8, 1),), [(16, 4)], [()], {"axis": (), "keep_dims": False}, [None], "ReduceMean")
    assert plan.partial[0].reduce_op == "sum" and plan.partial[0].mean == 8
    assert plan.outputs[0].replicas == 8                         # the loss: the same on all 8 ranks
    assert type(rule_for("Sub")).__name__ == "ElementwiseRule" and type(rule_for("Unique")).__name__ == "ReplicatedRule"


def test_shard_returns_the_primitive_and_checks_strategies_as_mindspore(ex):
    mm = ops.MatMul()
    assert mm.shard(((2, 1), (1, 4))) is mm
    assert repr(mm) == "Prim[MatMul]<in_strategy=((2, 1), (1, 4)), out_strategy=None>"
    assert isinstance(mm, ops.MatMul) and mm.in_strategy == ((2, 1), (1, 4))
    with pytest.raises(TypeError, match="in_strategy must be tuple type"):
        ops.ReLU().shard([(2, 1)])
    with pytest.raises(ShardTypeError, match="the value of strategy must be int type"):
        ops.ReLU().shard(((2, 1.0),))
    relu = ops.ReLU()
    assert relu.shard() is relu and relu.shard(((2, 1),))(ms.Tensor(np.array([[-1.0], [2.0]], np.float32))).asnumpy() \
        .tolist() == [[0.0], [2.0]]          # outside SEMI_AUTO_PARALLEL a strategy changes nothing (PyNative)


def test_an_abstract_weights_slice_is_the_slice_of_its_whole_fill():
    """Under DryRun a sliced Parameter stays abstract (its nbytes the slice's); once read, its values are
    the rows of the fill every rank draws with the same seeds."""
    whole = DeferredFill(Normal(), (8, 4), mstype.float32).pin()
    piece = SlicedFill(whole, (slice(4, 8), slice(0, 4)), (4, 4))
    assert piece.nbytes == 4 * 4 * 4 and piece.seeds == whole.seeds
    np.testing.assert_array_equal(piece.values(), whole.values()[4:8])


# ----------------------------------------------------------------- DryRun against real MindSpore's DryRun
def _dry_run(tmp: Path, run: dict) -> tuple[subprocess.CompletedProcess, list[tuple]]:
    shutil.copy(MSDRYRUN / run["script"], tmp / run["script"])
    env = {**outside_mpi(), **run["env"], "RANK_SIZE": str(run["rank_size"]), "RANK_ID": str(run["rank_id"])}
    env.pop("MS_COMPILER_CACHE_PATH", None)
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", run["script"]], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp / f"rank_{run['rank_id']}" / "execute_order" / "comm_execute_order.csv") as f:
        comms = [(KERNEL_NAMES.get(r["primitive"], r["primitive"]), tuple(int(x) for x in r["comm_rank"].split()),
                  r["input_shape"], r["output_shape"]) for r in csv.DictReader(f)]
    return proc, comms


@pytest.mark.parametrize("run", RECORDED, ids=lambda r: f"{r['script'][:-3]}-{r['rank_size']}-{r['env']}")
def test_dryrun_inserts_the_collectives_mindspore_inserts(run, tmp_path):
    """One step's collectives (kind, group ranks, shapes) are MindSpore's: the column-parallel input's
    AllGather over the mp group, the row-parallel AllReduce, the loss's AllReduce, the backward's, the
    gradient AllReduces over each Parameter's dp group, a re-split's AllGather (its backward's
    ReduceScatter) or AllToAll; plus the one documented extra."""
    proc, ours = _dry_run(tmp_path, run)
    steps = 2 if run["script"] == "mp_dryrun.py" else 1
    step = ours[:len(ours) // steps] if steps == 2 and ours[:len(ours) // 2] == ours[len(ours) // 2:] else ours
    theirs = Counter((c["primitive"], tuple(c["ranks"]), c["input_shape"], c["output_shape"])
                     for c in run["step_collectives"])
    world = tuple(range(run["rank_size"]))
    assert Counter(step) == theirs + Counter({(EXTRA_LOSS_GRAD[0], world, *EXTRA_LOSS_GRAD[1:]): 1})
    assert "Used peak memory usage (without fragments)" in proc.stdout


def test_dryrun_peak_memory_falls_with_model_parallel_as_mindspores(tmp_path):
    """Per-rank peak of mp_dryrun.py for MP = 1, 2, 4, 8: it falls as MindSpore's does; the weights per
    rank are the hand-computed slices (2 x 4096 x 4096 float32 / MP)."""
    ours, theirs = [], []
    for run in (r for r in RECORDED if r["script"] == "mp_dryrun.py"):
        work = tmp_path / run["env"]["MP"]
        work.mkdir()
        proc, _ = _dry_run(work, run)
        mp = int(run["env"]["MP"])
        assert f"weights {2 * 4096 * 4096 * 4 / mp / 2 ** 20:.2f} MiB (3 tensors)" in proc.stdout
        peaks = dict(PEAK.findall(proc.stdout))
        ours.append(float(peaks["Used peak memory usage (without fragments)"]))
        theirs.append(run["used_peak_mb"])
    assert ours == sorted(ours, reverse=True) and theirs == sorted(theirs, reverse=True)
    print("used peak MiB, MP=1,2,4,8: ascendemu", ours, "MindSpore", theirs)


# ------------------------------------------------------------------------------- numerics on real ranks
BATCH, D_IN, HIDDEN, D_OUT, STEPS, LR, MOMENTUM = 8, 6, 8, 4, 3, 0.1, 0.9


def _reference() -> tuple[list[float], np.ndarray, np.ndarray]:
    """The worker's MLP on one device in float64: MSE loss, Momentum (accum = m * accum + g; w -= lr * accum)."""
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((BATCH, D_IN)).astype(np.float32), rng.standard_normal((BATCH, D_OUT)).astype(np.float32)
    w1 = (rng.standard_normal((D_IN, HIDDEN)) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, D_OUT)) * 0.5).astype(np.float32)
    x, y, w1, w2 = (a.astype(np.float64) for a in (x, y, w1, w2))
    v1, v2, losses = np.zeros_like(w1), np.zeros_like(w2), []
    for _ in range(STEPS):
        h = x @ w1
        a = np.maximum(h, 0)
        d = a @ w2 - y
        losses.append(float((d ** 2).mean()))
        do = 2 * d / d.size
        g2, g1 = a.T @ do, x.T @ ((do @ w2.T) * (h > 0))
        v1, v2 = v1 * MOMENTUM + g1, v2 * MOMENTUM + g2
        w1, w2 = w1 - LR * v1, w2 - LR * v2
    return losses, w1, w2


def test_megatron_mlp_on_2_and_4_ranks_trains_as_one_device(tmp_path, ascendemu_kernel_cache):
    """Column- then row-parallel MatMuls, mp=2 on 2 ranks (full_batch) and dp=2 x mp=2 on 4 ranks (each
    rank fed its own rows): every rank prints the single-device losses, and holds its slice of the
    single-device weights (w1's columns, w2's rows, by its mp index); likewise with an AlltoAll re-split."""
    losses, w1, w2 = _reference()
    for dp, mp, full_batch in ((1, 2, "1"), (2, 2, "0")):
        ranks = _ranks(tmp_path, ascendemu_kernel_cache, dp, mp, full_batch, "mlp")
        for rank, result in ranks.items():
            np.testing.assert_allclose(result["losses"], losses, rtol=2e-6)
            cols = HIDDEN // mp * (rank % mp)
            np.testing.assert_allclose(result["w1"], w1[:, cols:cols + HIDDEN // mp], rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(result["w2"], w2[cols:cols + HIDDEN // mp], rtol=1e-5, atol=1e-6)
    # the same MLP, w1 split 4 ways by columns and the ReLU by rows: an AlltoAll re-splits (enable_alltoall)
    for rank, result in _ranks(tmp_path, ascendemu_kernel_cache, 2, 2, "1", "relayout").items():
        np.testing.assert_allclose(result["losses"], losses, rtol=2e-6)
        np.testing.assert_allclose(result["w1"], w1[:, 2 * rank:2 * rank + 2], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(result["w2"], w2, rtol=1e-5, atol=1e-6)


def _ranks(tmp: Path, cache: Path, dp: int, mp: int, full_batch: str, net: str) -> dict[int, dict]:
    out = tmp / f"{net}_dp{dp}mp{mp}"
    out.mkdir()
    proc, ranks = mpiexec(dp * mp, WORKER, out, str(dp), str(mp), full_batch, net,
                          env={"MS_COMPILER_CACHE_PATH": str(cache)})
    assert proc.returncode == 0 and sorted(ranks) == list(range(dp * mp)), proc.stderr[-3000:]
    return ranks


def test_vocab_parallel_lookup_and_softmax_train_as_one_device(tmp_path, ascendemu_kernel_cache):
    """A vocabulary-parallel Gather (masked local lookups + AllReduce), a column-parallel MatMul, a
    Softmax that needs its row whole (an AllGather of dimension 1) and a batch-keeping Reshape, on 4
    ranks (dp=2 x mp=2): the one-device run's losses, and each rank's slice of its trained table."""
    (single,) = _ranks(tmp_path, ascendemu_kernel_cache, 1, 1, "1", "lookup").values()
    for rank, result in _ranks(tmp_path, ascendemu_kernel_cache, 2, 2, "0", "lookup").items():
        np.testing.assert_allclose(result["losses"], single["losses"], rtol=2e-6)
        rows = HIDDEN // 2 * (rank % 2)
        np.testing.assert_allclose(result["table"], np.asarray(single["table"])[rows:rows + HIDDEN // 2], atol=1e-6)
        assert not np.allclose(result["table"], _initial_table()[rows:rows + HIDDEN // 2])     # it was trained


def test_conv_net_without_strategies_is_batch_parallel_and_trains_as_one_device(tmp_path, ascendemu_kernel_cache):
    """No shard call: MindSpore's semi-auto default splits the batch of Conv2D, MaxPool, BiasAdd, MatMul
    and the loss over 4 ranks (each fed its rows); the gradients are AllReduced over all 4 (mirror):
    the one-device run's losses and weights on every rank."""
    (single,) = _ranks(tmp_path, ascendemu_kernel_cache, 1, 1, "1", "conv").values()
    for result in _ranks(tmp_path, ascendemu_kernel_cache, 4, 1, "0", "conv").values():
        np.testing.assert_allclose(result["losses"], single["losses"], rtol=2e-6)
        for name, value in single.items():
            np.testing.assert_allclose(result[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def _initial_table() -> np.ndarray:
    rng = np.random.default_rng(9)
    rng.integers(0, HIDDEN, BATCH)
    rng.standard_normal((BATCH, 2, HIDDEN // 2))
    return rng.standard_normal((HIDDEN, HIDDEN)).astype(np.float32)
