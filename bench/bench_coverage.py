"""Coverage of MindSpore 2.10's public API: names served per namespace, conformance samples, dtypes.

Prints one table for bench/README.md: per group of ``ascendemu api-coverage`` (measured against the
signature table recorded from real MindSpore 2.10), the names served / MindSpore's (the excluded
ones left out), how many served names have conformance samples recorded from real MindSpore
(tests/fixtures/conformance/*.json) and how many samples; then the dtypes the device serves.

Run: python bench/bench_coverage.py
"""
from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascendemu.frontend.api_coverage import coverage  # noqa: E402
from ascendemu.kernels.signature import DTYPES  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "conformance"


def recorded_samples() -> collections.Counter:
    """Samples per qualified name over every family's recorded index."""
    counts: collections.Counter = collections.Counter()
    for index in sorted(FIXTURES.glob("*.json")):
        for key in json.loads(index.read_text())["samples"]:
            counts[key.rsplit("#", 1)[0]] += 1
    return counts


def main() -> None:
    samples = recorded_samples()
    print("| namespace | served / MindSpore 2.10 | share | excluded | served with samples | samples |")
    print("|---|---|---|---|---|---|")
    for g in coverage():
        sampled = [q for q in g.served if samples.get(q)]
        print(f"| {g.group} | {len(g.served)} / {g.total - len(g.excluded)} | {100 * g.share:.1f}% | "
              f"{len(g.excluded)} | {len(sampled)} | {sum(samples[q] for q in sampled)} |")
    print(f"\ndevice dtypes ({len(DTYPES)}): {', '.join(DTYPES)}")


if __name__ == "__main__":
    main()
