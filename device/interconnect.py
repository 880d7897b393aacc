"""The interconnect of Atlas 800 training servers (model 9000) and HCCL's collective algorithms on it,
priced by the alpha-beta-gamma model. Pure functions of the ranks, the message size and the DeviceSpec.

Topology (docs/REFERENCE-ranks 6.1). A server holds ``DEVICES_PER_SERVER`` chips in HCCS groups of
:func:`hccs_group_size` (``DeviceSpec.hccs_ports`` + 1); inside a group every chip has one HCCS link to each
of the others (``DeviceSpec.hccs_bandwidth`` each), so a group is a full mesh. An Atlas 800 training server
(model 9000, the 910A) has two groups of 4, devices 0-3 and 4-7 (3 ports: CANN's distributed-training notes,
"0-3卡和4-7卡各为一个组网"); an Atlas 800T A2 server (the 910B presets) one group of 8 (7 ports: the same notes
allow any 1-8 of its chips in one communicator, "(1~8)*n"; hiascend.com/document/detail/zh/canncommercial/700/
modeldev/tfmigr1/tfmigr1_000026.html). Between the two
groups of a server and between servers the chips talk over their RoCE port
(``DeviceSpec.roce_bandwidth``). World rank r sits on server ``r // 8``, chip ``r % 8``, as a job
allocated from device 0 on each server places it.

Algorithms (6.2), chosen as HCCL chooses them (:func:`choose_algorithm`):

* every member in one HCCS group: :class:`Mesh` (each chip exchanges with all the others at once,
  one link each);
* members spread evenly over several HCCS groups: :class:`Hierarchical`, level 0 a Mesh inside each
  group (reduce-scatter, then all-gather at the end), level 1 between the groups over RoCE on each
  chip's 1/k slice: halving-doubling (:class:`HalvingDoubling`) when the number of groups is a power
  of 2, else :class:`Ring`: HCCL's default on the Atlas training series ("ring when the server count
  is not a power of 2, otherwise H-D_R"). ``HCCL_ALGO="level1:ring"`` or ``"level1:H-D_R"`` forces one;
* anything else (uneven groups): one flat :class:`Ring` over the slowest link.

Costs (6.3): p ranks, n bytes, alpha seconds per message, beta seconds per byte on a link, gamma
seconds per byte of reduction on the vector units (:func:`reduction_gamma`). ``n`` is always the
size of one rank's full vector: the input of AllReduce, ReduceScatter and Broadcast, the *output*
of AllGather, what one rank sends in all of AlltoAll.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Sequence

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError

from .cost import DTYPE_VECTOR_SLOWDOWN
from .spec import DeviceSpec

__all__ = ["DEVICES_PER_SERVER", "HCCS_LATENCY_S", "ROCE_LATENCY_S", "HCCL_ALGO_ENV",
           "Placement", "Link", "Algorithm", "Single", "Ring", "HalvingDoubling", "Mesh", "Hierarchical",
           "placement", "hccs_group_size", "hccs_link", "roce_link", "link_between", "reduction_gamma",
           "choose_algorithm"]

DEVICES_PER_SERVER = 8        # one Atlas 800 training server (model 9000) or Atlas 800T A2
# Latency of one message (one algorithm step: notify, DMA start, completion) on each kind of link. No
# measured figure is published for the 910A (REFERENCE-ranks 6.2); these are the model's assumptions:
# a few microseconds on the on-board HCCS, about twice that through the NIC and a switch on RoCE.
HCCS_LATENCY_S = 5e-6
ROCE_LATENCY_S = 10e-6
HCCL_ALGO_ENV = "HCCL_ALGO"   # e.g. "level0:NA;level1:ring" (CANN): forces the level-1 algorithm
# Bytes moved through HBM per byte reduced: read two operands, write one result.
REDUCE_HBM_BYTES_PER_BYTE = 3


@dataclass(frozen=True)
class Placement:
    """Where a world rank's chip sits: its server, its HCCS group in that server, its chip number."""

    server: int
    group: int
    chip: int


def hccs_group_size(spec: DeviceSpec) -> int:
    """Chips in one fully connected HCCS group: a chip's HCCS ports link it to each of the others."""
    return spec.hccs_ports + 1


def placement(rank: int, spec: DeviceSpec) -> Placement:
    chip = rank % DEVICES_PER_SERVER
    return Placement(rank // DEVICES_PER_SERVER, chip // hccs_group_size(spec), chip)


@dataclass(frozen=True)
class Link:
    """One kind of link as the cost model sees it: ``alpha`` seconds per message, ``beta`` per byte."""

    name: str
    alpha: float
    beta: float


def hccs_link(spec: DeviceSpec) -> Link:
    return Link("HCCS", HCCS_LATENCY_S, 1.0 / spec.hccs_bandwidth)


def roce_link(spec: DeviceSpec) -> Link:
    return Link("RoCE", ROCE_LATENCY_S, 1.0 / spec.roce_bandwidth)


def link_between(a: int, b: int, spec: DeviceSpec) -> Link:
    """The link two world ranks talk over: HCCS inside an HCCS group, else RoCE."""
    pa, pb = placement(a, spec), placement(b, spec)
    return hccs_link(spec) if (pa.server, pa.group) == (pb.server, pb.group) else roce_link(spec)


def reduction_gamma(spec: DeviceSpec, dtype: str) -> float:
    """Seconds per byte to combine two operands on the device's vector units (all vector cores):
    the slower of the vector arithmetic and the HBM traffic (two reads, one write), as the roofline
    of :mod:`.cost` prices a kernel."""
    itemsize = {"float16": 2, "bool": 1, "int8": 1, "uint8": 1}.get(dtype, 4)
    compute = DTYPE_VECTOR_SLOWDOWN.get(dtype, 2.0) / itemsize / (spec.vector_ops_per_core * spec.vector_cores)
    memory = REDUCE_HBM_BYTES_PER_BYTE / spec.hbm_bandwidth
    return max(compute, memory)


class Algorithm:
    """An HCCL algorithm over ``p`` ranks: the simulated seconds of each collective (module docstring
    for the meaning of ``n``). A barrier is an AllReduce of nothing."""

    name = ""
    p: int

    def all_reduce(self, n: float, gamma: float) -> float:
        raise NotImplementedError

    def reduce_scatter(self, n: float, gamma: float) -> float:
        raise NotImplementedError

    def all_gather(self, n: float) -> float:
        raise NotImplementedError

    def broadcast(self, n: float) -> float:
        raise NotImplementedError

    def all_to_all(self, n: float) -> float:
        raise NotImplementedError

    def barrier(self) -> float:
        return self.all_reduce(0.0, 0.0)

    def describe(self) -> str:
        return f"{self.name} over {self.p} rank(s)"


@dataclass(frozen=True)
class Single(Algorithm):
    """A communicator of one rank: nothing moves, every collective is a local copy priced at zero."""

    name = "single"
    p: int = 1

    def all_reduce(self, n: float, gamma: float) -> float:
        return 0.0

    def reduce_scatter(self, n: float, gamma: float) -> float:
        return 0.0

    def all_gather(self, n: float) -> float:
        return 0.0

    def broadcast(self, n: float) -> float:
        return 0.0

    def all_to_all(self, n: float) -> float:
        return 0.0


@dataclass(frozen=True)
class Ring(Algorithm):
    """The ring: p-1 steps per phase, each rank passing 1/p of the vector to its neighbour (MPICH's
    ``Cost = (p-1).alpha + n.((p-1)/p).beta``); AllReduce = reduce-scatter + all-gather."""

    name = "ring"
    p: int
    link: Link

    def all_reduce(self, n: float, gamma: float) -> float:
        p, a, b = self.p, self.link.alpha, self.link.beta
        return 2 * (p - 1) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * gamma

    def reduce_scatter(self, n: float, gamma: float) -> float:
        p, a, b = self.p, self.link.alpha, self.link.beta
        return (p - 1) * a + (p - 1) / p * n * (b + gamma)

    def all_gather(self, n: float) -> float:
        p, a, b = self.p, self.link.alpha, self.link.beta
        return (p - 1) * a + (p - 1) / p * n * b

    def broadcast(self, n: float) -> float:
        """Scatter from the root, then a ring all-gather."""
        return 2 * self.all_gather(n)

    def all_to_all(self, n: float) -> float:
        """Pairwise exchange: p-1 steps of n/p bytes."""
        return self.all_gather(n)


@dataclass(frozen=True)
class HalvingDoubling(Algorithm):
    """Recursive halving-doubling (HCCL's H-D_R, Rabenseifner's AllReduce): lg p steps per phase.
    A count that is not a power of 2 pays MPICH's extra step at each end (REFERENCE-ranks 6.3)."""

    name = "H-D_R"
    p: int
    link: Link

    @property
    def steps(self) -> int:
        return math.ceil(math.log2(self.p))

    def all_reduce(self, n: float, gamma: float) -> float:
        p, a, b = self.p, self.link.alpha, self.link.beta
        if p & (p - 1) == 0:
            return 2 * self.steps * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * gamma
        lg = math.floor(math.log2(p))
        return (2 * lg + 2) * a + (2 * (p - 1) / p + 2) * n * b + n * (1 + (p - 1) / p) * gamma

    def reduce_scatter(self, n: float, gamma: float) -> float:
        p, a, b = self.p, self.link.alpha, self.link.beta
        return self.steps * a + (p - 1) / p * n * (b + gamma)

    def all_gather(self, n: float) -> float:
        p, a, b = self.p, self.link.alpha, self.link.beta
        return self.steps * a + (p - 1) / p * n * b

    def broadcast(self, n: float) -> float:
        """Binomial scatter, then recursive-doubling all-gather."""
        return 2 * self.all_gather(n)

    def all_to_all(self, n: float) -> float:
        """HCCL's pairwise AlltoAll: p-1 exchanges of n/p bytes."""
        p, a, b = self.p, self.link.alpha, self.link.beta
        return (p - 1) * a + (p - 1) / p * n * b


@dataclass(frozen=True)
class Mesh(Algorithm):
    """A fully connected group (one HCCS link per pair, all links busy at once): each rank sends its
    p-1 pieces of n/p bytes in one step, so a phase costs one alpha and n/p bytes on a link."""

    name = "mesh"
    p: int
    link: Link

    def _phase(self, n: float) -> float:
        return self.link.alpha + n / self.p * self.link.beta

    def all_reduce(self, n: float, gamma: float) -> float:
        return 2 * self._phase(n) + (self.p - 1) / self.p * n * gamma

    def reduce_scatter(self, n: float, gamma: float) -> float:
        return self._phase(n) + (self.p - 1) / self.p * n * gamma

    def all_gather(self, n: float) -> float:
        return self._phase(n)

    def broadcast(self, n: float) -> float:
        """The root scatters n/p to each peer, then a mesh all-gather."""
        return 2 * self._phase(n)

    def all_to_all(self, n: float) -> float:
        return self._phase(n)


@dataclass(frozen=True)
class Hierarchical(Algorithm):
    """Two levels: ``inner`` inside each HCCS group of k ranks, ``outer`` across the groups, each
    rank carrying its 1/k slice of the vector at level 1 (the rank of the same chip position in every
    group forms one level-1 ring or halving-doubling)."""

    name = "hierarchical"
    inner: Algorithm
    outer: Algorithm

    @property
    def p(self) -> int:  # type: ignore[override]
        return self.inner.p * self.outer.p

    def all_reduce(self, n: float, gamma: float) -> float:
        k = self.inner.p
        return (self.inner.reduce_scatter(n, gamma) + self.outer.all_reduce(n / k, gamma)
                + self.inner.all_gather(n))

    def reduce_scatter(self, n: float, gamma: float) -> float:
        k = self.inner.p
        return self.inner.reduce_scatter(n, gamma) + self.outer.reduce_scatter(n / k, gamma)

    def all_gather(self, n: float) -> float:
        k = self.inner.p
        return self.outer.all_gather(n / k) + self.inner.all_gather(n)

    def broadcast(self, n: float) -> float:
        k = self.inner.p
        return self.inner.reduce_scatter(n, 0.0) + self.outer.broadcast(n / k) + self.inner.all_gather(n)

    def all_to_all(self, n: float) -> float:
        """The blocks for the own group over HCCS (a Mesh exchange of k/p of the vector), then the
        p-k blocks for the other groups, one group per step, through the chip's RoCE port."""
        k, p, g = self.inner.p, self.p, self.outer.p
        link = self.outer.link
        return self.inner.all_to_all(n * k / p) + (g - 1) * link.alpha + (p - k) / p * n * link.beta

    def describe(self) -> str:
        return (f"hierarchical over {self.p} ranks: level 0 {self.inner.describe()}, "
                f"level 1 {self.outer.describe()}")


def _level1(groups: int, spec: DeviceSpec) -> Algorithm:
    """HCCL's level-1 algorithm across ``groups`` HCCS groups over RoCE: the HCCL_ALGO setting, else
    H-D_R for a power-of-2 count and ring otherwise."""
    setting = os.environ.get(HCCL_ALGO_ENV, "")
    forced = None
    for part in setting.replace(",", ";").split(";"):
        level, _, algo = part.partition(":")
        if level.strip() == "level1" and algo.strip() not in ("", "NA"):
            forced = algo.strip()
    link = roce_link(spec)
    if forced is None:
        return HalvingDoubling(groups, link) if groups & (groups - 1) == 0 else Ring(groups, link)
    if forced == "ring":
        return Ring(groups, link)
    if forced == "H-D_R":
        return HalvingDoubling(groups, link)
    raise FeatureNotSupportedError(f"{HCCL_ALGO_ENV}={setting!r}: level-1 algorithm {forced!r} is not modelled "
                                   "on the Atlas training series; use 'ring' or 'H-D_R'")


def choose_algorithm(ranks: Sequence[int], spec: DeviceSpec) -> Algorithm:
    """The algorithm HCCL runs for a communicator of these world ranks (module docstring)."""
    if not ranks or len(set(ranks)) != len(ranks) or any(r < 0 for r in ranks):
        raise InvalidParamError(f"a communicator needs distinct non-negative world ranks, got {list(ranks)}")
    p = len(ranks)
    if p == 1:
        return Single()
    groups: dict[tuple[int, int], int] = {}
    for r in ranks:
        at = placement(r, spec)
        groups[(at.server, at.group)] = groups.get((at.server, at.group), 0) + 1
    sizes = set(groups.values())
    if len(groups) == 1:
        return Mesh(p, hccs_link(spec))
    if len(sizes) == 1:
        (k,) = sizes
        inner: Algorithm = Mesh(k, hccs_link(spec)) if k > 1 else Single()
        return Hierarchical(inner, _level1(len(groups), spec))
    return Ring(p, roce_link(spec))
