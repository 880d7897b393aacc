"""Specs of ``comm5`` (issue 21): the collectives on a world of one rank - the primitives (AllReduce,
AllGather, ReduceScatter, AlltoAll, Broadcast, Send, Receive), ``mint.distributed``'s functions and
process groups, and the distributed nn wrappers (DistributedGradReducer, PipelineCell,
PipelineGradReducer, the AdaSum wrappers).

Recording: ``COMMUNICATOR`` makes tools/record_conformance.py record this family in a one-rank msrun job
whose worker has called ``mindspore.communication.init()`` (MindSpore 2.10 CPU's ``mccl`` world). On
the emulator side each sample that needs a world makes the emulator's one-rank world itself
(:func:`_world`: ``communication.init()``) and releases it afterwards, putting back the environment
variables init() exports, so no sample leaves a communicator behind.

Where MindSpore 2.10 CPU cannot answer on its one rank - the collective has no CPU kernel
(ReduceScatter, AlltoAll, all_gather_into_tensor, reduce, the reduce-scatters, the all-to-alls), or
the ``*_object`` functions look up the Ascend world group ``hccl_world_group``, which a CPU job does
not have - the spec's ``oracle`` is the documented single-rank result computed with numpy (every
collective of one rank hands back its input: a gather or all-gather of one tensor is that tensor, a
reduction of one contribution is it, a scatter of one block is it). Send/Receive and the
point-to-point functions need a peer a world of one does not have: their samples are their
constructors' attributes and their argument refusals. The multi-rank runs are in
tests/test_comm_func.py, tests/test_communication.py and tests/test_comm3.py (mpiexec).
"""
from __future__ import annotations

import contextlib
import os

import numpy as np

from .core import Py, T, cell, op  # noqa: F401

# record under msrun with the communicator initialised (tools/record_conformance.py)
COMMUNICATOR = True

R = (3, 2)
# the environment init() exports (RANK_ID/RANK_SIZE/DEVICE_ID), put back when a sample's world is released
_ENV = ("RANK_ID", "RANK_SIZE", "DEVICE_ID")
ONE_RANK = ("oracle: the documented single-rank result (numpy): MindSpore 2.10 CPU has no kernel for this "
            "collective (or no 'hccl_world_group' for the *_object functions) in its one-rank world")


@contextlib.contextmanager
def _world(ms, init=None):
    """A world of one rank for the call: the recorder's msrun worker has one already; otherwise (the
    emulator's test process) ``init`` (default ``communication.init``) makes it and it is released after."""
    if ms.communication.GlobalComm.INITED:
        yield
        return
    saved = {k: os.environ.get(k) for k in _ENV}
    device = ms.get_context("device_id")
    try:
        (init or ms.communication.init)()
        yield
    finally:
        ms.communication.release()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if ms.get_context("device_id") != device:
            ms.set_context(device_id=device)


def _w(fn):
    """``fn`` run in a world of one rank."""
    def run(ms, *xs, **kw):
        with _world(ms):
            return fn(ms, *xs, **kw)
    return run


def _zeros(ms, x):
    return ms.Tensor(np.zeros(tuple(x.shape), np.float32))


def _same(ms, x, *_, **__):
    """The oracle of a one-rank collective primitive: its input."""
    return ms.Tensor(x.asnumpy())


def _inplace_same(ms, x, *_, **__):
    """The oracle of a one-rank in-place collective function: no handle, the output holds the input."""
    return None, ms.Tensor(x.asnumpy())


def _listed_same(ms, x, *_, **__):
    return None, [ms.Tensor(x.asnumpy())]


def _group(ms, fn):
    """``fn(group)`` on a new group of rank 0 (left to the world's release: MindSpore CPU cannot make a
    group again once it is destroyed, so only the last spec, destroy_process_group's, destroys it)."""
    return fn(ms.mint.distributed.new_group([0]))


def _params(ms, *xs):
    return [ms.Parameter(ms.Tensor(np.zeros(tuple(x.shape), np.float32)), name=f"w{i}") for i, x in enumerate(xs)]


def _d(name):
    """``mint.distributed.<name>(*xs, **kw)`` in a world of one rank."""
    return _w(lambda ms, *xs, **kw: getattr(ms.mint.distributed, name)(*xs, **kw))


def _destroy(ms, *args):
    """destroy_process_group of a new group of rank 0 (``args``: the call's, refused)."""
    d = ms.mint.distributed
    return d.destroy_process_group(*args) if args else d.destroy_process_group(d.new_group([0]))


def _new_group(ms, *args):
    """new_group([0]): its name (``args``: the call's, refused)."""
    return ms.mint.distributed.new_group(*args) if args else _group(ms, lambda g: g)


def _init_process_group(ms):
    d = ms.mint.distributed
    with _world(ms, init=d.init_process_group):
        return d.is_initialized(), d.get_rank(), d.get_world_size()


def _pipeline_grad_reducer(ms, x, y, **kw):
    return ms.nn.PipelineGradReducer(ms.ParameterTuple(_params(ms, x, y)), **kw)((x, y))


def _adasum(name):
    def build(ms, x):
        return getattr(ms.nn, name)(ms.nn.Momentum(_params(ms, x), 0.1, 0.9))
    return build


def _broadcast(ms, x, bare=False):
    """Broadcast takes a tuple of tensors (``bare``: the tensor itself, refused)."""
    return ms.ops.Broadcast(0)(x if bare else (x,))


def _receive(ms, dtype):
    p = ms.ops.Receive(3, 0, [3, 2], getattr(ms, dtype))
    return p.tag, p.rank, tuple(p.shape), p.dtype


def _p2p(ms, x, op="isend"):
    p = ms.mint.distributed.P2POp(op, x, 0)
    return p.op, p.peer, p.tag, p.tensor


def _into(name, *args, **fixed):
    """``mint.distributed.<name>(output, x, *args)`` on a zero output shaped like ``x``: (handle, output)."""
    def run(ms, x, shape=None, **kw):
        out = ms.Tensor(np.zeros(shape or tuple(x.shape), np.float32))
        return getattr(ms.mint.distributed, name)(out, x, *args, **fixed, **kw), out
    return _w(run)


def _into_list(name, *args, in_list=False):
    """``mint.distributed.<name>(outputs, x, *args)`` with ``count`` zero outputs: (handle, outputs);
    ``in_list``: the input is [x] too."""
    def run(ms, x, count=1, **kw):
        outs = [_zeros(ms, x) for _ in range(count)]
        return getattr(ms.mint.distributed, name)(outs, [x] if in_list else x, *args, **kw), outs
    return _w(run)


def _in_place(name, *args):
    """``mint.distributed.<name>(x, *args)`` writing into ``x``: (handle, x)."""
    def run(ms, x, *more, **kw):
        return getattr(ms.mint.distributed, name)(x, *args, *more, **kw), x
    return _w(run)


def _objects(call):
    """A ``*_object`` function: ``call(d, box)`` fills ``box``; (handle, box)."""
    def run(ms):
        box = [None]
        return call(ms.mint.distributed, box), box
    return _w(run)


def _gather(ms, x, count=1):
    """gather of ``x`` into ``count`` zero outputs at rank 0: (handle, outputs)."""
    outs = [_zeros(ms, x) for _ in range(count)]
    return ms.mint.distributed.gather(x, outs, 0), outs


def _scatter(ms, x, count=1):
    """scatter of ``count`` blocks ``x`` from rank 0 into a zero output: (handle, output)."""
    out = _zeros(ms, x)
    return ms.mint.distributed.scatter(out, [x] * count, 0), out


def _reduce_scatter(ms, x, **kw):
    """reduce_scatter of [x] into a zero output: (handle, output)."""
    out = _zeros(ms, x)
    return ms.mint.distributed.reduce_scatter(out, [x], **kw), out


def _objects_oracle(value):
    return lambda ms: (None, [value])


O = dict(grad=False, graph=False)
D = "mindspore.mint.distributed."
OBJ = {"a": [1, 2.5], "b": "x"}

SPECS: list = [
    # --- the primitives ---------------------------------------------------------------------------
    op("mindspore.ops.AllReduce", _w(lambda ms, x, **kw: ms.ops.AllReduce(**kw)(x)), shapes=[R],
       errors=[([R], {"op": 1})], **O),
    op("mindspore.ops.AllGather", _w(lambda ms, x, **kw: ms.ops.AllGather(**kw)(x)), shapes=[R],
       errors=[([R], {"group": 1})], **O),
    op("mindspore.ops.ReduceScatter", _w(lambda ms, x: ms.ops.ReduceScatter()(x)), shapes=[R], oracle=_same,
       note=ONE_RANK, **O),
    op("mindspore.ops.ReduceScatter", _w(lambda ms, x, **kw: ms.ops.ReduceScatter(**kw)(x)), errors=[([R], {"op": 1})],
       **O),
    op("mindspore.ops.AlltoAll", _w(lambda ms, x: ms.ops.AlltoAll(1, 0, 1)(x)), shapes=[R], oracle=_same,
       note=ONE_RANK, **O),
    op("mindspore.ops.AlltoAll", _w(lambda ms, x: ms.ops.AlltoAll(1.5, 0, 1)(x)), errors=[([R], {})], **O),
    op("mindspore.ops.Broadcast", _w(_broadcast), shapes=[R], errors=[([R], {"bare": True})], **O),
    # a world of one has no peer: Send/Receive's samples are their attributes (MindSpore's names)
    # (their ``group`` is the backend's world group: mccl_world_group on CPU, hccl_world_group on Ascend)
    op("mindspore.ops.Send", lambda ms: (lambda p: (p.sr_tag, p.rank))(ms.ops.Send(3, 0)), shapes=[[]],
       **O),
    op("mindspore.ops.Receive", _receive, shapes=[[]], kwargs={"dtype": "float32"},
       errors=[([], {"dtype": "bool_"})], **O),
    op("mindspore.ops.is_initialized", _w(lambda ms: ms.ops.is_initialized()), shapes=[[]], **O),
    # --- mint.distributed: process groups ---------------------------------------------------------
    op(D + "init_process_group", _init_process_group, shapes=[[]], oracle=lambda ms: (True, 0, 1),
       note="oracle: the documented single-rank result: MindSpore 2.10 CPU refuses the default backend 'hccl' "
            "('should be mccl to init CPU')", **O),
    op(D + "init_process_group", _d("init_process_group"), errors=[([Py("nccl")], {})], **O),
    op(D + "new_group", _w(_new_group), shapes=[[]], errors=[([Py((0,))], {})], **O),
    op(D + "get_backend", _d("get_backend"), shapes=[[]], errors=[([Py(1)], {})], **O),
    op(D + "get_rank", _d("get_rank"), shapes=[[]], errors=[([Py(1)], {})], **O),
    op(D + "get_world_size", _d("get_world_size"), shapes=[[]], errors=[([Py(1)], {})], **O),
    op(D + "get_process_group_ranks", _d("get_process_group_ranks"), shapes=[[]], errors=[([Py(1)], {})], **O),
    op(D + "get_global_rank", _w(lambda ms, r=0: _group(ms, lambda g: ms.mint.distributed.get_global_rank(g, r))),
       shapes=[[]], errors=[([], {"r": "0"})], **O),
    op(D + "get_group_rank", _w(lambda ms, r=0: _group(ms, lambda g: ms.mint.distributed.get_group_rank(g, r))),
       shapes=[[]], errors=[([], {"r": "0"})], **O),
    # --- mint.distributed: collectives MindSpore CPU runs ------------------------------------------
    op(D + "all_reduce", _in_place("all_reduce"), shapes=[R], kwargs={"op": "sum"}, errors=[([R], {"op": 1})], **O),
    op(D + "broadcast", _in_place("broadcast", 0), shapes=[R], errors=[([R], {"group": 1})], **O),
    op(D + "barrier", _d("barrier"), shapes=[[]], errors=[([], {"group": 1})], **O),
    op(D + "all_gather", _into_list("all_gather"), shapes=[R], errors=[([R], {"count": 2})], **O),
    op(D + "gather", _w(_gather), shapes=[R], errors=[([R], {"count": 2})], **O),
    op(D + "scatter", _w(_scatter), shapes=[R], errors=[([R], {"count": 2})], **O),
    op(D + "all_gather_object", _objects(lambda d, box: d.all_gather_object(box, OBJ)),
       shapes=[[]], **O),
    op(D + "all_gather_object", _d("all_gather_object"), errors=[([Py([None, None]), Py(OBJ)], {})], **O),
    # --- mint.distributed: collectives without a MindSpore CPU kernel (the oracle) ---------------
    op(D + "all_gather_into_tensor", _into("all_gather_into_tensor"), shapes=[R], oracle=_inplace_same,
       note=ONE_RANK, **O),
    op(D + "all_gather_into_tensor", _into("all_gather_into_tensor"), errors=[([R], {"shape": (4, 2)})], **O),
    op(D + "all_gather_into_tensor_uneven", _into("all_gather_into_tensor_uneven"), shapes=[R],
       kwargs={"output_split_sizes": [3]}, oracle=_inplace_same, note=ONE_RANK, **O),
    op(D + "all_gather_into_tensor_uneven", _into("all_gather_into_tensor_uneven"),
       errors=[([R], {"group": 1})], **O),
    op(D + "reduce_scatter_tensor", _into("reduce_scatter_tensor"), shapes=[R], kwargs={"op": "max"},
       oracle=_inplace_same, note=ONE_RANK, **O),
    op(D + "reduce_scatter_tensor", _into("reduce_scatter_tensor"), errors=[([R], {"shape": (2, 2)})], **O),
    op(D + "reduce_scatter_tensor_uneven", _into("reduce_scatter_tensor_uneven"), shapes=[R],
       kwargs={"input_split_sizes": [3]}, oracle=_inplace_same, note=ONE_RANK, **O),
    op(D + "reduce_scatter_tensor_uneven", _into("reduce_scatter_tensor_uneven"),
       errors=[([R], {"op": 1})], **O),
    op(D + "all_to_all_single", _into("all_to_all_single"), shapes=[R],
       kwargs={"output_split_sizes": [3], "input_split_sizes": [3]}, oracle=_inplace_same, note=ONE_RANK, **O),
    op(D + "all_to_all_single", _into("all_to_all_single"), errors=[([R], {"group": 1})], **O),
    op(D + "reduce", _in_place("reduce", 0), shapes=[R], kwargs={"op": "min"}, oracle=_inplace_same, note=ONE_RANK,
       **O),
    op(D + "reduce", _in_place("reduce", 0), errors=[([R], {"op": 1})], **O),
    op(D + "reduce_scatter", _w(_reduce_scatter), shapes=[R], oracle=_inplace_same, note=ONE_RANK, **O),
    op(D + "reduce_scatter", _w(_reduce_scatter), errors=[([R], {"op": 1})], **O),
    op(D + "all_to_all", _into_list("all_to_all", in_list=True), shapes=[R], oracle=_listed_same, note=ONE_RANK, **O),
    op(D + "all_to_all", _into_list("all_to_all", in_list=True), errors=[([R], {"group": 1})], **O),
    op(D + "broadcast_object_list",
       _w(lambda ms: (lambda box: (ms.mint.distributed.broadcast_object_list(box, 0), box))([OBJ, 3])),
       shapes=[[]], oracle=lambda ms: (None, [OBJ, 3]), note=ONE_RANK, **O),
    op(D + "broadcast_object_list", _d("broadcast_object_list"), errors=[([Py(OBJ), Py(0)], {})], **O),
    op(D + "gather_object", _objects(lambda d, box: d.gather_object(OBJ, box, 0)), shapes=[[]],
       oracle=_objects_oracle(OBJ), note=ONE_RANK, **O),
    op(D + "gather_object", _d("gather_object"), errors=[([Py(OBJ), Py([None]), Py("0")], {})], **O),
    op(D + "scatter_object_list", _objects(lambda d, box: d.scatter_object_list(box, [OBJ], 0)),
       shapes=[[]], oracle=_objects_oracle(OBJ), note=ONE_RANK, **O),
    op(D + "scatter_object_list", _d("scatter_object_list"), errors=[([Py(OBJ), Py([OBJ]), Py(0)], {})], **O),
    # --- mint.distributed: point to point (a world of one has no peer: the argument refusals) -------
    op(D + "P2POp", _p2p, shapes=[R], errors=[([R], {"op": "send"})], **O),
    op(D + "batch_isend_irecv", _d("batch_isend_irecv"), errors=[([Py([])], {})], **O),
    op(D + "send", _d("send"), errors=[([Py(1), Py(0)], {})], **O),
    op(D + "recv", _d("recv"), errors=[([Py(1), Py(0)], {})], **O),
    op(D + "isend", _d("isend"), errors=[([Py(1), Py(0)], {})], **O),
    op(D + "irecv", _d("irecv"), errors=[([Py(1), Py(0)], {})], **O),
    op(D + "send_object_list", _d("send_object_list"),
       errors=[([Py([OBJ]), Py(0)], {})], **O),
    op(D + "recv_object_list", _d("recv_object_list"),
       errors=[([Py(1), Py(0)], {})], **O),
    # --- nn -----------------------------------------------------------------------------------------
    op("mindspore.nn.DistributedGradReducer",
       _w(lambda ms, x, y, **kw: ms.nn.DistributedGradReducer(_params(ms, x, y), **kw)((x, y))),
       shapes=[[R, (4,)]], kwargs={"mean": True}, errors=[([R, (4,)], {"degree": 0})], **O),
    cell("mindspore.nn.PipelineCell", lambda ms, micro_size: ms.nn.PipelineCell(ms.nn.Dense(4, 3), micro_size),
         shapes=[(4, 4)], kwargs={"micro_size": 2}, errors=[((4, 4), {"micro_size": 0})]),
    # opt_shard=True: the gradients divided by scale_sense (MindSpore's shard_grad_scale); without it
    # MindSpore returns its accu_grads, which only pipeline-parallel compilation fills
    op("mindspore.nn.PipelineGradReducer", _pipeline_grad_reducer, shapes=[[R, (4,)]],
       kwargs={"scale_sense": 2.0, "opt_shard": True}, **O),
    op("mindspore.nn.AdaSumByGradWrapCell", _adasum("AdaSumByGradWrapCell"), errors=[(R, {})], **O),
    op("mindspore.nn.AdaSumByDeltaWeightWrapCell", _adasum("AdaSumByDeltaWeightWrapCell"), errors=[(R, {})], **O),
    # last: MindSpore CPU cannot make the group of rank 0 again once it is destroyed
    op(D + "destroy_process_group", _w(_destroy), shapes=[[]], errors=[([Py(1)], {})], **O),
]
