"""The global seed behind every initializer and random op, so that building and training a network
is reproducible.

Initializers draw as MindSpore's do: each fill takes a 64-bit seed from numpy's global random state
(:func:`initializer_seed`, MindSpore's ``_numpy_seed``), which ``set_seed`` seeds, so a seeded script
builds MindSpore's very weights (and numpy draws between layers shift them as in MindSpore). Unlike
MindSpore (random weights unless ``set_seed`` is called) the default is fixed: before any ``set_seed``
the seeds come from a private numpy state seeded with ``DEFAULT_SEED`` (the weights MindSpore builds
after ``np.random.seed(0)``), so a fresh process always builds the same weights and draws the same
dropout masks, which keeps examples and traces comparable run to run.

Random ops take their seed pair from :func:`graph_seed`, MindSpore's ``_get_graph_seed``: the global
seed and a per-kernel op seed that advances with every op created, so two dropout layers draw
different masks; ``set_seed`` restarts the op seeds, so a rerun draws the same ones.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ascendemu.errors import check_int

DEFAULT_SEED = 0
# MindSpore's constants: the global seed 0 stands for this one; op seeds advance by a fixed key step
DEFAULT_GRAPH_SEED = 87654321
MAXINT32 = 2**31 - 1
OP_SEED_STEP = 3528531795 ^ 3449720151

# MindSpore's _numpy_seed: an initializer's seed is numpy's randint(1, 2^63) as int64
INIT_SEED_LOW, INIT_SEED_HIGH = 1, 1 << 63

_seed = DEFAULT_SEED
_default_numpy = np.random.RandomState(DEFAULT_SEED)   # numpy's stand-in until set_seed is called
_op_seeds: dict[tuple[str, int], int] = {}        # (kernel, op seed given) -> the next op seed
_call_sites: dict[tuple, Any] = {}                 # a functional random call site's op (see call_site_op)
# Who else set_seed seeds (the dataset pipeline registers its config.set_seed: it sits above this module)
_seed_listeners: list[Callable[[int], None]] = []
_explicit_seed: int | None = None                  # the last set_seed since the process (or reset) began


def add_seed_listener(listener: Callable[[int], None]) -> None:
    """Have every later ``set_seed(s)`` call ``listener(s)``; if a seed was already set, call it now with it."""
    _seed_listeners.append(listener)
    if _explicit_seed is not None:
        listener(_explicit_seed)


def _reset() -> None:
    """The seeds as a fresh process starts them (``ascendemu.frontend.state.reset``); unlike ``set_seed``,
    numpy's global random state is left alone, as a fresh process leaves it."""
    global _seed, _default_numpy, _explicit_seed
    _seed = DEFAULT_SEED
    _explicit_seed = None
    _default_numpy = np.random.RandomState(DEFAULT_SEED)
    _op_seeds.clear()
    _call_sites.clear()


def set_seed(seed: int) -> None:
    """Restart the initializer random stream, the random ops' seeds and their generators from ``seed``;
    as MindSpore's ``set_seed``, also seed numpy's global random state (``np.random.seed``: the zoo's
    weight initialisers draw from it) and the dataset pipeline (``dataset.config.set_seed``)."""
    global _seed, _explicit_seed
    _seed = _explicit_seed = check_int(seed, "set_seed: seed", minimum=0, maximum=2**32 - 1)
    np.random.seed(_seed)
    for listener in _seed_listeners:
        listener(_seed)
    _op_seeds.clear()
    _call_sites.clear()


def get_seed() -> int:
    return _seed


def initializer_seed() -> int:
    """The seed of the next initializer fill (MindSpore's ``_numpy_seed``): a draw from numpy's
    global random state once ``set_seed`` was called (as MindSpore, which leaves it to numpy), from
    the private default state before."""
    state = np.random if _explicit_seed is not None else _default_numpy
    return int(state.randint(low=INIT_SEED_LOW, high=INIT_SEED_HIGH, dtype=np.int64))


def graph_seed(op_seed: int | None, kernel: str) -> tuple[int, int]:
    """The (global, op) seed pair of a random op of ``kernel`` created now (MindSpore's
    ``_get_graph_seed``); each call advances the op seed. MindSpore returns (0, 0) when no seed was
    set and lets the kernel pick a random one; here a seed is always set, so runs repeat."""
    op = 0 if op_seed is None else check_int(op_seed, f"{kernel}: seed", minimum=0)
    current = _op_seeds.setdefault((kernel, op), op)
    _op_seeds[(kernel, op)] = current + OP_SEED_STEP
    return (_seed or DEFAULT_GRAPH_SEED) % MAXINT32, current % MAXINT32


def call_site_op(key: tuple, make: Callable[[], Any]) -> Any:
    """The random op of a functional call site of a captured graph (``key``: the graph's name, the
    call's index among its random calls and the call's arguments), made once: each step's capture
    reuses its generator state, as MindSpore's compiled graph keeps one kernel per call site.
    ``set_seed`` forgets them."""
    op = _call_sites.get(key)
    if op is None:
        op = _call_sites[key] = make()
    return op
