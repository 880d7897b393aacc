"""Specs of the round-3 breadth family ``comm3``: Custom (pyfunc, and kernel-decorated functions run as
pyfunc), the summary primitives (PyNative: the cached (op, tag, value)), MoveTo/move_to, GetNext's and
the collectives' argument errors (MindSpore 2.10 CPU has no communicator to run them on one rank; the
emulator's runs are in tests/test_comm3.py)."""
from __future__ import annotations

from .core import Py, T, op

R = (2, 3)


def _custom(ms, x, y, **kw):
    """A pyfunc over numpy: MindSpore CPU runs it on the host, as the emulator does."""
    return ms.ops.Custom(lambda a, b: a * b + 1, out_shape=lambda a, b: a, out_dtype=lambda a, b: a, **kw)(x, y)


def _custom_two(ms, x):
    return ms.ops.Custom(lambda a: (a - 1, (a * 10).astype("int32")), out_shape=((2, 3), (2, 3)),
                         out_dtype=(ms.float32, ms.int32))(x)


def _outer(a, b):
    """A hybrid-DSL kernel (output_tensor and range are its intrinsics)."""
    c = output_tensor(a.shape, a.dtype)  # noqa: F821
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            c[i, j] = a[i, j] * b[i, j] + a[i, j]
    return c


def _kernel(name):
    def run(ms, x, y):
        return ms.ops.Custom(getattr(ms.ops, name)(_outer), out_shape=lambda a, b: a, out_dtype=lambda a, b: a,
                             func_type="pyfunc")(x, y)
    return run


def _summary(kind):
    """The primitive's PyNative call caches [op name, tag, value] (MindSpore's SUMMARY_TENSOR_CACHE)."""
    def run(ms, x):
        assert getattr(ms.ops, kind)()("tag", x) is None
        return tuple(ms.ops.operations.debug_ops.SUMMARY_TENSOR_CACHE.pop())
    return run


def _prim(name, *init):
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*init, **kw)(*xs)


def _build(name, *init):
    """Only the constructor (its argument errors need no communicator)."""
    return lambda ms, **kw: getattr(ms.ops, name)(*init, **kw)


MOVE_TO_NOTE = "oracle: Tensor.move_to (MoveTo has no CPU kernel in MindSpore 2.10: Kernel select failed)"

SPECS: list = [
    op("mindspore.ops.Custom", _custom, shapes=[[R, R]], grad=False, graph=False,
       errors=[([R, R], {"func_type": "julia"}), ([R, R], {"func_type": "aot"}), ([R, R], {"func_type": "hybrid"})]),
    op("mindspore.ops.Custom", lambda ms, x: _custom_two(ms, x), shapes=[R], grad=False, graph=False),
    op("mindspore.ops.kernel", _kernel("kernel"), shapes=[[R, R]], grad=False, graph=False),
    op("mindspore.ops.ms_kernel", _kernel("ms_kernel"), shapes=[[R, R]], grad=False, graph=False),
    op("mindspore.ops.ScalarSummary", _summary("ScalarSummary"), shapes=[()], grad=False, graph=False),
    op("mindspore.ops.TensorSummary", _summary("TensorSummary"), shapes=[R], grad=False, graph=False),
    op("mindspore.ops.ImageSummary", _summary("ImageSummary"), shapes=[(1, 3, 2, 2)], grad=False, graph=False),
    op("mindspore.ops.HistogramSummary", _summary("HistogramSummary"), shapes=[R], grad=False, graph=False),
    op("mindspore.Tensor.move_to", lambda ms, x, *a: x.move_to(*a), shapes=[[R, Py("CPU")]], grad=False,
       graph=False, errors=[([R, Py("GPU")], {})]),
    # MindSpore 2.10 CPU cannot select a MoveTo kernel: the oracle is Tensor.move_to, which it runs (the
    # documented result: the tensor's copy on the target device)
    op("mindspore.ops.move_to", lambda ms, x, *a: ms.ops.move_to(x, *a), shapes=[[R, Py("CPU")]], grad=False,
       graph=False, oracle=lambda ms, x, *a: x.move_to(*a), note=MOVE_TO_NOTE),
    op("mindspore.ops.MoveTo", _prim("MoveTo"), shapes=[[R, Py("CPU"), Py(True)]], grad=False, graph=False,
       oracle=lambda ms, x, *a: x.move_to(*a), note=MOVE_TO_NOTE),
    op("mindspore.ops.GetNext", lambda ms, **kw: ms.ops.GetNext(**kw), grad=False, graph=False,
       errors=[([], {"types": 1, "shapes": [[2]], "output_num": 1, "shared_name": "q"})]),
    op("mindspore.ops.AlltoAllV", _build("AlltoAllV"), grad=False, graph=False, errors=[([], {"block_size": 1.0})]),
    op("mindspore.ops.AlltoAllVC", _build("AlltoAllVC"), grad=False, graph=False, errors=[([], {"block_size": 1.0})]),
    op("mindspore.ops.AllGatherV", _build("AllGatherV"), grad=False, graph=False, errors=[([], {"group": 1})]),
    op("mindspore.ops.ReduceScatterV", _build("ReduceScatterV"), grad=False, graph=False, errors=[([], {"op": 1})]),
    op("mindspore.ops.Reduce", _build("Reduce", 0), grad=False, graph=False, errors=[([], {"op": 1})]),
    op("mindspore.ops.CollectiveGather", _build("CollectiveGather", 0), grad=False, graph=False,
       errors=[([], {"group": 1})]),
    op("mindspore.ops.CollectiveScatter", _build("CollectiveScatter"), grad=False, graph=False,
       errors=[([], {"group": 1})]),
    op("mindspore.ops.Barrier", lambda ms: ms.ops.Barrier()(), grad=False, graph=False, errors=[([], {})]),
    op("mindspore.ops.BatchISendIRecv", lambda ms, **kw: ms.ops.BatchISendIRecv(**kw), grad=False, graph=False,
       errors=[([], {"op_types": ("isend",), "remote_ranks": (0, 1)}),
               ([], {"op_types": "isend", "remote_ranks": (0,)})]),
    op("mindspore.ops.all_gather_matmul", lambda ms, *a: ms.ops.all_gather_matmul(*a), grad=False, graph=False,
       errors=[([T((2, 256), "float16"), T((256, 3), "float16"), Py(0), Py(2)], {})]),
    op("mindspore.ops.matmul_reduce_scatter", lambda ms, *a: ms.ops.matmul_reduce_scatter(*a), grad=False,
       graph=False, errors=[([T((2, 256), "float16"), T((256, 3), "float16"), Py("hccl_world_group"), Py("2")], {})]),
    # MindSpore runs NeighborExchange in graphs only (its PyNative call raises NotImplementedError): the
    # sample checks that the constructor takes MindSpore's arguments
    op("mindspore.ops.NeighborExchange",
       lambda ms: (ms.ops.NeighborExchange([0], [0], [[2]], [[2]], ms.float32), None)[1], grad=False, graph=False),
]
