"""``mindspore.ops.Custom`` (``ops.operations.custom_ops``): a user-defined operator.

``func_type="pyfunc"`` (MindSpore CPU's own kind) runs ``func`` on the host over numpy arrays, the
result cast to ``out_dtype`` and checked against ``out_shape`` (each a value, or a function of the
inputs' shapes / dtypes; a tuple of them for several outputs). ``"hybrid"`` takes a function decorated
with ``ops.kernel`` and runs it as Python with the DSL's intrinsics (what MindSpore does with a kernel
given to pyfunc; its compiled kernel computes the same values). The other kinds cannot be served:
``"aot"`` loads native code from a .so file (``func`` is "path:function"): running a user's binary inside
the emulator would be unchecked native code with no device model, so it is refused; ``"akg"``, ``"tbe"``
and ``"aicpu"`` need their vendors' compilers. Each refusal is an InvalidParamError naming the way out.

A host function cannot run inside an emulated device graph, so Custom runs in PyNative only; in
GRAPH_MODE and under a gradient (``ms.grad`` captures a graph even in PyNative) it raises
InvalidParamError. ``bprop`` is kept (``get_bprop``) as MindSpore keeps it.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ascendemu.errors import InvalidParamError
from ascendemu.graph.capture import current_tracer

from ... import log
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .._utils import defined_here
from ..primitive import Primitive
from ._ms_kernel import MS_KERNEL_FLAG

# MindSpore 2.10's func_type values, in its order (its error message lists them so)
SUPPORTED_FUNC_TYPES = ["hybrid", "akg", "tbe", "aicpu", "aot", "pyfunc"]
# the kinds that run here: host Python over numpy
SERVED_FUNC_TYPES = ("pyfunc", "hybrid")
# why each other kind is refused
REFUSED = {
    "aot": "it loads a native .so given by path and runs it on the device; the emulator runs no user binaries "
           "(unchecked native code, and no device model for it): write the kernel as a Python function and use "
           "func_type='pyfunc'",
    "akg": "AKG's DSL needs the AKG compiler; decorate the function with ops.kernel and use func_type='hybrid', "
           "or use func_type='pyfunc'",
    "tbe": "TBE kernels need the Ascend TBE compiler; use func_type='pyfunc'",
    "aicpu": "AICPU kernels are native libraries of the Ascend toolkit; use func_type='pyfunc'",
}


class Custom(Primitive):
    """``Custom(func, out_shape=None, out_dtype=None, func_type="pyfunc", bprop=None, reg_info=None)(*inputs)``."""

    def __init__(self, func: Any, out_shape: Any = None, out_dtype: Any = None, func_type: str = "pyfunc",
                 bprop: Callable | None = None, reg_info: Any = None) -> None:
        super().__init__("Custom")
        self.log_prefix = f"For '{self.name}', 'func_type': {func_type}, 'func': {func}"
        self.func, self.func_type, self.out_shape, self.out_dtype = func, func_type, out_shape, out_dtype
        self.bprop, self.reg_info = bprop, reg_info
        self._check_func()
        self.multi_output = isinstance(out_dtype, (tuple, list)) and len(out_dtype) > 0
        for key, value in (("func_type", func_type), ("multi_output", self.multi_output),
                           ("fake_output", not out_dtype), ("single_scalar_output", bool(out_dtype) and not out_shape)):
            self.add_prim_attr(key, value)

    def _check_func(self) -> None:
        """MindSpore's checks of ``func`` for its kind, then the refusal of the kinds not served here."""
        if self.func_type not in SUPPORTED_FUNC_TYPES:
            raise ValueError(f"{self.log_prefix}, 'func_type' must be one of {SUPPORTED_FUNC_TYPES}, but got "
                             f"{self.func_type}")
        if self.func_type == "aot" and not isinstance(self.func, str):
            raise TypeError(f"{self.log_prefix}, 'func' must be of type str, but got {type(self.func)}")
        if self.func_type == "hybrid" and not getattr(self.func, MS_KERNEL_FLAG, False):
            raise TypeError(f"{self.log_prefix}, 'func' must be a function decorated by kernel")
        if self.func_type == "tbe" and not callable(self.func):
            raise TypeError(f"{self.log_prefix}, 'func' must be of type function, but got {type(self.func)}")
        if self.func_type in REFUSED:
            raise InvalidParamError(f"Custom: func_type={self.func_type!r} is not supported by the emulator: "
                                    f"{REFUSED[self.func_type]}")
        if not callable(self.func):
            raise TypeError(f"For '{self.name}', 'func' must be of type function or str, but got {type(self.func)}")
        if self.bprop is not None and not callable(self.bprop):
            raise TypeError(f"For '{self.name}', 'bprop' must be a function, but got {type(self.bprop)}")
        if self.func_type == "pyfunc" and getattr(self.func, MS_KERNEL_FLAG, False):
            log.warning(f"{self.log_prefix}. Now you are using the function with decorator @kernel in the mode "
                        f"pyfunc. The kernel will be executed as a native python function.")

    def get_bprop(self) -> Callable | None:
        """The back propagation function given (MindSpore's accessor)."""
        return self.bprop

    def _infer(self, args: tuple) -> tuple[list[tuple], list[mstype.Type]]:
        """The outputs' shapes and dtypes, from ``out_shape``/``out_dtype`` (values or functions)."""
        shapes = [list(a.shape) if isinstance(a, Tensor) else list(np.shape(a)) for a in args]
        dtypes = [a.dtype if isinstance(a, Tensor) else mstype.to_type(np.asarray(a).dtype.name) for a in args]
        shape = self.out_shape(*shapes) if callable(self.out_shape) else self.out_shape
        dtype = self.out_dtype(*dtypes) if callable(self.out_dtype) else self.out_dtype
        shape = (1,) if shape == () else shape              # MindSpore: an empty out_shape is a placeholder
        dtype = mstype.int32 if dtype == () else dtype
        if not isinstance(shape, (tuple, list)):
            raise TypeError(f"{self.log_prefix}, 'out_shape' must be one of [tuple, list, function], but got "
                            f"{type(shape)}")
        if not isinstance(dtype, (mstype.Type, tuple, list)):
            raise TypeError(f"{self.log_prefix}, 'out_dtype' must be one of [mindspore.dtype, tuple, list, "
                            f"function], but got {type(dtype)}")
        if isinstance(dtype, (tuple, list)):
            if len(shape) != len(dtype) or any(not isinstance(s, (tuple, list)) for s in shape):
                raise TypeError(f"{self.log_prefix}, several outputs need one shape per dtype, but got out_shape "
                                f"{shape} and out_dtype {dtype}")
            return [tuple(s) for s in shape], [mstype.to_type(d) for d in dtype]
        return [tuple(shape)], [mstype.to_type(dtype)]

    def __call__(self, *args: Any) -> Any:
        if current_tracer() is not None:
            raise InvalidParamError(f"Custom(func_type={self.func_type!r}) in a graph or a gradient: its Python "
                                    f"function runs on the host and cannot run inside an emulated device graph; "
                                    f"call it in PyNative mode outside ms.grad, or write it with mindspore.ops")
        shapes, dtypes = self._infer(args)
        got = self.func(*(a.asnumpy() if isinstance(a, Tensor) else a for a in args))
        results = list(got) if self.multi_output else [got]
        if len(results) != len(dtypes):
            raise ValueError(f"{self.log_prefix}, the function returned {len(results)} outputs but out_dtype "
                             f"gives {len(dtypes)}")
        outs = []
        for k, (value, shape, dtype) in enumerate(zip(results, shapes, dtypes)):
            data = np.asarray(value).astype(dtype.np_type or np.float32)   # bfloat16: numpy has none
            if data.size == int(np.prod(shape, dtype=np.int64)):
                data = data.reshape(shape)
            if data.shape != shape:
                raise ValueError(f"{self.log_prefix}, output {k} of the function has shape {data.shape} but "
                                 f"out_shape gives {shape}")
            outs.append(Tensor(data, dtype))
        return tuple(outs) if self.multi_output else outs[0]


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.custom_ops", name, __all__)
