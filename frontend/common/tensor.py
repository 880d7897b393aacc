"""``mindspore.common.tensor``: where MindSpore defines ``Tensor`` (``from mindspore.common.tensor import Tensor``)."""
from ..tensor import Tensor

__all__ = ["Tensor"]
