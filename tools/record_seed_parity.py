"""Record real MindSpore 2.10's seeded numbers into tests/fixtures/seed_parity.json.

Run with real MindSpore (never a dependency of the tests), from outside the repo:
    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_seed_parity.py
Every value is stored as float32 bits (uint32) so the test compares bit for bit; the first
``FIRST`` values of each tensor are kept to keep the fixture small.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

FIRST = 16                                   # values kept per tensor
SEEDS = (1, 42, 2024)
OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "seed_parity.json"

# initializer cases, drawn in this order after one set_seed (so later cases also check the stream advancing)
INITS = [
    ("Normal", {}, [4, 5]),
    ("Normal", {"sigma": 2.0, "mean": 0.5}, [3, 7]),
    ("TruncatedNormal", {}, [4, 5]),
    ("TruncatedNormal", {"sigma": 0.5, "mean": 0.1, "a": -0.2, "b": 1.0}, [5, 4]),
    ("Uniform", {}, [4, 5]),
    ("Uniform", {"scale": 0.3}, [17]),
    ("HeUniform", {}, [3, 2, 3, 3]),
    ("HeUniform", {"negative_slope": 0.2, "mode": "fan_out"}, [6, 4]),
    ("HeNormal", {"mode": "fan_out", "nonlinearity": "relu"}, [4, 6]),
    ("XavierUniform", {}, [5, 4]),
    ("XavierNormal", {"gain": 2}, [3, 2, 2, 2]),
    ("VarianceScaling", {}, [4, 5]),
    ("VarianceScaling", {"scale": 2.0, "mode": "fan_avg", "distribution": "untruncated_normal"}, [4, 5]),
    ("VarianceScaling", {"mode": "fan_out", "distribution": "uniform"}, [4, 5]),
    ("One", {}, [3]),
    ("Zero", {}, [3]),
    ("Constant", {"value": 0.25}, [3]),
    ("Identity", {}, [3, 4]),
    ("Normal", {}, [2, 3]),                  # after the deterministic ones: they draw no seed
]
# raw host generator calls: (function, seed, size, args)
HOST = [
    ("_random_uniform", 1, 20, [0.0, 1.0]),
    ("_random_uniform", (1 << 32) + 7, 20, [-0.5, 1.5]),
    ("_random_normal", 5, 21, [0.0, 1.0]),
    ("_random_normal", 12345678901234, 20, [0.5, 2.0]),
    ("_truncated_normal", 3, 20, [-2.0, 2.0, 0.0, 1.0]),
    ("_truncated_normal", 99, 20, [-1.0, 2.0, 0.5, 2.0]),
]

# edge cases: (function, seed, size, args, start): the values from index start on. Seed 4's word pair
# 1166403 has u1 = 0 (low 23 bits zero): Box-Muller raises it to 1e-7 instead of drawing infinity
EDGES = [("_random_normal", 4, 2 * 1166403 + 4, [0.0, 1.0], 2 * 1166403 - 2)]


def bits(x) -> list[int]:
    return np.asarray(x, np.float32).ravel()[:FIRST].view(np.uint32).tolist()


def record() -> dict:
    import mindspore as ms
    from mindspore import nn
    from mindspore import _c_expression
    from mindspore.common import initializer as init_mod

    out = {"mindspore_version": ms.__version__, "first": FIRST,
           "note": ("CPU MindSpore 2.10. Initializers draw a seed np.random.randint(1, 2**63, int64) from "
                    "numpy's global state (set_seed seeds it) and fill from the host Philox-4x32-10 stream "
                    "(key = seed, counter = (block, seed)); the same host code runs on Ascend, so this is "
                    "what we follow. Values are float32 bits."),
           "host": [], "initializers": {}, "layers": {}, "default_np_seed0": {}}
    for fn, seed, size, args in HOST:
        arr = np.zeros(size, np.float32)
        getattr(_c_expression, fn)(seed, arr, *args)
        out["host"].append({"fn": fn, "seed": seed, "size": size, "args": args, "bits": bits(arr)})
    out["edges"] = []
    for fn, seed, size, args, start in EDGES:
        arr = np.zeros(size, np.float32)
        getattr(_c_expression, fn)(seed, arr, *args)
        out["edges"].append({"fn": fn, "seed": seed, "size": size, "args": args, "start": start,
                             "bits": bits(arr[start:])})
    for seed in SEEDS:
        ms.set_seed(seed)
        rows = []
        for name, kwargs, shape in INITS:
            t = init_mod.initializer(getattr(init_mod, name)(**kwargs), shape, ms.float32)
            rows.append({"init": name, "kwargs": kwargs, "shape": shape, "bits": bits(t.asnumpy())})
        out["initializers"][str(seed)] = rows
        ms.set_seed(seed)
        out["layers"][str(seed)] = layers(ms, nn)
    out["random_ops"] = random_ops(ms)
    np.random.seed(0)                        # no set_seed: the layers draw from numpy's global state
    out["default_np_seed0"] = layers(ms, nn)
    return out


def random_ops(ms) -> dict:
    """Known answers of the CPU random ops (reproduced bit for bit: kernels/ops/random.py). Recorded
    facts: a primitive's second call continues its stream (an odd count drops the polar method's
    spare value); ops.randn after set_seed(1) equals StandardNormal(seed=1, seed2=0) (the graph seed
    pair (1, 0) of _get_graph_seed). UniformInt values are stored as they are (int32)."""
    from mindspore import ops
    got = {"note": "CPU random ops: libstdc++ engines seeded by GetSeed(seed, seed2) (docs/ARCHITECTURE.md, "
                   "Seeds and random numbers); float values as float32 bits"}
    sn = ops.StandardNormal(seed=1, seed2=2)
    got["StandardNormal(1,2) call1"] = bits(sn((FIRST,)).asnumpy())
    got["StandardNormal(1,2) call2"] = bits(sn((FIRST,)).asnumpy())
    got["StandardNormal(1,0)"] = bits(ops.StandardNormal(seed=1, seed2=0)((FIRST,)).asnumpy())
    odd = ops.StandardNormal(seed=3, seed2=4)
    got["StandardNormal(3,4) (3,) twice"] = bits(odd((3,)).asnumpy()) + bits(odd((3,)).asnumpy())
    got["UniformReal(1,2)"] = bits(ops.UniformReal(seed=1, seed2=2)((FIRST,)).asnumpy())
    ui = ops.UniformInt(seed=1, seed2=2)
    low, high = ms.Tensor(0, ms.int32), ms.Tensor(10, ms.int32)
    got["UniformInt(1,2) [0,10) then [-5,1000003)"] = (
        ui((8,), low, high).asnumpy().tolist()
        + ui((8,), ms.Tensor(-5, ms.int32), ms.Tensor(1000003, ms.int32)).asnumpy().tolist())
    ms.set_seed(1)
    got["set_seed(1) randn"] = bits(ops.randn(FIRST).asnumpy())
    ms.set_seed(1)
    got["set_seed(1) uniform(0,1)"] = bits(ops.uniform((FIRST,), ms.Tensor(0.0), ms.Tensor(1.0)).asnumpy())
    ms.set_seed(5)
    got["set_seed(5) normal(1,2) twice"] = (bits(ops.normal((4,), ms.Tensor(1.0), ms.Tensor(2.0)).asnumpy())
                                           + bits(ops.normal((4,), ms.Tensor(1.0), ms.Tensor(2.0)).asnumpy()))
    return got


def layers(ms, nn) -> dict:
    """A Dense, a Conv2d, a numpy draw between layers (it shifts the next seed), a float16 Dense."""
    d1 = nn.Dense(4, 3)
    c1 = nn.Conv2d(2, 3, 3, has_bias=True)
    np.random.rand(2)
    d2 = nn.Dense(3, 2, dtype=ms.float16)
    got = {}
    for prefix, cell in (("d1", d1), ("c1", c1), ("d2", d2)):
        for p in cell.get_parameters():
            values = p.asnumpy()
            got[f"{prefix}.{p.name.split('.')[-1]}"] = bits(values.astype(np.float32))
    return got


if __name__ == "__main__":
    data = record()
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)
