"""Per-op kernel generators of the operator library (see ``ascendemu.kernels.library``).

``shapes`` is pure python (shape inference); every other module imports numba and is loaded lazily.
"""
