"""``mindspore.nn.layer.dense``: BiDense, where MindSpore defines it."""
from __future__ import annotations

import math
from typing import Any

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import Uniform
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.dense has it)
from ..cell import Cell
from .basic import _init_param, _positive_int

__all__ = ["BiDense"]


class BiDense(Cell):
    """Bilinear layer ``y = x1^T A x2 + b``: ``weight`` (out_channels, in1_channels, in2_channels) and
    ``bias`` (out_channels,), both Uniform(1 / sqrt(in1_channels)) by default; ``ops.bidense``."""

    def __init__(self, in1_channels: int, in2_channels: int, out_channels: int, weight_init: Any = None,
                 bias_init: Any = None, has_bias: bool = True, dtype: Any = mstype.float32):
        super().__init__()
        name = "BiDense"
        for arg, value in (("in1_channels", in1_channels), ("in2_channels", in2_channels),
                           ("out_channels", out_channels)):
            _positive_int(name, arg, value)
        if not isinstance(has_bias, bool):
            raise InvalidParamError(f"{name}: has_bias={has_bias!r} must be a bool")
        self.in1_channels, self.in2_channels, self.out_channels = in1_channels, in2_channels, out_channels
        self.in_channels, self.has_bias = in2_channels, has_bias
        bound = 1 / math.sqrt(in1_channels)
        self.weight = Parameter(_init_param(name, "weight_init", weight_init, Uniform(bound),
                                            (out_channels, in1_channels, in2_channels), dtype), name="weight")
        self.bias = (Parameter(_init_param(name, "bias_init", bias_init, Uniform(bound), (out_channels,), dtype),
                               name="bias") if has_bias else None)

    def construct(self, input1: Tensor, input2: Tensor) -> Tensor:
        return ops.bidense(input1, input2, self.weight, self.bias)

    def extend_repr(self) -> str:
        text = (f"in1_channels={self.in1_channels}, in2_channels={self.in2_channels}, "
                f"output_channels={self.out_channels}")
        return text + (f", has_bias={self.has_bias}" if self.has_bias else "")
