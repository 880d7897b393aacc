"""``mindspore.nn.layer.container``: SequentialCell, CellList, where MindSpore defines them."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Iterator

from ascendemu.errors import InvalidParamError

from ..cell import Cell

__all__ = ["SequentialCell", "CellList"]


class SequentialCell(Cell):
    """Cells applied in order; children are named "0", "1", ... (or by an OrderedDict's keys)."""

    def __init__(self, *args: Any):
        super().__init__()
        items = args[0] if len(args) == 1 and isinstance(args[0], (list, OrderedDict)) else args
        pairs = items.items() if isinstance(items, OrderedDict) else ((str(i), c) for i, c in enumerate(items))
        for name, cell in pairs:
            self.insert_child_to_cell(name, cell)

    def append(self, cell: Cell) -> "SequentialCell":
        self.insert_child_to_cell(str(len(self._cells)), cell)
        return self

    def __getitem__(self, index: int) -> Cell:
        return list(self._cells.values())[index]

    def __len__(self) -> int:
        return len(self._cells)

    def construct(self, x: Any) -> Any:
        for cell in self._cells.values():
            x = cell(x)
        return x


class CellList(Cell):
    """A list of cells whose parameters are registered; iterate it inside ``construct``."""

    def __init__(self, args: Iterable[Cell] | None = None):
        super().__init__()
        for cell in args or ():
            self.append(cell)

    def append(self, cell: Cell) -> None:
        self.insert_child_to_cell(str(len(self._cells)), cell)

    def extend(self, cells: Iterable[Cell]) -> "CellList":
        for cell in cells:
            self.append(cell)
        return self

    def __getitem__(self, index: int) -> Cell:
        return list(self._cells.values())[index]

    def __iter__(self) -> Iterator[Cell]:
        return iter(list(self._cells.values()))

    def __len__(self) -> int:
        return len(self._cells)

    def construct(self, *args: Any) -> Any:
        raise InvalidParamError("CellList is a container and cannot be called; call its cells")
