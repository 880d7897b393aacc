"""Record MindSpore's implicit type promotion of binary ops into tests/fixtures/dtype_promotion.json.

Run with an installed MindSpore (the reference, never a dependency), from outside the repo:
    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_dtype_promotion.py
For every ordered pair of tensor dtypes it records the dtype of ``ops.add(x, y)`` (or the error class), and
for every tensor dtype the dtype of ``x + scalar`` and ``scalar + x`` for a Python bool, int and float.

A worker process runs the cases in order and stops after the first refused one: in one process,
MindSpore 2.10 (CPU) was seen to refuse valid cases (float16 + float64) after refusing others
(uint16 + float16), so each refusal is recorded by a process that had refused nothing before.
"""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

# MindSpore's dtype names as the emulated device names them (complex is not served)
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64")
SCALARS = {"bool": True, "int": 2, "float": 2.5}
OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "dtype_promotion.json"


def _cases() -> list[tuple[str, str]]:
    """(part, key) of every case; a key names the left operand, then the right one."""
    cases = [("tensor_tensor", f"{a},{b}") for a in DTYPES for b in DTYPES]
    cases += [("tensor_scalar", f"{a},{k}") for a in DTYPES for k in SCALARS]
    cases += [("scalar_tensor", f"{k},{a}") for a in DTYPES for k in SCALARS]
    return cases


def _worker(cases: list[tuple[str, str]]) -> None:
    """Print one result line per case, in order, up to and including the first refused one."""
    import mindspore as ms
    import numpy as np
    from mindspore import Tensor, ops

    def tensor(name: str) -> Tensor:
        return Tensor(np.array([1, 0, 1]), getattr(ms, "bool_" if name == "bool" else name))

    print("VERSION " + ms.__version__, flush=True)
    for part, key in cases:
        a, b = key.split(",")
        try:
            if part == "tensor_tensor":
                out = ops.add(tensor(a), tensor(b))
            else:       # "bool" names both a dtype and a scalar kind: the part says which is which
                out = tensor(a) + SCALARS[b] if part == "tensor_scalar" else SCALARS[a] + tensor(b)
            out.asnumpy()       # computed now: PyNative runs ops asynchronously
            print(f"CASE {part} {key} {str(out.dtype).lower()}", flush=True)
        except Exception as exc:
            print(f"CASE {part} {key} error:{type(exc).__name__}", flush=True)
            return


def main() -> int:
    if len(sys.argv) == 2 and sys.argv[1] == "--worker":
        _worker([tuple(line.split()) for line in sys.stdin.read().splitlines() if line])
        return 0
    record: dict = {"op": "ops.add / Tensor.__add__", "dtypes": list(DTYPES),
                    "tensor_tensor": {}, "tensor_scalar": {}, "scalar_tensor": {}}
    todo = _cases()
    while todo:
        stdin = "\n".join(f"{part} {key}" for part, key in todo)
        out = subprocess.run([sys.executable, __file__, "--worker"], input=stdin, capture_output=True,
                             text=True, check=True).stdout.splitlines()
        done = 0
        for line in out:
            if line.startswith("VERSION "):
                record["mindspore"] = line.split()[1]
            elif line.startswith("CASE "):
                _, part, key, result = line.split()
                record[part][key] = result
                done += 1
        if not done:
            raise RuntimeError(f"the worker recorded nothing: {out[-5:]}")
        todo = todo[done:]
    OUT.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}: {len(record['tensor_tensor'])} pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
