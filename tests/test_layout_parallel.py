"""``mindspore.Layout`` and ``Primitive.shard(out_strategy=...)`` under SEMI_AUTO_PARALLEL (issue 24, item 3).

Oracles: real MindSpore 2.10, recorded by tools/record_msdryrun_layout.py: what ``Layout`` / ``shard`` return and
raise (tests/fixtures/layout_api.json); its DryRun (stub CANN) of tests/fixtures/msdryrun/layout_dryrun.py: the
collectives of one step for 5 configurations, and its errors for 4 it refuses (msdryrun/layout_dryrun.json);
hand-computed placements; on 2 mpiexec ranks, float64 numpy's losses and weights for the MLP of
tests/test_semi_auto_parallel.py sharded with Layouts and with MatMul's ReduceScatter out_strategy.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ascendemu.frontend import Layout, ops
from ascendemu.frontend.parallel._layout import LayoutNotSupportedError
from ascendemu.graph.parallel.layout import Layout as TensorLayout
from ascendemu.graph.parallel.rules import MatMulRule, rule_for, plan_op
from ascendemu.graph.parallel.strategy import LayoutStrategy
from test_collectives import mpiexec
from test_semi_auto_parallel import EXTRA_LOSS_GRAD, MSDRYRUN, _dry_run, _reference

FIXTURES = Path(__file__).parent / "fixtures"
API = json.loads((FIXTURES / "layout_api.json").read_text())
RECORDED = json.loads((MSDRYRUN / "layout_dryrun.json").read_text())
WORKER = FIXTURES / "ranks" / "layout_worker.py"


# ----------------------------------------------------------------------------------------- the API, as MindSpore's
@pytest.mark.parametrize("name", sorted(API["cases"]))
def test_layout_and_shard_return_and_raise_what_mindspore_does(name):
    """Each expression of the recorder, evaluated here: the same value (to_dict, prim attrs) or the same
    exception class (ours derive from MindSpore's TypeError / ValueError) and message."""
    want = API["results"][name]
    L = Layout((2, 2, 2), ("dp", "sp", "mp"))  # noqa: F841  (the expressions name it)
    try:
        got = eval(API["cases"][name])
    except (TypeError, ValueError) as err:
        assert "error" in want, f"MindSpore returned {want}, we raised {err!r}"
        assert isinstance(err, {"TypeError": TypeError, "ValueError": ValueError}[want["error"]])
        assert str(err).endswith(want["message"])          # after our ACL-style code, MindSpore's text
        return
    assert "value" in want, f"MindSpore raised {want}, we returned {got!r}"
    assert json.loads(json.dumps(got)) == want["value"]


def test_shard_with_layouts_prints_and_keeps_its_layouts():
    lay = Layout((2, 2, 2), ("dp", "sp", "mp"))
    mm = ops.MatMul()
    assert mm.shard((lay("dp", "sp"), lay("sp", "mp")), (lay(("dp", "sp"), "mp"),)) is mm
    assert repr(mm).startswith("Prim[MatMul]<in_layout=({'device_matrix': (2, 2, 2), 'tensor_map': (2, 1), ")
    assert "out_layout=({'device_matrix': (2, 2, 2), 'tensor_map': ((2, 1), 0)" in repr(mm)
    assert isinstance(mm.in_strategy, LayoutStrategy) and mm.in_strategy.splits() == ((2, 2), (2, 2))
    assert repr(ops.MatMul().shard(((2, 2), (2, 1)), ((4, 1),))) == \
        "Prim[MatMul]<in_strategy=((2, 2), (2, 1)), out_strategy=((4, 1),)>"


def test_a_layout_places_slices_as_mindspores_tensor_map_says():
    """MindSpore's tensor map counts axes from the right: ("dp", "sp") on dim 0 of a (2, 2, 2) matrix is
    axes 2 and 1 there, 0 and 1 here; rank r = 4 dp + 2 sp + mp holds row block 2 dp + sp."""
    lay = Layout((2, 2, 2), ("dp", "sp", "mp"))(("dp", "sp"), "None", "mp").tensor_layout()
    assert lay == TensorLayout((2, 2, 2), ((0, 1), -1, 2))
    assert [lay.index(r, 0) for r in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert lay.local_shape((8, 3, 4)) == (2, 3, 2) and lay.replicas == 1
    assert lay.same(TensorLayout((4, 2), (0, -1, 1)))        # the same split as the tuple strategy (4, 1, 2)
    # out of device-matrix order ("mp" before "dp"): shard 2 mp + dp; its gather group lists ranks by shard
    swapped = Layout((2, 2), ("dp", "mp"))(("mp", "dp"),).tensor_layout()
    assert [swapped.index(r, 0) for r in range(4)] == [0, 2, 1, 3] and swapped.dim_group(0, 0) == (0, 2, 1, 3)
    with pytest.raises(LayoutNotSupportedError, match="interleaved_parallel"):
        Layout((2, 2), ("dp", "interleaved_parallel"))("dp", "interleaved_parallel").tensor_layout()
    with pytest.raises(LayoutNotSupportedError, match="rank_list"):
        Layout((2, 2), ("dp", "mp"), [3, 2, 1, 0])("dp", "mp").tensor_layout()


def _layouts(dev: tuple[int, ...], names: tuple[str, ...], *maps: tuple) -> LayoutStrategy:
    lay = Layout(dev, names)
    return LayoutStrategy(lay(*m).tensor_layout() for m in maps)


def test_a_layout_and_the_tuple_of_its_splits_make_the_same_local_op():
    """Row-parallel MatMul on 8 devices, ("dp", "sp") x "mp" over (2, 2, 2): the local shapes and the partial
    sums' group of each rank are those of the tuple ((4, 2), (2, 1)) (whose repeat axis is 1)."""
    shapes, out = [(16, 8), (8, 4)], [(16, 4)]
    by_layout = plan_op(MatMulRule(), 8, _layouts((2, 2, 2), ("dp", "sp", "mp"), (("dp", "sp"), "mp"), ("mp", "None")),
                        shapes, out, {}, [None, None], "MatMul")
    by_tuple = plan_op(MatMulRule(), 8, ((4, 2), (2, 1)), shapes, out, {}, [None, None], "MatMul")
    for got, want, shape in zip(by_layout.inputs + by_layout.outputs, by_tuple.inputs + by_tuple.outputs, shapes + out):
        assert [got.slices(r, shape) for r in range(8)] == [want.slices(r, shape) for r in range(8)]
    for r in range(8):
        assert by_layout.outputs[0].group(r, by_layout.partial[0].axes) == \
            by_tuple.outputs[0].group(r, by_tuple.partial[0].axes) == (r - r % 2, r - r % 2 + 1)
    # Softmax keeps refusing a split of its axis, whichever way it is given
    with pytest.raises(RuntimeError, match="softmax axis"):
        plan_op(rule_for("Softmax"), 4, _layouts((2, 2), ("dp", "mp"), ("dp", "mp")), [(8, 4)], [(8, 4)],
                {"axis": -1}, [None], "Softmax")


# a phrase of MindSpore's error (recorded) that ours says too, and how to reach ours: (in, out) strategies
REFUSED = {
    "out_bad_tuple": ("the first dimension of output strategy must be 2 or 4, but got 8",
                      lambda: (((2, 2), (2, 1)), ((8, 1),))),
    "out_bad_layout": ("does not match the inferred output layout",
                       lambda: (_layouts((2, 2), ("dp", "mp"), ("dp", "mp"), ("mp", "None")),
                                _layouts((2, 2), ("dp", "mp"), ("mp", "dp")))),
    "layout_mismatch": ("shard size of",
                        lambda: (_layouts((2, 2), ("dp", "mp"), ("None", "dp"), ("mp", "None")), None)),
}


@pytest.mark.parametrize("run", RECORDED["refused"], ids=lambda r: r["case"])
def test_strategies_mindspore_refuses_are_refused_with_its_reason(run):
    """MindSpore's DryRun fails (RuntimeError: operator init failed) with the parallel compiler's reason; the
    sharding pass's planning raises a RuntimeError (StrategyError) saying the same."""
    assert run["returncode"] != 0 and run["exception"][0].startswith("RuntimeError: Failure:operator")
    reasons = " ".join(e["message"] for e in run["parallel_errors"])
    if run["case"] == "out_relu":
        phrase = "It does not support to set output strategy now"
        with pytest.raises(RuntimeError, match=phrase):
            plan_op(rule_for("ReLU"), 4, ((2, 2),), [(8, 4)], [(8, 4)], {}, [None], "ReLU", ((2, 2),))
    else:
        phrase, strategies = REFUSED[run["case"]]
        in_strategy, out_strategy = strategies()
        with pytest.raises(RuntimeError, match=phrase):
            plan_op(MatMulRule(), 4, in_strategy, [(256, 1024), (1024, 512)], [(256, 512)], {}, [None, None],
                    "MatMul", out_strategy)
    assert phrase.lower() in reasons.lower()


# ------------------------------------------------------------------------------ DryRun against MindSpore's DryRun
def test_mindspore_inserts_the_same_collectives_for_a_layout_and_its_tuple():
    """The oracle's own claim: Layout((2, 2), ("dp", "mp")) gives mlp_dp_mp.py's DP=2 x MP=2 collectives."""
    tuple_run = next(r for r in json.loads((MSDRYRUN / "parallel_dryrun.json").read_text())["runs"]
                     if r["script"] == "mlp_dp_mp.py" and r["env"] == {"DP": "2", "MP": "2"})
    assert RECORDED["runs"][0]["env"] == {"CASE": "layout_dp_mp"}
    assert RECORDED["runs"][0]["step_collectives"] == tuple_run["step_collectives"]


@pytest.mark.parametrize("run", RECORDED["runs"], ids=lambda r: r["env"]["CASE"])
def test_dryrun_inserts_the_collectives_mindspore_inserts_for_layouts_and_out_strategy(run, tmp_path):
    """One step's collectives (kind, group, shapes) as MindSpore's: multi-axis dims, a repeat axis in the middle
    of the device matrix, MatMul's ReduceScatter (and its backward's AllGather); plus the one documented extra."""
    _, ours = _dry_run(tmp_path, run)
    theirs = Counter((c["primitive"], tuple(c["ranks"]), c["input_shape"], c["output_shape"])
                     for c in run["step_collectives"])
    world = tuple(range(run["rank_size"]))
    assert Counter(ours) == theirs + Counter({(EXTRA_LOSS_GRAD[0], world, *EXTRA_LOSS_GRAD[1:]): 1})


# ------------------------------------------------------------------------------------ numerics on 2 mpiexec ranks
def test_layout_sharded_mlps_train_as_one_device(tmp_path, ascendemu_kernel_cache):
    """Layout((1, 2), ("dp", "mp")) on 2 ranks (the start-up of 4 ranks alone would cost 10 CPU-s; 4-rank layouts
    are checked against MindSpore's DryRun above): the MLP with a ReLU split by rows over ("dp", "mp"), and with the
    row-parallel MatMul's ReduceScatter out_strategy: every rank prints float64 numpy's losses and holds its slice
    of the trained weights."""
    losses, w1, w2 = _reference()
    proc, ranks = mpiexec(2, WORKER, tmp_path, "1", env={"MS_COMPILER_CACHE_PATH": str(ascendemu_kernel_cache)})
    assert proc.returncode == 0 and sorted(ranks) == [0, 1], proc.stderr[-3000:]
    for rank, nets in ranks.items():
        for net in ("layout", "out_rs"):
            np.testing.assert_allclose(nets[net]["losses"], losses, rtol=2e-6, err_msg=net)
            cols = 4 * rank
            np.testing.assert_allclose(nets[net]["w1"], w1[:, cols:cols + 4], rtol=1e-5, atol=1e-6, err_msg=net)
            np.testing.assert_allclose(nets[net]["w2"], w2[cols:cols + 4], rtol=1e-5, atol=1e-6, err_msg=net)
