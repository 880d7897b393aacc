"""``mindspore.ops.function.debug_func``: ``ops.print_``, ``ops.tensordump``."""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from .._utils import defined_here
from ..operations.debug_ops import Print


def print_(*input_x: Any) -> None:
    Print()(*input_x)


# ---- internals round 2 ----
from ..operations.debug_ops import TENSOR_DUMP_MODES, TensorDump  # noqa: E402
from ...common.tensor import Tensor  # noqa: E402


def tensordump(file_name: str, tensor: Tensor, mode: str = "out") -> None:
    """Save ``tensor`` as ``<file_name>_<dtype>_<n>.npy`` (see ``ops.TensorDump``)."""
    if not isinstance(file_name, str):
        raise TypeError(f"Parameter file_name should only be build_in str type but got: {type(file_name)}")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Parameter tensor should only be Tensor type, but got: {type(tensor)}")
    if not isinstance(mode, str):
        raise TypeError(f"Parameter mode should only be build_in str type, but got: {type(mode)}")
    if mode not in TENSOR_DUMP_MODES:
        if mode == "all":
            raise ValueError("Argument [mode] has been not supported value of 'all'.")
        raise ValueError(f"Parameter mode should in {list(TENSOR_DUMP_MODES)}, but got {mode}")
    TensorDump(input_output=mode)(file_name, tensor)


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.debug_func", name, __all__)
