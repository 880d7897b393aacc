"""Runtime chapter "devices and contexts" (aclrtSetDevice, aclrtCreateContext, ...).

A *context* binds the calling thread's work to one device and owns that device's default stream;
``set_device`` makes (or reuses) a device's default context current, and every call that needs "the
current device" goes through :meth:`DevicesMixin._cur_device`. This is one of the mixins composed into
:class:`ascendemu.hal.runtime.Runtime` (one per ACL chapter, so each file reads like that chapter of
the ACL reference); they share the runtime's state through ``self`` and call each other's helpers
(here: streams' ``_new_stream`` and ``_sync_device``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ascendemu.errors import AclError, ContextNullError, InvalidDeviceError, check_int

from .api import api

if TYPE_CHECKING:
    from ascendemu.device.model import Device
    from ascendemu.device.system import Node

__all__ = ["Context", "DevicesMixin"]


@dataclass
class Context:
    handle: int
    device_id: int
    default_stream: int
    destroyed: bool = False


class DevicesMixin:
    """Devices and contexts of the runtime."""

    node: Node | None
    contexts: dict[int, Context]
    current_context: Context | None

    def _reset_devices(self) -> None:
        self.current_context = None
        self.contexts = {}

    @api()
    def get_device_count(self) -> int:
        return len(self.node.devices)

    def _device(self, device_id: int) -> Device:
        n = len(self.node.devices)
        check_int(device_id, "device id", minimum=0, maximum=n - 1, error=InvalidDeviceError,
                  hint=f"this node has devices 0..{n - 1} (init(device_count=...) to change)")
        return self.node.devices[device_id]

    @api()
    def set_device(self, device_id: int) -> None:
        """Make ``device_id`` current, creating its default context (and default stream) on first use."""
        dev = self._device(device_id)
        for ctx in self.contexts.values():
            if ctx.device_id == device_id and not ctx.destroyed:
                self.current_context = ctx
                return
        self.current_context = self._new_context(dev)

    @api()
    def reset_device(self, device_id: int) -> None:
        """Wait for the device, then release its streams, events and memory.

        Like aclrtResetDevice it always succeeds once ``device_id`` is valid (the only check, made
        before anything changes), so it never leaves a half-reset device: every stream of the device
        runs what it can, each on its own (an error one stream reports, such as a strict-mode race or a
        kernel fault, does not stop the others, and is dropped, not reported); the work that can never
        finish (a wait on an event nothing will record, a collective behind it) is then dropped
        (``Stream.drop``: it never runs or resumes, and counts as finished), so nothing uses the
        memory any more when it is freed. Afterwards the device is clean."""
        dev = self._device(device_id)
        queues = self._queues_of(dev)
        for s in queues:
            try:
                self._drain(s, what=f"reset of device {dev.id}")
            except AclError:         # a stream that cannot finish, or reports an error: dropped below
                pass
        for s in queues:
            s.drop()
        # the device's own tables list exactly its handles in the runtime's
        for owned, registry, kind in ((dev.streams, self.streams, "stream"), (dev.events, self.events, "event")):
            for h, obj in owned.items():
                obj.destroyed = True
                del registry[h]
                self._destroyed[h] = kind
            owned.clear()
        for addr in list(dev.memory.allocations):
            dev.memory.free(addr)
        if dev.trace is not None:
            dev.trace_memory(self.node.host_time)
        for ctx in self.contexts.values():
            if ctx.device_id == device_id:
                ctx.destroyed = True
        if self.current_context and self.current_context.device_id == device_id:
            self.current_context = None

    @api()
    def get_device(self) -> int:
        return self._ctx().device_id

    def _new_context(self, dev: Device) -> Context:
        stream = self._new_stream(dev)
        ctx = Context(self._handle(), dev.id, stream)
        self.contexts[ctx.handle] = ctx
        return ctx

    @api()
    def create_context(self, device_id: int) -> int:
        ctx = self._new_context(self._device(device_id))
        self.current_context = ctx
        return ctx.handle

    def _context(self, context: int) -> Context:
        ctx = self.contexts.get(context)
        if ctx is None or ctx.destroyed:
            raise ContextNullError(f"context {context!r} does not exist or was destroyed")
        return ctx

    @api()
    def destroy_context(self, context: int) -> None:
        """Destroy the context and its default stream after its tasks finish, like aclrtDestroyContext.
        The wait comes first: if it fails (507046, a wait that can never end; or an error a task of
        the stream reports) the context and its stream stay as they were, usable, and the call can be
        repeated once the stream can finish (or reset_device drops its work)."""
        ctx = self._context(context)
        stream = self.streams.get(ctx.default_stream)
        if stream is not None:
            self._release_stream(stream)      # waits first; raises having changed nothing
        ctx.destroyed = True
        if self.current_context is ctx:
            self.current_context = None

    @api()
    def set_current_context(self, context: int) -> None:
        self.current_context = self._context(context)

    def _ctx(self) -> Context:
        if self.current_context is None or self.current_context.destroyed:
            raise ContextNullError("no current context: call set_device(device_id) or create_context() first")
        return self.current_context

    def _cur_device(self) -> Device:
        return self.node.devices[self._ctx().device_id]
