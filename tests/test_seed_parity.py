"""Seeded weights equal real MindSpore 2.10's, bit for bit.

The oracle is tests/fixtures/seed_parity.json, recorded from real MindSpore (CPU) by
tools/record_seed_parity.py: its host generator's raw streams, every initializer after ``set_seed``
(in one sequence, so the per-fill seeds advancing is checked too), and Dense/Conv2d default
initialisation with a numpy draw between layers.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import nn
from ascendemu.frontend import state
from ascendemu.frontend.common import initializer as init_mod
from ascendemu.kernels.ops import random as host

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "seed_parity.json").read_text())
HOST_FUNCS = {
    "_random_uniform": lambda seed, n, a, b: host.host_uniform(seed, (n,), a, b),
    "_random_normal": lambda seed, n, mean, sigma: host.host_normal(seed, (n,), mean, sigma),
    "_truncated_normal": lambda seed, n, a, b, mean, sigma: host.host_truncated_normal(seed, (n,), a, b, mean,
                                                                                        sigma),
}


def bits(x) -> list[int]:
    return np.asarray(x, np.float32).ravel()[:FIXTURE["first"]].view(np.uint32).tolist()


@pytest.mark.parametrize("case", FIXTURE["host"], ids=lambda c: f"{c['fn']}-{c['seed']}")
def test_host_generator_streams(case):
    assert bits(HOST_FUNCS[case["fn"]](case["seed"], case["size"], *case["args"])) == case["bits"]


@pytest.mark.parametrize("case", FIXTURE["edges"], ids=lambda c: f"{c['fn']}-{c['seed']}-{c['start']}")
def test_host_generator_edges(case):
    """Box-Muller at u1 = 0: MindSpore raises u1 to 1e-7, a finite value, not infinity."""
    got = HOST_FUNCS[case["fn"]](case["seed"], case["size"], *case["args"])[case["start"]:]
    assert np.isfinite(got).all() and bits(got) == case["bits"]


@pytest.mark.parametrize("seed", sorted(FIXTURE["initializers"]))
def test_initializers_after_set_seed(seed):
    ms.set_seed(int(seed))
    for row in FIXTURE["initializers"][seed]:
        cls = getattr(init_mod, row["init"])
        got = init_mod.initializer(cls(**row["kwargs"]), row["shape"], ms.float32).asnumpy()
        assert got.shape == tuple(row["shape"]), row
        assert bits(got) == row["bits"], row


def _layers() -> dict[str, list[int]]:
    """As the recorder: Dense, Conv2d, a numpy draw (it shifts the next fill's seed), a float16 Dense."""
    d1 = nn.Dense(4, 3)
    c1 = nn.Conv2d(2, 3, 3, has_bias=True)
    np.random.rand(2)
    d2 = nn.Dense(3, 2, dtype=ms.float16)
    got = {}
    for prefix, cell in (("d1", d1), ("c1", c1), ("d2", d2)):
        for p in cell.get_parameters():
            got[f"{prefix}.{p.name.split('.')[-1]}"] = bits(p.asnumpy().astype(np.float32))
    return got


@pytest.mark.parametrize("seed", sorted(FIXTURE["layers"]))
def test_layer_default_init_after_set_seed(seed):
    ms.set_seed(int(seed))
    assert _layers() == FIXTURE["layers"][seed]


def test_unseeded_process_builds_what_numpy_seed_zero_gives():
    """Our one deviation: with no set_seed the seeds come from a private numpy state seeded 0 (a
    fresh process repeats), which is what MindSpore builds after np.random.seed(0), up to the first
    draw from numpy's global state (the private state does not see it, so d2 differs)."""
    state.reset()
    np.random.seed(123)                   # the private default state ignores numpy's global one
    got, want = _layers(), FIXTURE["default_np_seed0"]
    before_numpy_draw = [k for k in want if not k.startswith("d2.")]
    assert {k: got[k] for k in before_numpy_draw} == {k: want[k] for k in before_numpy_draw}
    assert got["d2.weight"] != want["d2.weight"]


def test_set_seed_reseeds_numpy_and_repeats_weights():
    ms.set_seed(7)
    first = nn.Dense(5, 2).weight.asnumpy()
    ms.set_seed(7)
    assert np.array_equal(nn.Dense(5, 2).weight.asnumpy(), first)
    assert not np.array_equal(nn.Dense(5, 2).weight.asnumpy(), first)


@pytest.mark.parametrize("p", [-0.97, -0.5, -1e-6, 0.0, 0.3, 0.9, 0.995])
def test_erfinv_inverts_erf(p):
    import math
    x = float(host.erfinv(np.array([p]))[0])
    assert math.erf(x) == pytest.approx(p, abs=1e-15)


def test_initializer_errors_match_mindspore():
    # as MindSpore's, initializer() is lazy: a bad fill raises when it runs (init_data, asnumpy)
    lazy = init_mod.initializer("he_uniform", [3])
    assert lazy.has_init and lazy.shape == (3,)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        lazy.init_data()
    with pytest.raises(ValueError, match="'mode' fan_mid not supported"):
        init_mod.initializer(init_mod.HeUniform(mode="fan_mid"), [3, 4]).asnumpy()
    with pytest.raises(ValueError, match="sigma < 0"):
        init_mod.initializer(init_mod.Normal(sigma=-1.0), [3, 4]).init_data()
    with pytest.raises(ValueError, match="'distribution' must be uniform"):
        init_mod.VarianceScaling(distribution="truncated_norm")
