"""``mindspore.dataset.vision``: image transforms and their enums; ``c_transforms`` and ``py_transforms``
are the 1.x module names older scripts import them from."""
from . import c_transforms, py_transforms, transforms, utils
from .transforms import (HWC2CHW, CenterCrop, Decode, Normalize, Pad, RandomColorAdjust, RandomCrop,
                         RandomCropDecodeResize, RandomHorizontalFlip, RandomResizedCrop, RandomVerticalFlip,
                         Rescale, Resize, ToPIL, ToTensor)
from .utils import Border, Inter

__all__ = ["transforms", "c_transforms", "py_transforms", "utils", "Inter", "Border", "Decode", "Resize",
           "CenterCrop", "Pad", "RandomCrop", "RandomResizedCrop", "RandomCropDecodeResize", "RandomHorizontalFlip",
           "RandomVerticalFlip", "RandomColorAdjust", "Rescale", "Normalize", "HWC2CHW", "ToTensor", "ToPIL"]
