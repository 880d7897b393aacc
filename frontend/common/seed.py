"""The global seed behind every initializer, so that building a network is reproducible.

Unlike MindSpore (random weights unless ``set_seed`` is called) the default seed is fixed: a fresh
process always builds the same weights, which keeps examples and traces comparable run to run.
"""
from __future__ import annotations

import numpy as np

from ascendemu.errors import check_int

DEFAULT_SEED = 0

_seed = DEFAULT_SEED
_rng = np.random.default_rng(DEFAULT_SEED)


def set_seed(seed: int) -> None:
    """Restart the initializer random stream from ``seed``."""
    global _seed, _rng
    _seed = check_int(seed, "set_seed: seed", minimum=0)
    _rng = np.random.default_rng(seed)


def get_seed() -> int:
    return _seed


def rng() -> np.random.Generator:
    return _rng
