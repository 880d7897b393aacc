"""``mindspore.nn.layer.rnn_cells``: the one-step recurrent cells RNNCell, GRUCell and LSTMCell, and the
step functions ``nn.RNN``/``nn.GRU``/``nn.LSTM`` unroll, as MindSpore's ``_rnn_tanh_cell``, ``_gru_cell``
and ``_lstm_cell`` compute them (gate rows: GRU reset, update, new; LSTM input, forget, cell, output).

Each step takes the input projection ``gi = x @ W_ih.T (+ b_ih)`` already made (the layers make all
steps' at once) and the previous state, None for the zero state (its recurrent term is then just the
bias)."""
from __future__ import annotations

import math
from typing import Any

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import Uniform, initializer
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.rnn_cells has it)
from ..cell import Cell

__all__ = ["RNNCell", "GRUCell", "LSTMCell"]

# the recurrent layers' gate rows per hidden unit, by mode
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


def _recurrent(h: Tensor | None, w_hh: Tensor, b_hh: Tensor | None) -> Tensor | None:
    """``h @ W_hh.T + b_hh``; for the zero state just the bias (None without one)."""
    if h is None:
        return b_hh
    gh = ops.matmul(h, ops.transpose(w_hh, (1, 0)))
    return gh if b_hh is None else gh + b_hh


def rnn_step(gi: Tensor, h: Tensor | None, w_hh: Tensor, b_hh: Tensor | None, relu: bool = False) -> Tensor:
    gh = _recurrent(h, w_hh, b_hh)
    pre = gi if gh is None else gi + gh
    return ops.relu(pre) if relu else ops.tanh(pre)


def gru_step(gi: Tensor, h: Tensor | None, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    i_r, i_z, i_n = ops.Split(1, 3)(gi)
    gh = _recurrent(h, w_hh, b_hh)
    if gh is None:
        r, z, n = ops.sigmoid(i_r), ops.sigmoid(i_z), ops.tanh(i_n)
    else:
        if gh.ndim == 1:                                  # the zero state's recurrent term: the bias row
            gh = ops.broadcast_to(gh, gi.shape)
        h_r, h_z, h_n = ops.Split(1, 3)(gh)
        r, z = ops.sigmoid(i_r + h_r), ops.sigmoid(i_z + h_z)
        n = ops.tanh(i_n + r * h_n)
    return n - z * n if h is None else n + z * (h - n)


def lstm_step(gi: Tensor, h: Tensor | None, c: Tensor | None, w_hh: Tensor,
              b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
    gh = _recurrent(h, w_hh, b_hh)
    g = gi if gh is None else gi + gh
    i, f, cell, o = ops.Split(1, 4)(g)
    update = ops.sigmoid(i) * ops.tanh(cell)
    c = update if c is None else ops.sigmoid(f) * c + update
    return ops.sigmoid(o) * ops.tanh(c), c


def check_sizes(layer: str, **sizes: Any) -> None:
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidParamError(f"{layer}: {name}={value!r} must be an int >= 1")


class _CellBase(Cell):
    """The cells' parameters, MindSpore's names and order: weight_ih, weight_hh, bias_ih, bias_hh, each
    uniform in +-1/sqrt(hidden_size)."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True, dtype: Any = mstype.float32):
        super().__init__()
        layer = type(self).__name__
        check_sizes(layer, input_size=input_size, hidden_size=hidden_size)
        if not isinstance(has_bias, bool):
            raise InvalidParamError(f"{layer}: has_bias={has_bias!r} must be a bool")
        self.input_size, self.hidden_size, self.has_bias = input_size, hidden_size, has_bias
        init, rows = Uniform(1 / math.sqrt(hidden_size)), self.gates * hidden_size
        self.weight_ih = Parameter(initializer(init, (rows, input_size), dtype), name="weight_ih")
        self.weight_hh = Parameter(initializer(init, (rows, hidden_size), dtype), name="weight_hh")
        self.bias_ih = self.bias_hh = None
        if has_bias:
            self.bias_ih = Parameter(initializer(init, (rows,), dtype), name="bias_ih")
            self.bias_hh = Parameter(initializer(init, (rows,), dtype), name="bias_hh")

    def _input_gates(self, x: Tensor) -> Tensor:
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise InvalidParamError(f"{type(self).__name__}: x must be (batch, {self.input_size}), got shape {x.shape}")
        gi = ops.matmul(x, ops.transpose(self.weight_ih, (1, 0)))
        return gi if self.bias_ih is None else gi + self.bias_ih

    def _check_state(self, h: Tensor, batch: int) -> Tensor:
        if h.shape != (batch, self.hidden_size):
            raise InvalidParamError(f"{type(self).__name__}: hx has shape {h.shape}, expected "
                                    f"{(batch, self.hidden_size)}")
        return h


class RNNCell(_CellBase):
    """``h' = tanh(x W_ih.T + b_ih + h W_hh.T + b_hh)`` (or relu with ``nonlinearity='relu'``)."""

    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True, nonlinearity: str = "tanh",
                 dtype: Any = mstype.float32):
        if nonlinearity not in ("tanh", "relu"):
            raise InvalidParamError(f"RNNCell: nonlinearity={nonlinearity!r} must be 'tanh' or 'relu'")
        super().__init__(input_size, hidden_size, has_bias, dtype)
        self.nonlinearity = nonlinearity

    def construct(self, x: Tensor, hx: Tensor) -> Tensor:
        gi = self._input_gates(x)
        return rnn_step(gi, self._check_state(hx, x.shape[0]), self.weight_hh, self.bias_hh,
                        self.nonlinearity == "relu")


class GRUCell(_CellBase):
    gates = 3

    def construct(self, x: Tensor, hx: Tensor) -> Tensor:
        gi = self._input_gates(x)
        return gru_step(gi, self._check_state(hx, x.shape[0]), self.weight_hh, self.bias_hh)


class LSTMCell(_CellBase):
    """``(h', c') = LSTMCell(x, (h, c))``."""

    gates = 4

    def construct(self, x: Tensor, hx: Any) -> tuple[Tensor, Tensor]:
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise InvalidParamError("LSTMCell: hx must be a tuple (h, c) of two Tensors")
        gi = self._input_gates(x)
        h, c = (self._check_state(t, x.shape[0]) for t in hx)
        return lstm_step(gi, h, c, self.weight_hh, self.bias_hh)
