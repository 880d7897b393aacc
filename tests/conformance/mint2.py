"""``mindspore.mint`` breadth specs (frontend/mint/_bodies.py, mint/nn/layer/, mint.nn's own Cells). Many
mint kernels are Ascend-only in MindSpore 2.10 (its CPU build raises "The kernel X unregistered", "Not
implement exception", "einsum only supports Ascend"): those specs carry an ``oracle``, what the recorder runs
on real MindSpore CPU instead, in this order of preference: the documented MindSpore CPU op or Cell with
exactly the same semantics (ops.gelu for GeluExt, ops.conv2d for Conv2DExt, the Conv2DTranspose primitive
for ConvTranspose2D, nn.ReflectionPad3d for ReflectionPad3D, nn.L1Loss for L1LossExt, ...), else mint's
documented formula written with MindSpore CPU ops (normalize, embedding's padding_idx, SoftMarginLoss).
A Cell's oracle is a subclass of the real mint Cell with only ``construct`` replaced, so MindSpore builds and
validates the Cell and names its parameters itself. None of these names has an error sample: nothing of
theirs is refused before kernel selection here."""
from __future__ import annotations

from .core import Py, T, cell, op
from .mint import _mint

IMG = (1, 2, 4, 4)
IDX = T((2, 3), dtype="int64", low=0, high=4)


def _nn(name: str):
    return lambda ms, **kw: getattr(ms.mint.nn, name)(**kw)


def _inplace(path: str):
    """The in-place functional on a copy of the input, returning the input (which holds the result)."""
    def call(ms, x, *rest, **kw):
        y = x + 0
        _mint(path)(ms, y, *rest, **kw)
        return y
    return call


def _no_cpu(oracle: str, kernel: str) -> str:
    """A spec's note: which oracle answered, and the kernel MindSpore 2.10 CPU lacks."""
    return f"oracle: {oracle} (MindSpore 2.10 CPU has no {kernel} kernel; the mint name is Ascend-only)"


def _onn(name: str, forward):
    """A Cell oracle: the real ``mint.nn.<name>`` built from the sample's kwargs (MindSpore validates them and
    makes the parameters) whose ``construct`` is ``forward(ms, self, *inputs, **kwargs)`` on CPU ops."""
    def build(ms, **kw):
        base = getattr(ms.mint.nn, name)

        def construct(self, *xs):
            return forward(ms, self, *xs, **kw)
        return type(f"CpuOracle{name}", (base,), {"construct": construct})(**kw)
    return build


def ocell(name: str, forward, oracle_text: str, kernel: str, **options):
    """The Cell spec of ``mint.nn.<name>`` recorded through the oracle ``_onn(name, forward)``."""
    return cell(f"mindspore.mint.nn.{name}", _nn(name), oracle=_onn(name, forward),
                note=_no_cpu(oracle_text, kernel), **options)


def _act(ops_name: str):
    """A Cell oracle forward: ``ops.<ops_name>(input, **the Cell's kwargs)``."""
    return lambda ms, net, x, **kw: getattr(ms.ops, ops_name)(x, **kw)


def _elu(ms, net, x, alpha=1.0):
    """ELU's formula (MindSpore CPU's Elu takes alpha 1 only)."""
    return ms.ops.where(x > 0, x, alpha * ms.ops.expm1(x))


SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def _selu(ms, net, x):
    """SELU's documented formula (ops.selu's CPU gradient is wrong for x < 0)."""
    return SELU_SCALE * ms.ops.where(x > 0, x, SELU_ALPHA * ms.ops.expm1(x))


def _conv(ms, net, x, **kw):
    """mint.nn.Conv1d/2d/3d: ops.conv1d/conv2d/conv3d (padding_mode other than zeros: ops.pad first)."""
    dims = x.ndim - 2
    pad = kw.get("padding", 0)
    mode = kw.get("padding_mode", "zeros")
    conv = {1: ms.ops.conv1d, 2: ms.ops.conv2d, 3: ms.ops.conv3d}[dims]
    if mode != "zeros":
        x = ms.ops.pad(x, (pad,) * (2 * dims), mode=mode)
        pad = 0
    return conv(x, net.weight, net.bias, kw.get("stride", 1), "pad", pad, kw.get("dilation", 1), kw.get("groups", 1))


def _conv_transpose2d(ms, x, weight, bias=None, stride=1, padding=0, output_padding=0):
    """conv_transpose2d through the CPU Conv2DTranspose primitive (Conv2DBackpropInput: its out_channel is the
    adjoint convolution's, weight.shape[0]; the output size carries output_padding)."""
    k = weight.shape[2]
    size = tuple((h - 1) * stride - 2 * padding + k + output_padding for h in x.shape[2:])
    out = ms.ops.Conv2DTranspose(weight.shape[0], k, pad_mode="pad", pad=padding, stride=stride)(
        x, weight, (x.shape[0], weight.shape[1]) + size)
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)


def _batch_norm(ms, x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """batch_norm through the CPU BatchNorm op on a 4-d view (weight 1, bias 0 when not given)."""
    c = x.shape[1]
    weight = ms.ops.ones(c, x.dtype) if weight is None else weight
    bias = ms.ops.zeros(c, x.dtype) if bias is None else bias
    x4 = x.reshape(x.shape[0], c, -1, 1)
    return ms.ops.batch_norm(x4, running_mean, running_var, weight, bias, training, momentum, eps).reshape(x.shape)


_BN_TEXT = "ops.batch_norm (inference, the Cell's running statistics) on a 4-d view"


def _bn_cell(ms, net, x, **kw):
    """mint.nn.BatchNorm1d/2d/3d in inference: the Cell's own parameters through ``_batch_norm``."""
    return _batch_norm(ms, x, net.running_mean, net.running_var, net.weight, net.bias, False, net.momentum, net.eps)


def _embedding(ms, idx, weight, padding_idx=None):
    """weight's rows gathered; the padding_idx row gets no gradient (mint's documented padding_idx)."""
    if padding_idx is not None:
        pad_row = (ms.ops.arange(weight.shape[0]) == padding_idx).reshape(-1, 1)
        weight = ms.ops.where(pad_row, ms.ops.stop_gradient(weight), weight)
    return ms.ops.gather(weight, idx, 0)


def _normalize(ms, x, p=2.0, dim=1, eps=1e-12):
    """mint's documented normalize: x / max(||x||_p over dim, eps)."""
    return x / ms.ops.broadcast_to(ms.ops.clamp(ms.ops.norm(x, p, dim, True), min=eps), x.shape)


def _old_nn(name: str):
    """A Cell oracle forward through ``mindspore.nn.<name>`` (the CPU Cell of the same semantics)."""
    return lambda ms, net, *xs, **kw: getattr(ms.nn, name)(**kw)(*xs)


def _zero_pad(dims: int):
    """mint.nn.ZeroPad<dims>d: nn.ConstantPad<dims>d with the value 0."""
    return lambda ms, net, x, padding: getattr(ms.nn, f"ConstantPad{dims}d")(padding, 0.0)(x)


SPECS = [
    op("mindspore.mint.reshape", _mint("reshape"), shapes=[[(2, 3), Py((3, 2))]], errors=[([(2, 3)], {})]),
    op("mindspore.mint.flatten", _mint("flatten"), shapes=[(2, 3, 4)], kwargs=[{}, {"start_dim": 1}]),
    op("mindspore.mint.squeeze", _mint("squeeze"), shapes=[[(1, 3, 1), Py((0, 2))], [(2, 3), Py(0)]]),
    op("mindspore.mint.t", _mint("t"), shapes=[(2, 3), (3,)]),
    op("mindspore.mint.addcdiv", _mint("addcdiv"), shapes=[[(2, 3), (2, 3), T((2, 3), low=0.5, high=2)]],
       kwargs=[{"value": 2}], oracle=lambda ms, x, a, b, value=1: ms.ops.addcdiv(x, a, b, ms.Tensor(value, x.dtype)),
       note=_no_cpu("ops.addcdiv (value as a tensor)", "AddcdivExt")),
    op("mindspore.mint.empty", lambda ms, **kw: ms.mint.empty(2, 3, **kw).shape, shapes=[[]], kwargs=[{}], grad=False),
    op("mindspore.mint.empty_like", lambda ms, x: ms.mint.empty_like(x).shape, shapes=[(2, 3)], grad=False),
    op("mindspore.mint.einsum", lambda ms, a, b: ms.mint.einsum("ij,jk->ik", a, b), shapes=[[(2, 3), (3, 4)]],
       oracle=lambda ms, a, b: ms.ops.matmul(a, b), note=_no_cpu("ops.matmul, what 'ij,jk->ik' computes", "Einsum")),
    op("mindspore.mint.meshgrid", lambda ms, a, b, **kw: ms.mint.meshgrid(a, b, **kw), shapes=[[(2,), (3,)]],
       kwargs=[{}, {"indexing": "xy"}]),
    op("mindspore.mint.bitwise_not", _mint("bitwise_not"), shapes=[(2, 3)], dtypes=("int32",), grad=False,
       oracle=lambda ms, x: ms.ops.invert(x), note=_no_cpu("ops.invert", "BitwiseNot")),
    op("mindspore.mint.clone", _mint("clone"), shapes=[(2, 3)], oracle=lambda ms, x: ms.ops.deepcopy(x),
       note=_no_cpu("ops.deepcopy", "Clone")),
    op("mindspore.mint.vdot", _mint("vdot"), shapes=[[(3,), (3,)]], oracle=lambda ms, a, b: ms.ops.tensor_dot(a, b, 1),
       note=_no_cpu("ops.tensor_dot over the one axis (real inputs: no conjugation)", "Vdot")),
    op("mindspore.mint.npu_gelu", _mint("npu_gelu"), shapes=[(2, 3)],
       oracle=lambda ms, x, approximate="none": ms.ops.gelu(x, approximate), note=_no_cpu("ops.gelu", "NpuGelu")),
    op("mindspore.mint.nn.functional.gelu", _mint("nn.functional.gelu"), shapes=[(2, 3)],
       kwargs=[{}, {"approximate": "tanh"}], oracle=lambda ms, x, approximate="none": ms.ops.gelu(x, approximate),
       note=_no_cpu("ops.gelu", "GeluExt")),
    op("mindspore.mint.nn.functional.one_hot", _mint("nn.functional.one_hot"),
       shapes=[[T((3,), dtype="int64", low=0, high=4), Py(4)]], grad=False,
       oracle=lambda ms, t, n: ms.ops.one_hot(t, n, ms.Tensor(1, t.dtype), ms.Tensor(0, t.dtype)),
       note=_no_cpu("ops.one_hot with on/off values of the input's dtype", "OneHotExt")),
    op("mindspore.mint.nn.functional.normalize", _mint("nn.functional.normalize"), shapes=[(2, 3)],
       kwargs=[{}, {"p": 1.0, "dim": 0}], oracle=_normalize,
       note=_no_cpu("mint's own formula x / clamp(norm(x, p, dim), min=eps) with ops.norm", "LinalgVectorNorm")),
    op("mindspore.mint.nn.functional.linear", _mint("nn.functional.linear"), shapes=[[(2, 3), (4, 3), (4,)]]),
    op("mindspore.mint.nn.functional.embedding", _mint("nn.functional.embedding"), shapes=[[IDX, (4, 2)]],
       kwargs=[{}, {"padding_idx": 1}], oracle=_embedding,
       note=_no_cpu("ops.gather of the weight's rows, the padding_idx row cut from the gradient", "Embedding")),
    op("mindspore.mint.nn.functional.batch_norm", _mint("nn.functional.batch_norm"),
       shapes=[[(2, 3, 2), T((3,), values=[0.0, 0.5, -0.5]), T((3,), values=[1.0, 2.0, 0.5])]],
       kwargs=[{}, {"training": True}], oracle=_batch_norm,
       note=_no_cpu("ops.batch_norm on a 4-d view (weight 1, bias 0)", "BatchNormExt")),
    op("mindspore.mint.nn.functional.conv_transpose2d", _mint("nn.functional.conv_transpose2d"),
       shapes=[[IMG, (2, 3, 3, 3)]], kwargs=[{}, {"stride": 2, "padding": 1, "output_padding": 1}],
       oracle=_conv_transpose2d, note=_no_cpu("the Conv2DTranspose primitive", "ConvTranspose2D")),
    op("mindspore.mint.nn.functional.relu_", _inplace("nn.functional.relu_"), shapes=[(2, 3)], grad=False,
       oracle=lambda ms, x: ms.ops.relu(x), note=_no_cpu("ops.relu", "InplaceReLU")),
    op("mindspore.mint.nn.functional.sigmoid_", _inplace("nn.functional.sigmoid_"), shapes=[(2, 3)], grad=False,
       oracle=lambda ms, x: ms.ops.sigmoid(x), note=_no_cpu("ops.sigmoid", "InplaceSigmoid")),
    op("mindspore.mint.nn.functional.elu_", _inplace("nn.functional.elu_"), shapes=[(2, 3)], grad=False,
       oracle=lambda ms, x: ms.ops.elu(x), note=_no_cpu("ops.elu (alpha 1)", "InplaceElu")),
    op("mindspore.mint.nn.functional.hardtanh_", _inplace("nn.functional.hardtanh_"), shapes=[(2, 3)], grad=False,
       oracle=lambda ms, x: ms.ops.hardtanh(x), note=_no_cpu("ops.hardtanh", "InplaceHardtanh")),
    op("mindspore.mint.nn.functional.threshold_", _inplace("nn.functional.threshold_"),
       shapes=[[(2, 3), Py(0.2), Py(-1.0)]], grad=False,
       oracle=lambda ms, x, thr, value: ms.ops.threshold(x, thr, value),
       note=_no_cpu("ops.threshold", "InplaceThreshold")),
    # Cells
    cell("mindspore.mint.nn.SiLU", _nn("SiLU"), shapes=[(2, 3)]),
    cell("mindspore.mint.nn.Sigmoid", _nn("Sigmoid"), shapes=[(2, 3)]),
    ocell("LogSigmoid", _act("logsigmoid"), "ops.logsigmoid", "LogSigmoid", shapes=[(2, 3)]),
    cell("mindspore.mint.nn.Tanh", _nn("Tanh"), shapes=[(2, 3)]),
    ocell("ELU", _elu, "ELU's formula x > 0 ? x : alpha * expm1(x) (the CPU Elu takes alpha 1 only)", "EluExt",
          shapes=[(2, 3)], kwargs=[{"alpha": 0.5}]),
    ocell("Threshold", lambda ms, net, x, threshold, value: ms.ops.threshold(x, threshold, value), "ops.threshold",
          "Threshold", shapes=[(2, 3)], kwargs=[{"threshold": 0.1, "value": 2.0}]),
    ocell("GELU", _act("gelu"), "ops.gelu", "GeluExt", shapes=[(2, 3)], kwargs=[{}, {"approximate": "tanh"}]),
    ocell("Hardtanh", _act("hardtanh"), "ops.hardtanh", "Hardtanh", shapes=[(2, 3)],
          kwargs=[{}, {"min_val": -0.5, "max_val": 0.5}]),
    ocell("ReLU6", _act("relu6"), "ops.relu6", "Hardtanh", shapes=[T((2, 3), low=-8, high=8)]),
    ocell("Mish", _act("mish"), "ops.mish", "MishExt", shapes=[(2, 3)]),
    ocell("SELU", _selu, "SELU's documented formula scale * (x > 0 ? x : alpha * expm1(x)) on CPU ops (ops.selu's "
          "CPU gradient is wrong where x < 0: -0.55 at x = -2, where the derivative is 0.24)", "SeLUExt",
          shapes=[(2, 3)]),
    cell("mindspore.mint.nn.Hardshrink", _nn("Hardshrink"), shapes=[(2, 3)]),
    cell("mindspore.mint.nn.Hardsigmoid", _nn("Hardsigmoid"), shapes=[T((2, 3), low=-4, high=4)]),
    cell("mindspore.mint.nn.Hardswish", _nn("Hardswish"), shapes=[T((2, 3), low=-4, high=4)]),
    cell("mindspore.mint.nn.PReLU", _nn("PReLU"), shapes=[(2, 3, 2)], kwargs=[{}, {"num_parameters": 3}]),
    cell("mindspore.mint.nn.Flatten", _nn("Flatten"), shapes=[(2, 3, 4)], kwargs=[{}, {"start_dim": 0}]),
    cell("mindspore.mint.nn.Linear", _nn("Linear"), shapes=[(2, 3)], kwargs=[{"in_features": 3, "out_features": 4}]),
    cell("mindspore.mint.nn.PixelShuffle", _nn("PixelShuffle"), shapes=[(1, 4, 2, 2)], kwargs=[{"upscale_factor": 2}]),
    cell("mindspore.mint.nn.UpsamplingNearest2d", _nn("UpsamplingNearest2d"), shapes=[IMG], kwargs=[{"size": (6, 8)}]),
    ocell("UpsamplingBilinear2d", lambda ms, net, x, size: ms.ops.interpolate(x, size, mode="bilinear",
                                                                              align_corners=True),
          "ops.interpolate(mode='bilinear', align_corners=True)", "UpsampleBilinear2D", shapes=[IMG],
          kwargs=[{"size": (6, 8)}]),
    ocell("AdaptiveAvgPool1d", _act("adaptive_avg_pool1d"), "ops.adaptive_avg_pool1d", "AdaptiveAvgPool1D",
          shapes=[(1, 2, 6)], kwargs=[{"output_size": 3}]),
    ocell("AdaptiveAvgPool2d", _act("adaptive_avg_pool2d"), "ops.adaptive_avg_pool2d", "AdaptiveAvgPool2DExt",
          shapes=[IMG], kwargs=[{"output_size": 2}]),
    ocell("AdaptiveAvgPool3d", _act("adaptive_avg_pool3d"), "ops.adaptive_avg_pool3d", "AdaptiveAvgPool3DExt",
          shapes=[(1, 2, 2, 4, 4)], kwargs=[{"output_size": (1, 2, 2)}]),
    ocell("AdaptiveMaxPool1d", _act("adaptive_max_pool1d"), "ops.adaptive_max_pool1d", "AdaptiveMaxPool1D",
          shapes=[(1, 2, 6)], kwargs=[{"output_size": 3}]),
    cell("mindspore.mint.nn.AdaptiveMaxPool2d", _nn("AdaptiveMaxPool2d"), shapes=[IMG], kwargs=[{"output_size": 2}]),
    ocell("MaxUnpool2d", lambda ms, net, x, idx, kernel_size: ms.ops.MaxUnpool2D(kernel_size, kernel_size)(x, idx),
          "the MaxUnpool2D primitive", "MaxUnpool2DExt",
          shapes=[[(1, 1, 2, 2), T((1, 1, 2, 2), values=[[[[0, 3], [9, 14]]]], dtype="int64")]],
          kwargs=[{"kernel_size": 2}], grad=False),
    ocell("Conv1d", _conv, "ops.conv1d", "Conv1DExt", shapes=[(1, 2, 6)],
          kwargs=[{"in_channels": 2, "out_channels": 3, "kernel_size": 3},
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1, "bias": False}]),
    ocell("Conv2d", _conv, "ops.conv2d (padding_mode='reflect': ops.pad first)", "Conv2DExt", shapes=[IMG],
          kwargs=[{"in_channels": 2, "out_channels": 3, "kernel_size": 3},
                  {"in_channels": 2, "out_channels": 4, "kernel_size": 3, "padding": 1, "stride": 2, "groups": 2},
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1, "padding_mode": "reflect"}]),
    ocell("Conv3d", _conv, "ops.conv3d", "Conv3DExt", shapes=[(1, 2, 3, 4, 4)],
          kwargs=[{"in_channels": 2, "out_channels": 3, "kernel_size": 2}]),
    ocell("ConvTranspose2d", lambda ms, net, x, stride=1, padding=0, **kw: _conv_transpose2d(
              ms, x, net.weight, net.bias, stride, padding), "the Conv2DTranspose primitive", "ConvTranspose2D",
          shapes=[IMG], kwargs=[{"in_channels": 2, "out_channels": 3, "kernel_size": 3},
                                {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "stride": 2, "padding": 1}]),
    ocell("BatchNorm1d", _bn_cell, _BN_TEXT, "BatchNormExt", shapes=[(4, 3)], kwargs=[{"num_features": 3}]),
    ocell("BatchNorm2d", _bn_cell, _BN_TEXT, "BatchNormExt", shapes=[IMG], kwargs=[{"num_features": 2}]),
    ocell("BatchNorm3d", _bn_cell, _BN_TEXT, "BatchNormExt", shapes=[(1, 2, 2, 2, 2)], kwargs=[{"num_features": 2}]),
    cell("mindspore.mint.nn.SyncBatchNorm", _nn("SyncBatchNorm"), shapes=[IMG], kwargs=[{"num_features": 2}]),
    cell("mindspore.mint.nn.GroupNorm", _nn("GroupNorm"), shapes=[(2, 4, 3)], kwargs=[{"num_groups": 2, "num_channels": 4}]),
    ocell("ConstantPad1d", _old_nn("ConstantPad1d"), "nn.ConstantPad1d", "ConstantPadND", shapes=[(2, 3)],
          kwargs=[{"padding": (1, 2), "value": 0.5}]),
    ocell("ConstantPad2d", _old_nn("ConstantPad2d"), "nn.ConstantPad2d", "ConstantPadND", shapes=[(1, 2, 3)],
          kwargs=[{"padding": 1, "value": -1.0}]),
    ocell("ConstantPad3d", _old_nn("ConstantPad3d"), "nn.ConstantPad3d", "ConstantPadND", shapes=[(1, 2, 2, 3)],
          kwargs=[{"padding": 1, "value": 2.0}]),
    ocell("ZeroPad1d", _zero_pad(1), "nn.ConstantPad1d with the value 0", "ConstantPadND", shapes=[(2, 3)],
          kwargs=[{"padding": (2, 0)}]),
    ocell("ZeroPad2d", _zero_pad(2), "nn.ConstantPad2d with the value 0", "ConstantPadND", shapes=[(1, 2, 3)],
          kwargs=[{"padding": (1, 0, 0, 2)}]),
    ocell("ZeroPad3d", _zero_pad(3), "nn.ConstantPad3d with the value 0", "ConstantPadND", shapes=[(1, 2, 2, 3)],
          kwargs=[{"padding": 1}]),
    ocell("ReflectionPad1d", _old_nn("ReflectionPad1d"), "nn.ReflectionPad1d", "ReflectionPad1D", shapes=[(1, 2, 4)],
          kwargs=[{"padding": (2, 1)}]),
    ocell("ReflectionPad2d", _old_nn("ReflectionPad2d"), "nn.ReflectionPad2d", "ReflectionPad2D", shapes=[IMG],
          kwargs=[{"padding": 1}]),
    ocell("ReflectionPad3d", _old_nn("ReflectionPad3d"), "nn.ReflectionPad3d", "ReflectionPad3D",
          shapes=[(1, 1, 3, 3, 3)], kwargs=[{"padding": 1}]),
    ocell("ReplicationPad1d", _old_nn("ReplicationPad1d"), "nn.ReplicationPad1d", "ReplicationPad1D",
          shapes=[(1, 2, 4)], kwargs=[{"padding": (2, 1)}]),
    ocell("ReplicationPad2d", _old_nn("ReplicationPad2d"), "nn.ReplicationPad2d", "ReplicationPad2D", shapes=[IMG],
          kwargs=[{"padding": 1}]),
    ocell("ReplicationPad3d", _old_nn("ReplicationPad3d"), "nn.ReplicationPad3d", "ReplicationPad3D",
          shapes=[(1, 1, 3, 3, 3)], kwargs=[{"padding": 1}]),
    # losses: (input, target)
    ocell("MSELoss", _old_nn("MSELoss"), "nn.MSELoss", "MSELossExt", shapes=[[(2, 3), (2, 3)]],
          kwargs=[{}, {"reduction": "sum"}]),
    ocell("L1Loss", _old_nn("L1Loss"), "nn.L1Loss", "L1LossExt", shapes=[[(2, 3), (2, 3)]],
          kwargs=[{}, {"reduction": "none"}]),
    cell("mindspore.mint.nn.SmoothL1Loss", _nn("SmoothL1Loss"), shapes=[[(2, 3), (2, 3)]], kwargs=[{}, {"beta": 0.5}]),
    ocell("SoftMarginLoss", lambda ms, net, x, y: ms.ops.log(1 + ms.ops.exp(-y * x)).mean(),
          "SoftMarginLoss's documented formula mean(log(1 + exp(-y * x))) on CPU ops", "SoftMarginLoss",
          shapes=[[(2, 3), T((2, 3), values=[[1, -1, 1], [-1, 1, 1]])]]),
    cell("mindspore.mint.nn.BCELoss", _nn("BCELoss"), shapes=[[T((2, 3), low=0.1, high=0.9), T((2, 3), low=0.1, high=0.9)]]),
    cell("mindspore.mint.nn.BCEWithLogitsLoss", _nn("BCEWithLogitsLoss"), shapes=[[(2, 3), T((2, 3), low=0.1, high=0.9)]]),
    ocell("KLDivLoss", _old_nn("KLDivLoss"), "nn.KLDivLoss (the target as probabilities, as log_target=False)", "KLDiv",
          shapes=[[(2, 3), T((2, 3), low=0.1, high=0.9)]], kwargs=[{"reduction": "sum"}]),
    ocell("CosineEmbeddingLoss", _old_nn("CosineEmbeddingLoss"), "nn.CosineEmbeddingLoss", "CosineEmbeddingLoss",
          shapes=[[(2, 3), (2, 3), T((2,), values=[1.0, -1.0])]], kwargs=[{"margin": 0.1}]),
]
