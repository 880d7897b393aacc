"""ascendemu: an emulated Ascend-910A-like accelerator.

The package is one namespace over the repository's top-level directories (see pyproject.toml):
``ascendemu.device`` (SimPy device model, memory pool, cost model), ``ascendemu.hal`` (ACL-shaped
runtime), ``ascendemu.kernels`` (numba kernels packaged as ELF objects), ``ascendemu.cache`` (the
per-rank kernel_meta cache), ``ascendemu.traces`` (Chrome/Perfetto traces) and ``ascendemu.graph``
(graph compiler and executors). Imports stay lazy here so that a warm start never pays for numba.
"""

__version__ = "0.1.0"
