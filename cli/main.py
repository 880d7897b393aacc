"""The ``ascendemu`` command line: ``info``, ``demo``, ``run``, ``msrun``, ``replay``, ``report``, ``profile``, ``trace``,
``cache``, ``api-coverage``.

Each verb is a small function; heavy imports happen inside the verb so that ``ascendemu info`` and a
warm ``ascendemu run`` never import numba. Output piped into a reader that stops early (``ascendemu info
--json | head``) ends the command quietly with the status a shell gives a program SIGPIPE ended.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys

from ascendemu.device.spec import DEFAULT_PRESET
from ascendemu.errors import AclError, InvalidParamError


def cmd_info(args: argparse.Namespace) -> int:
    from ascendemu.device.spec import PRESETS, get_spec
    spec = get_spec(args.device)
    if args.json:
        print(json.dumps(spec.summary(), indent=2))
        return 0
    s = spec.summary()
    print(f"{spec.name} (soc {spec.soc_version}); presets: {', '.join(PRESETS)}")
    print(f"  AI cores {spec.ai_cores} (vector {spec.vector_cores}) @ {spec.clock_hz / 1e6:.0f} MHz, "
          f"peak {s['peak_fp16_tflops']} TFLOPS fp16")
    print(f"  cube {spec.cube_macs_per_cycle} MAC/cycle/core, vector {spec.vector_lanes_fp16} fp16 lanes/cycle/core")
    print(f"  L0A/L0B/L0C {spec.l0a_bytes >> 10}/{spec.l0b_bytes >> 10}/{spec.l0c_bytes >> 10} KiB, "
          f"L1 {spec.l1_bytes >> 10} KiB, UB {spec.ub_bytes >> 10} KiB, L2 {spec.l2_bytes >> 20} MiB")
    print(f"  HBM {spec.hbm_bytes >> 30} GiB @ {spec.hbm_bandwidth / 1e12:.2f} TB/s; host link "
          f"{spec.host_link_bandwidth / 1e9:.0f} GB/s; {spec.hccs_ports} HCCS ports")
    print(f"  limits: {spec.max_streams} streams, {spec.max_events} events; launch cost "
          f"{spec.launch_overhead_s * 1e6:.0f} us (simulated host time)")
    return 0


SIGPIPE_EXIT = 128 + signal.SIGPIPE  # 141: how a shell reports a writer whose reader closed the pipe


def cmd_api_coverage(args: argparse.Namespace) -> int:
    """Per group of MindSpore's public API (ops functions and Primitives, nn Cells, Tensor methods, mint):
    the names served / MindSpore's count, measured against the signature table recorded from real
    MindSpore (frontend/signatures.json); with GROUP or --missing, the names still missing."""
    from ascendemu.frontend.api_coverage import EXCLUDED, GROUPS, coverage, load_table, usage

    wanted = [g for g in args.group if g not in GROUPS]
    if wanted:
        raise InvalidParamError(f"api-coverage: {wanted[0]!r} is not a group; the groups are: "
                                + ", ".join(repr(g) for g in GROUPS))
    groups = coverage()
    print(f"MindSpore {load_table()['mindspore_version']} public API served by the emulated front end:")
    width = max(map(len, GROUPS))
    for g in groups:
        left_out = f", {len(g.excluded)} excluded" if g.excluded else ""
        print(f"  {g.group:<{width}}  {len(g.served):4d} / {g.total - len(g.excluded):4d}  ({100 * g.share:5.1f}%)"
              f"{left_out}")
    for g in groups:
        if g.group in args.group or (args.missing and not args.group):
            counts = usage()
            listed = [f"{q} ({counts[q]})" if counts.get(q) else q for q in g.missing]
            print(f"missing from {g.group} ({len(g.missing)}, most used first: uses in the model zoos): "
                  + ", ".join(listed))
    excluded = [q for g in groups if g.group in args.group or (args.missing and not args.group) for q in g.excluded]
    if excluded:
        print("excluded (they belong to other hardware or deployments):")
        for q in excluded:
            print(f"  {q}: {EXCLUDED[q]}")
    if not args.missing and not args.group:
        print("`ascendemu api-coverage --missing` (or a group, e.g. nn-cells) lists what is missing")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ascendemu.cli.demo import run_demo
    return run_demo(trace=args.trace, cache_dir=args.cache)


def cmd_cache(argv: list[str]) -> int:
    from ascendemu.cache.cli import main as cache_main
    return cache_main(argv)


def cmd_run(argv: list[str]) -> int:
    # one of several MPI ranks: join the world before anything can end this process (even a usage error),
    # since a rank that exits before MPI_Init leaves the others waiting in MPI's start-up forever (mpiexec
    # stops the job for a rank that exits after it, not before)
    from ascendemu.device.fabric import join_world
    world = join_world()
    from ascendemu.cli.run import main as run_main
    status = 2                   # what _guard returns for an error raised before the script ran
    try:
        status = run_main(argv)
        return status
    finally:
        if world is not None and world.exit_status is None:      # ended before its script ran: tell the others
            world.script_ended(status, None, f"`ascendemu run` ended with status {status} before the script "
                                             "ran (its output has the reason)")


def cmd_replay(argv: list[str]) -> int:
    from ascendemu.cli.replay import main as replay_main
    return replay_main(argv)


def cmd_report(argv: list[str]) -> int:
    from ascendemu.cli.report import main as report_main
    return report_main(argv)


def cmd_profile(argv: list[str]) -> int:
    from ascendemu.cli.profile import main as profile_main
    return profile_main(argv)


def cmd_trace(argv: list[str]) -> int:
    from ascendemu.cli.trace import main as trace_main
    return trace_main(argv)


def cmd_msrun(argv: list[str]) -> int:
    from ascendemu.cli.msrun import main as msrun_main
    return msrun_main(argv)


def version() -> str:
    """The installed distribution's version (package metadata), else the source tree's."""
    from importlib.metadata import PackageNotFoundError, version as dist_version
    try:
        return dist_version("ascendemu")
    except PackageNotFoundError:          # run from a source tree that was never installed
        from ascendemu import __version__
        return __version__


class _VersionAction(argparse.Action):
    """``--version``: looks the version up only when asked (importlib.metadata is not free)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"ascendemu {version()}")
        parser.exit(0)


def main(argv: list[str] | None = None) -> int:
    """The command; a closed output pipe ends it quietly (no BrokenPipeError traceback), status 141."""
    try:
        status = _main(argv)
        sys.stdout.flush()                # a closed pipe shows here for output still buffered
        return status
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at /dev/null so that flush has nowhere to fail
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return SIGPIPE_EXIT


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # verbs that own their argument parsing
    if argv and argv[0] == "cache":
        return _guard(cmd_cache, argv[1:])
    if argv and argv[0] == "run":
        return _guard(cmd_run, argv[1:])
    if argv and argv[0] == "replay":
        return _guard(cmd_replay, argv[1:])
    if argv and argv[0] == "report":
        return _guard(cmd_report, argv[1:])
    if argv and argv[0] == "profile":
        return _guard(cmd_profile, argv[1:])
    if argv and argv[0] == "trace":
        return _guard(cmd_trace, argv[1:])
    if argv and argv[0] == "msrun":
        return _guard(cmd_msrun, argv[1:])
    parser = argparse.ArgumentParser(prog="ascendemu", description="An emulated Ascend910A-like accelerator.")
    parser.add_argument("--version", action=_VersionAction, help="print ascendemu's version and exit")
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("info", help="print the device spec")
    p.add_argument("--device", default=DEFAULT_PRESET, help=f"preset name (default {DEFAULT_PRESET})")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_info)
    p = sub.add_parser("demo", help="run a kernel on the emulated device and print a summary")
    p.add_argument("--trace", help="write a Chrome/Perfetto trace JSON here")
    p.add_argument("--cache", metavar="DIR",
                   help="keep the demo's kernels in DIR/rank_N/kernel_meta (default: $MS_COMPILER_CACHE_PATH "
                        "if set, else a temporary cache removed afterwards)")
    p.set_defaults(fn=cmd_demo)
    sub.add_parser("run", help="run a MindSpore script on the emulated device: ascendemu run script.py [args]")
    sub.add_parser("msrun", help="launch a script on several emulated devices, one MPI rank each, with "
                                 "MindSpore's msrun flags: ascendemu msrun --worker_num 8 --local_worker_num 8 "
                                 "--log_dir logs --join True train.py")
    sub.add_parser("cache", help="inspect the kernel cache: ascendemu cache ls|verify|clear|stats|export|import")
    sub.add_parser("replay", help="replay a trace of `ascendemu run --record`, or a what-if of it: "
                                  "ascendemu replay run.aetrace [--device P | --clock-mhz F | ...] [--check BASE]")
    sub.add_parser("report", help="one self-contained HTML report of traces (O0/O1/O2, what-ifs side by side): "
                                  "ascendemu report run.aetrace [more.aetrace ...] [--device P ...] -o report.html")
    sub.add_parser("profile", help="a real Ascend profile (kernel_details.csv, op_summary_*.csv) on the emulated "
                                   "device: ascendemu profile replay|fidelity PROFILE")
    p = sub.add_parser("api-coverage", help="how much of MindSpore's public API the front end serves, per group "
                                            "(ops functions, ops primitives, nn cells, Tensor methods, mint)")
    p.add_argument("group", nargs="*", help="groups whose missing names to list, e.g. nn-cells")
    p.add_argument("--missing", action="store_true", help="list the missing names of every group")
    p.set_defaults(fn=cmd_api_coverage)
    sub.add_parser("trace", help="MLCommons Chakra execution traces: ascendemu trace export-chakra run.aetrace -o DIR "
                                 "| import-chakra DIR_OR_FILE")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:             # --help, --version, or a usage error argparse printed
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return _guard(args.fn, args)


def _guard(fn, arg) -> int:
    try:
        return fn(arg)
    except AclError as e:
        print(f"ascendemu: error {e}", file=sys.stderr)
        return 2
