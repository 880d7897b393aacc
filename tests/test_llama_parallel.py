"""The MindFormers-style Llama of examples/llama sharded by MindFormers' parallel_config (dp x mp) under
SEMI_AUTO_PARALLEL: the sharding rules its ops need (Reshape keeping splits through (B, S, H) <-> (B * S, H)
and H <-> (N, D), Transpose, FlashAttentionScore split by heads, a Parameter's Cast placed by its consumer),
checked against hand-computed layouts; and on real ranks (mpiexec) a tiny Llama trained with mp=2 and
dp=2 x mp=2 gives the single-device losses (tests/fixtures/ranks/llama_worker.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_collectives import mpiexec

from ascendemu.graph.parallel.layout import Layout
from ascendemu.graph.parallel.redistribution import move
from ascendemu.graph.parallel.rules import rule_for
from ascendemu.graph.parallel.strategy import StrategyError

WORKER = Path(__file__).resolve().parent / "fixtures" / "ranks" / "llama_worker.py"


def test_reshape_keeps_a_batch_split_and_a_head_split():
    """(B, S, H) split (dp, 1, mp) -> (B * S, H): (dp, mp); (B * S, H) -> (B, S, N, D): heads split by mp;
    a split the new shape cannot hold (the sequence's) gathers (replicated output)."""
    rule = rule_for("Reshape")
    cur = Layout((1, 2, 4), (1, -1, 2))
    plan = rule.plan(8, None, [(4, 16, 64)], [(64, 64)], {"shape": (64, 64)}, [cur], "Reshape")
    assert plan.outputs[0].tensor_map == (1, 2) and plan.attrs["shape"] == (32, 16)
    flat = Layout((1, 2, 4), (1, 2))
    plan = rule.plan(8, None, [(64, 64)], [(4, 16, 8, 8)], {"shape": (4, 16, 8, 8)}, [flat], "Reshape")
    assert plan.outputs[0].tensor_map == (1, -1, 2, -1) and plan.attrs["shape"] == (2, 16, 2, 8)
    seq = Layout((2, 4), (-1, 1, -1))
    plan = rule.plan(8, None, [(4, 16, 64)], [(64, 64)], {"shape": (64, 64)}, [seq], "Reshape")
    assert plan.outputs[0].is_replicated and plan.inputs[0].is_replicated


def test_transpose_carries_splits_with_their_dimensions():
    plan = rule_for("Transpose").plan(8, ((2, 1, 4, 1),), [(2, 16, 8, 8)], [(2, 8, 16, 8)], {"perm": (0, 2, 1, 3)},
                                      [None], "Transpose")
    assert plan.inputs[0].tensor_map == (1, 2, 3, 4) and plan.outputs[0].tensor_map == (1, 3, 2, 4)


def test_flash_attention_splits_batch_and_heads_and_runs_local_heads():
    """BNSD q (2, 8, 16, 8), GQA k/v with 4 heads, dp=2 x mp=4: every rank runs 2 query heads; the
    statistics and output follow the query; the (1, 1, S, S) mask stays whole; a split sequence is refused."""
    q, kv, mask = (2, 8, 16, 8), (2, 4, 16, 8), (1, 1, 16, 16)
    qkv = (2, 4, 1, 1)
    attrs = {"head_num": 8, "input_layout": "BNSD"}
    plan = rule_for("FlashAttentionScore").plan(8, (qkv, qkv, qkv, (2, 1, 1, 1)), [q, kv, kv, mask],
                                                [(2, 8, 16, 8), (2, 8, 16, 8), (), q], attrs, [None] * 4,
                                                "FlashAttentionScore")
    assert plan.attrs["head_num"] == 2
    assert [p.local_shape(s) for p, s in zip(plan.inputs, [q, kv, kv, mask])] == \
        [(1, 2, 16, 8), (1, 1, 16, 8), (1, 1, 16, 8), (1, 1, 16, 16)]
    assert plan.outputs[3].local_shape(q) == (1, 2, 16, 8) and plan.outputs[0].local_shape((2, 8, 16, 8)) == \
        (1, 2, 16, 8)
    with pytest.raises(StrategyError):
        rule_for("FlashAttentionScore").plan(8, ((2, 1, 4, 1),) * 3, [q, q, q], [(2, 8, 16, 8)] * 2 + [(), q], attrs,
                                             [None] * 3, "FlashAttentionScore")


def _losses(tmp: Path, cache: Path, dp: int, mp: int) -> dict[int, dict]:
    out = tmp / f"dp{dp}mp{mp}"
    out.mkdir()
    proc, ranks = mpiexec(dp * mp, WORKER, out, str(dp), str(mp),
                          env={"MS_COMPILER_CACHE_PATH": str(cache)})
    assert proc.returncode == 0 and sorted(ranks) == list(range(dp * mp)), proc.stderr[-3000:]
    return ranks


def test_tiny_llama_with_tensor_and_data_parallel_trains_as_one_device(tmp_path, ascendemu_kernel_cache):
    """2 layers, hidden 64, 4 heads (2 key/value heads), seq 16, batch 2, vocabulary-parallel embedding and
    lm_head, FlashAttentionScore, AdamWeightDecay, 2 steps: dp=2 x mp=2 on 4 ranks prints the one-device
    losses on every rank (float16 compute: the reductions' order differs, within 1e-4). (mp=2 alone checks
    nothing dp=2 x mp=2 does not: its mp groups are the same rules; 2 more ranks cost ~15 CPU-s.)"""
    (single,) = _losses(tmp_path, ascendemu_kernel_cache, 1, 1).values()
    for dp, mp in ((2, 2),):
        for rank, result in _losses(tmp_path, ascendemu_kernel_cache, dp, mp).items():
            np.testing.assert_allclose(result["losses"], single["losses"], rtol=1e-4, err_msg=f"dp{dp} mp{mp} {rank}")


def test_a_repeated_strategy_puts_the_repeat_last_as_mindspore():
    """MatMul ((2, 1), (1, 1)) on 8 devices (the lm_head at dp=2 x mp=4): MindSpore's device matrix is
    (2, 1, 1, 4), the repeat last, so rank r holds row block r // 4, the block the (dp, mp) = (2, 4) ops
    around it give rank r; and the output's move to the loss's batch default (rows over 8) is a local
    Slice of rank r's block (r % 4 of its 4 quarters), not an AllGather."""
    plan = rule_for("MatMul").plan(8, ((2, 1), (1, 1)), [(64, 16), (16, 32)], [(64, 32)], {}, [None, None], "MatMul")
    assert [plan.outputs[0].index(r, 0) for r in range(8)] == [r // 4 for r in range(8)]
    assert plan.outputs[0].slices(5, (64, 32)) == (slice(32, 64), slice(0, 32))

    class Recorder:
        alltoall, rank = False, 5

        def __init__(self):
            self.ops = []

        def record(self, op, inputs, attrs):
            self.ops.append((op, attrs))
            return (len(self.ops),)

        def shape(self, vid):
            return (32, 32)

    rec = Recorder()
    move(rec, 0, plan.outputs[0], Layout((8,), (0, -1)))
    assert rec.ops == [("Slice", {"begin": (8, 0), "size": (8, 32)})]
