"""Record real MindSpore 2.10's ``mindspore.lazy_inline``: what a decorated Cell carries and the errors it raises.

Run with the real MindSpore, from outside the repository (so ``mindspore`` is the real one):

    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_lazy_inline.py /work/main/tests/fixtures/lazy_inline.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import mindspore as ms

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fixtures"))
from lazy_inline_cases import bad_calls, cells  # noqa: E402


def _error(call) -> dict:
    try:
        call()
    except Exception as error:            # the oracle's verdict, whatever it is
        return {"type": type(error).__name__, "message": str(error).split(" File: ")[0].split(" line: ")[0]}
    return {"type": None, "message": ""}


def main(path: str) -> None:
    Block, Front = cells(ms)
    bad = bad_calls(ms)
    block = Block(4)
    record = {
        "same_object": ms.lazy_inline is ms.common.lazy_inline,
        "cell_init_args": block.cell_init_args,
        "keyword_cell_init_args": Block(4, scale=3).cell_init_args,
        "front_no_inline": Front().no_inline,
        "parameter_names": [p.name for p in block.get_parameters()],
        "errors": {name: _error(call) for name, call in bad.items()},
    }
    with open(path, "w") as f:
        json.dump(record, f, indent=1)
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
