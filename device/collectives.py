"""Collectives as the device sees them: one class per kind, and the communicator they run in.

A kind (:class:`AllReduce`, :class:`AllGather`, :class:`ReduceScatter`, :class:`Broadcast`,
:class:`AllToAll`, :class:`Send`, :class:`Recv`, :class:`Barrier`) knows three things, so the device
task that runs it (:class:`~.tasks.CollectiveTask`) knows none of them:

* how many bytes it reads from its send buffer and writes to its receive buffer (``send_count`` /
  ``recv_count``, in elements, from the call's ``count`` and the communicator's size);
* its simulated duration on the communicator's algorithm (``seconds``, :mod:`.interconnect`);
* how the data moves (``perform``): what each rank sends to which peer through the communicator's
  fabric (:mod:`.fabric`) and how it combines what it receives (a point-to-point Send is one-way:
  ``Exchange.post``; its Recv takes the next message: ``Exchange.take``). A reduction always combines the
  contributions in communicator-rank order, on the rank that owns that part of the vector, and the
  result is then copied to everyone, so every rank holds the same bits whatever the scheduling.

A :class:`Communicator` is a group of world ranks over one fabric: its algorithm is chosen once
from the topology, it numbers its collectives (a message from a peer names the collective it belongs
to, so ranks that issue collectives in different orders get an error, not wrong data).
"""
from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Sequence

import numpy as np

from ascendemu.errors import HcclParamError

from .interconnect import Algorithm, choose_algorithm, link_between, reduction_gamma
from .spec import DeviceSpec

if TYPE_CHECKING:
    from .fabric import Fabric

__all__ = ["ReduceOp", "Collective", "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "AllToAll", "Send",
           "Recv", "Barrier", "CollectiveChain", "Communicator", "Exchange"]


class ReduceOp(enum.IntEnum):
    """HCCL's reduce operations (HcclReduceOp values)."""

    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3

    @property
    def ufunc(self) -> np.ufunc:
        return (np.add, np.multiply, np.maximum, np.minimum)[self]


def _reduce(parts: Sequence[np.ndarray], op: ReduceOp) -> np.ndarray:
    """Combine ``parts`` strictly in order: ((p0 op p1) op p2) ..., in their own dtype."""
    acc = np.array(parts[0], copy=True)
    for part in parts[1:]:
        op.ufunc(acc, part, out=acc)
    return acc


class Exchange:
    """One collective's view of its communicator: ``send(outgoing)`` sends each peer (communicator
    rank -> array) its part and returns what every peer sent (communicator rank -> uint8 bytes). The
    first call also carries this rank's arrival time and returns everyone's (``arrivals``)."""

    def __init__(self, comm: "Communicator", peers: Sequence[int], what: str, arrival: float,
                 timeout: float | None = None):
        self.comm, self.peers, self.what, self.arrival = comm, tuple(peers), what, arrival
        self.timeout = comm.exec_timeout if timeout is None else timeout
        self.arrivals: dict[int, float] = {comm.index: arrival}
        self.phase = 0

    def send(self, outgoing: dict[int, np.ndarray | None]) -> dict[int, memoryview | None]:
        comm = self.comm
        got = comm.fabric.exchange([comm.ranks[i] for i in self.peers], comm.header(self.peers, self.phase),
                                   self.arrival, {comm.ranks[i]: outgoing.get(i) for i in self.peers},
                                   self.timeout, self.what)
        self.phase += 1
        for i in self.peers:
            self.arrivals.setdefault(i, got[comm.ranks[i]][0])
        return {i: got[comm.ranks[i]][1] for i in self.peers}

    def post(self, peer: int, data: np.ndarray | None) -> None:
        """One-way: send communicator rank ``peer`` ``data`` and go on (a point-to-point Send does not wait
        for its receiver, so two pipeline stages that each send before they receive never deadlock)."""
        comm = self.comm
        comm.fabric.post(comm.ranks[peer], comm.p2p_header(comm.index, peer), self.arrival, data, self.what)

    def take(self, peer: int) -> memoryview | None:
        """The message communicator rank ``peer`` posted to this rank next; its arrival joins ``arrivals``."""
        comm = self.comm
        arrival, payload = comm.fabric.take(comm.ranks[peer], comm.p2p_header(peer, comm.index), self.arrival,
                                            self.timeout, self.what)
        self.arrivals[peer] = arrival
        return payload


class Collective:
    """Base of the kinds (module docstring). ``n`` in ``seconds`` is the bytes of one element."""

    name: ClassVar[str] = ""

    def send_count(self, count: int, p: int) -> int:
        return count

    def recv_count(self, count: int, p: int) -> int:
        return count

    def peers(self, comm: "Communicator") -> tuple[int, ...]:
        """The communicator ranks this rank exchanges with."""
        return tuple(i for i in range(comm.size) if i != comm.index)

    def seconds(self, comm: "Communicator", count: int, itemsize: int, gamma: float) -> float:
        raise NotImplementedError

    def perform(self, ex: Exchange, data: np.ndarray | None, count: int, dtype: np.dtype) -> np.ndarray | None:
        """Move the data (``data``: this rank's send buffer as ``dtype``, None when no bytes are carried)
        and return what goes into the receive buffer (None: nothing)."""
        raise NotImplementedError

    def label(self) -> str:
        return self.name


def _chunks(n: int, p: int) -> list[slice]:
    """p contiguous pieces of n elements, the first n % p one element longer (np.array_split's)."""
    base, extra = divmod(n, p)
    out, start = [], 0
    for i in range(p):
        end = start + base + (i < extra)
        out.append(slice(start, end))
        start = end
    return out


def _parts(got: dict[int, memoryview | None], me: int, mine: np.ndarray, dtype: np.dtype) -> list[np.ndarray]:
    """Every rank's piece in communicator-rank order (this rank's own from ``mine``)."""
    return [mine if i == me else np.frombuffer(got[i], dtype=dtype) for i in range(len(got) + 1)]


@dataclass(frozen=True)
class AllReduce(Collective):
    """Every rank gets the reduction of all send buffers (``count`` elements each). Rank i reduces the
    i-th piece of the vector in rank order, then everyone gathers the pieces."""

    name: ClassVar[str] = "AllReduce"
    op: ReduceOp = ReduceOp.SUM

    def seconds(self, comm, count, itemsize, gamma):
        return comm.algorithm.all_reduce(count * itemsize, gamma)

    def perform(self, ex, data, count, dtype):
        if data is None:
            ex.send({})
            ex.send({})
            return None
        me, p = ex.comm.index, ex.comm.size
        pieces = _chunks(count, p)
        got = ex.send({i: data[pieces[i]] for i in ex.peers})
        mine = _reduce(_parts(got, me, data[pieces[me]], dtype), self.op)
        got = ex.send({i: mine for i in ex.peers})
        return np.concatenate(_parts(got, me, mine, dtype))

    def label(self) -> str:
        return f"AllReduce({self.op.name.lower()})"


@dataclass(frozen=True)
class ReduceScatter(Collective):
    """Rank i gets the reduction of piece i (``count`` elements) of every rank's send buffer."""

    name: ClassVar[str] = "ReduceScatter"
    op: ReduceOp = ReduceOp.SUM

    def send_count(self, count, p):
        return count * p

    def seconds(self, comm, count, itemsize, gamma):
        return comm.algorithm.reduce_scatter(count * comm.size * itemsize, gamma)

    def perform(self, ex, data, count, dtype):
        me = ex.comm.index
        if data is None:
            ex.send({})
            return None
        got = ex.send({i: data[i * count:(i + 1) * count] for i in ex.peers})
        return _reduce(_parts(got, me, data[me * count:(me + 1) * count], dtype), self.op)

    def label(self) -> str:
        return f"ReduceScatter({self.op.name.lower()})"


@dataclass(frozen=True)
class AllGather(Collective):
    """Every rank gets all send buffers (``count`` elements each) concatenated in rank order."""

    name: ClassVar[str] = "AllGather"

    def recv_count(self, count, p):
        return count * p

    def seconds(self, comm, count, itemsize, gamma):
        return comm.algorithm.all_gather(count * comm.size * itemsize)

    def perform(self, ex, data, count, dtype):
        if data is None:
            ex.send({})
            return None
        got = ex.send({i: data for i in ex.peers})
        return np.concatenate(_parts(got, ex.comm.index, data, dtype))


@dataclass(frozen=True)
class Broadcast(Collective):
    """Every rank's buffer gets the ``root`` rank's (one buffer, read on the root, written elsewhere)."""

    name: ClassVar[str] = "Broadcast"
    root: int = 0

    def seconds(self, comm, count, itemsize, gamma):
        return comm.algorithm.broadcast(count * itemsize)

    def perform(self, ex, data, count, dtype):
        me = ex.comm.index
        if me == self.root:
            ex.send({i: data for i in ex.peers} if data is not None else {})
            return data                       # the root's receive buffer holds its own data too
        got = ex.send({})
        payload = got[self.root]
        return None if payload is None or data is None else np.frombuffer(payload, dtype=dtype)

    def label(self) -> str:
        return f"Broadcast(root {self.root})"


@dataclass(frozen=True)
class AllToAll(Collective):
    """Rank i sends the j-th block (``count`` elements) of its send buffer to rank j and receives its
    i-th block from every rank, in rank order."""

    name: ClassVar[str] = "AlltoAll"

    def send_count(self, count, p):
        return count * p

    def recv_count(self, count, p):
        return count * p

    def seconds(self, comm, count, itemsize, gamma):
        return comm.algorithm.all_to_all(count * comm.size * itemsize)

    def perform(self, ex, data, count, dtype):
        me = ex.comm.index
        if data is None:
            ex.send({})
            return None
        got = ex.send({i: data[i * count:(i + 1) * count] for i in ex.peers})
        return np.concatenate(_parts(got, me, data[me * count:(me + 1) * count], dtype))


@dataclass(frozen=True)
class Send(Collective):
    """Send ``count`` elements to communicator rank ``peer`` (which issues the matching :class:`Recv`)."""

    name: ClassVar[str] = "Send"
    peer: int = 0

    def recv_count(self, count, p):
        return 0

    def peers(self, comm):
        return (self.peer,)

    def seconds(self, comm, count, itemsize, gamma):
        link = link_between(comm.ranks[comm.index], comm.ranks[self.peer], comm.spec)
        return link.alpha + count * itemsize * link.beta

    def perform(self, ex, data, count, dtype):
        ex.post(self.peer, data)
        return None

    def label(self) -> str:
        return f"Send(to {self.peer})"


@dataclass(frozen=True)
class Recv(Collective):
    """Receive ``count`` elements from communicator rank ``peer`` (which issues the matching :class:`Send`)."""

    name: ClassVar[str] = "Recv"
    peer: int = 0

    def send_count(self, count, p):
        return 0

    def peers(self, comm):
        return (self.peer,)

    def seconds(self, comm, count, itemsize, gamma):
        return Send(self.peer).seconds(comm, count, itemsize, gamma)

    def perform(self, ex, data, count, dtype):
        payload = ex.take(self.peer)
        return None if payload is None else np.frombuffer(payload, dtype=dtype)

    def label(self) -> str:
        return f"Recv(from {self.peer})"


@dataclass(frozen=True)
class Barrier(Collective):
    """Every rank waits until all have arrived; no data."""

    name: ClassVar[str] = "Barrier"

    def send_count(self, count, p):
        return 0

    def recv_count(self, count, p):
        return 0

    def seconds(self, comm, count, itemsize, gamma):
        return comm.algorithm.barrier()

    def perform(self, ex, data, count, dtype):
        ex.send({})
        return None


class CollectiveChain:
    """The end (a SimPy event) of the latest collective a process issued: each new collective waits
    for it, so collectives run in host issue order on every rank, whatever streams they are on, and
    ranks that issue the collectives they share in the same order never wait for each other in a cycle."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last = None


class Communicator:
    """A group of world ranks (``ranks``, in communicator-rank order) on ``fabric``, with the algorithm
    HCCL would run for it and the timeout of its collectives. ``seq`` numbers the collectives issued
    per set of peers (every collective of the group; a point-to-point pair on its own)."""

    def __init__(self, name: str, ranks: Sequence[int], fabric: Fabric, spec: DeviceSpec, exec_timeout: float):
        ranks = tuple(int(r) for r in ranks)
        if fabric.rank not in ranks:
            raise HcclParamError(f"communicator {name!r} of world ranks {list(ranks)} does not include this "
                                 f"process's rank {fabric.rank}; only its members create it")
        if any(not 0 <= r < fabric.size for r in ranks):
            raise HcclParamError(f"communicator {name!r}: world ranks {list(ranks)} must be in 0..{fabric.size - 1}")
        self.name = name
        self.ranks = ranks
        self.fabric = fabric
        self.spec = spec
        self.exec_timeout = exec_timeout
        self.index = ranks.index(fabric.rank)
        self.algorithm: Algorithm = choose_algorithm(ranks, spec)
        self.key = int.from_bytes(hashlib.sha256(repr((name, ranks)).encode()).digest()[:8], "little")
        self._seq: dict[tuple[int, ...], int] = {}
        self.destroyed = False

    @property
    def size(self) -> int:
        return len(self.ranks)

    def header(self, peers: Sequence[int], phase: int) -> tuple[int, int, int]:
        """(communicator key, collective number among these peers, phase): what a peer's message must carry."""
        key = tuple(sorted((*peers, self.index)))
        return self.key, self._seq.get(key, 0), phase

    def p2p_header(self, src: int, dst: int) -> tuple[int, int, int]:
        """The header of the next message from communicator rank ``src`` to ``dst``, and count it: point-to-point
        messages are numbered per direction (a Send's receiver may be sending to it at the same time)."""
        key = (-1, src, dst)
        seq = self._seq.get(key, 0)
        self._seq[key] = seq + 1
        return self.key, seq, 0

    def next_collective(self, peers: Sequence[int]) -> None:
        key = tuple(sorted((*peers, self.index)))
        self._seq[key] = self._seq.get(key, 0) + 1

    def gamma(self, dtype: str) -> float:
        return reduction_gamma(self.spec, dtype)
