"""MindIR: MindSpore's own graph file (``mind_ir.proto``), written by ``export(..., file_format="MINDIR")``
and read by ``load`` for ``nn.GraphCell``.

A MindIR file is one ``ModelProto`` (schema ``mind_ir.proto``, recovered from MindSpore 2.10 by
``tools/gen_mind_ir_schema.py``): a graph of ``NodeProto``s whose ``op_type`` is ``REF::<name>``, a
reference into the model's ``primitives`` (MindSpore's primitive name and, for old-style primitives,
its attributes); ``Constant`` nodes carry scalars, tuples and literal tensors; parameters are
``TensorProto``s with their data (``raw_data``) and ``ref_key`` (the Parameter's name). MindSpore 2.10's
*primitive functions* (MatMul, BiasAdd, Softmax, BatchNorm, LayerNorm, Reshape ...) take their
settings as Constant inputs after their tensors, in the order of the generated primitive's
``__call__``; old-style primitives (Conv2D, MaxPool, AvgPool) keep them as attributes.

Export writes from the captured graph (as the ONNX export: eval mode, never the compiled graph, so no
fused node reaches the file), mirroring what real MindSpore writes for the same network: producer,
versions, names (``<graph>:<argument>``, ``<graph>:<parameter>``), each node's ``shape`` attribute
and MindSpore's primitive names, arguments and attributes; a node with several outputs is a tuple
read by ``TupleGetItem``, several graph outputs a ``MakeTuple``. MindSpore's side-effect plumbing
(``Load``, ``UpdateState``, ``Depend`` on a monad) is left out: an inference graph has no side effect.

Load reads any such file, real MindSpore's included, into a :class:`MindIRGraph`: a list of steps over
named values that ``nn.GraphCell`` runs through the front end's ops, captured as one GRAPH_MODE
graph. **A file is data**: it is read with a size bound, parsed by protobuf (whose nesting limit
bounds recursion), and every name it uses is looked up in fixed tables (``OPS``, ``STRUCTURAL``,
the dtype table): an unknown primitive is an :class:`UnsupportedPrimitiveError` naming it and its
node, a damaged or inconsistent file a :class:`MindIRFileError` (MindSpore's RuntimeError, "Load
MindIR failed"), never a crash. Encrypted files, external weight files and obfuscation are refused.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidFileError
from ascendemu.graph.ir import Graph, OpNode
from ascendemu.kernels.ops.conv import geometry as conv_geometry
from ascendemu.kernels.signature import OpSignature, TensorDesc
from ascendemu.units import GiB

from ..common.tensor import Tensor
from ..export_graph import (KWARGS, ExportTypeError, ExportValueError, capture_for_inference, check_inputs,
                           check_target, input_names_of, live)
from ..ops.primitive import apply_op
from ..unsupported import UnsupportedOpError
from ..version import MINDSPORE_VERSION
from . import mind_ir_pb2 as pb

__all__ = ["export_mindir", "write_mindir", "mindir_model", "load", "MindIRGraph", "MindIRFileError", "UnsupportedPrimitiveError",
           "OPS", "MINDIR_SUFFIX"]

MINDIR_SUFFIX = ".mindir"
# What MindSpore 2.10 writes in every file's header (mirrored, so the file reads as MindSpore's own).
IR_VERSION = "1.1"
PRODUCER = "MindSpore"
MIND_IR_VERSION = pb.IR_VERSION_WITH_SCALAR_GRAPH_HOLDER
# The largest file load reads: protobuf's own message limit is 2 GiB; MindSpore stores larger models'
# weights in external files, which are refused here.
MAX_FILE_BYTES = 2 * GiB - 1
# MindSpore's export keywords, and those that would change a MINDIR file in ways the emulator cannot
# (quant_mode, mean, std_dev concern quantisation-aware networks and change nothing here).
EXPORT_KWARGS = KWARGS
REFUSED_KWARGS = ("enc_key", "enc_mode", "dataset", "obf_config", "custom_func", "incremental")
# MindSpore's Format enum, as primitive functions take data_format.
FORMAT_NCHW = 0
# numpy dtype name <-> TensorProto.DataType
DATA_TYPES = {"float32": pb.TensorProto.FLOAT, "float16": pb.TensorProto.FLOAT16, "float64": pb.TensorProto.DOUBLE,
              "int8": pb.TensorProto.INT8, "int16": pb.TensorProto.INT16, "int32": pb.TensorProto.INT32,
              "int64": pb.TensorProto.INT64, "uint8": pb.TensorProto.UINT8, "bool": pb.TensorProto.BOOL}
NP_OF_DATA_TYPE = {code: name for name, code in DATA_TYPES.items()} | {pb.TensorProto.FLOAT64: "float64"}
MAX_RANK = 64
# numpy dtype name <-> MindSpore's TypeId (include/utils/data_type.h): how Cast names its target dtype
TYPE_IDS = {"bool": 30, "int8": 32, "int16": 33, "int32": 34, "int64": 35, "uint8": 37, "uint16": 38, "uint32": 39,
            "uint64": 40, "float16": 42, "float32": 43, "float64": 44, "bfloat16": 45}
DTYPE_OF_TYPE_ID = {code: name for name, code in TYPE_IDS.items()}
A = pb.AttributeProto


class MindIRFileError(InvalidFileError, RuntimeError):
    """A MindIR file that cannot be loaded (unreadable, truncated, damaged, inconsistent): an invalid
    file, and the RuntimeError MindSpore raises ("Load MindIR failed.")."""


class UnsupportedPrimitiveError(FeatureNotSupportedError, RuntimeError):
    """A MindIR node whose primitive (or whose setting of it) the emulator cannot run."""


# ------------------------------------------------------------------------------- attribute values

def _set_value(attr: Any, value: Any, element: bool = False) -> Any:
    """Fill AttributeProto ``attr`` with a Python value as MindSpore types it; returns ``attr``. A
    scalar is ``i``/``f``/``s``, but as an ``element`` of a tuple or list it is the one entry of
    ``ints``/``floats``/``strings`` (MindSpore's reader insists)."""
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        if element:
            attr.ints.append(int(value))
        else:
            attr.i = int(value)
        attr.type = A.BOOL if isinstance(value, (bool, np.bool_)) else A.INT64
    elif isinstance(value, (float, np.floating)):
        if element:
            attr.floats.append(float(value))
        else:
            attr.f = float(value)
        attr.type = A.FLOAT
    elif isinstance(value, str):
        if element:
            attr.strings.append(value.encode())
        else:
            attr.s = value.encode()
        attr.type = A.STRING
    elif isinstance(value, (tuple, list)):
        attr.type = A.TUPLE if isinstance(value, tuple) else A.LIST
        for v in value:
            _set_value(attr.values.add(), v, element=True)
    elif isinstance(value, np.ndarray):
        attr.type = A.TENSORS
        _fill_tensor(attr.tensors.add(), value, "value0")
    else:
        raise ExportValueError(f"For 'export', a MINDIR attribute cannot hold a {type(value).__name__}.")
    return attr


class _Monad:
    """MindSpore's UMonad/IOMonad value: side-effect ordering, nothing to compute."""


MONAD = _Monad()


def _value(attr: Any, where: str) -> Any:
    """The Python value of an AttributeProto (float32 values as their shortest decimal, so 1e-05
    reads back as 1e-05); a type outside the fixed table is a MindIRFileError."""
    t = attr.type      # a tuple's elements hold their scalar as the one entry of ints/floats/strings
    if t == A.BOOL:
        return bool(attr.ints[0] if attr.ints else attr.i)
    if t in (A.INT8, A.INT16, A.INT32, A.INT64, A.UINT8, A.UINT16, A.UINT32, A.UINT64):
        return int(attr.ints[0] if attr.ints else attr.i)
    if t == A.FLOAT:
        return float(str(np.float32(attr.floats[0] if attr.floats else attr.f)))
    if t == A.DOUBLE:
        return float(attr.doubles[0] if attr.doubles else attr.d)
    if t == A.STRING:
        return (attr.strings[0] if attr.strings else attr.s).decode("utf-8", "replace")
    if t in (A.TUPLE, A.LIST):
        return tuple(_value(v, where) for v in attr.values)
    if t == A.TENSORS and len(attr.tensors) == 1:
        return _array(attr.tensors[0], where)
    if t in (A.UMONAD, A.IOMONAD):
        return MONAD
    if t == A.NONE:
        return None
    raise MindIRFileError(f"Load MindIR failed: {where}: a value of attribute type "
                          f"{A.AttributeType.Name(t) if t in A.AttributeType.values() else t} is not supported.")


def _fill_tensor(t: Any, array: np.ndarray, name: str) -> None:
    array = np.asarray(array, order="C")          # (ascontiguousarray would make a 0-d array 1-d)
    t.dims.extend(array.shape)
    t.data_type = DATA_TYPES[array.dtype.name]
    t.name = name
    t.raw_data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def _array(t: Any, where: str) -> np.ndarray:
    """A TensorProto's data as an array, checked against its dims and type."""
    dtype = NP_OF_DATA_TYPE.get(t.data_type)
    if dtype is None:
        raise MindIRFileError(f"Load MindIR failed: {where}: tensor data type {t.data_type} is not supported.")
    if t.HasField("external_data"):
        raise FeatureNotSupportedError(f"load: {where} keeps its data in an external file "
                                       f"({t.external_data.location!r}); the emulator reads single-file MindIR only")
    shape = tuple(int(d) for d in t.dims)
    if len(shape) > MAX_RANK or any(d < 0 for d in shape):
        raise MindIRFileError(f"Load MindIR failed: {where}: bad tensor dims {shape[:MAX_RANK]}.")
    size = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    if len(t.raw_data) != size:
        raise MindIRFileError(f"Load MindIR failed: {where}: tensor {shape} {dtype} needs {size} bytes of data, "
                              f"the file holds {len(t.raw_data)}.")
    return np.frombuffer(t.raw_data, np.dtype(dtype).newbyteorder("<")).astype(dtype).reshape(shape)


def _shape_attr(attr: Any, descs: Sequence[TensorDesc]) -> None:
    """A node's ``shape`` attribute: its output's dims and type, a tuple of them for several outputs."""
    attr.name = "shape"

    def fill(a: Any, d: TensorDesc) -> None:
        a.type = A.TENSORS
        t = a.tensors.add()
        t.dims.extend(d.shape)
        t.data_type = DATA_TYPES[d.dtype]

    if len(descs) == 1:
        fill(attr, descs[0])
        return
    attr.type = A.TUPLE
    for d in descs:
        fill(attr.values.add(), d)
    attr.seq_info.is_dyn_len = False


# ---------------------------------------------------------------------------------- the op table

class Arg:
    """One setting of a primitive function, written as a Constant input after the tensors: our op's
    attribute ``attr`` (as is)."""

    def __init__(self, attr: str):
        self.attr = attr

    def to_ms(self, attrs: dict[str, Any]) -> Any:
        return attrs[self.attr]

    def from_ms(self, value: Any, attrs: dict[str, Any], where: str) -> None:
        attrs[self.attr] = value


class AxisArg(Arg):
    """An int axis of ours that MindSpore's primitive takes as a one-element tuple (Softmax)."""

    def to_ms(self, attrs: dict[str, Any]) -> Any:
        return (attrs[self.attr],)

    def from_ms(self, value: Any, attrs: dict[str, Any], where: str) -> None:
        if not isinstance(value, tuple) or len(value) != 1:
            raise UnsupportedPrimitiveError(f"load: {where}: {self.attr}={value!r}: only one axis is supported")
        attrs[self.attr] = value[0]


class FixedArg(Arg):
    """A setting our op does not carry: written as ``value``; a file with another value is refused
    unless ``checked`` is False (a setting that cannot change an inference result)."""

    def __init__(self, name: str, value: Any, checked: bool = True):
        super().__init__(name)
        self.value, self.checked = value, checked

    def to_ms(self, attrs: dict[str, Any]) -> Any:
        return self.value

    def from_ms(self, value: Any, attrs: dict[str, Any], where: str) -> None:
        if self.checked and value != self.value:
            raise UnsupportedPrimitiveError(f"load: {where}: {self.attr}={value!r} is not supported (only "
                                            f"{self.value!r})")


class FunctionOp:
    """A MindSpore 2.10 primitive function ``name`` computed by our op ``op``: ``tensors`` tensor
    inputs, then one Constant input per ``args`` entry. ``outputs`` is MindSpore's output count (a
    tuple when > 1) and ``kept`` how many of them our op computes (the first ones)."""

    prim_type = pb.PrimitiveProto.PRIMITIVE_FUNCTION
    packed = False        # the tensors come as one tuple (TupleFunctionOp)

    def __init__(self, name: str, tensors: int, args: Sequence[Arg] = (), outputs: int = 1, kept: int | None = None,
                 op: str | None = None, implied: dict[str, Any] | None = None):
        self.name, self.op, self.tensors, self.args = name, op or name, tensors, tuple(args)
        self.outputs, self.kept = outputs, outputs if kept is None else kept
        self.implied = dict(implied or {})      # our op's attributes that MindSpore's primitive implies

    def export(self, sig: OpSignature) -> tuple[list[Any], dict[str, Any]]:
        """(the Constant inputs, the primitive's attributes) for a node of ours."""
        attrs = dict(sig.attrs)
        return [a.to_ms(attrs) for a in self.args], {}

    def load(self, prim_attrs: dict[str, Any], consts: list[Any], where: str) -> dict[str, Any]:
        """Our op's attributes from the node's Constant inputs (``consts``, after the tensors)."""
        if len(consts) != len(self.args):
            raise MindIRFileError(f"Load MindIR failed: {where}: {self.name} takes {len(self.args)} setting(s) "
                                  f"after its {self.tensors} tensor(s), the node has {len(consts)}.")
        attrs: dict[str, Any] = dict(self.implied)
        for arg, value in zip(self.args, consts):
            arg.from_ms(value, attrs, where)
        return attrs


class TupleFunctionOp(FunctionOp):
    """A primitive function whose tensors come as one tuple (Concat): written as a MakeTuple node of
    the tensors, then the primitive on it."""

    packed = True


class CastOp(FunctionOp):
    """Cast: MindSpore's target dtype as its TypeId (a Constant input), with the input/output names
    MindSpore's Cast primitive carries as attributes."""

    def export(self, sig: OpSignature) -> tuple[list[Any], dict[str, Any]]:
        return [TYPE_IDS[sig.attr("dst_type")]], {"output_names": ["output"], "input_names": ["x", "dst_type"]}

    def load(self, prim_attrs: dict[str, Any], consts: list[Any], where: str) -> dict[str, Any]:
        if len(consts) != 1 or consts[0] not in DTYPE_OF_TYPE_ID:
            raise UnsupportedPrimitiveError(f"load: {where}: Cast to type id {consts[:1]!r} is not supported (only "
                                            f"{sorted(DTYPE_OF_TYPE_ID)})")
        return {"dst_type": DTYPE_OF_TYPE_ID[consts[0]]}


class ScalarFunctionOp(FunctionOp):
    """A primitive function of a tensor and a Python number (Muls): our binary op with the number
    as a literal tensor of the input's dtype. Read only; export writes the binary op."""

    def load(self, prim_attrs: dict[str, Any], consts: list[Any], where: str) -> dict[str, Any]:
        if len(consts) != 1 or not isinstance(consts[0], (int, float)):
            raise MindIRFileError(f"Load MindIR failed: {where}: {self.name} takes one number after its tensor.")
        return {"scalar": consts[0]}


class AttrOp(FunctionOp):
    """An old-style MindSpore primitive whose settings are attributes of its PrimitiveProto."""

    prim_type = pb.PrimitiveProto.PRIMITIVE


class Conv2DOp(AttrOp):
    """Conv2D: MindSpore's attributes (NCHW, 4-element stride/dilation, pad and pad_list as
    top, bottom, left, right; mode 1; group and groups)."""

    def export(self, sig: OpSignature) -> tuple[list[Any], dict[str, Any]]:
        g, a = conv_geometry(sig), dict(sig.attrs)
        return [], {"kernel_size": (g["kh"], g["kw"]), "mode": 1, "out_channel": g["oc"], "input_names": ["x", "w"],
                    "pad": tuple(a.get("pad", (0, 0, 0, 0))), "pad_mode": a.get("pad_mode", "valid"),
                    "format": "NCHW", "pad_list": (g["pt"], g["pb"], g["pl"], g["pr"]), "groups": g["group"],
                    "stride": (1, 1, g["sh"], g["sw"]), "group": g["group"], "dilation": (1, 1, g["dh"], g["dw"]),
                    "output_names": ["output"]}

    def load(self, prim_attrs: dict[str, Any], consts: list[Any], where: str) -> dict[str, Any]:
        if prim_attrs.get("format", "NCHW") != "NCHW" or prim_attrs.get("mode", 1) != 1:
            raise UnsupportedPrimitiveError(f"load: {where}: Conv2D format {prim_attrs.get('format')!r}, mode "
                                            f"{prim_attrs.get('mode')!r}: only NCHW, mode 1")
        try:
            return {"out_channel": prim_attrs["out_channel"], "kernel_size": tuple(prim_attrs["kernel_size"]),
                    "pad_mode": prim_attrs["pad_mode"].lower(), "pad": tuple(prim_attrs["pad"]),
                    "stride": tuple(prim_attrs["stride"])[-2:], "dilation": tuple(prim_attrs["dilation"])[-2:],
                    "group": prim_attrs.get("group", 1)}
        except (KeyError, TypeError, AttributeError) as e:
            raise MindIRFileError(f"Load MindIR failed: {where}: Conv2D attribute missing or malformed ({e}).") from e


class PoolOp(AttrOp):
    """MaxPool / AvgPool: MindSpore's NCHW attributes with 4-element kernel_size and strides."""

    def export(self, sig: OpSignature) -> tuple[list[Any], dict[str, Any]]:
        a = dict(sig.attrs)
        return [], {"pad_mode": a["pad_mode"].upper(), "output_names": ["output"],
                    "kernel_size": (1, 1) + tuple(a["kernel_size"]), "format": "NCHW",
                    "strides": (1, 1) + tuple(a["strides"]), "input_names": ["x"]}

    def load(self, prim_attrs: dict[str, Any], consts: list[Any], where: str) -> dict[str, Any]:
        if prim_attrs.get("format", "NCHW") != "NCHW":
            raise UnsupportedPrimitiveError(f"load: {where}: {self.name} format {prim_attrs['format']!r}: only NCHW")
        try:
            return {"kernel_size": tuple(prim_attrs["kernel_size"])[-2:], "strides": tuple(prim_attrs["strides"])[-2:],
                    "pad_mode": prim_attrs["pad_mode"].upper()}
        except (KeyError, TypeError, AttributeError) as e:
            raise MindIRFileError(f"Load MindIR failed: {where}: {self.name} attribute missing or malformed "
                                  f"({e}).") from e


def _unary(*names: str) -> list[FunctionOp]:
    return [FunctionOp(n, 1) for n in names]


def _binary(*names: str) -> list[FunctionOp]:
    return [FunctionOp(n, 2) for n in names]


# MindSpore primitive name -> how our op writes and reads it: the one fixed table both directions use.
# Each entry is checked against a file real MindSpore 2.10 wrote (tests/fixtures/mindir).
OPS: dict[str, FunctionOp] = {o.name: o for o in [
    *_unary("ReLU", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Sqrt", "Flatten", "Erf", "GeLU", "ReLU6"),
    *_binary("Add", "Sub", "Mul", "Div"),
    FunctionOp("MatMul", 2, [Arg("transpose_a"), Arg("transpose_b")]),
    FunctionOp("BatchMatMul", 2, [Arg("transpose_a"), Arg("transpose_b")]),
    FunctionOp("BiasAdd", 2, [FixedArg("data_format", FORMAT_NCHW)]),
    FunctionOp("Softmax", 1, [AxisArg("axis")]),
    FunctionOp("Reshape", 1, [Arg("shape")]),
    FunctionOp("Transpose", 1, [Arg("perm")]),
    FunctionOp("ReduceMean", 1, [Arg("axis"), Arg("keep_dims")]),
    FunctionOp("ReduceSum", 1, [Arg("axis"), Arg("keep_dims"), FixedArg("skip_mode", False)]),
    FunctionOp("LayerNorm", 3, [Arg("begin_norm_axis"), Arg("begin_params_axis"), Arg("epsilon")], outputs=3),
    # inference BatchNorm: the moving statistics; MindSpore's extra outputs are the training statistics
    FunctionOp("BatchNorm", 5, [FixedArg("is_training", False), Arg("epsilon"), FixedArg("momentum", 0.1, checked=False),
                                FixedArg("data_format", FORMAT_NCHW)], outputs=5, kept=1),
    ScalarFunctionOp("Muls", 1, [Arg("scalar")], op="Mul"),
    CastOp("Cast", 1),
    TupleFunctionOp("Concat", 1, [Arg("axis")]),
    # MindSpore's Gather refuses an out-of-range index (our kernel's status word reports it)
    FunctionOp("Gather", 2, [Arg("axis"), FixedArg("batch_dims", 0)], implied={"check_indices": True}),
    Conv2DOp("Conv2D", 2),
    PoolOp("MaxPool", 1),
    PoolOp("AvgPool", 1),
]}
# our op -> its entry (Muls is read only: our Mul is written as Mul)
EXPORTS = {o.op: o for o in OPS.values() if not isinstance(o, ScalarFunctionOp)}
# MindSpore's structural primitives: tuples and side-effect ordering, no computation
MAKE_TUPLE, TUPLE_GET_ITEM, LOAD, DEPEND, UPDATE_STATE = "MakeTuple", "TupleGetItem", "Load", "Depend", "UpdateState"
STRUCTURAL = (MAKE_TUPLE, TUPLE_GET_ITEM, LOAD, DEPEND, UPDATE_STATE)


# ------------------------------------------------------------------------------------------ export

def export_mindir(net: Any, inputs: tuple, file_name: str, kwargs: dict[str, Any]) -> None:
    """``mindspore.export(..., file_format="MINDIR", **kwargs)``: MindSpore's keywords checked; those
    that would change the file (encryption, obfuscation, a dataset's preprocessing) are refused."""
    unknown = sorted(set(kwargs) - set(EXPORT_KWARGS))
    if unknown:
        raise ExportTypeError(f"For 'export', unexpected keyword argument(s) {unknown}; MindSpore's export takes "
                              f"{list(EXPORT_KWARGS)}.")
    refused = sorted(k for k in kwargs if k in REFUSED_KWARGS)
    if refused:
        raise FeatureNotSupportedError(f"export: MINDIR with {refused} is not supported by the emulator (encryption, "
                                       f"obfuscation and dataset preprocessing are MindSpore's own); export without")
    write_mindir(net, inputs, file_name)


def write_mindir(net: Any, inputs: tuple, file_name: str) -> None:
    """``mindspore.export(net, *inputs, file_name=..., file_format="MINDIR")``: ".mindir" appended when
    missing, written atomically and left read-only, as checkpoints are."""
    path = check_target(net, inputs, file_name, MINDIR_SUFFIX)
    data = mindir_model(net, *inputs).SerializeToString()

    from ascendemu.cache.atomic import publish_atomic   # the cache package loads on first export only

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)

    publish_atomic(path, write, stat.S_IRUSR)


def mindir_model(net: Any, *inputs: Any) -> Any:
    """The ``ModelProto`` that exporting ``net`` on ``inputs`` writes."""
    check_inputs(inputs)
    graph = capture_for_inference(net, inputs)
    return _Writer(graph, f"{graph.name}_construct").model(input_names_of(net, inputs))


class _Writer:
    """The MindIR of one captured Graph: names every value once, emits nodes and primitives."""

    def __init__(self, graph: Graph, name: str):
        self.graph, self.gname = graph, name
        self.model_proto = pb.ModelProto(ir_version=IR_VERSION, producer_name=PRODUCER, model_version=MINDSPORE_VERSION,
                                         little_endian=True, mind_ir_version=MIND_IR_VERSION)
        self.g = self.model_proto.graph
        self.g.name = name
        self.names: dict[int, str] = {}
        self.live: set[int] = set()
        self.prims: dict[tuple, str] = {}
        self.count = 0

    def fresh(self, stem: str = "CNode") -> str:
        self.count += 1
        return f"{self.gname}:{stem}_{self.count}:{self.count}"

    def primitive(self, name: str, prim_type: int, attrs: dict[str, Any]) -> str:
        """The REF name of a primitive: one per primitive function, one per attribute set otherwise."""
        key = (name, repr(sorted(attrs.items())))
        if key not in self.prims:
            ref = f"{name}:{len(self.prims) + 1}"
            p = self.model_proto.primitives.add(name=ref, op_type=name, instance_name="", prim_type=prim_type)
            for k, v in attrs.items():
                _set_value(p.attribute.add(name=k), v)
            self.prims[key] = ref
        return self.prims[key]

    def constant(self, value: Any) -> str:
        self.count += 1
        name = f"ValueNode_{self.count}"
        node = self.g.node.add(name=name, op_type="Constant")
        node.output.append(name)
        _set_value(node.attribute.add(name="value"), value)
        return name

    def node(self, prim: str, prim_type: int, attrs: dict[str, Any], inputs: list[str], descs: Sequence[TensorDesc],
             scope: str) -> str:
        out = self.fresh()
        node = self.g.node.add(name=out, op_type=f"REF::{self.primitive(prim, prim_type, attrs)}", domain=scope)
        node.input.extend(inputs)
        node.output.append(out)
        _shape_attr(node.attribute.add(), descs)
        return out

    def value_name(self, v: int) -> str:
        """The name of value ``v``; a literal constant is written as a Constant node when first read."""
        if v not in self.names:
            d = self.graph.values[v]
            self.names[v] = self.constant(np.asarray(self.graph.constants[v].data).astype(d.dtype).reshape(d.shape))
        return self.names[v]

    def model(self, input_names: list[str]) -> Any:
        g = self.graph
        for v, name in zip(g.inputs, input_names):
            self.names[v] = f"{self.gname}:{name}"
            info = self.g.input.add(name=self.names[v])
            _desc_tensor(info.tensor.add(), g.values[v])
        self.live, live_nodes = live(g)
        for v, c in g.constants.items():
            if not c.is_parameter or v not in self.live:   # literals: Constant nodes where first read
                continue
            d = g.values[v]
            self.names[v] = f"{self.gname}:{c.name}"
            t = self.g.parameter.add()
            _fill_tensor(t, np.asarray(c.data).astype(d.dtype, copy=False).reshape(d.shape), self.names[v])
            t.ref_key, t.compression_type = c.name, pb.TensorProto.NO_COMPRESSION
        for n in g.nodes:
            if n.id in live_nodes:
                self.op(n)
        outs = [self.value_name(v) for v in g.outputs]
        descs = [g.values[v] for v in g.outputs]
        if len(outs) == 1:
            out = outs[0]
        else:
            out = self.node(MAKE_TUPLE, pb.PrimitiveProto.PRIMITIVE, {}, outs, descs, "Default/MakeTuple")
        info = self.g.output.add(name=out)
        if len(outs) == 1:
            _desc_tensor(info.tensor.add(), descs[0])
        else:
            info.denotation = "Tuple"
            _shape_attr(info.attr_info, descs)
            info.attr_info.ClearField("name")
        return self.model_proto

    def op(self, n: OpNode) -> None:
        g = self.graph
        if n.op == "StopGradient":          # the identity at inference
            self.names[n.outputs[0]] = self.value_name(n.inputs[0])
            return
        scalar = _scalar_operand(g, n)
        if scalar is not None:              # x * <Python number>: MindSpore's Muls, as it writes it
            self.names[n.outputs[0]] = self.node("Muls", OPS["Muls"].prim_type, {},
                                                 [self.value_name(n.inputs[0]), self.constant(scalar)],
                                                 [g.values[n.outputs[0]]], n.full_name)
            return
        entry = EXPORTS.get(n.op)
        if entry is None:
            raise UnsupportedOpError(
                f"export: op {n.op} (node {n.full_name}) has no MINDIR form here; the MINDIR export supports "
                f"{', '.join(sorted(EXPORTS) + ['StopGradient'])}. Export the network without it, or as ONNX")
        sig = n.signature(g)
        consts, attrs = entry.export(sig)
        inputs = [self.value_name(v) for v in n.inputs]
        if entry.packed:                      # Concat: its tensors as one tuple
            inputs = [self.node(MAKE_TUPLE, pb.PrimitiveProto.PRIMITIVE, {}, inputs, [g.values[v] for v in n.inputs],
                                n.full_name)]
        inputs += [self.constant(c) for c in consts]
        descs = [g.values[v] for v in n.outputs]
        if entry.outputs > len(descs):        # MindSpore's extra outputs (BatchNorm's training statistics)
            c = descs[0].shape[1]
            descs += [TensorDesc((c,), descs[0].dtype)] * (entry.outputs - len(descs))
        out = self.node(entry.name, entry.prim_type, attrs, inputs, descs, n.full_name)
        if entry.outputs == 1:
            self.names[n.outputs[0]] = out
            return
        for i, v in enumerate(n.outputs):
            if v in self.live:
                self.names[v] = self.node(TUPLE_GET_ITEM, pb.PrimitiveProto.PRIMITIVE, {}, [out, self.constant(i)],
                                          [g.values[v]], n.full_name)


def _scalar_operand(graph: Graph, n: OpNode) -> float | None:
    """The number a float Mul multiplies by, if its second operand is a 0-d literal (what capture
    makes of ``tensor * 0.5``), else None."""
    if n.op != "Mul" or len(n.inputs) != 2:
        return None
    c = graph.constants.get(n.inputs[1])
    d = graph.values[n.inputs[1]]
    if c is None or c.is_parameter or d.shape != () or d.dtype != graph.values[n.inputs[0]].dtype \
            or not np.issubdtype(np.dtype(d.dtype), np.floating):
        return None
    return float(np.asarray(c.data))


def _desc_tensor(t: Any, desc: TensorDesc) -> None:
    t.dims.extend(desc.shape)
    t.data_type = DATA_TYPES[desc.dtype]


# -------------------------------------------------------------------------------------------- load

@dataclass(frozen=True)
class OpStep:
    """Apply our op ``op`` (attributes ``attrs``) to the values named ``inputs``; its outputs are
    ``output`` (a tuple of them when MindSpore's primitive has several: ``outputs`` long, ours first)."""

    op: str
    attrs: dict[str, Any]
    inputs: tuple[str, ...]
    output: str
    outputs: int
    scalar: float | None = None
    packed: bool = False           # the one input is a tuple of the op's tensors (Concat)

    def run(self, env: dict[str, Any]) -> None:
        if self.packed and not isinstance(env[self.inputs[0]], tuple):
            raise MindIRFileError(f"Load MindIR failed: {self.op} takes a tuple of tensors (a MakeTuple), the file "
                                  f"gives {self.inputs[0]!r}.")
        args = list(env[self.inputs[0]]) if self.packed else [env[i] for i in self.inputs]
        if self.scalar is not None:
            args.append(Tensor(np.asarray(self.scalar, dtype=args[0].dtype.np_type)))
        outs = apply_op(self.op, args, self.attrs)
        env[self.output] = outs[0] if self.outputs == 1 else tuple(outs) + (None,) * (self.outputs - len(outs))


@dataclass(frozen=True)
class TupleStep:
    """MakeTuple: the named values as one tuple."""

    inputs: tuple[str, ...]
    output: str

    def run(self, env: dict[str, Any]) -> None:
        env[self.output] = tuple(env[i] for i in self.inputs)


@dataclass(frozen=True)
class GetItemStep:
    """TupleGetItem with a constant index; an output of MindSpore's our op does not compute is refused."""

    input: str
    index: int
    output: str
    where: str

    def run(self, env: dict[str, Any]) -> None:
        value = env[self.input]
        if not isinstance(value, tuple) or not 0 <= self.index < len(value) or value[self.index] is None:
            raise UnsupportedPrimitiveError(f"load: {self.where}: output {self.index} of this tuple is not "
                                            f"computed by the emulator (only an inference graph's outputs are)")
        env[self.output] = value[self.index]


@dataclass(frozen=True)
class AliasStep:
    """Load (a parameter read under a monad) and Depend (a value ordered after another): the value
    itself, since an inference graph has no side effect to order."""

    input: str
    output: str

    def run(self, env: dict[str, Any]) -> None:
        env[self.output] = env[self.input]


Step = OpStep | TupleStep | GetItemStep | AliasStep


@dataclass
class MindIRGraph:
    """What ``load`` returns and ``nn.GraphCell`` runs: the graph's input names and descs, its
    parameters (name -> array, by ``ref_key``: the network's parameter names), its constants, its
    steps in order and the name of its output."""

    name: str
    inputs: list[tuple[str, TensorDesc]]
    parameters: dict[str, np.ndarray]
    param_values: dict[str, str]           # value name in the file -> parameter name
    constants: dict[str, Any]
    steps: list[Step]
    output: str

    def run(self, args: Sequence[Any], params: dict[str, Any]) -> Any:
        """Compute the graph on ``args`` (Tensors) with ``params`` (name -> Parameter)."""
        if len(args) != len(self.inputs):
            raise ValueError(f"For 'GraphCell', the graph {self.name} takes {len(self.inputs)} input(s), but got "
                             f"{len(args)}.")
        env: dict[str, Any] = {}
        for value, name in self.param_values.items():
            env[value] = params[name]
        env.update(self.constants)
        for (name, _), a in zip(self.inputs, args):
            env[name] = a
        for step in self.steps:
            step.run(env)
        return env[self.output]


def load(file_name: str, **kwargs: Any) -> MindIRGraph:
    """``mindspore.load(file_name, dec_key=None, dec_mode="AES-GCM", obf_func=None)``."""
    unknown = sorted(set(kwargs) - {"dec_key", "dec_mode", "obf_func"})
    if unknown:
        raise TypeError(f"For 'load', unexpected keyword argument(s) {unknown}.")
    if not isinstance(file_name, str):
        raise ValueError(f"For 'load', the argument 'file_name' must be string, but got {type(file_name)}.")
    if not file_name.endswith(MINDIR_SUFFIX):
        raise ValueError("For 'load', the argument 'file_name'(MindIR file) should end with '.mindir', please input "
                         "the correct 'file_name'.")
    if kwargs.get("dec_key") is not None:
        raise FeatureNotSupportedError("load: encrypted MindIR (dec_key) is not supported by the emulator: "
                                       "MindSpore's cipher framing is undocumented; export without enc_key")
    if kwargs.get("obf_func") is not None:
        raise FeatureNotSupportedError("load: obfuscated MindIR (obf_func) is not supported by the emulator")
    path = os.path.realpath(file_name)
    if not os.path.exists(path):
        raise ValueError(f"For 'load', the argument 'file_name'({file_name}) does not exist, please check whether "
                         f"the 'file_name' is correct.")
    return graph_of(parse(_read(path), path))


def _read(path: str) -> bytes:
    """The file's bytes: a regular file (a FIFO or device is refused, never waited on) of at most
    MAX_FILE_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise MindIRFileError(f"Load MindIR failed: cannot open {path}: {e.strerror or e}.") from e
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise MindIRFileError(f"Load MindIR failed: {path} is not a regular file (a FIFO, device or socket).")
        if st.st_size > MAX_FILE_BYTES:
            raise MindIRFileError(f"Load MindIR failed: {path} is {st.st_size} bytes, more than protobuf's "
                                  f"{MAX_FILE_BYTES}; MindSpore keeps larger models' weights in external files.")
        os.set_blocking(fd, True)
        return f.read(MAX_FILE_BYTES + 1)


def parse(data: bytes, path: str = "<bytes>") -> Any:
    """A ModelProto from a file's bytes; anything that is not one is a MindIRFileError."""
    from google.protobuf.message import DecodeError

    model = pb.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RecursionError, ValueError) as e:
        raise MindIRFileError(f"Load MindIR failed: {path} is not a MindIR file, or it is truncated or damaged "
                              f"({type(e).__name__}: {e}); export it again.") from e
    if not model.HasField("graph") or not model.graph.output:
        raise MindIRFileError(f"Load MindIR failed: {path} holds no graph with an output; export it again.")
    return model


def graph_of(model: Any) -> MindIRGraph:
    """The steps of a parsed model's graph; every name and primitive checked as it is read."""
    g = model.graph
    prims = {p.name: p for p in model.primitives}
    known: set[str] = set()
    inputs = []
    for info in g.input:
        if len(info.tensor) != 1:
            raise MindIRFileError(f"Load MindIR failed: graph input {info.name!r} is not one tensor.")
        t = info.tensor[0]
        if t.data_type not in NP_OF_DATA_TYPE or len(t.dims) > MAX_RANK:
            raise MindIRFileError(f"Load MindIR failed: graph input {info.name!r} has an unsupported type or rank.")
        inputs.append((info.name, TensorDesc(tuple(int(d) for d in t.dims), NP_OF_DATA_TYPE[t.data_type])))
        known.add(info.name)
    parameters, param_values = {}, {}
    for t in g.parameter:
        name = t.ref_key or t.name.rsplit(":", 1)[-1]
        parameters[name] = _array(t, f"parameter {t.name!r}")
        param_values[t.name] = name
        known.add(t.name)
    constants: dict[str, Any] = {}
    steps: list[Step] = []
    for node in g.node:
        where = f"node {node.name!r}"
        if len(node.output) != 1:
            raise MindIRFileError(f"Load MindIR failed: {where} has {len(node.output)} outputs (MindIR nodes have one).")
        out = node.output[0]
        if node.op_type == "Constant":
            if len(node.attribute) != 1:
                raise MindIRFileError(f"Load MindIR failed: {where}: a Constant holds one value.")
            value = _value(node.attribute[0], where)
            constants[out] = Tensor(value) if isinstance(value, np.ndarray) else value
            known.add(out)
            continue
        for i in node.input:
            if i not in known:
                raise MindIRFileError(f"Load MindIR failed: {where} reads {i!r}, which no input, parameter or "
                                      f"earlier node defines.")
        prim_name, prim_attrs = _primitive(node, prims, where)
        steps.append(_step(prim_name, prim_attrs, node, constants, where))
        known.add(out)
    output = g.output[0].name
    if len(g.output) != 1 or output not in known:
        raise MindIRFileError(f"Load MindIR failed: the graph's output {output!r} is not one value the graph defines.")
    return MindIRGraph(g.name, inputs, parameters, param_values, constants, steps, output)


def _primitive(node: Any, prims: dict[str, Any], where: str) -> tuple[str, dict[str, Any]]:
    """(MindSpore primitive name, its attributes) of a node: a REF:: into the model's primitives, or
    (older files) the name itself with the attributes on the node."""
    if node.op_type.startswith("REF::"):
        p = prims.get(node.op_type[len("REF::"):])
        if p is None:
            raise MindIRFileError(f"Load MindIR failed: {where} refers to primitive {node.op_type!r}, which the "
                                  f"file does not define.")
        return p.op_type, {a.name: _value(a, where) for a in p.attribute}
    return node.op_type, {a.name: _value(a, where) for a in node.attribute if a.name != "shape"}


def _step(prim: str, prim_attrs: dict[str, Any], node: Any, constants: dict[str, Any], where: str) -> Step:
    ins, out = tuple(node.input), node.output[0]
    if prim == MAKE_TUPLE:
        return TupleStep(ins, out)
    if prim in (LOAD, DEPEND):
        if not ins:
            raise MindIRFileError(f"Load MindIR failed: {where}: {prim} without inputs.")
        return AliasStep(ins[0], out)
    if prim == UPDATE_STATE:
        return AliasStep(ins[0], out) if ins else TupleStep((), out)
    if prim == TUPLE_GET_ITEM:
        if len(ins) != 2 or not isinstance(constants.get(ins[1]), int):
            raise MindIRFileError(f"Load MindIR failed: {where}: TupleGetItem takes a tuple and a constant index.")
        return GetItemStep(ins[0], constants[ins[1]], out, where)
    entry = OPS.get(prim)
    if entry is None:
        raise UnsupportedPrimitiveError(
            f"load: {where} applies primitive {prim!r}, which the emulator cannot run; it runs "
            f"{', '.join(sorted(OPS) + list(STRUCTURAL))}")
    tensors, settings = ins[:entry.tensors], ins[entry.tensors:]
    if len(tensors) != entry.tensors or any(s not in constants for s in settings):
        raise MindIRFileError(f"Load MindIR failed: {where}: {prim} takes {entry.tensors} tensor(s) and then "
                              f"constant settings.")
    attrs = entry.load(prim_attrs, [constants[s] for s in settings], where)
    scalar = attrs.pop("scalar", None) if isinstance(entry, ScalarFunctionOp) else None
    return OpStep(entry.op, attrs, tensors, out, entry.outputs, scalar, entry.packed)
