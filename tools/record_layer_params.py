"""Record real MindSpore 2.10's parameter names, shapes and order for the nn layers of
tests/test_layers_breadth.py into tests/fixtures/layer_params.json (checkpoints list them so).

Run once with an installed MindSpore (never needed by the tests):
    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_layer_params.py
"""
from __future__ import annotations

import json
import pathlib

# name -> (positional args, keyword args): one small instance per layer
LAYERS = {
    "Conv3d": ((2, 4, 3), {"has_bias": True}),
    "Conv3dTranspose": ((2, 4, 3), {"has_bias": True}),
    "Conv1dTranspose": ((2, 4, 3), {"has_bias": True}),
    "PReLU": ((3,), {}),
    "BatchNorm3d": ((4,), {}),
    "SyncBatchNorm": ((4,), {}),
    "GroupNorm": ((2, 4), {}),
    "InstanceNorm1d": ((4,), {}),
    "InstanceNorm2d": ((4,), {}),
    "InstanceNorm3d": ((4,), {}),
    "Conv2dBnAct": ((2, 4, 3), {"has_bn": True, "activation": "relu", "has_bias": True}),
    "DenseBnAct": ((3, 4), {"has_bn": True, "activation": "relu"}),
    "EmbeddingLookup": ((10, 4), {}),
    "Linear": ((3, 4), {}),
    "GRU": ((3, 4), {"num_layers": 2, "bidirectional": True}),
    "RNN": ((3, 4), {"num_layers": 1}),
    "GRUCell": ((3, 4), {}),
    "RNNCell": ((3, 4), {}),
    "LSTMCell": ((3, 4), {}),
    # round 2 (tests/test_layers_breadth2.py)
    "MultiheadAttention": ((8, 2), {}),
    "TransformerEncoderLayer": ((8, 2, 16), {}),
    "TransformerDecoderLayer": ((8, 2, 16), {}),
    "Transformer": ((8, 2, 1, 1, 16), {}),
    "SSIM": ((), {"filter_size": 3}),
    "MSSSIM": ((), {"filter_size": 3, "power_factors": (0.5, 0.5)}),
    "PReLUExt": ((3,), {}),
    "LayerNormExt": (((4,),), {}),
    "BiDense": ((3, 4, 5), {}),
}

# Conv3dTranspose outputs for deterministic inputs (x = arange / 10 - 1, w = cos(arange)), per configuration
CONV3D_TRANSPOSE = {
    "same_s2": {"pad_mode": "same", "stride": 2},
    "pad_op": {"pad_mode": "pad", "padding": (1, 0, 0, 1, 1, 0), "stride": 2, "output_padding": 1},
    "valid_dil": {"pad_mode": "valid", "stride": (1, 2, 1), "dilation": (1, 2, 1), "group": 2},
}
CONV3D_TRANSPOSE_SHAPES = {"x": [1, 2, 3, 3, 2], "w": [2, 2, 2, 3, 2]}


def conv3d_transpose_inputs():
    """The deterministic x and weight of the CONV3D_TRANSPOSE records (numpy only: the tests rebuild them)."""
    import numpy as np
    x = (np.arange(np.prod(CONV3D_TRANSPOSE_SHAPES["x"])) / 10 - 1).reshape(CONV3D_TRANSPOSE_SHAPES["x"])
    w = np.cos(np.arange(np.prod(CONV3D_TRANSPOSE_SHAPES["w"]))).reshape(CONV3D_TRANSPOSE_SHAPES["w"])
    return x.astype(np.float32), w.astype(np.float32)


def main() -> None:
    from mindspore import nn
    record = {}
    for name, (args, kwargs) in LAYERS.items():
        cell = getattr(nn, name)(*args, **kwargs)
        record[name] = [[path, p.name, list(p.shape), bool(p.requires_grad)]
                        for path, p in cell.parameters_and_names()]
    from mindspore import Tensor
    x, w = conv3d_transpose_inputs()
    values = {}
    for key, kwargs in CONV3D_TRANSPOSE.items():
        cell = nn.Conv3dTranspose(2, 2 * kwargs.get("group", 1), (2, 3, 2), weight_init=Tensor(w), **kwargs)
        values[key] = cell(Tensor(x)).asnumpy().round(6).tolist()
    out = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "layer_params.json"
    out.write_text(json.dumps({"args": {k: [list(a), kw] for k, (a, kw) in LAYERS.items()},
                               "parameters": record, "conv3d_transpose": values}, indent=1) + "\n")


if __name__ == "__main__":
    main()
