"""``mindspore.dataset.transforms.py_transforms`` (MindSpore 1.x name): ``Compose`` and ``OneHotOp``."""
from .transforms import Compose, OneHot

OneHotOp = OneHot

__all__ = ["Compose", "OneHotOp"]
