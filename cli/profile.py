"""``ascendemu profile replay|fidelity PROFILE``: a real Ascend profile on the emulated device.

PROFILE is MindSpore's ``kernel_details.csv`` or msprof's ``op_summary_*.csv``, or a directory holding
one of them (read by :mod:`ascendemu.replay.ascend_profile`).

* ``replay`` runs the tasks on an emulated device with their recorded durations, one stream per
  recorded stream (:func:`~ascendemu.replay.ascend_profile.replay`), and prints the simulated time per
  stream beside the recorded span and gaps (gaps are not replayed).
* ``fidelity`` ranks the kernels by the cost model's relative error against their recorded durations
  (:mod:`ascendemu.replay.fidelity`): a table, and a CSV of every kernel; the kernels it cannot price
  are listed with their lines and the reason.

This module only parses the arguments, calls the library and prints.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ascendemu.device.spec import DEFAULT_PRESET, get_spec
from ascendemu.errors import InvalidParamError
from ascendemu.replay.ascend_profile import read_profile, replay, tensor_cells
from ascendemu.replay.fidelity import fidelity, totals, write_fidelity_csv
from ascendemu.traces.chrome import ChromeTrace

__all__ = ["main"]

SHOWN_LINES = 8                            # line numbers printed per unpriced kernel (the CSV has them all)


def _lines(lines: list[int]) -> str:
    return " ".join(map(str, lines[:SHOWN_LINES])) + (f" ... ({len(lines)} rows)" if len(lines) > SHOWN_LINES else "")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ascendemu profile",
                                description="Replay a real Ascend profile (MindSpore's kernel_details.csv or "
                                            "msprof's op_summary_*.csv) on the emulated device, or compare its "
                                            "kernel durations with the cost model's.")
    sub = p.add_subparsers(dest="verb", required=True)
    for verb, text in (("replay", "run the tasks with their recorded durations; print simulated time per stream"),
                       ("fidelity", "rank the kernels by the cost model's error against their recorded durations")):
        v = sub.add_parser(verb, help=text, description=text)
        v.add_argument("profile", help="kernel_details.csv, op_summary_*.csv, or a directory holding one")
        v.add_argument("--device", default=DEFAULT_PRESET, help="device preset (ascendemu info lists them)")
        if verb == "replay":
            v.add_argument("--trace", help="write the replay's Chrome/Perfetto trace JSON here")
        else:
            v.add_argument("--csv", default="fidelity.csv", help="write every kernel's comparison here "
                                                                 "(default fidelity.csv)")
            v.add_argument("--top", type=int, default=20, help="kernels shown in the table (default 20)")
    return p


def cmd_replay(opts: argparse.Namespace) -> int:
    profile, spec = read_profile(opts.profile), get_spec(opts.device)
    trace = ChromeTrace() if opts.trace else None
    streams = replay(profile, spec, trace)
    print(f"{profile.path}: {len(profile.tasks)} task(s) on {len(streams)} stream(s), replayed on {spec.name} "
          "with their recorded durations (simulated device time)")
    print(f"{'stream':>8} {'tasks':>6} {'replayed(us)':>14} {'recorded span(us)':>18} {'recorded gaps(us)':>18}")
    for s in streams:
        print(f"{s.stream:>8} {s.tasks:>6} {s.replayed_us:>14.3f} {s.recorded_span_us:>18.3f} {s.gaps_us:>18.3f}")
    print(f"simulated device time: {max(s.replayed_us for s in streams):.3f} us (the longest stream)")
    if trace is not None:
        print(f"trace: {trace.write(opts.trace)} (open in https://ui.perfetto.dev)")
    return 0


def cmd_fidelity(opts: argparse.Namespace) -> int:
    if opts.top < 0:
        raise InvalidParamError(f"--top must be >= 0, got {opts.top}")
    profile, spec = read_profile(opts.profile), get_spec(opts.device)
    kernels = fidelity(profile, spec)
    priced = [k for k in kernels if k.reason is None]
    write_fidelity_csv(Path(opts.csv), kernels)
    print(f"{profile.path}: {len(kernels)} distinct kernel(s) in {len(profile.tasks)} task(s); cost model of "
          f"{spec.name} (an idle device) against the recorded durations, largest error first")
    print(f"{'rank':>4} {'error':>9} {'recorded(us)':>13} {'model(us)':>11} {'count':>6}  {'type':<16} inputs")
    for rank, k in enumerate(priced[:opts.top], 1):
        shapes, dtypes = tensor_cells(k.inputs)
        print(f"{rank:>4} {100 * k.error:>+8.1f}% {k.mean_us:>13.3f} {k.model_us:>11.3f} {len(k.recorded_us):>6}  "
              f"{k.type:<16} {shapes} {dtypes}")
    if len(priced) > opts.top:
        print(f"     ... {len(priced) - opts.top} more in {opts.csv}")
    total = totals(kernels)
    if total is not None:
        print(f"priced {total.kernels} kernel(s) in {total.tasks} task(s): recorded {total.recorded_us:.3f} us in "
              f"all, model {total.model_us:.3f} us; mean |error| {100 * total.mean_abs_error:.1f}%")
    for k in kernels[len(priced):]:
        print(f"not priced: {k.type} (line(s) {_lines(k.lines)}): {k.reason}")
    print(f"csv: {opts.csv}")
    if not priced:
        print("ascendemu profile fidelity: no kernel of the profile could be priced (see the reasons above)")
        return 1
    return 0


def main(argv: list[str]) -> int:
    parser = _parser()
    try:
        opts = parser.parse_args(argv)
    except SystemExit as exc:             # --help, or a usage error argparse printed
        return exc.code if isinstance(exc.code, int) else 0
    return cmd_replay(opts) if opts.verb == "replay" else cmd_fidelity(opts)
