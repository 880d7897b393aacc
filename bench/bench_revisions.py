"""Before/after bench: this tree's launch, cache and network benches against another revision's, in one run.

A refactor must not cost speed. This script checks out ``--base`` (a git revision) into a temporary
worktree, installs it into its own virtual environment (kept under the temp dir, keyed by commit, so a
second run reuses it), then runs the same bench scripts of both trees alternately (``--rounds`` times,
base then head, so background load hits both alike) and prints each figure's median for both and the
ratio head/base. Simulated device times are deterministic and must be equal; host times are medians.

Run: python bench/bench_revisions.py --base <rev> [--rounds 3] [--only launch,cache,networks]
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# bench name -> (script arguments, [(figure label, regex with one group, unit)])
BENCHES = {
    "launch": (["bench/bench_launch.py"], [
        ("launch, 1 block (host + simulation)", r"total per launch, 1 block\s+([\d.]+)", "us"),
        ("launch, 8 blocks (host + simulation)", r"total per launch, 8 blocks\s+([\d.]+)", "us"),
        ("simulated device time per launch", r"simulated device time per launch[^:]*: ([\d.]+) us", "us"),
    ]),
    "cache": (["bench/bench_cache.py", "--repeats", "3"], [
        ("30 kernels cold, 2 workers (work)", r"cold, default jobs[^|]*\| ([\d.]+)", "s"),
        ("30 kernels warm, all reused (work)", r"warm, all reused[^|]*\| ([\d.]+)", "s"),
        ("30 kernels warm (whole process)", r"warm, all reused[^|]*\|[^|]*\|[^|]*\|[^|]*\| ([\d.]+)", "s"),
        ("1 kernel warm load + call (work)", r"1 kernel: warm load[^|]*\| ([\d.]+)", "s"),
    ]),
    "networks": (["bench/bench_networks.py", "--steps", "10"], [
        *[(f"{label} host wall/step {level}",
           rf"\| {re.escape(label)}[^|]*\|[^|]*\|[^|]*\|[^|]*\|[^|]*\| "
           + r" / ".join(r"([\d.]+)" if i == k else r"[\d.]+" for i in range(3)) + " ms", "ms")
          for label in ("MLP", "LeNet-5", "ResNet BasicBlock", "Transformer") for k, level in enumerate(("O0", "O1", "O2"))],
        *[(f"{label} simulated device/step O2",
           rf"\| {re.escape(label)}[^|]*\|[^|]*\|[^|]*\|[^|]*\|[^|]*\|[^|]*\|[^|]*\| [\d.]+ / [\d.]+ / ([\d.]+) ms", "ms")
          for label in ("MLP", "LeNet-5", "ResNet BasicBlock", "Transformer")],
    ]),
}


def prepare_base(rev: str) -> tuple[Path, Path]:
    """(worktree, python) of ``rev``, installed into its own venv (reused when the commit matches)."""
    sha = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    home = Path(tempfile.gettempdir()) / f"ascendemu-bench-{sha[:12]}"
    tree, venv = home / "tree", home / "venv"
    python = venv / "bin" / "python"
    if not (home / "ready").exists():
        home.mkdir(exist_ok=True)
        if not tree.exists():
            subprocess.run(["git", "worktree", "add", "--detach", str(tree), sha], cwd=ROOT, check=True,
                           capture_output=True)
        print(f"installing {rev} ({sha[:12]}) into {venv} (once) ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # editable, like the head tree: the benches put their tree on sys.path, whose own ascendemu/
        # folder must resolve the way the package-dir mapping says; [test]: benches use tests/conftest
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", f"{tree}[test]"], check=True)
        (home / "ready").write_text(sha + "\n")
    return tree, python


def run(tree: Path, python: Path, args: list[str]) -> str:
    """Run a bench script of ``tree`` from a scratch directory, so nothing depends on the cwd."""
    env = {k: v for k, v in os.environ.items() if k not in ("MS_COMPILER_CACHE_PATH", "RANK_ID")}
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run([str(python), str(tree / args[0]), *args[1:]], cwd=scratch, capture_output=True,
                             text=True, env=env, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"{args[0]} failed in {tree}:\n{out.stderr[-2000:]}")
    return out.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="git revision to compare with (e.g. a commit before a refactor)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs of each bench per tree")
    parser.add_argument("--only", default=",".join(BENCHES), help="comma-separated subset of " + ",".join(BENCHES))
    opts = parser.parse_args()
    base_tree, base_python = prepare_base(opts.base)
    trees = {"base": (base_tree, base_python), "head": (ROOT, Path(sys.executable))}
    rows = []
    for name in opts.only.split(","):
        args, figures = BENCHES[name]
        values: dict[tuple[str, str], list[float]] = {}
        for r in range(opts.rounds):
            for side, (tree, python) in trees.items():
                print(f"  {name}: round {r + 1}/{opts.rounds}, {side}", file=sys.stderr, flush=True)
                text = run(tree, python, args)
                for label, pattern, _ in figures:
                    found = re.search(pattern, text)
                    if found:
                        values.setdefault((label, side), []).append(float(found.group(1)))
        for label, _, unit in figures:
            base, head = values.get((label, "base")), values.get((label, "head"))
            if base and head:
                b, h = statistics.median(base), statistics.median(head)
                rows.append((name, label, f"{b:g} {unit}", f"{h:g} {unit}", f"{h / b:.2f}" if b else "-"))
    print(f"base {opts.base} vs head (this tree), median of {opts.rounds} alternating runs; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| bench | figure | base | head | head/base |\n|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
