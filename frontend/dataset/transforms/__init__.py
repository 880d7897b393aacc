"""``mindspore.dataset.transforms``: general transforms (``TypeCast``, ``OneHot``, ``Fill``, ``Compose``);
``c_transforms`` and ``py_transforms`` are the 1.x module names older scripts import them from."""
from . import c_transforms, py_transforms, transforms
from .transforms import Compose, Fill, OneHot, TensorOperation, TypeCast

__all__ = ["transforms", "c_transforms", "py_transforms", "TensorOperation", "TypeCast", "OneHot", "Fill",
           "Compose"]
