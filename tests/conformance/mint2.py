"""``mindspore.mint`` breadth specs (frontend/mint/_bodies.py, mint/nn/layer/, mint.nn's own Cells). Many
mint kernels are Ascend-only in MindSpore 2.10 (its CPU build raises "The kernel X unregistered"): those
samples record that error, and KNOWN_MISMATCHES.txt lists them (the emulator computes them as on Ascend)."""
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


SPECS = [
    op("mindspore.mint.reshape", _mint("reshape"), shapes=[[(2, 3), Py((3, 2))]], errors=[([(2, 3)], {})]),
    op("mindspore.mint.flatten", _mint("flatten"), shapes=[(2, 3, 4)], kwargs=[{}, {"start_dim": 1}]),
    op("mindspore.mint.squeeze", _mint("squeeze"), shapes=[[(1, 3, 1), Py((0, 2))], [(2, 3), Py(0)]]),
    op("mindspore.mint.t", _mint("t"), shapes=[(2, 3), (3,)]),
    op("mindspore.mint.addcdiv", _mint("addcdiv"), shapes=[[(2, 3), (2, 3), T((2, 3), low=0.5, high=2)]],
       kwargs=[{"value": 2}]),
    op("mindspore.mint.empty", lambda ms, **kw: ms.mint.empty(2, 3, **kw).shape, shapes=[[]], kwargs=[{}], grad=False),
    op("mindspore.mint.empty_like", lambda ms, x: ms.mint.empty_like(x).shape, shapes=[(2, 3)], grad=False),
    op("mindspore.mint.einsum", lambda ms, a, b: ms.mint.einsum("ij,jk->ik", a, b), shapes=[[(2, 3), (3, 4)]]),
    op("mindspore.mint.meshgrid", lambda ms, a, b, **kw: ms.mint.meshgrid(a, b, **kw), shapes=[[(2,), (3,)]],
       kwargs=[{}, {"indexing": "xy"}]),
    op("mindspore.mint.bitwise_not", _mint("bitwise_not"), shapes=[(2, 3)], dtypes=("int32",), grad=False),
    op("mindspore.mint.clone", _mint("clone"), shapes=[(2, 3)]),
    op("mindspore.mint.vdot", _mint("vdot"), shapes=[[(3,), (3,)]]),
    op("mindspore.mint.npu_gelu", _mint("npu_gelu"), shapes=[(2, 3)]),
    op("mindspore.mint.nn.functional.gelu", _mint("nn.functional.gelu"), shapes=[(2, 3)],
       kwargs=[{}, {"approximate": "tanh"}]),
    op("mindspore.mint.nn.functional.one_hot", _mint("nn.functional.one_hot"),
       shapes=[[T((3,), dtype="int64", low=0, high=4), Py(4)]], grad=False),
    op("mindspore.mint.nn.functional.normalize", _mint("nn.functional.normalize"), shapes=[(2, 3)],
       kwargs=[{}, {"p": 1.0, "dim": 0}]),
    op("mindspore.mint.nn.functional.linear", _mint("nn.functional.linear"), shapes=[[(2, 3), (4, 3), (4,)]]),
    op("mindspore.mint.nn.functional.embedding", _mint("nn.functional.embedding"), shapes=[[IDX, (4, 2)]],
       kwargs=[{}, {"padding_idx": 1}]),
    op("mindspore.mint.nn.functional.batch_norm", _mint("nn.functional.batch_norm"),
       shapes=[[(2, 3, 2), T((3,), values=[0.0, 0.5, -0.5]), T((3,), values=[1.0, 2.0, 0.5])]],
       kwargs=[{}, {"training": True}]),
    op("mindspore.mint.nn.functional.conv_transpose2d", _mint("nn.functional.conv_transpose2d"),
       shapes=[[IMG, (2, 3, 3, 3)]], kwargs=[{}, {"stride": 2, "padding": 1, "output_padding": 1}]),
    op("mindspore.mint.nn.functional.relu_", _inplace("nn.functional.relu_"), shapes=[(2, 3)], grad=False),
    op("mindspore.mint.nn.functional.sigmoid_", _inplace("nn.functional.sigmoid_"), shapes=[(2, 3)], grad=False),
    op("mindspore.mint.nn.functional.elu_", _inplace("nn.functional.elu_"), shapes=[(2, 3)], grad=False),
    op("mindspore.mint.nn.functional.hardtanh_", _inplace("nn.functional.hardtanh_"), shapes=[(2, 3)], grad=False),
    op("mindspore.mint.nn.functional.threshold_", _inplace("nn.functional.threshold_"),
       shapes=[[(2, 3), Py(0.2), Py(-1.0)]], grad=False),
    # Cells
    cell("mindspore.mint.nn.SiLU", _nn("SiLU"), shapes=[(2, 3)]),
    cell("mindspore.mint.nn.Sigmoid", _nn("Sigmoid"), shapes=[(2, 3)]),
    cell("mindspore.mint.nn.LogSigmoid", _nn("LogSigmoid"), shapes=[(2, 3)]),
    cell("mindspore.mint.nn.Tanh", _nn("Tanh"), shapes=[(2, 3)]),
    cell("mindspore.mint.nn.ELU", _nn("ELU"), shapes=[(2, 3)], kwargs=[{"alpha": 0.5}]),
    cell("mindspore.mint.nn.Threshold", _nn("Threshold"), shapes=[(2, 3)], kwargs=[{"threshold": 0.1, "value": 2.0}]),
    cell("mindspore.mint.nn.GELU", _nn("GELU"), shapes=[(2, 3)], kwargs=[{}, {"approximate": "tanh"}]),
    cell("mindspore.mint.nn.Hardtanh", _nn("Hardtanh"), shapes=[(2, 3)], kwargs=[{}, {"min_val": -0.5, "max_val": 0.5}]),
    cell("mindspore.mint.nn.ReLU6", _nn("ReLU6"), shapes=[T((2, 3), low=-8, high=8)]),
    cell("mindspore.mint.nn.Mish", _nn("Mish"), shapes=[(2, 3)]),
    cell("mindspore.mint.nn.SELU", _nn("SELU"), shapes=[(2, 3)]),
    cell("mindspore.mint.nn.Hardshrink", _nn("Hardshrink"), shapes=[(2, 3)]),
    cell("mindspore.mint.nn.Hardsigmoid", _nn("Hardsigmoid"), shapes=[T((2, 3), low=-4, high=4)]),
    cell("mindspore.mint.nn.Hardswish", _nn("Hardswish"), shapes=[T((2, 3), low=-4, high=4)]),
    cell("mindspore.mint.nn.PReLU", _nn("PReLU"), shapes=[(2, 3, 2)], kwargs=[{}, {"num_parameters": 3}]),
    cell("mindspore.mint.nn.Flatten", _nn("Flatten"), shapes=[(2, 3, 4)], kwargs=[{}, {"start_dim": 0}]),
    cell("mindspore.mint.nn.Linear", _nn("Linear"), shapes=[(2, 3)], kwargs=[{"in_features": 3, "out_features": 4}]),
    cell("mindspore.mint.nn.PixelShuffle", _nn("PixelShuffle"), shapes=[(1, 4, 2, 2)], kwargs=[{"upscale_factor": 2}]),
    cell("mindspore.mint.nn.UpsamplingNearest2d", _nn("UpsamplingNearest2d"), shapes=[IMG], kwargs=[{"size": (6, 8)}]),
    cell("mindspore.mint.nn.UpsamplingBilinear2d", _nn("UpsamplingBilinear2d"), shapes=[IMG], kwargs=[{"size": (6, 8)}]),
    cell("mindspore.mint.nn.AdaptiveAvgPool1d", _nn("AdaptiveAvgPool1d"), shapes=[(1, 2, 6)], kwargs=[{"output_size": 3}]),
    cell("mindspore.mint.nn.AdaptiveAvgPool2d", _nn("AdaptiveAvgPool2d"), shapes=[IMG], kwargs=[{"output_size": 2}]),
    cell("mindspore.mint.nn.AdaptiveAvgPool3d", _nn("AdaptiveAvgPool3d"), shapes=[(1, 2, 2, 4, 4)],
         kwargs=[{"output_size": (1, 2, 2)}]),
    cell("mindspore.mint.nn.AdaptiveMaxPool1d", _nn("AdaptiveMaxPool1d"), shapes=[(1, 2, 6)], kwargs=[{"output_size": 3}]),
    cell("mindspore.mint.nn.AdaptiveMaxPool2d", _nn("AdaptiveMaxPool2d"), shapes=[IMG], kwargs=[{"output_size": 2}]),
    cell("mindspore.mint.nn.MaxUnpool2d", _nn("MaxUnpool2d"),
         shapes=[[(1, 1, 2, 2), T((1, 1, 2, 2), values=[[[[0, 3], [9, 14]]]], dtype="int64")]],
         kwargs=[{"kernel_size": 2}], grad=False),
    cell("mindspore.mint.nn.Conv1d", _nn("Conv1d"), shapes=[(1, 2, 6)],
         kwargs=[{"in_channels": 2, "out_channels": 3, "kernel_size": 3},
                 {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1, "bias": False}]),
    cell("mindspore.mint.nn.Conv2d", _nn("Conv2d"), shapes=[IMG],
         kwargs=[{"in_channels": 2, "out_channels": 3, "kernel_size": 3},
                 {"in_channels": 2, "out_channels": 4, "kernel_size": 3, "padding": 1, "stride": 2, "groups": 2},
                 {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1, "padding_mode": "reflect"}]),
    cell("mindspore.mint.nn.Conv3d", _nn("Conv3d"), shapes=[(1, 2, 3, 4, 4)],
         kwargs=[{"in_channels": 2, "out_channels": 3, "kernel_size": 2}]),
    cell("mindspore.mint.nn.ConvTranspose2d", _nn("ConvTranspose2d"), shapes=[IMG],
         kwargs=[{"in_channels": 2, "out_channels": 3, "kernel_size": 3},
                 {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "stride": 2, "padding": 1}]),
    cell("mindspore.mint.nn.BatchNorm1d", _nn("BatchNorm1d"), shapes=[(4, 3)], kwargs=[{"num_features": 3}]),
    cell("mindspore.mint.nn.BatchNorm2d", _nn("BatchNorm2d"), shapes=[IMG], kwargs=[{"num_features": 2}]),
    cell("mindspore.mint.nn.BatchNorm3d", _nn("BatchNorm3d"), shapes=[(1, 2, 2, 2, 2)], kwargs=[{"num_features": 2}]),
    cell("mindspore.mint.nn.SyncBatchNorm", _nn("SyncBatchNorm"), shapes=[IMG], kwargs=[{"num_features": 2}]),
    cell("mindspore.mint.nn.GroupNorm", _nn("GroupNorm"), shapes=[(2, 4, 3)], kwargs=[{"num_groups": 2, "num_channels": 4}]),
    cell("mindspore.mint.nn.ConstantPad1d", _nn("ConstantPad1d"), shapes=[(2, 3)], kwargs=[{"padding": (1, 2), "value": 0.5}]),
    cell("mindspore.mint.nn.ConstantPad2d", _nn("ConstantPad2d"), shapes=[(1, 2, 3)], kwargs=[{"padding": 1, "value": -1.0}]),
    cell("mindspore.mint.nn.ConstantPad3d", _nn("ConstantPad3d"), shapes=[(1, 2, 2, 3)], kwargs=[{"padding": 1, "value": 2.0}]),
    cell("mindspore.mint.nn.ZeroPad1d", _nn("ZeroPad1d"), shapes=[(2, 3)], kwargs=[{"padding": (2, 0)}]),
    cell("mindspore.mint.nn.ZeroPad2d", _nn("ZeroPad2d"), shapes=[(1, 2, 3)], kwargs=[{"padding": (1, 0, 0, 2)}]),
    cell("mindspore.mint.nn.ZeroPad3d", _nn("ZeroPad3d"), shapes=[(1, 2, 2, 3)], kwargs=[{"padding": 1}]),
    cell("mindspore.mint.nn.ReflectionPad1d", _nn("ReflectionPad1d"), shapes=[(1, 2, 4)], kwargs=[{"padding": (2, 1)}]),
    cell("mindspore.mint.nn.ReflectionPad2d", _nn("ReflectionPad2d"), shapes=[IMG], kwargs=[{"padding": 1}]),
    cell("mindspore.mint.nn.ReflectionPad3d", _nn("ReflectionPad3d"), shapes=[(1, 1, 3, 3, 3)], kwargs=[{"padding": 1}]),
    cell("mindspore.mint.nn.ReplicationPad1d", _nn("ReplicationPad1d"), shapes=[(1, 2, 4)], kwargs=[{"padding": (2, 1)}]),
    cell("mindspore.mint.nn.ReplicationPad2d", _nn("ReplicationPad2d"), shapes=[IMG], kwargs=[{"padding": 1}]),
    cell("mindspore.mint.nn.ReplicationPad3d", _nn("ReplicationPad3d"), shapes=[(1, 1, 3, 3, 3)], kwargs=[{"padding": 1}]),
    # losses: (input, target)
    cell("mindspore.mint.nn.MSELoss", _nn("MSELoss"), shapes=[[(2, 3), (2, 3)]], kwargs=[{}, {"reduction": "sum"}]),
    cell("mindspore.mint.nn.L1Loss", _nn("L1Loss"), shapes=[[(2, 3), (2, 3)]], kwargs=[{}, {"reduction": "none"}]),
    cell("mindspore.mint.nn.SmoothL1Loss", _nn("SmoothL1Loss"), shapes=[[(2, 3), (2, 3)]], kwargs=[{}, {"beta": 0.5}]),
    cell("mindspore.mint.nn.SoftMarginLoss", _nn("SoftMarginLoss"), shapes=[[(2, 3), T((2, 3), values=[[1, -1, 1], [-1, 1, 1]])]]),
    cell("mindspore.mint.nn.BCELoss", _nn("BCELoss"), shapes=[[T((2, 3), low=0.1, high=0.9), T((2, 3), low=0.1, high=0.9)]]),
    cell("mindspore.mint.nn.BCEWithLogitsLoss", _nn("BCEWithLogitsLoss"), shapes=[[(2, 3), T((2, 3), low=0.1, high=0.9)]]),
    cell("mindspore.mint.nn.KLDivLoss", _nn("KLDivLoss"), shapes=[[(2, 3), T((2, 3), low=0.1, high=0.9)]],
         kwargs=[{"reduction": "sum"}]),
    cell("mindspore.mint.nn.CosineEmbeddingLoss", _nn("CosineEmbeddingLoss"),
         shapes=[[(2, 3), (2, 3), T((2,), values=[1.0, -1.0])]], kwargs=[{"margin": 0.1}]),
]
