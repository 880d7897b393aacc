"""Specs of ``sampled_rest5`` (issue 21): the last served Tensor / nn / ops names without samples. Every one
of them is an Ascend (or GPU) kernel that MindSpore 2.10 CPU refuses ("The kernel X unregistered",
"Unsupported op [X] on CPU", "support Ascend only"; ScalarToArray has no evaluator at all), so each spec
carries an ``oracle``: what the recorder runs on real MindSpore instead, in this order of preference:
the documented MindSpore CPU equivalent with the same semantics (ops.clamp for Tensor.clamp_, ops.scatter
for scatter_, ops.tile for repeat, ops.addn for AccumulateNV2, nn.L1Loss for L1LossExt, the real
LayerNorm primitive for LayerNormExt, ...), else the documented formula written with real MindSpore CPU
ops (differentiable, so gradients are recorded), with index bookkeeping done in numpy where the formula
needs it (Unfold's patch layout, MultilabelMarginLoss's target sets, Roll's rotation). Where MindSpore
validates arguments in Python (nn.Lamb, nn.Roll, nn.Unfold, the loss Primitives' ``reduction``), the oracle
builds the real object first, so the error samples record MindSpore's own refusal.

The in-place Tensor methods run on a copy of the input (``y = x + 0``) and return what the user sees:
the method's result and the copy it wrote into (PyNative only, no gradients)."""
from __future__ import annotations

import numpy as np

from .core import Py, T, cell, op

M23 = (2, 3)
INPLACE = dict(grad=False, graph=False)
STATEFUL = dict(grad=False, graph=False)


def _no_cpu(oracle: str, kernel: str) -> str:
    """A spec's note: which oracle answered, and the kernel MindSpore 2.10 CPU lacks."""
    return f"oracle: {oracle} ({kernel} has no CPU kernel in MindSpore 2.10)"


def IDX(values, dtype: str = "int64") -> T:
    return T(values=values, dtype=dtype)


# --- Tensor methods -------------------------------------------------------------------------------

def _inplace(method: str):
    """``y.<method>(*rest, **kw)`` on a copy y of x: the method's result and y."""
    def call(ms, x, *rest, **kw):
        y = x + 0
        out = getattr(y, method)(*rest, **kw)
        return out, y
    return call


def _twice(fn):
    """An out-of-place oracle of an in-place method: its result, twice (the result and the written copy)."""
    def call(ms, *xs, **kw):
        out = fn(ms, *xs, **kw)
        return out, out
    return call


def _fmin_oracle(ms, x, y):
    """fmin: the smaller of x and y where neither is NaN, the other where one is (NaN where both are). Its
    gradient goes where MindSpore's Fmin bprop sends it: to x where y is NaN (both NaN too), to y where x
    alone is."""
    ops = ms.ops
    return ops.where(ops.isnan(y), x, ops.where(ops.isnan(x), y, ops.minimum(x, y)))


NANS_A = T(values=[[1.0, float("nan"), -0.5], [float("nan"), 2.0, 0.25]])
NANS_B = T(values=[[0.5, 1.5, float("nan")], [float("nan"), -1.0, 0.75]])

TENSOR_SPECS = [
    op("mindspore.Tensor.repeat", lambda ms, x, *reps: x.repeat(*reps), shapes=[[M23, Py(2), Py(1)],
                                                                              [M23, Py(2), Py(1), Py(2)]],
       oracle=lambda ms, x, *reps: ms.ops.tile(x, reps), note=_no_cpu("ops.tile", "Tensor.repeat")),
    op("mindspore.Tensor.clone", lambda ms, x: x.clone(), shapes=[M23],
       oracle=lambda ms, x: ms.ops.deepcopy(x), note=_no_cpu("ops.deepcopy", "Clone")),
    op("mindspore.Tensor.scatter_", _inplace("scatter_"), shapes=[[M23, Py(1), IDX([[0, 2], [1, 0]]), (2, 2)]],
       **INPLACE,
       oracle=_twice(lambda ms, x, dim, index, src: ms.ops.scatter(x, dim, index, src)),
       note=_no_cpu("ops.scatter", "InplaceScatterSrc")),
    op("mindspore.Tensor.fill_", _inplace("fill_"), shapes=[[M23, Py(2.5)]], **INPLACE,
       oracle=_twice(lambda ms, x, v: ms.ops.full_like(x, v)), note=_no_cpu("ops.full_like", "InplaceFillScalar")),
    op("mindspore.Tensor.fmin", lambda ms, x, y: x.fmin(y), shapes=[[NANS_A, NANS_B]], oracle=_fmin_oracle,
       note=_no_cpu("where/isnan/minimum on MindSpore CPU, fmin's documented NaN rule", "Fmin")),
    op("mindspore.Tensor.log_", _inplace("log_"), shapes=[T(M23, low=0.5, high=2.0)], **INPLACE,
       oracle=_twice(lambda ms, x: ms.ops.log(x)), note=_no_cpu("ops.log", "InplaceLog")),
    op("mindspore.Tensor.zero_", _inplace("zero_"), shapes=[M23], **INPLACE,
       oracle=_twice(lambda ms, x: ms.ops.zeros_like(x)), note=_no_cpu("ops.zeros_like", "InplaceZero")),
    op("mindspore.Tensor.sigmoid_", _inplace("sigmoid_"), shapes=[M23], **INPLACE,
       oracle=_twice(lambda ms, x: ms.ops.sigmoid(x)), note=_no_cpu("ops.sigmoid", "InplaceSigmoid")),
    op("mindspore.Tensor.sign_", _inplace("sign_"), shapes=[T(M23, values=[[-1.5, 0.0, 2.0], [0.25, -0.0, -3.0]])],
       **INPLACE, oracle=_twice(lambda ms, x: ms.ops.sign(x)), note=_no_cpu("ops.sign", "InplaceSign")),
    op("mindspore.Tensor.addcdiv", lambda ms, x, a, b, **kw: x.addcdiv(a, b, **kw),
       shapes=[[M23, M23, T(M23, low=0.5, high=2.0)]], kwargs=[{"value": 0.5}],
       errors=[([M23, (4,), T(M23, low=0.5, high=2.0)], {"value": 0.5})],
       oracle=lambda ms, x, a, b, value=1: ms.ops.addcdiv(x, a, b, ms.Tensor(value, ms.float32)),
       note=_no_cpu("ops.addcdiv", "AddcdivExt")),
    op("mindspore.Tensor.addmm_", _inplace("addmm_"), shapes=[[M23, (2, 4), (4, 3)]],
       kwargs=[{"beta": 0.5, "alpha": 2.0}], errors=[([M23, (2, 4), (3, 3)], {})],
       **INPLACE, oracle=_twice(lambda ms, x, a, b, **kw: ms.ops.addmm(x, a, b, **kw)),
       note=_no_cpu("ops.addmm", "InplaceAddmm")),
    op("mindspore.Tensor.clamp_", _inplace("clamp_"), shapes=[[M23, Py(-0.5), Py(1.0)]], **INPLACE,
       errors=[([M23, Py(None), Py(None)], {})],
       oracle=_twice(lambda ms, x, lo, hi: ms.ops.clamp(x, lo, hi)), note=_no_cpu("ops.clamp", "InplaceClampScalar")),
    op("mindspore.Tensor.erfinv_", _inplace("erfinv_"), shapes=[T(M23, low=-0.9, high=0.9)], **INPLACE,
       oracle=_twice(lambda ms, x: ms.ops.erfinv(x)), note=_no_cpu("ops.erfinv", "InplaceErfinv")),
    op("mindspore.Tensor.floor_", _inplace("floor_"), shapes=[M23], **INPLACE,
       oracle=_twice(lambda ms, x: ms.ops.floor(x)), note=_no_cpu("ops.floor", "InplaceFloor")),
    op("mindspore.Tensor.masked_fill_", _inplace("masked_fill_"), shapes=[[M23, T(M23, dtype="bool"), Py(0.5)]],
       **INPLACE, errors=[([M23, T((4,), dtype="bool"), Py(0.5)], {})],
       oracle=_twice(lambda ms, x, m, v: ms.ops.masked_fill(x, m, v)),
       note=_no_cpu("ops.masked_fill", "InplaceMaskedFillScalar")),
    op("mindspore.Tensor.new_full", lambda ms, x, size, v: x.new_full(size, v), shapes=[[M23, Py((3, 2)), Py(1.5)]],
       errors=[([M23, Py((-1, 2)), Py(1.5)], {})],
       grad=False, oracle=lambda ms, x, size, v: ms.ops.full(size, v, dtype=x.dtype),
       note=_no_cpu("ops.full with the input's dtype", "new_full")),
    op("mindspore.Tensor.scatter_add_", _inplace("scatter_add_"),
       shapes=[[M23, Py(1), IDX([[0, 0, 2], [1, 2, 1]]), M23]], **INPLACE,
       errors=[([M23, Py(1), IDX([0, 2]), (2,)], {})],
       oracle=_twice(lambda ms, x, dim, index, src: ms.ops.tensor_scatter_elements(x, index, src, dim, "add")),
       note=_no_cpu("ops.tensor_scatter_elements(reduction='add')", "InplaceScatterAdd")),
    op("mindspore.Tensor.tanh_", _inplace("tanh_"), shapes=[M23], **INPLACE,
       oracle=_twice(lambda ms, x: ms.ops.tanh(x)), note=_no_cpu("ops.tanh", "InplaceTanh")),
]


# --- nn ------------------------------------------------------------------------------------------

def _instance_norm(name: str):
    return lambda ms, **kw: getattr(ms.nn, name)(3, **kw)


def _instance_norm_oracle(name: str):
    """The real nn.<name> (same parameters, same input-rank check) normalising with CPU ops: per sample and
    channel over the spatial axes, biased variance, then gamma and beta (InstanceNorm has no CPU kernel in
    MindSpore 2.10)."""
    def build(ms, **kw):
        ops = ms.ops

        def construct(self, x):
            self._check_input_dim(x.shape, self.cls_name)
            axes = tuple(range(2, x.ndim))
            mean = ops.mean(x, axes, True)
            var = ops.mean((x - mean) * (x - mean), axes, True)
            shape = (1, -1) + (1,) * (x.ndim - 2)
            return (x - mean) / ops.sqrt(var + self.eps) * self.gamma.reshape(shape) + self.beta.reshape(shape)
        # a subclass of the same name: MindSpore's messages name the layer
        return type(name, (getattr(ms.nn, name),), {"construct": construct})(3, **kw)
    return build


def _layer_norm_ext_oracle(ms, normalized_shape, **kw):
    """The real nn.LayerNormExt (its weight and bias) through the CPU LayerNorm primitive."""
    class Oracle(ms.nn.LayerNormExt):
        def construct(self, x):
            k = x.ndim - len(self.normalized_shape)
            return ms.ops.LayerNorm(k, k, self.eps)(x, self.weight, self.bias)[0]
    return Oracle(normalized_shape, **kw)


def _unfold_oracle(ms, x, **kw):
    """ExtractImagePatches as TensorFlow defines it (MindSpore documents its layout): patch element
    (i, j, c) of output position (r, s) at depth (i * kw + j) * C + c; gathered from x by numpy-made indices
    (the real nn.Unfold built first: its argument checks)."""
    ms.nn.Unfold(**kw)
    n, c, h, w = x.shape
    (kh, kw_), (sh, sw), (rh, rw) = kw["ksizes"][1:3], kw["strides"][1:3], kw["rates"][1:3]
    oh, ow = (h - (kh - 1) * rh - 1) // sh + 1, (w - (kw_ - 1) * rw - 1) // sw + 1
    index = np.zeros((n, kh * kw_ * c, oh, ow), np.int32)
    for b in range(n):
        for i in range(kh):
            for j in range(kw_):
                for ch in range(c):
                    for r in range(oh):
                        for s in range(ow):
                            row, col = r * sh + i * rh, s * sw + j * rw
                            index[b, (i * kw_ + j) * c + ch, r, s] = ((b * c + ch) * h + row) * w + col
    return ms.ops.gather(x.reshape(-1), ms.Tensor(index.reshape(-1)), 0).reshape(index.shape)


def _loss(name: str, space: str = "nn"):
    """``nn.<name>(**kw)(*xs)`` (or the ops Primitive)."""
    return lambda ms, *xs, **kw: getattr(getattr(ms, space), name)(**kw)(*xs)


def _reduce(ms, loss, reduction: str = "mean"):
    return {"mean": loss.mean(), "sum": loss.sum(), "none": loss}[reduction]


def _soft_margin_oracle(ms, x, y, reduction="mean"):
    """log(1 + exp(-y x)), reduced (MindSpore's documented SoftMarginLoss) on CPU ops."""
    return _reduce(ms, ms.ops.log(1 + ms.ops.exp(-y * x)), reduction)


def _soft_margin_prim_oracle(ms, x, y, reduction="mean"):
    ms.ops.SoftMarginLoss(reduction=reduction)
    return _soft_margin_oracle(ms, x, y, reduction)


def _multilabel_oracle(with_is_target: bool, space: str):
    """Per sample sum over targets j (up to the first -1) and non-targets i of max(0, 1 - (x[y_j] - x[i]))
    divided by C, reduced; the prim also returns is_target (1 at the target classes). The target sets are
    read with numpy, the sums are CPU ops on x (the real cell or Primitive built first: its argument checks)."""
    def call(ms, x, target, reduction="mean"):
        getattr(getattr(ms, space), "MultilabelMarginLoss")(reduction=reduction)
        ops = ms.ops
        tgt = target.asnumpy()
        n, c = x.shape
        hot = np.zeros((n, c), np.float32)
        rows = []
        for b in range(n):
            picked = []
            for k in tgt[b]:
                if k < 0:
                    break
                picked.append(int(k))
            hot[b, picked] = 1
            others = ms.Tensor(1 - hot[b])
            terms = [ops.relu(1 - (x[b, k] - x[b])) * others for k in picked]
            rows.append(ops.stack(terms).sum() / c if terms else (x[b] * 0).sum())
        loss = _reduce(ms, ops.stack(rows), reduction)
        return (loss, ms.Tensor(hot.astype(np.int32))) if with_is_target else loss
    return call


def _roll_oracle(ms, x, shift, axis):
    """np.roll's index order gathered from x, axis by axis (the real nn.Roll built first: its argument checks)."""
    ms.nn.Roll(shift, axis)
    shifts, axes = (shift, axis) if isinstance(shift, (list, tuple)) else ((shift,), (axis,))
    for s, a in zip(shifts, axes):
        x = ms.ops.gather(x, ms.Tensor(np.roll(np.arange(x.shape[a]), s).astype(np.int32)), a)
    return x


def _pairwise(ms, a, b, p, eps):
    """||a - b + eps||_p over dim 1 (MindSpore's, as PyTorch's, pairwise distance of the triplet loss)."""
    d = ms.ops.abs(a - b + eps)
    return ms.ops.pow(ms.ops.pow(d, p).sum(1), 1.0 / p)


def _triplet_oracle(ms, x, pos, neg, margin=1.0, p=2, eps=1e-6, swap=False, reduction="mean"):
    d_pos, d_neg = _pairwise(ms, x, pos, p, eps), _pairwise(ms, x, neg, p, eps)
    if swap:
        d_neg = ms.ops.minimum(d_neg, _pairwise(ms, pos, neg, p, eps))
    return _reduce(ms, ms.ops.relu(d_pos - d_neg + margin), reduction)


def _optim_lamb(ms, w, g, **kw):
    p = ms.Parameter(w, name="w")
    opt = ms.nn.Lamb([p], **kw)
    opt((g,))
    opt((g,))
    return p * 1


def _lamb_oracle(ms, w, g, learning_rate, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
    """Two steps of nn.Lamb's documented update (the Lamb kernel: none on CPU) with CPU ops: Adam
    moments, bias correction at step t, r = m_hat / (sqrt(v_hat) + eps) + wd w, w -= lr ||w|| / ||r|| r
    (the real nn.Lamb built first: its argument checks)."""
    ms.nn.Lamb([ms.Parameter(w, name="w")], learning_rate, beta1, beta2, eps, weight_decay)
    ops = ms.ops
    m, v = ops.zeros_like(w), ops.zeros_like(w)
    for t in (1, 2):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        r = (m / (1 - beta1 ** t)) / (ops.sqrt(v / (1 - beta2 ** t)) + eps) + weight_decay * w
        w = w - learning_rate * (ops.sqrt((w * w).sum()) / ops.sqrt((r * r).sum())) * r
    return w


def _optim_lars(ms, w, g, **kw):
    p = ms.Parameter(w, name="w")
    opt = ms.nn.LARS(ms.nn.Momentum([p], learning_rate=0.1, momentum=0.9, weight_decay=0.01), **kw)
    opt((g,))
    opt((g,))
    return p * 1


def _lars_oracle(ms, w, g, epsilon=1e-5, coefficient=0.001):
    """Two steps of LARS over Momentum(0.1, 0.9, weight_decay 0.01): the real CPU Momentum (its decay off,
    LARS applies it) fed LARSUpdate's documented gradient (g + wd w) * coefficient ||w|| / (||g|| + wd ||w||
    + eps) (LARSUpdate has no CPU kernel; the real nn.LARS is built first: its argument checks)."""
    ops = ms.ops
    p = ms.Parameter(w, name="w")
    ms.nn.LARS(ms.nn.Momentum([p], learning_rate=0.1, momentum=0.9), epsilon=epsilon, coefficient=coefficient)
    opt = ms.nn.Momentum([p], learning_rate=0.1, momentum=0.9)
    wd = 0.01
    for _ in range(2):
        w_norm, g_norm = ops.sqrt((p * p).sum()), ops.sqrt((g * g).sum())
        ratio = coefficient * w_norm / (g_norm + wd * w_norm + epsilon)
        opt(((g + wd * p) * ratio,))
    return p * 1


TRIPLET = [(4, 5), (4, 5), (4, 5)]
ML_TARGET = IDX([[1, 2, -1, 0], [3, -1, 0, 0], [0, 1, 2, 3]], "int32")
SIGNS = T(values=[[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]])

NN_SPECS = [
    cell("mindspore.nn.InstanceNorm1d", _instance_norm("InstanceNorm1d"), shapes=[(2, 3, 5)],
         errors=[((2, 3), {})], oracle=_instance_norm_oracle("InstanceNorm1d"),
         note=_no_cpu("the real cell normalising with CPU ops", "InstanceNorm")),
    cell("mindspore.nn.InstanceNorm2d", _instance_norm("InstanceNorm2d"), shapes=[(2, 3, 2, 3)], kwargs=[{"eps": 0.1}],
         errors=[((2, 3, 4), {})], oracle=_instance_norm_oracle("InstanceNorm2d"),
         note=_no_cpu("the real cell normalising with CPU ops", "InstanceNorm")),
    cell("mindspore.nn.InstanceNorm3d", _instance_norm("InstanceNorm3d"), shapes=[(1, 3, 2, 2, 3)],
         errors=[((2, 3, 4, 4), {})], oracle=_instance_norm_oracle("InstanceNorm3d"),
         note=_no_cpu("the real cell normalising with CPU ops", "InstanceNorm")),
    op("mindspore.nn.Unfold", lambda ms, x, **kw: ms.nn.Unfold(**kw)(x), shapes=[(1, 2, 4, 5)],
       kwargs=[{"ksizes": [1, 2, 2, 1], "strides": [1, 1, 2, 1], "rates": [1, 1, 1, 1]},
               {"ksizes": [1, 2, 2, 1], "strides": [1, 2, 1, 1], "rates": [1, 2, 2, 1]}],
       errors=[((1, 2, 4, 5), {"ksizes": [2, 2], "strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1]})],
       oracle=_unfold_oracle,
       note=_no_cpu("TensorFlow's extract_image_patches layout gathered with CPU ops", "ExtractImagePatches")),
    op("mindspore.nn.Lamb", _optim_lamb, shapes=[[M23, M23]], kwargs=[{"learning_rate": 0.1},
                                                                   {"learning_rate": 0.1, "weight_decay": 0.1}],
       errors=[([M23, M23], {"learning_rate": 0.1, "beta1": 1.0})], **STATEFUL, oracle=_lamb_oracle,
       note=_no_cpu("the documented Lamb update with CPU ops", "Lamb")),
    op("mindspore.nn.LARS", _optim_lars, shapes=[[M23, M23]], kwargs=[{"coefficient": 0.02}], **STATEFUL,
       errors=[([M23, M23], {"coefficient": 1})],
       oracle=_lars_oracle,
       note=_no_cpu("LARSUpdate's documented gradient with CPU ops into the real Momentum", "LARSUpdate")),
    op("mindspore.nn.SoftMarginLoss", _loss("SoftMarginLoss"), shapes=[[M23, SIGNS]],
       kwargs=[{}, {"reduction": "none"}],
       oracle=_soft_margin_oracle, note=_no_cpu("log(1 + exp(-y x)) with CPU ops", "SoftMarginLoss")),
    op("mindspore.nn.L1LossExt", _loss("L1LossExt"), shapes=[[M23, M23]], kwargs=[{}, {"reduction": "sum"}],
       errors=[([M23, M23], {"reduction": "avg"})],
       oracle=lambda ms, x, y, **kw: ms.nn.L1Loss(**kw)(x, y), note=_no_cpu("nn.L1Loss", "L1LossExt")),
    cell("mindspore.nn.LayerNormExt", lambda ms, **kw: ms.nn.LayerNormExt(**kw), shapes=[(2, 3, 4)],
         kwargs=[{"normalized_shape": (4,)}, {"normalized_shape": (3, 4), "eps": 0.1}], oracle=_layer_norm_ext_oracle,
         note=_no_cpu("the real cell through the CPU LayerNorm primitive", "LayerNormExt")),
    op("mindspore.nn.MatrixDiag", lambda ms, x: ms.nn.MatrixDiag()(x), shapes=[(2, 3)],
       oracle=lambda ms, x: ms.ops.matrix_diag(x), note=_no_cpu("ops.matrix_diag", "MatrixDiag")),
    op("mindspore.nn.MatrixDiagPart", lambda ms, x: ms.nn.MatrixDiagPart()(x), shapes=[(2, 3, 4)], errors=[((3,), {})],
       oracle=lambda ms, x: ms.ops.diagonal(x, 0, -2, -1), note=_no_cpu("ops.diagonal", "MatrixDiagPart")),
    op("mindspore.nn.MatrixSetDiag", lambda ms, x, d: ms.nn.MatrixSetDiag()(x, d), shapes=[[(2, 3, 4), (2, 3)]],
       errors=[([(2, 3, 4), (2, 4)], {})], oracle=lambda ms, x, d: ms.ops.matrix_set_diag(x, d),
       note=_no_cpu("ops.matrix_set_diag", "MatrixSetDiag")),
    op("mindspore.nn.MultilabelMarginLoss", _loss("MultilabelMarginLoss"), shapes=[[(3, 4), ML_TARGET]],
       kwargs=[{}, {"reduction": "none"}], oracle=_multilabel_oracle(False, "nn"),
       errors=[([(3, 4), ML_TARGET], {"reduction": "avg"})],
       note=_no_cpu("the documented hinge sums with CPU ops", "MultilabelMarginLoss")),
    op("mindspore.nn.Roll", lambda ms, x, **kw: ms.nn.Roll(**kw)(x), shapes=[(3, 4)],
       kwargs=[{"shift": 1, "axis": 0}, {"shift": [2, -1], "axis": [1, 0]}], oracle=_roll_oracle,
       errors=[((3, 4), {"shift": [1, 2], "axis": [0]})],
       note=_no_cpu("np.roll's index order gathered with CPU ops", "Roll")),
    op("mindspore.nn.TripletMarginLoss", _loss("TripletMarginLoss"), shapes=[TRIPLET],
       kwargs=[{}, {"p": 1, "swap": True, "margin": 2.0, "reduction": "none"}], oracle=_triplet_oracle,
       note="oracle: max(d(a, p) - d(a, n) + margin, 0), d = ||a - b + eps||_p, with CPU ops "
            "(TripletMarginLoss has no CPU kernel in MindSpore 2.10)"),
]


# --- ops -----------------------------------------------------------------------------------------

def _prim(name: str):
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(**kw)(*xs)


def _einsum_oracle(ms, a, b, equation):
    """The two equations sampled, as the CPU ops they spell (the real Primitive built first: its checks)."""
    ms.ops.Einsum(equation)
    if equation == "ij,jk->ik":
        return ms.ops.matmul(a, b)
    if equation == "bij,bkj->bik":
        return ms.ops.bmm(a, b.transpose(0, 2, 1))
    raise ValueError(equation)


def _triplet_prim_oracle(ms, x, pos, neg, margin, **kw):
    ms.ops.TripletMarginLoss(**kw)
    return _triplet_oracle(ms, x, pos, neg, margin=margin, **kw)


def _euclidean_norm(ms, x, axes, **kw):
    """EuclideanNorm over constant int32 axes (a Tensor made in the call: a constant in GRAPH_MODE too)."""
    return ms.ops.EuclideanNorm(**kw)(x, ms.Tensor(np.array(axes, np.int32)))


def _norm_oracle(ms, x, axes, keep_dims=False):
    ms.ops.EuclideanNorm(keep_dims)
    return ms.ops.norm(x, dim=tuple(axes), keepdim=keep_dims)


OPS_SPECS = [
    op("mindspore.ops.ScalarToArray", lambda ms, v: ms.ops.ScalarToArray()(v), shapes=[Py(2.5)], grad=False,
       errors=[(Py([1.0]), {})],
       oracle=lambda ms, v: ms.ops.scalar_to_tensor(v),
       note="oracle: ops.scalar_to_tensor, which MindSpore documents as its replacement (ScalarToArray has no "
            "evaluator in MindSpore 2.10)"),
    op("mindspore.ops.scalar_to_array", lambda ms, v: ms.ops.scalar_to_array(v), shapes=[Py(-1.25)], grad=False,
       oracle=lambda ms, v: ms.ops.scalar_to_tensor(v),
       note="oracle: ops.scalar_to_tensor, which MindSpore documents as its replacement (ScalarToArray has no "
            "evaluator in MindSpore 2.10)"),
    op("mindspore.ops.Einsum", lambda ms, a, b, equation: ms.ops.Einsum(equation)((a, b)),
       shapes=[[(2, 3), (3, 4)]], kwargs=[{"equation": "ij,jk->ik"}], oracle=_einsum_oracle,
       errors=[([(2, 3), (3, 4)], {"equation": 1})],
       note=_no_cpu("the CPU matmul the equation spells", "Einsum")),
    op("mindspore.ops.Einsum", lambda ms, a, b, equation: ms.ops.Einsum(equation)((a, b)),
       shapes=[[(2, 2, 3), (2, 4, 3)]], kwargs=[{"equation": "bij,bkj->bik"}], oracle=_einsum_oracle,
       note=_no_cpu("the CPU matmul the equation spells", "Einsum")),
    op("mindspore.ops.AccumulateNV2", lambda ms, *xs: ms.ops.AccumulateNV2()(xs), shapes=[[M23, M23, M23]],
       errors=[([M23, (3, 2)], {})], oracle=lambda ms, *xs: ms.ops.addn(xs), note=_no_cpu("ops.addn", "AccumulateNV2")),
    op("mindspore.ops.EuclideanNorm", _euclidean_norm, shapes=[(2, 3, 4)],
       kwargs=[{"axes": [1]}, {"axes": [0, 2], "keep_dims": True}], oracle=_norm_oracle,
       errors=[((2, 3, 4), {"axes": [1], "keep_dims": 1})],
       note=_no_cpu("ops.norm over the axes", "EuclideanNorm")),
    op("mindspore.ops.Fills", lambda ms, x, v: ms.ops.Fills()(x, v), shapes=[[M23, Py(2.5)]], grad=False,
       oracle=lambda ms, x, v: ms.ops.full_like(x, v), note=_no_cpu("ops.full_like", "Fills")),
    op("mindspore.ops.Fmin", lambda ms, x, y: ms.ops.Fmin()(x, y), shapes=[[NANS_A, NANS_B]], oracle=_fmin_oracle,
       note=_no_cpu("where/isnan/minimum on MindSpore CPU, fmin's documented NaN rule", "Fmin")),
    op("mindspore.ops.MultilabelMarginLoss", _prim("MultilabelMarginLoss"), shapes=[[(3, 4), ML_TARGET]],
       kwargs=[{}, {"reduction": "sum"}], oracle=_multilabel_oracle(True, "ops"),
       errors=[([(3, 4), ML_TARGET], {"reduction": "avg"})],
       note=_no_cpu("the documented hinge sums with CPU ops", "MultilabelMarginLoss")),
    op("mindspore.ops.SoftMarginLoss", _prim("SoftMarginLoss"), shapes=[[M23, SIGNS]], kwargs=[{"reduction": "sum"}],
       errors=[([M23, SIGNS], {"reduction": "avg"})], oracle=_soft_margin_prim_oracle,
       note=_no_cpu("log(1 + exp(-y x)) with CPU ops", "SoftMarginLoss")),
    op("mindspore.ops.SparseGatherV2", lambda ms, x, i, axis: ms.ops.SparseGatherV2()(x, i, axis),
       shapes=[[(4, 3), IDX([1, 3, 1], "int32"), Py(0)], [(4, 3), IDX([2, 0], "int32"), Py(1)]],
       errors=[([(4, 3), IDX([1], "int32"), Py(2)], {})],
       oracle=lambda ms, x, i, axis: ms.ops.Gather()(x, i, axis), note=_no_cpu("ops.Gather", "SparseGatherV2")),
    op("mindspore.ops.TripletMarginLoss", _prim("TripletMarginLoss"), shapes=[TRIPLET + [T(values=1.0)]],
       kwargs=[{}, {"p": 3, "reduction": "none"}], oracle=_triplet_prim_oracle,
       errors=[(TRIPLET + [T(values=1.0)], {"reduction": "avg"})],
       note="oracle: max(d(a, p) - d(a, n) + margin, 0), d = ||a - b + eps||_p, with CPU ops "
            "(TripletMarginLoss has no CPU kernel in MindSpore 2.10)"),
]

SPECS = TENSOR_SPECS + NN_SPECS + OPS_SPECS
