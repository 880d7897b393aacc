"""``mindspore.mint.nn.layer``: mint's own Cells, by the file MindSpore defines them in."""
from __future__ import annotations

from . import activation, basic, conv, normalization, padding, pooling
from .activation import *  # noqa: F401,F403
from .basic import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403

__all__ = [*activation.__all__, *basic.__all__, *conv.__all__, *normalization.__all__, *padding.__all__,
           *pooling.__all__]
