"""Take the samples that conform now off tests/conformance/KNOWN_MISMATCHES.txt.

tests/test_conformance.py fails a test whose listed mismatches now match MindSpore ("now conforming:
take [...] (mode) off KNOWN_MISMATCHES.txt"); after a change that fixes many at once, run the suite with
its output kept and give the log here::

    .venv/bin/python -m pytest -q -n 2 tests/test_conformance.py --tb=short > /tmp/conformance.log
    .venv/bin/python tools/prune_known_mismatches.py /tmp/conformance.log

Only the lines those messages name are removed (their comments go with them); everything else is kept.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

KNOWN = Path(__file__).resolve().parents[1] / "tests" / "conformance" / "KNOWN_MISMATCHES.txt"
NOW_CONFORMING = re.compile(r"now conforming: take (\[.*?\]) \((\w+)\) off")
COMMENT = re.compile(r"(?:^|\s)#.*$")          # as tests/test_conformance.py reads the list


def conforming(log: str) -> set[tuple[str, str]]:
    """(sample id, mode) pairs the log says conform now."""
    return {(sid, m.group(2)) for m in NOW_CONFORMING.finditer(log) for sid in ast.literal_eval(m.group(1))}


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    pairs = conforming(Path(sys.argv[1]).read_text())
    kept, removed = [], 0
    for line in KNOWN.read_text().split("\n"):
        if tuple(COMMENT.sub("", line).split()) in pairs:
            removed += 1
        else:
            kept.append(line)
    KNOWN.write_text("\n".join(kept))
    print(f"{KNOWN}: {removed} of the {len(pairs)} now-conforming samples taken off")


if __name__ == "__main__":
    main()
