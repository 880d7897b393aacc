"""Optimizer parallel (``enable_parallel_optimizer``, graph/parallel/optimizer_shard.py): the settings checked
as real MindSpore 2.10 checks them (tests/fixtures/optimizer_parallel.json, tools/record_optimizer_parallel.py);
which piece of a weight each rank holds (hand-computed, as MindSpore places it); a DryRun inserting the
AllGather / ReduceScatter MindSpore's DryRun inserts, with its per-rank peak (fixtures/msdryrun/
opt_shard_dryrun.json); and on real ranks (mpiexec) the one-device losses and weights.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from test_collectives import mpiexec
from test_dryrun_memory_oracle import ROUNDING_MB, TOLERANCE
from test_llama_memory_oracle import WEIGHTS_TOLERANCE, _dryrun
from test_semi_auto_parallel import EXTRA_LOSS_GRAD, PEAK, _dry_run, _reference

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor
from ascendemu.frontend.parallel._auto_parallel_context import auto_parallel_context
from ascendemu.graph.parallel.layout import Layout
from ascendemu.graph.parallel.optimizer_shard import OptimizerShard, OptShardConfig, OptShardLayout
from ascendemu.kernels.signature import TensorDesc

FIXTURES = Path(__file__).parent / "fixtures"
ORACLE = json.loads((FIXTURES / "optimizer_parallel.json").read_text())
DRYRUNS = json.loads((FIXTURES / "msdryrun" / "opt_shard_dryrun.json").read_text())["runs"]
LLAMAS = json.loads((FIXTURES / "msdryrun" / "opt_shard_dryrun.json").read_text())["llama"]
# the sharded Llama's used peak against MindSpore's (issue 24's Done-when: within 5%)
LLAMA_PEAK_TOLERANCE = 0.05
WORKER = FIXTURES / "ranks" / "opt_shard_worker.py"
CONTEXT_CASES = {
    "enable_not_bool": {"enable_parallel_optimizer": 1},
    "config_not_dict": {"parallel_optimizer_config": [("parallel_optimizer_threshold", 1)]},
    "config_unknown_key": {"parallel_optimizer_config": {"threshold": 1}},
    "grad_shard_not_bool": {"parallel_optimizer_config": {"gradient_accumulation_shard": 1}},
    "threshold_negative": {"parallel_optimizer_config": {"parallel_optimizer_threshold": -1}},
    "threshold_float": {"parallel_optimizer_config": {"parallel_optimizer_threshold": 1.5}},
    "shard_size_zero": {"parallel_optimizer_config": {"optimizer_weight_shard_size": 0}},
    "shard_size_bool": {"parallel_optimizer_config": {"optimizer_weight_shard_size": True}},
    "shard_size_float": {"parallel_optimizer_config": {"optimizer_weight_shard_size": 2.0}},
}


@pytest.fixture
def fresh_context():
    ms.reset_auto_parallel_context()
    yield
    ms.reset_auto_parallel_context()


def _settings() -> dict:
    ctx = auto_parallel_context()
    return {"enable_parallel_optimizer": ctx.get_enable_parallel_optimizer(),
            "gradient_accumulation_shard": ctx.get_grad_accumulation_shard(),
            "parallel_optimizer_threshold": ctx.get_parallel_optimizer_threshold(),
            "optimizer_weight_shard_size": ctx.get_optimizer_weight_shard_size()}


@pytest.mark.parametrize("case", sorted(CONTEXT_CASES))
def test_a_bad_setting_raises_mindsporess_error(case, fresh_context):
    want = ORACLE["context"][case]
    with pytest.raises(Exception) as info:
        ms.set_auto_parallel_context(**CONTEXT_CASES[case])
    assert any(k.__name__ == want["type"] for k in type(info.value).__mro__)
    assert want["message"] in str(info.value)
    assert _settings() == ORACLE["read_back"]["default"]          # nothing applied


def test_settings_read_back_and_merge_as_mindsporess(fresh_context):
    assert _settings() == ORACLE["read_back"]["default"]
    ms.set_auto_parallel_context(enable_parallel_optimizer=True, parallel_optimizer_config={
        "gradient_accumulation_shard": False, "parallel_optimizer_threshold": 16, "optimizer_weight_shard_size": 2})
    assert _settings() == ORACLE["read_back"]["set"]
    ms.set_auto_parallel_context(parallel_optimizer_config={"parallel_optimizer_threshold": 8})
    assert _settings() == ORACLE["read_back"]["after_partial"]          # the shard size is kept
    ms.reset_auto_parallel_context()
    assert _settings() == ORACLE["read_back"]["after_reset"]


def test_parameter_parallel_optimizer_flag():
    w = Parameter(Tensor(np.ones((4, 4), np.float32)), name="w")
    v = Parameter(Tensor(np.ones(2, np.float32)), name="v", parallel_optimizer=False)
    assert (w.parallel_optimizer, v.parallel_optimizer) == (ORACLE["parameter"]["default"],
                                                            ORACLE["parameter"]["init_false"])
    assert v.clone().parallel_optimizer is False                       # optimizer states keep it
    with pytest.raises(TypeError, match=ORACLE["parameter"]["set_not_bool"]["message"].replace("`", ".")):
        w.parallel_optimizer = 1


def test_cell_set_comm_fusion_as_mindspore():
    want = ORACLE["set_comm_fusion"]
    net = ms.nn.Dense(4, 4)
    assert (net.set_comm_fusion(3) is net) == want["returns_cell"]
    assert [p.comm_fusion for p in net.trainable_params()] == want["fusions"]
    for case, value, kind in (("negative", -1, ValueError), ("float", 1.0, TypeError)):
        with pytest.raises(kind) as info:
            net.set_comm_fusion(value)
        assert want[case]["type"] == kind.__name__ and want[case]["message"] in str(info.value)
    assert [p.comm_fusion for p in net.trainable_params()] == want["fusions"]


class _Param:
    parallel_optimizer, requires_grad = True, True


def test_each_rank_holds_its_piece_of_its_slice_as_mindspore():
    """dp=2 x mp=2, w (8, 4) split by rows over mp (device matrix (dp, mp), rank = 2 dp + mp): its slice of 4
    rows is repeated over dp and cut in 2 by the rank's place in its dp group: rank r holds rows
    4 (r % 2) + 2 (r // 2) ... + 2; with shard size 2 of dp=4 (mp=1) the groups are ranks {0, 1} and {2, 3}
    and the pieces repeat over the pairs {0, 2}, {1, 3} (the rest of the mirror AllReduce)."""
    base = Layout((2, 2), (1, -1))
    store = OptimizerShard(OptShardConfig(threshold_kb=0)).storage(_Param(), base, TensorDesc((8, 4), "float32"))
    assert isinstance(store, OptShardLayout) and store.local_shape((8, 4)) == (2, 4) and store.replicas == 1
    assert [store.slices(r, (8, 4))[0] for r in range(4)] == [slice(0, 2), slice(4, 6), slice(2, 4), slice(6, 8)]
    assert store.group(1, store.opt_axes) == (1, 3) and store.base.same(base)

    dp4 = OptimizerShard(OptShardConfig(threshold_kb=0, shard_size=2)).storage(
        _Param(), Layout((4,), (-1, -1)), TensorDesc((6, 8), "float32"))
    assert [dp4.slices(r, (6, 8))[0] for r in range(4)] == [slice(0, 3), slice(3, 6)] * 2
    assert dp4.group(2, dp4.opt_axes) == (2, 3) and dp4.replica_group(1) == (1, 3)


def test_small_indivisible_or_opted_out_weights_stay_whole():
    """The default threshold is 64 KB of the slice (MindSpore's -1); a first dimension the group does not
    divide, or ``parallel_optimizer=False``, keeps the consumer's layout."""
    rep = Layout((8,), (-1, -1))
    shard = OptimizerShard(OptShardConfig())
    assert shard.storage(_Param(), rep, TensorDesc((128, 127), "float32")) is rep        # 63.5 KB
    assert isinstance(shard.storage(_Param(), rep, TensorDesc((128, 128), "float32")), OptShardLayout)
    assert shard.storage(_Param(), rep, TensorDesc((1028, 128), "float32")) is rep       # 1028 % 8
    out = _Param()
    out.parallel_optimizer = False
    assert shard.storage(out, rep, TensorDesc((1024, 128), "float32")) is rep


def _opt_shard_order(comms: list[tuple], batch: str) -> list[tuple]:
    """The AllGathers and ReduceScatters of the weight matrices' pieces, in order (not the input batch's; not
    the bias's, which MindSpore's scheduler runs after the matrices' where ours runs it at its use)."""
    return [c for c in comms if c[0] in ("AllGather", "ReduceScatter") and c[2] != batch and "," in c[2]]


@pytest.mark.parametrize("run", DRYRUNS, ids=lambda r: f"{r['rank_size']}-{r['env']}")
def test_dryrun_collectives_and_peak_are_mindsporess(run, tmp_path):
    """One step's collectives (kind, group, shapes) are MindSpore's (plus the documented extra), the weights'
    AllGathers and ReduceScatters in MindSpore's order, and the used peak within the DryRun tolerance."""
    proc, ours = _dry_run(tmp_path, run)
    theirs = [(c["primitive"], tuple(c["ranks"]), c["input_shape"], c["output_shape"]) for c in run["step_collectives"]]
    world = tuple(range(run["rank_size"]))
    assert Counter(ours) == Counter(theirs) + Counter({(EXTRA_LOSS_GRAD[0], world, *EXTRA_LOSS_GRAD[1:]): 1})
    batch = "(64, 512)"
    assert _opt_shard_order(ours, batch) == _opt_shard_order(theirs, batch)
    used = float(dict(PEAK.findall(proc.stdout))["Used peak memory usage (without fragments)"])
    print(f"{run['env']}: ascendemu {used:.2f} MiB, MindSpore {run['used_peak_mb']} MB")
    assert abs(used - run["used_peak_mb"]) <= TOLERANCE * run["used_peak_mb"] + ROUNDING_MB


def _ranks(tmp: Path, cache: Path, dp: int, mp: int, optimizer: str, shard_size: int = -1) -> dict[int, dict]:
    out = tmp / f"{optimizer}_dp{dp}mp{mp}_s{shard_size}"
    out.mkdir()
    proc, ranks = mpiexec(dp * mp, WORKER, out, str(dp), str(mp), optimizer, str(shard_size),
                          env={"MS_COMPILER_CACHE_PATH": str(cache)})
    assert proc.returncode == 0 and sorted(ranks) == list(range(dp * mp)), proc.stderr[-3000:]
    return ranks


def test_momentum_with_sharded_weights_trains_as_one_device(tmp_path, ascendemu_kernel_cache):
    """dp=2 x mp=2 (4 ranks), Momentum: the numpy float64 losses on every rank; each rank holds its piece (half its
    mp slice, by its dp index) of the trained weights and of the Momentum state. (Data parallel alone: below.)"""
    losses, w1, w2 = _reference()
    for dp, mp in ((2, 2),):
        for rank, result in _ranks(tmp_path, ascendemu_kernel_cache, dp, mp, "momentum").items():
            np.testing.assert_allclose(result["losses"], losses, rtol=2e-6)
            d, m = rank // mp, rank % mp
            cols = slice(8 // mp * m, 8 // mp * (m + 1))
            rows = slice(8 // mp * m + 4 // mp * d, 8 // mp * m + 4 // mp * (d + 1))   # w2's rows: mp slice, dp piece
            np.testing.assert_allclose(result["w1"], w1[3 * d:3 * d + 3, cols], rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(result["w2"], w2[rows], rtol=1e-5, atol=1e-6)
            assert result["state_shapes"] == [[3, 8 // mp], [4 // mp, 4]]


def test_adam_with_a_shard_group_smaller_than_dp_trains_as_one_device(tmp_path, ascendemu_kernel_cache):
    """dp=4 on 4 ranks, optimizer_weight_shard_size 2, Adam: the one-device losses; ranks 0 and 2 hold the
    first half of the trained weights, 1 and 3 the second (pieces repeated over pairs, AllReduced)."""
    (single,) = _ranks(tmp_path, ascendemu_kernel_cache, 1, 1, "adam").values()
    for rank, result in _ranks(tmp_path, ascendemu_kernel_cache, 4, 1, "adam", 2).items():
        np.testing.assert_allclose(result["losses"], single["losses"], rtol=2e-6)
        half = rank % 2
        np.testing.assert_allclose(result["w1"], np.asarray(single["w1"])[3 * half:3 * half + 3], atol=1e-6)
        np.testing.assert_allclose(result["w2"], np.asarray(single["w2"])[4 * half:4 * half + 4], atol=1e-6)
        assert result["state_shapes"] == [[3, 8], [4, 4]]


@pytest.mark.parametrize("run", LLAMAS, ids=lambda r: "-".join(r["args"][1:4:2]))
def test_llama_with_optimizer_shard_holds_mindsporess_shards_and_peak(run, tmp_path):
    """examples/llama/dryrun_7b.py --optimizer_shard (2 layers, hidden 1024, one rank of 8): the rank's weights and
    AdamWeightDecay states are MindSpore's (1/8 of each at dp 8 and at dp 2 x mp 4). With the weights and updates
    sharded the step's peak is the network's (the loss's backward), within issue 24's 5% of MindSpore's: measured
    -2.2% at dp 8, -2.3% at dp 2 x mp 4 (were +13% / +16% with a one-hot CrossEntropyLoss, RmsNorm's saved x * rstd
    and a Slice backward per reader of the redistributed logits)."""
    ours, weights, states, _ = _dryrun(tmp_path, run)
    blocks = run["memory_blocks"]
    print(f"{run['args']}: ascendemu {ours:.1f} MiB, MindSpore {run['used_peak_mb']} MB")
    assert abs(weights - blocks["weights_mb"]) <= WEIGHTS_TOLERANCE * blocks["weights_mb"]
    assert abs(states - blocks["optimizer_states_mb"]) <= WEIGHTS_TOLERANCE * blocks["optimizer_states_mb"]
    assert abs(ours - run["used_peak_mb"]) <= LLAMA_PEAK_TOLERANCE * run["used_peak_mb"]
