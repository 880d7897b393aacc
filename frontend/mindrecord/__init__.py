"""``mindspore.mindrecord``: MindSpore's MindRecord data set files, written by :class:`FileWriter` and read
by :class:`FileReader` and ``mindspore.dataset.MindDataset``; the layout is documented (and implemented
once) in ``format.py``. The errors carry MindSpore's names (``ParamValueError``, ``MRMInvalidSchemaError``
...) and are ascendemu's typed errors."""
from typing import Any

from ..unsupported import unsupported
from .filereader import FileReader
from .filewriter import FileWriter
from .format import (MindRecordException, MindRecordFileError, MindRecordRuntimeError, MRMAddSchemaError,
                     MRMDefineIndexError, MRMInvalidSchemaError, ParamTypeError, ParamValueError)

SUCCESS, FAILED = 0, 1          # MindSpore's MSRStatus values, exported by mindspore.mindrecord

__all__ = ["FileWriter", "FileReader", "SUCCESS", "FAILED", "MindRecordException", "ParamValueError",
           "ParamTypeError", "MRMInvalidSchemaError", "MRMAddSchemaError", "MRMDefineIndexError",
           "MindRecordFileError", "MindRecordRuntimeError"]


def __getattr__(name: str) -> Any:
    raise unsupported("mindrecord", name, __all__, "convert data with FileWriter (the *ToMR converters, "
                      "MindPage and encryption are not provided)")
