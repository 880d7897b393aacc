"""Fused and sparse optimizer primitives (breadth round 3, family ``fused3``): the SparseApply* and
FusedSparse* updates, FusedCastAdamWeightDecay, FusedAdaFactor(WithGlobalNorm) and
FusedWeightScaleApplyMomentum. Each sample wraps var and its state in Parameters and returns the first
output and the Parameters after the update (PyNative only, as a Parameter is made per call; GRAPH_MODE is
tested in tests/test_fused3.py). Indices are unique: MindSpore's CPU kernels disagree on repeated ones
(SparseApplyAdagrad and the FusedSparse* sum their gradient rows, SparseApplyAdagradV2 and SparseApplyFtrl
apply them one after the other); the emulator sums them.

Not recordable on MindSpore 2.10 CPU ("Unsupported op", Ascend/GPU kernels only), so only their argument
checks are samples and their numbers are checked against numpy in tests/test_fused3.py:
SparseApplyProximalAdagrad, SparseApplyFtrlV2, SparseApplyAdadelta, FusedWeightScaleApplyMomentum,
LARSUpdate, PagedAttention(Mask); ring_attention_update and moe_init_routing_v2 (Ascend-only functions) likewise. FusedCastAdamWeightDecay's and
FusedAdaFactor's outputs are zeros on CPU (placeholders), so their samples return the Parameters only."""
from __future__ import annotations

from .core import Py, T, op

POS = T((4, 3), low=0.1, high=1.0)
IDX = T(values=[0, 2, 3], dtype="int32")
ALL = T(values=[3, 1, 0, 2], dtype="int32")
I32 = dict(dtype="int32")


def _s(value: float) -> T:
    """A (1,) float32 scalar tensor (the FusedSparse* Adam rates)."""
    return T(values=[value], dtype="float32")


def _sparse(name: str, states: int, outputs: int = 1):
    """The primitive on its first ``states`` inputs wrapped in Parameters; its first ``outputs`` outputs
    and the Parameters after the update."""
    def fn(ms, *xs, **kw):
        held = [ms.Parameter(x, name=f"state{i}") for i, x in enumerate(xs[:states])]
        out = getattr(ms.ops, name)(**kw)(*held, *xs[states:])
        out = out if isinstance(out, tuple) else (out,)
        return tuple(out[:outputs]) + tuple(p * 1 for p in held)
    return fn


def _adafactor(name: str):
    """FusedAdaFactor(...)(epsilon, clip, beta1, beta2, weight_decay, lr, grad, param, exp_avg, row, col,
    sq[, global_norm]) with param and its states as Parameters; the Parameters after the step."""
    def fn(ms, grad, param, exp_avg, row, col, sq, *norm, **kw):
        held = [ms.Parameter(x, name=f"state{i}") for i, x in enumerate((param, exp_avg, row, col, sq))]
        getattr(ms.ops, name)(**kw)((1e-30, 1e-3), 1.0, 0.9, 0.8, 1e-2, 0.03, grad, *held, *norm)
        return tuple(p * 1 for p in held)
    return fn


RING = [(4, 2, 16), T((2, 8, 4, 8), low=0.1, high=1.0), T((2, 8, 4, 8), low=0.1, high=1.0), (4, 2, 16),
        T((2, 8, 4, 8), low=0.1, high=1.0), T((2, 8, 4, 8), low=0.1, high=1.0)]


def _f(name: str):
    if name[0].isupper():
        return lambda ms, *xs, **kw: getattr(ms.ops, name)(**kw)(*xs)
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


FACTORED = [(2, 3, 2), (2, 3, 2), (2, 3, 2), T((2, 3), low=0.1, high=1.0), T((2, 2), low=0.1, high=1.0), (1,)]
VECTOR = [(4,), (4,), (4,), (1,), (1,), T((4,), low=0.1, high=1.0)]

SPECS = [
    op("mindspore.ops.SparseApplyAdagrad", _sparse("SparseApplyAdagrad", 2, 2), shapes=[[(4, 3), POS, (3, 3), IDX]],
       kwargs=[{"lr": 0.1}, {"lr": 0.1, "update_slots": False}], grad=False, graph=False,
       errors=[([(4, 3), POS, (3, 3), IDX], {"lr": 1}), ([(4, 3), POS, (3, 3), IDX], {"lr": 0.1, "use_locking": 1})]),
    op("mindspore.ops.SparseApplyAdagradV2", _sparse("SparseApplyAdagradV2", 2, 2),
       shapes=[[(4, 3), POS, (3, 3), IDX]], kwargs=[{"lr": 0.1, "epsilon": 1e-3}], grad=False, graph=False,
       errors=[([(4, 3), POS, (3, 3), IDX], {"lr": 0.1, "epsilon": 1})]),
    op("mindspore.ops.SparseApplyFtrl", _sparse("SparseApplyFtrl", 3, 3),
       shapes=[[(4, 3), POS, (4, 3), (3, 3), IDX]], kwargs=[{"lr": 0.1, "l1": 0.01, "l2": 0.02, "lr_power": -0.5}],
       grad=False, graph=False,
       errors=[([(4, 3), POS, (4, 3), (3, 3), IDX], {"lr": 0.1, "l1": 0.01, "l2": 0.02, "lr_power": 0.5}),
               ([(4, 3), POS, (4, 3), (3, 3), IDX], {"lr": -0.1, "l1": 0.01, "l2": 0.02, "lr_power": -0.5})]),
    op("mindspore.ops.FusedSparseFtrl", _sparse("FusedSparseFtrl", 3),
       shapes=[[(4, 3), POS, (4, 3), (3, 3), IDX]], kwargs=[{"lr": 0.1, "l1": 0.01, "l2": 0.02, "lr_power": -0.5}],
       grad=False, graph=False,
       errors=[([(4, 3), POS, (4, 3), (3, 3), IDX], {"lr": 1, "l1": 0.01, "l2": 0.02, "lr_power": -0.5})]),
    op("mindspore.ops.SparseApplyRMSProp", _sparse("SparseApplyRMSProp", 3, 3),
       shapes=[[(4, 3), POS, (4, 3), Py(0.01), (4, 3), ALL]], kwargs=[{"rho": 0.9, "momentum": 0.1, "epsilon": 1e-6}],
       grad=False, graph=False,
       errors=[([(4, 3), POS, (4, 3), Py(0.01), (4, 3), ALL], {"rho": 1, "momentum": 0.1, "epsilon": 1e-6})]),
    op("mindspore.ops.FusedSparseAdam", _sparse("FusedSparseAdam", 3),
       shapes=[[(4, 3), (4, 3), POS, _s(0.9), _s(0.999), _s(0.01), _s(0.9), _s(0.999), _s(1e-8), (3, 3), IDX]],
       kwargs=[{}, {"use_nesterov": True}], grad=False, graph=False,
       errors=[([(4, 3), (4, 3), POS, _s(0.9), _s(0.999), _s(0.01), _s(0.9), _s(0.999), _s(1e-8), (3, 3), IDX],
                {"use_locking": 1})]),
    op("mindspore.ops.FusedSparseLazyAdam", _sparse("FusedSparseLazyAdam", 3),
       shapes=[[(4, 3), (4, 3), POS, _s(0.9), _s(0.999), _s(0.01), _s(0.9), _s(0.999), _s(1e-8), (3, 3), IDX]],
       grad=False, graph=False,
       errors=[([(4, 3), (4, 3), POS, _s(0.9), _s(0.999), _s(0.01), _s(0.9), _s(0.999), _s(1e-8), (3, 3), IDX],
                {"use_nesterov": 1})]),
    op("mindspore.ops.FusedSparseProximalAdagrad", _sparse("FusedSparseProximalAdagrad", 2),
       shapes=[[(4, 3), POS, T(values=0.1), T(values=0.01), T(values=0.02), (3, 3), IDX]], grad=False, graph=False,
       errors=[([(4, 3), POS, T(values=0.1), T(values=0.01), T(values=0.02), (3, 3), IDX], {"use_locking": 1})]),
    # Ascend/GPU kernels only: the argument checks MindSpore makes first
    op("mindspore.ops.SparseApplyProximalAdagrad", _sparse("SparseApplyProximalAdagrad", 2, 2), graph=False,
       errors=[([(4, 3), POS, Py(0.1), Py(0.01), Py(0.02), (3, 3), IDX], {"use_locking": 1})]),
    op("mindspore.ops.SparseApplyAdadelta", _sparse("SparseApplyAdadelta", 3, 3), graph=False,
       errors=[([(4, 3), POS, POS, Py(0.01), Py(0.9), (4, 3), ALL], {"epsilon": 1})]),
    op("mindspore.ops.SparseApplyFtrlV2", _sparse("SparseApplyFtrlV2", 3, 3), graph=False,
       errors=[([(4, 3), POS, (4, 3), (3, 3), IDX],
                {"lr": 0.1, "l1": 0.01, "l2": 0.02, "l2_shrinkage": 1, "lr_power": -0.5}),
               ([(4, 3), POS, (4, 3), (3, 3), IDX],
                {"lr": 0.1, "l1": -0.01, "l2": 0.02, "l2_shrinkage": 0.1, "lr_power": -0.5})]),
    op("mindspore.ops.FusedWeightScaleApplyMomentum", _sparse("FusedWeightScaleApplyMomentum", 0), graph=False,
       errors=[([Py(0.1), Py(1.0), T((2, 3), **I32), T((2, 3), **I32), Py(0.1), (2, 3), Py(0.9)], {})]),
    op("mindspore.ops.LARSUpdate", _f("LARSUpdate"), graph=False,
       errors=[([(2, 3), (2, 3), T(values=1.0), T(values=1.0), Py(0.0), Py(1.0)], {"epsilon": 1}),
               ([(2, 3), (2, 3), T(values=1.0), T(values=1.0), Py(0.0), Py(1.0)], {"use_clip": 1})]),
    op("mindspore.ops.ring_attention_update", _f("ring_attention_update"),
       errors=[(RING, {"layout": "BSH"}), (RING, {"layout": 1})]),
    op("mindspore.ops.moe_init_routing_v2", _f("moe_init_routing_v2"),    # no CPU kernel: the signature's check
       errors=[([(3, 4), T(values=[[0, 1], [1, 2], [2, 0]], dtype="int32")], {})]),
    op("mindspore.ops.PagedAttention", lambda ms, *xs, **kw: ms.ops.PagedAttention(**kw)(*xs),
       errors=[([T((2, 4, 8)), T((3, 4, 2, 8)), T((3, 4, 2, 8)), T(values=[[0], [1]], dtype="int32"),
                 T(values=[3, 4], dtype="int32")], {"head_num": "a", "scale_value": 1.0, "kv_head_num": 2})]),
    op("mindspore.ops.PagedAttentionMask", lambda ms, *xs, **kw: ms.ops.PagedAttentionMask(**kw)(*xs),
       errors=[([T((2, 4, 8)), T((3, 4, 2, 8)), T((3, 4, 2, 8)), T(values=[[0], [1]], dtype="int32"),
                 T(values=[3, 4], dtype="int32")], {"head_num": 4, "scale_value": 1.0, "kv_head_num": "a"})]),
    # CPU kernels whose outputs are placeholders: the Parameters after the step
    op("mindspore.ops.FusedCastAdamWeightDecay",
       lambda ms, var, m, v, grad, **kw: _sparse("FusedCastAdamWeightDecay", 3, 0)(
           ms, var, m, v, 0.01, 0.9, 0.999, 1e-8, 0.1, grad, 2.0, **kw),
       shapes=[[T((2, 3), dtype="float16"), (2, 3), T((2, 3), low=0.1, high=1.0), T((2, 3), dtype="float16")]],
       grad=False, graph=False, errors=[([(2, 3), (2, 3), (2, 3), (2, 3)], {"use_locking": 1})]),
    op("mindspore.ops.FusedAdaFactor", _adafactor("FusedAdaFactor"), shapes=[VECTOR, FACTORED],
       kwargs=[{}, {"enable_scale_parameter": True, "enable_first_moment": True, "enable_weight_decay": True}],
       grad=False, graph=False, errors=[(FACTORED, {"enable_first_moment": 1})]),
    op("mindspore.ops.FusedAdaFactorWithGlobalNorm", _adafactor("FusedAdaFactorWithGlobalNorm"),
       shapes=[FACTORED + [T(values=2.0)]], kwargs=[{"enable_first_moment": True}], grad=False, graph=False),
]
