"""Record what real MindSpore 2.10 prints or raises for each case of the static-graph syntax tutorials.

A *case* is one self-contained code cell of tests/fixtures/tutorials/statements.md or static_graph.md
(mindspore-ai/docs, tutorials/source_en/compile/, copied unchanged): a cell that imports mindspore and
runs something. The tutorials show outputs too, but some are from older versions; the recorded run is
the oracle. Every case runs in one interpreter (importing MindSpore once), each from a file of its own
(both MindSpore's parser and the emulator's read a function's source with ``inspect``), with its
stdout captured at the file-descriptor level (MindSpore's graph ``print`` writes from C++).

    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_static_graph_tutorial.py

writes tests/fixtures/tutorials/static_graph_cases.mindspore-2.10-cpu.json: per case id its source,
stdout and error (``[type name, first line of the message]`` or null). tests/test_static_graph_tutorial.py
runs the same cases under ``ascendemu run`` with the same runner (:data:`RUNNER`) and compares.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tests" / "fixtures" / "tutorials"
PAGES = ("statements", "static_graph")
FIXTURE = TUTORIALS / "static_graph_cases.mindspore-2.10-cpu.json"
MINDSPORE_PYTHON = "/work/msvenv/bin/python"
# a fenced block, possibly indented (list items), written "```python" or "``` python"
CELL = re.compile(r"^( *)``` ?(python|text)\n(.*?)^\1```", re.S | re.M)

# Runs every case listed in cases.json beside it and writes results.json beside it: the same file under
# real MindSpore (recording) and under `ascendemu run` (the test), so both see the same harness.
RUNNER = r'''
import json, os, runpy, sys, tempfile, traceback
from pathlib import Path

here = Path(__file__).parent
results = {}
for case_id, path in json.loads((here / "cases.json").read_text()):
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as out:
        os.dup2(out.fileno(), 1)
        error = None
        try:
            runpy.run_path(path, run_name="__main__")
        except BaseException as e:          # noqa: BLE001 - the case's outcome is what is recorded
            text = str(e).split("-" * 20)[0]          # MindSpore's C++ call stack follows a rule
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            error = [type(e).__name__, lines[0] if lines else ""]
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        out.seek(0)
        results[case_id] = {"stdout": out.read().decode(errors="replace"), "error": error}
(here / "results.json").write_text(json.dumps(results, indent=1))
'''


def cases() -> dict[str, str]:
    """Case id (``page:N``, N counting the page's python cells from 1) -> source, for every python cell
    that imports mindspore."""
    found = {}
    for page in PAGES:
        text = (TUTORIALS / f"{page}.md").read_text()
        python = [textwrap.dedent(body) for _, kind, body in CELL.findall(text) if kind == "python"]
        for n, source in enumerate(python, 1):
            if re.search(r"^\s*(import mindspore|from mindspore)", source, re.M):
                found[f"{page}:{n}"] = source
    return found


def write_cases(directory: Path, selected: dict[str, str]) -> Path:
    """The runner and one file per case in ``directory``; returns the runner's path."""
    listing = []
    for i, (case_id, source) in enumerate(selected.items()):
        path = directory / f"case_{i:03d}.py"
        path.write_text(source)
        listing.append([case_id, str(path)])
    (directory / "cases.json").write_text(json.dumps(listing))
    runner = directory / "run_cases.py"
    runner.write_text(RUNNER)
    return runner


def results(directory: Path) -> dict[str, dict]:
    return json.loads((directory / "results.json").read_text())


def main() -> None:
    selected = cases()
    with tempfile.TemporaryDirectory() as tmp:
        runner = write_cases(Path(tmp), selected)
        subprocess.run([MINDSPORE_PYTHON, str(runner)], cwd=tmp, check=True, timeout=3600)
        recorded = results(Path(tmp))
    fixture = {case_id: {"source": source, **recorded[case_id]} for case_id, source in selected.items()}
    FIXTURE.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(fixture)} cases -> {FIXTURE}")


if __name__ == "__main__":
    sys.exit(main())
