"""The public-call marker of the runtime: ``@api(cost)`` routes a method through the choke point.

Every public call of :class:`ascendemu.hal.runtime.Runtime` is decorated here, in whichever chapter
module defines it (devices, streams, memory, launch). The decorator records the call as an
:class:`ApiCall` and forwards to ``Runtime._dispatch``, the one choke point (in ``hal/runtime.py``)
where the arguments are validated, the modelled host cost is charged on the simulated host timeline
and recorders see the call. It lives in its own module because the chapter modules must use it while
``hal/runtime.py`` imports them to compose ``Runtime``: defining it there would make the chapters
import a half-initialised module.
"""
from __future__ import annotations

import functools
from typing import Callable, TypeVar

__all__ = ["API_CALL_COST_S", "ApiCall", "api", "api_call", "is_api"]

# Modelled host cost of an API call that does not launch anything (argument checks, a driver ioctl).
API_CALL_COST_S = 1e-6

F = TypeVar("F", bound=Callable)


class ApiCall:
    """One public call as the choke point sees it: its name, the undecorated method, its modelled cost,
    and ``check``, which takes the call's arguments and returns them validated and normalised, in order.

    ``check`` is bound once per call by :func:`ascendemu.hal.validate.bind_checks` when
    ``hal/runtime.py`` composes the Runtime, not here: the kinds of some parameters (the memcpy kinds,
    the malloc policies) are constants of the very chapter modules whose methods this decorator wraps,
    so they do not exist yet while it runs."""

    __slots__ = ("name", "fn", "cost", "check")

    def __init__(self, name: str, fn: Callable, cost: float | str | None) -> None:
        self.name = name
        self.fn = fn
        self.cost = cost
        self.check: Callable[..., tuple] | None = None


def api(cost: float | str | None = API_CALL_COST_S) -> Callable[[F], F]:
    """Route a public method through the runtime's choke point. ``cost``: seconds, a DeviceSpec field
    name (``"launch_overhead_s"``), or None for calls that charge nothing (init, finalize, observation)."""
    def wrap(fn: F) -> F:
        call_site = ApiCall(fn.__name__, fn, cost)

        @functools.wraps(fn)
        def call(self, *args, **kwargs):
            return self._dispatch(call_site, args, kwargs)
        call.__acl_api__ = call_site
        return call  # type: ignore[return-value]
    return wrap


def is_api(attr: object) -> bool:
    """True for a method decorated with :func:`api` (a public ACL call)."""
    return api_call(attr) is not None


def api_call(attr: object) -> ApiCall | None:
    """The :class:`ApiCall` of a method decorated with :func:`api`, else None."""
    return getattr(attr, "__acl_api__", None)
