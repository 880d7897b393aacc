"""The remaining collective primitives of ``ops.operations.comm_ops`` (AlltoAllV, AlltoAllVC, AllGatherV,
ReduceScatterV, Reduce, CollectiveGather, CollectiveScatter, Barrier, NeighborExchange, BatchISendIRecv) and
the fused communication matmuls (all_gather_matmul, matmul_reduce_scatter): real ranks under mpiexec, each
result checked against numpy on every rank; a world of one in process (each an identity, MindSpore's
placeholders and empty results), their argument errors, and the rooted ones in GRAPH_MODE."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import nn, ops
from ascendemu.frontend.communication.management import CommTypeError, CommValueError
from test_collectives import mpiexec
from test_comm_func import world_of_one  # noqa: F401  (fixture)

WORKER = Path(__file__).parent / "fixtures" / "ranks" / "comm3_worker.py"
NAMES = ["AlltoAllV", "AlltoAllVC", "AlltoAllVC_transpose", "AllGatherV", "ReduceScatterV", "Reduce",
         "CollectiveGather", "CollectiveScatter", "Barrier", "NeighborExchange", "BatchISendIRecv",
         "BatchISendIRecv_send", "all_gather_matmul", "all_gather_matmul_gather", "matmul_reduce_scatter"]


def test_two_ranks_exchange_uneven_blocks_like_numpy(ascendemu_kernel_cache, tmp_path):
    proc, ranks = mpiexec(2, WORKER, tmp_path, env={"MS_COMPILER_CACHE_PATH": str(ascendemu_kernel_cache)},
                          timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0 and sorted(ranks) == [0, 1], proc.stderr[-3000:]
    assert ranks[0]["checked"] == NAMES == ranks[1]["checked"]


X = np.arange(6, dtype=np.float32) - 2.5


def test_a_world_of_one(world_of_one):  # noqa: F811
    ops.init_process_group()
    x = ms.Tensor(X)
    assert np.array_equal(ops.AlltoAllV()(x, [6], [6]).asnumpy(), X)
    assert np.array_equal(ops.AlltoAllV(block_size=2)(x, (2,), ms.Tensor(np.array([2]))).asnumpy(), X[:4])
    assert np.array_equal(ops.AlltoAllVC()(x, [4]).asnumpy(), X[:4])
    assert np.array_equal(ops.AllGatherV()(x, [6]).asnumpy(), X)
    assert np.array_equal(ops.ReduceScatterV("min")(x, [5]).asnumpy(), X[:5])
    empty = ops.AlltoAllV()(x, [0], [0])                      # MindSpore: an empty result has shape ()
    assert empty.shape == () and empty.dtype == ms.float32
    m = ms.Tensor(X.reshape(3, 2))
    assert np.array_equal(ops.Reduce(0, "max")(m).asnumpy(), X.reshape(3, 2))
    assert np.array_equal(ops.CollectiveGather(0)(m).asnumpy(), X.reshape(3, 2))
    assert np.array_equal(ops.CollectiveScatter()(m).asnumpy(), X.reshape(3, 2))
    barrier = ops.Barrier()()
    assert barrier.shape == (1,) and barrier.dtype == ms.float32
    (got,) = ops.NeighborExchange([0], [0], [[3, 2]], [[3, 2]], ms.float32)((m,))     # to itself
    assert np.array_equal(got.asnumpy(), X.reshape(3, 2))
    sent, got = ops.BatchISendIRecv(("isend", "irecv"), (0, 0), ([6],), (ms.float32,))((x,))
    assert sent.shape == () and np.array_equal(got.asnumpy(), X)


def test_argument_errors(world_of_one):  # noqa: F811
    ops.init_process_group()
    x = ms.Tensor(X)
    with pytest.raises(CommValueError, match="one count per rank"):
        ops.AlltoAllV()(x, [3, 3], [6])
    with pytest.raises(CommValueError, match="expects \\[5\\] elements .* they send \\[6\\]"):
        ops.AlltoAllV()(x, [6], [5])
    with pytest.raises(CommValueError, match="sent 7 elements but the input has 6"):
        ops.AlltoAllV()(x, [7], [7])
    with pytest.raises(CommTypeError, match="non-negative ints"):
        ops.AllGatherV()(x, [1.5])
    with pytest.raises(TypeError, match="'block_size' should be int"):
        ops.AlltoAllV(block_size=1.0)
    with pytest.raises(CommValueError, match="must be sum, max or min"):
        ops.ReduceScatterV("prod")(x, [6])
    with pytest.raises(CommTypeError, match="'dest_rank' must be int"):
        ops.Reduce("0")
    with pytest.raises(ValueError, match="length of op_types and remote_ranks must be the same"):
        ops.BatchISendIRecv(("isend",), (0, 1))
    with pytest.raises(RuntimeError, match="must equal the number of 'isend' \\(1\\)"):
        ops.BatchISendIRecv(("isend",), (0,))((x, x))
    with pytest.raises(ValueError, match="must be send_shapes"):
        ops.NeighborExchange([0], [0], [[6]], [[5]], ms.float32)((x,))
    h, w = ms.Tensor(np.ones((2, 256), np.float16)), ms.Tensor(np.ones((256, 3), np.float16))
    with pytest.raises(RuntimeError, match=r"'world_size' must be the size of group .* \(1\) and one of \(2, 4, 8\)"):
        ops.all_gather_matmul(h, w, "hccl_world_group", 1)
    with pytest.raises(RuntimeError, match="must both be float16 or bfloat16"):
        ops.matmul_reduce_scatter(ms.Tensor(np.ones((2, 256), np.float32)), ms.Tensor(np.ones((256, 3), np.float32)),
                                  "hccl_world_group", 2)
    with pytest.raises(RuntimeError, match=r"k must be in \[256, 65535\)"):
        ops.matmul_reduce_scatter(ms.Tensor(np.ones((2, 8), np.float16)), ms.Tensor(np.ones((8, 3), np.float16)),
                                  "hccl_world_group", 2)
    with pytest.raises(TypeError, match="'group' must be str"):
        ops.all_gather_matmul(h, w, 0, 2)
    with pytest.raises(CommValueError, match="divisible by the group size"):
        ops.CollectiveScatter()(ms.Tensor(np.float32(1)))


def test_rooted_collectives_in_a_graph_and_uneven_ones_refused(world_of_one, restore_context):  # noqa: F811
    ops.init_process_group()
    ms.set_context(mode=ms.GRAPH_MODE)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.reduce, self.gather, self.scatter = ops.Reduce(0), ops.CollectiveGather(0), ops.CollectiveScatter(0)

        def construct(self, x):
            return self.reduce(x) + self.gather(x) * 2 + self.scatter(x) * 3

    m = X.reshape(3, 2)
    assert np.array_equal(Net()(ms.Tensor(m)).asnumpy(), 6 * m)

    class Uneven(nn.Cell):
        def construct(self, x):
            return ops.AlltoAllV()(x, [6], [6])

    with pytest.raises(InvalidParamError, match="AlltoAllV in GRAPH_MODE"):
        Uneven()(ms.Tensor(X))
