"""``mindspore.ops.operations.debug_ops``: ``Print``, ``Assert``, ``TensorDump`` and the gradient hooks
(``HookBackward``, ``InsertGradientOf``, ``Morph``), where MindSpore defines them."""
from __future__ import annotations

from typing import Any

import numpy as np

from ascendemu.errors import InvalidParamError
from ascendemu.graph.capture import current_tracer

from ...capture import tracer_value
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..primitive import _Op


class Print(_Op):
    """``Print()(*input_x)``: strings as they are, tensors as MindSpore prints them
    (``Tensor(shape=[2], dtype=Float32, value= [...])``), one per line. In PyNative they print at once,
    any other object as Python's ``str`` (``3``, ``{'a': 1}``: MindSpore 2.10's); in a captured graph
    the tensors become extra graph outputs and print on the host after the graph has run (a gradient's
    replayed forward does not print twice), and Python numbers and tuples print as the tensors
    MindSpore converts them to."""

    def __call__(self, *input_x: Any) -> None:
        tracer = current_tracer()
        if tracer is None:      # PyNative: a tensor as its repr, anything else as Python's str (MindSpore's)
            print("\n".join(repr(item) if isinstance(item, Tensor) else str(item) for item in input_x), flush=True)
            return
        items = []
        for item in input_x:
            if not isinstance(item, (str, Tensor, bool, int, float, tuple, list)):
                raise InvalidParamError(f"Print: cannot print a {type(item).__name__}; give tensors, strings, "
                                        f"numbers, tuples or lists")
            items.append(item if isinstance(item, (str, Tensor)) else repr(_print_tensor(item)))
        tracer.print_(tuple(item if isinstance(item, str) else tracer_value(tracer, item) for item in items))


def _print_tensor(value: Any) -> Tensor:
    """A Python number, tuple or list as Print shows it: ints as Int32, floats as Float32 (what MindSpore
    2.10 printed; a Tensor made from them elsewhere is Int64 / Float32)."""
    data = np.asarray(value)
    return Tensor(data.astype(PRINTED_PYTHON_DTYPES.get(data.dtype.kind, data.dtype)))


# numpy kind of a Python value -> the dtype Print shows it as
PRINTED_PYTHON_DTYPES = {"i": np.int32, "u": np.int32, "f": np.float32}


# ---- internals round 2 ----
import inspect  # noqa: E402
import itertools  # noqa: E402
import os  # noqa: E402
import threading  # noqa: E402
from typing import Callable, Sequence  # noqa: E402

from ascendemu.graph.autodiff import GradientHook, add_gradient_hook  # noqa: E402

from ...context import GRAPH_MODE, get_context  # noqa: E402
from ..primitive import _cast, apply_op  # noqa: E402

# TensorDump's modes: dump an op's output ("out") or its input ("in"); one file either way here
TENSOR_DUMP_MODES = ("out", "in")
# the dtype names TensorDump writes in file names, and the numpy dtypes .npy files hold them as
# (numpy has no bfloat16: MindSpore stores it as float32 and keeps "bfloat16" in the name)
DUMP_STORED_AS = {"bfloat16": np.float32}


def _identities(tensors: Sequence[Tensor]) -> list[Tensor]:
    """One no-task identity per tensor, captured consecutively: the values a gradient hook watches."""
    return [apply_op("Reshape", [t], {"shape": t.shape})[0] for t in tensors]


def _hook_values(tracer: Any, fn: Callable[[list[Tensor]], Sequence[Any]], outputs: Sequence[Tensor],
                 targets: Sequence[Tensor], replace: bool, owner: str) -> None:
    """Register ``fn`` (gradients of ``outputs`` as Tensors -> gradients of ``targets``) with autodiff."""
    target_descs = [t.desc for t in targets]

    def run(douts: list[int]) -> list[int | None]:
        got = fn([Tensor._symbolic(tracer, g) for g in douts])
        out: list[int | None] = []
        for g, desc in zip(got, target_descs):
            if g is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f"For '{owner}', the hook function must return Tensors (or None), got "
                                f"{type(g).__name__}")
            if g.shape != desc.shape:
                raise ValueError(f"For '{owner}', the hook function returned a gradient of shape {g.shape} "
                                 f"for an input of shape {desc.shape}")
            if g.dtype.name != desc.dtype:
                g = _cast(g, desc.dtype)
            out.append(tracer_value(tracer, g))
        return out + [None] * (len(target_descs) - len(got))
    add_gradient_hook(tracer, GradientHook(tuple(tracer_value(tracer, t) for t in outputs),
                                           tuple(tracer_value(tracer, t) for t in targets), run, replace))


class HookBackward(_Op):
    """``HookBackward(hook_fn)(*inputs)`` returns its inputs (one Tensor, or a tuple of several) and, when
    they are differentiated, calls ``hook_fn`` with the tuple of their gradients: a Tensor (one input),
    a tuple of Tensors, or None (keep them) replaces them. The hook runs while the backward graph is
    built (``ms.grad`` captures even in PyNative), on Tensors of that graph; ops in it become part of
    the backward, a ``print`` shows them once per capture."""

    def __init__(self, hook_fn: Callable, cell_id: str = "") -> None:
        super().__init__()
        if not callable(hook_fn):
            raise TypeError(f"Expected a callable hook function, but got {type(hook_fn).__name__}.")
        if not isinstance(cell_id, str):
            raise TypeError(f"For 'HookBackward', the type of 'cell_id' must be str, but got {type(cell_id).__name__}")
        self.hook_fn, self.cell_id = hook_fn, cell_id
        self.add_prim_attr("cell_id", cell_id)

    def __call__(self, *args: Any) -> Any:
        if not args:
            raise ValueError("For 'HookBackward', the inputs must not be empty.")
        for k, a in enumerate(args):
            if not isinstance(a, Tensor):
                raise TypeError(f"For 'HookBackward', input {k} must be a Tensor, but got {type(a).__name__}")
        tracer = current_tracer()
        if tracer is None:
            return args[0] if len(args) == 1 else args
        outs = _identities(args)

        def hook(douts: list[Tensor]) -> Sequence[Any]:
            got = self.hook_fn(tuple(douts))
            if got is None:
                return [None] * len(douts)
            if isinstance(got, Tensor):
                if len(douts) != 1:
                    raise TypeError(f"For 'HookBackward', the hook of {len(douts)} inputs must return a tuple of "
                                    f"{len(douts)} Tensors, but got a Tensor")
                return [got]
            if isinstance(got, tuple) and len(got) == len(douts):
                return list(got)
            raise TypeError(f"The output type of function: {getattr(self.hook_fn, '__name__', 'hook')} should be "
                            f"a tensor but got {type(got).__name__}.")
        _hook_values(tracer, hook, outs, outs, True, "HookBackward")
        return outs[0] if len(outs) == 1 else tuple(outs)


class InsertGradientOf(_Op):
    """``InsertGradientOf(f)(x)`` returns ``x``; its gradient becomes ``f(gradient)`` (e.g. clipped).
    ``f`` runs while the backward graph is built, on a Tensor of that graph."""

    def __init__(self, f: Callable) -> None:
        super().__init__()
        self.f = f
        self.add_prim_attr("f", f)

    def __call__(self, *args: Any) -> Any:
        if len(args) != 1 or not isinstance(args[0], Tensor):
            raise TypeError(f"For 'InsertGradientOf', the input must be one Tensor, but got "
                            f"{[type(a).__name__ for a in args]}")
        if not callable(self.f):
            raise TypeError(f"For 'InsertGradientOf', 'f' must be callable, but got {type(self.f).__name__}")
        tracer = current_tracer()
        if tracer is None:
            return args[0]
        (out,) = _identities(args)
        _hook_values(tracer, lambda douts: [self.f(douts[0])], [out], [out], True, "InsertGradientOf")
        return out


class Morph(_Op):
    """``Morph(fn, infer_shape, infer_dtype, bprop_fn=None)(*args)`` is ``fn(*args)`` in GRAPH_MODE
    (PyNative: RuntimeError, as MindSpore). With ``bprop_fn`` the gradient of the inputs is
    ``bprop_fn(*args, out, dout)`` (a tuple, one per input) instead of ``fn``'s own; shapes and dtypes
    come from ``fn``'s ops, so ``infer_shape``/``infer_dtype`` are kept but not needed."""

    def __init__(self, fn: Callable, infer_shape: Callable, infer_dtype: Callable, bprop_fn: Callable | None = None):
        super().__init__()
        if bprop_fn is not None:
            for param in inspect.signature(fn).parameters.values():
                if not (param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and param.default is param.empty):
                    raise ValueError(f"When use `bprop` in Morph, Morph `fn` only support positional or keyword "
                                     f"parameters with default value is empty, but got param '{param.name}' of kind "
                                     f"'{param.kind.name}' with default value '{param.default}'.")
        self.fn, self.infer_shape, self.infer_dtype, self.bprop_fn = fn, infer_shape, infer_dtype, bprop_fn

    def __call__(self, *args: Any) -> Any:
        tracer = current_tracer()
        if tracer is None or get_context("mode") != GRAPH_MODE:
            raise RuntimeError("Morph is only supported in GRAPH_MODE.")
        if self.bprop_fn is None:
            return self.fn(*args)
        tensors = [a for a in args if isinstance(a, Tensor)]
        blocked = [apply_op("StopGradient", [a])[0] if isinstance(a, Tensor) else a for a in args]
        result = self.fn(*blocked)
        single = isinstance(result, Tensor)
        outs = _identities([result] if single else list(result))

        def bprop(douts: list[Tensor]) -> Sequence[Any]:
            out = outs[0] if single else tuple(outs)
            grads = self.bprop_fn(*args, out, douts[0] if single else tuple(douts))
            grads = list(grads) if isinstance(grads, (tuple, list)) else [grads]
            return [g for a, g in zip(args, grads) if isinstance(a, Tensor)]
        _hook_values(tracer, bprop, outs, tensors, False, "Morph")
        return outs[0] if single else tuple(outs)


class Assert(_Op):
    """``Assert(summarize=3)(condition, input_data)``: when the bool ``condition`` (a Python bool or a
    bool Tensor of one element) is False, prints "For 'Assert' condition is false." and the first
    ``summarize`` values of each input tensor, then raises RuntimeError. It returns an int32 tensor of
    shape (1,) (MindSpore's output is uninitialised memory; here it is 1). In a captured graph the
    condition must be known while capturing (a constant)."""

    def __init__(self, summarize: int = 3) -> None:
        super().__init__()
        if isinstance(summarize, bool) or not isinstance(summarize, int):
            raise TypeError(f"For 'Assert', the type of 'summarize' should be 'int', but got type "
                            f"'{type(summarize).__name__}'.")
        self.summarize = summarize
        self.add_prim_attr("summarize", summarize)

    def __call__(self, condition: Any, input_data: Any) -> Tensor:
        if isinstance(condition, Tensor):
            if condition.dtype.name != "bool":
                raise TypeError(f"For 'Assert', the type of 'condition' must be in [mindspore.bool], but got "
                                f"{condition.dtype}.")
            if condition.ndim > 1 or (condition.ndim == 1 and condition.shape[0] != 1):
                raise ValueError(f"For 'Assert', the 'condition[0]' must be int and must = 1, but got "
                                 f"'{condition.shape[0] if condition.ndim else condition.ndim}' with type 'int'.")
            if condition.is_symbolic:
                raise InvalidParamError("Assert: the condition is computed inside the graph; here a GRAPH_MODE "
                                        "Assert needs a condition known while capturing (check it in PyNative)")
            holds = bool(condition.asnumpy().reshape(-1)[0])
        elif isinstance(condition, bool):
            holds = condition
        else:
            raise TypeError(f"For 'Assert', the type of 'condition' must be in [mindspore.bool], but got "
                            f"{type(condition).__name__}.")
        if not isinstance(input_data, (list, tuple)) or not all(isinstance(t, Tensor) for t in input_data):
            raise TypeError("For 'Assert', 'input_data' must be a list or tuple of Tensors")
        if not holds:
            lines = ["For 'Assert' condition is false."]
            for t in input_data:
                values = t.asnumpy().reshape(-1)[:self.summarize] if not t.is_symbolic else "<graph value>"
                lines.append(f"input data: {values}")
            print("\n".join(lines), flush=True)
            raise RuntimeError("assert failed")
        return Tensor(np.ones(1, np.int32))


class TensorDump(_Op):
    """``TensorDump(input_output='out')(file, input_x)`` saves ``input_x`` as a .npy file named as
    MindSpore names it: ``<file>_<dtype>_<n>.npy`` (a trailing ``.npy`` of ``file`` dropped, its
    directories made; ``n`` counts this process's dumps from 0; bfloat16 is stored as float32). In a
    captured graph the file is written after each run of the graph, as its ``ops.Print`` output is."""

    def __init__(self, input_output: str = "out") -> None:
        super().__init__()
        if input_output not in TENSOR_DUMP_MODES:
            raise ValueError(f"The 'input_output' argument should be one of {list(TENSOR_DUMP_MODES)}, but got: "
                             f"{input_output}")
        self.input_output = input_output
        self.add_prim_attr("input_output", input_output)

    def __call__(self, file: Any, input_x: Any) -> None:
        if not isinstance(file, str):
            raise TypeError(f"For 'TensorDump', the type of 'file' should be 'str', but got type "
                            f"'{type(file).__name__}'.")
        if not file:
            raise ValueError("For 'TensorDump', the input argument[file] cannot be an empty string.")
        if not isinstance(input_x, Tensor):
            raise TypeError(f"For 'TensorDump', the type of 'input_x' should be 'Tensor', but got type "
                            f"'{type(input_x).__name__}'.")
        tracer = current_tracer()
        if tracer is None:
            _dump_tensor(file, input_x)
            return
        # in a captured graph the value becomes an extra output, written once the graph has run
        tracer.print_(((lambda value: _dump_tensor(file, value), tracer_value(tracer, input_x)),))


_DUMP_IDS = itertools.count()       # MindSpore numbers a process's dumps from 0, in call order
_DUMP_LOCK = threading.Lock()


def _dump_tensor(file: str, tensor: Tensor) -> str:
    """Write ``tensor`` to MindSpore's file name for ``file`` (see TensorDump); returns the path."""
    base = file[:-len(".npy")] if file.endswith(".npy") else file
    dtype = tensor.dtype.name
    with _DUMP_LOCK:
        path = f"{base}_{dtype}_{next(_DUMP_IDS)}.npy"
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    data = tensor.asnumpy()
    np.save(path, data.astype(DUMP_STORED_AS.get(dtype, data.dtype), copy=False))
    return path


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.debug_ops", name, __all__)








# ---- collectives ----
# The summary primitives hand (op, tag, value) to SUMMARY_TENSOR_CACHE, as MindSpore's do; the active
# SummaryRecord (mindspore.train.summary) takes them at record(step). PyNative appends at once without
# checks (MindSpore's __call__); in a captured graph the tag and value are checked as MindSpore's graph
# checks them and the value becomes an extra graph output, appended once the graph has run.
SUMMARY_TENSOR_CACHE: list[list[Any]] = []
_SUMMARY_LOCK = threading.Lock()


def _cache_summary_data(op_name: str, define_name: Any, tensor: Any) -> None:
    with _SUMMARY_LOCK:
        SUMMARY_TENSOR_CACHE.append([op_name, define_name, tensor])


def take_summary_data() -> list[list[Any]]:
    """The (op, tag, value) entries the summary primitives cached since the last call, oldest first."""
    with _SUMMARY_LOCK:
        taken = list(SUMMARY_TENSOR_CACHE)
        SUMMARY_TENSOR_CACHE.clear()
    return taken


class _Summary(_Op):
    """``<Kind>Summary()(name, value)``: caches ``value`` under the tag ``name`` for the summary file."""

    channel = ""

    def __init__(self) -> None:
        super().__init__()
        self.add_prim_attr("channel_name", self.channel)

    def _check_value(self, value: Tensor) -> None:
        """The per-kind check of the value, made when a graph is captured (MindSpore's infer)."""

    def __call__(self, *args: Any) -> None:
        if len(args) != 2:
            raise TypeError(f"For '{self.name}', the number of inputs must be 2 (name, value), but got {len(args)}.")
        name, value = args
        tracer = current_tracer()
        if tracer is None:
            _cache_summary_data(self.name, name, value)
            return
        if not isinstance(name, str):
            raise TypeError(f"For '{self.name}', the type of 'name' should be str, but got {type(name).__name__}.")
        if not name:
            raise ValueError(f"For '{self.name}', the name must be valid string, but got '{name}'.")
        if not isinstance(value, Tensor):
            raise TypeError(f"For '{self.name}', the type of 'value' should be Tensor, but got "
                            f"{type(value).__name__}.")
        self._check_value(value)
        tracer.print_(((lambda got: _cache_summary_data(self.name, name, got), tracer_value(tracer, value)),))


class ScalarSummary(_Summary):
    """A scalar (shape () or [1]) for the summary file's scalar_value."""

    channel = "ms_scalar_summary"

    def _check_value(self, value: Tensor) -> None:
        if tuple(value.shape) not in ((), (1,)):
            raise ValueError(f"For '{self.name}', the shape of 'value' must be [] or [1], but got "
                             f"{list(value.shape)}.")


class ImageSummary(_Summary):
    """A batch of images (NCHW, 4 dimensions) for the summary file."""

    channel = "ms_image_summary"

    def _check_value(self, value: Tensor) -> None:
        if len(value.shape) != 4:
            raise ValueError(f"For '{self.name}', the dimension of 'value' must be 4, but got {len(value.shape)}.")


class TensorSummary(_Summary):
    """A tensor for the summary file."""

    channel = "ms_tensor_summary"


class HistogramSummary(_Summary):
    """A tensor whose histogram goes to the summary file."""

    channel = "ms_histogram_summary"


__all__ += ["ScalarSummary", "ImageSummary", "TensorSummary", "HistogramSummary"]
