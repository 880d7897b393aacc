"""Runtime chapter "collective communication", shaped like HCCL (HcclCommInitRootInfo, HcclAllReduce, ...).

A *communicator* (an int handle) is a group of world ranks; each process of a job is one rank with
its own emulated device. :meth:`HcclMixin.comm_init_world` builds the world communicator over a
fabric (:mod:`ascendemu.device.fabric`): MPI when the process was started by an MPI launcher and the
world has more than one rank, else a simulated fabric (a world of one; or a rank simulated alone
under DryRun, where every peer is taken to arrive at once and no byte moves). Building a communicator
is itself collective: the members check that they agree on its ranks within
``HCCL_CONNECT_TIMEOUT``.

Collective calls are asynchronous like kernel launches: each builds one typed step
(:class:`~.steps.Communicate`, with a kind of :mod:`ascendemu.device.collectives`) and enqueues its
device task (:class:`~ascendemu.device.tasks.CollectiveTask`) on ``stream``; the task exchanges data
and arrival times when the stream reaches it. Buffers are device addresses on the stream's device,
``count`` is in elements of ``dtype`` (an ``HCCL_DATA_TYPE_*``), ``op`` an ``HCCL_REDUCE_*``, ranks
are communicator ranks. Errors are typed: a bad argument is HcclParamError (or the memory chapter's
error for a bad address), a rank that never arrives HcclTimeoutError naming it, raised when the host
synchronises with the stream. One of the mixins composed into :class:`ascendemu.hal.runtime.Runtime`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from ascendemu.device.collectives import (AllGather, AllReduce, AllToAll, Barrier, Broadcast, Communicator, Exchange,
                                          Recv, ReduceOp, ReduceScatter, Send)
from ascendemu.device.fabric import (CONNECT_TIMEOUT_ENV, DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_EXEC_TIMEOUT_S,
                                     EXEC_TIMEOUT_ENV, Fabric, MpiFabric, SimulatedFabric, timeout_from_env)
from ascendemu.device.tasks import CollectiveTask
from ascendemu.errors import HcclNotSupportedError, HcclParamError
from ascendemu.ranks import mpi_place

from .api import api
from .codes import (HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_INT32,
                    HCCL_DATA_TYPES)
from .steps import Communicate

if TYPE_CHECKING:
    from ascendemu.device.model import Stream
    from ascendemu.device.system import Node

__all__ = ["HcclMixin", "HCCL_DATA_TYPES", "HCCL_DATA_TYPE_INT8", "HCCL_DATA_TYPE_INT32", "HCCL_DATA_TYPE_FP16",
           "HCCL_DATA_TYPE_FP32", "HCCL_REDUCE_SUM", "HCCL_REDUCE_PROD", "HCCL_REDUCE_MAX", "HCCL_REDUCE_MIN",
           "WORLD_COMM_NAME"]

HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN = (int(op) for op in ReduceOp)
WORLD_COMM_NAME = "world"


class HcclMixin:
    """Communicators and collectives."""

    node: Node | None
    comms: dict[int, Communicator]

    def _reset_hccl(self) -> None:
        self.comms = {}
        # the fabric comm_init_world builds the world on instead of the launcher's: a replay's
        # (device.fabric.ReplayedFabric), set after init()
        self.world_fabric: Fabric | None = None
        self._comm_names: dict[str, int] = {}
        self._fabric: Fabric | None = None
        self._world: int | None = None

    # -- communicators ----------------------------------------------------------------------------
    def _comm(self, comm: int) -> Communicator:
        c = self.comms.get(comm)
        if c is None:
            raise HcclParamError(f"communicator {comm!r} is not live; build one with comm_init_world() or "
                                 "comm_create_group()")
        return c

    def _add_comm(self, name: str, ranks: Sequence[int], fabric: Fabric) -> int:
        if name in self._comm_names:
            raise HcclParamError(f"a communicator named {name!r} already exists; destroy it first or pick another name")
        timeout = timeout_from_env(EXEC_TIMEOUT_ENV, DEFAULT_EXEC_TIMEOUT_S)
        c = Communicator(name, ranks, fabric, self.node.spec, timeout)
        if fabric.carries_data and c.size > 1:
            self._handshake(c)
        h = self._handle()
        self.comms[h] = c
        self._comm_names[name] = h
        return h

    @staticmethod
    def _handshake(c: Communicator) -> None:
        """Building a communicator is collective: every member must arrive, agreeing on its ranks."""
        peers = tuple(i for i in range(c.size) if i != c.index)
        ex = Exchange(c, peers, f"building communicator {c.name!r} of world ranks {list(c.ranks)}", 0.0,
                      timeout_from_env(CONNECT_TIMEOUT_ENV, DEFAULT_CONNECT_TIMEOUT_S))
        try:
            got = ex.send({i: np.asarray(c.ranks, np.int64) for i in peers})
        finally:
            c.next_collective(peers)
        for i, payload in got.items():
            theirs = tuple(int(r) for r in np.frombuffer(payload, np.int64))
            if theirs != c.ranks:
                raise HcclParamError(f"communicator {c.name!r}: world rank {c.ranks[i]} built it with ranks "
                                     f"{list(theirs)}, this rank with {list(c.ranks)}; every member must pass the "
                                     "same ranks in the same order")

    @api()
    def comm_init_world(self, rank_size: int, rank_id: int, name: str = WORLD_COMM_NAME) -> int:
        """The communicator ``name`` of all ``rank_size`` ranks, this process being ``rank_id`` (HcclCommInitRootInfo).
        A world of more than one rank needs an MPI launcher (``mpiexec -n N``) whose world matches, or a
        device without backing (DryRun), which simulates this one rank alone."""
        if self._fabric is not None:
            raise HcclParamError("the world communicator already exists; comm_destroy() it first")
        if not 0 <= rank_id < rank_size:
            raise HcclParamError(f"rank_id {rank_id} is not a rank of a world of {rank_size}")
        launched = mpi_place()
        if self.world_fabric is not None:
            fabric = self.world_fabric
            if (fabric.size, fabric.rank) != (rank_size, rank_id):
                raise HcclParamError(f"the world fabric is rank {fabric.rank} of {fabric.size}, not rank {rank_id} "
                                     f"of {rank_size}")
        elif rank_size == 1:
            fabric: Fabric = SimulatedFabric(0, 1)
        elif launched is not None and launched.size > 1:
            fabric = MpiFabric.join()
            if (fabric.size, fabric.rank) != (rank_size, rank_id):
                raise HcclParamError(f"this process is rank {fabric.rank} of an MPI world of {fabric.size}, not rank "
                                     f"{rank_id} of {rank_size}; leave RANK_ID/RANK_SIZE to the launcher")
        elif not self._cur_device().memory.backed:
            fabric = SimulatedFabric(rank_id, rank_size)
        else:
            raise HcclParamError(f"a world of {rank_size} ranks needs one process per rank: start them with "
                                 f"`mpiexec -n {rank_size} ascendemu run script.py` (or ascendemu msrun), or "
                                 f"simulate rank {rank_id} alone with DryRun (MS_SIMULATION_LEVEL=1)")
        h = self._add_comm(name, range(rank_size), fabric)
        self._fabric, self._world = fabric, h
        return h

    @api()
    def comm_create_group(self, comm: int, name: str, ranks: list[int]) -> int:
        """A communicator of some ranks of ``comm``, given as world ranks in the new group's rank order;
        only its members call this, all with the same ranks (HcclCreateSubCommConfig)."""
        parent = self._comm(comm)
        outside = [r for r in ranks if r not in parent.ranks]
        if outside:
            raise HcclParamError(f"comm_create_group {name!r}: world ranks {outside} are not in communicator "
                                 f"{parent.name!r} (ranks {list(parent.ranks)})")
        if len(set(ranks)) != len(ranks) or not ranks:
            raise HcclParamError(f"comm_create_group {name!r}: ranks {ranks} must be distinct and not empty")
        return self._add_comm(name, ranks, parent.fabric)

    @api()
    def comm_destroy(self, comm: int) -> None:
        c = self._comm(comm)
        c.destroyed = True
        del self.comms[comm]
        del self._comm_names[c.name]
        if comm == self._world:
            self._fabric = self._world = None

    @api()
    def comm_find(self, name: str) -> int:
        """The handle of the live communicator called ``name``."""
        h = self._comm_names.get(name)
        if h is None:
            raise HcclParamError(f"no communicator is called {name!r}; live ones: {sorted(self._comm_names)}")
        return h

    @api()
    def comm_rank(self, comm: int) -> int:
        """This process's rank in ``comm`` (HcclGetRankId)."""
        return self._comm(comm).index

    @api()
    def comm_size(self, comm: int) -> int:
        """The number of ranks of ``comm`` (HcclGetRankSize)."""
        return self._comm(comm).size

    @api()
    def comm_world_ranks(self, comm: int) -> tuple[int, ...]:
        """The world rank of each rank of ``comm``, in its rank order."""
        return self._comm(comm).ranks

    # -- collectives ------------------------------------------------------------------------------
    def _collective_task(self, step: Communicate) -> tuple[Stream, CollectiveTask]:
        """The one validation of a collective: communicator, ranks, data type, buffers on the stream's device."""
        s = self._stream(step.stream)
        c = self._comm(step.comm)
        kind = step.kind
        dtype = HCCL_DATA_TYPES.get(step.dtype)
        if dtype is None:
            raise HcclNotSupportedError(f"{kind.name}: HCCL data type {step.dtype} is not held by the emulated "
                                        f"device; use one of {HCCL_DATA_TYPES}")
        for attr in ("root", "peer"):
            r = getattr(kind, attr, None)
            if r is not None and not 0 <= r < c.size:
                raise HcclParamError(f"{kind.name}: {attr} {r} is not a rank of communicator {c.name!r} "
                                     f"(size {c.size})")
        if isinstance(kind, (Send, Recv)) and kind.peer == c.index:
            raise HcclParamError(f"{kind.name}: rank {c.index} cannot {kind.name.lower()} to itself")
        itemsize = np.dtype(dtype).itemsize
        mem = s.device.memory
        views, ranges = [], []
        for ptr, n, role in ((step.send, kind.send_count(step.count, c.size) * itemsize, "send"),
                             (step.recv, kind.recv_count(step.count, c.size) * itemsize, "receive")):
            if n == 0:
                views.append(None)
                ranges.append([])
                continue
            if ptr is None:
                raise HcclParamError(f"{kind.name} of {step.count} {dtype} element(s) needs a {role} buffer")
            views.append(self._device_side(mem, ptr, n, f"{kind.name} {role} buffer"))
            ranges.append([(ptr, ptr + n)])
        task = CollectiveTask(f"{kind.label()} {c.name}", self.node.host_time, kind, c, step.count, dtype, views[0],
                              views[1], self.node.collectives, self.node.env.event(), reads=ranges[0], writes=ranges[1],
                              observe=self._collective_waited if self.recorders else None)
        return s, task

    def _collective_waited(self, task: CollectiveTask, header: tuple, arrival: float, arrivals: dict[int, float],
                           seconds: float) -> None:
        """Tell the recorders what a collective waited for (a trace's ``CollectiveWait``), so one rank's
        trace replays alone with the others' arrivals (``device.fabric.ReplayedFabric``)."""
        from ascendemu.traces import aetrace as fmt      # only a recorded run needs the trace format
        start = max(arrivals.values())
        late = [task.comm.ranks[i] for i, t in sorted(arrivals.items()) if t == start]
        self.annotate(fmt.CollectiveWait(header[0], header[1], arrival, start, seconds, late))

    @api(cost="launch_overhead_s")
    def all_reduce(self, send: int, recv: int, count: int, dtype: int, op: int, comm: int,
                   stream: int | None = None) -> None:
        """recv = the ``op`` reduction of every rank's ``count`` elements at ``send`` (HcclAllReduce)."""
        self._enqueue(Communicate(AllReduce(ReduceOp(op)), send, recv, count, dtype, comm, stream))

    @api(cost="launch_overhead_s")
    def all_gather(self, send: int, recv: int, count: int, dtype: int, comm: int, stream: int | None = None) -> None:
        """recv = every rank's ``count`` elements in rank order (HcclAllGather)."""
        self._enqueue(Communicate(AllGather(), send, recv, count, dtype, comm, stream))

    @api(cost="launch_overhead_s")
    def reduce_scatter(self, send: int, recv: int, count: int, dtype: int, op: int, comm: int,
                       stream: int | None = None) -> None:
        """recv (``count`` elements) = the reduction of block <rank> of every rank's send (HcclReduceScatter)."""
        self._enqueue(Communicate(ReduceScatter(ReduceOp(op)), send, recv, count, dtype, comm, stream))

    @api(cost="launch_overhead_s")
    def broadcast(self, buf: int, count: int, dtype: int, root: int, comm: int, stream: int | None = None) -> None:
        """Every rank's ``buf`` = rank ``root``'s (HcclBroadcast)."""
        self._enqueue(Communicate(Broadcast(root), buf, buf, count, dtype, comm, stream))

    @api(cost="launch_overhead_s")
    def alltoall(self, send: int, recv: int, count: int, dtype: int, comm: int, stream: int | None = None) -> None:
        """Block j (``count`` elements) of send goes to rank j; recv gets block <rank> of every rank (HcclAlltoAll)."""
        self._enqueue(Communicate(AllToAll(), send, recv, count, dtype, comm, stream))

    @api(cost="launch_overhead_s")
    def send(self, buf: int, count: int, dtype: int, peer: int, comm: int, stream: int | None = None) -> None:
        """Send ``count`` elements to rank ``peer``, which calls :meth:`recv` (HcclSend)."""
        self._enqueue(Communicate(Send(peer), buf, None, count, dtype, comm, stream))

    @api(cost="launch_overhead_s")
    def recv(self, buf: int, count: int, dtype: int, peer: int, comm: int, stream: int | None = None) -> None:
        """Receive ``count`` elements from rank ``peer``, which calls :meth:`send` (HcclRecv)."""
        self._enqueue(Communicate(Recv(peer), None, buf, count, dtype, comm, stream))

    @api(cost="launch_overhead_s")
    def barrier(self, comm: int, stream: int | None = None) -> None:
        """The stream goes on once every rank of ``comm`` has reached its barrier (HcclBarrier)."""
        self._enqueue(Communicate(Barrier(), None, None, 0, HCCL_DATA_TYPE_FP32, comm, stream))
