"""``mindspore.nn.LSTM`` (``mindspore.nn.layer.rnns``): stacked, optionally bidirectional LSTM layers,
unrolled over the (static) sequence length into ordinary ops, so autodiff differentiates it through
their rules and no recurrent kernel is needed.

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

__all__ = ["LSTM"]


class LSTM(Cell):
    """``LSTM(input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, dtype=mstype.float32)(x, hx=None, seq_length=None) -> (output, (h_n, c_n))``.

    x is (seq_len, batch, input_size), or (batch, seq_len, input_size) with ``batch_first``; output
    has num_directions * hidden_size features per step; h_n and c_n are (num_directions * num_layers,
    batch, hidden_size), as is each tensor of ``hx``. ``dropout`` applies between layers in training.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, has_bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 dtype: Any = mstype.float32):
        super().__init__()
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidParamError(f"LSTM: {name}={value!r} must be an int >= 1")
        for name, value in (("has_bias", has_bias), ("batch_first", batch_first), ("bidirectional", bidirectional)):
            if not isinstance(value, bool):
                raise InvalidParamError(f"LSTM: {name}={value!r} must be a bool")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
            raise InvalidParamError(f"LSTM: dropout={dropout!r} must be a number in [0, 1) (the probability of "
                                    f"zeroing an element between layers)")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.has_bias, self.batch_first, self.bidirectional = has_bias, batch_first, bidirectional
        self.dropout = float(dropout)
        self.num_directions = 2 if bidirectional else 1
        self.dropout_op = Dropout(p=self.dropout)
        stdv = 1 / math.sqrt(hidden_size)
        gates = 4 * hidden_size
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

    def _check_state(self, hx: Any, batch: int) -> tuple[Tensor, Tensor]:
        want = (self.num_directions * self.num_layers, batch, self.hidden_size)
        if not isinstance(hx, (tuple, list)) or len(hx) != 2 or not all(isinstance(t, Tensor) for t in hx):
            raise InvalidParamError("LSTM: hx must be a tuple (h_0, c_0) of two Tensors")
        for name, t in zip(("h_0", "c_0"), hx):
            if t.shape != want:
                raise InvalidParamError(f"LSTM: hx {name} has shape {t.shape}, expected {want} "
                                        f"(num_directions * num_layers, batch, hidden_size)")
        return hx[0], hx[1]

    def _direction(self, steps: list[Tensor], index: int, reverse: bool, h: Tensor | None,
                   c: Tensor | None) -> tuple[list[Tensor], Tensor, Tensor]:
        """One layer in one direction over the per-step inputs (each (batch, width)); returns the
        per-step hidden states in time order and the final (h, c)."""
        seq = len(steps)
        x = ops.concat(steps, 0) if seq > 1 else steps[0]
        gates = self.matmul(x, self.w_ih_list[index])
        if self.has_bias:
            gates = ops.bias_add(gates, self.b_ih_list[index] + self.b_hh_list[index])
        per_step = ops.Split(0, seq)(gates) if seq > 1 else (gates,)
        outputs: list[Tensor | None] = [None] * seq
        for t in (reversed(range(seq)) if reverse else range(seq)):
            g = per_step[t]
            if h is not None:
                g = g + self.matmul(h, self.w_hh_list[index])
            i, f, cell, o = ops.Split(1, 4)(g)
            update = ops.sigmoid(i) * ops.tanh(cell)
            c = update if c is None else ops.sigmoid(f) * c + update
            h = ops.sigmoid(o) * ops.tanh(c)
            outputs[t] = h
        return outputs, h, c

    def construct(self, x: Tensor, hx: Any = None, seq_length: Any = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        if seq_length is not None:
            raise FeatureNotSupportedError("LSTM: seq_length (per-sequence lengths) is not supported; pad the "
                                           "batch to one length and pass seq_length=None")
        if not isinstance(x, Tensor) or x.ndim != 3 or x.shape[-1] != self.input_size:
            shape = x.shape if isinstance(x, Tensor) else type(x).__name__
            raise InvalidParamError(f"LSTM: x must be a 3-D Tensor (seq_len, batch, {self.input_size}) "
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
                    h, c = (ops.reshape(ops.slice(s, (index, 0, 0), (1, -1, -1)), (batch, self.hidden_size))
                            for s in (h0, c0))
                outputs, h, c = self._direction(steps, index, direction == 1, h, c)
                per_direction.append(outputs)
                finals_h.append(ops.expand_dims(h, 0))
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
        return output, (ops.concat(finals_h, 0), ops.concat(finals_c, 0))

    def extend_repr(self) -> str:
        return (f"input_size={self.input_size}, hidden_size={self.hidden_size}, num_layers={self.num_layers}, "
                f"has_bias={self.has_bias}, batch_first={self.batch_first}, dropout={self.dropout}, "
                f"bidirectional={self.bidirectional}")
