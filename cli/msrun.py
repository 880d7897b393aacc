"""``ascendemu msrun``: MindSpore 2.10's ``msrun`` launcher, over MPI.

The flags, their defaults and the errors for bad values are msrun's (``parallel/cluster/run.py`` and
``process_entity/_api.py`` of MindSpore): ``--join`` and ``--bind_core`` take a value
(``--join True``), ``--sim_level`` is one of 0..3, ``worker_num`` must be positive and at least
``local_worker_num``. Logs: ``<log_dir>/worker_<rank>.log`` per worker and ``<log_dir>/scheduler.log``
for the scheduler, here the process that starts the workers as one MPI world and watches them
(``cluster.py``). As in MindSpore, without ``--join True`` msrun returns at once and the job runs on
(the scheduler still stops it if a worker fails or hangs); with it, msrun shows the worker logs
(``--tail_worker_log``) and the scheduler's lines as they come and returns the job's worst exit status.

One node only: a job over several nodes (``worker_num`` > ``local_worker_num``) is one MPI world
started from one place, ``mpiexec -f hostfile -n N ascendemu run script.py``, which maps MPI's ranks
as msrun would; ``--sim_level`` needs no other node and is accepted with any ``worker_num``: it covers all
``worker_num`` ranks (MindSpore's msrun simulates this node's), simulating one per distinct parallel
position (``positions.py``), or ``--sim_rank_id`` alone.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from argparse import REMAINDER, ArgumentTypeError
from pathlib import Path

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.process import die_with_parent

from .cluster import Job, resolve_master

__all__ = ["main", "parser"]

USAGE_EXIT = 2
# MindSpore's check_file_name_by_regular, applied to --log_dir
LOG_DIR_PATTERN = r"^[0-9a-zA-Z\_\-\.\:\/\\]+$"
POLL_S = 0.1


def parse_bind_core(value: str):
    """``--bind_core``: True/False, or a dict ``{"deviceX": ["a-b", ...]}`` (msrun's checks and messages)."""
    if value.lower() == "true":
        return True
    if value.lower() == "false":
        return False
    try:
        value_dict = json.loads(value)
    except json.JSONDecodeError as e:
        raise ArgumentTypeError("Failed to parse JSON into a dictionary") from e
    if isinstance(value_dict, dict):
        for device_id, cpu_list in value_dict.items():
            if not re.fullmatch(r"device\d+", device_id):
                raise ArgumentTypeError(f"Key '{device_id}' must be in format 'deviceX' (X ≥ 0).")
            if not isinstance(cpu_list, list):
                raise ArgumentTypeError(f"Value for '{device_id}':{cpu_list} should be a list, "
                                        f"but got {type(cpu_list)}.")
            for cpu_range in cpu_list:
                if not isinstance(cpu_range, str):
                    raise ArgumentTypeError(f"CPU range '{cpu_range}' in '{cpu_list}' should be a string.")
                if not re.match(r"^\d+-\d+$", cpu_range):
                    raise ArgumentTypeError(f"CPU range '{cpu_range}' in '{cpu_list}' should be "
                                            "in format 'cpuidX-cpuidY'.")
        return value_dict
    raise ArgumentTypeError(f"Type of {value} should be bool or dict, but got {type(value)}.")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ascendemu msrun", description="Launch a MindSpore script on several emulated "
                                "devices of this machine, one MPI process per rank (MindSpore's msrun).")
    p.add_argument("--worker_num", type=int, default=8, help="the total number of workers (default 8)")
    p.add_argument("--local_worker_num", type=int, default=8, help="workers started on this node (default 8)")
    p.add_argument("--master_addr", default="127.0.0.1", type=str, help="the scheduler's IP address or host name")
    p.add_argument("--master_port", default=8118, type=int, help="the scheduler's port (exported as MS_SCHED_PORT)")
    p.add_argument("--node_rank", default=-1, type=int, help="this node's index (ignored on one node)")
    p.add_argument("--log_dir", default="", type=str, help="where worker_<rank>.log and scheduler.log go")
    p.add_argument("--join", default=False, type=ast.literal_eval, choices=[True, False],
                   help="True: wait for the workers, show their logs, return the worst exit status")
    p.add_argument("--cluster_time_out", default=600, type=int,
                   help="seconds a worker may take to start, or may run on after another finished, before "
                        "the job is stopped as hung (negative: wait forever)")
    p.add_argument("--bind_core", default=False, type=parse_bind_core,
                   help='True (an even share of the CPUs per worker) or {"deviceX": ["a-b", ...]}')
    p.add_argument("--bind_numa", default=False, type=ast.literal_eval, choices=[True, False],
                   help="accepted; the emulated workers share this machine's memory, nothing to bind")
    p.add_argument("--sim_level", default=-1, type=int, choices=[0, 1, 2, 3],
                   help="DryRun level (MS_SIMULATION_LEVEL): simulate the ranks without running them together")
    p.add_argument("--sim_rank_id", default=-1, type=int, help="DryRun this one rank only")
    p.add_argument("--rank_table_file", default="", type=str, help="exported as RANK_TABLE_FILE")
    p.add_argument("--worker_log_name", default="", type=str,
                   help="worker log name instead of worker ({ip} and {hostname} are replaced)")
    p.add_argument("--tail_worker_log", default="-1", type=str,
                   help="with --join True, the ranks whose logs are shown (comma-separated; -1: all)")
    p.add_argument("task_script", type=str, help="the script each worker runs")
    p.add_argument("task_script_args", nargs=REMAINDER, help="its arguments")
    return p


def make_job(args: argparse.Namespace) -> Job:
    """The job the flags describe, with msrun's checks; a multi-node job is refused (see the module doc)."""
    if args.worker_num <= 0:
        raise InvalidParamError(f"worker_num must be greater than 0, but got {args.worker_num}.")
    if args.local_worker_num > args.worker_num:
        raise InvalidParamError(f"Total worker number is {args.worker_num}, "
                                f"but got exceeded local worker number: {args.local_worker_num}.")
    if args.local_worker_num <= 0:
        raise InvalidParamError(f"local_worker_num must be greater than 0, but got {args.local_worker_num}.")
    if args.log_dir and args.log_dir.endswith(("/", "\\")):
        raise InvalidParamError(f"The '{args.log_dir}' cannot be a directory path.")
    if args.log_dir and re.match(LOG_DIR_PATTERN, args.log_dir) is None:
        raise InvalidParamError(f"The '{args.log_dir}' is illegal, it must be match regular '{LOG_DIR_PATTERN}'.")
    simulation = args.sim_level != -1 or bool(os.environ.get("MS_SIMULATION_LEVEL"))
    sim_level = args.sim_level if args.sim_level != -1 else int(os.environ.get("MS_SIMULATION_LEVEL") or -1)
    sim_rank_id = args.sim_rank_id
    if simulation and sim_rank_id == -1 and os.environ.get("RANK_ID", "").isdigit():
        sim_rank_id = int(os.environ["RANK_ID"])      # as msrun: RANK_ID names the one rank to simulate
    if simulation and not -1 <= sim_rank_id < args.worker_num:
        raise InvalidParamError(f"sim_rank_id {sim_rank_id} is not a rank of worker_num {args.worker_num}; "
                                f"give 0..{args.worker_num - 1}, or -1 to simulate every rank")
    if not simulation and args.local_worker_num < args.worker_num:
        raise FeatureNotSupportedError(
            f"msrun over several nodes (worker_num {args.worker_num} > local_worker_num {args.local_worker_num}) "
            f"is not supported by the emulator's launcher: start the whole job as one MPI world from one node, "
            f"`mpiexec -f hostfile -n {args.worker_num} ascendemu run {args.task_script}` (each rank gets RANK_ID, "
            f"RANK_SIZE and DEVICE_ID from MPI as under msrun)")
    if not 1024 <= args.master_port <= 65535 and not simulation:
        raise InvalidParamError(f"master_port {args.master_port} is out of range: the scheduler port must be "
                                f"within 1024 to 65535")
    if args.tail_worker_log != "-1" and not re.fullmatch(r"\d+(,\d+)*", args.tail_worker_log):
        raise InvalidParamError(f"tail_worker_log {args.tail_worker_log!r} must be -1 or worker ranks such as 0,3")
    log_name = args.worker_log_name
    if log_name:
        log_name = log_name.replace("{ip}", resolve_master(socket.gethostname())).replace(
            "{hostname}", socket.gethostname())
    return Job(args.worker_num, args.local_worker_num, args.node_rank, resolve_master(args.master_addr),
               args.master_port, args.log_dir, args.join, args.cluster_time_out, args.bind_core, sim_level,
               sim_rank_id, args.rank_table_file, log_name, args.tail_worker_log, args.task_script,
               list(args.task_script_args))


def main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:             # argparse printed the usage error (or --help)
        return USAGE_EXIT if exc.code else 0
    job = make_job(args)
    if job.local_worker_num == job.worker_num and job.node_rank not in (0, -1):
        print(f"[WARNING] All workers will be spawned on this node, so 'node_rank': [{job.node_rank}] will be "
              f"ignored.", file=sys.stderr)
    if job.log_dir:
        old = os.umask(0o077)             # msrun creates the log directory for its user only
        try:
            os.makedirs(job.log_dir, exist_ok=True)
        finally:
            os.umask(old)
    state = Path(tempfile.mkdtemp(prefix="ascendemu-msrun-"))
    job.save(state)
    parent = os.getpid()
    with open(job.scheduler_log, "w") as log:
        scheduler = subprocess.Popen([sys.executable, "-m", "ascendemu.cli.cluster", str(state)],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True,
                                     preexec_fn=(lambda: die_with_parent(parent)) if job.join else None)
    if not job.join:
        if job.simulation:        # which ranks start is known only as they run: one per distinct position
            print(f"DryRun of {len(job.ranks())} rank(s), one simulated per distinct parallel position; the table "
                  f"will be in {job.scheduler_log}", flush=True)
        else:
            for rank in job.ranks():
                print(job.start_line(rank), flush=True)
        return 0
    print("[WARNING] Distributed job is spawned. Waiting all processes to exit...", file=sys.stderr, flush=True)
    return _join(job, scheduler)


def _join(job: Job, scheduler: subprocess.Popen) -> int:
    """Show the scheduler's lines and the tailed worker logs until the job ends; its status."""
    ranks = job.ranks() if job.tail_worker_log == "-1" else [int(r) for r in job.tail_worker_log.split(",")]
    logs = [job.scheduler_log, *map(job.log_path, ranks)]
    # a DryRun writes the logs of its simulated positions only, found by one directory listing a poll
    # rather than an open per rank of 1024
    later = logs if job.simulation else []
    offsets: dict[Path, int] = {job.scheduler_log: 0} if job.simulation else dict.fromkeys(logs, 0)
    try:
        while scheduler.poll() is None:
            _show(offsets, later)
            time.sleep(POLL_S)
    except KeyboardInterrupt:             # Ctrl-C: the scheduler stops every worker and says so
        scheduler.send_signal(signal.SIGTERM)
        scheduler.wait()
    _show(offsets, later)
    return scheduler.returncode


def _show(offsets: dict[Path, int], later: list[Path]) -> None:
    """Print what each file gained since last time, whole lines only; each of ``later`` (files in one
    directory) joins ``offsets`` once it exists."""
    if later:
        present = set(os.listdir(later[0].parent))
        offsets.update({path: 0 for path in later if path not in offsets and path.name in present})
    for path, offset in offsets.items():
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read()
        except FileNotFoundError:
            continue
        whole = data[:data.rfind(b"\n") + 1]
        if whole:
            sys.stdout.write(whole.decode(errors="replace"))
            sys.stdout.flush()
            offsets[path] = offset + len(whole)
