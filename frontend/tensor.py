"""``Tensor`` and ``Parameter``, defined in ``common.tensor`` and ``common.parameter`` (MindSpore's homes);
re-exported here because the front end's modules import them from ``frontend.tensor``."""
from .common.parameter import GeneratorState, Parameter
from .common.tensor import Tensor

__all__ = ["Tensor", "Parameter", "GeneratorState"]
