"""The scheduler of an ``ascendemu msrun`` job: starts the workers as one MPI world and watches them.

``msrun`` (``msrun.py``) checks the flags, writes the job (:class:`Job`) into a private state
directory and starts this module as the job's scheduler process, whose output is
``<log_dir>/scheduler.log``. The scheduler starts the workers through the ``mpiexec`` of the
``mpich`` wheel: one MPI world, so collectives exchange their bytes over MPI and nothing made here
carries data. Each MPI process is a small supervisor (``worker.py``) that runs the script with
``ascendemu run`` as its child, its output in ``worker_<rank>.log``, and records in the state
directory when the child started and how it ended, so a worker that dies (even by SIGKILL) is
named with its exit status while the others are still running.

Watching, with MindSpore's ``--cluster_time_out`` as the one time limit (negative: wait forever):
a worker that fails makes the scheduler stop the others at once (they would wait forever in their
next collective), naming the failed rank, its error and its log (a worker whose script raised has
already told the others, which report ``rank N failed: <error>`` before it ends: ``device.fabric``);
a worker that has not started within the limit, or that is still running the limit after another
worker finished, is stopped and named as hung (a worker that ended leaves MPI unfinalized, so it does
not wait for the others). The scheduler's status is the worst exit status of the workers it did not
stop itself (1 when it stopped the job for a timeout).

``--sim_level`` (DryRun, ``MS_SIMULATION_LEVEL``): no MPI world and no scheduler ports; one rank per distinct
parallel position (``positions.py``) runs, one after another (or only ``--sim_rank_id``), each told RANK_SIZE =
worker_num, and the scheduler ends with one table of every rank's peak memory, simulated step time,
communication and exposed communication, read from the DryRun lines each simulated rank's summary prints.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ascendemu.device.fabric import EXEC_TIMEOUT_ENV, timeout_from_env
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.process import die_with_parent

__all__ = ["Job", "WorkerRecord", "publish", "find_mpiexec", "exit_code", "describe_status", "run_scheduler"]

JOB_FILE = "job.json"
POLL_S = 0.05
STOP_GRACE_S = 10.0        # how long mpiexec may take to end once its workers are stopped
TIMEOUT_EXIT = 1           # the scheduler's status when it stopped the job for a timeout (a Python error's)
INTERRUPT_EXIT = 130


def publish(path: Path, data: dict) -> None:
    """Write a state file so that a reader sees all of it or none (rename); no fsync: the state lives
    as long as the job, so it need not survive a power cut, and the launcher's helper processes stay
    free of the kernel cache's imports."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


@dataclass
class Job:
    """One msrun invocation on this node, as its flags decided it (MindSpore's names)."""

    worker_num: int
    local_worker_num: int
    node_rank: int
    master_addr: str
    master_port: int
    log_dir: str
    join: bool
    cluster_time_out: int
    bind_core: Any
    sim_level: int
    sim_rank_id: int
    rank_table_file: str
    worker_log_name: str
    tail_worker_log: str
    task_script: str
    task_script_args: list[str] = field(default_factory=list)

    @property
    def simulation(self) -> bool:
        return self.sim_level != -1

    def ranks(self) -> list[int]:
        """The ranks this node runs, by local index (MindSpore's rank assignment); in a DryRun every rank of
        the job (one simulation per distinct position, ``simulate``) or ``sim_rank_id`` alone."""
        if self.simulation:
            return [self.sim_rank_id] if self.sim_rank_id != -1 else list(range(self.worker_num))
        if self.local_worker_num < self.worker_num and self.node_rank >= 0:
            return [self.node_rank * self.local_worker_num + i for i in range(self.local_worker_num)]
        return list(range(self.local_worker_num))

    def log_path(self, rank: int) -> Path:
        """``<log_dir>/<worker_log_name or worker>_<rank>.log``."""
        return Path(self.log_dir) / f"{self.worker_log_name or 'worker'}_{rank}.log"

    @property
    def scheduler_log(self) -> Path:
        return Path(self.log_dir) / "scheduler.log"

    def command(self) -> list[str]:
        """What each worker runs: the task script under ``ascendemu run`` (``import mindspore`` served)."""
        return [sys.executable, "-m", "ascendemu", "run", self.task_script, *self.task_script_args]

    def env(self) -> dict[str, str]:
        """What msrun exports to every worker of this node."""
        env = {"MS_WORKER_NUM": str(self.worker_num), "RANK_SIZE": str(self.worker_num)}
        if self.simulation:
            env["MS_SIMULATION_LEVEL"] = str(self.sim_level)
        else:      # a DryRun builds no cluster: no scheduler address, no role
            env.update({"MS_SCHED_HOST": self.master_addr, "MS_SCHED_PORT": str(self.master_port),
                        "MS_TOPO_TIMEOUT": str(self.cluster_time_out), "MS_ROLE": "MS_WORKER"})
        if self.rank_table_file:
            env["RANK_TABLE_FILE"] = self.rank_table_file
        return env

    def worker_env(self, rank: int, local: int) -> dict[str, str]:
        """The variables of one worker: its rank (RANK_ID, MS_NODE_ID) and device (its local index)."""
        return {**self.env(), "RANK_ID": str(rank), "MS_NODE_ID": str(rank), "DEVICE_ID": str(local)}

    def cpus(self, local: int) -> list[int] | None:
        """The CPUs ``--bind_core`` gives local worker ``local`` (None: not bound): an even share of this
        machine's CPUs, or the ranges a ``{"deviceX": ["a-b", ...]}`` dict names."""
        if self.bind_core is True:
            share = (os.cpu_count() or 1) // self.local_worker_num
            return list(range(share * local, share * local + share)) or None
        if isinstance(self.bind_core, dict):
            ranges = self.bind_core.get(f"device{local}")
            if not ranges:
                return None
            return [c for r in ranges for c in range(int(r.split("-")[0]), int(r.split("-")[1]) + 1)]
        return None

    def start_line(self, rank: int) -> str:
        return (f"Start worker process with rank id:{rank}, log file:{self.log_path(rank)}. Environment variable "
                f"[RANK_ID={rank}] is exported. Execute command: {' '.join(self.command())}")

    def save(self, state: Path) -> None:
        publish(state / JOB_FILE, asdict(self))

    @classmethod
    def load(cls, state: Path) -> "Job":
        return cls(**json.loads((state / JOB_FILE).read_text()))


@dataclass(frozen=True)
class WorkerRecord:
    """What a worker's supervisor recorded: the script's pid when it started, its status when it ended."""

    rank: int
    pid: int
    status: int | None = None       # Popen's returncode: -N for signal N
    ended: float | None = None      # time.monotonic() when it ended (one clock for the node)

    @staticmethod
    def path(state: Path, rank: int, what: str) -> Path:
        return state / f"rank_{rank}.{what}"

    def save(self, state: Path, what: str) -> None:
        publish(self.path(state, self.rank, what), asdict(self))


def _read_records(state: Path, what: str) -> dict[int, WorkerRecord]:
    records = {}
    for path in state.glob(f"rank_*.{what}"):
        try:
            record = WorkerRecord(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            continue
        records[record.rank] = record
    return records


def exit_code(status: int) -> int:
    """A process status as a shell reports it: a signal N is 128 + N."""
    return 128 - status if status < 0 else status


def describe_status(status: int) -> str:
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"{exit_code(status)} (killed by signal {-status}, {name})"
    return str(status)


def find_mpiexec() -> str:
    """The ``mpiexec`` of the ``mpich`` wheel installed beside this Python, else one on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        raise FeatureNotSupportedError("msrun starts its workers with mpiexec, and none was found beside "
                                       f"{sys.executable} nor on PATH; install ascendemu's dependencies "
                                       "(`pip install mpich mpi4py`)")
    return found


def say(level: str, message: str) -> None:
    """One launcher line in scheduler.log (the scheduler's stdout), at once."""
    print(f"[{level}] {message}", flush=True)


class Scheduler:
    """Runs the workers of a job on this node through mpiexec and watches them until the job ends."""

    def __init__(self, job: Job, state: Path):
        self.job, self.state = job, state
        self.ranks = job.ranks()
        self.stopped: set[int] = set()          # ranks this scheduler killed
        self.interrupted = False

    def run(self) -> int:
        job = self.job
        for rank in self.ranks:
            say("WARNING", job.start_line(rank))
        env = {**os.environ, **job.env()}
        parent = os.getpid()
        # -disable-auto-cleanup: the scheduler, not hydra, decides what a worker's death does to the others
        mpiexec = subprocess.Popen([find_mpiexec(), "-disable-auto-cleanup", "-n", str(len(self.ranks)),
                                    sys.executable, "-m",
                                    "ascendemu.cli.worker", str(self.state)],
                                   env=env, stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                   preexec_fn=lambda: die_with_parent(parent))
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._interrupt)
        try:
            return self._watch(mpiexec)
        finally:
            self._stop(self._running())
            try:
                mpiexec.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                mpiexec.kill()
                mpiexec.wait()

    def _interrupt(self, signum, frame) -> None:
        self.interrupted = True

    def _running(self) -> dict[int, WorkerRecord]:
        """The started workers without an exit record whose process is still there (a worker whose
        supervisor was killed leaves no record)."""
        started, ended = _read_records(self.state, "start"), _read_records(self.state, "exit")
        return {r: rec for r, rec in started.items() if r not in ended and _alive(rec.pid)}

    def _stop(self, running: dict[int, WorkerRecord]) -> None:
        for rank, record in running.items():
            self.stopped.add(rank)
            try:
                os.kill(record.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _watch(self, mpiexec: subprocess.Popen) -> int:
        job, timeout = self.job, self.job.cluster_time_out
        t0 = time.monotonic()
        while True:
            started, ended = _read_records(self.state, "start"), _read_records(self.state, "exit")
            failed = sorted((rec for rec in ended.values() if rec.status), key=lambda rec: rec.ended)
            if failed:
                return self._failed(failed[0])
            if len(ended) == len(self.ranks):
                say("INFO", "All workers successfully exit!")
                return 0
            if self.interrupted:
                say("WARNING", "msrun process received SIGNIN (Ctrl+C), terminating all workers.")
                return INTERRUPT_EXIT
            now = time.monotonic()
            if timeout >= 0 and now > t0 + timeout:
                missing = [r for r in self.ranks if r not in started]
                if missing:
                    return self._timed_out(missing, f"did not start within --cluster_time_out {timeout} s")
                if ended and now > min(rec.ended for rec in ended.values()) + timeout:
                    first = min(ended.values(), key=lambda rec: rec.ended)
                    hung = [r for r in self.ranks if r not in ended]
                    return self._timed_out(hung, f"is still running {timeout} s (--cluster_time_out) after worker "
                                                 f"rank {first.rank} finished: hung, or stalled waiting for a rank "
                                                 f"that is")
            if mpiexec.poll() is not None:
                time.sleep(POLL_S)        # the last supervisors' records land before mpiexec's end is final
                if len(_read_records(self.state, "exit")) < len(self.ranks):
                    lost = [r for r in self.ranks if r not in _read_records(self.state, "exit")]
                    say("ERROR", f"mpiexec ended with status {describe_status(mpiexec.returncode)} before worker "
                                 f"rank(s) {lost} reported how they ended (their supervisor was killed); "
                                 f"their logs: {', '.join(str(job.log_path(r)) for r in lost)}")
                    return exit_code(mpiexec.returncode) or 1
                continue
            time.sleep(POLL_S)

    def _failed(self, culprit: WorkerRecord) -> int:
        job = self.job
        say("ERROR", f"Worker process {culprit.pid} exit with exception. Error code: {exit_code(culprit.status)}.")
        say("ERROR", f"worker rank {culprit.rank} (pid {culprit.pid}) exited with status "
                     f"{describe_status(culprit.status)}; its log: {job.log_path(culprit.rank)}")
        cause = _last_error(job.log_path(culprit.rank))
        if cause:
            say("ERROR", f"rank {culprit.rank} failed: {cause}")
        grace = self._collective_grace()
        if grace and self._running():
            say("WARNING", f"waiting up to {grace:g} s ({EXEC_TIMEOUT_ENV}) for worker rank(s) "
                           f"{sorted(self._running())} to end the collective they share with rank {culprit.rank}")
            deadline = time.monotonic() + grace
            # until each survivor ended or reported its error (one that failed in a collective then
            # waits in MPI_Abort for a cleanup this scheduler does)
            while time.monotonic() < deadline and any(_last_error(job.log_path(r)) is None for r in self._running()):
                time.sleep(POLL_S)
        say("WARNING", "There's worker exits with exception, kill all other workers.")
        running = self._running()
        self._stop(running)
        if running:
            say("WARNING", f"stopped worker rank(s) {sorted(running)} (they would wait for rank "
                           f"{culprit.rank} forever)")
        for rank in self.ranks:
            error = _last_error(job.log_path(rank))
            if rank != culprit.rank and error:
                say("ERROR", f"worker rank {rank}: {error}")
        self._tail(culprit.rank)
        self._wait_records()
        worst = max(exit_code(rec.status) for rec in _read_records(self.state, "exit").values()
                    if rec.rank not in self.stopped)
        say("ERROR", f"Distributed job exited with exception. Please check logs in directory: {job.log_dir}.")
        return worst

    def _timed_out(self, ranks: list[int], why: str) -> int:
        running = self._running()
        self._stop(running)
        for rank in ranks:
            pid = running[rank].pid if rank in running else "-"
            say("ERROR", f"worker rank {rank} (pid {pid}) {why}; stopped it. Its log: {self.job.log_path(rank)}")
        say("ERROR", f"Distributed job exited with exception. Please check logs in directory: {self.job.log_dir}.")
        return TIMEOUT_EXIT

    def _collective_grace(self) -> float:
        """How long the survivors of a failed worker may take to end on their own: HCCL's collective
        timeout (``HCCL_EXEC_TIMEOUT``, when the job sets it) within ``--cluster_time_out``, so that a
        survivor waiting for the dead rank in a collective ends with HCCL's error naming it. 0 (stop
        them at once, as msrun does) when the variable is unset."""
        if not os.environ.get(EXEC_TIMEOUT_ENV):
            return 0.0
        grace = timeout_from_env(EXEC_TIMEOUT_ENV, 0.0) + STOP_GRACE_S / 5    # their report and abort
        return min(grace, self.job.cluster_time_out) if self.job.cluster_time_out >= 0 else grace

    def _wait_records(self) -> None:
        """Until every started worker has an exit record (the stopped ones die at once), a few seconds at most."""
        deadline = time.monotonic() + STOP_GRACE_S
        while self._running() and time.monotonic() < deadline:
            time.sleep(POLL_S)

    def _tail(self, rank: int, lines: int = 10) -> None:
        path = self.job.log_path(rank)
        try:
            text = path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return
        say("ERROR", f"last lines of {path}:\n" + "\n".join(f"    {line}" for line in text))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _last_error(log: Path) -> str | None:
    """The last line of a worker's log that names an error (its traceback's last line), if any."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    errors = [line.strip() for line in lines if "Error" in line.split(":", 1)[0]]
    return errors[-1] if errors else None


# ------------------------------------------------------------------------------------------ DryRun

_FIGURE = re.compile(r"^\[ascendemu\] (?P<line>DryRun: .*)$", re.MULTILINE)


def dryrun_figures(log: str) -> dict[str, str]:
    """The peak memory, step time and communication lines of a DryRun rank's summary, from its log."""
    from ascendemu.device.comm_overlap import COMM_LINE, EXPOSED_LINE
    from ascendemu.graph.modes import DRYRUN_ACTUAL, DRYRUN_OVER_HBM, DRYRUN_STEP, DRYRUN_USED   # their one home

    figures = {}
    prefixes = (("used", DRYRUN_USED), ("actual", DRYRUN_ACTUAL), ("step", DRYRUN_STEP), ("comm", COMM_LINE),
                ("exposed", EXPOSED_LINE), ("over_hbm", DRYRUN_OVER_HBM))
    for m in _FIGURE.finditer(log):
        for key, prefix in prefixes:
            if m.group("line").startswith(prefix):
                figures[key] = m.group("line")[len(prefix):].split(" (")[0]
    return figures


DRYRUN_COLUMNS = ("rank", "Used peak memory usage (without fragments)", "Actual peak memory usage (with fragments)",
                  "simulated step time", "communication time", "exposed communication", "simulated as rank")


def simulate(job: Job, state: Path) -> int:
    """Run one rank of each distinct parallel position alone (cli/positions.py), one after another, and print
    one table of every rank's figures: a rank in the position of a simulated rank shows that rank's."""
    from .positions import POSITION_ENV, position_keys, read_position

    rows: dict[int, tuple[dict[str, str], int, int]] = {}      # rank -> (figures, status, simulated rank)
    pending, worst, simulated = list(job.ranks()), 0, 0
    while pending:
        rank = pending.pop(0)
        say("WARNING", job.start_line(rank))
        position = state / f"position_{rank}.json"
        env = {**os.environ, **job.worker_env(rank, rank % job.local_worker_num), POSITION_ENV: str(position)}
        log = job.log_path(rank)
        with open(log, "w") as out:
            status = subprocess.run(job.command(), env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT).returncode
        simulated += 1
        figures = dryrun_figures(log.read_text(errors="replace"))
        rows[rank] = (figures, status, rank)
        if status:
            worst = max(worst, exit_code(status))
            say("ERROR", f"worker rank {rank} exited with status {describe_status(status)}; its log: {log}")
        doc = read_position(position)      # a rank that failed in its step still wrote it: its peers would fail alike
        if doc is None or doc["world"] != job.worker_num:
            continue
        keys = position_keys(doc, [rank, *pending])
        if keys[rank] is None:
            continue
        same = {r for r in pending if keys[r] == keys[rank]}
        for r in same:
            rows[r] = (figures, status, rank)
        pending = [r for r in pending if r not in same]
    table = [DRYRUN_COLUMNS]
    for rank in sorted(rows):
        f, status, source = rows[rank]
        actual = f"{f['actual']}(>HBM)" if "over_hbm" in f else f.get("actual", "-")     # does not fit
        table.append((str(rank), f.get("used", "-"), actual,
                      f.get("step", "-") if not status else f"failed ({describe_status(status)})",
                      f.get("comm", "-"), f.get("exposed", "-"), str(source)))
    widths = [max(len(row[i]) for row in table) for i in range(len(DRYRUN_COLUMNS))]
    say("WARNING", f"DryRun (MS_SIMULATION_LEVEL={job.sim_level}) of {len(rows)} rank(s), RANK_SIZE={job.worker_num}, "
        f"{simulated} distinct position(s) simulated:\n"
        + "\n".join("  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in table))
    return worst


def run_scheduler(state: Path) -> int:
    """The scheduler process's work; the state directory is removed when the job has ended."""
    try:
        job = Job.load(state)
        return simulate(job, state) if job.simulation else Scheduler(job, state).run()
    finally:
        shutil.rmtree(state, ignore_errors=True)


def resolve_master(addr: str) -> str:
    """``--master_addr`` as an IPv4 address (a host name is resolved, as msrun does)."""
    try:
        return socket.gethostbyname(addr)
    except OSError as exc:
        raise InvalidParamError(f"DNS resolution failed: {exc}; give --master_addr as an IP address or a "
                                f"resolvable host name") from None


if __name__ == "__main__":
    sys.exit(run_scheduler(Path(sys.argv[1])))
