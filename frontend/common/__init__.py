"""``mindspore.common``: dtype, initializer, seed, jit."""
from . import dtype, initializer
from .api import jit
from .seed import get_seed, set_seed
