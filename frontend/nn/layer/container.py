"""``mindspore.nn.layer.container``: SequentialCell, CellList, CellDict, where MindSpore defines them."""
from __future__ import annotations

from collections import OrderedDict
from collections import abc
from itertools import islice
from typing import Any, Iterable, Iterator

from ascendemu.errors import InvalidParamError

from ..cell import Cell

__all__ = ["SequentialCell", "CellList", "CellDict"]


def _list_prefix(cells: "OrderedDict[str, Cell]") -> str:
    """What goes before a list member's index in its parameters' names: read, as MindSpore does, off the
    names of the first two members' first parameters (the path up to the member's key; the second member
    confirms which occurrence of the key it is), since a list assigned to a cell before it was filled has
    had its own path put only in its members' names ("" for none)."""
    firsts = list(islice(((key, first[1].name.split(".")) for key, cell in cells.items()
                          if (first := next(cell.parameters_and_names(), None)) is not None), 2))
    prefix = ""
    if firsts:
        (key, parts), second = firsts[0], firsts[1] if len(firsts) > 1 else None
        for at, part in enumerate(parts):
            if part == key:
                prefix = ".".join(parts[:at]) + "." if at else ""
                if second is not None and len(second[1]) > at and second[1][at] == second[0]:
                    break
    return prefix


class SequentialCell(Cell):
    """Cells applied in order; children are named "0", "1", ... (or by an OrderedDict's keys)."""

    def __init__(self, *args: Any):
        super().__init__()
        items = args[0] if len(args) == 1 and isinstance(args[0], (list, OrderedDict)) else args
        pairs = items.items() if isinstance(items, OrderedDict) else ((str(i), c) for i, c in enumerate(items))
        for name, cell in pairs:
            self.insert_child_to_cell(name, cell)
            cell.update_parameters_name(f"{name}.")

    def append(self, cell: Cell) -> "SequentialCell":
        cell.update_parameters_name(f"{_list_prefix(self._cells)}{len(self._cells)}.")
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


def _list_index(owner: Cell, index: Any, count: int) -> int:
    """``index`` in [-count, count) as a non-negative one, with MindSpore's errors."""
    name = type(owner).__name__
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"For '{name}', the type of 'index' must be int, but got {type(index).__name__}.")
    if not -count <= index < count:
        raise IndexError(f"For '{name}', the value of 'index' must be a number in range [{-count}, {count}), "
                         f"but got {index}.")
    return index % count


def _list_member(cell: Any) -> Cell:
    """A CellList member: a Cell, else MindSpore's TypeError."""
    if not isinstance(cell, Cell):
        raise TypeError(f"For 'CellList', each cell must be subclass of Cell, but got {type(cell).__name__}.")
    return cell


class CellList(Cell):
    """A list of cells whose parameters are registered; iterate it inside ``construct``."""

    def __init__(self, args: Iterable[Cell] | None = None, auto_prefix: bool = True):
        super().__init__(auto_prefix)
        for cell in args or ():
            self.append(cell)

    def append(self, cell: Cell) -> None:
        _list_member(cell)
        if self._auto_prefix:
            cell.update_parameters_name(f"{_list_prefix(self._cells)}{len(self._cells)}.")
        self.insert_child_to_cell(str(len(self._cells)), cell)

    def extend(self, cells: Iterable[Cell]) -> "CellList":
        for cell in cells:
            self.append(cell)
        return self

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return CellList(list(self._cells.values())[index])
        return self._cells[str(_list_index(self, index, len(self._cells)))]

    def __setitem__(self, index: int, cell: Cell) -> None:
        index = _list_index(self, index, len(self._cells))
        _list_member(cell)
        if self._auto_prefix:
            cell.update_parameters_name(f"{_list_prefix(self._cells)}{index}.")
        self.insert_child_to_cell(str(index), cell)

    def insert(self, index: int, cell: Cell) -> None:
        """Put ``cell`` at ``index`` and move the members from there up by one (renamed as MindSpore
        renames them: their index in their parameters' names)."""
        count = len(self._cells)
        _list_member(cell)
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"For 'CellList', the type of 'index' must be int, but got {type(index).__name__}.")
        if not -count <= index <= count:
            raise IndexError(f"For 'CellList', the value of 'index' must be a number in range [{-count}, {count}], "
                             f"but got {index}.")
        index = index % count if count and index != count else index
        members = list(self._cells.values())
        self._renumber(members[:index] + [cell] + members[index:], new=cell)

    def __delitem__(self, index: int | slice) -> None:
        if isinstance(index, slice):
            gone = set(map(id, list(self._cells.values())[index]))
        else:
            gone = {id(self._cells[str(_list_index(self, index, len(self._cells)))])}
        self._renumber([c for c in self._cells.values() if id(c) not in gone])

    def _renumber(self, members: list[Cell], new: Cell | None = None) -> None:
        """Make ``members`` the list, keyed 0..n-1; with auto_prefix each moved member's parameters
        take its new index (``new`` is named whole, as an append names it)."""
        prefix = _list_prefix(self._cells)
        for key in list(self._cells):
            self._cells.pop(key)
            object.__delattr__(self, key)
        for i, cell in enumerate(members):
            if self._auto_prefix:
                cell.update_parameters_name(f"{prefix}{i}.")
            self.insert_child_to_cell(str(i), cell)

    def __iadd__(self, cells: Iterable[Cell]) -> "CellList":
        return self.extend(cells)

    def __bool__(self) -> bool:
        return bool(self._cells)

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
        if self._auto_prefix:
            cell.update_parameters_name(f"{_list_prefix(self._cells)}{key}.")
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
