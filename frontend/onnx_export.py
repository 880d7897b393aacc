"""``mindspore.export``: a network and sample inputs as an ONNX model file.

The model is built from the graph the front end captures (``common.api.capture``), not from a
compiled one: export sees the unoptimised nodes, so fused nodes (FusedElemwise, MatMul epilogues)
never occur, and nothing is compiled or run. As MindSpore does, a Cell is captured in eval mode
(``set_train(False)``; every cell's own mode is restored afterwards), so BatchNorm reads its moving
statistics and ``nn.Dropout`` is the identity. Names follow MindSpore's ONNX exporter: graph inputs
are named after ``construct``'s arguments, initializers after the parameters, other values by number.

Each captured op has one lowering in ``LOWERINGS`` (ONNX opset ``ONNX_OPSET``; LayerNormalization
is opset 17's, Reduce* take their axes as an input as in opset 18); GeLU is written out in its tanh
form, the form the device computes. An op without a lowering raises UnsupportedOpError naming it
and the exportable subset. Only what the outputs need is exported: state updates (BatchNorm
statistics, dropout generator offsets) are no part of an inference model.

The file is written as checkpoints are (``cache.atomic.publish_atomic``): to a temp file beside the
target, fsynced, made read-only (as MindSpore leaves it) and renamed over ``file_name`` + ".onnx",
so a failed export leaves the previous file (or none), never a torn one.
"""
from __future__ import annotations

import stat
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ascendemu.errors import FeatureNotSupportedError
from ascendemu.graph.ir import Graph
from ascendemu.kernels.ops.common import check_format, norm_axis
from ascendemu.kernels.ops.conv import geometry as conv_geometry
from ascendemu.kernels.ops.misc import split_sections, transpose_perm, window
from ascendemu.kernels.ops.norm import BN_EPSILON, LN_EPSILON, bn_training, layer_norm_axes, softmax_axis
from ascendemu.kernels.ops.pool import pool_geometry
from ascendemu.kernels.ops.reduce import reduce_axes
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import log
from .export_graph import (KWARGS, ExportTypeError, ExportValueError, capture_for_inference, check_target,
                           input_names_of, live)
from .unsupported import UnsupportedOpError

__all__ = ["export", "write_onnx", "onnx_model", "check_target", "ExportTypeError", "ExportValueError", "OnnxCall", "LOWERINGS", "ONNX_OPSET"]

FORMATS = ("AIR", "ONNX", "MINDIR")
ONNX_SUFFIX = ".onnx"
ONNX_OPSET = 18
ONNX_IR_VERSION = 8           # the IR version of opset 18 (onnx 1.13): runtimes from then on load it
PRODUCER = "ascendemu"
MINDSPORE_ENC_MODES = ("AES-GCM", "AES-CBC", "SM4-CBC")
GELU_SQRT_2_OVER_PI = 0.7978845608028654
GELU_CUBIC = 0.044715


# ------------------------------------------------------------------------------------------ export

def export(net: Any, *inputs: Any, file_name: str, file_format: str, **kwargs: Any) -> None:
    """Write ``net`` applied to ``inputs`` as ``file_name`` (".onnx" appended when missing).

    ``inputs``: the network's arguments; Tensors become graph inputs of their shape and dtype (their
    values are not used), other arguments (numbers, bools, tuples) are baked in as at capture.
    ``file_format`` must be "ONNX" here ("MINDIR" is ``train.mindir``'s, reached through
    ``mindspore.export``; "AIR" is Ascend's own IR, which only the real compiler produces). ``kwargs``: MindSpore's; ``enc_key`` (bytes) with a
    callable ``enc_mode(model_bytes, enc_key) -> bytes`` encrypts the file (ONNX takes customised
    encryption only, as in MindSpore).
    """
    if file_format not in FORMATS:
        raise ExportValueError(f"For 'export', 'file_format' must be one of {list(FORMATS)}, but got {file_format!r}.")
    if file_format != "ONNX":       # MINDIR: mindspore.export (train.serialization) writes it with train.mindir
        raise FeatureNotSupportedError(
            f"export: file_format={file_format!r} is not supported by the emulator: AIR is the real CANN "
            f"compiler's own graph format. Export with file_format='ONNX' or file_format='MINDIR'")
    encrypt = _check_kwargs(kwargs)
    log.warning("mindspore.export(file_format='ONNX') will be deleted, please use mindspore.onnx.export()")
    write_onnx(net, inputs, file_name, encrypt)


def write_onnx(net: Any, inputs: tuple, file_name: str, encrypt: Callable[[bytes], bytes] | None = None,
               input_names: Sequence[str] = ()) -> None:
    """What both ``mindspore.export(..., file_format='ONNX')`` and ``mindspore.onnx.export`` do: check the
    target, build the model (graph inputs named ``input_names``, else after ``construct``'s arguments),
    encrypt it if asked, write it atomically."""
    path = check_target(net, inputs, file_name, ONNX_SUFFIX)
    data = onnx_model(net, *inputs, input_names=input_names).SerializeToString()
    if encrypt is not None:
        data = encrypt(data)

    from ascendemu.cache.atomic import publish_atomic   # the cache package loads on first export only

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)

    publish_atomic(path, write, stat.S_IRUSR)


def onnx_model(net: Any, *inputs: Any, input_names: Sequence[str] = ()) -> Any:
    """The ``onnx.ModelProto`` that :func:`export` writes (checked with ``onnx.checker``); ``input_names``
    name the Tensor inputs (default: ``construct``'s argument names)."""
    import onnx

    graph = capture_for_inference(net, inputs)
    names = input_names_of(net, inputs)
    if input_names:
        if len(input_names) != len(names) or len(set(input_names)) != len(input_names):
            raise ExportValueError(f"For 'export', 'input_names' must name each of the {len(names)} Tensor input(s) "
                                   f"once, but got {list(input_names)}.")
        names = list(input_names)
    model = _Builder(onnx, graph).model(names)
    onnx.checker.check_model(model)
    return model


def _check_kwargs(kwargs: dict[str, Any]) -> Callable[[bytes], bytes] | None:
    """Check MindSpore's keyword options; the encryption the file gets, if any."""
    unknown = sorted(set(kwargs) - set(KWARGS))
    if unknown:
        raise ExportTypeError(f"For 'export', unexpected keyword argument(s) {unknown}; MindSpore's export takes "
                              f"{list(KWARGS)}.")
    if "obf_config" in kwargs:
        raise ExportValueError("Dynamic obfuscation only support for MindIR format, but got ONNX format.")
    if "enc_key" not in kwargs:
        return None
    key, mode = kwargs["enc_key"], kwargs.get("enc_mode", "AES-GCM")
    if not isinstance(key, bytes):
        raise ExportTypeError(f"For 'export', 'enc_key' must be bytes, but got {type(key).__name__}.")
    if not callable(mode):
        if not isinstance(mode, str):
            raise ExportTypeError(f"For 'export', 'enc_mode' must be a str or a function, but got "
                                  f"{type(mode).__name__}.")
        raise ExportValueError(f"AIR/ONNX only support customized encryption, but got {mode}: pass "
                               f"enc_mode=f(model_bytes, enc_key) -> bytes ({MINDSPORE_ENC_MODES} are MINDIR's).")

    def encrypt(data: bytes) -> bytes:
        out = mode(data, key)
        if not isinstance(out, bytes):
            raise ExportTypeError(f"For 'export', the encryption function 'enc_mode' must return bytes, "
                                  f"but returned {type(out).__name__}.")
        return out

    return encrypt


# ---------------------------------------------------------------------------------------- building

@dataclass(frozen=True)
class OnnxCall:
    """One captured node as its lowering sees it: the signature (input descs, attributes), the ONNX
    names of its inputs and outputs ("" for an output nothing reads, ONNX's mark of an omitted
    output) and its output descs."""

    sig: OpSignature
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    out_descs: tuple[TensorDesc, ...]


class _Builder:
    """The ONNX graph of one captured Graph: its nodes and initializers, one unique name per value."""

    def __init__(self, onnx: Any, graph: Graph):
        self.onnx, self.graph = onnx, graph
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.scope = graph.name          # the captured node being lowered (names the ONNX nodes, errors)
        self._taken: set[str] = set()
        self._next = 0

    def claim(self, name: str) -> str:
        """``name``, or ``name_k`` if it is taken."""
        unique, k = name, 1
        while unique in self._taken:
            unique, k = f"{name}_{k}", k + 1
        self._taken.add(unique)
        return unique

    def fresh(self) -> str:
        """The next free number, MindSpore's name for a computed value."""
        while str(self._next) in self._taken:
            self._next += 1
        return self.claim(str(self._next))

    def node(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str] | None = None, **attrs: Any) -> str:
        """Append an ONNX node (one fresh output unless ``outputs`` are given); its first output."""
        outs = list(outputs) if outputs is not None else [self.fresh()]
        self.nodes.append(self.onnx.helper.make_node(op_type, list(inputs), outs,
                                                     name=f"{self.scope}/{op_type}-{len(self.nodes)}", **attrs))
        return outs[0]

    def constant(self, array: np.ndarray, name: str | None = None) -> str:
        """An initializer holding ``array`` (named ``name`` if free, else by number)."""
        unique = self.claim(name) if name is not None else self.fresh()
        self.initializers.append(self.onnx.numpy_helper.from_array(np.ascontiguousarray(array), unique))
        return unique

    def ints(self, values: Any) -> str:
        """A 1-D int64 initializer: the shapes, axes and pads ONNX takes as inputs."""
        return self.constant(np.asarray(values, np.int64).reshape(-1))

    def scalar(self, value: float, dtype: str) -> str:
        return self.constant(np.asarray(value, dtype=dtype))

    def tensor_type(self, dtype: str) -> int:
        return self.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def value_info(self, name: str, desc: TensorDesc) -> Any:
        return self.onnx.helper.make_tensor_value_info(name, self.tensor_type(desc.dtype), desc.shape)

    def model(self, input_names: list[str]) -> Any:
        """Lower every node the outputs need; graph outputs that are not computed (an input, a
        parameter, a value returned twice) go through an Identity, since ONNX names are unique."""
        g, helper = self.graph, self.onnx.helper
        names = {v: self.claim(n) for v, n in zip(g.inputs, input_names)}
        live_values, live_nodes = live(g)
        for v, c in g.constants.items():
            if v in live_values:
                d = g.values[v]
                names[v] = self.constant(np.asarray(c.data).astype(d.dtype, copy=False).reshape(d.shape), c.name)
        computed: list[int] = []
        for n in g.nodes:
            if n.id not in live_nodes:
                continue
            lower = LOWERINGS.get(n.op)
            if lower is None:
                raise UnsupportedOpError(
                    f"export: op {n.op} (node {n.full_name}) has no ONNX lowering; the ONNX export supports "
                    f"{', '.join(sorted(LOWERINGS))}. Export the network without it (e.g. without its loss)")
            outs = tuple(self.fresh() if v in live_values else "" for v in n.outputs)
            self.scope = n.full_name
            lower(self, OnnxCall(n.signature(g), tuple(names[v] for v in n.inputs), outs,
                                 tuple(g.values[v] for v in n.outputs)))
            for v, o in zip(n.outputs, outs):
                if o:
                    names[v] = o
                    computed.append(v)
        self.scope = g.name
        outputs, out_names = [], set()
        for v in g.outputs:
            name = names[v]
            if name in out_names or v in g.inputs or v in g.constants:
                name = self.node("Identity", [name])
            out_names.add(name)
            outputs.append(self.value_info(name, g.values[v]))
        used = {i for node in self.nodes for i in node.input} | out_names
        graph = helper.make_graph(
            self.nodes, g.name, [self.value_info(names[v], g.values[v]) for v in g.inputs], outputs,
            initializer=[t for t in self.initializers if t.name in used],
            value_info=[self.value_info(names[v], g.values[v]) for v in computed if names[v] not in out_names])
        from ascendemu import __version__

        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)],
                                 ir_version=ONNX_IR_VERSION, producer_name=PRODUCER, producer_version=__version__)


# --------------------------------------------------------------------------------------- lowerings

Lowering = Callable[[_Builder, OnnxCall], None]


def _same(op_type: str) -> Lowering:
    """An op ONNX has as ``op_type``, with the same inputs, output and (numpy) broadcasting."""
    def lower(b: _Builder, c: OnnxCall) -> None:
        b.node(op_type, c.inputs, c.outputs)
    return lower


def _square(b: _Builder, c: OnnxCall) -> None:
    b.node("Mul", [c.inputs[0], c.inputs[0]], c.outputs)


def _rsqrt(b: _Builder, c: OnnxCall) -> None:
    b.node("Reciprocal", [b.node("Sqrt", c.inputs)], c.outputs)


def _gelu(b: _Builder, c: OnnxCall) -> None:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): the device's GeLU (ONNX's Gelu is opset 20)."""
    x, dtype = c.inputs[0], c.out_descs[0].dtype
    cube = b.node("Mul", [b.node("Mul", [x, x]), x])
    inner = b.node("Add", [x, b.node("Mul", [b.scalar(GELU_CUBIC, dtype), cube])])
    tanh = b.node("Tanh", [b.node("Mul", [b.scalar(GELU_SQRT_2_OVER_PI, dtype), inner])])
    half_x = b.node("Mul", [b.scalar(0.5, dtype), x])
    b.node("Mul", [half_x, b.node("Add", [b.scalar(1.0, dtype), tanh])], c.outputs)


def _not_equal(b: _Builder, c: OnnxCall) -> None:
    b.node("Not", [b.node("Equal", c.inputs)], c.outputs)


def _cast(b: _Builder, c: OnnxCall) -> None:
    b.node("Cast", c.inputs, c.outputs, to=b.tensor_type(c.out_descs[0].dtype))


def _bias_add(b: _Builder, c: OnnxCall) -> None:
    """x + bias along the channel axis: bias reshaped to (C, 1, ...) for channel-first layouts."""
    rank = len(c.sig.inputs[0].shape)
    if check_format(c.sig, ("NCHW", "NHWC", "NCDHW")) == "NHWC" or rank == 2:
        b.node("Add", c.inputs, c.outputs)
        return
    bias = b.node("Reshape", [c.inputs[1], b.ints([-1] + [1] * (rank - 2))])
    b.node("Add", [c.inputs[0], bias], c.outputs)


def _broadcast_to(b: _Builder, c: OnnxCall) -> None:
    b.node("Expand", [c.inputs[0], b.ints(c.out_descs[0].shape)], c.outputs)


def _matmul(b: _Builder, c: OnnxCall) -> None:
    """MatMul -> Gemm (transA/transB); BatchMatMul -> Transpose of the last two axes + MatMul."""
    if c.sig.attr("epilogue") is not None:
        raise UnsupportedOpError(f"export: node {b.scope} is a {c.sig.op} with a fused epilogue; export works on "
                                 f"the captured graph, where fusion has not run")
    ta, tb = bool(c.sig.attr("transpose_a", False)), bool(c.sig.attr("transpose_b", False))
    if c.sig.op == "MatMul":
        b.node("Gemm", c.inputs, c.outputs, transA=int(ta), transB=int(tb))
        return
    operands = list(c.inputs)
    for i, flag in enumerate((ta, tb)):
        if flag:
            rank = len(c.sig.inputs[i].shape)
            operands[i] = b.node("Transpose", [operands[i]], perm=[*range(rank - 2), rank - 1, rank - 2])
    b.node("MatMul", operands, c.outputs)


def _conv2d(b: _Builder, c: OnnxCall) -> None:
    """Conv with the explicit pads MindSpore's pad_mode gives (same: the extra row/column at the end)."""
    g = conv_geometry(c.sig)
    b.node("Conv", c.inputs, c.outputs, kernel_shape=[g["kh"], g["kw"]], strides=[g["sh"], g["sw"]],
           dilations=[g["dh"], g["dw"]], pads=[g["pt"], g["pl"], g["pb"], g["pr"]], group=g["group"])


def _pool(op_type: str) -> Lowering:
    """MaxPool / AveragePool with explicit pads; padding is never part of a window (ONNX's default
    count_include_pad=0 is the device's divisor)."""
    def lower(b: _Builder, c: OnnxCall) -> None:
        g = pool_geometry(c.sig)
        b.node(op_type, c.inputs, c.outputs, kernel_shape=[g["kh"], g["kw"]], strides=[g["sh"], g["sw"]],
               pads=[g["pt"], g["pl"], g["pb"], g["pr"]])
    return lower


def _batch_norm(b: _Builder, c: OnnxCall) -> None:
    if bn_training(c.sig):
        raise UnsupportedOpError(f"export: node {b.scope} is a BatchNorm with is_training=True (batch statistics); "
                                 f"ONNX models infer. nn.BatchNorm2d uses its moving statistics in eval mode, "
                                 f"which export sets; an ops.BatchNorm primitive needs is_training=False")
    b.node("BatchNormalization", c.inputs, c.outputs[:1], epsilon=float(c.sig.attr("epsilon", BN_EPSILON)))


def _layer_norm(b: _Builder, c: OnnxCall) -> None:
    """LayerNormalization (opset 17) over the axes from begin_norm_axis; gamma/beta applied after it
    when begin_params_axis differs. The variance output comes from ONNX's InvStdDev."""
    norm, params = layer_norm_axes(c.sig)
    eps = float(c.sig.attr("epsilon", LN_EPSILON))
    x, gamma, beta = c.inputs
    y, mean, variance = c.outputs
    inv_std = b.fresh() if variance else ""
    shape, dtype = c.sig.inputs[0].shape, c.out_descs[0].dtype
    if params == norm:
        outs = [y, mean, inv_std]
    else:
        outs = [b.fresh(), mean, inv_std]
        gamma, beta = b.constant(np.ones(shape[norm:], dtype)), b.constant(np.zeros(shape[norm:], dtype))
    while outs and not outs[-1]:
        outs.pop()
    normed = b.node("LayerNormalization", [x, gamma, beta], outs, axis=norm, epsilon=eps)
    if params != norm and y:
        b.node("Add", [b.node("Mul", [normed, c.inputs[1]]), c.inputs[2]], [y])
    if variance:
        squared = b.node("Mul", [inv_std, inv_std])
        b.node("Sub", [b.node("Reciprocal", [squared]), b.scalar(eps, dtype)], [variance])


def _softmax(op_type: str) -> Lowering:
    def lower(b: _Builder, c: OnnxCall) -> None:
        b.node(op_type, c.inputs, c.outputs, axis=softmax_axis(c.sig))
    return lower


def _reduce(op_type: str) -> Lowering:
    """Reduce* with explicit axes (every axis when the attr is empty, as MindSpore's)."""
    def lower(b: _Builder, c: OnnxCall) -> None:
        b.node(op_type, [c.inputs[0], b.ints(reduce_axes(c.sig))], c.outputs,
               keepdims=int(bool(c.sig.attr("keep_dims", False))))
    return lower


def _reshape(b: _Builder, c: OnnxCall) -> None:
    b.node("Reshape", [c.inputs[0], b.ints(c.out_descs[0].shape)], c.outputs)


def _expand_dims(b: _Builder, c: OnnxCall) -> None:
    rank = len(c.out_descs[0].shape)
    b.node("Unsqueeze", [c.inputs[0], b.ints([c.sig.attr("axis") % rank])], c.outputs)


def _squeeze(b: _Builder, c: OnnxCall) -> None:
    shape = c.sig.inputs[0].shape
    axes = c.sig.attr("axis", ())
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    dims = sorted({a % len(shape) for a in axes}) if axes else [d for d, s in enumerate(shape) if s == 1]
    if not dims:
        b.node("Identity", c.inputs, c.outputs)
        return
    b.node("Squeeze", [c.inputs[0], b.ints(dims)], c.outputs)


def _flatten(b: _Builder, c: OnnxCall) -> None:
    b.node("Flatten", c.inputs, c.outputs, axis=1)


def _transpose(b: _Builder, c: OnnxCall) -> None:
    b.node("Transpose", c.inputs, c.outputs, perm=list(transpose_perm(c.sig)))


def _concat(b: _Builder, c: OnnxCall) -> None:
    b.node("Concat", c.inputs, c.outputs, axis=norm_axis(c.sig, c.sig.attr("axis", 0), len(c.sig.inputs[0].shape)))


def _split(b: _Builder, c: OnnxCall) -> None:
    axis, count, length = split_sections(c.sig)
    b.node("Split", [c.inputs[0], b.ints([length] * count)], [o or b.fresh() for o in c.outputs], axis=axis)


def _slice(b: _Builder, c: OnnxCall) -> None:
    out, before = window(c.sig)
    starts = [-d for d in before]
    b.node("Slice", [c.inputs[0], b.ints(starts), b.ints([s + n for s, n in zip(starts, out)]),
                     b.ints(range(len(out)))], c.outputs)


def _pad(b: _Builder, c: OnnxCall) -> None:
    out, before = window(c.sig)
    after = [o - n - d for o, n, d in zip(out, c.sig.inputs[0].shape, before)]
    value = b.scalar(c.sig.attr("value", 0), c.out_descs[0].dtype)
    b.node("Pad", [c.inputs[0], b.ints(list(before) + after), value], c.outputs)


def _gather(b: _Builder, c: OnnxCall) -> None:
    b.node("Gather", c.inputs, c.outputs, axis=norm_axis(c.sig, c.sig.attr("axis", 0), len(c.sig.inputs[0].shape)))


def _dropout(b: _Builder, c: OnnxCall) -> None:
    """Inference keeps every element: the output is x, the mask all ones (the generator state is unused)."""
    y, mask = c.outputs
    if y:
        b.node("Identity", c.inputs[:1], [y])
    if mask:
        d = c.out_descs[1]
        one = b.onnx.numpy_helper.from_array(np.ones(1, d.dtype))
        b.node("ConstantOfShape", [b.ints(d.shape)], [mask], value=one)


# One lowering per captured op: the ONNX subset export writes. Backward, loss and optimizer ops and
# the fused ops of the compiler passes have none.
LOWERINGS: dict[str, Lowering] = {
    "Neg": _same("Neg"), "Abs": _same("Abs"), "Exp": _same("Exp"), "Log": _same("Log"), "Sqrt": _same("Sqrt"),
    "ReLU": _same("Relu"), "Sigmoid": _same("Sigmoid"), "Tanh": _same("Tanh"), "Square": _square,
    "Rsqrt": _rsqrt, "GeLU": _gelu,
    "Add": _same("Add"), "Sub": _same("Sub"), "Mul": _same("Mul"), "Div": _same("Div"), "Pow": _same("Pow"),
    "Maximum": _same("Max"), "Minimum": _same("Min"),
    "Equal": _same("Equal"), "NotEqual": _not_equal, "Greater": _same("Greater"),
    "GreaterEqual": _same("GreaterOrEqual"), "Less": _same("Less"), "LessEqual": _same("LessOrEqual"),
    "Cast": _cast, "BiasAdd": _bias_add, "BroadcastTo": _broadcast_to, "StopGradient": _same("Identity"),
    "MatMul": _matmul, "BatchMatMul": _matmul, "Conv2D": _conv2d,
    "MaxPool": _pool("MaxPool"), "AvgPool": _pool("AveragePool"),
    "BatchNorm": _batch_norm, "LayerNorm": _layer_norm,
    "Softmax": _softmax("Softmax"), "LogSoftmax": _softmax("LogSoftmax"),
    "ReduceSum": _reduce("ReduceSum"), "ReduceMean": _reduce("ReduceMean"), "ReduceMax": _reduce("ReduceMax"),
    "Reshape": _reshape, "ExpandDims": _expand_dims, "Squeeze": _squeeze, "Flatten": _flatten,
    "Transpose": _transpose, "Concat": _concat, "Split": _split, "Slice": _slice, "Pad": _pad,
    "Gather": _gather, "Dropout": _dropout,
}
