"""``mindspore.common.parameter``: ``Parameter`` (a named, trainable weight) and ``GeneratorState`` (a
random op's generator), where MindSpore defines them, with ``ParameterTuple``.
"""
from __future__ import annotations

import numbers
from typing import Any, Iterable

import numpy as np

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError

from ..backend import is_dry_run
from .initializer import DeferredFill, InitTensor, initializer
from .tensor import Tensor

__all__ = ["Parameter", "ParameterTuple"]


class Parameter(Tensor):
    """A named, trainable model weight: mutable state that graphs read and update on the device.

    The newest values may live in device memory (a training step updated them there): the host copy
    is then fetched on first read, as MindSpore syncs a parameter back when Python asks for it.
    ``version`` counts host-side writes, so the device copy knows when to upload again
    (:class:`ascendemu.graph.ir.StateSource`).

    Abstract weights: made under DryRun from an initializer (``Parameter(initializer(...))``, a
    layer's ``weight_init``), a Parameter keeps shape, dtype and the fill with its seeds drawn
    (``has_init``), not the values; it computes them, bit for bit an eager run's, only when something
    reads them (``init_data()``, ``asnumpy()``, an op in PyNative). Capture, compile, memory plans and
    DryRun's uploads read shape and dtype only, so a DryRun's host memory does not grow with the
    weights. Outside DryRun the fill runs at once, as MindSpore's ``Parameter`` does outside
    auto-parallel.
    """

    is_parameter = True
    DEFAULT_NAME = "Parameter"

    def __init__(self, default_input: Any, name: str | None = None, requires_grad: bool = True,
                 layerwise_parallel: bool = False, parallel_optimizer: bool = True):
        self.version = 0
        self._fetch = None
        self._fill: DeferredFill | None = None      # an abstract weight's fill, until read
        fill = _abstract_fill(default_input)
        if fill is not None:
            self._set_abstract(fill)
        elif isinstance(default_input, Tensor):
            super().__init__(default_input.asnumpy(), dtype=default_input.dtype)
        elif isinstance(default_input, (numbers.Number, np.ndarray, list, tuple)):
            super().__init__(default_input)
        else:
            raise InvalidParamError(f"Parameter: default_input must be a Tensor, an array or a number, "
                                    f"got {type(default_input).__name__}")
        if name is not None and not isinstance(name, str):
            raise InvalidParamError(f"Parameter: name must be a str, got {name!r}")
        self.name = name or self.DEFAULT_NAME
        self.requires_grad = bool(requires_grad)
        self.layerwise_parallel = bool(layerwise_parallel)   # data parallel leaves its gradient unreduced
        self.parallel_optimizer = parallel_optimizer
        self.comm_fusion = 1

    # -- the host copy, fetched lazily from the device after a graph updated it, or filled lazily
    @property
    def _data(self) -> np.ndarray:
        if self._fetch is not None:
            fetch, self._fetch = self._fetch, None
            self.__dict__["_host"] = fetch()
        elif self._fill is not None:      # the values it always had: the device copy is not stale
            fill, self._fill = self._fill, None
            self.__dict__["_host"] = fill.values()
        return self.__dict__["_host"]

    @_data.setter
    def _data(self, value: np.ndarray) -> None:
        self.__dict__["_host"] = value
        self.__dict__["_shape"] = value.shape
        self._fetch = self._fill = None
        self.version += 1

    def _set_abstract(self, fill: DeferredFill) -> None:
        """Become a weight of ``fill``'s shape and dtype whose values are computed on first read."""
        self._sym, self.const_arg, self._dtype = None, False, fill.dtype
        self.__dict__["_host"], self.__dict__["_shape"] = None, fill.shape
        self._fetch, self._fill = None, fill
        self.version += 1

    @property
    def shape(self) -> tuple[int, ...]:
        sliced = self.__dict__.get("_shard_layout")      # (layout, global shape): sliced by SEMI_AUTO_PARALLEL
        if sliced is not None and _sharded_capture():
            return sliced[1]                  # the script sees the global Parameter
        return self.__dict__["_shape"]        # fixed for life: never fetches from the device or fills

    @property
    def has_init(self) -> bool:
        """Whether the values are not computed yet (an abstract weight: MindSpore's ``has_init``)."""
        return self._fill is not None

    @property
    def init(self) -> Any:
        """The Initializer of an abstract weight, else None (MindSpore's ``Tensor.init``)."""
        return self._fill.init if self._fill is not None else None

    def init_data(self, layout: Any = None, set_sliced: bool = False) -> "Parameter":
        """Compute an abstract weight's values (bit for bit an eager run's); the Parameter itself."""
        self._data  # noqa: B018 -- the read fills
        return self

    def snapshot(self) -> np.ndarray:
        """The values, without keeping an abstract weight's: a checkpoint saved under DryRun computes
        each weight, writes it and lets it go, so it takes the largest weight's host memory, not all."""
        if self._fill is not None:
            return self._fill.values()
        return self._data

    def host_data(self) -> np.ndarray:
        return self._data

    def device_updated(self, fetch: Any) -> None:
        self._fetch, self._fill = fetch, None      # the device holds newer values than any fill

    @property
    def data(self) -> "Parameter":
        return self

    def value(self) -> Tensor:
        """The parameter's value now, as a Tensor (MindSpore's ``Parameter.value()``: a Load). In GRAPH_MODE
        the tensor is the value the graph holds at this point, so a later ``assign`` does not change it."""
        from ascendemu.graph.capture import current_tracer

        from ..capture import tracer_value

        tracer = current_tracer()
        if tracer is not None:
            return Tensor._symbolic(tracer, tracer_value(tracer, self))
        return Tensor(self.asnumpy().copy(), dtype=self.dtype)

    def set_data(self, data: Any) -> "Parameter":
        """Replace the values (same shape; cast to this parameter's dtype); the device copy is
        uploaded again before the next graph that reads it."""
        fill = _abstract_fill(data)
        if fill is not None and fill.dtype == self._dtype:      # another dtype: cast the values below
            if fill.shape != self.shape:
                raise InvalidParamError(f"Parameter {self.name}: set_data shape {fill.shape} differs from "
                                        f"{self.shape}")
            self._set_abstract(fill)
            return self
        new = np.asarray(data.asnumpy() if isinstance(data, Tensor) else data)
        if new.shape != self.shape:
            raise InvalidParamError(f"Parameter {self.name}: set_data shape {new.shape} differs from "
                                    f"{self.shape}")
        self._data = np.asarray(new.astype(self._dtype.np_type), order="C")
        return self

    @property
    def comm_fusion(self) -> int:
        """The fusion id of this weight's gradient collective (``nn.DistributedGradReducer`` fuses equal ids;
        0: never fused), set for a cell's weights by ``Cell.set_comm_fusion``."""
        return self.__dict__["_comm_fusion"]

    @comm_fusion.setter
    def comm_fusion(self, value: int) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ParameterTypeError(f"The input value must be int, but got '{type(value).__name__}'")
        if value < 0:
            raise ParameterValueError(f"The input value must be int and must >= 0, but got '{value}' with type 'int'.")
        self.__dict__["_comm_fusion"] = value

    @property
    def parallel_optimizer(self) -> bool:
        """Whether optimizer parallel (``enable_parallel_optimizer``) may split this weight over the ranks that
        repeat its slice (``graph.parallel.optimizer_shard``); False keeps it whole there."""
        return self.__dict__["_parallel_optimizer"]

    @parallel_optimizer.setter
    def parallel_optimizer(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise ParameterTypeError("The argument `parallel_optimizer` must be bool type.")
        self.__dict__["_parallel_optimizer"] = value

    def clone(self, init: str = "same") -> "Parameter":
        return Parameter(self if self._fill is not None else Tensor(self._data.copy()), self.name,
                         self.requires_grad, parallel_optimizer=self.parallel_optimizer)

    def __repr__(self) -> str:
        return (f"Parameter (name={self.name}, shape={self.shape}, dtype={self._dtype}, "
                f"requires_grad={self.requires_grad})")

    __str__ = __repr__          # print(param) shows this line in MindSpore 2.10, not the values


class ParameterTypeError(InvalidTypeError):
    """A Parameter attribute given a value of the wrong type (MindSpore raises TypeError)."""


class ParameterValueError(InvalidValueError):
    """A Parameter attribute given a value out of its range (MindSpore raises ValueError)."""


def _sharded_capture() -> bool:
    """Whether a SEMI_AUTO_PARALLEL capture is running (a sliced Parameter then shows its global shape)."""
    from ascendemu.graph.capture import current_tracer
    tracer = current_tracer()
    return tracer is not None and getattr(tracer, "sharding", None) is not None


def _abstract_fill(data: Any) -> DeferredFill | None:
    """The fill a new (or reset) Parameter keeps instead of values: an abstract Parameter's (shared:
    its seeds are drawn), or, under DryRun, an initializer's with its seeds drawn now, where an eager
    fill draws them. None: take the values (a fill that draws from numpy itself is never deferred)."""
    if isinstance(data, Parameter):
        return data._fill
    if isinstance(data, InitTensor) and data.has_init and data.fill.init.deferrable and is_dry_run():
        return data.fill.pin()
    return None


class GeneratorState(Parameter):
    """The state of one random op's counter-based generator: int32 ``(seed0, seed1, offset)``.

    The op's kernel reads it like any input and the op advances ``offset`` by one per call (a graph
    state update), so the state lives in device memory and each step draws new random numbers, the
    same sequence every run. A gradient's own forward pass reads it as the first pass did
    (``Tracer.replay``), so the loss and its gradients see one draw. Owned by a primitive, never by a
    Cell: checkpoints do not list it, as MindSpore's do not.
    """

    def __init__(self, seed0: int, seed1: int, name: str = "generator_state"):
        words = np.array([seed0 & 0xFFFFFFFF, seed1 & 0xFFFFFFFF, 0], np.uint32).view(np.int32)
        super().__init__(words, name=name, requires_grad=False)


class ParameterTuple(tuple):
    """``mindspore.ParameterTuple``: a tuple of Parameters; ``clone(prefix, init)`` makes optimizer
    state named ``<prefix>.<name>`` (``moments.fc1.weight``)."""

    def __new__(cls, iterable: Iterable[Parameter] = ()) -> "ParameterTuple":
        items = tuple(iterable)
        for p in items:
            if not isinstance(p, Parameter):
                raise InvalidParamError(f"ParameterTuple holds Parameters only, got {type(p).__name__}")
        return super().__new__(cls, items)

    def clone(self, prefix: str, init: Any = "same") -> "ParameterTuple":
        out = []
        for p in self:
            data = p if init == "same" else initializer(init, p.shape, p.dtype)
            out.append(Parameter(data, name=f"{prefix}.{p.name}", requires_grad=p.requires_grad))
        return ParameterTuple(out)
