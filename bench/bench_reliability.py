"""The long runs of bench/README.md's "Reliability" table: the CI tests' own functions, driven with the
larger counts the table reports (same code, more trials), so the figures can be re-measured.

    nice -n 19 .venv/bin/python bench/bench_reliability.py fuzz [SEQUENCES]          # default 3000
    nice -n 19 .venv/bin/python bench/bench_reliability.py kills [TRIALS]            # default 150
    nice -n 19 .venv/bin/python bench/bench_reliability.py concurrent [ROUNDS] [N]   # default 8 x 16

Each run prints its counts and `uptime` before and after (the machine's load goes into the table). A
fuzz or concurrent run ended by SIGTERM or SIGINT (a time budget) prints the count it reached, so the
largest completed count can still be reported (the kill test counts its trials only at its end: give
it fewer). A failing check raises, as in CI.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("ACL_OP_COMPILER_CACHE_MODE", "disable")    # cold = nothing cached anywhere (cache/store.py)

TESTS = Path(__file__).resolve().parent.parent / "tests"
DEFAULT_FUZZ_SEQUENCES = 3000     # issue 25: >= 3,000 random HAL call sequences
DEFAULT_KILL_TRIALS = 150         # issue 25: 150 SIGKILLs at random moments of cold builds
DEFAULT_ROUNDS = 8                # issue 25: 128 concurrent cold runs = 8 rounds ...
DEFAULT_BUILDERS = 16             # ... of 16 processes on one fresh cache


def uptime() -> str:
    """The load averages, for the table's machine-load column."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def on_stop(report) -> None:
    """SIGTERM/SIGINT print what the run reached, then exit 2 (not a pass)."""
    def handler(signum, frame):
        print(f"\nstopped by signal {signum}: {report()}\n{uptime()}", flush=True)
        os._exit(2)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def run_fuzz(sequences: int) -> None:
    os.environ["ASCENDEMU_FUZZ_EXAMPLES"] = str(sequences)   # read at import: random, not derandomized
    import test_runtime_fuzz as fuzz
    on_stop(lambda: f"{fuzz.STATS['sequences']} sequences, {fuzz.STATS['calls']} calls, "
                    f"{fuzz.STATS['succeeded']} succeeded")
    fuzz.test_runtime_against_shadow_model()


def run_kills(trials: int) -> None:
    import test_cache_faults as faults
    faults.KILL_TRIALS = trials
    on_stop(lambda: "the kill test reports its trials only at its end: run fewer")
    with tempfile.TemporaryDirectory(prefix="bench_kills_") as tmp:
        faults.test_sigkill_at_random_moments_never_leaves_a_broken_entry(Path(tmp))


def run_concurrent(rounds: int, builders: int) -> None:
    import test_cache_faults as faults
    faults.CONCURRENT_BUILDERS = builders
    done = [0]
    on_stop(lambda: f"{done[0]} rounds of {builders} processes completed")
    for r in range(rounds):
        with tempfile.TemporaryDirectory(prefix="bench_concurrent_") as tmp:
            faults.test_concurrent_processes_build_each_kernel_once(Path(tmp))
        done[0] += 1
        print(f"round {r + 1}/{rounds}: {builders} processes, each kernel built once; {uptime()}", flush=True)
    print(f"concurrent cold runs: {rounds} x {builders} = {rounds * builders} processes, 0 double builds")


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(TESTS))
    import conftest  # noqa: F401  (the suite's own cache key, never the user's)
    what = argv[0] if argv else ""
    counts = [int(a) for a in argv[1:]]
    if what not in ("fuzz", "kills", "concurrent"):
        print(__doc__, file=sys.stderr)
        return 64
    print(uptime(), flush=True)
    if what == "fuzz":
        run_fuzz(*(counts or [DEFAULT_FUZZ_SEQUENCES]))
    elif what == "kills":
        run_kills(*(counts or [DEFAULT_KILL_TRIALS]))
    else:
        run_concurrent(*(counts or [DEFAULT_ROUNDS, DEFAULT_BUILDERS]))
    print(uptime(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
