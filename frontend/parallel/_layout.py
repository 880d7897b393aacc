"""``mindspore.Layout`` (also ``mindspore.parallel.Layout``): a device matrix with a name per axis; calling it
with one alias (or "None", or a tuple of aliases) per tensor dimension gives that tensor's layout, which
``Primitive.shard`` takes in place of a tuple of split counts. Checked and printed as MindSpore 2.10's
(``to_dict``, its TypeError / ValueError texts, recorded by tools/record_msdryrun_layout.py).

MindSpore counts a tensor map's device axes from the right; the sharding pass (``graph.parallel.layout``)
from the left: :meth:`Layout.tensor_layout` converts. What the sharding pass cannot place is refused there
with a :class:`LayoutNotSupportedError` naming it: "interleaved_parallel" (several virtual slices on one
device) and a ``rank_list`` other than the ranks in order.
"""
from __future__ import annotations

import copy
import math
from typing import Any

from ascendemu.errors import FeatureNotSupportedError, InvalidTypeError, InvalidValueError
from ascendemu.graph.parallel.layout import Layout as TensorLayout, tensor_map_entry

__all__ = ["Layout", "LayoutNotSupportedError"]

INTERLEAVED = "interleaved_parallel"
NO_SPLIT = "None"


class LayoutTypeError(InvalidTypeError):
    """A Layout argument of the wrong type (MindSpore raises TypeError)."""


class LayoutValueError(InvalidValueError):
    """A Layout argument of the right type and a wrong value (MindSpore raises ValueError)."""


class LayoutNotSupportedError(FeatureNotSupportedError):
    """A layout MindSpore accepts that the emulator's sharding pass cannot place."""


class Layout:
    """Topological abstraction of the devices for placing a tensor's slices (MindSpore's ``Layout``)."""

    def __init__(self, device_matrix: tuple[int, ...], alias_name: tuple[str, ...], rank_list: list[int] | None = None):
        if not isinstance(device_matrix, tuple):
            raise LayoutTypeError(f"device_matrix must be tuple type, but got:{type(device_matrix)}")
        if not isinstance(alias_name, tuple):
            raise LayoutTypeError(f"alias_name must be tuple type, but got:{type(alias_name)}")
        if len(device_matrix) != len(alias_name):
            raise LayoutValueError("device_matrix length should be equal to alias_name length")
        for value in device_matrix:
            if not isinstance(value, int):
                raise LayoutTypeError(f"The element of device_matrix must be int type, but got:{type(value)}")
        for name in alias_name:
            if not isinstance(name, str):
                raise LayoutTypeError(f"The element of alias_name must be str type, but got:{type(name)}")
            if not name:
                raise LayoutValueError("The element of alias_name can not be empty.")
            if name == NO_SPLIT:
                raise LayoutValueError("The element of alias_name can not set 'None', because 'None' means no "
                                       "sharding.")
        if len(set(alias_name)) != len(alias_name):
            raise LayoutValueError(f"Each element of alias_name {alias_name} should be different")
        if INTERLEAVED in alias_name and alias_name.index(INTERLEAVED) != len(alias_name) - 1:
            raise LayoutValueError(f"When alias_name {alias_name} contains keyword 'interleaved_parallel', it should "
                                   f"be at the last dim of alias_name, which means the virtual sharding.")
        self._device_shape, self._alias_name = device_matrix, alias_name
        self._tensor_map: tuple[Any, ...] | None = None
        self._rank_list = list(range(math.prod(device_matrix)))
        if rank_list is not None:
            if not isinstance(rank_list, list):
                raise LayoutTypeError(f"The rank_list should be a list, but got {type(rank_list).__name__}.")
            for value in rank_list:
                if not isinstance(value, int):
                    raise LayoutTypeError(f"The element of rank_list should be int, but got {type(value).__name__}.")
            if len(rank_list) != math.prod(device_matrix):
                raise LayoutValueError(f"The length of rank_list should be equal to the product of device_matrix, "
                                       f"but got {len(rank_list)} and {math.prod(device_matrix)}.")
            self._rank_list = rank_list

    def _axis(self, name: str, written: list[str]) -> int:
        """MindSpore's tensor-map value of alias ``name`` (axes counted from the right)."""
        if name == NO_SPLIT:
            return -1
        if name not in self._alias_name:
            raise LayoutValueError(f"The axis {name} is not found in {self._alias_name}")
        if name in written:
            raise LayoutValueError(f"The axis {name} has been set more than one in {self._alias_name}")
        written.append(name)
        return len(self._alias_name) - 1 - self._alias_name.index(name)

    def __call__(self, *tensor_map: str | tuple[str, ...]) -> "Layout":
        """A tensor's layout: per dimension an alias, "None" (not split) or a tuple of aliases. As MindSpore's,
        it also sets this object's own tensor map (``to_dict`` of the Layout shows the last call's)."""
        written: list[str] = []
        self._tensor_map = tuple(tuple(self._axis(n, written) for n in item) if isinstance(item, tuple)
                                 else self._axis(item, written) for item in tensor_map)
        return copy.deepcopy(self)

    def to_dict(self) -> dict[str, Any]:
        if self._tensor_map is None:
            raise LayoutValueError("The tensor_map of layout is None")
        return {"device_matrix": self._device_shape, "tensor_map": self._tensor_map,
                "interleaved_parallel": INTERLEAVED in self._alias_name, "alias_name": self._alias_name,
                "rank_list": self._rank_list}

    def tensor_layout(self) -> TensorLayout:
        """This tensor layout as the sharding pass places it (axes counted from the left)."""
        described = self.to_dict()
        if INTERLEAVED in self._alias_name:
            raise LayoutNotSupportedError(f"Layout {self._alias_name}: 'interleaved_parallel' (virtual slices on one "
                                          f"device) is not supported by the emulator's sharding pass; drop that axis")
        if self._rank_list != list(range(len(self._rank_list))):
            raise LayoutNotSupportedError(f"Layout {self._alias_name}: rank_list {self._rank_list} is not supported by "
                                          f"the emulator's sharding pass (it places ranks in order); omit rank_list")
        last = len(self._device_shape) - 1
        return TensorLayout(self._device_shape, tuple(
            tensor_map_entry(tuple(last - v for v in (value if isinstance(value, tuple) else (value,)) if v >= 0))
            for value in described["tensor_map"]))
