"""``mindspore.dataset.transforms.c_transforms`` (MindSpore 1.x name): the same transforms."""
from .transforms import Compose, Fill, OneHot, TypeCast

__all__ = ["TypeCast", "OneHot", "Fill", "Compose"]
