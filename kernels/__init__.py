"""The kernel library: op signatures, the op registry and its families, launch plans, and kernel
packaging (``.o``/``.json``/``.info``). Only ``codegen`` and ``ops.nb`` import numba (cache misses)."""

__all__ = ["signature", "opdef", "registry", "library", "binary", "ops"]
