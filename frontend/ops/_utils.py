"""Argument checks the primitives and functions of ``mindspore.ops`` share (pairs, paddings, int
tuples, flags, probabilities, seeds); each raises InvalidParamError naming the argument."""
from __future__ import annotations

import builtins
import inspect
from typing import Any

import numpy as np

from ascendemu.errors import ArgumentError, InvalidParamError, InvalidTypeError, InvalidValueError, check_int

from ..common.tensor import Tensor


def check_value_type(owner: str, name: str, value: Any, types: tuple[type, ...]) -> None:
    """MindSpore's ``validator.check_value_type``: its TypeError naming the argument (a bool is no number)."""
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        names = [t.__name__ for t in types]
        expected = f"'{names[0]}'" if len(names) == 1 else str(names)
        raise TypeError(f"For '{owner}', the type of '{name}' should be {expected}, but got type "
                        f"'{type(value).__name__}'.")


def check_arg_int(value: Any, name: str, *, minimum: int | None = None, maximum: int | None = None,
                  hint: str = "") -> int:
    """``check_int`` for an op's argument, typed as MindSpore's validators raise: a non-int is an
    InvalidTypeError (a TypeError), an int out of range an InvalidValueError (a ValueError)."""
    return check_int(value, name, minimum=minimum, maximum=maximum, error=InvalidValueError,
                     type_error=InvalidTypeError, hint=hint)


def _pair(name: str, value: Any) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) in (2, 4):
        return tuple(int(v) for v in value[-2:])
    raise InvalidParamError(f"{name}={value!r} must be an int, a pair or a 4-tuple (1, 1, h, w)")


def _pad4(value: Any) -> tuple[int, int, int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * 4
    if isinstance(value, (tuple, list)) and len(value) == 4:
        return tuple(int(v) for v in value)
    raise InvalidParamError(f"pad={value!r} must be an int or a 4-tuple (top, bottom, left, right)")


def _int_tuple(name: str, value: Any) -> tuple[int, ...]:
    if isinstance(value, (tuple, list)) and builtins.all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                                for v in value):
        return tuple(int(v) for v in value)
    raise InvalidTypeError(f"{name}={value!r} must be a tuple or list of ints")


def _static_ints(name: str, value: Any) -> tuple[int, ...]:
    """A shape-like argument MindSpore also takes as a Tensor (input_size, size, paddings): its ints,
    flattened. A Tensor must be concrete: shapes are static here."""
    if isinstance(value, Tensor):
        value = value.asnumpy().reshape(-1).tolist()
    elif isinstance(value, (tuple, list)):
        value = [v for row in value for v in (row if isinstance(row, (tuple, list)) else (row,))]
    return _int_tuple(name, value)


def _axes(axis: Any) -> tuple[int, ...]:
    if axis is None:
        return ()
    if isinstance(axis, int) and not isinstance(axis, bool):
        return (axis,)
    return tuple(int(a) for a in axis)


def _check_format(name: str, data_format: str) -> None:
    if data_format != "NCHW":
        raise InvalidParamError(f"{name}: data_format={data_format!r} is not supported; use 'NCHW'")


def _static_int(name: str, value: Any, minimum: int | None = None) -> int:
    """An int argument that MindSpore also takes as a scalar Tensor; shapes are static, so its value
    must be known (a symbolic tensor here is data-dependent)."""
    if isinstance(value, Tensor):
        value = value.item()
    return check_arg_int(value, name, minimum=minimum)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidParamError(f"{name}={value!r} must be a bool")
    return value


def _probability(owner: str, name: str, value: Any, low_open: bool, allow_int: bool = False) -> float:
    """A dropout probability as MindSpore checks it: a float (an int too where ``allow_int``) in
    (0, 1] (``low_open``: a keep probability) or in [0, 1) (a drop probability)."""
    kinds = (int, float) if allow_int else (float,)
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise InvalidParamError(f"{owner}: {name}={value!r} must be a float{' or an int' if allow_int else ''}, "
                                f"got {type(value).__name__}; write e.g. {name}=0.5")
    ok = 0.0 < value <= 1.0 if low_open else 0.0 <= value < 1.0
    if not ok:
        interval = "(0, 1]" if low_open else "[0, 1)"
        raise InvalidParamError(f"{owner}: {name}={value!r} must be in {interval}")
    return float(value)


def _seed_arg(owner: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParamError(f"{owner}: {name}={value!r} must be an int")
    return value


def _shape_arg(name: str, size: Any) -> tuple[int, ...]:
    if isinstance(size, int) and not isinstance(size, bool):
        size = (size,)
    shape = _int_tuple(f"{name}: size", size)
    if builtins.any(d < 0 for d in shape):
        raise InvalidParamError(f"{name}: size={size!r} must hold dimensions >= 0")
    return shape


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def defined_here(namespace: dict[str, Any], module: str) -> list[str]:
    """The public names a module of ``mindspore.ops`` defines itself (classes and functions whose
    ``__module__`` is ``module``, generated ones included), in definition order: its ``__all__``."""
    return [name for name, value in namespace.items() if not name.startswith("_") and callable(value)
            and getattr(value, "__module__", None) == module]


def check_kept_default(label: str, parameter: inspect.Parameter, value: Any) -> None:
    """An argument MindSpore takes but only its default is served here: InvalidParamError unless ``value``
    is that default (``relu``'s ``inplace``, ``sort``'s ``stable``), never silently ignored."""
    default = parameter.default
    if not (value is default or (type(value) is type(default) and value == default)):
        raise InvalidParamError(f"{label}: {parameter.name}={value!r} is not supported here; leave it at its "
                                f"default {default!r}")


def bind_arguments(label: str, signature: inspect.Signature, args: tuple, kwargs: dict) -> inspect.BoundArguments:
    """``args``/``kwargs`` bound to ``signature`` (defaults applied), or ArgumentError (a TypeError) with the
    text Python gives MindSpore's plain functions: ``add() missing 1 required positional argument: 'other'``."""
    params = list(signature.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(args) > len(positional) and not builtins.any(p.kind == p.VAR_POSITIONAL for p in params):
        required = builtins.sum(p.default is p.empty for p in positional)
        takes = (f"{len(positional)} positional argument{'s' if len(positional) != 1 else ''}"
                 if required == len(positional) else f"from {required} to {len(positional)} positional arguments")
        given = f"{len(args)} {'was' if len(args) == 1 else 'were'} given"
        raise ArgumentError(f"{label}() takes {takes} but {given}")
    names = {p.name for p in params}
    for name in kwargs:
        if name not in names and not builtins.any(p.kind == p.VAR_KEYWORD for p in params):
            raise ArgumentError(f"{label}() got an unexpected keyword argument '{name}'")
        if name in {p.name for p in positional[:len(args)]}:
            raise ArgumentError(f"{label}() got multiple values for argument '{name}'")
    given = {p.name for p in positional[:len(args)]} | set(kwargs)
    keyword_only = [p for p in params if p.kind == p.KEYWORD_ONLY]
    for kind, group in (("positional", positional), ("keyword-only", keyword_only)):   # Python's order
        missing = [p.name for p in group if p.default is p.empty and p.name not in given]
        if not missing:
            continue
        quoted = [f"'{m}'" for m in missing]
        listed = (quoted[0] if len(quoted) == 1 else " and ".join(quoted) if len(quoted) == 2
                  else ", ".join(quoted[:-1]) + ", and " + quoted[-1])        # Python's own wording
        plural = "s" if len(missing) > 1 else ""
        raise ArgumentError(f"{label}() missing {len(missing)} required {kind} argument{plural}: {listed}")
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound
