"""One DryRun in a child process, as the DryRun benches run it (bench_recompute, bench_pipeline,
bench_optimizer_shard, bench_dryrun_scale): ``ascendemu run --dry-run SCRIPT ARGS`` in a fresh temporary
directory, with that child's own CPU seconds and peak RSS (``wait4`` on it alone, not every child so far)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# what an outer launcher exported (MPI's place, a job's rank) must not reach a child that is given its own
OUTER_PREFIXES = ("RANK", "OMPI_", "PMI")
USED = re.compile(r"DryRun: Used peak memory usage \(without fragments\): ([\d.]+)M")


@dataclass(frozen=True)
class DryRunChild:
    """What one DryRun child printed (stdout and stderr) and what it cost."""

    log: str
    cpu_s: float            # user + sys
    rss_mib: float          # peak resident set

    @property
    def used_mib(self) -> float:
        """The last "Used peak memory usage" line's MiB."""
        return float(USED.findall(self.log)[-1])


def run_dryrun(script: Path, args: list[str], env: dict[str, str], options: tuple[str, ...] = ()) -> DryRunChild:
    """``ascendemu run --dry-run *options script *args`` with ``env`` over this environment (less an outer
    launcher's variables; ``options`` are ascendemu run's own, e.g. ``("--device", "Ascend910B3")``); exits
    naming the command and its output's tail when the child fails."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(OUTER_PREFIXES)}
    cmd = [sys.executable, "-m", "ascendemu", "run", "--dry-run", *options, str(script), *args]
    with tempfile.TemporaryDirectory() as cwd, tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env={**base, **env}, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        log = out.read()
    code = os.waitstatus_to_exitcode(status)
    if code:
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{log[-3000:]}")
    return DryRunChild(log, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
