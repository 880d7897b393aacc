"""Sharding strategies as ``Primitive.shard`` takes them, checked as MindSpore checks them, and the
device matrix a strategy makes.

A strategy has one tuple per op input: how many equal shards each dimension of that input is cut into
(``((dp, 1), (1, mp))`` for a MatMul of ``x`` and ``w``). The device matrix is the op's distinct split
counts; when their product is less than the job's device count, the rest becomes a *repeat* axis (ranks
along it compute the same slice: MindSpore's repeated calculation), the last (right-most) axis as MindSpore
places it (``repeated_num_in_dev_matrix_right_``): consecutive ranks repeat, so a ``(dp, 1)`` strategy on 8
devices gives rows by ``rank // (8 / dp)``, the same blocks as the ``(dp, mp)`` ops around it. The rules
number the axes with the repeat first (``with_repeat``); ``rules.repeat_on_the_right`` moves it.

A strategy given as ``ms.Layout``s is a :class:`LayoutStrategy`: one tensor layout per input, over the user's
device matrix (its product the device count), naming the device axes each dimension is split over.
"""
from __future__ import annotations

import math
from typing import Any

from ascendemu.errors import InvalidTypeError, RuntimeParamError

__all__ = ["Strategy", "LayoutStrategy", "StrategyError", "ShardTypeError", "check_strategy", "with_repeat"]

Strategy = tuple[tuple[int, ...], ...]


class ShardTypeError(InvalidTypeError):
    """``Primitive.shard`` given something that is not a tuple of int tuples (MindSpore: TypeError)."""


class StrategyError(RuntimeParamError):
    """A strategy an op cannot run with (MindSpore's parallel compiler: RuntimeError, 'Invalid strategy')."""


class LayoutStrategy(tuple):
    """``Primitive.shard`` given ``ms.Layout``s: a tensor :class:`Layout` per input (or output), all over one
    device matrix. The rules split the op by its :meth:`splits` and the pass renames their device axes to these
    (``rules.plan_op``), so a Layout and the tuple of the same splits make the same local op."""

    def splits(self) -> Strategy:
        """The tuple strategy of the same shard counts."""
        return tuple(tuple(lay.shards(d) for d in range(len(lay.tensor_map))) for lay in self)

    def __repr__(self) -> str:
        return f"LayoutStrategy{tuple(self)!r}"


def check_strategy(strategy: Any, what: str, op: str) -> Strategy:
    """A tuple ``strategy`` as ``Primitive.shard`` accepts it (MindSpore's ``_check_shard_strategy`` texts); the
    front end turns ``ms.Layout`` strategies into a :class:`LayoutStrategy` instead."""
    if not isinstance(strategy, tuple):
        raise ShardTypeError(f"{what} must be tuple type, but got:{type(strategy)}")
    for item in strategy:
        if not isinstance(item, tuple):
            raise ShardTypeError(f"The element of strategy must be tuple/Layout type, but got:{type(item)}")
        for value in item:
            if not isinstance(value, int) or isinstance(value, bool):
                raise ShardTypeError(f"The {what}: {strategy} of {op} is not valid, the value of strategy must be int "
                                     f"type, but got:{type(value)}")
            if value < 1 or value & (value - 1):
                raise StrategyError(f"For {op}, Invalid strategy {strategy}: each split must be a power of 2 "
                                    f"(as MindSpore requires), got {value}")
    return strategy


class RepeatFirst(tuple):
    """A device matrix ``(repeat, *dims)`` as the rules build it (axis 0 the repeat, the strategy's axes from
    1), still to be turned into MindSpore's ``(*dims, repeat)`` (``rules.repeat_on_the_right``)."""


def with_repeat(dims: list[int], device_num: int, op: str, strategy: Any) -> tuple[int, ...]:
    """The device matrix ``(repeat, *dims)``: the repeat axis makes the product the device count."""
    used = math.prod(dims)
    if used > device_num or device_num % used:
        raise StrategyError(f"For {op}, Invalid strategy {strategy}: the product of its splits ({used}) must divide "
                            f"the device number ({device_num}); use fewer or other splits")
    return RepeatFirst((device_num // used, *dims))
