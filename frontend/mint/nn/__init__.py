"""``mindspore.mint.nn``: the Cells MindSpore serves here that are ``mindspore.nn``'s own classes (its
table records ``mint.nn.ReLU`` as ``nn.ReLU``: the same object), and ``functional``. mint's own Cells
(``mint.nn.Conv2d``, ``Linear`` with PyTorch's parameters) differ from ``nn``'s and stay missing until
served as themselves.
"""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from . import functional
from ...nn.layer.activation import ReLU
from ...nn.layer.basic import Identity

__all__ = ["functional", "ReLU", "Identity"]


def __getattr__(name: str) -> Any:
    raise unsupported("mint.nn", name, __all__)
