"""The global seed behind every initializer, so that building a network is reproducible.

Unlike MindSpore (random weights unless ``set_seed`` is called) the default seed is fixed: a fresh
process always builds the same weights, which keeps examples and traces comparable run to run.
"""
from __future__ import annotations

import numpy as np

from ascendemu.errors import InvalidParamError

DEFAULT_SEED = 0

_seed = DEFAULT_SEED
_rng = np.random.default_rng(DEFAULT_SEED)


def set_seed(seed: int) -> None:
    """Restart the initializer random stream from ``seed``."""
    global _seed, _rng
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidParamError(f"set_seed: seed must be an int >= 0, got {seed!r}")
    _seed = seed
    _rng = np.random.default_rng(seed)


def get_seed() -> int:
    return _seed


def rng() -> np.random.Generator:
    return _rng
