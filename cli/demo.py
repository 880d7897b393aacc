"""``ascendemu demo``: one small job through the whole stack, with the summary a user reads.

Builds (or reuses) Square and Add kernels in a kernel cache, runs y = x*x on stream 1 and
z = y + x on stream 2 behind an event, checks the result against numpy and prints both clocks.

The demo leaves nothing behind in the directory it runs in: its cache is a private temporary
directory, removed afterwards, unless ``--cache DIR`` or ``MS_COMPILER_CACHE_PATH`` names one to
keep (then a second demo reuses the kernels).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time

import numpy as np

from ascendemu.kernels.signature import OpSignature, TensorDesc
from ascendemu.units import format_bytes

N = 1 << 20


def run_demo(trace: str | None = None, cache_dir: str | None = None) -> int:
    """Run the demo; ``cache_dir`` (else ``MS_COMPILER_CACHE_PATH``) keeps its kernels, else a
    temporary cache is used and removed."""
    from ascendemu.cache.layout import CACHE_PATH_ENV

    scratch = None
    if cache_dir is None and not os.environ.get(CACHE_PATH_ENV):
        scratch = tempfile.mkdtemp(prefix="ascendemu-demo-")
        cache_dir = scratch
    try:
        return _demo(trace, cache_dir, temporary=scratch is not None)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _demo(trace: str | None, cache_dir: str | None, temporary: bool) -> int:
    from ascendemu.cache.kernel_meta import KernelCache
    from ascendemu.hal import runtime as rt

    wall0 = time.perf_counter()
    cache = KernelCache(cache_dir)
    desc = TensorDesc((N,), "float32")
    square, add = cache.get_many([OpSignature.make("Square", [desc]), OpSignature.make("Add", [desc, desc])])
    wall_build = time.perf_counter() - wall0

    rt.init(trace=trace is not None)
    rt.set_device(0)
    s1, s2 = rt.create_stream(), rt.create_stream()
    x = np.linspace(-2, 2, N, dtype=np.float32)
    dx, dy, dz = rt.malloc(x.nbytes), rt.malloc(x.nbytes), rt.malloc(x.nbytes)
    start, done, y_ready = rt.create_event(), rt.create_event(), rt.create_event()
    rt.memcpy_async(dx, x.nbytes, x, x.nbytes, rt.MEMCPY_HOST_TO_DEVICE, s1)
    rt.record_event(start, s1)
    rt.launch_kernel(square, square.block_dim, [dx, dy], s1)
    rt.record_event(y_ready, s1)
    rt.stream_wait_event(s2, y_ready)
    rt.launch_kernel(add, add.block_dim, [dy, dx, dz], s2)
    rt.record_event(done, s2)
    z = np.empty_like(x)
    rt.memcpy_async(z, z.nbytes, dz, z.nbytes, rt.MEMCPY_DEVICE_TO_HOST, s2)
    rt.synchronize_device()
    ok = np.allclose(z, x * x + x, rtol=1e-6)
    kernel_ms = rt.event_elapsed_time(start, done)
    stats = rt.mem_stats()
    print(f"demo: z = x*x + x over {N} float32 on {rt.get_runtime().node.spec.name}: "
          f"{'matches numpy' if ok else 'MISMATCH vs numpy'}")
    print(f"  {cache.summary()}" + (" (a temporary cache, removed after the demo; --cache DIR keeps it)"
                                     if temporary else ""))
    print(f"  kernels: square blockDim {square.block_dim}, add blockDim {add.block_dim}; "
          f"simulated device time for both: {kernel_ms:.3f} ms (device clock), "
          f"whole run {rt.device_time() * 1e3:.3f} ms (device clock)")
    print(f"  host wall time: build/load {wall_build:.2f} s, total {time.perf_counter() - wall0:.2f} s")
    print(f"  device memory: used {format_bytes(stats.used)}, peak {format_bytes(stats.peak_used)}, "
          f"actual peak (with fragments) {format_bytes(stats.actual_peak)}")
    if trace:
        print(f"  trace: {rt.write_trace(trace)} (open in https://ui.perfetto.dev)")
    rt.finalize()
    return 0 if ok else 1
