"""A primitive subclass whose calls run inside a scope of the instance's own setting.

``Primitive.shard`` and ``Primitive.recompute`` switch an instance to such a subclass so that the setting
(a strategy, a recompute mode) reaches the nodes its calls record, without a check on every primitive call.
"""
from __future__ import annotations

from typing import Any, Callable


def scoped_class(cls: type, registry: dict[type, type], scope: Callable[[Any], Any], **members: Any) -> type:
    """``cls`` whose calls run inside ``scope(instance)`` (a context manager): the subclass a primitive is
    switched to when a setting of its own (a shard strategy, a recompute mode) must reach the nodes its
    calls record. One subclass per ``cls`` in ``registry``; ``members`` adds methods (e.g. ``__repr__``)."""
    sub = registry.get(cls)
    if sub is None:
        def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
            with scope(self):
                return cls.__call__(self, *args, **kwargs)

        sub = type(cls.__name__, (cls,), {"__call__": __call__, "__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__, "__doc__": cls.__doc__, **members})
        registry[cls] = sub
    return sub
