"""The dataset pipeline: a tree of nodes, pulled row by row on the host, deterministic.

Every node is a :class:`Dataset`; the operators (``map``, ``batch``, ``shuffle``, ``repeat``, ``project``,
``rename``, ``zip``, ``concat``, ``take``, ``skip``, ``split``) return a new node over their input. A row is
a tuple of numpy arrays in the order of ``get_col_names()``; column names are known when a node is built,
so a wrong column name fails at ``map``/``project``/``rename`` time, naming the columns that exist.

Iterating (``create_tuple_iterator`` / ``create_dict_iterator`` / ``for row in dataset``) runs one *pass*
of the tree per epoch: ``_rows(run, pass_id)`` of the root, which pulls its children's passes. ``repeat(n)``
runs its child n times per pass, as passes ``pass_id * n + k``. Randomness (samplers, shuffle buffers,
random transforms) is drawn from ``config.generator(height, pass, ...)``, where the height is the node's
distance from the sources: the same pipeline gives the same rows every run, each epoch and repeat
reshuffles, and shards of one source share one permutation.
"""
from __future__ import annotations

import copy
import itertools
import math
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError, check_int, short_repr

from ..common.tensor import Tensor
from . import config
from .transforms.transforms import apply_operations, as_array

Row = tuple            # one row: a numpy array per column
INT32_MAX = 2**31 - 1
SPLIT_SHUFFLE_BUFFER = 10000     # the buffer MindSpore's split(randomize=True) shuffles a non-mappable input with


def _names(columns: Any, what: str) -> list[str]:
    """A column name or list of names as a list, each a non-empty string, no duplicates."""
    names = [columns] if isinstance(columns, str) else list(columns) if isinstance(columns, (list, tuple)) else None
    if not names or not all(isinstance(n, str) and n for n in names):
        raise InvalidParamError(f"{what} {short_repr(columns)} must be a column name or a non-empty list of them")
    if len(set(names)) != len(names):
        raise InvalidParamError(f"{what} {names} names a column twice")
    return names


def _options(kwargs: dict, accepted: set[str], who: str) -> None:
    """Keyword options MindSpore takes that change nothing here are accepted; a misspelt one is not."""
    unknown = sorted(set(kwargs) - accepted)
    if unknown:
        raise InvalidParamError(f"{who}() got unexpected keyword argument(s) {unknown}; it takes "
                                f"{sorted(accepted)} besides its positional parameters")


class DatasetCache:
    """``mindspore.dataset.DatasetCache``: MindSpore's client of its tensor cache server, which keeps the
    rows of the node it is given to (``cache=``) so that later epochs read them from memory instead of
    decoding again. The rows a cache serves are the node's own, and this pipeline is deterministic and
    in-process: a node with a cache is read directly (no server to start, nothing kept), and what
    MindSpore refuses, a random transform under a cache (its rows would repeat one epoch's draws), is
    refused. The arguments are checked as MindSpore checks them."""

    def __init__(self, session_id: int, size: int = 0, spilling: bool = False, hostname: str | None = None,
                 port: int | None = None, num_connections: int | None = None, prefetch_size: int | None = None):
        self.session_id = check_int(session_id, "DatasetCache: session_id", minimum=1, maximum=2**32 - 1)
        self.size = check_int(size, "DatasetCache: size (0: unlimited)", minimum=0, maximum=2**64 - 1)
        if not isinstance(spilling, bool):
            raise InvalidParamError(f"DatasetCache: spilling={spilling!r} must be True or False")
        if hostname is not None and not isinstance(hostname, str):
            raise InvalidParamError(f"DatasetCache: hostname={hostname!r} must be a str")
        self.spilling, self.hostname = spilling, hostname
        self.port = None if port is None else check_int(port, "DatasetCache: port", minimum=1025, maximum=65535)
        self.num_connections, self.prefetch_size = (
            None if v is None else check_int(v, f"DatasetCache: {name}", minimum=1, maximum=INT32_MAX)
            for name, v in (("num_connections", num_connections), ("prefetch_size", prefetch_size)))


def check_cache(cache: Any, who: str, below: Sequence["Dataset"] = ()) -> None:
    """``cache=`` is None or a DatasetCache, with no random map among ``below`` (the cached node and
    what feeds it)."""
    if cache is None:
        return
    if not isinstance(cache, DatasetCache):
        raise InvalidParamError(f"{who}: cache={short_repr(cache)} must be a mindspore.dataset.DatasetCache or None")
    nodes = list(below)
    while nodes:
        node = nodes.pop()
        if getattr(node, "random", False):
            raise InvalidParamError(f"{who}: MapOp with non-deterministic TensorOps is currently not supported as a "
                                    "descendant of cache; give the cache to a node below the random transforms")
        nodes.extend(node.children)


class _Run:
    """One iterator's view of a pipeline: checks it is a tree and numbers each node by its height.

    As in MindSpore, a dataset object feeds one operator: below the root, a node that two live operators
    were built on (``b = a.map(...); c = a.batch(...)``, or ``a.zip(a)``) makes the pipeline not a tree.
    """

    def __init__(self, root: "Dataset"):
        self.root = root                         # keeps every node (and so its id) alive
        self.height: dict[int, int] = {}
        self._visit(root)

    def _visit(self, node: "Dataset") -> int:
        consumers = [c() for c in node._consumers if c() is not None]
        if node is not self.root and len(consumers) > 1:
            raise InvalidParamError(f"The data pipeline is not a tree (i.e., one node has 2 consumers): a "
                                    f"{type(node).__name__} feeds {len(consumers)} operators "
                                    f"({', '.join(type(c).__name__ for c in consumers)}); a dataset object "
                                    "feeds one pipeline, so build the source again for the other one")
        height = 1 + max((self._visit(c) for c in node.children), default=-1)
        self.height[id(node)] = height
        return height

    def rng(self, node: "Dataset", *key: int) -> np.random.Generator:
        return config.generator(self.height[id(node)], *key)


class BatchInfo:
    """What a callable ``batch_size`` or a ``per_batch_map`` is told about the batch being made."""

    def __init__(self, batch_num: int, epoch_num: int):
        self._batch_num, self._epoch_num = batch_num, epoch_num

    def get_batch_num(self) -> int:
        return self._batch_num

    def get_epoch_num(self) -> int:
        return self._epoch_num


class Dataset:
    """Base of every pipeline node; subclasses give ``_columns``, ``_rows`` and, when known, ``_size``."""

    def __init__(self, children: Sequence["Dataset"] = (), num_parallel_workers: int | None = None):
        self.children = list(children)
        self._consumers: list[weakref.ref] = []          # the operators built on this node
        for child in self.children:
            child._consumers.append(weakref.ref(self))
        self.num_parallel_workers = None if num_parallel_workers is None else check_int(
            num_parallel_workers, f"{type(self).__name__}: num_parallel_workers", minimum=1, maximum=INT32_MAX)
        self._dataset_size: int | None = None

    # ------------------------------------------------------------------ what subclasses give
    def _columns(self) -> list[str]:
        raise NotImplementedError

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        raise NotImplementedError

    def _size(self) -> int | None:
        """Rows (or batches) per pass if known without running the pipeline."""
        return None

    # ------------------------------------------------------------------ facts
    def get_col_names(self) -> list[str]:
        return list(self._columns())

    def get_dataset_size(self) -> int:
        """Rows (batches, after ``batch``) in one epoch; counted by running one pass when not known."""
        run = _Run(self)                          # a pipeline that is not a tree has no size either
        if self._dataset_size is None:
            size = self._size()
            if size is None:
                size = sum(1 for _ in self._rows(run, 0))
            self._dataset_size = size
        return self._dataset_size

    def get_batch_size(self) -> int:
        node = self._find(BatchDataset)
        return 1 if node is None else node.batch_size

    def get_repeat_count(self) -> int:
        node = self._find(RepeatDataset)
        return 1 if node is None else node.count

    def _find(self, kind: type) -> Any:
        node = self
        while node is not None and not isinstance(node, kind):
            node = node.children[0] if node.children else None
        return node

    def _first_row(self) -> Row:
        for row in self._rows(_Run(self), 0):
            return row
        raise InvalidParamError(f"{type(self).__name__}: the dataset has no rows, so it has no output shapes "
                                "or types")

    def output_shapes(self, estimate: bool = False) -> list[list[int]]:
        return [list(a.shape) for a in self._first_row()]

    def output_types(self) -> list[np.dtype]:
        return [a.dtype for a in self._first_row()]

    def is_shuffled(self) -> bool:
        return any(c.is_shuffled() for c in self.children)

    def is_sharded(self) -> bool:
        return any(c.is_sharded() for c in self.children)

    # ------------------------------------------------------------------ operators
    def map(self, operations: Any, input_columns: Any = None, output_columns: Any = None,
            num_parallel_workers: int | None = None, **kwargs: Any) -> "MapDataset":
        return MapDataset(self, operations, input_columns, output_columns, num_parallel_workers, **kwargs)

    def batch(self, batch_size: int | Callable, drop_remainder: bool = False, num_parallel_workers: int | None = None,
              **kwargs: Any) -> "BatchDataset":
        return BatchDataset(self, batch_size, drop_remainder, num_parallel_workers, **kwargs)

    def shuffle(self, buffer_size: int) -> "ShuffleDataset":
        return ShuffleDataset(self, buffer_size)

    def repeat(self, count: int | None = None) -> "RepeatDataset":
        return RepeatDataset(self, count)

    def project(self, columns: Any) -> "ProjectDataset":
        return ProjectDataset(self, columns)

    def rename(self, input_columns: Any, output_columns: Any) -> "RenameDataset":
        return RenameDataset(self, input_columns, output_columns)

    def zip(self, datasets: Any) -> "ZipDataset":
        others = list(datasets) if isinstance(datasets, tuple) else [datasets]
        return ZipDataset([self, *others])

    def concat(self, datasets: Any) -> "ConcatDataset":
        others = list(datasets) if isinstance(datasets, (list, tuple)) else [datasets]
        return ConcatDataset([self, *others])

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return self.concat(other)

    def take(self, count: int = -1) -> "TakeDataset":
        return TakeDataset(self, count)

    def skip(self, count: int) -> "SkipDataset":
        return SkipDataset(self, count)

    def split(self, sizes: Sequence[int | float], randomize: bool = True) -> tuple["Dataset", ...]:
        """Consecutive pieces of the given sizes (ints summing to the dataset size, or fractions summing to
        1); with ``randomize`` each piece reads its copy of the input through the same shuffle, the same in
        every epoch (one shuffle node per piece, at the same height: the same draws), so the pieces are
        disjoint."""
        if self.is_sharded():
            raise InvalidParamError("split: the dataset is sharded; split it before sharding (num_shards)")
        pieces, skipped = [], 0
        for size in split_sizes(sizes, self.get_dataset_size()):
            piece = self._copy()
            if randomize:
                piece = piece.shuffle(SPLIT_SHUFFLE_BUFFER)
                piece.reshuffle_each_epoch = False
            pieces.append((piece.skip(skipped) if skipped else piece).take(size))
            skipped += size
        return tuple(pieces)

    def _copy(self) -> "Dataset":
        """This node again, over the same inputs, with no operator built on it yet: one more consumer of
        its inputs that is this node's twin (a split piece), so the inputs still feed one pipeline each."""
        clone = copy.copy(self)
        clone._consumers, clone._dataset_size = [], None
        return clone

    # ------------------------------------------------------------------ iteration
    def create_tuple_iterator(self, columns: Any = None, num_epochs: int = -1, output_numpy: bool = False,
                              do_copy: bool = False) -> "TupleIterator":
        return TupleIterator(self, columns, num_epochs, output_numpy)

    def create_dict_iterator(self, num_epochs: int = -1, output_numpy: bool = False,
                             do_copy: bool = False) -> "DictIterator":
        return DictIterator(self, None, num_epochs, output_numpy)

    def __iter__(self) -> "TupleIterator":
        return self.create_tuple_iterator()


def split_sizes(sizes: Sequence[int | float], dataset_size: int) -> list[int]:
    """Absolute piece sizes, MindSpore's rule: ints must sum to the size; fractions are rounded, and the
    rounding difference goes to the first piece (or comes from the first piece large enough)."""
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise InvalidParamError(f"split: sizes {short_repr(sizes)} must be a non-empty list")
    if all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
        if any(s <= 0 for s in sizes) or sum(sizes) != dataset_size:
            raise InvalidParamError(f"split: sizes {list(sizes)} must be positive and sum to the dataset size "
                                    f"{dataset_size}")
        return list(sizes)
    if not all(isinstance(s, float) and 0 < s <= 1 for s in sizes) or not math.isclose(sum(sizes), 1.0):
        raise InvalidParamError(f"split: sizes {list(sizes)} must be all ints (row counts) or all floats in "
                                "(0, 1] summing to 1")
    absolute = [int(round(s * dataset_size)) for s in sizes]
    if any(a == 0 for a in absolute):
        raise InvalidParamError(f"split: a fraction in {list(sizes)} gives an empty piece of a dataset of "
                                f"{dataset_size} rows")
    difference = dataset_size - sum(absolute)
    if difference > 0:
        absolute[0] += difference
    else:
        for i, a in enumerate(absolute):
            if a + difference > 0:
                absolute[i] += difference
                break
    return absolute


# ---------------------------------------------------------------------------------------- iterators
class TupleIterator:
    """Rows as lists of Tensors (numpy arrays with ``output_numpy``), one epoch per ``for`` loop, for
    ``num_epochs`` epochs (-1: no limit); epoch k reads the pipeline's k-th pass."""

    def __init__(self, dataset: Dataset, columns: Any, num_epochs: int, output_numpy: bool):
        if num_epochs != -1:
            check_int(num_epochs, "create_iterator: num_epochs", minimum=1, maximum=INT32_MAX,
                      hint="give -1 for no limit")
        self._dataset, self._num_epochs, self._output_numpy = dataset, num_epochs, bool(output_numpy)
        self._run = _Run(dataset)
        names = dataset.get_col_names()
        self._names = names if columns is None else _names(columns, "create_tuple_iterator: columns")
        missing = [n for n in self._names if n not in names]
        if missing:
            raise InvalidParamError(f"create_tuple_iterator: columns {missing} do not exist; the dataset's "
                                    f"columns are {names}")
        self._index = [names.index(n) for n in self._names]
        self._epoch, self._pass = 0, None

    def __iter__(self) -> "TupleIterator":
        return self

    def __next__(self) -> Any:
        if self._pass is None:
            if self._num_epochs != -1 and self._epoch >= self._num_epochs:
                raise StopIteration
            self._pass = self._dataset._rows(self._run, self._epoch)
        try:
            row = next(self._pass)
        except StopIteration:
            self._pass, self._epoch = None, self._epoch + 1
            raise
        return self._emit([self._value(row[i], self._names[k]) for k, i in enumerate(self._index)])

    def _emit(self, values: list) -> Any:
        return values

    def _value(self, array: np.ndarray, name: str) -> Any:
        if self._output_numpy or array.dtype.kind in "SU":      # MindSpore 2.x gives text and bytes as numpy
            return array
        try:
            return Tensor(array)
        except InvalidParamError as exc:
            raise InvalidParamError(f"column {name!r} ({array.dtype}) cannot become a Tensor: {exc.message}; "
                                    "TypeCast it in a map, or iterate with output_numpy=True") from None

    def stop(self) -> None:
        """End the iteration: no further epochs."""
        self._pass, self._epoch, self._num_epochs = None, 0, 0


class DictIterator(TupleIterator):
    """Rows as ``{column name: value}``."""

    def _emit(self, values: list) -> dict:
        return dict(zip(self._names, values))


# ---------------------------------------------------------------------------------------- operators
class MapDataset(Dataset):
    """``operations`` applied to ``input_columns`` of every row; their outputs become ``output_columns``:
    in place of the inputs when as many, else first, followed by the untouched columns."""

    def __init__(self, child: Dataset, operations: Any, input_columns: Any, output_columns: Any,
                 num_parallel_workers: int | None, **kwargs: Any):
        super().__init__([child], num_parallel_workers)
        _options(kwargs, {"python_multiprocessing", "max_rowsize", "cache", "callbacks", "offload",
                          "column_order"}, "map")
        if kwargs.get("column_order") is not None:
            raise InvalidParamError("map: the parameter 'column_order' was removed in MindSpore 2.x; apply "
                                    "dataset.project(columns) after the map instead")
        ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
        if not ops or not all(callable(op) for op in ops):
            raise InvalidParamError(f"map: operations {short_repr(operations)} must be a transform, a callable "
                                    "or a non-empty list of them")
        self.operations = ops
        self.random = any(getattr(op, "random", False) for op in ops)
        check_cache(kwargs.get("cache"), "map", [self])
        names = child.get_col_names()
        self.input_columns = names[:1] if input_columns is None else _names(input_columns, "map: input_columns")
        _check_exist(self.input_columns, names, "map: input_columns")
        self.output_columns = self.input_columns if output_columns is None else \
            _names(output_columns, "map: output_columns")
        self._in = [names.index(n) for n in self.input_columns]
        if len(self.output_columns) == len(self.input_columns):
            cols = list(names)
            for i, n in zip(self._in, self.output_columns):
                cols[i] = n
            self._keep: list[int] | None = None
        else:
            self._keep = [i for i, n in enumerate(names) if n not in self.input_columns]
            cols = self.output_columns + [names[i] for i in self._keep]
        if len(set(cols)) != len(cols):
            raise InvalidParamError(f"map: output_columns {self.output_columns} repeat a column the dataset keeps "
                                    f"({cols}); rename them")
        self._cols = cols

    def _columns(self) -> list[str]:
        return self._cols

    def _size(self) -> int | None:
        return self.children[0]._size()

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        where = f"map over {self.input_columns}"
        for i, row in enumerate(self.children[0]._rows(run, pass_id)):
            rng = run.rng(self, pass_id, i) if self.random else None
            try:
                out = apply_operations(self.operations, tuple(row[j] for j in self._in), rng)
            except InvalidParamError as exc:          # the same class (e.g. a RuntimeError one), placed
                raise type(exc)(f"{where}: {exc.message}", exc.code) from None
            if len(out) != len(self.output_columns):
                raise InvalidParamError(f"{where}: the operations returned {len(out)} column(s) but output_columns "
                                        f"names {len(self.output_columns)} ({self.output_columns}); give "
                                        "output_columns one name per returned value")
            out = [as_array(v, f"{where}: the last operation ({_op_name(self.operations[-1])})") for v in out]
            if self._keep is None:
                new = list(row)
                for j, v in zip(self._in, out):
                    new[j] = v
                yield tuple(new)
            else:
                yield tuple(out) + tuple(row[j] for j in self._keep)


def _op_name(op: Any) -> str:
    return getattr(op, "__name__", type(op).__name__)


def _check_exist(wanted: list[str], names: list[str], what: str) -> None:
    missing = [n for n in wanted if n not in names]
    if missing:
        raise InvalidParamError(f"{what}: column(s) {missing} do not exist in the dataset; its columns are "
                                f"{names}")


class BatchDataset(Dataset):
    """Consecutive rows stacked into batches of ``batch_size`` (a new leading axis per column)."""

    def __init__(self, child: Dataset, batch_size: int | Callable, drop_remainder: bool,
                 num_parallel_workers: int | None, per_batch_map: Callable | None = None, input_columns: Any = None,
                 output_columns: Any = None, **kwargs: Any):
        super().__init__([child], num_parallel_workers)
        _options(kwargs, {"python_multiprocessing", "max_rowsize"}, "batch")
        if not callable(batch_size):
            batch_size = check_int(batch_size, "batch: batch_size", minimum=1, maximum=INT32_MAX)
        if not isinstance(drop_remainder, bool):
            raise InvalidParamError(f"batch: drop_remainder {short_repr(drop_remainder)} must be a bool")
        self.batch_size, self.drop_remainder = batch_size, drop_remainder
        if per_batch_map is not None and not callable(per_batch_map):
            raise InvalidParamError("batch: per_batch_map must be a callable")
        if input_columns is not None and per_batch_map is None:
            raise InvalidParamError("batch: input_columns can be specified only when per_batch_map is set")
        self.per_batch_map = per_batch_map
        names = child.get_col_names()
        self.input_columns = names if input_columns is None else _names(input_columns, "batch: input_columns")
        _check_exist(self.input_columns, names, "batch: input_columns")
        self.output_columns = self.input_columns if output_columns is None else \
            _names(output_columns, "batch: output_columns")
        self._in = [names.index(n) for n in self.input_columns]
        if len(self.output_columns) == len(self.input_columns):
            self._cols = list(names)
            for i, n in zip(self._in, self.output_columns):
                self._cols[i] = n
            self._keep: list[int] | None = None
        else:
            self._keep = [i for i, n in enumerate(names) if n not in self.input_columns]
            self._cols = self.output_columns + [names[i] for i in self._keep]

    def _columns(self) -> list[str]:
        return self._cols

    def _size(self) -> int | None:
        rows = self.children[0]._size()
        if rows is None or callable(self.batch_size):
            return None
        return rows // self.batch_size if self.drop_remainder else -(-rows // self.batch_size)

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        rows = self.children[0]._rows(run, pass_id)
        for number in itertools.count():
            info = BatchInfo(number, pass_id)
            size = self.batch_size(info) if callable(self.batch_size) else self.batch_size
            chunk = list(itertools.islice(rows, size))
            if not chunk or (len(chunk) < size and self.drop_remainder):
                return
            yield self._stack(chunk, info)

    def _stack(self, chunk: list[Row], info: BatchInfo) -> Row:
        if self.per_batch_map is None:
            return tuple(self._column(name, [row[i] for row in chunk]) for i, name in enumerate(self._cols))
        out = self.per_batch_map(*[[row[j] for row in chunk] for j in self._in], info)
        out = out if isinstance(out, tuple) else (out,)
        if len(out) != len(self.output_columns):
            raise InvalidParamError(f"batch: per_batch_map returned {len(out)} column(s) but output_columns names "
                                    f"{len(self.output_columns)} ({self.output_columns})")
        out = [self._column(n, list(v)) if isinstance(v, list) else as_array(v, "batch: per_batch_map")
               for n, v in zip(self.output_columns, out)]
        if self._keep is None:
            new: list[Any] = [None if i in self._in else self._column(n, [row[i] for row in chunk])
                              for i, n in enumerate(self._cols)]
            for j, v in zip(self._in, out):
                new[j] = v
            return tuple(new)
        return tuple(out) + tuple(self._column(self._cols[len(out) + k], [row[i] for row in chunk])
                                  for k, i in enumerate(self._keep))

    @staticmethod
    def _column(name: str, values: list) -> np.ndarray:
        values = [as_array(v, f"batch: column {name!r}") for v in values]
        shapes = {v.shape for v in values}
        if len(shapes) > 1:
            raise InvalidParamError(f"batch: column {name!r} has rows of different shapes {sorted(shapes)} in one "
                                    "batch; resize them to one shape in a map (e.g. vision.Resize) first")
        return np.stack(values)


class ShuffleDataset(Dataset):
    """Rows through a buffer of ``buffer_size``: each new row replaces a random one, which is emitted;
    the buffer is drained in random order at the end. Reshuffled every epoch unless told otherwise."""

    def __init__(self, child: Dataset, buffer_size: int):
        super().__init__([child])
        self.buffer_size = check_int(buffer_size, "shuffle: buffer_size", minimum=2, maximum=INT32_MAX,
                                     hint="a buffer as large as the dataset shuffles it globally")
        self.reshuffle_each_epoch = True

    def _columns(self) -> list[str]:
        return self.children[0].get_col_names()

    def _size(self) -> int | None:
        return self.children[0]._size()

    def is_shuffled(self) -> bool:
        return True

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        rng = run.rng(self, pass_id if self.reshuffle_each_epoch else 0)
        buffer: list[Row] = []
        for row in self.children[0]._rows(run, pass_id):
            if len(buffer) < self.buffer_size:
                buffer.append(row)
                continue
            j = int(rng.integers(self.buffer_size))
            yield buffer[j]
            buffer[j] = row
        while buffer:
            j = int(rng.integers(len(buffer)))
            buffer[j], buffer[-1] = buffer[-1], buffer[j]
            yield buffer.pop()


class RepeatDataset(Dataset):
    """The child's rows ``count`` times per epoch (None or -1: without end), each time a new pass."""

    def __init__(self, child: Dataset, count: int | None):
        super().__init__([child])
        self.count = -1 if count is None else count
        if self.count != -1:
            check_int(self.count, "repeat: count", minimum=1, maximum=INT32_MAX, hint="or -1/None to repeat forever")

    def _columns(self) -> list[str]:
        return self.children[0].get_col_names()

    def _size(self) -> int | None:
        rows = self.children[0]._size()
        return rows if rows is None or self.count == -1 else rows * self.count

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        passes = range(self.count) if self.count != -1 else itertools.count()
        for k in passes:
            yield from self.children[0]._rows(run, pass_id * self.count + k if self.count != -1 else k)


class ProjectDataset(Dataset):
    """Only ``columns``, in that order."""

    def __init__(self, child: Dataset, columns: Any):
        super().__init__([child])
        names = child.get_col_names()
        self.columns = _names(columns, "project: columns")
        _check_exist(self.columns, names, "project")
        self._index = [names.index(n) for n in self.columns]

    def _columns(self) -> list[str]:
        return list(self.columns)

    def _size(self) -> int | None:
        return self.children[0]._size()

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        for row in self.children[0]._rows(run, pass_id):
            yield tuple(row[i] for i in self._index)


class RenameDataset(Dataset):
    """Columns ``input_columns`` renamed to ``output_columns``; data unchanged."""

    def __init__(self, child: Dataset, input_columns: Any, output_columns: Any):
        super().__init__([child])
        names = child.get_col_names()
        old, new = _names(input_columns, "rename: input_columns"), _names(output_columns, "rename: output_columns")
        if len(old) != len(new):
            raise InvalidParamError(f"rename: {len(old)} input_columns but {len(new)} output_columns")
        _check_exist(old, names, "rename")
        mapping = dict(zip(old, new))
        self._cols = [mapping.get(n, n) for n in names]
        if len(set(self._cols)) != len(self._cols):
            raise InvalidParamError(f"rename: the result {self._cols} has a column name twice")

    def _columns(self) -> list[str]:
        return self._cols

    def _size(self) -> int | None:
        return self.children[0]._size()

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        return self.children[0]._rows(run, pass_id)


class ZipDataset(Dataset):
    """The columns of several datasets side by side, as many rows as the shortest has."""

    def __init__(self, datasets: Sequence[Dataset]):
        if len(datasets) < 2 or not all(isinstance(d, Dataset) for d in datasets):
            raise InvalidParamError("zip: give at least two datasets (a dataset and a tuple of others)")
        super().__init__(datasets)
        self._cols = [n for d in datasets for n in d.get_col_names()]
        twice = sorted({n for n in self._cols if self._cols.count(n) > 1})
        if twice:
            raise InvalidParamError(f"zip: column(s) {twice} appear in more than one dataset; rename them first")

    def _columns(self) -> list[str]:
        return self._cols

    def _size(self) -> int | None:
        sizes = [c._size() for c in self.children]
        return None if None in sizes else min(sizes)

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        for parts in zip(*(c._rows(run, pass_id) for c in self.children)):
            yield tuple(a for part in parts for a in part)


class ConcatDataset(Dataset):
    """The rows of several datasets with the same columns, one after the other."""

    def __init__(self, datasets: Sequence[Dataset]):
        if not all(isinstance(d, Dataset) for d in datasets):
            raise InvalidParamError("concat: every input must be a dataset")
        super().__init__(datasets)
        self._cols = datasets[0].get_col_names()
        for d in datasets[1:]:
            if d.get_col_names() != self._cols:
                raise InvalidParamError(f"concat: the datasets have different columns ({self._cols} and "
                                        f"{d.get_col_names()}); project/rename them to the same columns first")

    def _columns(self) -> list[str]:
        return self._cols

    def _size(self) -> int | None:
        sizes = [c._size() for c in self.children]
        return None if None in sizes else sum(sizes)

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        for child in self.children:
            yield from child._rows(run, pass_id)


class TakeDataset(Dataset):
    """At most the first ``count`` rows (-1: all)."""

    def __init__(self, child: Dataset, count: int):
        super().__init__([child])
        self.count = count if count == -1 else check_int(count, "take: count", minimum=1, maximum=INT32_MAX,
                                                         hint="or -1 for all rows")

    def _columns(self) -> list[str]:
        return self.children[0].get_col_names()

    def _size(self) -> int | None:
        rows = self.children[0]._size()
        return rows if rows is None or self.count == -1 else min(rows, self.count)

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        rows = self.children[0]._rows(run, pass_id)
        return rows if self.count == -1 else itertools.islice(rows, self.count)


class SkipDataset(Dataset):
    """All but the first ``count`` rows."""

    def __init__(self, child: Dataset, count: int):
        super().__init__([child])
        self.count = check_int(count, "skip: count", minimum=0, maximum=INT32_MAX)

    def _columns(self) -> list[str]:
        return self.children[0].get_col_names()

    def _size(self) -> int | None:
        rows = self.children[0]._size()
        return None if rows is None else max(rows - self.count, 0)

    def _rows(self, run: _Run, pass_id: int) -> Iterator[Row]:
        return itertools.islice(self.children[0]._rows(run, pass_id), self.count, None)


__all__ = ["Dataset", "MapDataset", "BatchDataset", "ShuffleDataset", "RepeatDataset", "ProjectDataset",
           "RenameDataset", "ZipDataset", "ConcatDataset", "TakeDataset", "SkipDataset", "TupleIterator",
           "DictIterator", "BatchInfo", "split_sizes"]
