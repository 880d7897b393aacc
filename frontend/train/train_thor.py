"""``mindspore.train.train_thor``: ``ConvertModelUtils``, which turns a ``Model`` into a THOR (second-
order optimizer) model when its optimizer is THOR.

The zoo's training scripts import it unconditionally and call it only for ``optimizer == "Thor"``.
MindSpore's conversion returns the model unchanged for any other optimizer; the front end has no
THOR optimizer (``nn.thor``), so that is the only case there is, and the method says so for anything
that claims to be THOR. ``ConvertNetUtils`` (THOR layers) is outside the subset.
"""
from __future__ import annotations

from typing import Any

from ascendemu.errors import FeatureNotSupportedError

from ..unsupported import unsupported

__all__ = ["ConvertModelUtils"]

THOR_OPTIMIZERS = ("ThorAscend", "ThorGpu")      # MindSpore's class names of nn.thor's optimizers


class ConvertModelUtils:
    """Convert a Model to a THOR model (MindSpore's ``ModelThor``) when the optimizer is THOR."""

    @staticmethod
    def convert_to_thor_model(model: Any, network: Any, loss_fn: Any = None, optimizer: Any = None,
                              metrics: Any = None, amp_level: str = "O0", loss_scale_manager: Any = None,
                              keep_batchnorm_fp32: bool = False) -> Any:
        """``model`` itself unless ``optimizer`` is a THOR optimizer (as MindSpore decides, by class name)."""
        if type(optimizer).__name__ in THOR_OPTIMIZERS:
            raise FeatureNotSupportedError("ConvertModelUtils.convert_to_thor_model: THOR (second-order) training is "
                                           "not supported by the emulator; use a first-order optimizer such as "
                                           "nn.Momentum")
        return model


def __getattr__(name: str) -> Any:
    raise unsupported("train.train_thor", name, __all__, hint="THOR layers and optimizers are not provided")
