"""``mindspore.ops.op_info_register``: the decorators that register a kernel's information (TBE, AI CPU,
AKG, Custom op registration JSON) with MindSpore's operator library. Here the information is checked as
MindSpore checks it and kept in :data:`REGISTERED` (the emulated device runs its own numba kernels, so
nothing else reads it); the decorated function is returned wrapped, as MindSpore returns it."""
from __future__ import annotations

import functools
import json
from typing import Any, Callable

from .. import log
from ..unsupported import unsupported

# op name (or the raw text MindSpore could not parse) -> its registered information, in order
REGISTERED: dict[str, Any] = {}


def op_info_register(op_info: Any) -> Callable[[Callable], Callable]:
    """``@op_info_register(info)``: register ``info`` (a JSON str or a dict, e.g. ``TBERegOp(...).get_op_info()``).
    Information MindSpore's library cannot read is logged as an error and kept, as MindSpore does."""
    def register_decorator(func: Callable) -> Callable:
        text = json.dumps(op_info) if isinstance(op_info, dict) else op_info
        if not isinstance(text, str):
            raise TypeError(f"The type of 'op_info' should be 'str', but got type '{type(text).__name__}'.")
        try:
            parsed = json.loads(text)
            name = parsed["op_name"]
        except (ValueError, KeyError, TypeError) as exc:
            log.error(f"Get op json elements failed: {exc!r}")
            parsed, name = text, text
        REGISTERED[str(name)] = parsed

        def wrapped_function(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)
        return wrapped_function
    return register_decorator


def custom_info_register(*reg_info: Any) -> Callable[[Callable], Callable]:
    """``@custom_info_register(*reg_info)``: bind registration information to a function that
    ``ops.Custom`` takes: the function gets ``reg_info`` (the tuple) and is returned wrapped."""
    def decorator(func: Callable) -> Callable:
        func.reg_info = reg_info

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)
        return wrapper
    return decorator


__all__ = ["op_info_register", "custom_info_register"]


def __getattr__(name: str) -> Any:
    raise unsupported("ops.op_info_register", name, __all__)
