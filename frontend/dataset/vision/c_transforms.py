"""``mindspore.dataset.vision.c_transforms`` (MindSpore 1.x name): the same image transforms."""
from .transforms import (HWC2CHW, CenterCrop, Decode, Normalize, Pad, RandomColorAdjust, RandomCrop,
                         RandomCropDecodeResize, RandomHorizontalFlip, RandomResizedCrop, RandomVerticalFlip,
                         Rescale, Resize)
from .utils import Border, Inter

__all__ = ["Decode", "Resize", "CenterCrop", "Pad", "RandomCrop", "RandomResizedCrop", "RandomCropDecodeResize",
           "RandomHorizontalFlip", "RandomVerticalFlip", "RandomColorAdjust", "Rescale", "Normalize", "HWC2CHW",
           "Inter", "Border"]
