"""The public-call marker of the runtime: ``@api(cost)`` routes a method through the choke point.

Every public call of :class:`ascendemu.hal.runtime.Runtime` is decorated here, in whichever chapter
module defines it (devices, streams, memory, launch). The decorator only forwards to
``Runtime._dispatch``, the one choke point (in ``hal/runtime.py``) where the modelled host cost is
charged on the simulated host timeline and recorders see the call. It lives in its own module because
the chapter modules must use it while ``hal/runtime.py`` imports them to compose ``Runtime``: defining
it there would make the chapters import a half-initialised module.
"""
from __future__ import annotations

import functools
from typing import Callable, TypeVar

__all__ = ["API_CALL_COST_S", "api", "is_api"]

# Modelled host cost of an API call that does not launch anything (argument checks, a driver ioctl).
API_CALL_COST_S = 1e-6

F = TypeVar("F", bound=Callable)


def api(cost: float | str | None = API_CALL_COST_S) -> Callable[[F], F]:
    """Route a public method through the runtime's choke point. ``cost``: seconds, a DeviceSpec field
    name (``"launch_overhead_s"``), or None for calls that charge nothing (init, finalize)."""
    def wrap(fn: F) -> F:
        name = fn.__name__

        @functools.wraps(fn)
        def call(self, *args, **kwargs):
            return self._dispatch(name, fn, cost, args, kwargs)
        call.__acl_api__ = True
        return call  # type: ignore[return-value]
    return wrap


def is_api(attr: object) -> bool:
    """True for a method decorated with :func:`api` (a public ACL call)."""
    return getattr(attr, "__acl_api__", False)
