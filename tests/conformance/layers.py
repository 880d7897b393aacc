"""``mindspore.nn`` layer specs: each Cell built from the sample's kwargs, its parameters set from the
sample (so MindSpore's initialisers never matter), evaluated (``set_train(False)``) unless ``train``."""
from __future__ import annotations

from .core import T, cell

F = ("float32", "float16")
IMG = (2, 3, 6, 6)


def _nn(name: str):
    return lambda ms, **kw: getattr(ms.nn, name)(**kw)


def _sequential(ms):
    return ms.nn.SequentialCell([ms.nn.Dense(4, 3), ms.nn.ReLU(), ms.nn.Dense(3, 2)])


SPECS = [
    cell("mindspore.nn.Conv2d", _nn("Conv2d"), shapes=[IMG],
         kwargs=[{"in_channels": 3, "out_channels": 4, "kernel_size": 3},
                 {"in_channels": 3, "out_channels": 4, "kernel_size": 3, "pad_mode": "pad", "padding": 1, "stride": 2,
                  "has_bias": True},
                 {"in_channels": 3, "out_channels": 6, "kernel_size": (3, 2), "group": 3, "pad_mode": "valid"}]),
    cell("mindspore.nn.Conv1d", _nn("Conv1d"), shapes=[(2, 3, 7)],
         kwargs=[{"in_channels": 3, "out_channels": 2, "kernel_size": 3},
                 {"in_channels": 3, "out_channels": 2, "kernel_size": 3, "pad_mode": "valid", "has_bias": True}]),
    cell("mindspore.nn.Conv2dTranspose", _nn("Conv2dTranspose"), shapes=[(2, 3, 4, 4)],
         kwargs=[{"in_channels": 3, "out_channels": 2, "kernel_size": 3},
                 {"in_channels": 3, "out_channels": 2, "kernel_size": 2, "stride": 2, "pad_mode": "valid", "has_bias": True}]),
    # a float16 input to a float32 Dense: MindSpore's MatMul refuses the mixed dtypes (TypeError)
    cell("mindspore.nn.Dense", _nn("Dense"), shapes=[(2, 4), (2, 3, 4)],
         kwargs=[{"in_channels": 4, "out_channels": 3}, {"in_channels": 4, "out_channels": 3, "has_bias": False},
                 {"in_channels": 4, "out_channels": 3, "activation": "relu"}],
         errors=[(T((2, 4), "float16"), {"in_channels": 4, "out_channels": 3})]),
    cell("mindspore.nn.SequentialCell", lambda ms: _sequential(ms), shapes=[(2, 4)]),
    cell("mindspore.nn.BatchNorm2d", _nn("BatchNorm2d"), shapes=[(2, 3, 2, 2)], kwargs=[{"num_features": 3}]),
    cell("mindspore.nn.BatchNorm1d", _nn("BatchNorm1d"), shapes=[(4, 3)], kwargs=[{"num_features": 3}]),
    cell("mindspore.nn.LayerNorm", _nn("LayerNorm"), shapes=[(2, 3, 4)],
         kwargs=[{"normalized_shape": (4,)}, {"normalized_shape": (3, 4), "begin_norm_axis": 1, "begin_params_axis": 1}]),
    cell("mindspore.nn.MaxPool2d", _nn("MaxPool2d"), shapes=[IMG], dtypes=F,
         kwargs=[{"kernel_size": 2, "stride": 2}, {"kernel_size": 3, "stride": 1, "pad_mode": "same"}]),
    cell("mindspore.nn.AvgPool2d", _nn("AvgPool2d"), shapes=[IMG], dtypes=F,
         kwargs=[{"kernel_size": 2, "stride": 2}, {"kernel_size": 3, "stride": 2, "pad_mode": "same"}]),
    cell("mindspore.nn.Dropout", _nn("Dropout"), shapes=[(2, 5)], kwargs=[{}, {"p": 0.3}]),
    cell("mindspore.nn.Pad", _nn("Pad"), shapes=[(2, 3)],
         kwargs=[{"paddings": ((1, 1), (2, 0))}, {"paddings": ((1, 1), (2, 1)), "mode": "REFLECT"}]),
    cell("mindspore.nn.Flatten", _nn("Flatten"), shapes=[(2, 3, 4)], kwargs=[{}, {"start_dim": 0}]),
    cell("mindspore.nn.Embedding", _nn("Embedding"), shapes=[T((2, 3), dtype="int32", low=0, high=5)],
         kwargs=[{"vocab_size": 5, "embedding_size": 4}, {"vocab_size": 5, "embedding_size": 2, "padding_idx": 0}]),
    cell("mindspore.nn.OneHot", _nn("OneHot"), shapes=[T((3,), dtype="int32", low=0, high=4)],
         kwargs=[{"depth": 4}, {"depth": 4, "axis": 0, "on_value": 2.0}], grad=False),
    cell("mindspore.nn.CentralCrop", _nn("CentralCrop"), shapes=[(1, 2, 6, 6)], kwargs=[{"central_fraction": 0.5}]),
    cell("mindspore.nn.ClipByNorm", lambda ms: ms.nn.ClipByNorm(), shapes=[[(2, 3), T((), values=0.5)]]),
    cell("mindspore.nn.Identity", _nn("Identity"), shapes=[(2, 3)]),
]
ACTIVATIONS = ["ReLU", "Sigmoid", "Softmax", "LeakyReLU", "GELU", "ReLU6", "Tanh", "LogSoftmax", "HSwish", "HSigmoid"]
# 0-d inputs: MindSpore's Softmax and LogSoftmax refuse them (no axis -1)
SPECS += [cell(f"mindspore.nn.{name}", _nn(name), shapes=[(2, 5)] if "Softmax" in name else [(2, 5), ()], dtypes=F,
               errors=[((), {})] if "Softmax" in name else ()) for name in ACTIVATIONS]
SPECS += [
    cell("mindspore.nn.LeakyReLU", _nn("LeakyReLU"), shapes=[(2, 5)], kwargs=[{"alpha": 0.1}]),
    cell("mindspore.nn.Softmax", _nn("Softmax"), shapes=[(2, 5)], kwargs=[{"axis": 0}]),
    cell("mindspore.nn.GELU", _nn("GELU"), shapes=[(2, 5)], kwargs=[{"approximate": False}]),
]

# --- more layers (served later), most used first --------------------------------------------------
SPECS += [
    cell("mindspore.nn.Conv3d", _nn("Conv3d"), shapes=[(1, 2, 4, 4, 4)],
         kwargs=[{"in_channels": 2, "out_channels": 3, "kernel_size": 3},
                 {"in_channels": 2, "out_channels": 3, "kernel_size": 2, "stride": 2, "pad_mode": "valid", "has_bias": True}]),
    cell("mindspore.nn.PReLU", _nn("PReLU"), shapes=[(2, 3, 2, 2)], kwargs=[{}, {"channel": 3, "w": 0.1}]),
    cell("mindspore.nn.BatchNorm3d", _nn("BatchNorm3d"), shapes=[(2, 3, 2, 2, 2)], kwargs=[{"num_features": 3}]),
    cell("mindspore.nn.GroupNorm", _nn("GroupNorm"), shapes=[(2, 4, 3, 3)], kwargs=[{"num_groups": 2, "num_channels": 4}]),
    cell("mindspore.nn.ELU", _nn("ELU"), shapes=[(2, 5)], dtypes=F),
    cell("mindspore.nn.SiLU", _nn("SiLU"), shapes=[(2, 5)], dtypes=F),
    cell("mindspore.nn.Linear", _nn("Linear"), shapes=[(2, 4)], kwargs=[{"in_features": 4, "out_features": 3},
                                                                         {"in_features": 4, "out_features": 3, "bias": False}]),
    cell("mindspore.nn.MaxPool1d", _nn("MaxPool1d"), shapes=[(2, 3, 8)], kwargs=[{"kernel_size": 2, "stride": 2}]),
    cell("mindspore.nn.AvgPool1d", _nn("AvgPool1d"), shapes=[(2, 3, 8)], kwargs=[{"kernel_size": 2, "stride": 2}]),
    cell("mindspore.nn.AdaptiveAvgPool2d", _nn("AdaptiveAvgPool2d"), shapes=[(2, 3, 6, 6)],
         kwargs=[{"output_size": (2, 2)}, {"output_size": 1}]),
    cell("mindspore.nn.AdaptiveAvgPool1d", _nn("AdaptiveAvgPool1d"), shapes=[(2, 3, 8)], kwargs=[{"output_size": 4}]),
    cell("mindspore.nn.LogSigmoid", _nn("LogSigmoid"), shapes=[(2, 5)]),
    cell("mindspore.nn.Dropout2d", _nn("Dropout2d"), shapes=[(2, 3, 2, 2)]),
    cell("mindspore.nn.Hardtanh", _nn("Hardtanh"), shapes=[(2, 5)], kwargs=[{}, {"min_val": -0.5, "max_val": 0.5}]),
    # no gradient: MindSpore 2.10 CPU's SeLU gradient is wrong for x < 0 (see math.NO_CPU_GRAD)
    cell("mindspore.nn.SeLU", _nn("SeLU"), shapes=[(2, 5)], grad=False),
    cell("mindspore.nn.CELU", _nn("CELU"), shapes=[(2, 5)], kwargs=[{}, {"alpha": 0.5}]),
    cell("mindspore.nn.Mish", _nn("Mish"), shapes=[(2, 5)]),
    cell("mindspore.nn.Softsign", _nn("Softsign"), shapes=[(2, 5)]),
    cell("mindspore.nn.Tanhshrink", _nn("Tanhshrink"), shapes=[(2, 5)]),
    cell("mindspore.nn.Softmin", _nn("Softmin"), shapes=[(2, 5)], kwargs=[{}, {"axis": 0}]),
    cell("mindspore.nn.Softmax2d", _nn("Softmax2d"), shapes=[(2, 3, 2, 2)]),
    cell("mindspore.nn.HShrink", _nn("HShrink"), shapes=[(2, 5)], kwargs=[{}, {"lambd": 1.0}]),
    cell("mindspore.nn.SoftShrink", _nn("SoftShrink"), shapes=[(2, 5)], kwargs=[{}, {"lambd": 1.0}]),
    cell("mindspore.nn.FastGelu", _nn("FastGelu"), shapes=[(2, 5)]),
    cell("mindspore.nn.GLU", _nn("GLU"), shapes=[(2, 6)]),
    cell("mindspore.nn.Threshold", _nn("Threshold"), shapes=[(2, 5)], kwargs=[{"threshold": 0.5, "value": -1.0}]),
    cell("mindspore.nn.PixelShuffle", _nn("PixelShuffle"), shapes=[(1, 8, 2, 2)], kwargs=[{"upscale_factor": 2}]),
    cell("mindspore.nn.PixelUnshuffle", _nn("PixelUnshuffle"), shapes=[(1, 2, 4, 4)], kwargs=[{"downscale_factor": 2}]),
    cell("mindspore.nn.ZeroPad2d", _nn("ZeroPad2d"), shapes=[(1, 2, 3, 3)], kwargs=[{"padding": 1}, {"padding": (1, 0, 2, 1)}]),
    cell("mindspore.nn.ConstantPad2d", _nn("ConstantPad2d"), shapes=[(1, 2, 3, 3)], kwargs=[{"padding": 1, "value": 0.5}]),
    cell("mindspore.nn.ConstantPad1d", _nn("ConstantPad1d"), shapes=[(1, 2, 3)], kwargs=[{"padding": (1, 2), "value": 0.5}]),
    cell("mindspore.nn.ReflectionPad2d", _nn("ReflectionPad2d"), shapes=[(1, 2, 3, 3)], kwargs=[{"padding": 1}]),
    cell("mindspore.nn.ReflectionPad1d", _nn("ReflectionPad1d"), shapes=[(1, 2, 4)], kwargs=[{"padding": (1, 2)}]),
    cell("mindspore.nn.ReplicationPad2d", _nn("ReplicationPad2d"), shapes=[(1, 2, 3, 3)], kwargs=[{"padding": 1}]),
    cell("mindspore.nn.ReplicationPad1d", _nn("ReplicationPad1d"), shapes=[(1, 2, 4)], kwargs=[{"padding": (1, 2)}]),
    cell("mindspore.nn.Conv1dTranspose", _nn("Conv1dTranspose"), shapes=[(2, 3, 5)],
         kwargs=[{"in_channels": 3, "out_channels": 2, "kernel_size": 3}]),
    cell("mindspore.nn.Tril", _nn("Tril"), shapes=[(3, 4)]),
    cell("mindspore.nn.Triu", _nn("Triu"), shapes=[(3, 4)]),
    cell("mindspore.nn.Unflatten", _nn("Unflatten"), shapes=[(2, 6)], kwargs=[{"axis": 1, "unflattened_size": (2, 3)}]),
    cell("mindspore.nn.ChannelShuffle", _nn("ChannelShuffle"), shapes=[(1, 4, 2, 2)], kwargs=[{"groups": 2}]),
    cell("mindspore.nn.EmbeddingLookup", _nn("EmbeddingLookup"), shapes=[T((2, 3), dtype="int32", low=0, high=5)],
         kwargs=[{"vocab_size": 5, "embedding_size": 4}]),
    cell("mindspore.nn.MatMul", lambda ms: ms.nn.MatMul(), shapes=[[(2, 3), (3, 4)]]),
]
# left out: InstanceNorm2d and Roll (MindSpore 2.10 CPU has no kernel for them: nothing to record)
