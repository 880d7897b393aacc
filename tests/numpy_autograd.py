"""Reverse-mode autodiff and MindSpore's optimizers over numpy in float64: the independent oracle for
training steps (tests/test_train_reference.py).

Nothing here imports ascendemu. Each op computes its forward in float64 and records on its inputs'
``Tape`` a vector-Jacobian product written from the op's textbook derivative; ``Tape.backward``
walks the records in reverse and sums the cotangents into ``Var.grad``. The forward convolution is
examples/reference.py's (numpy-only), every backward rule is written here. The optimizers follow
MindSpore's documented update formulas (../shared/REFERENCE-training.md 4.2), BatchNorm's moving
statistics MindSpore's training update (unbiased batch variance), so a disagreement with the emulator
points at a bug on one side, never at a shared helper.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.reference import BATCHNORM_EPS, GELU_TANH_COEF, LAYERNORM_EPS  # noqa: E402
from examples.reference import conv2d as conv2d_forward  # noqa: E402
from examples.reference import gelu_tanh as gelu_forward  # noqa: E402

Vjp = Callable[[np.ndarray], Sequence["np.ndarray | None"]]


class Var:
    """A float64 value on a tape; ``grad`` holds d(output)/d(value) after ``Tape.backward``."""

    __slots__ = ("value", "tape", "grad")

    def __init__(self, tape: "Tape", value: np.ndarray):
        self.tape, self.value, self.grad = tape, np.asarray(value, np.float64), None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape


class Tape:
    """The ops of one forward pass in execution order, each as (output, inputs, vjp)."""

    def __init__(self) -> None:
        self._records: list[tuple[Var, tuple[Var, ...], Vjp]] = []

    def var(self, value: np.ndarray) -> Var:
        """A leaf: a parameter or an input."""
        return Var(self, value)

    def record(self, value: np.ndarray, inputs: Sequence[Var], vjp: Vjp) -> Var:
        out = Var(self, value)
        self._records.append((out, tuple(inputs), vjp))
        return out

    def backward(self, out: Var, sens: np.ndarray | None = None) -> None:
        """Reverse accumulation from ``out`` with output gradient ``sens`` (default ones)."""
        out.grad = np.ones_like(out.value) if sens is None else np.asarray(sens, np.float64)
        for result, inputs, vjp in reversed(self._records):
            if result.grad is None:
                continue
            for var, ct in zip(inputs, vjp(result.grad), strict=True):
                if ct is not None:
                    ct = _sum_to(np.asarray(ct, np.float64), var.shape)
                    var.grad = ct if var.grad is None else var.grad + ct


def _sum_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Undo numpy broadcasting: sum ``g`` down to ``shape``."""
    if g.shape == shape:
        return g
    g = g.sum(axis=tuple(range(g.ndim - len(shape))))
    return g.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1), keepdims=True)


# ----------------------------------------------------------------------------------- elementwise

def add(a: Var, b: Var) -> Var:
    return a.tape.record(a.value + b.value, (a, b), lambda g: (g, g))


def scale(x: Var, c: float) -> Var:
    """c * x for a constant c."""
    return x.tape.record(x.value * c, (x,), lambda g: (g * c,))


def relu(x: Var) -> Var:
    return x.tape.record(np.maximum(x.value, 0.0), (x,), lambda g: (g * (x.value > 0),))


def gelu(x: Var) -> Var:
    """Tanh GeLU; d/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2), t = tanh(k (x + c x^3))."""
    k, c, v = math.sqrt(2.0 / math.pi), GELU_TANH_COEF, x.value
    t = np.tanh(k * (v + c * v ** 3))
    d = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * k * (1.0 + 3.0 * c * v * v)
    return x.tape.record(gelu_forward(v), (x,), lambda g: (g * d,))


def dropout(x: Var, mask: np.ndarray, p: float) -> Var:
    """MindSpore's Dropout with a given keep ``mask`` (1 keeps, 0 drops) and drop probability ``p``:
    survivors are scaled by 1 / (1 - p). p = 0 with a mask of ones is the identity."""
    factor = np.asarray(mask, np.float64) / (1.0 - p)
    return x.tape.record(x.value * factor, (x,), lambda g: (g * factor,))


# ------------------------------------------------------------------------------------ shape ops

def reshape(x: Var, shape: tuple[int, ...]) -> Var:
    return x.tape.record(x.value.reshape(shape), (x,), lambda g: (g.reshape(x.shape),))


def transpose(x: Var, perm: tuple[int, ...]) -> Var:
    inverse = tuple(np.argsort(perm))
    return x.tape.record(x.value.transpose(perm), (x,), lambda g: (g.transpose(inverse),))


def mean(x: Var, axes: tuple[int, ...]) -> Var:
    """Mean over ``axes`` (dropped); each input element receives g / count."""
    count = math.prod(x.shape[a] for a in axes)
    kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return x.tape.record(x.value.mean(axis=axes), (x,),
                         lambda g: (np.broadcast_to(g.reshape(kept), x.shape) / count,))


# ----------------------------------------------------------------------------- linear algebra

def dense(x: Var, w: Var, b: Var | None = None) -> Var:
    """y = x W^T + b over the last axis; dx = g W, dW = g^T x, db = sum g (leading axes flattened)."""
    y = x.value @ w.value.T + (0.0 if b is None else b.value)

    def vjp(g: np.ndarray) -> tuple:
        g2, x2 = g.reshape(-1, g.shape[-1]), x.value.reshape(-1, x.shape[-1])
        grads = (g @ w.value, g2.T @ x2)
        return grads if b is None else grads + (g2.sum(axis=0),)

    return x.tape.record(y, (x, w) if b is None else (x, w, b), vjp)


def matmul(a: Var, b: Var) -> Var:
    """Batched a @ b; da = g b^T, db = a^T g (over the last two axes)."""
    return a.tape.record(a.value @ b.value, (a, b),
                         lambda g: (g @ np.swapaxes(b.value, -1, -2), np.swapaxes(a.value, -1, -2) @ g))


def _windows(xp: np.ndarray, kh: int, kw: int, stride: int, dilation: int = 1) -> np.ndarray:
    """(N, C, OH, OW, kh, kw) views of the windows of an already padded NCHW array."""
    span_h, span_w = dilation * (kh - 1) + 1, dilation * (kw - 1) + 1
    win = np.lib.stride_tricks.sliding_window_view(xp, (span_h, span_w), axis=(2, 3))
    return win[:, :, ::stride, ::stride, ::dilation, ::dilation]


def _scatter_windows(dwin: np.ndarray, padded_shape: tuple[int, ...], stride: int, dilation: int) -> np.ndarray:
    """The adjoint of ``_windows``: add each window element's cotangent back at its input position."""
    out = np.zeros(padded_shape)
    oh, ow, kh, kw = dwin.shape[2:]
    for i in range(kh):
        for j in range(kw):
            r, c = i * dilation, j * dilation
            out[:, :, r:r + stride * (oh - 1) + 1:stride, c:c + stride * (ow - 1) + 1:stride] += dwin[..., i, j]
    return out


def conv2d(x: Var, w: Var, stride: int = 1, pad: int = 0, dilation: int = 1, group: int = 1) -> Var:
    """NCHW cross-correlation without bias, zero padding ``pad`` on every side. With win the input
    windows: dW[o, c, i, j] = sum_{n,h,w} g[n, o, h, w] win[n, c, h, w, i, j]; the input cotangent is
    dwin = sum_o g W scattered back over the windows, the padding cropped."""
    y = conv2d_forward(x.value, w.value, stride=stride, pad=pad, dilation=dilation, group=group)
    oc, cg, kh, kw = w.shape
    ocg = oc // group

    def vjp(g: np.ndarray) -> tuple:
        xp = np.pad(x.value, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        win = _windows(xp, kh, kw, stride, dilation)
        dw, dwin = np.zeros(w.shape), np.zeros(win.shape)
        for k in range(group):
            cs, os_ = slice(k * cg, (k + 1) * cg), slice(k * ocg, (k + 1) * ocg)
            dw[os_] = np.einsum("nohw,nchwij->ocij", g[:, os_], win[:, cs], optimize=True)
            dwin[:, cs] = np.einsum("nohw,ocij->nchwij", g[:, os_], w.value[os_], optimize=True)
        dxp = _scatter_windows(dwin, xp.shape, stride, dilation)
        return dxp[:, :, pad:pad + x.shape[2], pad:pad + x.shape[3]], dw

    return x.tape.record(y, (x, w), vjp)


def max_pool2d(x: Var, kernel: int, stride: int) -> Var:
    """'valid' max pooling; the cotangent goes to the first maximum of each window (row-major)."""
    win = _windows(x.value, kernel, kernel, stride)
    flat = win.reshape(win.shape[:4] + (kernel * kernel,))
    arg = flat.argmax(axis=-1)

    def vjp(g: np.ndarray) -> tuple:
        dwin = (np.arange(kernel * kernel) == arg[..., None]) * g[..., None]
        return (_scatter_windows(dwin.reshape(win.shape), x.shape, stride, 1),)

    return x.tape.record(flat.max(axis=-1), (x,), vjp)


# ------------------------------------------------------------------------------ normalisations

def softmax(x: Var, axis: int = -1) -> Var:
    """dx = y (g - sum(g y))."""
    e = np.exp(x.value - x.value.max(axis=axis, keepdims=True))
    y = e / e.sum(axis=axis, keepdims=True)
    return x.tape.record(y, (x,), lambda g: (y * (g - (g * y).sum(axis=axis, keepdims=True)),))


def _normalise_vjp(g_hat: np.ndarray, x_hat: np.ndarray, invstd: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """dx of x_hat = (x - mean) * invstd over ``axes`` (biased variance), given d x_hat:
    invstd * (g - mean(g) - x_hat * mean(g x_hat))."""
    return invstd * (g_hat - g_hat.mean(axis=axes, keepdims=True)
                     - x_hat * (g_hat * x_hat).mean(axis=axes, keepdims=True))


def layer_norm(x: Var, gamma: Var, beta: Var, eps: float = LAYERNORM_EPS) -> Var:
    """Normalise over the last axis (biased variance), then gamma * x_hat + beta."""
    mu = x.value.mean(axis=-1, keepdims=True)
    invstd = 1.0 / np.sqrt(((x.value - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
    x_hat = (x.value - mu) * invstd
    return x.tape.record(x_hat * gamma.value + beta.value, (x, gamma, beta),
                         lambda g: (_normalise_vjp(g * gamma.value, x_hat, invstd, (-1,)), g * x_hat, g))


def batch_norm_train(x: Var, gamma: Var, beta: Var, moving_mean: np.ndarray, moving_variance: np.ndarray,
                     momentum: float = 0.9, eps: float = BATCHNORM_EPS) -> tuple[Var, np.ndarray, np.ndarray]:
    """Training-mode batch norm over every axis but 1: normalised with the batch mean and biased
    variance; returns (y, new moving mean, new moving variance) with MindSpore's nn convention
    moving = momentum * moving + (1 - momentum) * batch and the unbiased (n / (n - 1)) batch variance
    for the moving variance. The moving statistics are outputs only, not differentiated."""
    axes = (0,) + tuple(range(2, x.value.ndim))
    shape = (1, -1) + (1,) * (x.value.ndim - 2)
    n = x.value.size // x.shape[1]
    mu = x.value.mean(axis=axes, keepdims=True)
    var = ((x.value - mu) ** 2).mean(axis=axes, keepdims=True)
    invstd = 1.0 / np.sqrt(var + eps)
    x_hat = (x.value - mu) * invstd
    gam = gamma.value.reshape(shape)

    def vjp(g: np.ndarray) -> tuple:
        return _normalise_vjp(g * gam, x_hat, invstd, axes), (g * x_hat).sum(axis=axes), g.sum(axis=axes)

    y = x.tape.record(x_hat * gam + beta.value.reshape(shape), (x, gamma, beta), vjp)
    new_mean = momentum * moving_mean + (1.0 - momentum) * mu.reshape(-1)
    new_var = momentum * moving_variance + (1.0 - momentum) * var.reshape(-1) * n / (n - 1)
    return y, new_mean, new_var


# ----------------------------------------------------------------------------------------- loss

def softmax_cross_entropy(logits: Var, labels: np.ndarray) -> Var:
    """Sparse softmax cross entropy, mean over the batch: mean(logsumexp(z) - z[label]);
    dz = (softmax(z) - onehot(label)) / N."""
    z = logits.value
    shifted = z - z.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    rows = np.arange(z.shape[0])
    onehot = np.zeros_like(z)
    onehot[rows, labels] = 1.0
    loss = -log_p[rows, labels].mean()
    return logits.tape.record(np.asarray(loss), (logits,), lambda g: (g * (np.exp(log_p) - onehot) / z.shape[0],))


# ----------------------------------------------------------------------------------- optimizers

def decays(name: str) -> bool:
    """MindSpore's default decay filter: no weight decay for parameters named with beta or gamma."""
    return "beta" not in name and "gamma" not in name


class Momentum:
    """g += wd * p (decayed parameters); v = momentum * v + g; p -= lr * v."""

    def __init__(self, learning_rate: float, momentum: float, weight_decay: float = 0.0):
        self.lr, self.momentum, self.wd = learning_rate, momentum, weight_decay
        self.moments: dict[str, np.ndarray] = {}

    def step(self, params: dict[str, np.ndarray], grads: Mapping[str, np.ndarray]) -> None:
        for name, g in grads.items():
            p = params[name]
            if self.wd and decays(name):
                g = g + self.wd * p
            v = self.moments[name] = self.momentum * self.moments.get(name, 0.0) + g
            params[name] = p - self.lr * v


class Adam:
    """MindSpore's Adam (ApplyAdam), epsilon outside the bias correction: m, v as usual;
    lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t); p -= lr_t m / (sqrt(v) + eps). Weight decay adds
    wd * p to the gradient of decayed parameters."""

    def __init__(self, learning_rate: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
                 weight_decay: float = 0.0):
        self.lr, self.b1, self.b2, self.eps, self.wd = learning_rate, beta1, beta2, eps, weight_decay
        self.t = 0
        self.m: dict[str, np.ndarray] = {}
        self.v: dict[str, np.ndarray] = {}

    def step(self, params: dict[str, np.ndarray], grads: Mapping[str, np.ndarray]) -> None:
        self.t += 1
        lr_t = self.lr * math.sqrt(1.0 - self.b2 ** self.t) / (1.0 - self.b1 ** self.t)
        for name, g in grads.items():
            p = params[name]
            if self.wd and decays(name):
                g = g + self.wd * p
            m = self.m[name] = self.b1 * self.m.get(name, 0.0) + (1.0 - self.b1) * g
            v = self.v[name] = self.b2 * self.v.get(name, 0.0) + (1.0 - self.b2) * g * g
            params[name] = p - lr_t * m / (np.sqrt(v) + self.eps)


class AdamWeightDecay:
    """No bias correction, decoupled decay: p -= lr (m / (sqrt(v) + eps) + wd p), wd on decayed
    parameters only."""

    def __init__(self, learning_rate: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-6,
                 weight_decay: float = 0.0):
        self.lr, self.b1, self.b2, self.eps, self.wd = learning_rate, beta1, beta2, eps, weight_decay
        self.m: dict[str, np.ndarray] = {}
        self.v: dict[str, np.ndarray] = {}

    def step(self, params: dict[str, np.ndarray], grads: Mapping[str, np.ndarray]) -> None:
        for name, g in grads.items():
            p = params[name]
            m = self.m[name] = self.b1 * self.m.get(name, 0.0) + (1.0 - self.b1) * g
            v = self.v[name] = self.b2 * self.v.get(name, 0.0) + (1.0 - self.b2) * g * g
            update = m / (np.sqrt(v) + self.eps) + (self.wd * p if decays(name) else 0.0)
            params[name] = p - self.lr * update


Optimizer = Momentum | Adam | AdamWeightDecay
# forward(params as Vars, input, moving-statistics updates to fill) -> logits
Forward = Callable[[Mapping[str, Var], Var, dict[str, np.ndarray]], Var]


def train(forward: Forward, params: Mapping[str, np.ndarray], trainable: Sequence[str], x: np.ndarray,
          labels: np.ndarray, optimizer: Optimizer, steps: int) -> tuple[list[float], dict[str, np.ndarray]]:
    """``steps`` of TrainOneStepCell(WithLossCell(net, sparse mean softmax cross entropy), optimizer)
    on one batch: the losses (each before its update) and the final parameters, moving statistics
    included (updated by the forward pass, as BatchNorm's assign does)."""
    state = {k: np.asarray(v, np.float64) for k, v in params.items()}
    losses = []
    for _ in range(steps):
        tape = Tape()
        vs = {k: tape.var(v) for k, v in state.items()}
        updates: dict[str, np.ndarray] = {}
        loss = softmax_cross_entropy(forward(vs, tape.var(x), updates), labels)
        tape.backward(loss)
        grads = {k: vs[k].grad if vs[k].grad is not None else np.zeros_like(state[k]) for k in trainable}
        optimizer.step(state, grads)
        state.update(updates)
        losses.append(float(loss.value))
    return losses, state
