"""Specs of ``sampled_nn4`` (issue 21, part C): served ``mint`` and ``nn`` layer names that had no samples,
most used first. Only names MindSpore 2.10 CPU can answer, in PyNative or (where only its graph mode has a
kernel) inside ``ms.jit``: its Ascend-only kernels ("The kernel X unregistered", "Kernel select failed",
"conv1d only supports Ascend") stay in UNSAMPLED.txt. Optimizers, schedules and training wrappers are in ``sampled_nn4b``."""
from __future__ import annotations

from .core import Py, T, cell, op
from .mint import _mint

M23 = (2, 3)
IMG = (1, 2, 4, 4)
VOL = (1, 2, 2, 3, 3)
SEQ = (3, 2, 4)            # (seq, batch, feature) of the recurrent layers' default layout


def _nn(name: str):
    return lambda ms, **kw: getattr(ms.nn, name)(**kw)


def _mint_nn(name: str):
    return lambda ms, **kw: getattr(ms.mint.nn, name)(**kw)


def _ints(values, dtype: str = "int32") -> T:
    return T(values=values, dtype=dtype)


def _jitted(name: str):
    """``nn.<name>(**kw)`` called on (a, b) inside an ``ms.jit`` function."""
    def fn(ms, a, b, **kw):
        net = getattr(ms.nn, name)(**kw)

        @ms.jit
        def call(x, y):
            return net(x, y)
        return call(a, b)
    return fn


def _jit_mint(path: str):
    """``mint.<path>(*xs)`` inside an ``ms.jit`` function: MindSpore 2.10 CPU has no PyNative kernel for
    these mint ops, but its graph mode expands them into ops it has."""
    def fn(ms, *xs):
        target = _mint(path)

        @ms.jit
        def call(*args):
            return target(ms, *args)
        return call(*xs)
    return fn


def _cell_with_state(ms, name: str, **kw):
    """A recurrent cell called as ``cell(x, (h, c))`` from three positional inputs."""
    class WithState(ms.nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.inner = getattr(ms.nn, name)(**kw)

        def construct(self, x, h, c):
            return self.inner(x, (h, c))
    return WithState()


def _sparse_to_dense(ms):
    """SparseToDense of a COOTensor whose values are the input."""
    class Net(ms.nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.inner = ms.nn.SparseToDense()

        def construct(self, values):
            return self.inner(ms.COOTensor(ms.Tensor([[0, 1], [1, 2]], ms.int64), values, (2, 3)))
    return Net()


SPECS = [
    # --- mint functions MindSpore CPU runs -------------------------------------------------------------
    op("mindspore.mint.cummax", _mint("cummax"), shapes=[[M23, Py(1)]], grad=False,
       errors=[([M23, Py(2)], {})]),
    op("mindspore.mint.cdist", _mint("cdist"), shapes=[[M23, (4, 3)]], kwargs=[{}, {"p": 1.0}],
       errors=[([M23, (4, 2)], {})]),
    op("mindspore.mint.cross", _mint("cross"), shapes=[[M23, M23]], kwargs=[{}, {"dim": 1}]),
    op("mindspore.mint.diff", _mint("diff"), shapes=[M23], kwargs=[{}, {"n": 1, "dim": 0}]),
    op("mindspore.mint.erfinv", _mint("erfinv"), shapes=[T(M23, low=-0.9, high=0.9)]),
    op("mindspore.mint.float_power", _mint("float_power"), shapes=[[T(M23, low=0.5, high=2.0), Py(2.0)]],
       grad=False),
    op("mindspore.mint.nansum", _mint("nansum"), shapes=[T((4,), values=[1.0, float("nan"), 2.5, -1.0]), M23],
       kwargs=[{}], grad=False),
    op("mindspore.mint.unique_consecutive", _mint("unique_consecutive"), shapes=[_ints([1, 1, 2, 2, 3, 1])],
       kwargs=[{}, {"return_inverse": True, "return_counts": True}], grad=False, graph=False),
    op("mindspore.mint.nn.functional.adaptive_max_pool2d", _mint("nn.functional.adaptive_max_pool2d"),
       shapes=[[IMG, Py((2, 2))]]),
    cell("mindspore.mint.nn.Identity", _mint_nn("Identity"), shapes=[M23]),
    cell("mindspore.mint.nn.ReLU", _mint_nn("ReLU"), shapes=[M23]),
    op("mindspore.mint.distributed.is_available", lambda ms: ms.mint.distributed.is_available(), shapes=[[]],
       grad=False, graph=False),
    # --- mint functions MindSpore CPU runs only jitted (a Python value input is a graph constant) ----------
    op("mindspore.mint.argmax", _jit_mint("argmax"), shapes=[M23, [M23, Py(1)]], grad=False, graph=False),
    op("mindspore.mint.arange", _jit_mint("arange"), shapes=[[Py(1), Py(7), Py(2)], [Py(0.5), Py(2.0), Py(0.5)]],
       grad=False, graph=False),
    op("mindspore.mint.arange", _mint("arange"), errors=[([Py(1), Py(7), Py(0)], {})]),     # refused before a kernel
    op("mindspore.mint.baddbmm", _jit_mint("baddbmm"), shapes=[[(1, 2, 2), (1, 2, 3), (1, 3, 2)]], grad=False,
       graph=False),
    op("mindspore.mint.full", _jit_mint("full"), shapes=[[Py((2, 3)), Py(1.5)]], grad=False, graph=False),
    op("mindspore.mint.ones_like", _jit_mint("ones_like"), shapes=[M23], grad=False, graph=False),
    op("mindspore.mint.zeros_like", _jit_mint("zeros_like"), shapes=[M23], grad=False, graph=False),
    op("mindspore.mint.select", _jit_mint("select"), shapes=[[M23, Py(1), Py(0)]], grad=False, graph=False,
       errors=[([M23, Py(2), Py(0)], {})]),
    op("mindspore.mint.unbind", _jit_mint("unbind"), shapes=[M23], grad=False, graph=False),
    op("mindspore.mint.nn.functional.cross_entropy", _jit_mint("nn.functional.cross_entropy"),
       shapes=[[(3, 4), _ints([0, 2, 1], "int64")]], grad=False, graph=False),
    op("mindspore.mint.nn.functional.interpolate", _jit_mint("nn.functional.interpolate"),
       shapes=[[(1, 2, 3, 3), Py((6, 6))]], grad=False, graph=False),
    op("mindspore.mint.nn.functional.log_softmax", _jit_mint("nn.functional.log_softmax"), shapes=[[M23, Py(1)]],
       grad=False, graph=False),
    op("mindspore.mint.special.log_softmax", _jit_mint("special.log_softmax"), shapes=[[M23, Py(0)]], grad=False,
       graph=False),
    op("mindspore.mint.nn.functional.pad", _jit_mint("nn.functional.pad"), shapes=[[M23, Py((1, 2))]], grad=False,
       graph=False),
    # --- nn layers ----------------------------------------------------------------------------------
    cell("mindspore.nn.Conv2dBnAct", _nn("Conv2dBnAct"), shapes=[IMG],
         kwargs=[{"in_channels": 2, "out_channels": 3, "kernel_size": 3, "has_bn": True, "activation": "relu"}]),
    cell("mindspore.nn.DenseBnAct", _nn("DenseBnAct"), shapes=[(3, 4)],
         kwargs=[{"in_channels": 4, "out_channels": 2, "has_bn": True, "activation": "relu"}]),
    cell("mindspore.nn.SyncBatchNorm", _nn("SyncBatchNorm"), shapes=[(2, 3, 2, 2)], kwargs=[{"num_features": 3}]),
    cell("mindspore.nn.LSTM", _nn("LSTM"), shapes=[SEQ], kwargs=[{"input_size": 4, "hidden_size": 3}]),
    cell("mindspore.nn.GRU", _nn("GRU"), shapes=[SEQ], kwargs=[{"input_size": 4, "hidden_size": 3}]),
    cell("mindspore.nn.RNN", _nn("RNN"), shapes=[SEQ], kwargs=[{"input_size": 4, "hidden_size": 3}]),
    cell("mindspore.nn.LSTMCell", lambda ms, **kw: _cell_with_state(ms, "LSTMCell", **kw), shapes=[[(2, 4), (2, 3), (2, 3)]],
         kwargs=[{"input_size": 4, "hidden_size": 3}]),
    cell("mindspore.nn.GRUCell", _nn("GRUCell"), shapes=[[(2, 4), (2, 3)]], kwargs=[{"input_size": 4, "hidden_size": 3}]),
    cell("mindspore.nn.RNNCell", _nn("RNNCell"), shapes=[[(2, 4), (2, 3)]], kwargs=[{"input_size": 4, "hidden_size": 3}]),
    # MindSpore 2.10's PyNative refuses these (a ScalarCast of a float32, a bool Add): jitted they run
    op("mindspore.nn.SSIM", _jitted("SSIM"), shapes=[[T((1, 1, 12, 12), low=0, high=1), T((1, 1, 12, 12), low=0, high=1)]],
       kwargs=[{"filter_size": 3}], grad=False, graph=False),
    op("mindspore.nn.PSNR", _jitted("PSNR"), shapes=[[T((1, 1, 3, 3), low=0, high=1), T((1, 1, 3, 3), low=0, high=1)]],
       grad=False, graph=False),
    op("mindspore.nn.MSSSIM", _jitted("MSSSIM"), shapes=[[T((1, 1, 12, 12), low=0, high=1), T((1, 1, 12, 12), low=0, high=1)]],
       kwargs=[{"filter_size": 3, "power_factors": (0.5, 0.5)}], grad=False, graph=False),
    op("mindspore.nn.HingeEmbeddingLoss", _jitted("HingeEmbeddingLoss"),
       shapes=[[M23, T(M23, values=[[1., -1., 1.], [-1., 1., 1.]])]], kwargs=[{}, {"margin": 0.5, "reduction": "sum"}],
       grad=False, graph=False),
    cell("mindspore.nn.Conv3dTranspose", _nn("Conv3dTranspose"), shapes=[VOL],
         kwargs=[{"in_channels": 2, "out_channels": 1, "kernel_size": 2, "stride": 2}]),
    cell("mindspore.nn.MultiheadAttention", _nn("MultiheadAttention"), shapes=[[(3, 1, 4), (3, 1, 4), (3, 1, 4)]],
         kwargs=[{"embed_dim": 4, "num_heads": 2}]),
    cell("mindspore.nn.Dropout3d", _nn("Dropout3d"), shapes=[VOL]),
    cell("mindspore.nn.Dropout1d", _nn("Dropout1d"), shapes=[(2, 3, 4)]),
    cell("mindspore.nn.Dropout2dExt", _nn("Dropout2dExt"), shapes=[IMG]),
    cell("mindspore.nn.DropoutExt", _nn("DropoutExt"), shapes=[M23]),
    cell("mindspore.nn.Range", _nn("Range"), shapes=[[]],
         kwargs=[{"start": 1, "limit": 7, "delta": 2}], grad=False),
    cell("mindspore.nn.LRN", _nn("LRN"), shapes=[IMG], kwargs=[{"depth_radius": 1}]),
    cell("mindspore.nn.AdaptiveAvgPool3d", _nn("AdaptiveAvgPool3d"), shapes=[VOL], kwargs=[{"output_size": (1, 2, 2)}]),
    cell("mindspore.nn.AdaptiveMaxPool1d", _nn("AdaptiveMaxPool1d"), shapes=[(1, 2, 6)], kwargs=[{"output_size": 3}]),
    cell("mindspore.nn.AdaptiveMaxPool2d", _nn("AdaptiveMaxPool2d"), shapes=[IMG], kwargs=[{"output_size": 2}]),
    cell("mindspore.nn.AdaptiveMaxPool3d", _nn("AdaptiveMaxPool3d"), shapes=[VOL], kwargs=[{"output_size": (1, 2, 2)}]),
    cell("mindspore.nn.AvgPool3d", _nn("AvgPool3d"), shapes=[VOL], kwargs=[{"kernel_size": 2, "stride": 1}]),
    cell("mindspore.nn.MaxPool3d", _nn("MaxPool3d"), shapes=[VOL], kwargs=[{"kernel_size": 2, "stride": 1}]),
    cell("mindspore.nn.BiDense", _nn("BiDense"), shapes=[[(2, 3), (2, 4)]],
         kwargs=[{"in1_channels": 3, "in2_channels": 4, "out_channels": 2}]),
    cell("mindspore.nn.CTCLoss", _nn("CTCLoss"),
         shapes=[[T((4, 1, 3)), _ints([[1, 2]]), _ints([4]), _ints([2])]], grad=False),
    cell("mindspore.nn.ConstantPad3d", _nn("ConstantPad3d"), shapes=[VOL], kwargs=[{"padding": 1, "value": 0.5}]),
    cell("mindspore.nn.ReflectionPad3d", _nn("ReflectionPad3d"), shapes=[VOL], kwargs=[{"padding": 1}]),
    cell("mindspore.nn.ReplicationPad3d", _nn("ReplicationPad3d"), shapes=[VOL], kwargs=[{"padding": 1}]),
    cell("mindspore.nn.ImageGradients", _nn("ImageGradients"), shapes=[IMG], errors=[(M23, {})]),
    cell("mindspore.nn.L1Regularizer", _nn("L1Regularizer"), shapes=[M23], kwargs=[{"scale": 0.5}],
         errors=[(M23, {"scale": -1.0})]),
    cell("mindspore.nn.Moments", _nn("Moments"), shapes=[M23], kwargs=[{}, {"axis": 1, "keep_dims": True}]),
    cell("mindspore.nn.MultiClassDiceLoss", _nn("MultiClassDiceLoss"),
         shapes=[[T(M23, low=0, high=1), T(M23, values=[[0., 1., 0.], [1., 0., 0.]])]]),
    cell("mindspore.nn.MultiMarginLoss", _nn("MultiMarginLoss"), shapes=[[M23, _ints([2, 0], "int64")]]),
    cell("mindspore.nn.Norm", _nn("Norm"), shapes=[M23], kwargs=[{}, {"axis": 1, "keep_dims": True}]),
    cell("mindspore.nn.PReLUExt", _nn("PReLUExt"), shapes=[M23]),
    cell("mindspore.nn.ReduceLogSumExp", _nn("ReduceLogSumExp"), shapes=[M23], kwargs=[{"axis": 1}]),
    cell("mindspore.nn.TripletMarginWithDistanceLoss", _nn("TripletMarginWithDistanceLoss"), shapes=[[M23, M23, M23]]),
    cell("mindspore.nn.Upsample", _nn("Upsample"), shapes=[IMG], kwargs=[{"size": (6, 5)}, {"size": (6, 5), "mode": "bilinear"}],
         errors=[(IMG, {"size": (6, 5), "mode": "bilinear", "align_corners": True, "scale_factor": 2.0})]),
    op("mindspore.nn.LossBase", lambda ms, x, **kw: ms.nn.LossBase(**kw).get_loss(x), shapes=[M23],
       kwargs=[{}, {"reduction": "sum"}, {"reduction": "none"}], errors=[(M23, {"reduction": "max"})]),
    cell("mindspore.nn.TimeDistributed", lambda ms: ms.nn.TimeDistributed(
        ms.nn.Dense(4, 2, weight_init="ones", bias_init="zeros"), time_axis=1), shapes=[(2, 3, 4)]),
    cell("mindspore.nn.SparseToDense", lambda ms: _sparse_to_dense(ms), shapes=[(2,)], grad=False),
    cell("mindspore.nn.SparseTensorDenseMatmul", _nn("SparseTensorDenseMatmul"),
         shapes=[[_ints([[0, 1], [1, 2]]), (2,), Py((2, 3)), (3, 2)]], grad=False),
    cell("mindspore.nn.TransformerEncoderLayer", _nn("TransformerEncoderLayer"), shapes=[(3, 1, 4)],
         kwargs=[{"d_model": 4, "nhead": 2, "dim_feedforward": 8, "dropout": 0.0}], grad=False),
    cell("mindspore.nn.TransformerDecoderLayer", _nn("TransformerDecoderLayer"), shapes=[[(3, 1, 4), (2, 1, 4)]],
         kwargs=[{"d_model": 4, "nhead": 2, "dim_feedforward": 8, "dropout": 0.0}], grad=False),
    cell("mindspore.nn.TransformerEncoder", lambda ms: ms.nn.TransformerEncoder(
        ms.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0), 1), shapes=[(3, 1, 4)], grad=False),
    cell("mindspore.nn.TransformerDecoder", lambda ms: ms.nn.TransformerDecoder(
        ms.nn.TransformerDecoderLayer(4, 2, dim_feedforward=8, dropout=0.0), 1), shapes=[[(3, 1, 4), (2, 1, 4)]],
         grad=False),
    cell("mindspore.nn.Transformer", _nn("Transformer"), shapes=[[(2, 1, 4), (3, 1, 4)]],
         kwargs=[{"d_model": 4, "nhead": 2, "num_encoder_layers": 1, "num_decoder_layers": 1, "dim_feedforward": 8,
                  "dropout": 0.0}], grad=False),
]
