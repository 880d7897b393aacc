"""The differential conformance suite (like PyTorch's OpInfo): per served MindSpore name, samples over
shapes (empty, 0-d, broadcasting), dtypes and attributes, recorded once on real MindSpore 2.10 CPU by
``tools/record_conformance.py`` into ``tests/fixtures/conformance/<family>.npz`` + ``.json`` and compared
with the emulator by ``tests/test_conformance.py`` in PyNative and GRAPH_MODE.

One module per family, each a ``SPECS`` list, so engineers append specs without touching each other's
lines. ``UNSAMPLED.txt`` lists the served names without samples (it may only shrink);
``KNOWN_MISMATCHES.txt`` the recorded samples where the emulator differs from MindSpore today.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from .core import Py, Sample, Spec, T, cell, merged, op

__all__ = ["FAMILIES", "Py", "Sample", "Spec", "T", "all_specs", "cell", "op", "HERE"]

HERE = Path(__file__).resolve().parent
FAMILIES = ("math", "array", "nn", "layers", "losses", "tensor", "mint", "pool", "random", "stats", "array2", "mint2",
            "linalg", "internals", "image2", "optim2", "fused", "round2",
            "complex", "random3", "linalg3", "nn3", "image3", "transforms", "comm3", "fused3",
            "sampled_tensor4", "sampled_tensor4b", "sampled_opsfn4", "sampled_opsfn4b", "sampled_prims4", "sampled_prims4b",
            "sampled_nn4", "sampled_nn4b", "mint5", "sampled_rest5", "comm5", "infra5")


def all_specs() -> dict[str, list[Spec]]:
    """Family -> its specs (each tagged with its family); a name sampled twice is an error."""
    out, seen = {}, set()
    for family in FAMILIES:
        specs = merged(importlib.import_module(f"{__name__}.{family}").SPECS)
        for spec in specs:
            if spec.name in seen:
                raise ValueError(f"{spec.name} has two specs; put all its samples in one")
            seen.add(spec.name)
            spec.family = family
        out[family] = specs
    return out
