"""Byte units (bottom layer, imports nothing of ascendemu): the binary size constants and the one
formatter every report uses for a byte count.

``format_bytes(512) == "512 B"``, ``format_bytes(1536) == "1.50 KiB"``, ``format_bytes(2 << 30) == "2.00 GiB"``.
"""
from __future__ import annotations

import operator

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
TiB = 1 << 40

_UNITS = (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB))


def format_bytes(n: int) -> str:
    """``n`` bytes in binary units: below 1 KiB the exact count (``"512 B"``), else two decimals of the
    largest unit it reaches (``"1.50 KiB"``, ``"3.25 MiB"``, ``"2.00 GiB"``), never ``"1024.00 KiB"``."""
    n = operator.index(n)          # ints and numpy integers; a float or a bool-like string is a mistake
    sign, size = ("-" if n < 0 else ""), abs(n)
    if size < KiB:
        return f"{sign}{size} B"
    for name, unit in _UNITS:
        # compare what would be printed, so 1 MiB - 1 B reads "1.00 MiB", not "1024.00 KiB"
        if round(size / unit, 2) >= 1:
            return f"{sign}{size / unit:.2f} {name}"
    raise AssertionError("unreachable: size >= KiB")
