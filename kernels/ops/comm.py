"""Collective communication ops (AllReduce, AllGather, ReduceScatter, Broadcast, AlltoAll, Send, Receive,
Barrier): graph nodes
with shape rules and MindSpore's backward rules, but no kernel. Each stanza's ``communication`` names
the device collective (:mod:`ascendemu.device.collectives`) and its element count; the graph compiler
puts these nodes on a communication stream and the executor lowers them to the HAL's collective step.

Attributes as MindSpore's primitives carry them: ``group`` (the communicator's name), ``reduce_op``
(MindSpore's ``op``: "sum" | "prod" | "max" | "min"; renamed, ``op`` names the op itself in a
signature), ``rank_size`` (the group's size, which the shapes of AllGather, ReduceScatter and
AlltoAll depend on) and ``root_rank`` (Broadcast, a rank of the group). AlltoAll here exchanges
equal blocks along dimension 0; the front end reshapes around it for MindSpore's split_dim/concat_dim.
Send (``dest_rank``, ``sr_tag``) outputs an empty tensor, Receive (``src_rank``, ``shape``, ``dtype``)
and Barrier take no input; they have no backward rule here: pipeline parallelism
(``graph.parallel.pipeline``) sends the gradients back along the Send/Receive pairs itself. ``sr_tag``
(MindSpore's) tells one transfer from another; a Send does not wait for its receiver (``device.collectives``).
"""
from __future__ import annotations

from ascendemu.device.collectives import (AllGather, AllReduce, AllToAll, Barrier, Broadcast, Recv, ReduceOp,
                                          ReduceScatter, Send)
from ascendemu.kernels.signature import OpSignature, TensorDesc

from ..opdef import Communication, Exposure, GradBuilder, GradCall, OpDef
from .common import ANY, check_arity, check_dtype, fail

REDUCE_OPS = ("sum", "prod", "max", "min")


def _group(sig: OpSignature) -> str:
    group = sig.attr("group")
    if not isinstance(group, str) or not group:
        raise fail(sig, f"attribute group must be a communication group name, got {group!r}")
    return group


def _reduce_op(sig: OpSignature) -> ReduceOp:
    op = sig.attr("reduce_op", "sum")
    if op not in REDUCE_OPS:
        raise fail(sig, f"op {op!r} is not a reduce operation; use one of {REDUCE_OPS} (ReduceOp)")
    return ReduceOp[op.upper()]


def _rank_size(sig: OpSignature) -> int:
    n = sig.attr("rank_size")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise fail(sig, f"attribute rank_size must be the group's size (a positive int), got {n!r}")
    return n


def _checked(sig: OpSignature) -> TensorDesc:
    """The one input of a collective, checked, and the group attribute."""
    check_arity(sig, 1, ("x",))
    check_dtype(sig, 0, ANY, "x")
    _group(sig)
    return sig.inputs[0]


def infer_all_reduce(sig: OpSignature) -> tuple[TensorDesc, ...]:
    _reduce_op(sig)
    return (_checked(sig),)


def infer_broadcast(sig: OpSignature) -> tuple[TensorDesc, ...]:
    root = sig.attr("root_rank", 0)
    if not isinstance(root, int) or isinstance(root, bool) or root < 0:
        raise fail(sig, f"root_rank must be a non-negative int, got {root!r}")
    return (_checked(sig),)


def infer_all_gather(sig: OpSignature) -> tuple[TensorDesc, ...]:
    x, n = _checked(sig), _rank_size(sig)
    if not x.shape:
        raise fail(sig, "input x must have rank >= 1 (the ranks' tensors are concatenated along dimension 0)")
    return (TensorDesc((x.shape[0] * n, *x.shape[1:]), x.dtype),)


def _blocks(sig: OpSignature, what: str) -> tuple[TensorDesc, int]:
    x, n = _checked(sig), _rank_size(sig)
    if not x.shape or x.shape[0] % n:
        raise fail(sig, f"dimension 0 of input x {x.shape} must be divisible by the group size {n} ({what})")
    return x, n


def infer_reduce_scatter(sig: OpSignature) -> tuple[TensorDesc, ...]:
    _reduce_op(sig)
    x, n = _blocks(sig, "each rank receives one block")
    return (TensorDesc((x.shape[0] // n, *x.shape[1:]), x.dtype),)


def infer_all_to_all(sig: OpSignature) -> tuple[TensorDesc, ...]:
    x, _ = _blocks(sig, "one block per rank")
    return (x,)


def _rank_attr(sig: OpSignature, name: str) -> int:
    r = sig.attr(name)
    if not isinstance(r, int) or isinstance(r, bool) or r < 0:
        raise fail(sig, f"attribute {name} must be a rank of the group (a non-negative int), got {r!r}")
    return r


def infer_send(sig: OpSignature) -> tuple[TensorDesc, ...]:
    x = _checked(sig)
    _rank_attr(sig, "dest_rank")
    return (TensorDesc((0,), x.dtype),)


def infer_receive(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 0)
    _group(sig)
    _rank_attr(sig, "src_rank")
    shape, dtype = sig.attr("shape"), sig.attr("dtype")
    if not isinstance(shape, tuple) or any(not isinstance(d, int) or d < 0 for d in shape):
        raise fail(sig, f"attribute shape must be a tuple of non-negative ints, got {shape!r}")
    if dtype not in ANY:
        raise fail(sig, f"attribute dtype {dtype!r} is not one of {ANY}")
    return (TensorDesc(shape, dtype),)


def infer_barrier(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 0)
    _group(sig)
    return (TensorDesc((0,), "float32"),)


# -- backward rules (MindSpore's grad_comm_ops) -----------------------------------------------------
def _comm_attrs(sig: OpSignature, *names: str) -> dict:
    return {name: sig.attr(name) for name in names}


def grad_all_reduce(b: GradBuilder, c: GradCall) -> tuple[int]:
    """SUM: the gradient is the AllReduce(SUM) of dout. MAX/MIN: that, where this rank's input was
    the result. PROD: AllReduce(SUM)(dout * out) / x."""
    (dout,), (x,), (out,) = c.douts, c.inputs, c.outputs
    group = c.sig.attr("group")
    op = _reduce_op(c.sig)
    if op is ReduceOp.SUM:
        return (b.op("AllReduce", dout, reduce_op="sum", group=group),)
    if op is ReduceOp.PROD:
        return (b.op("Div", b.op("AllReduce", b.op("Mul", dout, out), reduce_op="sum", group=group), x),)
    mask = b.op("Cast", b.op("Equal", x, out), dst_type=b.desc(dout).dtype)
    return (b.op("Mul", b.op("AllReduce", dout, reduce_op="sum", group=group), mask),)


def grad_all_gather(b: GradBuilder, c: GradCall) -> tuple[int]:
    return (b.op("ReduceScatter", c.douts[0], reduce_op="sum", **_comm_attrs(c.sig, "group", "rank_size")),)


def grad_reduce_scatter(b: GradBuilder, c: GradCall) -> tuple[int]:
    if _reduce_op(c.sig) is not ReduceOp.SUM:
        raise fail(c.sig, "the backward of ReduceScatter supports only ReduceOp.SUM, as MindSpore's does")
    return (b.op("AllGather", c.douts[0], **_comm_attrs(c.sig, "group", "rank_size")),)


def grad_broadcast(b: GradBuilder, c: GradCall) -> tuple[int]:
    return (c.douts[0],)


def grad_all_to_all(b: GradBuilder, c: GradCall) -> tuple[int]:
    """Exchanging equal blocks along dimension 0 is its own inverse."""
    return (b.op("AlltoAll", c.douts[0], **_comm_attrs(c.sig, "group", "rank_size")),)


def _size(sig: OpSignature) -> int:
    return sig.inputs[0].size


def _received(sig: OpSignature) -> int:
    n = 1
    for d in sig.attr("shape"):
        n *= d
    return n


OPS = (
    OpDef("AllReduce", "hcom_all_reduce", infer_all_reduce, None, None, grad=grad_all_reduce,
          frontend=Exposure(("AllReduce",)),
          communication=Communication(lambda sig: AllReduce(_reduce_op(sig)), _size)),
    OpDef("AllGather", "hcom_all_gather", infer_all_gather, None, None, grad=grad_all_gather,
          frontend=Exposure(("AllGather",)), communication=Communication(lambda sig: AllGather(), _size)),
    OpDef("ReduceScatter", "hcom_reduce_scatter", infer_reduce_scatter, None, None, grad=grad_reduce_scatter,
          frontend=Exposure(("ReduceScatter",)),
          communication=Communication(lambda sig: ReduceScatter(_reduce_op(sig)),
                                      lambda sig: _size(sig) // _rank_size(sig))),
    OpDef("Broadcast", "hcom_broadcast", infer_broadcast, None, None, grad=grad_broadcast,
          frontend=Exposure(("Broadcast",)),
          communication=Communication(lambda sig: Broadcast(sig.attr("root_rank", 0)), _size)),
    OpDef("AlltoAll", "hcom_all_to_all", infer_all_to_all, None, None, grad=grad_all_to_all,
          frontend=Exposure(("AlltoAll",)),
          communication=Communication(lambda sig: AllToAll(), lambda sig: _size(sig) // _rank_size(sig))),
    OpDef("Send", "hcom_send", infer_send, None, None, frontend=Exposure(("Send",)),
          communication=Communication(lambda sig: Send(sig.attr("dest_rank")), _size)),
    OpDef("Receive", "hcom_receive", infer_receive, None, None, frontend=Exposure(("Receive",)),
          communication=Communication(lambda sig: Recv(sig.attr("src_rank")), _received)),
    OpDef("Barrier", "hcom_barrier", infer_barrier, None, None,
          communication=Communication(lambda sig: Barrier(), lambda sig: 0)),
)
