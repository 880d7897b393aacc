"""Numpy-only forward passes of the example networks: the independent oracle for examples and tests.

Nothing here imports ascendemu; every layer is written from its textbook definition (MindSpore's
semantics) and computed in float64, so agreement with the emulator is evidence, not an echo.
Weights come in as ``{parameter name: array}``, the names ``Cell.parameters_dict()`` gives
(``conv1.weight``, ``bn1.moving_mean``, ``self_attn.query.bias`` ...).
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

Params = Mapping[str, np.ndarray]

BATCHNORM_EPS = 1e-5       # nn.BatchNorm2d default
LAYERNORM_EPS = 1e-7       # nn.LayerNorm default
GELU_TANH_COEF = 0.044715


# ------------------------------------------------------------------------------------------- layers

def conv2d(x: np.ndarray, w: np.ndarray, stride: int = 1, pad: int | tuple[int, int, int, int] = 0,
           dilation: int = 1, group: int = 1) -> np.ndarray:
    """NCHW convolution (cross-correlation, no bias) over explicit windows of the zero-padded input.

    ``pad`` is one int or (top, bottom, left, right).
    """
    pt, pb, pl, pr = (pad,) * 4 if isinstance(pad, int) else pad
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oc, cg, kh, kw = w.shape
    span_h, span_w = dilation * (kh - 1) + 1, dilation * (kw - 1) + 1
    windows = np.lib.stride_tricks.sliding_window_view(xp, (span_h, span_w), axis=(2, 3))
    windows = windows[:, :, ::stride, ::stride, ::dilation, ::dilation]      # (N, C, OH, OW, kh, kw)
    ocg = oc // group
    parts = [np.einsum("nchwij,ocij->nohw", windows[:, g * cg:(g + 1) * cg],
                       np.asarray(w[g * ocg:(g + 1) * ocg], np.float64), optimize=True)
             for g in range(group)]
    return np.concatenate(parts, axis=1)


def max_pool2d(x: np.ndarray, kernel: int, stride: int, pad_mode: str = "valid") -> np.ndarray:
    """NCHW max pooling; "same" pads with -inf so that out = ceil(in / stride) (TensorFlow-style)."""
    n, c, h, w = x.shape
    if pad_mode == "same":
        oh, ow = -(-h // stride), -(-w // stride)
        ph, pw = max((oh - 1) * stride + kernel - h, 0), max((ow - 1) * stride + kernel - w, 0)
        x = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2)),
                   constant_values=-np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(np.asarray(x, np.float64), (kernel, kernel), axis=(2, 3))
    return windows[:, :, ::stride, ::stride].max(axis=(4, 5))


def dense(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """y = x W^T + b over the last axis (any leading dims)."""
    y = np.asarray(x, np.float64) @ np.asarray(w, np.float64).T
    return y if b is None else y + b


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """MindSpore's GeLU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + GELU_TANH_COEF * x ** 3)))


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def batch_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, mean: np.ndarray, var: np.ndarray,
               eps: float = BATCHNORM_EPS) -> np.ndarray:
    """Inference batch norm over the channel axis 1 with moving statistics."""
    shape = (1, -1) + (1,) * (x.ndim - 2)
    scale = np.asarray(gamma, np.float64) / np.sqrt(np.asarray(var, np.float64) + eps)
    return (x - np.reshape(mean, shape)) * scale.reshape(shape) + np.reshape(beta, shape)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = LAYERNORM_EPS) -> np.ndarray:
    """Normalise over the last axis (biased variance), then scale and shift."""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Scaled dot-product attention over (..., seq, head_dim)."""
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    return softmax(scores, axis=-1) @ v


# ----------------------------------------------------------------------------------------- networks

def _sub(params: Params, prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}


def mlp(params: Params, x: np.ndarray, hidden_layers: int = 2) -> np.ndarray:
    """MLP: ReLU(Dense) x hidden_layers, then the Dense head."""
    for i in range(hidden_layers):
        x = relu(dense(x, params[f"layers.{i}.weight"], params[f"layers.{i}.bias"]))
    return dense(x, params["head.weight"], params["head.bias"])


def lenet5(params: Params, x: np.ndarray) -> np.ndarray:
    """LeNet-5 (model zoo): conv5-relu-pool2, conv5-relu-pool2, flatten, 120-84-classes."""
    x = max_pool2d(relu(conv2d(x, params["conv1.weight"])), 2, 2)
    x = max_pool2d(relu(conv2d(x, params["conv2.weight"])), 2, 2)
    x = x.reshape(x.shape[0], -1)
    x = relu(dense(x, params["fc1.weight"], params["fc1.bias"]))
    x = relu(dense(x, params["fc2.weight"], params["fc2.bias"]))
    return dense(x, params["fc3.weight"], params["fc3.bias"])


def _bn(params: Params, name: str, x: np.ndarray) -> np.ndarray:
    return batch_norm(x, params[f"{name}.gamma"], params[f"{name}.beta"], params[f"{name}.moving_mean"],
                      params[f"{name}.moving_variance"])


def basic_block(params: Params, x: np.ndarray, stride: int = 1) -> np.ndarray:
    """ResNet basic block; the 1x1 conv + BN shortcut is used when its weights are present."""
    if "downsample.0.weight" in params:
        identity = _bn(params, "downsample.1", conv2d(x, params["downsample.0.weight"], stride=stride))
    else:
        identity = x
    out = relu(_bn(params, "bn1", conv2d(x, params["conv1.weight"], stride=stride, pad=1)))
    out = _bn(params, "bn2", conv2d(out, params["conv2.weight"], pad=1))
    return relu(out + identity)


RESNET18_STAGE_STRIDES = (1, 2, 2, 2)


def resnet18(params: Params, x: np.ndarray, cifar_stem: bool = False) -> np.ndarray:
    """ResNet-18: 7x7/2 conv-BN-ReLU and 3x3/2 max pool (same), or with ``cifar_stem`` a 3x3/1
    conv-BN-ReLU and no pool; then 4 stages of 2 blocks, global mean, Dense."""
    if cifar_stem:
        x = relu(_bn(params, "bn1", conv2d(x, params["conv1.weight"], stride=1, pad=1)))
    else:
        x = relu(_bn(params, "bn1", conv2d(x, params["conv1.weight"], stride=2, pad=3)))
        x = max_pool2d(x, 3, 2, "same")
    for stage, stride in enumerate(RESNET18_STAGE_STRIDES, start=1):
        x = basic_block(_sub(params, f"layer{stage}.0."), x, stride)
        x = basic_block(_sub(params, f"layer{stage}.1."), x, 1)
    x = x.mean(axis=(2, 3))
    return dense(x, params["fc.weight"], params["fc.bias"])


def multi_head_attention(params: Params, x: np.ndarray, nhead: int) -> np.ndarray:
    """Self-attention over (batch, seq, d_model) with Q/K/V/out projections."""
    batch, seq, d_model = x.shape
    head_dim = d_model // nhead

    def heads(name: str) -> np.ndarray:
        y = dense(x, params[f"{name}.weight"], params[f"{name}.bias"])
        return y.reshape(batch, seq, nhead, head_dim).transpose(0, 2, 1, 3)

    ctx = attention(heads("query"), heads("key"), heads("value"))
    ctx = ctx.transpose(0, 2, 1, 3).reshape(batch, seq, d_model)
    return dense(ctx, params["out.weight"], params["out.bias"])


def transformer_encoder_layer(params: Params, x: np.ndarray, nhead: int) -> np.ndarray:
    """Post-norm encoder layer: x = LN(x + MHA(x)); x = LN(x + W2 GeLU(W1 x))."""
    x = np.asarray(x, np.float64)
    x = layer_norm(x + multi_head_attention(_sub(params, "self_attn."), x, nhead),
                   params["norm1.gamma"], params["norm1.beta"])
    ffn = dense(gelu_tanh(dense(x, params["linear1.weight"], params["linear1.bias"])),
                params["linear2.weight"], params["linear2.bias"])
    return layer_norm(x + ffn, params["norm2.gamma"], params["norm2.beta"])
