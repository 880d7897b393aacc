"""``mindspore.dataset.vision.py_transforms`` (MindSpore 1.x name): the PIL-flavoured transforms.

As in 1.x, ``Decode`` gives a PIL image and ``Normalize`` works on the <C, H, W> float image ``ToTensor``
makes; the geometric transforms accept PIL images and return them."""
from collections.abc import Sequence

from . import transforms as _t
from .transforms import (HWC2CHW, CenterCrop, Pad, RandomColorAdjust, RandomCrop, RandomHorizontalFlip,
                         RandomResizedCrop, RandomVerticalFlip, Resize, ToPIL, ToTensor)
from .utils import Border, Inter


class Decode(_t.Decode):
    """Encoded bytes to an RGB PIL image."""

    def __init__(self) -> None:
        super().__init__(to_pil=True)


class Normalize(_t.Normalize):
    """``(x - mean[c]) / std[c]`` on a <C, H, W> image (after ToTensor, so mean/std in 0-1)."""

    def __init__(self, mean: Sequence[float], std: Sequence[float]) -> None:
        super().__init__(mean, std, is_hwc=False)


__all__ = ["Decode", "Normalize", "ToTensor", "ToPIL", "Resize", "CenterCrop", "Pad", "RandomCrop", "RandomResizedCrop",
           "RandomHorizontalFlip", "RandomVerticalFlip", "RandomColorAdjust", "HWC2CHW", "Inter", "Border"]
