"""Pipeline stages under AUTO_PARALLEL (issue 24): ``pipeline_stages=2`` with sharding_propagation and
recursive_programming. Every rank records every stage's ops; the search keeps the stages apart (an input from
another stage is a graph input to it, as MindSpore searches each stage's graph from its Receives), each rank then
splits its own stage and writes its stage's strategies and Parameters to the strategy checkpoint.

Oracle: real MindSpore 2.10's Ascend DryRun (stub CANN) of tests/fixtures/msdryrun/auto_pipeline.py (4 MLP
blocks, 2 stages, 2 micro-batches; 8 ranks dp2 x mp2 propagated from each block's first MatMul, 4 ranks searched
by recursive programming), a rank of each stage, recorded by ``tools/record_auto_parallel.py --pipeline`` into
auto_pipeline_dryrun.json: its strategy checkpoint (its stage's MatMuls, its Parameters' layouts) and one step's
collectives. The script sets its training cell to training (``set_train()``, as ``Model.train`` does); recorded
without it (before session 38) MindSpore compiled an inference graph: no gradient Send on the last stage, rank 6's
second MatMul of its first block the Megatron pair, and the label of rank 6's loss gathered per micro-batch.
"""
from __future__ import annotations

import json
from collections import Counter

import pytest
from test_auto_parallel import MSDRYRUN, _ours, _theirs
from test_semi_auto_parallel import EXTRA_LOSS_GRAD

RECORDED = json.loads((MSDRYRUN / "auto_pipeline_dryrun.json").read_text())["runs"]
P2P = ("Send", "Receive")
# where ours and MindSpore's part (rank -> our strategy of the MatMuls that differ; both valid). Propagation (rank 1,
# stage 0; rank 6, stage 1): MindSpore's training-mode search gives the second MatMul of blocks b0, b1 and b2 data
# parallel ((2, 1), (1, 1): it gathers the first MatMul's column-split output over mp, and the weight's gradient
# is AllReduced over the stage's 4 ranks), the last block's (b3, before the loss) the Megatron pair; ours gives
# every block the Megatron pair. Their layouts and collectives differ with them, so those are compared
# only on the other ranks.
DIFFERENT = {1: {"MatMul_b0.w2": ((2, 2), (2, 1)), "MatMul_b1.w2": ((2, 2), (2, 1))},
             6: {"MatMul_b2.w2": ((2, 2), (2, 1))}}
# MindSpore's checkpoint of a later stage also holds its Receive from the previous stage under the name of its
# first reader's Parameter (``Receive_b2.w1``, with the strategy of the block's second MatMul); ours writes only
# its stage's operators
RECEIVE_ITEM = "Receive_"


def _transfers(rows: Counter, kinds: set[str]) -> Counter:
    """Send/Receive of ``kinds`` by (primitive, group, payload shape): MindSpore writes a Receive's input as ``()``
    or another shape (``(256, 128)``), the emulator a Send's output as ``(0)``."""
    out = Counter()
    for (kind, ranks, shape_in, shape_out), count in rows.items():
        if kind in kinds:
            out[(kind, ranks, shape_in if kind == "Send" else shape_out)] += count
    return out


@pytest.mark.parametrize("run", RECORDED, ids=lambda r: f"{r['env']['SEARCH']}-rank{r['rank_id']}")
def test_auto_pipeline_stage_strategies_and_transfers_are_mindspores(run, tmp_path):
    """Each rank's checkpoint holds its stage's MatMuls with MindSpore's strategies (except DIFFERENT) and its
    Parameters' layouts (but MindSpore's accu_grads.*, Parameters the emulator does not make); each rank sends and
    receives what MindSpore's does (kind, payload shape, count: 2 micro-batches forward and backward), and the
    other collectives (kind, group, shapes) are MindSpore's, plus the documented loss-backward AllReduce
    (EXTRA_LOSS_GRAD)."""
    strategies, layouts, comms = _ours(tmp_path, run)
    theirs = {k: v for k, v in _theirs(run).items() if not k.startswith(RECEIVE_ITEM)}
    assert strategies == {**theirs, **DIFFERENT.get(run["rank_id"], {})}
    if run["rank_id"] in DIFFERENT:
        return
    assert layouts == {k: v for k, v in run["layouts"].items() if not k.startswith("accu_grads.")}
    recorded = Counter((c["primitive"], tuple(c["ranks"]), c["input_shape"], c["output_shape"])
                       for c in run["step_collectives"])
    kinds = {c["primitive"] for c in run["step_collectives"] if c["primitive"] in P2P}
    assert _transfers(comms, kinds) == _transfers(recorded, kinds)
    others, theirs = (Counter({k: n for k, n in c.items() if k[0] not in P2P}) for c in (comms, recorded))
    assert theirs - others == Counter()
    assert all((kind, shape_in, shape_out) == EXTRA_LOSS_GRAD for kind, _, shape_in, shape_out in others - theirs)
