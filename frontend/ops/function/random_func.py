"""``mindspore.ops.function.random_func``: MindSpore's random functions. None is supported yet
(``ops.dropout`` lives in ``nn_func``, as in MindSpore); a name imported from here raises
UnsupportedOpError, which names ``ascendemu api-coverage``."""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.random_func", name, __all__)
