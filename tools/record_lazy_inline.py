"""Record real MindSpore 2.10's ``mindspore.lazy_inline``: what a decorated Cell carries and the errors it raises.

Run with the real MindSpore, from outside the repository (so ``mindspore`` is the real one):

    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_lazy_inline.py /work/main/tests/fixtures/lazy_inline.json
"""
from __future__ import annotations

import json
import sys

import mindspore as ms
from mindspore import nn


def _error(call) -> dict:
    try:
        call()
    except Exception as error:            # the oracle's verdict, whatever it is
        return {"type": type(error).__name__, "message": str(error).split(" File: ")[0].split(" line: ")[0]}
    return {"type": None, "message": ""}


def main(path: str) -> None:
    class Block(nn.Cell):
        @ms.lazy_inline
        def __init__(self, width, scale=2):
            super().__init__()
            self.dense = nn.Dense(width, width)
            self.scale = scale

        def construct(self, x):
            return self.dense(x) * self.scale

    class Front(nn.Cell):
        @ms.lazy_inline(policy="front")
        def __init__(self):
            super().__init__()

        def construct(self, x):
            return x

    def bad_policy():
        class Bad(nn.Cell):
            @ms.lazy_inline(policy="back")
            def __init__(self):
                super().__init__()

            def construct(self, x):
                return x
        Bad()

    def bad_attrs():
        class Bad(nn.Cell):
            @ms.lazy_inline(attrs=3)
            def __init__(self):
                super().__init__()

            def construct(self, x):
                return x
        Bad()

    def on_class():
        @ms.lazy_inline
        class Bad(nn.Cell):
            pass

    def on_method():
        class Bad(nn.Cell):
            @ms.lazy_inline
            def construct(self, x):
                return x

    block = Block(4)
    record = {
        "same_object": ms.lazy_inline is ms.common.lazy_inline,
        "cell_init_args": block.cell_init_args,
        "keyword_cell_init_args": Block(4, scale=3).cell_init_args,
        "front_no_inline": Front().no_inline,
        "parameter_names": [p.name for p in block.get_parameters()],
        "errors": {"policy": _error(bad_policy), "attrs": _error(bad_attrs), "class": _error(on_class),
                   "method": _error(on_method)},
    }
    with open(path, "w") as f:
        json.dump(record, f, indent=1)
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
