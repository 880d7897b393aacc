"""``mindspore.onnx``: ``mindspore.onnx.export``, where MindSpore 2.10 moved ONNX export (it warns that
``mindspore.export(file_format='ONNX')`` will be deleted). The model is the one ``mindspore.export``
writes (``frontend.onnx_export``: captured graph, eval mode, atomic write); this module adds MindSpore's
keywords of the new call.
"""
from __future__ import annotations

from typing import Any

from ascendemu.errors import FeatureNotSupportedError

from .. import onnx_export
from ..nn import Cell
from ..onnx_export import ExportTypeError, write_onnx

__all__ = ["export", "onnx_export"]


def export(net: Any, *inputs: Any, file_name: str, input_names: list | None = None, output_names: list | None = None,
           export_params: bool = True, keep_initializers_as_inputs: bool = False,
           dynamic_axes: dict | None = None) -> None:
    """Write ``net`` applied to ``inputs`` as the ONNX model ``file_name`` (".onnx" appended when missing).

    ``input_names`` names the graph's Tensor inputs in order. The model always holds its weights as
    initializers and has the static shapes of ``inputs``: ``export_params=False``,
    ``keep_initializers_as_inputs=True``, ``output_names`` and ``dynamic_axes`` are refused, naming the
    argument, rather than silently ignored."""
    if not isinstance(net, Cell):
        raise ExportTypeError(f"For 'mindspore.onnx.export', 'net' must be a Cell, but got {type(net).__name__}.")
    for name, value in (("input_names", input_names), ("output_names", output_names)):
        if value is not None and not (isinstance(value, list) and all(isinstance(n, str) for n in value)):
            raise ExportTypeError(f"For 'mindspore.onnx.export', '{name}' must be a list of str, but got {value!r}.")
    if dynamic_axes is not None and not isinstance(dynamic_axes, dict):
        raise ExportTypeError(f"For 'mindspore.onnx.export', 'dynamic_axes' must be a dict, but got "
                              f"{type(dynamic_axes).__name__}.")
    refused = [what for what, on in (("output_names", bool(output_names)), ("dynamic_axes", bool(dynamic_axes)),
                                     ("export_params=False", export_params is not True),
                                     ("keep_initializers_as_inputs=True", keep_initializers_as_inputs is not False))
               if on]
    if refused:
        raise FeatureNotSupportedError(
            f"mindspore.onnx.export: {', '.join(refused)} not supported by the emulator's exporter; it writes the "
            f"weights as initializers, static input shapes and numbered outputs. Leave the argument out")
    write_onnx(net, inputs, file_name, input_names=input_names or ())
