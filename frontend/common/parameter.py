"""``mindspore.common.parameter``: where MindSpore defines ``Parameter`` and ``ParameterTuple``."""
from ..nn.cell import ParameterTuple
from ..tensor import Parameter

__all__ = ["Parameter", "ParameterTuple"]
