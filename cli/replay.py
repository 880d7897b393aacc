"""``ascendemu replay TRACE``: re-issue a recorded run's runtime calls (no script, no front end).

Without a what-if the replay checks itself against the recording: the simulated figures must come out
bit for bit as the run measured them. With a what-if (``--device``, ``--clock-mhz``, ``--hbm-gbps``, ``--hccs-gbps``,
``--streams 1``, ``--pool``) it prints the original and the what-if side by side (the graph execution
order is no what-if: the graph compiler chose it before the first recorded call; record the run in the
other order with ``ascendemu run --exec-order bfs --record`` and compare the traces). ``--check BASELINE``
is the regression gate: it compares the replay's figures
with the baseline's (another trace, or a file of ``ascendemu run --save-baseline``) and exits
:data:`REGRESSION_EXIT` naming every simulated step time or peak memory that grew past the tolerance.

Exit status: 0; 1 when a replay without what-if does not reproduce its recording; 2 for a bad command
line or a trace that cannot be read or replayed (a typed error, its message says what to do);
:data:`REGRESSION_EXIT` when the gate fails. A partial trace replays up to its last complete record and
says where it stopped (status 0 unless something else failed).
"""
from __future__ import annotations

import argparse

from ascendemu.device.pool import POOL_POLICIES
from ascendemu.device.spec import PRESETS
from ascendemu.replay import compare
from ascendemu.replay.replayer import Replayer, ReplayResult, WhatIf, spec_of
from ascendemu.traces.aetrace import MAGIC, read_trace

from .run import REGRESSION_EXIT, gate_report, parse_tolerance

__all__ = ["MISMATCH_EXIT", "add_whatif_arguments", "main", "whatif_of"]

MISMATCH_EXIT = 1
USAGE_EXIT = 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ascendemu replay", description="Replay a trace recorded with "
                                "`ascendemu run --record TRACE script.py`, as recorded or under a what-if.")
    p.add_argument("trace", help="the .aetrace file (a .partial one replays up to its last complete record)")
    add_whatif_arguments(p.add_argument_group("what-if (printed side by side with the original)"))
    p.add_argument("--compute", action="store_true",
                   help="compute: give the device host memory, load the trace's kernels from the kernel cache "
                        "and check every recorded output digest (a trace made with --record-data)")
    p.add_argument("--build", action="store_true", help="with --compute: build kernels missing from the cache "
                                                        "(else they are priced, not computed)")
    p.add_argument("--cache", metavar="DIR", help="kernel cache root for --compute (default: the one the run used)")
    p.add_argument("--trace-json", metavar="JSON", help="write a Chrome/Perfetto trace of the replay here")
    p.add_argument("--check", metavar="BASELINE",
                   help=f"regression gate: a baseline trace or --save-baseline file; exit {REGRESSION_EXIT} "
                        "when a simulated step time or peak memory grew past the tolerance")
    p.add_argument("--tolerance", type=parse_tolerance, default=compare.DEFAULT_TOLERANCE, metavar="PCT",
                   help=f"the gate's tolerance, e.g. 5%% or 0.05 (default {compare.DEFAULT_TOLERANCE * 100:g}%%)")
    return p


def add_whatif_arguments(group: argparse._ActionsContainer) -> None:
    """The what-if options (``ascendemu replay``, ``ascendemu report``); :func:`whatif_of` reads them."""
    group.add_argument("--device", choices=sorted(PRESETS), help="replay on another device preset")
    group.add_argument("--clock-mhz", type=float, help="AI core clock in MHz")
    group.add_argument("--hbm-gbps", type=float, help="HBM bandwidth in GB/s")
    group.add_argument("--hccs-gbps", type=float, help="bandwidth of each HCCS port in GB/s (collectives re-priced)")
    group.add_argument("--streams", type=int, choices=(1,), help="1: every stream's work on one stream")
    group.add_argument("--pool", choices=sorted(POOL_POLICIES), help="device pool placement policy")


def whatif_of(opts: argparse.Namespace) -> WhatIf:
    return WhatIf(device=opts.device, clock_mhz=opts.clock_mhz, hbm_gbps=opts.hbm_gbps, hccs_gbps=opts.hccs_gbps,
                  streams=opts.streams, pool=opts.pool)


def main(argv: list[str]) -> int:
    parser = _parser()
    try:
        opts = parser.parse_args(argv)
    except SystemExit as exc:
        return USAGE_EXIT if exc.code else 0
    whatif = whatif_of(opts)
    baseline = _baseline(opts.check) if opts.check else None
    reader = read_trace(opts.trace)
    replayer = Replayer(reader, whatif, compute=opts.compute, build=opts.build, cache_root=opts.cache,
                        trace=opts.trace_json)
    result = replayer.run()
    if opts.trace_json:
        print(f"replay trace (simulated device time): {opts.trace_json} - open it in https://ui.perfetto.dev")
    status = _report(opts.trace, reader.header, whatif, result)
    if baseline is not None:
        gate = gate_report(baseline, result.figures, opts.tolerance, f"baseline {opts.check}")
        status = status or gate
    return status


def _baseline(path: str) -> dict:
    """A baseline's figures: a trace's recorded ones (replayed when it is partial) or a baseline file."""
    with open(path, "rb") as f:
        magic = f.read(len(MAGIC))
    if magic != MAGIC:
        return compare.load_baseline(path)
    reader = read_trace(path)
    records = sum(1 for _ in reader)              # read through to its End, one record at a time
    if reader.end is not None:
        return reader.end.figures
    return Replayer(read_trace(path)).run().figures if records else {}


def _report(path: str, header, whatif: WhatIf, result: ReplayResult) -> int:
    opts = header.options
    recorded_spec = header.preset
    print(f"replay of {path}: {result.records} record(s), recorded by ascendemu {header.ascendemu} on "
          f"{recorded_spec.get('name')} ({opts.get('script') or 'a library run'}"
          f"{', DryRun' if opts.get('dry_run') else ''}{', with data' if opts.get('record_data') else ''})")
    print(f"  kernels: {result.kernels} ({result.from_cache} from the kernel cache, computed; {result.priced} "
          "priced from their recorded launch facts, not computed)")
    if result.digests_checked:
        verdict = "all match" if result.digests_matched == result.digests_checked else "MISMATCH"
        print(f"  outputs: {result.digests_matched} of {result.digests_checked} device-to-host copies computed "
              f"the recorded bytes ({verdict})")
    if result.stop is not None:
        print(f"  partial trace: {result.stop.describe()}; replayed up to there")
    wall = f"host wall {result.host_wall_s:.3f} s"
    if result.recorded is not None and result.recorded.host_wall_s:
        wall += (f" (the recorded run: {result.recorded.host_wall_s:.3f} s, "
                 f"{result.host_wall_s / result.recorded.host_wall_s:.3f}x)")
    print(f"  {wall}")
    status = 0
    if result.digests_checked and result.digests_matched != result.digests_checked:
        status = MISMATCH_EXIT
    if whatif.active:
        spec = spec_of(recorded_spec)
        print("what-if: " + "; ".join(whatif.describe(spec, header.options.get("pool", "best-fit"))))
        original = result.recorded.figures if result.recorded is not None else None
        if original is None:
            original = Replayer(read_trace(path)).run().figures
        for line in compare.side_by_side(original, result.figures):
            print("  " + line)
        return status
    if result.recorded is None:
        print("  no recorded figures to compare with (the trace has no End record); replayed figures:")
        for f in compare.rows(result.figures).values():
            print(f"    {f.label}: {f.show()}")
        return status
    diff = compare.differences(result.recorded.figures, result.figures)
    if diff:
        print(f"  the replay does NOT reproduce the recording: {len(diff)} figure(s) differ:")
        for line in diff[:20]:
            print(f"    {line}")
        return MISMATCH_EXIT
    shown = compare.rows(result.figures)
    streams = sum(1 for label in shown if " stream " in label)
    cores = sum(1 for label in shown if " AI core " in label)
    print(f"  reproduces the recording bit for bit: simulated device and host time, {streams} stream(s), "
          f"{cores} AI core(s), pool statistics and {len(result.figures.get('steps', {}))} step time(s)")
    for label in ("simulated device time (whole run)",):
        print(f"    {label}: {shown[label].show()}")
    for f in shown.values():
        if f.gated and f.label != "simulated device time (whole run)":
            print(f"    {f.label}: {f.show()}")
    return status
