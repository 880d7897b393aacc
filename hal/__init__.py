"""``ascendemu.hal``: the host side of the emulated accelerator, shaped like Huawei's ACL.

Public modules:

* ``hccl``: the collective communication chapter (communicators, AllReduce ...);
* ``runtime``: the process-wide :class:`~.runtime.Runtime` (choke point, init/finalize) and its
  module-level API (``from ascendemu.hal import runtime as rt; rt.init(); rt.malloc(...)``);
* ``devices``, ``streams``, ``memory``, ``launch``: the runtime's chapters, one mixin each;
* ``api``: the ``@api`` marker that routes a public call through the choke point;
* ``steps``: the typed schedule a graph launch sinks (Launch, RecordEvent, WaitEvent, MemcpyAsync, Communicate);
* ``codes``: the memcpy kinds and HCCL data types steps carry and the chapters interpret;
* ``acl``: the pyACL layer (results plus ACL return codes);
* ``record``: the trace recorder at the choke point (``.aetrace``) and the figures a run measured;
* ``kernel``: the uniform kernel ABI; ``binary``, ``meta``, ``elf``, ``identity``, ``loader``: kernel
  binaries (layout, verification, loading without numba).

Nothing is imported here: ``import ascendemu.hal`` stays free of numpy, SimPy, llvmlite and numba;
each module is imported when used.
"""
__all__ = ["acl", "api", "binary", "codes", "devices", "elf", "hccl", "identity", "kernel", "launch", "loader", "memory", "meta",
           "record", "runtime", "steps", "validate", "streams"]
