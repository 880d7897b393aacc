"""``mindspore.recompute`` and the marks ``Cell.recompute()`` and ``Primitive.recompute()`` leave on a capture.

Recompute is a property of the captured forward nodes (``Graph.recompute``, by full name): the graph pass
``ascendemu.graph.recompute`` copies a marked node into the backward instead of keeping its output. A
recomputed cell marks every node its ``construct`` records except those making its outputs (MindSpore:
"the outputs of cell are excluded from recomputation"); a primitive's own ``recompute(mode)`` wins over its
cell's. PyNative gradients are captured graphs here, so the marks act in both modes (MindSpore's PyNative
recomputes through a custom bprop: the same gradients, the same saving).
"""
from __future__ import annotations

import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ascendemu.errors import InvalidTypeError, InvalidValueError
from ascendemu.graph.capture import Tracer, current_tracer
from ascendemu.kernels.registry import communication

from .. import log

__all__ = ["RecomputeConfig", "cell_config", "check_bool", "primitive_marks", "recompute", "recomputed_call",
           "unknown_keywords"]

# the keyword arguments Cell.recompute takes in **kwargs (MindSpore 2.10's list and message)
CELL_KWARGS = ("mp_comm_recompute", "parallel_optimizer_comm_recompute", "recompute_slice_activation")


class RecomputeTypeError(InvalidTypeError):
    """A recompute argument of the wrong type (MindSpore raises TypeError)."""


class RecomputeValueError(InvalidValueError):
    """A recompute argument MindSpore does not know (MindSpore raises ValueError)."""


@dataclass(frozen=True)
class RecomputeConfig:
    """A recomputed cell's options. ``mp_comm``: the model-parallel collectives the sharding pass inserts in
    the cell are recomputed too (MindSpore's default), else kept. ``slice_activation`` is accepted and has no
    effect here (MindSpore slices the kept outputs over the model-parallel ranks)."""
    mp_comm: bool = True
    slice_activation: bool = False


def check_bool(value: Any) -> bool:
    """MindSpore's ``Validator.check_bool``."""
    if not isinstance(value, bool):
        raise RecomputeTypeError(f"The input value must be a bool, but got {type(value).__name__}.")
    return value


def cell_config(current: RecomputeConfig | None, output_recompute: Any, kwargs: dict[str, Any]) -> RecomputeConfig:
    """The config ``Cell.recompute(output_recompute=..., **kwargs)`` gives a cell, checked in MindSpore's order
    (type checks first; an unknown keyword after the cell is set, as there)."""
    for key in ("mp_comm_recompute", "parallel_optimizer_comm_recompute"):
        if key in kwargs and not isinstance(kwargs[key], bool):
            raise RecomputeTypeError(f"The parameter '{key}' must be {bool}, but got {type(kwargs[key])}")
    check_bool(output_recompute)
    config = current or RecomputeConfig()
    if "mp_comm_recompute" in kwargs:
        config = RecomputeConfig(kwargs["mp_comm_recompute"], config.slice_activation)
    if kwargs.get("parallel_optimizer_comm_recompute"):
        log.warning("Currently, the communication operator allgathers introduced by optimizer shard "
                    "is replaced with zero3.")
    if "recompute_slice_activation" in kwargs:
        config = RecomputeConfig(config.mp_comm, bool(kwargs["recompute_slice_activation"]))
    return config


def unknown_keywords(kwargs: dict[str, Any]) -> None:
    """MindSpore's ValueError for a keyword Cell.recompute does not take."""
    for key in kwargs:
        if key not in CELL_KWARGS:
            raise RecomputeValueError(f"For 'recompute', keyword '{key}' is not recognized! the key kwargs must be "
                                      f"'mp_comm_recompute', 'parallel_optimizer_comm_recompute', "
                                      f"'recompute_slice_activation'")


# tracer -> {node full name: its primitive's own recompute mode}; weak, so a finished capture drops it
_PRIMITIVE_MODES: "weakref.WeakKeyDictionary[Tracer, dict[str, bool]]" = weakref.WeakKeyDictionary()


@contextmanager
def primitive_marks(mode: bool) -> Iterator[None]:
    """The nodes one primitive call records are recomputed (``mode``) or kept, whatever their cell says."""
    tracer = current_tracer()
    if tracer is None:
        yield
        return
    start = len(tracer.graph.nodes)
    try:
        yield
    finally:
        names = [n.full_name for n in tracer.graph.nodes[start:]]
        _PRIMITIVE_MODES.setdefault(tracer, {}).update(dict.fromkeys(names, mode))
        tracer.graph.set_recompute(names, mode)


def _output_values(out: Any, tracer: Tracer, found: set[int]) -> set[int]:
    """The graph values of the symbolic tensors in a construct's (nested) result."""
    if isinstance(out, (tuple, list)):
        for item in out:
            _output_values(item, tracer, found)
    elif isinstance(out, dict):
        for item in out.values():
            _output_values(item, tracer, found)
    else:
        sym = getattr(out, "_sym", None)
        if sym is not None and sym[0] is tracer:
            found.add(sym[1])
    return found


def recomputed_call(construct: Callable[..., Any], args: tuple, kwargs: dict, config: RecomputeConfig) -> Any:
    """``construct(*args, **kwargs)`` with the nodes it records marked recomputed, except those making its
    outputs, those whose primitive says otherwise, and (``config.mp_comm`` false) its collectives."""
    tracer = current_tracer()
    if tracer is None:
        return construct(*args, **kwargs)
    start = len(tracer.graph.nodes)
    out = construct(*args, **kwargs)
    outputs = _output_values(out, tracer, set())
    forced = _PRIMITIVE_MODES.get(tracer, {})
    tracer.graph.set_recompute([n.full_name for n in tracer.graph.nodes[start:]
                                if outputs.isdisjoint(n.outputs) and n.full_name not in forced
                                and (config.mp_comm or communication(n.op) is None)], True)
    return out


def recompute(block: Any, *args: Any, use_reentrant: bool = True, output_recompute: bool = False,
              early_stop: bool = True, context_fn: Any = None, **kwargs: Any) -> Any:
    """``mindspore.recompute(block, *args)``: call the Cell ``block`` with its forward recomputed in the
    backward (its outputs kept), for this call only."""
    check_bool(output_recompute)
    if output_recompute:
        use_reentrant = False
    if not hasattr(block, "_run_construct") and use_reentrant:
        raise RecomputeTypeError("Recompute function now only support block which inherited from Cell when "
                                 "use_reentrant=True!")
    if use_reentrant and context_fn is not None:
        raise RecomputeValueError("context_fn is only supported when use_reentrant=False.")
    kwargs.pop("save_rng_state", None)
    tracer = current_tracer()
    if tracer is None:
        return block(*args, **kwargs)
    return recomputed_call(block, args, kwargs, RecomputeConfig())
