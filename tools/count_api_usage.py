"""Count how often real MindSpore code uses each public name of the signature table.

The breadth work is ordered by use: the names real scripts call most land first. This script reads
the Python files of git repositories (snapshots of mindspore-ai/models, mindspore-lab/mindcv,
mindspore-lab/mindformers, mindspore-ai/docs, ...) with ``git grep`` at their HEAD and counts, for each
entry of ``frontend/signatures.json``, the attribute reads that name it the way MindSpore code writes
them: ``ops.X`` / ``P.X`` / ``F.X`` (ops, operations, functional), ``nn.X``, ``mint.X``,
``mint.nn.X``, ``mint.nn.functional.X`` and ``.X(`` for Tensor methods (a method name also used by
other classes is over-counted; the order is what matters). The result, ``frontend/api_usage.json``
({"repositories": {name: commit}, "counts": {qualified name: uses}}), is data that
``ascendemu api-coverage --missing`` sorts by.

Run: python tools/count_api_usage.py REPO_GIT_DIR [REPO_GIT_DIR ...] [--out frontend/api_usage.json]
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))

DEFAULT_OUT = ROOT / "frontend" / "api_usage.json"
# how code refers to each namespace (module aliases as the zoo imports them) -> the table's prefix
PREFIXES = (
    (r"(?:mint\.nn\.functional)", "mindspore.mint.nn.functional"),
    (r"(?:mint\.nn)", "mindspore.mint.nn"),
    (r"(?:mint)", "mindspore.mint"),
    (r"(?:ops|P|F|operations|functional)", "mindspore.ops"),
    (r"(?:nn)", "mindspore.nn"),
)
PATTERN = re.compile(r"(?<![\w.])((?:mindspore\.|ms\.)?(?:mint\.nn\.functional|mint\.nn|mint|ops|P|F|operations|"
                     r"functional|nn))\.([A-Za-z_]\w*)|\.([a-z_]\w*)\(")


def grep_lines(repo: Path) -> list[str]:
    """The lines of ``repo``'s Python files at HEAD that read an attribute of a namespace or call a method."""
    out = subprocess.run(["git", "-C", str(repo), "grep", "-h", "-I", "-E", r"\.[A-Za-z_]", "HEAD", "--", "*.py"],
                         capture_output=True, text=True, errors="replace", check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"git grep failed in {repo}: {out.stderr.strip()}")
    return out.stdout.splitlines()


def count(lines: list[str], entries: dict) -> collections.Counter:
    methods = {q.rsplit(".", 1)[1] for q, e in entries.items() if e.get("kind") in ("tensor_method",)}
    counts: collections.Counter = collections.Counter()
    for line in lines:
        for match in PATTERN.finditer(line):
            namespace, name, method = match.groups()
            if method is not None:
                if method in methods:
                    counts[f"mindspore.Tensor.{method}"] += 1
                continue
            namespace = namespace.removeprefix("mindspore.").removeprefix("ms.")
            for regex, prefix in PREFIXES:
                if re.fullmatch(regex, namespace):
                    qualified = f"{prefix}.{name}"
                    if qualified in entries:
                        counts[qualified] += 1
                    break
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path, help="git directories (bare or not) to count over")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    from ascendemu.frontend.api_coverage import load_table
    entries = load_table()["entries"]
    total: collections.Counter = collections.Counter()
    commits = {}
    for repo in args.repos:
        commits[repo.parent.name if repo.name == "repo" else repo.name] = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        total.update(count(grep_lines(repo), entries))
    data = {"repositories": commits, "counts": dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))}
    args.out.write_text(json.dumps(data, indent=0, sort_keys=False) + "\n")
    print(f"{len(total)} names used, {sum(total.values())} uses, written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
