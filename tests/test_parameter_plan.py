"""``Cell.shard(..., parameter_plan={name: strategy or ms.Layout})`` under AUTO_PARALLEL (issue 24): the named
Parameters take the planned layout (MindSpore's AShardIdentity after them), their readers' strategies propagate
from it (frontend/parallel/_cell_shard.py, graph/parallel/sharding.py ``planned_layout``, the search's seeds).

Oracle: real MindSpore 2.10's Ascend DryRun (stub CANN) of tests/fixtures/msdryrun/plan_mlp.py and what its
Cell.shard raises or warns for plan_errors.py's bad plans, recorded by ``tools/record_auto_parallel.py --plan``
into plan_dryrun.json. The 2-rank training of a planned MLP against numpy's losses is
test_auto_parallel.py's ``test_auto_parallel_mlp_on_2_ranks_trains_as_one_device[plan]``.
"""
from __future__ import annotations

import json
import logging
from collections import Counter

import numpy as np
import pytest
from test_auto_parallel import MSDRYRUN, _ours, _theirs
from test_semi_auto_parallel import EXTRA_LOSS_GRAD

from ascendemu.frontend.parallel._cell_shard import CellShardTypeError, CellShardValueError

RECORDED = json.loads((MSDRYRUN / "plan_dryrun.json").read_text())
# where our search and MindSpore's part downstream of the plan (both valid strategies; the plan itself, its
# AShardIdentity item and the planned Parameters' layouts, always agrees), by PLAN: our strategy of the MatMuls
# that differ. rows: MindSpore splits the batch 2 ways and alternates column / row parallel over the other 2
# ((2, 1), (1, 2); (2, 2), (2, 1); (2, 1), (1, 2)), ours keeps the batch split 4 ways; cols: block1's last MatMul,
# MindSpore splits w2's columns over the repeat axis, ours repeats it. Where strategies differ the collectives
# differ with them, so they are compared only where the strategies agree. plan_mlp.py sets its training cell to
# training (``set_train()``, as ``Model.train``); recorded without it (before session 38) MindSpore's inference
# compile ran block1 whole under the "both" plan (ours, and its training graph, the Megatron pair) and under
# "rows" gathered the batch and split columns 4 ways.
DIFFERENT = {"rows": {"MatMul_block0.w2": ((4, 1), (1, 1)), "MatMul_block1.w1": ((4, 1), (1, 1)),
                      "MatMul_block1.w2": ((4, 1), (1, 1))},
             "cols": {"MatMul_block1.w2": ((2, 1), (1, 1))}}
# where the strategies agree but the loss's collectives part (PLAN -> MindSpore's collectives ours has not). both:
# block1's row-parallel MatMul leaves the whole batch on every rank; MindSpore gathers the label's rows to it
# (AllGather (64, 512) -> (256, 512) over the 4 ranks), ours slices the output to the label's rows and AllReduces
# the scalar loss (EXTRA_LOSS_GRAD): the same step, other collectives.
LOSS_DIFFERS = {"both": Counter({("AllGather", (0, 1, 2, 3), "(64, 512)", "(256, 512)"): 1})}


def _collectives(run: dict) -> Counter:
    return Counter((c["primitive"], tuple(c["ranks"]), c["input_shape"], c["output_shape"])
                   for c in run["step_collectives"])


@pytest.mark.parametrize("run", RECORDED["runs"], ids=lambda r: r["env"]["PLAN"])
def test_parameter_plan_gives_mindspores_strategies_layouts_and_collectives(run, tmp_path):
    """The planned Parameter's checkpoint item is MindSpore's ``AShardIdentity_<name>`` with the plan (its reader
    has no key of its own), its layout and its optimizer state's are MindSpore's; every other MatMul propagated
    from it as MindSpore's, and one step's collectives (kind, group, shapes) are MindSpore's (+ the documented
    loss-backward AllReduce, test_semi_auto_parallel.EXTRA_LOSS_GRAD), except DIFFERENT and LOSS_DIFFERS."""
    strategies, layouts, comms = _ours(tmp_path, run)
    theirs = _theirs(run)
    planned = {k for k in theirs if k.startswith("AShardIdentity_")}
    assert {k: strategies.get(k) for k in planned} == {k: theirs[k] for k in planned}
    for key in planned:
        name = key[len("AShardIdentity_"):]
        assert layouts[name] == run["layouts"][name] and layouts[f"moments.{name}"] == run["layouts"][name]
        assert not any(k.endswith(name) and k != key for k in strategies)
    differ = DIFFERENT.get(run["env"]["PLAN"], {})
    assert strategies == {**theirs, **differ}
    if differ:
        return
    assert layouts == run["layouts"]
    extra = comms - _collectives(run)
    assert _collectives(run) - comms == LOSS_DIFFERS.get(run["env"]["PLAN"], Counter())
    assert all((kind, shape_in, shape_out) == EXTRA_LOSS_GRAD for kind, _, shape_in, shape_out in extra), extra


ERRORS = {e["case"]: e for e in RECORDED["errors"]}


def _net():
    from ascendemu.frontend import Parameter, Tensor, nn

    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w1 = Parameter(Tensor(np.zeros((512, 1024), np.float32)))

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.block1 = Block()

    return Net()


# plan_errors.py's cases
PLANS = {"length": {"self.block1.w1": (1, 2, 1)}, "divisible": {"self.block1.w1": (3, 1)},
         "value_type": {"self.block1.w1": [1, 2]}, "key_type": {1: (1, 2)}, "missing": {"self.block1.w9": (1, 2)},
         "twice": {"block1.w1": (1, 2)}, "not_dict": [("self.block1.w1", (1, 2))]}


@pytest.mark.parametrize("case", sorted(PLANS))
def test_bad_plans_raise_or_warn_as_mindspore(case, monkeypatch, caplog):
    """plan_errors.py's cases on 4 ranks: MindSpore's exception type and text, or its warnings (an unknown name,
    a Parameter planned twice) and the Parameter's plan after them."""
    from ascendemu.frontend.communication import management
    monkeypatch.setattr(management.GlobalComm, "INITED", True)
    monkeypatch.setattr(management, "get_group_size", lambda group=None: 4)
    recorded = ERRORS[case]
    net = _net()
    with caplog.at_level(logging.WARNING):
        if recorded["error"]:
            kind = {"TypeError": CellShardTypeError, "ValueError": CellShardValueError}[recorded["error"]]
            with pytest.raises(kind) as e:
                net.block1.shard(((2, 1),), parameter_plan=PLANS[case])
            assert str(e.value).endswith(recorded["message"])
            return
        net.block1.shard(((2, 1),), parameter_plan=PLANS[case])
        if case == "twice":
            net.block1.shard(((2, 1),), parameter_plan={"block1.w1": (2, 1)})
    plan_warnings = [w for w in recorded["warnings"] if "'Shard' has been configured" not in w]
    assert [r.getMessage() for r in caplog.records if "layout of parameter" in r.getMessage() or
            "is not exist" in r.getMessage()] == plan_warnings
    assert getattr(net.block1.w1, "_param_plan", None) == ((1, 2) if case == "twice" else None)
