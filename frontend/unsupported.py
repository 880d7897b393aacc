"""The error for ``ops.Foo`` / ``nn.Foo`` outside the supported subset.

It is an AttributeError (so ``hasattr`` and ``getattr(..., default)`` keep working) and an AclError
(FeatureNotSupportedError, code 207000) whose message names the op and lists what is supported.
"""
from __future__ import annotations

from typing import Iterable

from ascendemu.errors import FeatureNotSupportedError


class UnsupportedOpError(FeatureNotSupportedError, AttributeError):
    pass


def unsupported(module: str, name: str, supported: Iterable[str]) -> AttributeError:
    if name.startswith("__"):
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    return UnsupportedOpError(f"{module}.{name} is not supported by the emulated Ascend front end; "
                              f"supported: {', '.join(sorted(supported))}")
