"""``mindspore.ops.operations.random_ops``: MindSpore's random primitives. None is supported yet
(``ops.Dropout`` lives in ``nn_ops``, as in MindSpore); a name imported from here raises
UnsupportedOpError, which names ``ascendemu api-coverage``."""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.random_ops", name, __all__)
