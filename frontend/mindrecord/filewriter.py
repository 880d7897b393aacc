"""``mindspore.mindrecord.FileWriter``: rows (dicts) to MindRecord files, as MindSpore writes them.

Pages go to hidden temp files beside the targets as ``write_raw_data`` is called (nothing is held in
memory); ``commit`` writes the headers and the ``.db`` indexes, fsyncs and renames each over its final
name, so a crash or an error never leaves a half-written file under a name a reader would open.
Rows that do not match the schema are dropped with MindSpore's warning; a call whose rows all fail
raises, as MindSpore does.
"""
from __future__ import annotations

import os
import tempfile
import weakref
from typing import Any

from ascendemu.errors import FeatureNotSupportedError, check_int

from .. import log
from .format import (DEFAULT_HEADER_SIZE, DEFAULT_PAGE_SIZE, HEADER_SIZE_RANGE, MAX_SHARD_COUNT, PAGE_SIZE_RANGE,
                     MindRecordFileError, MindRecordRuntimeError, MRMAddSchemaError, MRMDefineIndexError,
                     MRMInvalidSchemaError, ParamTypeError, ParamValueError, Schema, ShardPages, check_filename,
                     encode_row, header_bytes, row_error, schema_error, write_index)


def _discard(fds: list[int], paths: list[str]) -> None:
    """Close the temp files a writer holds and remove them (an uncommitted or failed writer)."""
    for fd in fds:
        os.close(fd)
    for path in paths:
        if os.path.lexists(path):
            os.remove(path)
    fds.clear()
    paths.clear()


class FileWriter:
    """Write rows to ``shard_num`` MindRecord files named ``file_name`` (one shard) or ``file_name0`` ...
    (several), each with its ``.db`` index; an existing file is replaced only with ``overwrite=True``."""

    def __init__(self, file_name: str, shard_num: int = 1, overwrite: bool = False):
        check_filename(file_name)
        if shard_num is None:
            raise ParamValueError("Parameter shard_num is None.")
        self._shard_num = check_int(shard_num, "FileWriter: shard_num", minimum=1, maximum=MAX_SHARD_COUNT,
                                    error=ParamValueError)
        if not isinstance(overwrite, bool):
            raise ParamValueError("Parameter overwrite's type is not bool.")
        self._overwrite = overwrite
        width = len(str(self._shard_num - 1))
        self._paths = [file_name] if self._shard_num == 1 else \
            [f"{file_name}{str(i).rjust(width, '0')}" for i in range(self._shard_num)]
        self._schema: Schema | None = None
        self._index_fields: list[str] | None = None
        self._header_size, self._page_size = DEFAULT_HEADER_SIZE, DEFAULT_PAGE_SIZE
        self._shards: list[ShardPages] | None = None       # the open temp files, from the first write
        self._fds: list[int] = []                          # the temp files' descriptors and names
        self._temps: list[str] = []
        self._parallel: bool | None = None
        self._calls = 0                                      # write calls so far (parallel mode's shard rotation)
        self._next_extra = 0                                 # the shard that takes the next leftover row
        self._saved = [0] * self._shard_num                  # bytes int compression saved, per shard
        self._committed = False
        self._cleanup = weakref.finalize(self, _discard, self._fds, self._temps)

    @classmethod
    def open_for_append(cls, file_name: str) -> "FileWriter":
        raise FeatureNotSupportedError(f"FileWriter.open_for_append({file_name!r}) is not supported by the emulated "
                                       "front end; write the data set again with all its rows")

    # ------------------------------------------------------------------ schema and options
    def add_schema(self, content: dict, desc: str | None = None) -> None:
        """The fields of every row: ``{name: {"type": t}}`` or ``{name: {"type": t, "shape": [...]}}``."""
        error = schema_error(content)
        if error is not None:
            raise MRMInvalidSchemaError(f"Schema format is error. Detail: {error}")
        if self._schema is not None:
            raise MRMAddSchemaError("The schema is added repeatedly. Please remove the redundant 'add_schema' "
                                    "function.")
        self._schema = Schema(content, desc or "")

    def add_index(self, index_fields: list[str]) -> None:
        """The scalar fields the ``.db`` index holds (default: every scalar number and string field)."""
        if not index_fields or not isinstance(index_fields, list):
            raise ParamTypeError("Invalid parameter type. 'index_fields' expect list type.")
        if self._schema is None:
            raise ParamValueError("add_index: add the schema first (add_schema), then choose index fields from it")
        for name in index_fields:
            if not isinstance(name, str):
                raise ParamTypeError("Invalid parameter type. 'index field' expect str type.")
            if name in self._schema.blob_fields:
                raise MRMDefineIndexError(f"Failed to set field {name} since it's not primitive type.")
            if name not in self._schema.fields:
                raise MRMDefineIndexError(f"Invalid input, 'index_fields': {name} can not found in schema "
                                          f"{sorted(self._schema.fields)}.")
        self._index_fields = list(index_fields)

    def set_header_size(self, header_size: int) -> None:
        """Bytes reserved for each file's header (16 KiB .. 128 MiB, a multiple of 4; default 16 MiB)."""
        self._header_size = self._size(header_size, HEADER_SIZE_RANGE, "header size")

    def set_page_size(self, page_size: int) -> None:
        """Bytes per page (32 KiB .. 256 MiB, a multiple of 4; default 32 MiB): the largest row it can hold."""
        self._page_size = self._size(page_size, PAGE_SIZE_RANGE, "page size")

    def _size(self, value: Any, bounds: tuple[int, int], what: str) -> int:
        if self._shards is not None:
            raise MindRecordRuntimeError(f"FileWriter: the {what} must be set before the first write_raw_data")
        value = check_int(value, f"FileWriter: {what}", error=MindRecordRuntimeError)
        if not bounds[0] <= value <= bounds[1] or value % 4:
            raise MindRecordRuntimeError(f"Invalid data, {what}: {value} should be in range [{bounds[0]}, "
                                         f"{bounds[1]}] and be divided by four.")
        return value

    # ------------------------------------------------------------------ writing
    def write_raw_data(self, raw_data: list[dict], parallel_writer: bool = False) -> None:
        """Append ``raw_data`` (a list of dicts, one per row) after checking each against the schema."""
        if not isinstance(parallel_writer, bool):
            raise ParamTypeError("The parameter `parallel_writer` must be bool.")
        if self._parallel is None:
            self._parallel = parallel_writer
        if self._parallel != parallel_writer:
            raise MindRecordRuntimeError("The parameter `parallel_writer` must be consistent during use.")
        if self._committed:
            raise MindRecordRuntimeError("Not allowed to call `write_raw_data` on flushed MindRecord files. When "
                                         "creating new MindRecord files, please remove `commit` before "
                                         "`write_raw_data`.")
        schema = self._require_schema()
        self._open()
        if not isinstance(raw_data, list):
            raise ParamTypeError("Invalid parameter type. 'raw_data' expect list type.")
        if not all(isinstance(row, dict) for row in raw_data):
            raise ParamTypeError("Invalid parameter type. 'raw_data item' expect dict type.")
        rows = []
        for number, row in enumerate(raw_data):
            error = row_error(schema, number, row)
            if error is None:
                rows.append(row)
            else:
                log.warning(error)
        if not rows:
            raise MindRecordRuntimeError("There is no valid data which can be written by 'write_raw_data' to "
                                         "mindrecord file. Please check the abnormal input data indicated in the "
                                         "warning log above.")
        encoded = [encode_row(schema, row) for row in rows]
        for number, (raw, blob, _) in enumerate(encoded):
            size = 8 + max(len(raw), len(blob))
            if size > self._page_size:
                raise MindRecordRuntimeError(f"FileWriter: row {number} takes {size} bytes, more than a page "
                                             f"({self._page_size} bytes); call set_page_size with a larger size "
                                             "before writing")
        for shard, start, end in self._split(len(encoded)):
            part = encoded[start:end]
            self._shards[shard].write([raw for raw, _, _ in part], [blob for _, blob, _ in part])
            self._saved[shard] += sum(saved for _, _, saved in part)
        self._calls += 1

    def _split(self, n: int) -> list[tuple[int, int, int]]:
        """(shard, first row, end row) per shard. Serial writes give each shard ``n // S`` consecutive rows and
        the ``n % S`` leftovers to the next shards in rotation (MindSpore: at random); parallel writes send
        each call whole to the next shard, as MindSpore's round-robin workers do (each worker writes a data
        set of one file: its header lists only itself, as shard 0)."""
        shards = self._shard_num
        if self._parallel:
            return [(self._calls % shards, 0, n)]
        extra = {(self._next_extra + k) % shards for k in range(n % shards)}
        self._next_extra = (self._next_extra + n % shards) % shards
        out, start = [], 0
        for shard in range(shards):
            end = start + n // shards + (shard in extra)
            out.append((shard, start, end))
            start = end
        return out

    def _require_schema(self) -> Schema:
        if self._schema is None:
            raise MindRecordRuntimeError("Invalid data, schema is not found in header; call add_schema before "
                                         "write_raw_data or commit")
        return self._schema

    def _open(self) -> None:
        """At the first write (or an empty commit): refuse existing files unless ``overwrite``, open temps."""
        if self._shards is not None:
            return
        for path in self._paths:
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                raise MindRecordFileError(f"FileWriter: the directory {folder} of {path} does not exist; create it "
                                          "first")
            for target in (path, path + ".db"):
                if os.path.lexists(target) and not self._overwrite:
                    raise MindRecordFileError(f"Invalid file, mindrecord files already exist: {target}; remove it "
                                              "(and its .db) or pass FileWriter(..., overwrite=True)")
        self._shards = []
        for path in self._paths:
            fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                        dir=os.path.dirname(os.path.abspath(path)))
            self._fds.append(fd)
            self._temps.append(temp)
            self._shards.append(ShardPages(fd, self._header_size, self._page_size))

    def commit(self) -> None:
        """Write the headers and ``.db`` indexes and move every file to its final name."""
        if self._committed:
            raise MindRecordRuntimeError("FileWriter: commit() was called already; the files are written")
        schema = self._require_schema()
        self._open()
        index_fields = self._index_fields if self._index_fields is not None else schema.default_index_fields()
        names = [os.path.basename(path) for path in self._paths]
        try:
            for shard_id, (shard, temp) in enumerate(zip(self._shards, list(self._temps))):
                if self._parallel:                           # each worker wrote a data set of its own
                    header = header_bytes(schema, index_fields, shard.pages, [names[shard_id]], 0,
                                          self._header_size, self._page_size, self._saved[shard_id])
                else:
                    header = header_bytes(schema, index_fields, shard.pages, names, shard_id, self._header_size,
                                          self._page_size, sum(self._saved))
                if len(header) > self._header_size:
                    raise MindRecordRuntimeError(f"FileWriter: the header of {self._paths[shard_id]} takes "
                                                 f"{len(header)} bytes, more than the header size "
                                                 f"({self._header_size}); call set_header_size with a larger size "
                                                 "before writing")
                os.pwrite(shard.fd, header, 0)
                os.fsync(shard.fd)
                db_temp = temp[:-len(".tmp")] + ".db.tmp"
                self._temps.append(db_temp)
                write_index(db_temp, names[shard_id], schema, index_fields, shard.index_rows(index_fields))
                os.chmod(db_temp, 0o600)                     # as MindSpore leaves both files
            for path, temp, db_temp in zip(self._paths, self._temps, self._temps[len(self._paths):]):
                os.replace(temp, path)
                os.replace(db_temp, path + ".db")
        except BaseException:
            self._cleanup()
            self._committed = True                           # nothing is left to write to
            raise
        from ascendemu.cache.atomic import fsync_dir       # the cache package loads on first commit only
        for folder in {os.path.dirname(os.path.abspath(path)) for path in self._paths}:
            fsync_dir(folder)
        self._committed = True
        self._temps.clear()
        self._cleanup()                                      # closes the files; nothing is left to remove


__all__ = ["FileWriter"]
