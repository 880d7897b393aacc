"""Statistics, search, segment and integer/bit specs (round 2): searchsorted and its primitives,
bincount/histc, cov, the segment reductions, gcd/lcm, shifts, population_count, Rint, and the Tensor
methods routed to them. Integer-valued inputs are given as values so the recorded answers are exact."""
from __future__ import annotations

from .core import Py, T, op

SEQ = T(values=[1.0, 3.0, 5.0, 7.0, 9.0])
VALS = T(values=[3.0, 6.0, 9.0, 0.0, 10.0])
IDS = T(values=[3, 1, 2, 3, 1, 3], dtype="int32")
INTS = T(values=[12, -18, 0, 7], dtype="int32")
INTS_B = T(values=[8, 12, 5, 0], dtype="int32")
ROWS = T((4, 2))
SEG = T(values=[0, 0, 2, 2], dtype="int32")


# MindSpore 2.10 CPU's SearchSorted kernel refuses these calls at random ("the dimension of `v` and output
# must be equal ... 16 and 16"; the same call succeeds in another process): recorded through the documented
# result in MindSpore CPU ops instead (``_count_below``)
SEARCH_NOTE = ("MindSpore 2.10 CPU's SearchSorted kernel refuses {name}'s call at random (its output size check); "
               "recorded through the documented result in MindSpore CPU ops: {result}")


def _count_below(ms, sorted_sequence, values, dtype):
    """For each value, how many of ``sorted_sequence`` (1-D) are strictly below it: searchsorted's left
    index (and bucketize's with right=False), as Less, Cast and ReduceSum on MindSpore CPU."""
    below = ms.ops.less(sorted_sequence, values.expand_dims(-1))
    return below.astype(ms.int32).sum(-1).astype(dtype)


def _prim(name: str):
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(**kw)(*xs)


def _fn(name: str):
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


SPECS = [
    op("mindspore.ops.searchsorted", _fn("searchsorted"), shapes=[[SEQ, VALS]], kwargs=[{}, {"right": True}],
       grad=False),
    op("mindspore.ops.SearchSorted", _prim("SearchSorted"), shapes=[[SEQ, VALS]], kwargs=[{}, {"right": True}],
       grad=False),
    op("mindspore.ops.LowerBound", _prim("LowerBound"),
       shapes=[[T(values=[[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]), T(values=[[3.0, 6.0], [1.0, 5.0]])]], grad=False),
    op("mindspore.ops.UpperBound", _prim("UpperBound"),
       shapes=[[T(values=[[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]), T(values=[[3.0, 6.0], [1.0, 5.0]])]], grad=False),
    op("mindspore.ops.bincount", _fn("bincount"), shapes=[[IDS]], kwargs=[{}, {"minlength": 6}], grad=False,
       graph=False),
    op("mindspore.ops.histc", _fn("histc"), shapes=[[T(values=[1.0, 2.0, 1.0, 4.0, -1.0])]],
       kwargs=[{"bins": 4, "min": 0.0, "max": 3.0}, {"bins": 4}], grad=False),
    op("mindspore.ops.Histogram", _prim("Histogram"), shapes=[[T(values=[1.0, 2.0, 1.0, 4.0, -1.0])]],
       kwargs=[{"bins": 4, "min": 0.0, "max": 3.0}], grad=False),
    op("mindspore.ops.cov", _fn("cov"), shapes=[(2, 4), (5,)], kwargs=[{}, {"correction": 0}]),
    op("mindspore.ops.SegmentSum", _prim("SegmentSum"), shapes=[[ROWS, SEG]], grad=False, graph=False),
    op("mindspore.ops.SegmentMean", _prim("SegmentMean"), shapes=[[ROWS, SEG]], grad=False, graph=False),
    op("mindspore.ops.SegmentMax", _prim("SegmentMax"), shapes=[[ROWS, SEG]], grad=False, graph=False),
    op("mindspore.ops.SegmentMin", _prim("SegmentMin"), shapes=[[ROWS, SEG]], grad=False, graph=False),
    op("mindspore.ops.SegmentProd", _prim("SegmentProd"), shapes=[[ROWS, SEG]], grad=False, graph=False),
    op("mindspore.ops.gcd", _fn("gcd"), shapes=[[INTS, INTS_B]], grad=False),
    op("mindspore.ops.Gcd", _prim("Gcd"), shapes=[[INTS, INTS_B]], grad=False),
    op("mindspore.ops.lcm", _fn("lcm"), shapes=[[INTS, INTS_B]], grad=False),
    op("mindspore.ops.Lcm", _prim("Lcm"), shapes=[[INTS, INTS_B]], grad=False),
    op("mindspore.ops.bitwise_left_shift", _fn("bitwise_left_shift"),
       shapes=[[INTS, T(values=[1, 2, 3, 40], dtype="int32")]], grad=False),
    op("mindspore.ops.bitwise_right_shift", _fn("bitwise_right_shift"),
       shapes=[[INTS, T(values=[40, 40, 33, 2], dtype="int32")]], grad=False),
    op("mindspore.ops.population_count", _fn("population_count"),
       shapes=[[T(values=[7, -1, 0, 255], dtype="int16")]], grad=False),
    op("mindspore.ops.Rint", _prim("Rint"), shapes=[[T(values=[-1.5, -0.5, 0.5, 1.5, 2.5, 2.7])]], grad=False),
    op("mindspore.ops.ReduceStd", _prim("ReduceStd"), shapes=[(2, 3)], kwargs=[{"axis": 1}], grad=False),
    op("mindspore.ops.renorm", lambda ms, x: ms.ops.renorm(x, 2, 0, 1.0), shapes=[(2, 3)], grad=False),
    op("mindspore.ops.aminmax", lambda ms, x, **kw: ms.ops.aminmax(x, **kw), shapes=[(2, 3)],
       kwargs=[{"axis": 1}], grad=False),
    op("mindspore.ops.top_k", lambda ms, x: ms.ops.top_k(x, 2), shapes=[(2, 4)], grad=False),
    op("mindspore.ops.bucketize", lambda ms, x: ms.ops.bucketize(x, [1.0, 3.0, 5.0]), shapes=[[T(values=[0.0, 3.0, 4.0, 9.0])]],
       grad=False, oracle=lambda ms, x: _count_below(ms, ms.Tensor([1.0, 3.0, 5.0]), x, ms.int32),
       note=SEARCH_NOTE.format(name="ops.bucketize", result="the int32 count of boundaries below each value "
                                                            "(right=False: boundaries[i-1] < x <= boundaries[i])")),
    op("mindspore.ops.float_power_ext", lambda ms, x: ms.ops.float_power_ext(x, 2), shapes=[(3,)], grad=False),
    op("mindspore.Tensor.allclose", lambda ms, x, y: x.allclose(y), shapes=[[(3,), (3,)]], grad=False, graph=False),
    op("mindspore.Tensor.argmax_with_value", lambda ms, x: x.argmax_with_value(), shapes=[(2, 4)], grad=False),
    op("mindspore.Tensor.ptp", lambda ms, x: x.ptp(), shapes=[(2, 4)], grad=False),
    op("mindspore.Tensor.sum_to_size", lambda ms, x: x.sum_to_size(3, 1), shapes=[(2, 3, 4)], grad=False),
    # more names, one small sample each
    op("mindspore.ops.Bincount", lambda ms, x, w: ms.ops.Bincount()(x, ms.Tensor(5, ms.int32), w),
       shapes=[[IDS, T((6,))]], grad=False, graph=False),
    op("mindspore.ops.Bucketize", lambda ms, x: ms.ops.Bucketize([1.0, 3.0, 5.0])(x), shapes=[[T(values=[0.0, 3.0, 4.0, 9.0])]],
       grad=False),
    op("mindspore.ops.CountNonZero", lambda ms, x: ms.ops.CountNonZero(dims=[1])(x),
       shapes=[[T(values=[[1.0, 0.0], [0.0, 0.0]])]], grad=False),
    op("mindspore.ops.LeftShift", _prim("LeftShift"), shapes=[[T(values=[1, 2], dtype="int8"), T(values=[1, 2], dtype="int8")]],
       grad=False),
    op("mindspore.ops.RightShift", _prim("RightShift"),
       shapes=[[T(values=[-8, 2], dtype="int16"), T(values=[1, 2], dtype="int16")]], grad=False),
    op("mindspore.ops.PopulationCount", _prim("PopulationCount"), shapes=[[T(values=[7, -1], dtype="int8")]], grad=False),
    op("mindspore.ops.Renorm", lambda ms, x: ms.ops.Renorm(1, 1, 2.0)(x), shapes=[(2, 3)], grad=False),
    op("mindspore.ops.diff_ext", lambda ms, x: ms.ops.diff_ext(x, 2), shapes=[[T(values=[1, 4, 9, 16], dtype="int32")]],
       grad=False),
    op("mindspore.ops.is_nonzero", lambda ms, x: ms.ops.is_nonzero(x), shapes=[[T(values=[0.5])]], grad=False, graph=False),
    op("mindspore.ops.is_tensor", lambda ms, x: ms.ops.is_tensor(x), shapes=[(2,)], grad=False, graph=False),
    op("mindspore.ops.isnan_ext", lambda ms, x: ms.ops.isnan_ext(x), shapes=[[T(values=[1.0, float("nan")])]], grad=False),
    op("mindspore.Tensor.aminmax", lambda ms, x: x.aminmax(axis=1), shapes=[(2, 3)], grad=False),
    op("mindspore.Tensor.argmin_with_value", lambda ms, x: x.argmin_with_value(1, True), shapes=[(2, 4)], grad=False),
    op("mindspore.Tensor.bincount", lambda ms, x: x.bincount(), shapes=[[IDS]], grad=False, graph=False),
    op("mindspore.Tensor.bitwise_left_shift", lambda ms, x, y: x.bitwise_left_shift(y),
       shapes=[[INTS, T(values=[1, 2, 3, 4], dtype="int32")]], grad=False),
    op("mindspore.Tensor.bitwise_right_shift", lambda ms, x, y: x.bitwise_right_shift(y),
       shapes=[[INTS, T(values=[1, 2, 3, 4], dtype="int32")]], grad=False),
    op("mindspore.Tensor.count_nonzero", lambda ms, x: x.count_nonzero(), shapes=[[IDS]], grad=False),
    op("mindspore.Tensor.cov", lambda ms, x: x.cov(), shapes=[(2, 4)], grad=False),
    op("mindspore.Tensor.gcd", lambda ms, x, y: x.gcd(y), shapes=[[INTS, INTS_B]], grad=False),
    op("mindspore.Tensor.lcm", lambda ms, x, y: x.lcm(y), shapes=[[INTS, INTS_B]], grad=False),
    op("mindspore.Tensor.histc", lambda ms, x: x.histc(bins=4), shapes=[[T(values=[1.0, 2.0, 1.0, 4.0])]], grad=False),
    op("mindspore.Tensor.renorm", lambda ms, x: x.renorm(2, 0, 1.0), shapes=[(2, 3)], grad=False),
    op("mindspore.Tensor.searchsorted", lambda ms, x, v: x.searchsorted(v), shapes=[[SEQ, VALS]], grad=False,
       oracle=lambda ms, x, v: _count_below(ms, x, v, ms.int64),
       note=SEARCH_NOTE.format(name="Tensor.searchsorted", result="the int64 count of sequence values below each "
                                                                  "value (side 'left')")),
    op("mindspore.Tensor.unique", lambda ms, x: x.unique(), shapes=[[IDS]], grad=False, graph=False,
       oracle=lambda ms, x: ms.ops.sort(ms.ops.unique(x)[0])[0],
       note="MindSpore 2.10 CPU has no kernel for Tensor.unique (Unique2, Ascend-only); recorded through ops.unique "
            "(Unique, CPU) sorted ascending: Tensor.unique's default sorted=True result"),
    op("mindspore.mint.allclose", lambda ms, x, y: ms.mint.allclose(x, y), shapes=[[(3,), (3,)]], grad=False, graph=False),
    op("mindspore.mint.bincount", lambda ms, x: ms.mint.bincount(x), shapes=[[IDS]], grad=False, graph=False,
       oracle=lambda ms, x: ms.ops.bincount(x).astype(ms.int64),
       note="MindSpore 2.10 CPU has no kernel for mint.bincount (BincountExt, Ascend-only); recorded through "
            "ops.bincount (CPU), its float32 counts as the int64 BincountExt documents without weights"),
    op("mindspore.mint.gcd", lambda ms, x, y: ms.mint.gcd(x, y), shapes=[[INTS, INTS_B]], grad=False),
    op("mindspore.mint.histc", lambda ms, x: ms.mint.histc(x, bins=4, min=0.0, max=3.0),
       shapes=[[T(values=[1.0, 2.0, 1.0, 4.0, -1.0])]], grad=False,
       oracle=lambda ms, x: ms.ops.histc(x, bins=4, min=0.0, max=3.0),
       note="MindSpore 2.10 CPU has no kernel for mint.histc (HistcExt, Ascend-only); recorded through ops.histc "
            "(Histogram, CPU), which computes the same result"),
    op("mindspore.mint.searchsorted", lambda ms, x, v: ms.mint.searchsorted(x, v), shapes=[[SEQ, VALS]], grad=False),
]
