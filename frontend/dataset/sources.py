"""Source datasets: user data (``GeneratorDataset``, ``NumpySlicesDataset``) and the standard on-disk
formats (``MnistDataset``: IDX files, ``Cifar10Dataset``: binary batches, ``ImageFolderDataset``: one
folder per class, ``MindDataset``: MindRecord files), read the way MindSpore reads them (file names,
record layout, row order, dtypes).

A random-access source is a :class:`MappableDataset`: its sampler (from ``shuffle``, ``num_samples``,
``num_shards``/``shard_id`` or ``sampler=``) picks the row indices of each pass and the source reads
those rows. Files are checked when the dataset is built (a missing folder, a wrong magic number, a
truncated file fail at once, naming the file); pixel data is read when rows are.
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidFileError, InvalidParamError, check_int, short_repr

from ..mindrecord.format import MindRecordFileError, open_shards, resolve_shape
from . import config
from .pipeline import Dataset, Row, _Run, check_cache, split_sizes
from .samplers import (BuiltinSampler, FileShuffleSampler, SequentialSampler, Shuffle, SubsetRandomSampler,
                       select_sampler)
from .transforms.transforms import as_array, to_np_dtype
from .vision.transforms import ImageDecodeError, decode_bytes


def _directory(path: Any, owner: str, expected: str) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidParamError(f"{owner}: dataset_dir {short_repr(path)} must be a path")
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise InvalidFileError(f"{owner}: dataset_dir {path!r} does not exist or is not a directory; give the "
                               f"folder that holds {expected}")
    return path


class MappableDataset(Dataset):
    """A source that can read any row by index; which rows a pass reads, in which order, is its sampler's."""

    def __init__(self, num_samples: int | None, num_parallel_workers: int | None, shuffle: bool | None,
                 sampler: Any, num_shards: int | None, shard_id: int | None):
        super().__init__((), num_parallel_workers)
        self.sampler: BuiltinSampler = select_sampler(num_samples, sampler, shuffle, num_shards, shard_id)

    def _num_rows(self) -> int:
        raise NotImplementedError

    def _row(self, index: int) -> Row:
        raise NotImplementedError

    def _size(self) -> int | None:
        return self.sampler._size(self._num_rows())

    def is_shuffled(self) -> bool:
        return self.sampler.is_shuffled()

    def is_sharded(self) -> bool:
        return self.sampler.is_sharded()

    def use_sampler(self, sampler: BuiltinSampler) -> None:
        """Read through ``sampler`` from now on."""
        self.sampler = select_sampler(None, sampler, None, None, None)
        self._dataset_size = None

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        n = self._num_rows()
        for index in self.sampler._indices(n, run.rng(self, pass_id)):
            if not 0 <= index < n:
                raise InvalidParamError(f"{type(self).__name__}: the sampler chose row {index}, but the source "
                                        f"has {n} rows (0..{n - 1})")
            yield self._row(int(index))

    def split(self, sizes: Sequence[int | float], randomize: bool = True) -> tuple["MappableDataset", ...]:
        """Pieces that read disjoint rows of this source: consecutive rows, or with ``randomize`` a random
        partition (drawn once from the global seed) each read in a fresh random order every epoch."""
        if self.is_sharded():
            raise InvalidParamError("split: the dataset is sharded; split it before sharding (num_shards)")
        n = self.get_dataset_size()
        order = config.generator(config.SPLIT_STREAM).permutation(n) if randomize else None
        pieces, start = [], 0
        for size in split_sizes(sizes, n):
            piece = self._copy()
            piece.use_sampler(SubsetRandomSampler(order[start:start + size]) if randomize else
                              SequentialSampler(start, size))
            pieces.append(piece)
            start += size
        return tuple(pieces)


# ------------------------------------------------------------------------------------- user data
def _row_of(value: Any, columns: list[str], types: list[np.dtype] | None, who: str) -> Row:
    """One item of a user source as a row: a tuple or list is one value per column, anything else one
    column (MindSpore's rule)."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    if len(items) != len(columns):
        raise InvalidParamError(f"{who} gave {len(items)} value(s) per row but column_names has {len(columns)} "
                                f"({columns}); return one value per column (a tuple for several)")
    row = tuple(as_array(v, f"{who} (column {c!r})") for v, c in zip(items, columns))
    return row if types is None else tuple(a.astype(t) for a, t in zip(row, types))


class GeneratorDataset(MappableDataset):
    """Rows from Python: a random-access object (``__getitem__`` + ``__len__``: sampled, so shuffled by
    default and shardable), an iterable (iterated anew each epoch) or a generator function (called anew
    each epoch)."""

    def __init__(self, source: Any, column_names: Any = None, column_types: Any = None, schema: Any = None,
                 num_samples: int | None = None, num_parallel_workers: int = 1, shuffle: bool | None = None,
                 sampler: Any = None, num_shards: int | None = None, shard_id: int | None = None,
                 python_multiprocessing: bool = True, max_rowsize: Any = None, batch_sampler: Any = None,
                 collate_fn: Any = None):
        self.random_access = hasattr(source, "__getitem__")
        if not self.random_access:
            if not callable(source) and not hasattr(source, "__iter__"):
                raise InvalidParamError("GeneratorDataset: source must be callable (a generator function), "
                                        "iterable, or random accessible (__getitem__ and __len__)")
            for name, value in (("sampler", sampler), ("num_shards", num_shards)):
                if value is not None:
                    raise InvalidParamError(f"GeneratorDataset: {name} is not supported if source does not have "
                                            "attribute '__getitem__'")
        elif not hasattr(source, "__len__"):
            raise InvalidParamError("GeneratorDataset: a random-access source (with __getitem__) must also "
                                    "define __len__, the number of rows")
        if schema is not None or batch_sampler is not None or collate_fn is not None:
            raise FeatureNotSupportedError("GeneratorDataset: schema, batch_sampler and collate_fn are not "
                                           "supported; give column_names (and column_types)")
        if column_names is None:
            raise InvalidParamError("GeneratorDataset: Neither columns_names nor schema are provided; give "
                                    "column_names, one name per value the source returns")
        super().__init__(num_samples, num_parallel_workers, shuffle if self.random_access else False,
                         sampler, num_shards, shard_id)
        self.source = source
        self.column_names = _names_list(column_names, "GeneratorDataset: column_names")
        if column_types is not None and len(column_types) != len(self.column_names):
            raise InvalidParamError(f"GeneratorDataset: {len(column_types)} column_types for "
                                    f"{len(self.column_names)} column_names")
        self.column_types = None if column_types is None else \
            [to_np_dtype(t, "GeneratorDataset: column_types") for t in column_types]
        self.num_samples = self.sampler.num_samples

    def _columns(self) -> list[str]:
        return self.column_names

    def _num_rows(self) -> int:
        return len(self.source)

    def _row(self, index: int) -> Row:
        return _row_of(self.source[index], self.column_names, self.column_types, "GeneratorDataset's source")

    def _size(self) -> int | None:
        if self.random_access:
            return super()._size()
        if not hasattr(self.source, "__len__"):
            return None
        return len(self.source) if not self.num_samples else min(len(self.source), self.num_samples)

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        if self.random_access:
            yield from super()._rows(run, pass_id)
            return
        items = iter(self.source) if hasattr(self.source, "__iter__") else iter(self.source())
        for count, item in enumerate(items):
            if self.num_samples and count >= self.num_samples:
                return
            yield _row_of(item, self.column_names, self.column_types, "GeneratorDataset's source")


def _names_list(names: Any, what: str) -> list[str]:
    names = [names] if isinstance(names, str) else list(names)
    if not names or not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
        raise InvalidParamError(f"{what} {short_repr(names)} must be distinct non-empty column names")
    return names


class NumpySlicesDataset(MappableDataset):
    """Rows sliced along the first axis of in-memory data: a dict (keys are the columns), a tuple (one
    column per element) or a list / array (one column)."""

    def __init__(self, data: Any, column_names: Any = None, num_samples: int | None = None,
                 num_parallel_workers: int = 1, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None):
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id)
        if isinstance(data, dict):
            names, values = [str(k) for k in data], list(data.values())
        elif isinstance(data, tuple):
            names, values = [f"column_{i}" for i in range(len(data))], list(data)
        elif isinstance(data, (list, np.ndarray)):
            names, values = ["column_0"], [data]
        else:
            raise InvalidParamError(f"NumpySlicesDataset: data of type {type(data).__name__} is not supported; "
                                    "give a list, a tuple of lists/arrays, a dict of them or a numpy array")
        self.columns = [as_array(v, f"NumpySlicesDataset: column {n!r}") for n, v in zip(names, values)]
        if column_names is not None:
            names = _names_list(column_names, "NumpySlicesDataset: column_names")
            if len(names) != len(self.columns):
                raise InvalidParamError(f"NumpySlicesDataset: {len(names)} column_names for {len(self.columns)} "
                                        "columns of data")
        self.column_names = names
        lengths = {len(c) if c.ndim else -1 for c in self.columns}
        if len(lengths) != 1 or -1 in lengths:
            raise InvalidParamError(f"NumpySlicesDataset: every column needs the same number of rows along its "
                                    f"first axis, got {[c.shape for c in self.columns]}")

    def _columns(self) -> list[str]:
        return self.column_names

    def _num_rows(self) -> int:
        return len(self.columns[0])

    def _row(self, index: int) -> Row:
        return tuple(np.asarray(c[index]) for c in self.columns)


# ------------------------------------------------------------------------------------- MNIST
IDX_IMAGES_MAGIC = 2051
IDX_LABELS_MAGIC = 2049
MNIST_PREFIX = {"train": ["train"], "test": ["t10k"], "all": ["t10k", "train"]}   # test records come first


def _usage(usage: Any, owner: str) -> str:
    usage = "all" if usage is None else usage
    if usage not in ("train", "test", "all"):
        raise InvalidParamError(f"{owner}: usage {short_repr(usage)} must be 'train', 'test', 'all' or None")
    return usage


# The dimensions an IDX file's header gives after its magic number (MNIST's idx3 images, idx1 labels).
IDX_IMAGE_DIMS = ("image count", "rows", "columns")
IDX_LABEL_DIMS = ("label count",)
IDX_WORD = 4                                    # every header field is a big-endian int32


class DatasetFileError(InvalidFileError, RuntimeError):
    """A data set file that cannot be read: missing, truncated, a header that contradicts itself or the
    file's size, an undecodable image. The message names the file and the field; MindSpore raises a
    RuntimeError for these, so ``except RuntimeError`` still works."""


def _read_header(path: str, magic: int, dims: Sequence[str]) -> tuple[int, ...]:
    """The dimensions in the header of the IDX file ``path``, checked: the magic number, each
    dimension (a count >= 0, a size >= 1), and the file's size, which must be the header plus one
    byte per element (MNIST's unsigned bytes), so that reading it never runs past its end."""
    words = 1 + len(dims)
    try:
        with open(path, "rb") as f:
            raw = f.read(IDX_WORD * words)
            have = os.fstat(f.fileno()).st_size
    except OSError as exc:
        raise DatasetFileError(f"MnistDataset: cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) < IDX_WORD * words:
        raise DatasetFileError(f"MnistDataset: {path} is truncated: {len(raw)} bytes, shorter than the IDX "
                               f"header ({IDX_WORD * words} bytes)")
    header = tuple(int(v) for v in np.frombuffer(raw, ">i4"))
    if header[0] != magic:
        kind = "image" if magic == IDX_IMAGES_MAGIC else "label"
        raise DatasetFileError(f"MnistDataset: {path} is not an IDX {kind} file: magic number {header[0]}, "
                               f"expected {magic}; give the uncompressed (gunzipped) MNIST files")
    for index, (name, value) in enumerate(zip(dims, header[1:])):
        least = 0 if index == 0 else 1          # the count may be 0; an image has at least 1 pixel a side
        if value < least:
            raise DatasetFileError(f"MnistDataset: {path} is damaged: its header gives {name} = {value} (header "
                                   f"field {index + 1}), which must be at least {least}; download or copy the "
                                   "file again")
    need = IDX_WORD * words + math.prod(header[1:])             # Python ints: no overflow
    if have != need:
        what = "truncated" if have < need else f"{have - need} bytes too long"
        raise DatasetFileError(f"MnistDataset: {path} is {what}: {have} bytes, but its header announces "
                               + ", ".join(f"{name} {value}" for name, value in zip(dims, header[1:]))
                               + f" ({need} bytes); download or copy the file again")
    return header[1:]


class MnistDataset(MappableDataset):
    """MNIST from its IDX files (``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-...``):
    columns ``image`` (uint8 <28, 28, 1>) and ``label`` (uint32 scalar)."""

    def __init__(self, dataset_dir: Any, usage: str | None = None, num_samples: int | None = None,
                 num_parallel_workers: int | None = None, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None, cache: Any = None):
        owner = "MnistDataset"
        check_cache(cache, owner)
        self.dataset_dir = _directory(dataset_dir, owner, "train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                                                           "t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte")
        self.usage = _usage(usage, owner)
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id)
        self._files: list[tuple[str, str, int, int, int]] = []       # images, labels, count, rows, cols
        for prefix in MNIST_PREFIX[self.usage]:
            images = os.path.join(self.dataset_dir, f"{prefix}-images-idx3-ubyte")
            labels = os.path.join(self.dataset_dir, f"{prefix}-labels-idx1-ubyte")
            if not os.path.isfile(images) and not os.path.isfile(labels):
                continue
            for path in (images, labels):
                if not os.path.isfile(path):
                    raise DatasetFileError(f"{owner}: {path} is missing; MNIST needs the images and labels "
                                           f"files of '{prefix}' side by side")
            count, rows, cols = _read_header(images, IDX_IMAGES_MAGIC, IDX_IMAGE_DIMS)
            (label_count,) = _read_header(labels, IDX_LABELS_MAGIC, IDX_LABEL_DIMS)
            if count != label_count:
                raise DatasetFileError(f"{owner}: {images} holds {count} images but {labels} holds {label_count} "
                                       "labels; the two files must come from the same set")
            self._files.append((images, labels, count, rows, cols))
        if not self._files:
            wanted = ", ".join(f"{p}-images-idx3-ubyte" for p in MNIST_PREFIX[self.usage])
            raise InvalidFileError(f"{owner}: no MNIST files for usage '{self.usage}' in {self.dataset_dir!r}; "
                                   f"expected {wanted} and the matching -labels-idx1-ubyte file(s)")
        self._data: list[tuple[np.ndarray, np.ndarray]] | None = None

    def _columns(self) -> list[str]:
        return ["image", "label"]

    def _num_rows(self) -> int:
        return sum(f[2] for f in self._files)

    def _load(self) -> list[tuple[np.ndarray, np.ndarray]]:
        if self._data is None:
            self._data = [(np.memmap(images, np.uint8, "r", 16, (count, rows, cols, 1)),
                           np.memmap(labels, np.uint8, "r", 8, (count,)))
                          for images, labels, count, rows, cols in self._files]
        return self._data

    def _row(self, index: int) -> Row:
        for images, labels in self._load():
            if index < len(labels):
                return np.array(images[index]), np.array(labels[index], np.uint32)
            index -= len(labels)
        raise IndexError(index)


# ------------------------------------------------------------------------------------- CIFAR-10
CIFAR_RECORDS_PER_FILE = 10000
CIFAR10_RECORD = 1 + 3 * 32 * 32
CIFAR_USAGE = {"train": "data_batch", "test": "test_batch", "all": "batch"}


class Cifar10Dataset(MappableDataset):
    """CIFAR-10's binary version (``data_batch_1.bin`` ... ``data_batch_5.bin``, ``test_batch.bin``, read in
    name order): columns ``image`` (uint8 <32, 32, 3>, the R, G, B planes interleaved) and ``label``
    (uint32 scalar). Each file holds 10 000 records of 1 label byte + 3072 pixel bytes."""

    def __init__(self, dataset_dir: Any, usage: str | None = None, num_samples: int | None = None,
                 num_parallel_workers: int | None = None, shuffle: bool | None = None, sampler: Any = None,
                 num_shards: int | None = None, shard_id: int | None = None, cache: Any = None):
        owner = "Cifar10Dataset"
        check_cache(cache, owner)
        self.dataset_dir = _directory(dataset_dir, owner, "data_batch_1.bin ... data_batch_5.bin and "
                                                           "test_batch.bin (the binary version)")
        self.usage = _usage(usage, owner)
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id)
        key = CIFAR_USAGE[self.usage]
        self._paths = [os.path.join(self.dataset_dir, name) for name in sorted(os.listdir(self.dataset_dir))
                       if name.endswith(".bin") and key in name]
        if not self._paths:
            raise InvalidFileError(f"{owner}: no CIFAR-10 binary batches for usage '{self.usage}' in "
                                   f"{self.dataset_dir!r}; expected data_batch_1.bin ... data_batch_5.bin "
                                   "and/or test_batch.bin (the 'CIFAR-10 binary version', not the python one)")
        need = CIFAR_RECORDS_PER_FILE * CIFAR10_RECORD
        for path in self._paths:
            if os.path.getsize(path) < need:
                raise DatasetFileError(f"{owner}: Invalid cifar10 file, failed to read data from {path}: it holds "
                                       f"{os.path.getsize(path)} bytes, but a CIFAR-10 binary batch is "
                                       f"{CIFAR_RECORDS_PER_FILE} records of {CIFAR10_RECORD} bytes ({need} bytes)")
        self._data: list[np.ndarray] | None = None

    def _columns(self) -> list[str]:
        return ["image", "label"]

    def _num_rows(self) -> int:
        return CIFAR_RECORDS_PER_FILE * len(self._paths)

    def _row(self, index: int) -> Row:
        if self._data is None:
            self._data = [np.memmap(p, np.uint8, "r", 0, (CIFAR_RECORDS_PER_FILE, CIFAR10_RECORD))
                          for p in self._paths]
        record = self._data[index // CIFAR_RECORDS_PER_FILE][index % CIFAR_RECORDS_PER_FILE]
        image = np.ascontiguousarray(record[1:].reshape(3, 32, 32).transpose(1, 2, 0))
        return image, np.array(record[0], np.uint32)


# ------------------------------------------------------------------------------------- image folders
class ImageFolderDataset(MappableDataset):
    """One sub-folder per class (labels: folder names in sorted order from 0, or ``class_indexing``);
    rows in folder order then file-name order. Columns ``image`` (the file's bytes, uint8 1-D; decoded
    RGB <H, W, 3> with ``decode``) and ``label`` (int32 scalar)."""

    def __init__(self, dataset_dir: Any, num_samples: int | None = None, num_parallel_workers: int | None = None,
                 shuffle: bool | None = None, sampler: Any = None, extensions: Any = None,
                 class_indexing: dict[str, int] | None = None, decode: bool = False, num_shards: int | None = None,
                 shard_id: int | None = None, cache: Any = None, decrypt: Any = None):
        owner = "ImageFolderDataset"
        check_cache(cache, owner)
        if decrypt is not None:
            raise FeatureNotSupportedError(f"{owner}: decrypt= is not supported; decrypt the files beforehand")
        self.dataset_dir = _directory(dataset_dir, owner, "one sub-folder of images per class")
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id)
        if class_indexing is not None and not (isinstance(class_indexing, dict) and all(
                isinstance(k, str) and isinstance(v, int) for k, v in class_indexing.items())):
            raise InvalidParamError(f"{owner}: class_indexing {short_repr(class_indexing)} must map folder names "
                                    "to int labels")
        if extensions is not None and not all(isinstance(e, str) for e in extensions):
            raise InvalidParamError(f"{owner}: extensions {short_repr(extensions)} must be a list of suffixes "
                                    "such as ['.JPEG', '.png']")
        self.decode = bool(decode)
        folders = sorted(e.name for e in os.scandir(self.dataset_dir) if e.is_dir())
        if class_indexing is None:
            self.class_indexing = {name: i for i, name in enumerate(folders)}
        else:
            self.class_indexing = dict(class_indexing)
            folders = [f for f in folders if f in class_indexing]
        self._items = [(entry.path, self.class_indexing[folder])
                       for folder in folders
                       for entry in sorted(os.scandir(os.path.join(self.dataset_dir, folder)), key=lambda e: e.name)
                       if entry.is_file() and (extensions is None or os.path.splitext(entry.name)[1] in extensions)]
        if not self._items:
            raise InvalidFileError(f"{owner}: no images found in {self.dataset_dir!r} (class folders: {folders}, "
                                   f"extensions: {extensions}); put each class's images in a sub-folder")

    def _columns(self) -> list[str]:
        return ["image", "label"]

    def _num_rows(self) -> int:
        return len(self._items)

    def _row(self, index: int) -> Row:
        path, label = self._items[index]
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as exc:
            raise DatasetFileError(f"ImageFolderDataset: cannot read {path}: {exc.strerror}") from None
        except MemoryError:
            raise DatasetFileError(f"ImageFolderDataset: cannot read {path}: its {os.path.getsize(path)} bytes do "
                                   "not fit in memory; remove it from the folder or use extensions=") from None
        if self.decode:
            try:
                image = decode_bytes(raw, False, "ImageFolderDataset")
            except ImageDecodeError as exc:
                raise DatasetFileError(f"{path}: {exc.message}") from None
        else:
            image = np.frombuffer(raw, np.uint8).copy()
        return image, np.array(label, np.int32)

    def get_class_indexing(self) -> dict[str, int]:
        return dict(self.class_indexing)

    def num_classes(self) -> int:
        return len(set(self.class_indexing.values()))


# ------------------------------------------------------------------------------------- MindRecord
class MindDataset(MappableDataset):
    """MindRecord files (``mindspore.mindrecord``; the layout is ``mindrecord/format.py``'s): a path reads its
    whole data set (the shards its header lists), a list exactly those files; rows in file order, then
    row order. Columns in the schema's (sorted) order or ``columns_list``'s: numbers as 0-d arrays of their
    type, strings as numpy str, ``bytes`` fields as a one-element numpy bytes array (as MindSpore 2.10 gives
    them; ``vision.Decode`` takes it), arrays in their schema shape. ``shuffle`` may be a ``Shuffle``
    (FILES, INFILE: see FileShuffleSampler). ``padded_sample`` x ``num_padded`` are rows appended after the
    files' rows, so that ``num_shards`` divides the total."""

    def __init__(self, dataset_files: Any, columns_list: list[str] | None = None,
                 num_parallel_workers: int | None = None, shuffle: Any = None, num_shards: int | None = None,
                 shard_id: int | None = None, sampler: Any = None, padded_sample: dict | None = None,
                 num_padded: int | None = None, num_samples: int | None = None, cache: Any = None):
        owner = "MindDataset"
        check_cache(cache, owner)
        if columns_list is not None and not isinstance(columns_list, list):
            raise InvalidParamError(f"{owner}: columns_list {short_repr(columns_list)} must be a list of column names")
        _check_padding(columns_list, padded_sample, num_padded)
        self._shards = open_shards(dataset_files, owner)
        fields = self._shards[0].schema.fields
        self.columns_list = list(columns_list) if columns_list else list(fields)
        missing = [c for c in self.columns_list if c not in fields]
        if missing:
            raise InvalidParamError(f"{owner}: Invalid data, column name: {missing} can not found in schema "
                                    f"{sorted(fields)}. Please check the 'column_list'.")
        self._specs = [fields[c] for c in self.columns_list]
        self._file_rows = [len(shard) for shard in self._shards]
        self._starts = np.cumsum([0] + self._file_rows)
        self.num_padded = num_padded or 0
        self._padded = None if padded_sample is None else tuple(
            _padded_value(spec, padded_sample[name], name) for name, spec in zip(self.columns_list, self._specs))
        mode = _shuffle_mode(shuffle)
        if sampler is None and mode in (Shuffle.FILES, Shuffle.INFILE):
            if num_samples is not None:
                raise InvalidParamError(f"{owner}: 'Shuffle.FILES' or 'Shuffle.INFILE' and 'num_samples' cannot be "
                                        "specified at the same time.")
            blocks = self._file_rows + ([self.num_padded] if self.num_padded else [])
            super().__init__(None, num_parallel_workers, None, FileShuffleSampler(blocks, mode is Shuffle.FILES,
                                                                                   num_shards, shard_id), None, None)
        else:
            super().__init__(num_samples, num_parallel_workers, None if shuffle is None else mode is not Shuffle.FALSE,
                             sampler, num_shards, shard_id)
        shards = getattr(self.sampler, "num_shards", None)
        if self.num_padded and shards and self._num_rows() % shards:
            raise InvalidParamError(f"{owner}: Invalid data, the size of dataset and padded samples: "
                                    f"{self._num_rows()} can not be divisible by the value of 'num_shards' ({shards}). "
                                    "Please adjust the value of 'num_padded'.")

    def _columns(self) -> list[str]:
        return list(self.columns_list)

    def _num_rows(self) -> int:
        return int(self._starts[-1]) + self.num_padded

    def _row(self, index: int) -> Row:
        if index >= self._starts[-1]:
            return self._padded
        file = int(np.searchsorted(self._starts, index, "right")) - 1
        shard = self._shards[file]
        values = shard.read(index - int(self._starts[file]), self.columns_list)
        try:
            return tuple(_column(spec, values[name]) for name, spec in zip(self.columns_list, self._specs))
        except (TypeError, ValueError, OverflowError) as exc:
            raise MindRecordFileError(f"MindDataset: row {index - int(self._starts[file])} of {shard.path}: {exc}") \
                from None


_SCALARS = {"int32": np.int32, "int64": np.int64, "float32": np.float32, "float64": np.float64}


def _column(spec: dict, value: Any) -> np.ndarray:
    """A stored value as MindDataset's column array (ValueError/TypeError if it does not fit the type)."""
    if "shape" in spec:
        return value
    kind = spec["type"]
    if kind == "bytes":
        return np.array([value])
    if kind == "string":
        return np.array(value if isinstance(value, str) else json.dumps(value))
    if kind in ("int32", "int64"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"the {kind} field holds {short_repr(value)}, not an integer")
        info = np.iinfo(kind)
        if not info.min <= value <= info.max:
            raise ValueError(f"the {kind} field holds {value}, out of its range")
    elif not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"the {kind} field holds {short_repr(value)}, not a number")
    return np.array(value, _SCALARS[kind])


def _padded_value(spec: dict, value: Any, name: str) -> np.ndarray:
    """A padded_sample value as its column's array: arrays and bytes are taken as their bytes, reinterpreted
    by the schema's type and shape (as MindSpore does), numbers and strings converted."""
    kind = spec["type"]
    try:
        if "shape" in spec or kind == "bytes":
            data = np.ascontiguousarray(value).tobytes() if isinstance(value, np.ndarray) else bytes(value)
            if kind == "bytes":
                return np.array([data])
            flat = np.frombuffer(data, kind)
            shape = resolve_shape(spec["shape"], flat.size)
            if shape is None:
                raise ValueError(f"{flat.size} values do not fit the shape {spec['shape']}")
            return flat.reshape(shape)
        return np.array(str(value)) if kind == "string" else np.array(value, _SCALARS[kind])
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidParamError(f"MindDataset: padded_sample[{name!r}] = {short_repr(value)} does not fit the column "
                                f"({spec}): {exc}") from None


def _check_padding(columns_list: list[str] | None, padded_sample: Any, num_padded: Any) -> None:
    """MindSpore's rules for padded_sample / num_padded (``check_padding_options``)."""
    if padded_sample is None:
        if num_padded is not None:
            raise InvalidParamError("MindDataset: num_padded is specified but padded_sample is not.")
        return
    if not isinstance(padded_sample, dict):
        raise InvalidParamError(f"MindDataset: padded_sample {short_repr(padded_sample)} must be a dict")
    if num_padded is None:
        raise InvalidParamError("MindDataset: padded_sample is specified and requires num_padded as well.")
    check_int(num_padded, "MindDataset: num_padded", minimum=0)
    if columns_list is None:
        raise InvalidParamError("MindDataset: padded_sample is specified and requires columns_list as well.")
    if any(c not in padded_sample for c in columns_list):
        raise InvalidParamError(f"MindDataset: padded_sample cannot match columns_list: it has "
                                f"{sorted(padded_sample)}, columns_list is {columns_list}")


def _shuffle_mode(shuffle: Any) -> Shuffle:
    if shuffle is None or shuffle is True:
        return Shuffle.ADAPTIVE
    if shuffle is False:
        return Shuffle.FALSE
    if isinstance(shuffle, Shuffle):
        return shuffle
    raise InvalidParamError(f"MindDataset: shuffle={short_repr(shuffle)} must be a bool, None or a "
                            "mindspore.dataset.Shuffle")


__all__ = ["MappableDataset", "GeneratorDataset", "NumpySlicesDataset", "MnistDataset", "Cifar10Dataset",
           "ImageFolderDataset", "MindDataset"]
