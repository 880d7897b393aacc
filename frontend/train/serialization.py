"""``mindspore.train.serialization``, where MindSpore keeps checkpoints: ``save_checkpoint``,
``load_checkpoint``, ``load_param_into_net`` (and ``export``: ONNX by ``onnx_export``, MINDIR and
``load`` by ``mindir``).

Files are MindSpore's own, in both directions: one saved by MindSpore loads here, and for the same
entries this writes the bytes MindSpore writes (``tests/test_checkpoint.py`` re-saves real MindSpore
2.10 files byte for byte).

``.ckpt`` layout (schema and codec in ``checkpoint_proto``): a concatenation of independently serialised
``Checkpoint`` messages, each holding one ``Value`` (tag = parameter name, ``TensorProto`` = dims,
tensor_type, raw little-endian bytes); no header, no length prefix. A tensor larger than
``SLICE_BYTES`` is written as consecutive Values with the same tag, each carrying the full dims; the
reader joins them. Strings are ``dims=[0]``, type ``"str"``, UTF-32-LE. ``crc_check=True`` appends
``b"crc_num"`` + crc32(body) as 10 big-endian bytes. ``format="safetensors"`` writes a standard
safetensors file (sorted keys, metadata ``{"format": "ms"}``).

Saving is crash-safe and safe between concurrent writers: the file is written to a temp file of its
own beside the target (``.<name>.<random>.tmp``), fsynced, made read-only (as MindSpore leaves it) and
renamed over the target, so the target name always holds the previous complete file or one complete
new one, never a torn one (MindSpore deletes the previous file first; this keeps it until the new one
is complete). A save killed midway leaves its hidden temp file behind.

Emulator limits: every MindSpore real dtype loads as itself (BFloat16 as ml_dtypes' bfloat16); Int4
and map tensors raise FeatureNotSupportedError naming the file and the parameter. Encryption (``enc_key``/``dec_key``) is
not supported: MindSpore's cipher framing is undocumented.
"""
from __future__ import annotations

import binascii
import math
import os
import stat
import warnings
from collections import OrderedDict
from typing import Any, BinaryIO, Callable, Iterable

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidFileError, InvalidParamError
from ascendemu.units import MiB

from ..checkpoint_proto import Value, WireError, iter_values, value_head
from ..nn.cell import Cell
from .. import onnx_export
from ..ops import Cast  # noqa: F401  (MindSpore's train.serialization has it)
from ..common import dtype as mstype
from ..common.parameter import Parameter
from ..common.tensor import Tensor

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "CheckpointWarning", "CheckpointFileError",
           "export", "load"]

# MindSpore's SLICE_SIZE (512 * 1024 KB): tensor bytes go out in chunks of at most this size, one
# Value each, so no Value nears the 2 GiB message limit of MindSpore's protobuf reader.
SLICE_BYTES = 512 * MiB
# The CRC trailer: this mark, then crc32 of everything before it as CRC_DIGITS big-endian bytes.
CRC_MARK = b"crc_num"
CRC_DIGITS = 10
CRC_TRAILER = len(CRC_MARK) + CRC_DIGITS
# crc_check reads the file in chunks of this size: memory stays bounded whatever the file's size.
CRC_CHUNK = 16 * MiB
FORMATS = ("ckpt", "safetensors")
ASYNC_MODES = ("thread", "process")
# Safetensors metadata MindSpore writes and checks.
SAFETENSORS_METADATA = {"format": "ms"}
STR_TYPE = "str"
BF16_TYPE = "BFloat16"
# tensor_type spellings (str() of MindSpore's dtype) and the numpy type of their tensor_content.
NP_TYPES = {"Int8": np.int8, "UInt8": np.uint8, "Int16": np.int16, "UInt16": np.uint16, "Int32": np.int32,
            "UInt32": np.uint32, "Int64": np.int64, "UInt64": np.uint64, "Float16": np.float16,
            "Float32": np.float32, "Float64": np.float64, "Bool": np.bool_, BF16_TYPE: mstype.bfloat16.np_type}
TYPE_OF_NP = {np.dtype(t): name for name, t in NP_TYPES.items()}
# Types MindSpore's loader knows that this emulator cannot hold (Int4 is MindSpore's qint4x2).
UNSUPPORTED_TYPES = ("Int4",)
# load_param_into_net converts between two types of one family unless strict_load (MindSpore's sets).
FLOAT_FAMILY = frozenset({"float16", "float32", "float64", "bfloat16"})
INT_FAMILY = frozenset({"int8", "int16", "int32", "int64"})
# Gradient-accumulation buffers are never expected in a checkpoint: not reported as missing.
ACCU_GRADS_PREFIX = "accu_grads"


class CheckpointWarning(UserWarning):
    """What MindSpore logs as a warning while loading: parameters not loaded, dtype conversions."""


class CheckpointFileError(InvalidFileError, ValueError):
    """A checkpoint file that cannot be read (missing, unreadable, truncated, damaged, not a checkpoint,
    a wrong CRC, an entry too large to allocate): an invalid file, and the ValueError MindSpore raises
    ('Failed to read the checkpoint file ...'), so ``except ValueError`` still works."""


def export(net: Any, *inputs: Any, file_name: str, file_format: str, **kwargs: Any) -> None:
    """``mindspore.export``: "MINDIR" is written by ``train.mindir``, "ONNX" (and the refusal of "AIR")
    by ``onnx_export``."""
    if file_format == "MINDIR":
        from .mindir import export_mindir   # protobuf's modules load on the first MINDIR export only

        export_mindir(net, inputs, file_name, kwargs)
        return
    onnx_export.export(net, *inputs, file_name=file_name, file_format=file_format, **kwargs)


def load(file_name: str, **kwargs: Any) -> Any:
    """``mindspore.load(file_name, dec_key=None, dec_mode="AES-GCM", obf_func=None)``: a MindIR file as
    the graph ``nn.GraphCell`` runs (``train.mindir``)."""
    from .mindir import load as load_mindir

    return load_mindir(file_name, **kwargs)


# ------------------------------------------------------------------------------------------ saving

def save_checkpoint(save_obj: Any, ckpt_file_name: str, integrated_save: bool = True, async_save: Any = False,
                    append_dict: dict | None = None, enc_key: bytes | None = None, enc_mode: str = "AES-GCM",
                    choice_func: Callable[[str], bool] | None = None, crc_check: bool = False,
                    format: str = "ckpt", **kwargs: Any) -> None:
    """Save ``save_obj`` (a Cell, a list of Parameters or of ``{"name", "data"}`` dicts, or a dict
    name -> Parameter/Tensor/ndarray/str) to ``ckpt_file_name`` (``.ckpt`` or ``.safetensors`` added
    when missing).

    Order: a Cell's ``parameters_and_names()``, else the list/dict order; ``choice_func(name)`` False
    drops an entry; then ``append_dict`` in insertion order (int -> Int64 scalar, float -> Float32
    scalar, bool -> Bool scalar, str -> string, Tensor/Parameter -> its values). A name given twice
    keeps its first position and its last value, as MindSpore's ordered dict does.
    ``async_save`` (True, "thread", "process") is accepted and the save done synchronously, so the
    file is complete when this returns. ``integrated_save`` only matters for model parallelism,
    which the emulator has not. ``kwargs``: ``remove_redundancy`` (bool) is recorded in safetensors
    metadata, as MindSpore does.
    """
    if format not in FORMATS:
        raise ValueError(f"For 'save_checkpoint', the format must be 'safetensors' or 'ckpt', but got {format!r}.")
    if not isinstance(save_obj, (Cell, list, dict)):
        raise TypeError(f"For 'save_checkpoint', the parameter 'save_obj' must be nn.Cell, list or dict, "
                        f"but got {type(save_obj)}.")
    if not isinstance(ckpt_file_name, str):
        raise TypeError(f"For 'save_checkpoint', 'ckpt_file_name' must be a string, but got {type(ckpt_file_name)}.")
    _check_bool("save_checkpoint", "integrated_save", integrated_save)
    _check_bool("save_checkpoint", "crc_check", crc_check)
    if not isinstance(async_save, (bool, str)):
        raise TypeError(f"For 'save_checkpoint', the parameter 'async_save' must be bool or str, "
                        f"but got {type(async_save)}.")
    if isinstance(async_save, str) and async_save not in ASYNC_MODES:
        raise ValueError(f"For 'save_checkpoint', the argument 'async_save' can only be 'process' or 'thread', "
                         f"but got {async_save!r}.")
    remove_redundancy = kwargs.get("remove_redundancy")
    if remove_redundancy is not None:
        _check_bool("save_checkpoint", "remove_redundancy", remove_redundancy)
    if enc_key is not None:
        raise FeatureNotSupportedError(
            "save_checkpoint: enc_key (encrypted checkpoints) is not supported by the emulator, because "
            "MindSpore's cipher framing is undocumented; save without enc_key")
    path = os.path.realpath(ckpt_file_name)
    if os.path.isdir(path):
        raise IsADirectoryError(f"For 'save_checkpoint', the parameter `ckpt_file_name`: {path} is a directory, "
                                f"it must be a file name.")
    if not path.endswith(format):
        path += f".{format}"
    entries = _save_entries(save_obj, choice_func)
    entries.update(_append_entries(append_dict))
    if format == "ckpt":
        _atomic_write(path, lambda tmp: _write_ckpt(tmp, entries, crc_check))
    else:
        _atomic_write(path, lambda tmp: _write_safetensors(tmp, path, entries, crc_check, remove_redundancy))


def _check_bool(api: str, name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"For '{api}', the argument '{name}' must be bool, but got {type(value).__name__}.")


def _save_entries(save_obj: Any, choice_func: Callable[[str], bool] | None) -> "OrderedDict[str, Any]":
    """name -> value to save (Tensor, ndarray or str), in MindSpore's order, filtered by choice_func."""
    if isinstance(save_obj, Cell):
        pairs: Iterable = ((p.name, p) for _, p in save_obj.parameters_and_names())
    elif isinstance(save_obj, dict):
        pairs = save_obj.items()
        for key, value in pairs:
            if not isinstance(key, str) or not isinstance(value, (Tensor, np.ndarray, str)):
                raise TypeError(f"For save_checkpoint, when save_obj is a dict, the keys must be str and the values "
                                f"Parameter, Tensor, numpy array or str, but got {type(key)} -> {type(value)}.")
    elif save_obj and isinstance(save_obj[0], dict):
        for item in save_obj:
            if not (isinstance(item, dict) and isinstance(item.get("name"), str)
                    and isinstance(item.get("data"), Tensor)):
                raise TypeError(f"For save_checkpoint, save_obj should be a list of dicts with a str 'name' and a "
                                f"Parameter or Tensor 'data', but got {item!r}.")
        pairs = ((item["name"], item["data"]) for item in save_obj)
    else:
        for item in save_obj:
            if not isinstance(item, Parameter):
                raise TypeError(f"For save_checkpoint, when save_obj is a list of Parameters, every item should be "
                                f"a Parameter, but got {type(item)}.")
        pairs = ((p.name, p) for p in save_obj)
    return OrderedDict((name, value) for name, value in pairs if choice_func is None or choice_func(name))


def _append_entries(append_dict: dict | None) -> "OrderedDict[str, Any]":
    """append_dict as values to save: Python scalars become 0-d arrays of MindSpore's types for them."""
    if append_dict is None:
        return OrderedDict()
    if not isinstance(append_dict, dict):
        raise TypeError(f"For 'save_checkpoint', the argument 'append_dict' must be dict, but got {type(append_dict)}.")
    out: OrderedDict[str, Any] = OrderedDict()
    for key, value in append_dict.items():
        if not isinstance(key, str) or not isinstance(value, (int, float, bool, str, Tensor)):
            raise TypeError(f"For 'save_checkpoint', the type of dict 'append_info' must be key: string, value: int, "
                            f"float, bool, str, Parameter or Tensor, but got key: {type(key)}, value: {type(value)}")
        if isinstance(value, bool):                 # before int: bool is an int subclass
            out[key] = np.array(value, np.bool_)
        elif isinstance(value, int):
            out[key] = np.array(value, np.int64)
        elif isinstance(value, float):
            out[key] = np.array(value, np.float32)
        else:
            out[key] = value
    return out


def _array_of(name: str, value: Any) -> tuple[np.ndarray, str]:
    """(C-order array, tensor_type) of one entry; strings become MindSpore's UTF-32 ``U`` array."""
    if isinstance(value, str):
        return np.array(value), STR_TYPE
    if isinstance(value, Parameter):     # an abstract weight (DryRun) is filled for the write, not kept
        value = value.snapshot()
    array = np.asarray(value, order="C")          # not ascontiguousarray: it turns 0-d into 1-d
    type_name = TYPE_OF_NP.get(array.dtype)
    if type_name is None:
        raise TypeError(f"For 'save_checkpoint', entry {name!r} has dtype {array.dtype}, which has no MindSpore "
                        f"checkpoint type; use one of {sorted(NP_TYPES)}")
    return array, type_name


def _write_ckpt(tmp: str, entries: "OrderedDict[str, Any]", crc_check: bool) -> None:
    """One serialised one-Value Checkpoint per slice of each entry, then the CRC trailer if asked.
    Each slice is written from the array's own buffer: no copy of the tensor data."""
    crc = 0
    with open(tmp, "wb") as f:
        for name, value in entries.items():
            array, type_name = _array_of(name, value)
            dims = [0] if type_name == STR_TYPE else list(array.shape)
            raw = _raw(array)
            # an empty tensor still gets its one Value (range() alone would write none and lose the name)
            for start in range(0, max(raw.size, 1), SLICE_BYTES):
                chunk = raw[start:start + SLICE_BYTES]
                head = value_head(name, dims, type_name, chunk.size)
                crc = binascii.crc32(chunk, binascii.crc32(head, crc))
                f.write(head)
                f.write(chunk)
        if crc_check:
            f.write(CRC_MARK + crc.to_bytes(CRC_DIGITS, "big"))


def _raw(array: np.ndarray) -> np.ndarray:
    """The bytes of a C-order array as a flat uint8 view (no copy)."""
    return array.reshape(-1).view(np.uint8)


def _write_safetensors(tmp: str, path: str, entries: "OrderedDict[str, Any]", crc_check: bool,
                       remove_redundancy: bool | None) -> None:
    """A safetensors file as MindSpore writes it: the library's ``save_file`` of the entries in sorted
    key order, metadata format=ms (+crc_num: the running crc32 over each sorted key's UTF-8 name and
    data bytes; +remove_redundancy when given)."""
    from safetensors.numpy import save_file

    arrays, crc = {}, 0
    for name in sorted(entries):
        array, type_name = _array_of(name, entries[name])
        if type_name == STR_TYPE:
            raise TypeError(f"For 'save_checkpoint', entry {name!r} of {path} is a string, which the safetensors "
                            f"format cannot hold; save it with format='ckpt'")
        arrays[name] = array
        if crc_check:
            crc = binascii.crc32(_raw(array), binascii.crc32(name.encode("utf-8"), crc))
    metadata = dict(SAFETENSORS_METADATA)
    if remove_redundancy is not None:
        metadata["remove_redundancy"] = str(remove_redundancy)
    if crc_check:
        metadata["crc_num"] = str(crc)
    save_file(arrays, tmp, metadata=metadata if arrays else None)


def _atomic_write(path: str, write: Callable[[str], None]) -> None:
    """``write`` a temp file of its own beside ``path`` and publish it read-only (as MindSpore leaves a
    checkpoint): ``cache.atomic.publish_atomic``, so concurrent saves to one path never tear it, and a
    crash or an exception leaves ``path`` as it was."""
    from ascendemu.cache.atomic import publish_atomic   # the cache package loads on first save only

    publish_atomic(path, write, stat.S_IRUSR)


# ----------------------------------------------------------------------------------------- loading

def load_checkpoint(ckpt_file_name: str, net: Cell | None = None, strict_load: bool = False,
                    filter_prefix: Any = None, dec_key: bytes | None = None, dec_mode: str = "AES-GCM",
                    specify_prefix: Any = None, choice_func: Callable[[str], bool] | None = None,
                    crc_check: bool = False, remove_redundancy: bool = False,
                    format: str = "ckpt") -> dict[str, Parameter | str]:
    """Read a MindSpore checkpoint: a dict name -> Parameter (named after its key), or -> str for
    string entries, in file order; slices of one tensor are joined.

    ``specify_prefix`` keeps only names starting with one of its prefixes and ``filter_prefix``
    drops names starting with one; ``choice_func`` is consulted only when neither is given
    (MindSpore's rule). A CRC trailer is always stripped and verified only when ``crc_check``.
    With ``net``, the dict is also loaded into it (``load_param_into_net``). A file that cannot be
    read or parsed, a wrong CRC or an entry whose size disagrees with its dims raises ValueError
    naming the file (and the entry), as does a dict left empty.
    """
    specify_prefix = _check_prefix(specify_prefix)
    filter_prefix = _check_prefix(filter_prefix)
    _check_bool("load_checkpoint", "strict_load", strict_load)
    _check_bool("load_checkpoint", "crc_check", crc_check)
    _check_bool("load_checkpoint", "remove_redundancy", remove_redundancy)
    if dec_key is not None:
        raise FeatureNotSupportedError(
            "load_checkpoint: dec_key (encrypted checkpoints) is not supported by the emulator, because "
            "MindSpore's cipher framing is undocumented; decrypt the file with MindSpore and save it without enc_key")
    if not isinstance(ckpt_file_name, str):
        raise TypeError(f"For 'load_checkpoint', the argument 'ckpt_file_name' must be string, "
                        f"but got {type(ckpt_file_name)}.")
    if format not in FORMATS:
        raise ValueError(f"For 'load_checkpoint', the format must be 'ckpt' or 'safetensors', but got {format!r}.")
    if not ckpt_file_name.endswith(format):
        raise ValueError(f"For 'load_checkpoint', the checkpoint file format must same with 'format', but got "
                         f"file_name:'{ckpt_file_name}', format:'{format}'")
    path = os.path.realpath(ckpt_file_name)
    if not os.path.exists(path):
        raise CheckpointFileError(f"For 'load_checkpoint', the checkpoint file: {path} does not exist, please check "
                                  f"whether the 'ckpt_file_name' is correct.")

    def wanted(name: str) -> bool:
        if specify_prefix is None and filter_prefix is None:
            return choice_func is None or bool(choice_func(name))
        keep = specify_prefix is None or name.startswith(specify_prefix)
        return keep and not (filter_prefix is not None and name.startswith(filter_prefix))

    if format == "ckpt":
        parameter_dict = _read_ckpt(path, wanted, crc_check)
    else:
        parameter_dict = _read_safetensors(path, wanted, crc_check)
    if not parameter_dict:
        raise ValueError(f"For 'load_checkpoint', the loaded parameter dict of {path} is empty: the file holds no "
                         f"entries, or 'choice_func', 'filter_prefix' or 'specify_prefix' removed them all.")
    if net is not None:
        load_param_into_net(net, parameter_dict, strict_load, remove_redundancy)
    return parameter_dict


def _check_prefix(prefix: Any) -> tuple[str, ...] | None:
    if prefix is None:
        return None
    if not isinstance(prefix, (str, list, tuple)):
        raise TypeError(f"For 'load_checkpoint', the type of 'specify_prefix' or 'filter_prefix' must be string, "
                        f"list[string] or tuple[string], but got {type(prefix)}.")
    prefix = (prefix,) if isinstance(prefix, str) else tuple(prefix)
    if not prefix:
        raise ValueError("For 'load_checkpoint', the argument 'specify_prefix' or 'filter_prefix' can't be empty "
                         "when 'specify_prefix' or 'filter_prefix' is list or tuple.")
    for index, pre in enumerate(prefix):
        if not isinstance(pre, str):
            raise TypeError(f"For 'load_checkpoint', when 'specify_prefix' or 'filter_prefix' is list or tuple, the "
                            f"element in it must be string, but got {type(pre)} at index {index}.")
        if pre == "":
            raise ValueError("For 'load_checkpoint', the value of 'specify_prefix' or 'filter_prefix' "
                             "can't include ''.")
    return prefix


def _read_ckpt(path: str, wanted: Callable[[str], bool], crc_check: bool) -> dict[str, Parameter | str]:
    """Stream the file: one forward pass over the records' small fields, each wanted entry's content
    read from the file straight into its array; memory is what the entries loaded take."""
    try:
        with _open_regular(path) as f:
            body = _body_size(f, path, crc_check)
            out: dict[str, Parameter | str] = {}
            group: list[Value] = []
            last = None
            try:
                for _, value in iter_values(f, body):
                    if group and value.tag != group[0].tag:
                        _add_entry(out, path, f.fileno(), group, wanted)
                        group = []
                    group.append(value)
                    last = value.tag
            except WireError as e:
                raise CheckpointFileError(
                    f"Failed to read the checkpoint file {path}: the entry {repr(e.tag) + ' ' if e.tag else ''}at "
                    f"byte {e.offset} ({'after ' + repr(last) if last is not None else 'the first entry'}) "
                    f"{e.problem}.") from None
            if group:
                _add_entry(out, path, f.fileno(), group, wanted)
            return out
    except OSError as e:
        raise CheckpointFileError(f"Failed to read the checkpoint file {path}: {e.strerror or e}.") from e


def _open_regular(path: str) -> BinaryIO:
    """``path`` opened for reading if it is a regular file; a FIFO or a device is refused (opening a
    FIFO blocks until a writer comes, reading /dev/zero never ends). Raises OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)          # a FIFO without writer: no wait
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CheckpointFileError(f"Failed to read the checkpoint file {path}: it is not a regular file (a "
                                      f"FIFO, a device or a socket); give the path of a checkpoint file.")
        os.set_blocking(fd, True)
        return open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _body_size(f: BinaryIO, path: str, crc_check: bool) -> int:
    """The size of the records: the file without its CRC trailer, which is checked if ``crc_check``
    (in chunks of CRC_CHUNK: bounded memory)."""
    size = os.fstat(f.fileno()).st_size
    if size >= CRC_TRAILER:
        f.seek(size - CRC_TRAILER)
        trailer = f.read(CRC_TRAILER)
        if trailer[:len(CRC_MARK)] == CRC_MARK:
            body = size - CRC_TRAILER
            stored = int.from_bytes(trailer[len(CRC_MARK):], "big")
            if crc_check:
                crc = 0
                f.seek(0)
                for start in range(0, body, CRC_CHUNK):
                    crc = binascii.crc32(f.read(min(CRC_CHUNK, body - start)), crc)
                if crc != stored:
                    raise CheckpointFileError(f"For 'load_checkpoint', the crc check of {path} failed (stored "
                                              f"{stored}, computed {crc}): the file is damaged.")
            return body
    if crc_check:
        warnings.warn(CheckpointWarning(f"For 'load_checkpoint', {path} holds no crc code to check."), stacklevel=4)
    return size


def _read_content(path: str, fd: int, group: list[Value]) -> np.ndarray:
    """The tensor_content of an entry's slices, joined, read from the file into one fresh (aligned,
    writable) array that the Parameter then owns."""
    total = sum(v.stop - v.start for v in group)
    try:
        content = np.empty(total, np.uint8)
    except MemoryError:
        raise CheckpointFileError(f"Failed to read the checkpoint file {path}: entry {group[0].tag!r} holds {total} "
                                  f"bytes, more than this process can allocate; load it on a machine with more "
                                  f"memory, or leave it out with 'choice_func' or 'filter_prefix'.") from None
    pos = 0
    for v in group:
        offset = v.start
        while offset < v.stop:
            got = os.preadv(fd, [content[pos:pos + v.stop - offset]], offset)
            if got == 0:
                raise CheckpointFileError(f"Failed to read the checkpoint file {path}: entry {group[0].tag!r} ends "
                                          f"at byte {offset}, before its content does (byte {v.stop}): the file "
                                          f"was truncated while it was read.")
            offset += got
            pos += got
    return content


def _add_entry(out: dict, path: str, fd: int, group: list[Value], wanted: Callable[[str], bool]) -> None:
    """Decode one entry (its consecutive same-tag Values) into ``out`` if ``wanted``."""
    first = group[0]
    name, type_name = first.tag, first.tensor_type
    if not wanted(name):
        return
    if first.kind != "tensor":
        raise FeatureNotSupportedError(f"checkpoint file {path}: entry {name!r} is a map tensor (MapParameter), "
                                       f"which the emulator does not support")
    content = _read_content(path, fd, group)
    if type_name == STR_TYPE:
        try:
            out[name] = content.tobytes().decode("utf-32-le").rstrip("\x00")
        except UnicodeDecodeError as e:
            raise CheckpointFileError(f"Failed to read the checkpoint file {path}: string entry {name!r} is not "
                                      f"UTF-32 ({e}).") from None
        return
    if type_name in UNSUPPORTED_TYPES:
        raise FeatureNotSupportedError(f"checkpoint file {path}: entry {name!r} is {type_name}, which the emulator "
                                       f"does not support")
    np_type = NP_TYPES.get(type_name)
    if np_type is None:
        raise CheckpointFileError(f"Failed to read the checkpoint file {path}: entry {name!r} has an unknown "
                                  f"tensor_type {type_name!r} (known: {sorted(NP_TYPES) + [STR_TYPE]}).")
    itemsize = np.dtype(np_type).itemsize
    # MindSpore also reads dims [0] as a scalar; a [0] entry with no content is an empty vector
    shape = () if first.dims == [0] and content.size == itemsize else tuple(first.dims)
    expected = math.prod(shape) * itemsize      # Python ints: no overflow on damaged dims
    if min(shape, default=0) < 0 or expected != content.size:
        raise CheckpointFileError(f"Failed to read the checkpoint file {path}: entry {name!r} has dims {first.dims} "
                                  f"of {type_name} ({expected} bytes) but {content.size} bytes of content.")
    array = content.view(np_type).reshape(shape)
    out[name] = _parameter(path, name, type_name, array)


def _parameter(path: str, name: str, type_name: str, array: np.ndarray) -> Parameter:
    try:
        return Parameter(array, name=name)
    except InvalidParamError:
        raise FeatureNotSupportedError(f"checkpoint file {path}: entry {name!r} is {type_name}, which the emulated "
                                       f"device has no type for (it holds MindSpore's real dtypes)") from None


def _read_safetensors(path: str, wanted: Callable[[str], bool], crc_check: bool) -> dict[str, Parameter | str]:
    from safetensors import SafetensorError, safe_open

    out: dict[str, Parameter | str] = {}
    crc = 0
    try:
        _open_regular(path).close()
        with safe_open(path, framework="np") as f:
            metadata = f.metadata() or {}
            for name in sorted(f.keys()):
                keep = wanted(name)
                if not keep and not crc_check:
                    continue
                array = f.get_tensor(name)
                if crc_check:
                    crc = binascii.crc32(_raw(array), binascii.crc32(name.encode("utf-8"), crc))
                if not keep:
                    continue
                if name in metadata:              # MindSpore marks Int4 tensors in the metadata
                    raise FeatureNotSupportedError(f"checkpoint file {path}: entry {name!r} is {metadata[name]}, "
                                                   f"which the emulator does not support")
                out[name] = _parameter(path, name, str(array.dtype), array)
    except SafetensorError as e:
        raise CheckpointFileError(f"Failed to read the checkpoint file {path}: not a valid safetensors file "
                                  f"({e}).") from None
    except OSError as e:
        raise CheckpointFileError(f"Failed to read the checkpoint file {path}: {e.strerror or e}.") from e
    except MemoryError:
        raise CheckpointFileError(f"Failed to read the checkpoint file {path}: an entry is larger than this process "
                                  f"can allocate; load it on a machine with more memory, or leave entries out with "
                                  f"'choice_func' or 'filter_prefix'.") from None
    if crc_check:
        if "crc_num" not in metadata:
            warnings.warn(CheckpointWarning(f"For 'load_checkpoint', {path} holds no crc code to check."),
                          stacklevel=3)
        elif metadata["crc_num"] != str(crc):
            raise CheckpointFileError(f"For 'load_checkpoint', the crc check of {path} failed (stored "
                                      f"{metadata['crc_num']!r}, computed {crc}): the file is damaged.")
    return out


# ------------------------------------------------------------------------------- into the network

def load_param_into_net(net: Cell, parameter_dict: dict, strict_load: bool = False,
                        remove_redundancy: bool = False) -> tuple[list[str], list[str]]:
    """Copy ``parameter_dict`` into ``net``'s Parameters (``set_data``) by name.

    Returns ``(param_not_load, ckpt_not_load)``: net parameters found in no key (names starting
    with ``accu_grads`` are never reported) and keys no net parameter took by exact name. Unless
    ``strict_load``, missing parameters are then looked up under a prefix (a key ending with a
    missing name gives it), and a dtype is converted within the float or the int family with a
    warning; ``ckpt_not_load`` is computed before that prefix pass, as MindSpore does. A shape
    mismatch raises RuntimeError, except extra trailing 1-dims in the checkpoint, which are dropped;
    a dtype mismatch that may not be converted raises RuntimeError.
    """
    if not isinstance(net, Cell):
        raise TypeError(f"For 'load_param_into_net', the argument 'net' should be a Cell, but got {type(net)}.")
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"For 'load_param_into_net', the argument 'parameter_dict' should be a dict, "
                        f"but got {type(parameter_dict)}.")
    for key, value in parameter_dict.items():
        if not isinstance(key, str) or not isinstance(value, (Parameter, str)):
            raise TypeError(f"For 'parameter_dict', the element in the argument 'parameter_dict' should be a 'str' "
                            f"and 'Parameter', but got {type(key)} and {type(value)}.")
    _check_bool("load_param_into_net", "strict_load", strict_load)
    _check_bool("load_param_into_net", "remove_redundancy", remove_redundancy)
    if remove_redundancy:
        raise TypeError("The deduplication feature for loading checkpoint can only be used in parallel scenarios, "
                        "but got stand_alone.")
    param_not_load: list[str] = []
    ckpt_not_load = list(parameter_dict)
    for _, param in net.parameters_and_names():
        if param.name in parameter_dict:
            new = parameter_dict[param.name]
            if isinstance(new, str):              # a string entry fills no parameter and is not reported
                continue
            _update_param(param, new, strict_load)
            ckpt_not_load.remove(param.name)
        elif not param.name.startswith(ACCU_GRADS_PREFIX):
            param_not_load.append(param.name)
    if param_not_load and not strict_load:
        _load_under_prefix(net, parameter_dict, param_not_load)
    if param_not_load:
        warnings.warn(CheckpointWarning(
            f"For 'load_param_into_net', {len(param_not_load)} parameters in the 'net' are not loaded, because they "
            f"are not in the 'parameter_dict', please check whether the network structure is consistent when "
            f"training and loading checkpoint. {param_not_load} are not loaded."), stacklevel=2)
    return param_not_load, ckpt_not_load


def _load_under_prefix(net: Cell, parameter_dict: dict, param_not_load: list[str]) -> None:
    """MindSpore's fallback for keys saved under an outer cell: the first missing name that some key
    ends with gives a prefix (the key minus the name); every missing parameter found as prefix +
    name is loaded; repeat while a prefix turns up. Each round loads at least the parameter that
    gave the prefix, so it ends."""
    while param_not_load:
        prefix = next((key[:-len(name)] for name in param_not_load for key, value in parameter_dict.items()
                       if key.endswith(name) and isinstance(value, Parameter)), None)
        if prefix is None:
            return
        warnings.warn(CheckpointWarning(f"For 'load_param_into_net', remove parameter prefix name: {prefix}, "
                                        f"continue to load."), stacklevel=3)
        for _, param in net.parameters_and_names():
            new = parameter_dict.get(prefix + param.name)
            if param.name in param_not_load and isinstance(new, Parameter):
                _update_param(param, new, strict_load=False)
                param_not_load.remove(param.name)


def _update_param(param: Parameter, new: Parameter, strict_load: bool) -> None:
    if param.shape != new.shape:
        rank = len(param.shape)
        if new.shape[:rank] == param.shape and len(new.shape) > rank and all(d == 1 for d in new.shape[rank:]):
            # MindSpore's _special_process_par: (12, 2048, 1, 1) -> (12, 2048), converted to the net's dtype
            param.set_data(new.asnumpy().reshape(param.shape))
            return
        raise RuntimeError(f"For 'load_param_into_net', {param.name} in the argument 'net' should have the same shape "
                           f"as {param.name} in the argument 'parameter_dict'. But got its shape {param.shape} in the "
                           f"argument 'net' and shape {new.shape} in the argument 'parameter_dict'.")
    if param.dtype != new.dtype:
        pair = {param.dtype.name, new.dtype.name}
        if strict_load or not (pair <= FLOAT_FAMILY or pair <= INT_FAMILY):
            raise RuntimeError(f"For 'load_param_into_net', {param.name} in the argument 'net' should have the same "
                               f"type as {param.name} in the argument 'parameter_dict'. but got its type {param.dtype} "
                               f"in the argument 'net' and type {new.dtype} in the argument 'parameter_dict'.")
        warnings.warn(CheckpointWarning(
            f"The type of {new.name}:{new.dtype} in 'parameter_dict' is different from the type of it in "
            f"'net':{param.dtype}, then the type convert from {new.dtype} to {param.dtype} in the network."),
            stacklevel=4)
    param.set_data(new)
