"""``mindspore.dataset.config``: the pipeline's global seed and the worker/prefetch settings scripts set.

The seed is the one source of randomness of the pipeline: every sampler, shuffle buffer and random
transform draws from a numpy Generator keyed by (this seed, the op's height in the pipeline, the pass,
...), so a pipeline gives the same rows in the same order every run. MindSpore's default seed is
``std::mt19937``'s default, 5489, and there it means "nondeterministic"; here it is simply the default
seed, deterministic like every other seed (as the front end's initializer seed is).
Worker counts, prefetch sizes and shared memory are accepted and reported back but change nothing: the
pipeline runs on the calling thread, in row order.
"""
from __future__ import annotations

import numpy as np

from ascendemu.errors import check_int

from ..common.seed import add_seed_listener

DEFAULT_SEED = 5489                  # std::mt19937::default_seed, MindSpore's get_seed() before set_seed
INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1

# keys of the random streams that belong to no pipeline node (node streams start with the node's height)
EAGER_STREAM = 2**32 - 1            # transforms called directly on data
SPLIT_STREAM = 2**32 - 2            # the partition of a random split

_DEFAULTS = {"seed": DEFAULT_SEED, "num_parallel_workers": 8, "prefetch_size": 16, "enable_shared_mem": True}
_settings = dict(_DEFAULTS)


def _reset() -> None:
    """Every setting as a fresh process starts it (``ascendemu.frontend.state.reset``)."""
    _settings.update(_DEFAULTS)


def set_seed(seed: int) -> None:
    """Seed every sampler, shuffle and random transform of pipelines iterated from now on."""
    _settings["seed"] = check_int(seed, "dataset.config.set_seed: seed", minimum=0, maximum=UINT32_MAX)


def get_seed() -> int:
    return _settings["seed"]


add_seed_listener(set_seed)      # mindspore.set_seed seeds the pipeline too


def set_num_parallel_workers(num: int) -> None:
    _settings["num_parallel_workers"] = check_int(num, "dataset.config.set_num_parallel_workers: num",
                                                  minimum=1, maximum=INT32_MAX)


def get_num_parallel_workers() -> int:
    return _settings["num_parallel_workers"]


def set_prefetch_size(size: int) -> None:
    _settings["prefetch_size"] = check_int(size, "dataset.config.set_prefetch_size: size", minimum=1,
                                           maximum=INT32_MAX)


def get_prefetch_size() -> int:
    return _settings["prefetch_size"]


def set_enable_shared_mem(enable: bool) -> None:
    _settings["enable_shared_mem"] = bool(enable)


def get_enable_shared_mem() -> bool:
    return _settings["enable_shared_mem"]


def generator(*key: int) -> np.random.Generator:
    """The random stream of one decision site: the global seed followed by the site's key (e.g. the op's
    height, the pass, the row), so a draw never depends on how many draws other sites made."""
    return np.random.default_rng([_settings["seed"], *key])


__all__ = ["set_seed", "get_seed", "set_num_parallel_workers", "get_num_parallel_workers",
           "set_prefetch_size", "get_prefetch_size", "set_enable_shared_mem", "get_enable_shared_mem"]
