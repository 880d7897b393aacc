"""``mindspore.mindrecord.FileReader``: the rows of MindRecord files as dicts, in file and row order."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ascendemu.errors import check_int

from .format import ParamTypeError, ParamValueError, check_filename, open_shards


class FileReader:
    """Rows of ``file_name`` (one file: all shards of its data set; a list: exactly those files) as dicts of
    ``columns`` (default all): raw fields as Python numbers/str, ``bytes`` fields as bytes, arrays as numpy
    arrays. ``num_consumer`` and ``operator`` are accepted; rows are read on the calling thread."""

    def __init__(self, file_name: Any, num_consumer: int = 4, columns: list[str] | None = None,
                 operator: Any = None):
        for name in file_name if isinstance(file_name, list) else [file_name]:
            check_filename(name)
        check_int(num_consumer, "FileReader: num_consumer", minimum=1, error=ParamValueError)
        if columns and not isinstance(columns, list):
            raise ParamTypeError("Invalid parameter type. 'columns' expect list type.")
        self._shards = open_shards(file_name, "FileReader")
        fields = self._shards[0].schema.fields
        missing = [c for c in columns or () if c not in fields]
        if missing:
            raise ParamValueError(f"FileReader: columns {missing} are not in the schema; its fields are "
                                  f"{sorted(fields)}")
        self._columns = list(columns) if columns else list(fields)

    def get_next(self) -> Iterator[dict[str, Any]]:
        for shard in self._shards:
            for row in range(len(shard)):
                yield shard.read(row, self._columns)

    def schema(self) -> dict:
        return dict(self._shards[0].schema.fields)

    def len(self) -> int:
        return sum(len(shard) for shard in self._shards)

    def close(self) -> None:
        for shard in self._shards:
            shard.close()


__all__ = ["FileReader"]
