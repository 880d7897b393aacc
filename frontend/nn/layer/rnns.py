"""``mindspore.nn.layer.rnns``: ``LSTM``, ``GRU`` and ``RNN``, stacked, optionally bidirectional recurrent
layers unrolled over the (static) sequence length into ordinary ops, so autodiff differentiates them
through their rules and no recurrent kernel is needed. The steps are ``nn.layer.rnn_cells``'s; GRU's
recurrent term keeps its bias apart (its new gate multiplies it by the reset gate), the others fold
both biases into the input projection.

Parameters, names and layout are MindSpore's: per layer ``l`` and direction (suffix ``_reverse`` for
the backward one) ``weight_ih_l{l}`` (4 * hidden, layer input), ``weight_hh_l{l}`` (4 * hidden, hidden),
``bias_ih_l{l}``, ``bias_hh_l{l}`` (4 * hidden), the gate rows in the order input, forget, cell, output,
each uniform in +-1/sqrt(hidden_size), held in four ParameterTuples (so a checkpoint lists all
weight_ih, then all weight_hh, then the biases, as MindSpore's does). One step, as MindSpore's
``_lstm_cell``::

    i, f, g, o = split(x_t @ W_ih.T + h @ W_hh.T + b_ih + b_hh, 4)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g);  h = sigmoid(o) * tanh(c)

The input projections of all steps are one MatMul (the (T * batch, input) rows at once, plus both
biases), split per step; without ``hx`` the first step has no recurrent term (h = c = 0).
"""
from __future__ import annotations

import math
from typing import Any

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import Uniform, initializer
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.rnns has it)
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell, ParameterTuple
from .basic import Dropout
from .rnn_cells import GATES, gru_step, lstm_step, rnn_step

__all__ = ["LSTM", "GRU", "RNN"]


class _RNNBase(Cell):
    """The stacked layers of one ``mode`` (GATES' keys); LSTM's docstring says the shapes."""

    mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, has_bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 dtype: Any = mstype.float32):
        super().__init__()
        layer = type(self).__name__
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidParamError(f"{layer}: {name}={value!r} must be an int >= 1")
        for name, value in (("has_bias", has_bias), ("batch_first", batch_first), ("bidirectional", bidirectional)):
            if not isinstance(value, bool):
                raise InvalidParamError(f"{layer}: {name}={value!r} must be a bool")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
            raise InvalidParamError(f"{layer}: dropout={dropout!r} must be a number in [0, 1) (the probability of "
                                    f"zeroing an element between layers)")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.has_bias, self.batch_first, self.bidirectional = has_bias, batch_first, bidirectional
        self.dropout = float(dropout)
        self.num_directions = 2 if bidirectional else 1
        self.dropout_op = Dropout(p=self.dropout)
        stdv = 1 / math.sqrt(hidden_size)
        gates = GATES[self.mode] * hidden_size
        w_ih, w_hh, b_ih, b_hh = [], [], [], []
        for layer in range(num_layers):
            for direction in range(self.num_directions):
                suffix = f"l{layer}" + ("_reverse" if direction else "")
                width = input_size if layer == 0 else hidden_size * self.num_directions

                def param(name: str, shape: tuple[int, ...]) -> Parameter:
                    return Parameter(initializer(Uniform(stdv), shape, dtype), name=f"{name}_{suffix}")
                w_ih.append(param("weight_ih", (gates, width)))
                w_hh.append(param("weight_hh", (gates, hidden_size)))
                if has_bias:
                    b_ih.append(param("bias_ih", (gates,)))
                    b_hh.append(param("bias_hh", (gates,)))
        self.w_ih_list, self.w_hh_list = ParameterTuple(w_ih), ParameterTuple(w_hh)
        self.b_ih_list, self.b_hh_list = ParameterTuple(b_ih), ParameterTuple(b_hh)
        self.matmul = ops.MatMul(transpose_b=True)

    def _check_state(self, hx: Any, batch: int) -> tuple[Tensor, Tensor | None]:
        """(h_0, c_0) from ``hx``: LSTM's tuple (h_0, c_0), the others' one Tensor (c_0 None)."""
        layer = type(self).__name__
        want = (self.num_directions * self.num_layers, batch, self.hidden_size)
        lstm = self.mode == "LSTM"
        states = hx if lstm else (hx,)
        if (not isinstance(states, (tuple, list)) or len(states) != (2 if lstm else 1)
                or not all(isinstance(t, Tensor) for t in states)):
            raise InvalidParamError(f"{layer}: hx must be " + ("a tuple (h_0, c_0) of two Tensors" if lstm
                                                               else "a Tensor h_0"))
        for name, t in zip(("h_0", "c_0"), states):
            if t.shape != want:
                raise InvalidParamError(f"{layer}: hx {name} has shape {t.shape}, expected {want} "
                                        f"(num_directions * num_layers, batch, hidden_size)")
        return states[0], (states[1] if lstm else None)

    def _direction(self, steps: list[Tensor], index: int, reverse: bool, h: Tensor | None,
                   c: Tensor | None) -> tuple[list[Tensor], Tensor, Tensor]:
        """One layer in one direction over the per-step inputs (each (batch, width)); returns the
        per-step hidden states in time order and the final (h, c)."""
        seq = len(steps)
        x = ops.concat(steps, 0) if seq > 1 else steps[0]
        gates = self.matmul(x, self.w_ih_list[index])
        b_hh = None
        if self.has_bias:
            folded = self.mode != "GRU"
            gates = ops.bias_add(gates, self.b_ih_list[index] + self.b_hh_list[index] if folded
                                 else self.b_ih_list[index])
            b_hh = None if folded else self.b_hh_list[index]
        per_step = ops.Split(0, seq)(gates) if seq > 1 else (gates,)
        w_hh = self.w_hh_list[index]
        outputs: list[Tensor | None] = [None] * seq
        for t in (reversed(range(seq)) if reverse else range(seq)):
            if self.mode == "LSTM":
                h, c = lstm_step(per_step[t], h, c, w_hh, b_hh)
            elif self.mode == "GRU":
                h = gru_step(per_step[t], h, w_hh, b_hh)
            else:
                h = rnn_step(per_step[t], h, w_hh, b_hh, self.mode == "RNN_RELU")
            outputs[t] = h
        return outputs, h, c

    def construct(self, x: Tensor, hx: Any = None, seq_length: Any = None) -> tuple[Tensor, Any]:
        layer = type(self).__name__
        if seq_length is not None:
            raise FeatureNotSupportedError(f"{layer}: seq_length (per-sequence lengths) is not supported; pad the "
                                           "batch to one length and pass seq_length=None")
        if not isinstance(x, Tensor) or x.ndim != 3 or x.shape[-1] != self.input_size:
            shape = x.shape if isinstance(x, Tensor) else type(x).__name__
            raise InvalidParamError(f"{layer}: x must be a 3-D Tensor (seq_len, batch, {self.input_size}) "
                                    f"({'batch first' if self.batch_first else 'time first'}), got {shape}")
        if self.batch_first:
            x = ops.transpose(x, (1, 0, 2))
        seq, batch = x.shape[0], x.shape[1]
        h0 = c0 = None
        if hx is not None:
            h0, c0 = self._check_state(hx, batch)
        steps = [ops.reshape(s, (batch, x.shape[2])) for s in ops.Split(0, seq)(x)] if seq > 1 \
            else [ops.reshape(x, (batch, x.shape[2]))]
        finals_h, finals_c = [], []
        for layer in range(self.num_layers):
            per_direction = []
            for direction in range(self.num_directions):
                index = layer * self.num_directions + direction
                h = c = None
                if h0 is not None:
                    h, c = (None if s is None else
                            ops.reshape(ops.slice(s, (index, 0, 0), (1, -1, -1)), (batch, self.hidden_size))
                            for s in (h0, c0))
                outputs, h, c = self._direction(steps, index, direction == 1, h, c)
                per_direction.append(outputs)
                finals_h.append(ops.expand_dims(h, 0))
                if c is not None:
                    finals_c.append(ops.expand_dims(c, 0))
            steps = [ops.concat([d[t] for d in per_direction], 1) if self.bidirectional else per_direction[0][t]
                     for t in range(seq)]
            if self.dropout and self.training and layer < self.num_layers - 1:
                # one mask over the layer's whole output, as MindSpore drops the stacked output
                dropped = self.dropout_op(ops.concat(steps, 0))
                steps = list(ops.Split(0, seq)(dropped)) if seq > 1 else [dropped]
        output = ops.concat([ops.expand_dims(s, 0) for s in steps], 0)
        if self.batch_first:
            output = ops.transpose(output, (1, 0, 2))
        h_n = ops.concat(finals_h, 0)
        return output, ((h_n, ops.concat(finals_c, 0)) if self.mode == "LSTM" else h_n)

    def extend_repr(self) -> str:
        return (f"input_size={self.input_size}, hidden_size={self.hidden_size}, num_layers={self.num_layers}, "
                f"has_bias={self.has_bias}, batch_first={self.batch_first}, dropout={self.dropout}, "
                f"bidirectional={self.bidirectional}")


class LSTM(_RNNBase):
    """``LSTM(input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, dtype=mstype.float32)(x, hx=None, seq_length=None) -> (output, (h_n, c_n))``.

    x is (seq_len, batch, input_size), or (batch, seq_len, input_size) with ``batch_first``; output
    has num_directions * hidden_size features per step; h_n and c_n are (num_directions * num_layers,
    batch, hidden_size), as is each tensor of ``hx``. ``dropout`` applies between layers in training.
    """

    mode = "LSTM"


class GRU(_RNNBase):
    """``GRU(...)(x, hx=None, seq_length=None) -> (output, h_n)``: LSTM's arguments and shapes, one
    state tensor; each step ``_gru_cell``'s."""

    mode = "GRU"


class RNN(_RNNBase):
    """``RNN(..., nonlinearity='tanh', ...)(x, hx=None, seq_length=None) -> (output, h_n)``: Elman
    layers, ``h' = tanh(x W_ih.T + b_ih + h W_hh.T + b_hh)`` (or relu)."""

    mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 has_bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, dtype: Any = mstype.float32):
        if nonlinearity not in ("tanh", "relu"):
            raise InvalidParamError(f"RNN: nonlinearity={nonlinearity!r} must be 'tanh' or 'relu'")
        super().__init__(input_size, hidden_size, num_layers, has_bias, batch_first, dropout, bidirectional, dtype)
        self.nonlinearity = nonlinearity
        self.mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
