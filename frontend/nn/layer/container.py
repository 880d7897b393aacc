"""``mindspore.nn.layer.container``: SequentialCell, CellList, CellDict, where MindSpore defines them."""
from __future__ import annotations

from collections import OrderedDict
from collections import abc
from typing import Any, Iterable, Iterator

from ascendemu.errors import InvalidParamError

from ..cell import Cell

__all__ = ["SequentialCell", "CellList", "CellDict"]


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


class CellDict(Cell):
    """An ordered dict of named cells whose parameters are registered (prefixed by the key). Keys are
    non-empty strings without '.' that are not attributes of a Cell; values are Cells other than the
    containers, as MindSpore checks."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(kwargs.get("auto_prefix", True))
        if len(args) == 1:
            self.update(args[0])

    def _validate(self, key: Any, cell: Any) -> None:
        name = type(self).__name__
        if not isinstance(key, str):
            raise TypeError(f"For '{name}', the type of key should be string but got {type(key).__name__}.")
        if hasattr(self, key) and key not in self._cells:
            raise KeyError(f"For '{name}', the key can not be same with the attributes of Cell, but got key {key}.")
        if "." in key or key == "":
            raise KeyError(f"For '{name}', key can not contain \".\" or be empty, but got key {key!r}")
        if cell is None or not isinstance(cell, Cell):
            raise TypeError(f"For '{name}', the type of cell should be Cell, but got {type(cell).__name__}.")
        if isinstance(cell, (CellDict, CellList, SequentialCell)):
            raise TypeError(f"For '{name}', the type of cell can not be CellDict, CellList or SequentialCell, but "
                            f"got {type(cell).__name__}.")

    def __getitem__(self, key: str) -> Cell:
        return self._cells[key]

    def __setitem__(self, key: str, cell: Cell) -> None:
        self._validate(key, cell)
        self.insert_child_to_cell(key, cell)

    def __delitem__(self, key: str) -> None:
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._cells)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._cells))

    def __contains__(self, key: str) -> bool:
        return key in self._cells

    def clear(self) -> None:
        for key in list(self._cells):
            del self[key]

    def pop(self, key: str) -> Cell:
        value = self[key]
        del self[key]
        return value

    def keys(self) -> Any:
        return self._cells.keys()

    def values(self) -> Any:
        return self._cells.values()

    def items(self) -> Any:
        return self._cells.items()

    def update(self, cells: Any) -> None:
        """Add (key, cell) pairs from a mapping or an iterable of pairs."""
        if not isinstance(cells, abc.Iterable):
            raise TypeError(f"CellDict.update() should be called with an iterable of key-value pairs, but got "
                            f"{type(cells).__name__}")
        pairs = cells.items() if isinstance(cells, (abc.Mapping, CellDict)) else cells
        for i, pair in enumerate(pairs):
            if not isinstance(pair, abc.Iterable) or len(pair) != 2:
                raise ValueError(f"CellDict update sequence element #{i} must be a (key, cell) pair")
            self[pair[0]] = pair[1]

    def construct(self, *inputs: Any) -> Any:
        raise NotImplementedError
