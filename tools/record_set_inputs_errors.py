"""Record real MindSpore's dynamic-shape input signatures for tests/test_dynamic_shape.py.

``Tensor(shape=[None, 3], dtype=float32)``: its shape, repr and the error reading its data; and the
errors a GRAPH_MODE call of a cell with ``set_inputs(Tensor(shape=[None, 4]))`` raises for an input of
another rank, dtype or static dim (type and message, without MindSpore's C++ call stack). Run it with
real MindSpore (CI never needs it)::

    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_set_inputs_errors.py
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "set_inputs_errors.json"
# MindSpore appends its C++ call stack after this line; the message is what comes before it
STACK_SEPARATOR = "\n\n----"


def main() -> None:
    import mindspore as ms
    from mindspore import Tensor, nn

    ms.set_context(mode=ms.GRAPH_MODE)
    t = Tensor(shape=[None, 3], dtype=ms.float32)
    try:
        t.asnumpy()
        no_data = ""
    except ValueError as exc:
        no_data = str(exc)
    net = nn.Dense(4, 3)
    net.set_inputs(Tensor(shape=[None, 4], dtype=ms.float32))
    errors = {}
    for case, bad in {"rank": np.ones((2, 4, 1), np.float32), "dtype": np.ones((2, 4), np.int32),
                      "static_dim": np.ones((2, 5), np.float32)}.items():
        try:
            net(Tensor(bad))
        except (TypeError, ValueError) as exc:
            errors[case] = {"type": type(exc).__name__, "message": str(exc).split(STACK_SEPARATOR)[0]}
    doc = {"mindspore": ms.__version__, "placeholder": {"shape": list(t.shape), "repr": repr(t), "asnumpy": no_data},
           "errors": errors}
    FIXTURE.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {FIXTURE}")


if __name__ == "__main__":
    main()
