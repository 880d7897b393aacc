"""Host <-> device copies of the executor's tensors: one upload and one download for every part of it."""
from __future__ import annotations

import numpy as np

from ascendemu.errors import InvalidParamError
from ascendemu.hal.runtime import MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE, Runtime
from ascendemu.kernels.signature import TensorDesc

from .modes import RunMode

__all__ = ["Transfers", "contiguous"]


def contiguous(array: np.ndarray, desc: TensorDesc) -> np.ndarray:
    """``array`` as the C-contiguous bytes of ``desc``'s dtype, checked against its size."""
    data = np.ascontiguousarray(array, dtype=np.dtype(desc.dtype))
    if data.shape != desc.shape and data.size != desc.size:
        raise InvalidParamError(f"input of shape {data.shape} does not match {desc.shape}")
    return data


class Transfers:
    """Uploads and downloads through the HAL's synchronous copies; the mode gives the host array a
    download lands in (a DryRun's reads zeros and takes no host memory)."""

    def __init__(self, rt: Runtime, mode: RunMode):
        self.rt, self.mode = rt, mode

    def upload(self, array: np.ndarray, desc: TensorDesc, ptr: int | None = None) -> int:
        """Copy ``array`` to the device: into ``ptr``, or a new buffer (returned)."""
        data = contiguous(array, desc)
        if ptr is None:
            ptr = self.rt.malloc(max(data.nbytes, 1))
        if data.nbytes:
            self.rt.memcpy(ptr, data.nbytes, data, data.nbytes, MEMCPY_HOST_TO_DEVICE)
        return ptr

    def download(self, ptr: int, desc: TensorDesc) -> np.ndarray:
        """The tensor ``desc`` at device address ``ptr``, copied to a new host array."""
        out = self.mode.host_array(desc.shape, np.dtype(desc.dtype))
        if out.nbytes:
            self.rt.memcpy(out, out.nbytes, ptr, out.nbytes, MEMCPY_DEVICE_TO_HOST)
        return out
