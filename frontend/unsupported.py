"""The errors for MindSpore names outside the supported subset (``ops.Foo``, ``nn.Foo``, ``mindspore.Foo``).

``UnsupportedOpError`` is an AttributeError (so ``hasattr`` and ``getattr(..., default)`` keep working)
and an AclError (FeatureNotSupportedError, code 207000) whose message names the missing API, the
closest supported names, and ``ascendemu api-coverage``, which lists what each namespace serves (the
whole list, a few KB, buried the one line that mattered). A module's ``__getattr__`` raises it through
:func:`unsupported`.

``from mindspore.nn import Foo`` reads the attribute too, but Python turns any AttributeError raised
there into a bare ``ImportError: cannot import name 'Foo' from 'mindspore.nn' (<our file>)``. So when
the attribute is read by a ``from ... import`` statement, :func:`unsupported` returns an
``UnsupportedImportError`` instead: the same message and code, as an ImportError.
"""
from __future__ import annotations

import difflib
import dis
import sys
from typing import Iterable

from ascendemu.errors import FeatureNotSupportedError

__all__ = ["UnsupportedOpError", "UnsupportedImportError", "unsupported"]

_IMPORT_FROM = dis.opmap["IMPORT_FROM"]
CLOSE_MATCHES = 3           # how many similar supported names the message suggests
COVERAGE_VERB = "ascendemu api-coverage"


class UnsupportedOpError(FeatureNotSupportedError, AttributeError):
    pass


class UnsupportedImportError(FeatureNotSupportedError, ImportError):
    pass


def _read_by_import_from(depth: int) -> bool:
    """True when the frame ``depth`` levels above the caller executes ``from module import name``."""
    try:
        frame = sys._getframe(depth + 1)
    except ValueError:
        return False
    return 0 <= frame.f_lasti < len(frame.f_code.co_code) and frame.f_code.co_code[frame.f_lasti] == _IMPORT_FROM


def unsupported(module: str, name: str, supported: Iterable[str], hint: str = "") -> Exception:
    """The error for ``module.name``, to raise from that module's ``__getattr__`` (directly: the
    frame that read the attribute is taken to be the one above ``__getattr__``)."""
    if name.startswith("__"):
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    names = sorted(supported)
    close = difflib.get_close_matches(name, names, n=CLOSE_MATCHES)
    similar = f"similar supported names: {', '.join(close)}; " if close else ""
    message = (f"{module}.{name} is not supported by the emulated Ascend front end; {hint}{'; ' if hint else ''}"
               f"{similar}`{COVERAGE_VERB}` lists the names each namespace serves ({module}: {len(names)})")
    if _read_by_import_from(2):
        return UnsupportedImportError(message)
    return UnsupportedOpError(message)
