"""The fabric: how the processes of a job's ranks exchange a collective's bytes and arrival times.

One small interface, :class:`Fabric`, with one call, :meth:`Fabric.exchange`: send each peer (a world
rank) one message (a header naming the collective, this rank's simulated arrival time, a payload) and
receive one from each, or fail with a typed HCCL error naming the peers that never sent. Everything a
collective does is built from that call (:mod:`.collectives`); a point-to-point Send is one-way
(:meth:`Fabric.post`, its own message tag) and a Receive takes the peer's next such message
(:meth:`Fabric.take`), so pipeline stages that each send before they receive never deadlock. Two implementations:

* :class:`MpiFabric`: the ranks are processes of one MPI job (``mpiexec -n N``; mpi4py with MPICH).
  Messages are non-blocking point-to-point sends on a private duplicate of ``MPI_COMM_WORLD``, and
  receives are polled (``Iprobe``) with a growing sleep until they all arrived or the timeout passed;
  nothing blocks without a deadline. MPI keeps messages between two processes in order, so a peer's
  next message is always the one for the collective both are at; the header proves it. When a peer
  never arrives, this rank tells every other rank (so they fail at once instead of after their own
  timeout) and raises :class:`~ascendemu.errors.HcclTimeoutError` naming it. A rank whose script
  failed says so the same way (:meth:`MpiFabric.script_ended`, called by ``ascendemu run``, which joins
  the world as it starts): every rank waiting for it in a collective fails at once with
  ``rank N failed: <its error>``. After a failure nobody finalizes MPI (that would wait for the failed
  rank forever). Each process tells the others when it ends, after its report; the rank that detected
  the failure waits (at most :data:`REPORT_WAIT_S`) until every other rank has ended, then leaves with
  its status, and the launcher stops the job: mpiexec ends a job when one of its ranks leaves MPI with
  an error, msrun's scheduler when a worker ends with one. A rank that only learned of the failure waits
  to be stopped that way, so the launcher names the rank that failed first.
* :class:`ReplayedFabric`: nothing is exchanged either, but the peers arrive when a recording of this
  rank says the latest of them did: one rank's trace replays alone and reproduces its waits.
* :class:`SimulatedFabric`: nothing is exchanged. Every peer is taken to arrive when this rank does
  and to send nothing: a world of one rank, and a rank simulated alone (DryRun with ``RANK_SIZE=8
  RANK_ID=3``), where collectives are priced by the interconnect model and move no byte.

mpi4py is imported only by :meth:`MpiFabric.join`, i.e. only when a world of more than one rank is
joined under an MPI launcher.
"""
from __future__ import annotations

import atexit
import os
import struct
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ascendemu.errors import HcclError, HcclParamError, HcclRemoteError, HcclTimeoutError, InvalidParamError
from ascendemu.ranks import in_dynamic_cluster, mpi_place

__all__ = ["Fabric", "SimulatedFabric", "ReplayedFabric", "RecordedWait", "MpiFabric", "timeout_from_env",
           "join_world", "joined_world", "REPORT_WAIT_S", "EXEC_TIMEOUT_ENV",
           "CONNECT_TIMEOUT_ENV", "DEFAULT_EXEC_TIMEOUT_S", "DEFAULT_CONNECT_TIMEOUT_S"]

# HCCL's timeouts (CANN environment variables): how long a collective waits for the other ranks, and
# how long building a communicator does. Real HCCL rounds and clamps them ([68, 17340] s and [120, 7200] s);
# the emulator takes any positive number of seconds, so tests can use short ones.
EXEC_TIMEOUT_ENV = "HCCL_EXEC_TIMEOUT"
CONNECT_TIMEOUT_ENV = "HCCL_CONNECT_TIMEOUT"
DEFAULT_EXEC_TIMEOUT_S = 1800.0
DEFAULT_CONNECT_TIMEOUT_S = 120.0
# A message: communicator key, collective number, phase, arrival time (simulated seconds), payload size.
_HEADER = struct.Struct("<QQQdq")
_NO_PAYLOAD = -1
# message tags: a collective's data, a failure notice, "this process ends", a note gathered at the end
_DATA_TAG, _NOTICE_TAG, _ENDED_TAG, _NOTE_TAG = 1, 2, 3, 4
_P2P_TAG = 5                               # a point-to-point Send's message (one-way: Fabric.post / take)
_POLL_MIN_S, _POLL_MAX_S = 20e-6, 2e-3     # polling sleep: starts short, doubles while nothing arrives
# After a failure: how long a rank waits for the others to report and end before it leaves (a rank busy
# outside any collective never hears of the failure, and is stopped after this long), and how long a rank
# that only learned of another's failure waits for that rank to end the job before it leaves on its own.
REPORT_WAIT_S = 30.0
_FOLLOW_WAIT_S = 3 * REPORT_WAIT_S
_SEND_DRAIN_S = 5.0                        # at exit, how long this process's last small sends may take to leave


def timeout_from_env(name: str, default: float) -> float:
    """A timeout in seconds from environment variable ``name`` (a positive number), else ``default``."""
    value = os.environ.get(name, "")
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise HcclParamError(f"environment variable {name}={value!r} must be a positive number of seconds")
    return seconds


class Fabric:
    """Moves messages between the processes of a job's ranks (module docstring). ``rank`` and ``size``
    are this process's world rank and the world size; ``carries_data`` is False when peers send nothing."""

    rank: int
    size: int
    carries_data: bool

    def exchange(self, peers: Sequence[int], header: tuple[int, int, int], arrival: float,
                 outgoing: Mapping[int, np.ndarray | bytes | None], timeout: float,
                 what: str) -> dict[int, tuple[float, memoryview | None]]:
        """Send ``outgoing[peer]`` (None: no payload) with ``header`` and ``arrival`` to each of ``peers``
        (world ranks) and return, per peer, its arrival time and payload. Raises HcclTimeoutError naming
        the peers not heard from within ``timeout`` seconds, HcclRemoteError if another rank reported a
        failure, HcclError if a peer is at another collective."""
        raise NotImplementedError

    def post(self, peer: int, header: tuple[int, int, int], arrival: float, payload: np.ndarray | None,
             what: str) -> None:
        """Send world rank ``peer`` one point-to-point message without waiting for it to be received."""
        raise NotImplementedError

    def take(self, peer: int, header: tuple[int, int, int], arrival: float, timeout: float,
             what: str) -> tuple[float, memoryview | None]:
        """The next point-to-point message world rank ``peer`` posted to this rank: its arrival and payload."""
        raise NotImplementedError

    def describe(self) -> str:
        return f"{type(self).__name__}(rank {self.rank} of {self.size})"


class SimulatedFabric(Fabric):
    """Exchanges nothing: every peer arrives with this rank and sends no payload (module docstring)."""

    carries_data = False

    def __init__(self, rank: int = 0, size: int = 1):
        if not 0 <= rank < size:
            raise HcclParamError(f"rank {rank} is not a rank of a world of {size}")
        self.rank, self.size = rank, size

    def exchange(self, peers, header, arrival, outgoing, timeout, what):
        return {peer: (arrival, None) for peer in peers}

    def post(self, peer, header, arrival, payload, what):
        return None

    def take(self, peer, header, arrival, timeout, what):
        return arrival, None


@dataclass(frozen=True)
class RecordedWait:
    """What one collective of a recorded run waited for: its communicator's key and collective number
    (the header its first message carried), this rank's arrival and the latest arrival of all ranks."""

    comm_key: int
    seq: int
    arrival: float
    start: float


class ReplayedFabric(SimulatedFabric):
    """A recorded rank's world, replayed alone: no byte moves, and in each collective every peer arrives
    at the latest arrival the recording holds for it (``waits``, consumed in order, as collectives run in
    host issue order). When this rank arrives when it did in the recording, the peers arrive at the
    recorded instant, bit for bit; when it arrives at another time (a what-if), the peers are taken to be
    as late relative to it as they were."""

    def __init__(self, rank: int, size: int, waits: deque[RecordedWait]):
        super().__init__(rank, size)
        self.waits = waits

    def exchange(self, peers, header, arrival, outgoing, timeout, what):
        if header[2] != 0:                       # a later phase: the arrivals are known already
            return {peer: (arrival, None) for peer in peers}
        latest = self._latest(header, arrival, what)
        return {peer: (latest, None) for peer in peers}

    def post(self, peer, header, arrival, payload, what):
        self._latest(header, arrival, what)      # a Send waited for nobody, but its record is consumed

    def take(self, peer, header, arrival, timeout, what):
        return self._latest(header, arrival, what), None

    def _latest(self, header: tuple[int, int, int], arrival: float, what: str) -> float:
        """The peers' latest arrival at the recording's next collective (consumed)."""
        if not self.waits:
            raise HcclError(f"{what}: the trace holds no record of what this collective waited for (a trace "
                            "cut short, or recorded by an older ascendemu); replay a complete trace")
        wait = self.waits.popleft()
        if wait.comm_key != header[0]:       # (its number may differ: the run's handshakes counted too)
            raise HcclError(f"{what}: the trace's next collective is of another communicator; the replay "
                            "issued its collectives in another order than the run")
        return wait.start if arrival == wait.arrival else arrival + (wait.start - wait.arrival)


class MpiFabric(Fabric):
    """The ranks are the processes of an MPI job (module docstring). One per process: :meth:`join`."""

    carries_data = True
    _joined: "MpiFabric | None" = None

    def __init__(self, comm, mpi) -> None:
        self._mpi = mpi
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.failure: HcclError | None = None
        self.origin = False                  # this process detected the failure (not told of it)
        self.missing: set[int] = set()       # ranks a timeout found gone: nobody waits for them at exit
        self.exit_status: int | None = None  # what the rank runner exits with (script_ended)
        self._sends: list = []               # notices and notes in flight, completed at exit
        self._p2p: list = []                 # point-to-point Sends in flight (request, buffer)

    @classmethod
    def join(cls) -> "MpiFabric":
        """Join the MPI world of this process (imports mpi4py; MPI is initialised once per process)."""
        if cls._joined is None:
            import mpi4py
            mpi4py.rc.finalize = False          # this fabric finalizes (or not, after a failure) at exit: _close
            from mpi4py import MPI
            if not MPI.Is_initialized():
                MPI.Init()
            cls._joined = cls(MPI.COMM_WORLD.Dup(), MPI)
            atexit.register(cls._joined._close)
        return cls._joined

    def _check_failed(self) -> None:
        if self.failure is not None:
            raise type(self.failure)(f"the fabric failed before: {self.failure.message}", self.failure.code)

    @staticmethod
    def _message(header: tuple[int, int, int], arrival: float, payload: np.ndarray | bytes | None) -> bytearray:
        body = b"" if payload is None else memoryview(np.ascontiguousarray(payload)).cast("B")
        msg = bytearray(_HEADER.size + len(body))
        _HEADER.pack_into(msg, 0, *header, arrival, _NO_PAYLOAD if payload is None else len(body))
        msg[_HEADER.size:] = body
        return msg

    def post(self, peer, header, arrival, payload, what):
        self._check_failed()
        msg = self._message(header, arrival, payload)
        self._p2p = [(req, buf) for req, buf in self._p2p if not req.Test()]
        self._p2p.append((self.comm.Isend([msg, self._mpi.BYTE], dest=peer, tag=_P2P_TAG), msg))

    def take(self, peer, header, arrival, timeout, what):
        self._check_failed()
        MPI, comm = self._mpi, self.comm
        deadline, nap, status = time.monotonic() + timeout, 0.0, MPI.Status()
        while not comm.Iprobe(source=peer, tag=_P2P_TAG, status=status):
            if comm.Iprobe(source=MPI.ANY_SOURCE, tag=_NOTICE_TAG, status=status):
                raise self._notice(status.Get_source(), what)
            if time.monotonic() > deadline:
                self._timed_out([peer], what, timeout)
            nap = min(max(nap * 2, _POLL_MIN_S), _POLL_MAX_S)
            time.sleep(nap)
        msg = bytearray(status.Get_count(MPI.BYTE))
        comm.Recv([msg, MPI.BYTE], source=peer, tag=_P2P_TAG)
        return self._parse(msg, peer, header, what)

    def exchange(self, peers, header, arrival, outgoing, timeout, what):
        self._check_failed()
        MPI, comm = self._mpi, self.comm
        sends, buffers = [], []
        for peer in peers:
            msg = self._message(header, arrival, outgoing.get(peer))
            buffers.append(msg)
            sends.append(comm.Isend([msg, MPI.BYTE], dest=peer, tag=_DATA_TAG))
        got: dict[int, tuple[float, memoryview | None]] = {}
        pending = list(peers)
        deadline = time.monotonic() + timeout
        nap = 0.0
        status = MPI.Status()
        while True:
            progressed = False
            for peer in list(pending):
                if comm.Iprobe(source=peer, tag=_DATA_TAG, status=status):
                    msg = bytearray(status.Get_count(MPI.BYTE))
                    comm.Recv([msg, MPI.BYTE], source=peer, tag=_DATA_TAG)
                    got[peer] = self._parse(msg, peer, header, what)
                    pending.remove(peer)
                    progressed = True
            if comm.Iprobe(source=MPI.ANY_SOURCE, tag=_NOTICE_TAG, status=status):
                raise self._notice(status.Get_source(), what)
            if not pending and MPI.Request.Testall(sends):
                return got
            if time.monotonic() > deadline:
                unsent = [peer for peer, req in zip(peers, sends) if not req.Test()]
                self._timed_out(sorted(set(pending) | set(unsent)), what, timeout)
            nap = 0.0 if progressed else min(max(nap * 2, _POLL_MIN_S), _POLL_MAX_S)
            if nap:
                time.sleep(nap)

    def _parse(self, msg: bytearray, peer: int, header: tuple[int, int, int],
               what: str) -> tuple[float, memoryview | None]:
        if len(msg) < _HEADER.size:
            raise self._fail(HcclError(f"{what}: rank {peer} sent a malformed message ({len(msg)} bytes)"))
        key, seq, phase, arrival, size = _HEADER.unpack_from(msg, 0)
        if (key, seq, phase) != header:
            theirs = f"collective #{seq}" if key == header[0] else "a collective of another communicator"
            raise self._fail(HcclError(
                f"{what}: rank {peer} is at {theirs}"
                f" while this rank is at collective #{header[1]} of this one; every rank of a communicator must "
                "issue its collectives in the same order"))
        return arrival, (None if size == _NO_PAYLOAD else memoryview(msg)[_HEADER.size:])

    def _timed_out(self, missing: list[int], what: str, timeout: float) -> None:
        err = HcclTimeoutError(
            f"{what}: rank(s) {missing} did not arrive within {timeout:g} s ({EXEC_TIMEOUT_ENV}, or "
            f"{CONNECT_TIMEOUT_ENV} when a communicator is built); this is rank {self.rank} of {self.size}. "
            "Check that every rank runs the same collectives in the same order and that none exited or hangs "
            "(see its log)", missing=tuple(missing), collective=what)
        self.missing.update(missing)
        self._post(f"rank {self.rank} failed: {err.message}".encode(), _NOTICE_TAG)
        raise self._fail(err)

    def script_ended(self, status: int, error: BaseException | None, what: str | None = None) -> None:
        """The rank runner's word that the script ended with ``status`` (and ``error``, what it raised;
        or ``what``, why the rank ended without running it): a failure (status not 0) on a fabric that had
        not failed yet tells every other rank ``rank N failed: <error>`` at once, and the job ends at this
        process's exit (module docstring)."""
        self.exit_status = status
        if not status or self.failure is not None:
            return
        if what is None:
            what = f"{type(error).__name__}: {error}" if error is not None else f"the script exited with status {status}"
        message = f"rank {self.rank} failed: {what}"
        self._post(message.encode(), _NOTICE_TAG)
        self._fail(HcclError(message))

    def gather(self, note: str, timeout: float, root: int = 0) -> dict[int, str]:
        """Every rank calls this once, at the end of its run: each sends ``note`` to ``root``, which
        returns the notes of the ranks heard from within ``timeout`` seconds, its own included (a rank
        that ended without calling this is missing); the others return {}. Once a failure is known,
        here or from a notice arriving meanwhile, root waits at most :data:`REPORT_WAIT_S` more."""
        if self.rank != root:
            self._post(note.encode(), _NOTE_TAG, [root])
            return {}
        MPI, comm = self._mpi, self.comm
        notes = {root: note}
        pending = set(range(self.size)) - {root}
        deadline = time.monotonic() + (min(timeout, REPORT_WAIT_S) if self.failure is not None else timeout)
        status = MPI.Status()
        while pending and time.monotonic() < deadline:
            for peer in sorted(pending):
                if comm.Iprobe(source=peer, tag=_NOTE_TAG, status=status):
                    msg = bytearray(status.Get_count(MPI.BYTE))
                    comm.Recv([msg, MPI.BYTE], source=peer, tag=_NOTE_TAG)
                    notes[peer] = msg.decode(errors="replace")
                    pending.discard(peer)
            if self.failure is None and comm.Iprobe(source=MPI.ANY_SOURCE, tag=_NOTICE_TAG, status=status):
                self._notice(status.Get_source(), "gathering the ranks' notes at the end of the run")
                deadline = min(deadline, time.monotonic() + REPORT_WAIT_S)
            time.sleep(_POLL_MAX_S)
        return notes

    def _post(self, message: bytes, tag: int, peers: Sequence[int] | None = None) -> None:
        """Send ``message`` to ``peers`` (default: every other rank) without waiting; completed at exit."""
        for peer in range(self.size) if peers is None else peers:
            if peer != self.rank:
                self._sends.append(self.comm.Isend([message, self._mpi.BYTE], dest=peer, tag=tag))

    def _notice(self, source: int, what: str) -> HcclRemoteError:
        """Receive rank ``source``'s failure notice: this fabric has failed too (the error to raise)."""
        status = self._mpi.Status()
        self.comm.Probe(source=source, tag=_NOTICE_TAG, status=status)
        msg = bytearray(status.Get_count(self._mpi.BYTE))
        self.comm.Recv([msg, self._mpi.BYTE], source=source, tag=_NOTICE_TAG)
        return self._fail(HcclRemoteError(
            f"{what}: {msg.decode(errors='replace')}. This rank (rank {self.rank}) stops too; rank {source}'s "
            "output or log has its error"), origin=False)

    def _fail(self, err: HcclError, origin: bool = True) -> HcclError:
        if self.failure is None:
            self.failure, self.origin = err, origin
        return err

    def _wait_for(self, tag: int, ranks: set[int], seconds: float) -> None:
        """Until a message tagged ``tag`` came from each of ``ranks``, or ``seconds`` passed."""
        deadline = time.monotonic() + seconds
        while ranks and time.monotonic() < deadline:
            for peer in sorted(ranks):
                if self.comm.Iprobe(source=peer, tag=tag):
                    ranks.discard(peer)
            time.sleep(_POLL_MAX_S)

    def _drain(self) -> None:
        """Complete this process's sends (small, so at once unless a peer is gone), a few seconds at most."""
        deadline = time.monotonic() + _SEND_DRAIN_S
        sends = self._sends + [req for req, _ in self._p2p]
        while not self._mpi.Request.Testall(sends) and time.monotonic() < deadline:
            time.sleep(_POLL_MAX_S)

    def _close(self) -> None:
        """At exit: say this process ends; finalize MPI, or after a failure end the job (module docstring)."""
        MPI = self._mpi
        if MPI.Is_finalized():
            return
        sys.stdout.flush()
        sys.stderr.flush()
        status = MPI.Status()
        if self.failure is None and self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=_NOTICE_TAG, status=status):
            self._notice(status.Get_source(), "at exit")          # another rank failed: do not finalize
        self._post(b"", _ENDED_TAG, [r for r in range(self.size) if r not in self.missing])
        if self.failure is None:
            self._drain()
            # msrun's worker leaves MPI unfinalized: MPI_Finalize would wait for every other rank, and msrun's
            # scheduler (which starts its mpiexec with -disable-auto-cleanup) must see each worker end when it
            # does, to name a hung one; a plain mpiexec would take that for a failure and stop the job
            if not in_dynamic_cluster():
                MPI.Finalize()
            return
        if self.origin:        # every other rank has reported its error (or ended) before the job ends
            self._wait_for(_ENDED_TAG, set(range(self.size)) - self.missing - {self.rank}, REPORT_WAIT_S)
        else:                  # the rank that failed first leaves first, and the launcher stops this one
            time.sleep(_FOLLOW_WAIT_S)
        self._drain()
        if not self.exit_status:      # no status to leave with (not run by `ascendemu run`): end the job
            MPI.COMM_WORLD.Abort(1)
        # else the interpreter exits with the script's status, MPI unfinalized: the launcher stops the job

    def describe(self) -> str:
        return f"MPI (rank {self.rank} of {self.size})"


def join_world() -> MpiFabric | None:
    """This process's MPI world when an MPI launcher started it as one of several ranks, else None.
    ``ascendemu run`` joins it as it starts, so a rank that fails before ``init()`` can still tell the
    others (which would otherwise wait in MPI's start-up forever)."""
    place = mpi_place()
    if place is None or place.size <= 1:
        return None
    return MpiFabric.join()


def joined_world() -> MpiFabric | None:
    """The MPI world this process joined, if any (nothing is imported or joined here)."""
    return MpiFabric._joined
