"""``mindspore.SummaryRecord`` (``mindspore.train.summary.summary_record``): writes a summary file that
MindSpore's tools (MindInsight) read: ``<log_dir>/<prefix>.out.events.summary.<seconds>.<device id>.
<host><suffix>``, its first event the format version, then one event per ``record(step)`` holding the
values the summary primitives (``ops.ScalarSummary`` ...) cached since the last record (in PyNative at
once; in a graph after each run) and those given to ``add_value``. Written synchronously here
(MindSpore hands events to writer processes; ``num_process`` is kept but not needed)."""
from __future__ import annotations

import os
import platform
import re
import time
from typing import Any

import numpy as np

from ...common.tensor import Tensor
from ...context import get_context
from ...nn import Cell  # noqa: F401  (MindSpore's module imports it: mindspore.train.summary.summary_record.Cell)
from ...ops.operations.debug_ops import take_summary_data
from ._summary_adapter import frame, init_event, summary_event

# the primitives' names -> the summary kinds of the file; add_value's plugins -> the same kinds
PRIMITIVE_KINDS = {"ScalarSummary": "Scalar", "TensorSummary": "Tensor", "ImageSummary": "Image",
                   "HistogramSummary": "Histogram"}
PLUGIN_KINDS = {"scalar": "Scalar", "tensor": "Tensor", "image": "Image", "histogram": "Histogram"}
# the plugins MindSpore's add_value accepts but this writer cannot serve (graphs, lineage, landscapes)
UNSERVED_PLUGINS = ("graph", "train_lineage", "eval_lineage", "custom_lineage_data", "dataset_graph",
                    "LossLandscape")
EVENT_FILE_NAME_MARK = ".out.events.summary."
# MindSpore's check of file_prefix/file_suffix
_NAME_PATTERN = re.compile(r"^[\w\-.]*$")
_MODES = ("train", "eval")


def _check_name(what: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"The '{what}' must be str, but got {type(value).__name__}.")
    if not _NAME_PATTERN.match(value):
        raise ValueError(f"The '{what}' {value!r} may only hold letters, digits, '_', '-' and '.'.")
    return value


def _array(value: Any) -> np.ndarray:
    return value.asnumpy() if isinstance(value, Tensor) else np.asarray(value)


class SummaryRecord:
    """``SummaryRecord(log_dir, file_prefix='events', file_suffix='_MS', num_process=32, max_file_size=None,
    raise_exception=False, export_options=None)``; use it as a context manager or ``close()`` it."""

    def __init__(self, log_dir: str, file_prefix: str = "events", file_suffix: str = "_MS", num_process: int = 32,
                 max_file_size: int | None = None, raise_exception: bool = False,
                 export_options: dict | None = None) -> None:
        if not isinstance(log_dir, str) or not log_dir:
            raise ValueError(f"The 'log_dir' must be a non-empty str, but got {log_dir!r}.")
        _check_name("file_prefix", file_prefix)
        _check_name("file_suffix", file_suffix)
        if max_file_size is not None and (not isinstance(max_file_size, int) or max_file_size <= 0):
            raise ValueError(f"The 'max_file_size' must be a positive int, but got {max_file_size!r}.")
        if not isinstance(raise_exception, bool):
            raise TypeError(f"The 'raise_exception' must be bool, but got {type(raise_exception).__name__}.")
        if export_options:
            raise ValueError("SummaryRecord: export_options (exporting tensors to npy files) is not supported by "
                             "the emulator; leave it None")
        self._log_dir = os.path.realpath(log_dir)
        os.makedirs(self._log_dir, exist_ok=True)
        self._mode, self._pending, self._closed = "train", [], False
        self._max_file_size, self._raise = max_file_size, raise_exception
        seconds = int(time.time())
        name = f"{file_prefix}{EVENT_FILE_NAME_MARK}{seconds}.{get_context('device_id')}.{platform.node()}{file_suffix}"
        self._path = os.path.join(self._log_dir, name)
        self._file = open(self._path, "wb")
        self._write(init_event(time.time()))

    @property
    def log_dir(self) -> str:
        """The directory the summary file is in."""
        return self._log_dir

    @property
    def event_file_name(self) -> str:
        return self._path

    def __enter__(self) -> "SummaryRecord":
        if self._closed:
            raise ValueError("SummaryRecord has been closed.")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def set_mode(self, mode: str) -> None:
        """'train' or 'eval' (MindSpore records only training summaries' graphs in 'train')."""
        if mode not in _MODES:
            raise ValueError(f"The mode must be one of {list(_MODES)}, but got {mode!r}.")
        self._mode = mode

    def add_value(self, plugin: str, name: str, value: Any) -> None:
        """Add a value to the next ``record``: plugin 'scalar', 'tensor', 'image' or 'histogram'."""
        if plugin in UNSERVED_PLUGINS:
            raise ValueError(f"SummaryRecord.add_value: the plugin {plugin!r} (graphs, lineage, landscapes) is not "
                             f"supported by the emulator; use 'scalar', 'tensor', 'image' or 'histogram'")
        if plugin not in PLUGIN_KINDS:
            raise ValueError(f"No such plugin of {plugin!r}, the plugin must be one of "
                             f"{list(PLUGIN_KINDS) + list(UNSERVED_PLUGINS)}.")
        if not isinstance(name, str) or not name:
            raise ValueError(f"The name must be a non-empty str, but got {name!r}.")
        if not isinstance(value, Tensor):
            raise TypeError(f"The value of the {plugin} plugin must be a Tensor, but got {type(value).__name__}.")
        self._pending.append((PLUGIN_KINDS[plugin], name, _array(value)))

    def record(self, step: int, train_network: Any = None, plugin_filter: Any = None) -> bool:
        """Write one event of the values cached since the last record; False if there were none."""
        if isinstance(step, bool) or not isinstance(step, int):
            raise TypeError(f"The 'step' must be int, but got {type(step).__name__}.")
        if self._closed:
            return False
        values = [(PRIMITIVE_KINDS[op], str(tag), _array(value)) for op, tag, value in take_summary_data()
                  if op in PRIMITIVE_KINDS]
        values, self._pending = values + self._pending, []
        if plugin_filter is not None:
            values = [v for v in values if plugin_filter(v[0].lower())]
        if not values:
            return False
        self._write(summary_event(values, step, time.time()))
        return True

    def _write(self, event: bytes) -> None:
        record = frame(event)
        if self._max_file_size is not None and self._file.tell() + len(record) > self._max_file_size:
            if self._raise:
                raise RuntimeError(f"The summary file {self._path} would exceed max_file_size "
                                   f"{self._max_file_size} bytes.")
            return
        self._file.write(record)

    def flush(self) -> None:
        """Write what is buffered to the file."""
        if not self._closed:
            self._file.flush()

    def close(self) -> None:
        """Flush and close the file; later records are ignored."""
        if not self._closed:
            self._file.close()
            self._closed = True
