"""Record what real MindSpore 2.10 says of out-of-range Gather and GatherD indices
(tests/fixtures/gather_errors.json).

Run with an interpreter that has MindSpore (never a dependency of the project)::

    /path/to/venv-with-mindspore/bin/python tools/record_gather_errors.py

Per case: the op, the params' shape, the indices, the axis (GatherD: dim), and the error type and first line of the message
MindSpore's CPU kernel raises (its Ascend kernel raises an AI Core exception at synchronisation, whose
text is the driver's, so the CPU text is the one MindSpore users read). tests/test_kernel_faults.py
checks that ascendemu raises the same type with the same text, in PyNative and GRAPH_MODE.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "gather_errors.json"
# (op, params shape, indices, axis); Gather's valid indices are [0, n), GatherD's [-n, n)
CASES = [("Gather", (4, 3), [0, 5], 0), ("Gather", (4, 3), [[1, 4]], 1), ("Gather", (4, 3), [3, 2147483647], 0),
         ("Gather", (2, 5, 3), [[0], [2]], 2), ("GatherD", (4, 3), [[0, 3, 1]] * 4, 1),
         ("GatherD", (4, 3), [[-4, 0, 0]] * 4, 1), ("GatherD", (4, 3), [[1], [-4]], 0),
         ("GatherD", (4, 3), [[-3, 2], [0, -1]], 1)]


def call(ms, op: str, x, index, axis: int):
    """The op as a model-zoo script calls it."""
    if op == "Gather":
        return ms.ops.Gather()(x, index, axis)
    return ms.ops.GatherD()(x, axis, index)


def main() -> None:
    import mindspore as ms

    records = []
    for op, shape, indices, axis in CASES:
        x = ms.Tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
        entry = {"op": op, "shape": list(shape), "indices": indices, "axis": axis}
        try:
            out = call(ms, op, x, ms.Tensor(np.array(indices, np.int32)), axis).asnumpy()
        except Exception as e:  # noqa: BLE001  a recorded verdict
            entry.update(error=type(e).__name__, message=str(e).splitlines()[0])
        else:
            entry.update(error=None, message="", output=out.tolist())
        records.append(entry)
        print(entry)
    OUT.write_text(json.dumps({"mindspore_version": ms.__version__, "cases": records}, indent=1) + "\n")


if __name__ == "__main__":
    main()
