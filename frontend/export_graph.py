"""What every export format (ONNX, MINDIR) shares: the checked arguments of ``mindspore.export``
(target file, inputs, keywords), the graph a network is exported from (captured in eval mode, each
cell's own mode restored) and the names and live part of that graph.

One home, so the ONNX writer (``onnx_export``) and the MindIR writer (``train.mindir``) check and
capture exactly alike: a network exports the same graph whatever the format.
"""
from __future__ import annotations

import inspect
import os
from typing import Any

from ascendemu.errors import FeatureNotSupportedError, InvalidTypeError, InvalidValueError
from ascendemu.graph.ir import Graph

from .common.api import capture
from .common.tensor import Tensor
from .dataset import Dataset
from .nn import Cell

__all__ = ["KWARGS", "ExportTypeError", "ExportValueError", "check_target", "check_inputs", "capture_for_inference",
           "input_names_of", "live"]

# MindSpore's export keywords. For ONNX only enc_key/enc_mode change the file; quant_mode, mean and
# std_dev concern quantisation-aware networks, dataset/custom_func/incremental MINDIR files.
KWARGS = ("quant_mode", "mean", "std_dev", "enc_key", "enc_mode", "dataset", "obf_config", "custom_func",
          "incremental")


class ExportTypeError(InvalidTypeError):
    """An export argument of the wrong type (a TypeError, as MindSpore raises)."""


class ExportValueError(InvalidValueError):
    """An export argument with a bad value (a ValueError, as MindSpore raises)."""


def check_target(net: Any, inputs: tuple, file_name: str, suffix: str) -> str:
    """The checked arguments of an export (ONNX or MINDIR): the real path of ``file_name`` with
    ``suffix`` appended when missing, in an existing directory."""
    if not isinstance(file_name, str):
        raise ExportTypeError(f"For 'export', 'file_name' must be a str, but got {type(file_name).__name__}.")
    if not file_name:
        raise ExportValueError("For 'export', 'file_name' must be a non-empty file name, but got ''.")
    if not callable(net):
        raise ExportTypeError(f"For 'export', 'net' must be a Cell or a function, but got {type(net).__name__}.")
    check_inputs(inputs)
    path = os.path.realpath(file_name)
    if not path.endswith(suffix):
        path += suffix
    if os.path.isdir(path):
        raise ExportValueError(f"For 'export', 'file_name' {path} is a directory; give a file name.")
    if not os.path.isdir(os.path.dirname(path)):
        raise ExportValueError(f"For 'export', the directory of 'file_name' {path} does not exist; create it first.")
    return path


def check_inputs(inputs: tuple) -> None:
    """The sample inputs of an export: at least one; Tensors, numbers, bools, tuples or lists."""
    if not inputs:
        raise ExportValueError("For 'export', 'inputs' can not be empty: pass the network's inputs (Tensors of the "
                               "shapes and dtypes to export) after 'net'.")
    for i, a in enumerate(inputs):
        if isinstance(a, Dataset):
            raise FeatureNotSupportedError(
                f"export: input {i} is a Dataset; MindSpore serialises a dataset's preprocessing into MINDIR only. "
                f"Pass Tensors of the network's input shapes")
        if not isinstance(a, (Tensor, bool, int, float, tuple, list)):
            raise ExportTypeError(f"For 'export', each input must be a Tensor, Number, bool, tuple or list, but "
                                  f"input {i} is a {type(a).__name__}.")


def capture_for_inference(net: Any, inputs: tuple) -> Graph:
    """The graph of ``net(*inputs)`` captured with every cell in eval mode, each cell's mode restored."""
    if not isinstance(net, Cell):
        return capture(net, *inputs, if_convert=True)[0]
    modes = [(cell, cell.training) for _, cell in net.cells_and_names()]
    net.set_train(False)
    try:
        return capture(net, *inputs, if_convert=True)[0]
    finally:
        for cell, mode in modes:
            object.__setattr__(cell, "training", mode)     # set_train's own store, for this cell only


def input_names_of(net: Any, inputs: tuple) -> list[str]:
    """Names of the Tensor inputs: ``construct``'s (or the function's) argument names, as MindSpore's
    exporter names graph inputs; ``<varargs><i>`` for a ``*args`` argument."""
    fn = net.construct if isinstance(net, Cell) else net
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), "input")
    return [positional[i] if i < len(positional) else f"{varargs}{i}"
            for i, a in enumerate(inputs) if isinstance(a, Tensor)]


def live(graph: Graph) -> tuple[set[int], set[int]]:
    """(values, node ids) the graph's outputs depend on."""
    values, nodes = set(graph.outputs), set()
    for n in reversed(graph.nodes):
        if any(v in values for v in n.outputs):
            nodes.add(n.id)
            values.update(n.inputs)
    return values, nodes
