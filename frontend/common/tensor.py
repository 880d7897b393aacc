"""``mindspore.common.tensor``: ``Tensor``, concrete (host data) or symbolic (a value of a graph being captured).

Arithmetic operators map to ops, so ``x * y + 1`` inside ``construct`` records Mul and Add nodes in
GRAPH_MODE and runs two kernels in PyNative mode. Anything that needs the data of a symbolic tensor
raises GraphCaptureError (see ascendemu.graph.capture).
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.graph.capture import data_dependent_error
from ascendemu.kernels.signature import TensorDesc

from . import dtype as mstype
from .placeholder import Placeholder, placeholder_init


class _Registry:
    """The ops behind the Tensor's operators and methods, by name (MindSpore's
    ``tensor_operator_registry``): ``mindspore.ops`` registers them (``ops/functional.py``), so this
    module never imports ops."""

    def __init__(self) -> None:
        self._ops: dict[str, Callable] = {}
        self._methods: set[str] = set()         # the methods register_method installed

    def register(self, name: str, op: Callable) -> None:
        if not isinstance(name, str) or not callable(op):
            raise InvalidParamError(f"tensor_operator_registry.register: needs a name (str) and a callable, "
                                    f"got {name!r} and {type(op).__name__}")
        self._ops[name] = op

    def get(self, name: str) -> Callable:
        op = self._ops.get(name)
        if op is None:
            raise FeatureNotSupportedError(f"Tensor: no op is registered for {name!r}; import "
                                           f"ascendemu.frontend (mindspore), whose ops register the Tensor's "
                                           f"operators and methods")
        return op

    def register_method(self, name: str, method: Callable) -> None:
        """Make ``method`` the Tensor method ``name`` (``x.split(...)``), unless the class defines that
        name itself (its own methods and properties win)."""
        if not isinstance(name, str) or not (callable(method) or isinstance(method, property)):
            raise InvalidParamError(f"tensor_operator_registry.register_method: needs a name (str) and a callable, "
                                    f"got {name!r} and {type(method).__name__}")
        if name not in Tensor.__dict__ or name in self._methods:
            self._methods.add(name)
            setattr(Tensor, name, method)


tensor_operator_registry = _Registry()


def _ops(name: str) -> Callable:
    return tensor_operator_registry.get(name)


# MindSpore's ValueError texts for int()/float() and an index of a tensor that is not one number
_NOT_SCALAR = "Only one element tensors can be converted to Python scalars"
_NOT_INDEX = "Only integer tensors of a single element can be converted to an index."


def _one_element(data: np.ndarray, kinds: tuple[type, ...], message: str) -> Any:
    """The only element as a Python number, whatever the shape (MindSpore's ``Tensor._item``:
    ``int(Tensor([10]))`` is 10); else MindSpore's ValueError with ``message``."""
    value = data.reshape(()).item() if data.size == 1 else None
    if not isinstance(value, kinds):
        raise ValueError(message)
    return value


def sequence_as_tensor(value: Any) -> Any:
    """A list or tuple as the Tensor MindSpore's Tensor add/sub convert it to; anything else unchanged."""
    return Tensor(value) if isinstance(value, (list, tuple)) else value


# How MindSpore's Tensor repr writes floats (measured on MindSpore 2.10): every element in scientific
# notation, 8 decimals (float16: 4) and a sign column; a 0-d tensor as %g; a long 1-D tensor with its
# first and last three elements around " ... "; rows never wrapped.
# bfloat16 elements print in their shortest form, right-aligned to the widest ("[  1.5, -2.25]").
_FLOAT_SPEC = {"float16": " .4e", "float32": " .8e", "float64": " .8e"}
_SUMMARY_THRESHOLD, _EDGE_ITEMS = 1000, 3


def _bfloat16_formatter(data: np.ndarray) -> dict:
    """array2string's formatter for a bfloat16 array (numpy sees ml_dtypes' type as no float kind)."""
    width = max((len(str(v)) for v in data.ravel()), default=0) if data.size <= _SUMMARY_THRESHOLD else 0
    return {"all": lambda v: str(v).rjust(width)}


def _value_text(data: np.ndarray) -> str:
    """The ``value=`` part of a Tensor's repr, as MindSpore prints it (nothing for a placeholder)."""
    if isinstance(data, Placeholder):
        return ""
    if data.ndim == 0:
        v = data.item()
        return f"{v:g}" if isinstance(v, float) else str(v)
    spec = _FLOAT_SPEC.get(str(data.dtype))
    formatter = {"float_kind": lambda v: format(float(v), spec)} if spec else None
    if data.dtype == mstype.bfloat16.np_type:
        formatter = _bfloat16_formatter(data)
    if data.dtype.kind == "c":          # MindSpore writes Python's complex form, "1+2j"
        formatter = {"complex_kind": lambda v: str(complex(v)).strip("()")}
    text = np.array2string(data, separator=", ", formatter=formatter, threshold=_SUMMARY_THRESHOLD,
                           edgeitems=_EDGE_ITEMS, max_line_width=sys.maxsize)    # rows are not wrapped
    return text.replace(", ..., ", " ... ") if data.ndim == 1 else text


class _StorageFacts:
    """MindSpore's storage facts of a host tensor, which here is always a C-contiguous buffer of its
    own, initialised when made, on the host ("CPU", as MindSpore CPU reports it). A mixin of :class:`Tensor` (it reads ``shape``, ``itemsize`` and the host data)."""

    @property
    def data(self) -> "Tensor":
        return self

    def stride(self, dim: int | None = None) -> Any:
        """The step in elements between neighbours along each axis (a list), or along ``dim``."""
        steps = [int(np.prod(self.shape[d + 1:], dtype=np.int64)) for d in range(len(self.shape))]
        return steps if dim is None else steps[dim]

    @property
    def strides(self) -> tuple[int, ...]:
        """The step in bytes between neighbours along each axis (numpy's ``strides``)."""
        return tuple(s * self.itemsize for s in self.stride())

    def storage_offset(self) -> int:
        return 0

    def data_ptr(self) -> int:
        """The address of the first element of the host buffer."""
        return int(self._need_data("Tensor.data_ptr()").ctypes.data)

    def data_sync(self, wait: bool = True) -> None:
        """The host copy is always current here: nothing to wait for."""

    has_init = False
    init = None
    init_flag = False
    is_meta = False
    device = "CPU"

    def hooks(self) -> list:
        return []


def tag_input(tensor: "Tensor", error: Exception) -> Exception:
    """``error`` (capture met a read of graph tensor ``tensor``'s data) marked with ``graph_input``: the
    position among the captured call's inputs when the tensor is one of them (a shape or an axis given as
    a Tensor argument, which api.run_graph then holds as a constant)."""
    tracer, vid = tensor._sym
    if tracer.parent is None and vid in tracer.graph.inputs:
        error.graph_input = tracer.graph.inputs.index(vid)
    return error


def _asnumpy(self: "Tensor") -> np.ndarray:
    """``Tensor.asnumpy()``: a copy of the data. Of a graph tensor inside ``@jit``: JIT Fallback's
    HostValueNeeded, so the function runs as Python on the data (common/fallback.py)."""
    if self._sym is not None:
        from .fallback import host_value_needed

        raise tag_input(self, host_value_needed("Tensor.asnumpy()", self._where()))
    return self._need_data("Tensor.asnumpy()").copy()


def _setitem(self: "Tensor", index: Any, value: Any) -> None:
    """``Tensor.__setitem__`` (``x[index] = value``): frontend/index_update.py."""
    _ops("setitem")(self, index, value)


def _arithmetic(name: str, x: "Tensor", y: Any) -> "Tensor":
    """``x + y``, ``x - y``, ``x * y`` by the registered op ``name``; of two bool tensors, the int32
    result's truth (MindSpore 2.10's operators: True + True is True, False - True is True), though
    ``ops.add`` itself refuses bools."""
    op = _ops(name)
    if isinstance(y, Tensor) and x.dtype == mstype.bool_ and y.dtype == mstype.bool_:
        int32 = mstype.int32
        return _ops("cast")(op(_ops("cast")(x, int32), _ops("cast")(y, int32)), mstype.bool_)
    return op(x, y)


class _Operators:
    """Python's operators on a :class:`Tensor`, each one of MindSpore's ops (registered by ops.functional
    in ``tensor_operator_registry``). MindSpore 2.10's operators take a list or tuple as a Tensor for +,
    - and the base of ** only (its ops functions and the other operators raise TypeError; == and !=
    compare as Python does)."""

    def __add__(self, other):
        return _arithmetic("add", self, sequence_as_tensor(other))

    def __radd__(self, other):
        return _ops("add")(sequence_as_tensor(other), self)

    def __sub__(self, other):
        return _arithmetic("sub", self, sequence_as_tensor(other))

    def __rsub__(self, other):
        return _ops("sub")(sequence_as_tensor(other), self)

    def __mul__(self, other):
        return _arithmetic("mul", self, other)

    def __rmul__(self, other):
        return _ops("mul")(other, self)

    def __truediv__(self, other):
        return _ops("div")(self, other)

    def __rtruediv__(self, other):
        return _ops("div")(other, self)

    def __pow__(self, other):
        return _ops("pow")(self, other)

    def __rpow__(self, other):
        return _ops("pow")(sequence_as_tensor(other), self)

    def __matmul__(self, other):
        return _ops("matmul")(self, other)

    def __rmatmul__(self, other):
        return _ops("matmul")(other, self)

    def __neg__(self):
        return _ops("neg")(self)

    def __abs__(self):
        return _ops("abs")(self)

    def __pos__(self):
        return self

    # comparisons are element-wise ops (Equal, Greater, ...) giving bool tensors, in both modes; in
    # GRAPH_MODE `if x > 0:` then fails on bool() of a symbolic tensor, as data-dependent control flow
    def __eq__(self, other):
        return False if other is None or isinstance(other, (list, tuple)) else _ops("equal")(self, other)

    def __ne__(self, other):
        return True if other is None or isinstance(other, (list, tuple)) else _ops("not_equal")(self, other)

    def __gt__(self, other):
        return _ops("greater")(self, other)

    def __ge__(self, other):
        return _ops("greater_equal")(self, other)

    def __lt__(self, other):
        return _ops("less")(self, other)

    def __le__(self, other):
        return _ops("less_equal")(self, other)

    # // and % floor (Python's and MindSpore's FloorDiv/FloorMod), the other operand on either side
    def __floordiv__(self, other):
        return _ops("floor_divide")(self, other)

    def __rfloordiv__(self, other):
        return _ops("floor_divide")(other, self)

    def __mod__(self, other):
        return _ops("floor_mod")(self, other)

    def __rmod__(self, other):
        return _ops("floor_mod")(other, self)

    # &, |, ^ are MindSpore's BitwiseAnd/Or/Xor (bool stays bool, bool with int promotes), the tensor on
    # the left only (MindSpore 2.10: `1 & x` is a TypeError); ~ is LogicalNot, whatever the dtype
    def __and__(self, other):
        return _ops("bitwise_and")(self, other)

    def __or__(self, other):
        return _ops("bitwise_or")(self, other)

    def __xor__(self, other):
        return _ops("bitwise_xor")(self, other)

    def __invert__(self):
        return _ops("logical_not")(self)

    def __contains__(self, value):
        """``value in x``: whether any element equals it (MindSpore's ``Tensor.__contains__``)."""
        return bool(_ops("equal")(self, value).any())

    def __round__(self, ndigits=None):
        return _ops("round")(self) if ndigits is None else _ops("round")(self, decimals=ndigits)


class Tensor(_Operators, _StorageFacts):
    """A tensor in host memory, or a symbolic placeholder during GRAPH_MODE capture."""

    is_parameter = False

    def __init__(self, input_data: Any = None, dtype: Any = None, shape: Any = None, init: Any = None,
                 const_arg: bool = False):
        if input_data is None:
            if init is None and shape is not None:    # a set_inputs signature (common.placeholder)
                return placeholder_init(self, shape, dtype)
            if init is None or shape is None:
                raise InvalidParamError("Tensor: give input_data, or shape and init (e.g. init=One())")
            shape = (shape,) if isinstance(shape, int) else shape
            if not isinstance(shape, (tuple, list)) or not all(type(d) is int and d >= 0 for d in shape):
                raise InvalidParamError(f"Tensor: shape={shape!r} must be a tuple of non-negative ints (a "
                                        f"-1 placeholder needs input_data to infer it from)")
            input_data = _ops("initializer")(init, shape, dtype or mstype.float32)
        if isinstance(input_data, Tensor):
            input_data = input_data.asnumpy()
        data = np.asarray(input_data)
        if data.dtype == object:
            raise InvalidParamError(f"Tensor: cannot make a tensor from {type(input_data).__name__} data")
        if dtype is None and data.dtype == np.float64 and not isinstance(input_data, (np.ndarray, np.generic)):
            dtype = mstype.float32      # Python floats make a float32 tensor, as in MindSpore (numpy's float64 stays)
        t = mstype.to_type(dtype if dtype is not None else data.dtype)
        self._data = np.asarray(data.astype(t.np_type, copy=False), order="C")
        self._dtype = t
        self._sym = None
        self.const_arg = const_arg

    @classmethod
    def _symbolic(cls, tracer: Any, vid: int) -> "Tensor":
        t = cls.__new__(cls)
        desc = tracer.graph.values[vid]
        t._data, t._sym, t.const_arg = None, (tracer, vid), False
        t._dtype = mstype.to_type(desc.dtype)
        t._shape = desc.shape if getattr(tracer, "sharding", None) is None else tracer.sharding.global_shape(vid)
        return t

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape if self._sym is not None else self._data.shape

    @property
    def dtype(self) -> mstype.Type:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return np.dtype(self._dtype.np_type).itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def desc(self) -> TensorDesc:
        return TensorDesc(self.shape, self._dtype.name)

    @property
    def is_symbolic(self) -> bool:
        return self._sym is not None

    def _where(self) -> str:
        tracer, vid = self._sym
        return tracer.describe(vid)

    def _need_data(self, what: str) -> np.ndarray:
        if self._sym is not None:
            raise tag_input(self, data_dependent_error(what, self._where()))
        return np.asarray(self._data)       # a placeholder's data (set_inputs) raises MindSpore's ValueError

    # ------------------------------------------------------------------ data access
    asnumpy = _asnumpy

    def item(self, index: Any = None) -> Any:
        """The element as a Python number: the only one, or the one at ``index`` (an int into the
        flattened tensor or a tuple of ints)."""
        data = self._need_data("Tensor.item()")
        if index is None and data.size != 1:
            raise InvalidParamError(f"Tensor.item(): the tensor has {data.size} elements, not 1; give index")
        return data.item() if index is None else data.item(index)

    def tolist(self) -> Any:
        return self._need_data("Tensor.tolist()").tolist()

    def init_data(self) -> "Tensor":
        return self

    @staticmethod
    def from_numpy(array: np.ndarray) -> "Tensor":
        return Tensor(array)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        data = self._need_data("converting a tensor to numpy")
        return data.astype(dtype) if dtype is not None else data

    def value(self) -> "Tensor":
        """The tensor itself (MindSpore's ``Tensor.value()``; a Parameter's loads its value)."""
        return self

    def __bool__(self) -> bool:
        return bool(self._need_data("bool(tensor) (e.g. `if tensor:`)"))

    def __float__(self) -> float:
        return float(_one_element(self._need_data("float(tensor)"), (int, float, bool), _NOT_SCALAR))

    def __int__(self) -> int:
        return int(_one_element(self._need_data("int(tensor)"), (int, float, bool), _NOT_SCALAR))

    def __index__(self) -> int:
        return int(_one_element(self._need_data("using a tensor as an index"), (int, bool), _NOT_INDEX))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self._sym is not None:           # GRAPH_MODE unrolls a for-loop over a tensor's first dimension
            if not self.shape:
                raise TypeError("iteration over a 0-d tensor")
            return iter([self[i] for i in range(self.shape[0])])
        data = self._need_data("iterating over a tensor")
        return iter([Tensor(row) for row in data])

    def __getitem__(self, index: Any) -> "Tensor":
        return _ops("getitem")(self, index)

    def __hash__(self) -> int:
        return id(self)

    # ------------------------------------------------------------------ printing
    def __repr__(self) -> str:
        shape = list(self.shape)
        if self._sym is not None:
            return f"Tensor(shape={shape}, dtype={self._dtype}, value=<symbolic: {self._where()}>)"
        sep = " " if self._data.ndim <= 1 else "\n"
        return f"Tensor(shape={shape}, dtype={self._dtype}, value={sep}{_value_text(self._data)})"

    def __str__(self) -> str:
        return repr(self) if self._sym is not None else str(self._data)

    # ------------------------------------------------------------------ methods -> ops
    def reshape(self, *shape) -> "Tensor":
        return _ops("reshape")(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)

    view = reshape

    def flatten(self, order: str = "C", *, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        return _ops("flatten")(self, order, start_dim=start_dim, end_dim=end_dim)

    def transpose(self, *perm) -> "Tensor":
        if len(perm) == 1 and isinstance(perm[0], (tuple, list)):
            perm = tuple(perm[0])
        return _ops("transpose")(self, perm or tuple(reversed(range(self.ndim))))

    def astype(self, dtype: Any, copy: bool = True) -> "Tensor":
        return _ops("cast")(self, dtype)

    def to(self, dtype: Any = None, non_blocking: bool = False, copy: bool = False) -> "Tensor":
        """The tensor as ``dtype`` (itself when it is already, unless ``copy``); one device, so nothing
        is moved and ``non_blocking`` changes nothing."""
        if dtype is None or (not copy and mstype.to_type(dtype) == self._dtype):
            return self
        return _ops("cast")(self, dtype)

    def expand_dims(self, axis: int) -> "Tensor":
        return _ops("expand_dims")(self, axis)

    def squeeze(self, axis: Any = None) -> "Tensor":
        return _ops("squeeze")(self, axis)

    def sum(self, axis: Any = None, dtype: Any = None, keepdims: bool = False, initial: Any = None) -> "Tensor":
        out = _ops("sum")(self, axis, keepdims, dtype=dtype)      # integer and bool sums are int64 (ops.sum)
        return out if initial is None else out + initial

    def mean(self, axis: Any = None, keep_dims: bool = False) -> "Tensor":
        return _ops("mean")(self, axis, keep_dims)                 # an integer mean truncates (ops.mean)

    def max(self, axis: Any = None, keepdims: bool = False, *, initial: Any = None, where: Any = None,
            return_indices: bool = False) -> Any:
        """The maximum (over ``axis``; None: all); with ``return_indices``, (values, indices)."""
        if return_indices:
            return _ops("max")(self, axis, keepdims, initial=initial, where=where)
        if initial is not None or where is not None:
            raise FeatureNotSupportedError("Tensor.max: initial= and where= are not supported")
        return _ops("reduce_max")(keepdims)(self, () if axis is None else axis)

    def min(self, axis: Any = None, keepdims: bool = False, *, initial: Any = None, where: Any = None,
            return_indices: bool = False) -> Any:
        """The minimum (over ``axis``; None: all); with ``return_indices``, (values, indices)."""
        if return_indices:
            return _ops("min")(self, axis, keepdims, initial=initial, where=where)
        if initial is not None or where is not None:
            raise FeatureNotSupportedError("Tensor.min: initial= and where= are not supported")
        return _ops("reduce_min")(keepdims)(self, () if axis is None else axis)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> "Tensor":
        return _ops("argmax")(self, axis, keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> "Tensor":
        return _ops("argmin")(self, axis, keepdims)

    def exp(self) -> "Tensor":
        return _ops("exp")(self)

    def log(self) -> "Tensor":
        return _ops("log")(self)

    def sqrt(self) -> "Tensor":
        return _ops("sqrt")(self)

    def square(self) -> "Tensor":
        return _ops("square")(self)

    def abs(self) -> "Tensor":
        return _ops("abs")(self)

    def matmul(self, other: "Tensor") -> "Tensor":
        return _ops("matmul")(self, other)


Tensor.__setitem__ = _setitem       # x[index] = value (set here: the class body is at its 300-line bound)


def tensor(input_data: Any = None, dtype: Any = None, shape: Any = None, init: Any = None,
           const_arg: bool = False, device: Any = None) -> Tensor:
    """``mindspore.tensor(...)``: MindSpore 2.x's function form of ``Tensor(...)`` (the static-graph
    tutorials' way to make a tensor; ``device`` places nothing here: there is one emulated device)."""
    return Tensor(input_data, dtype, shape, init, const_arg)


def hold_value(tensor: Tensor, value: Tensor) -> Tensor:
    """Make ``tensor`` hold ``value`` (the in-place methods: ``x.add_(y)``), cast to its dtype; the shape
    must be its own. A Parameter is assigned (in a graph, an update of its state); a tensor in PyNative
    takes the data; a symbolic one becomes the graph value, so later reads see it."""
    if tuple(value.shape) != tuple(tensor.shape):
        raise InvalidParamError(f"in-place op: the result's shape {tuple(value.shape)} is not the tensor's "
                                f"{tuple(tensor.shape)} (an in-place op cannot broadcast its tensor)")
    value = value if value.dtype == tensor.dtype else _ops("cast")(value, tensor.dtype)
    if tensor.is_parameter:
        _ops("assign")(tensor, value)
    elif tensor.is_symbolic:
        tensor._sym = value._sym
    else:
        tensor._data = value._need_data("an in-place op on a concrete tensor")
    return tensor
