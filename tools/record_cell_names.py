"""Record real MindSpore 2.10's parameter names and parameters_and_names() paths for the cells of
tests/fixtures/cell_names/cell_name_nets.py into tests/fixtures/cell_names/names.mindspore-2.10-cpu.json.

Run once with an installed MindSpore (never needed by the tests):
    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_cell_names.py
"""
from __future__ import annotations

import json
import pathlib
import sys

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "cell_names"

if __name__ == "__main__":
    sys.path.insert(0, str(FIXTURES))
    import cell_name_nets                                    # noqa: E402  (needs mindspore on the path)

    (FIXTURES / "names.mindspore-2.10-cpu.json").write_text(json.dumps(cell_name_nets.names(), indent=1) + "\n")
