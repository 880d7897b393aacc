"""Loss specs: ``mindspore.nn`` loss Cells and the ``mindspore.ops`` loss functions and Primitives."""
from __future__ import annotations

from .core import T, cell, op

PROB = dict(low=0.05, high=0.95)
LABEL = dict(dtype="int32", low=0, high=4)
REDUCTIONS = [{"reduction": "mean"}, {"reduction": "sum"}, {"reduction": "none"}]


def _nn(name: str):
    return lambda ms, **kw: getattr(ms.nn, name)(**kw)


def _f(name: str):
    if name[0].isupper():
        return lambda ms, *xs, **kw: getattr(ms.ops, name)(**kw)(*xs)
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


SPECS = [
    cell("mindspore.nn.SoftmaxCrossEntropyWithLogits", _nn("SoftmaxCrossEntropyWithLogits"),
         shapes=[[(3, 4), T((3, 4), **PROB)]], kwargs=[{}, {"reduction": "sum"}]),
    cell("mindspore.nn.SoftmaxCrossEntropyWithLogits", _nn("SoftmaxCrossEntropyWithLogits"),
         shapes=[[(3, 4), T((3,), **LABEL)]], kwargs=[{"sparse": True, "reduction": "mean"}, {"sparse": True}]),
    cell("mindspore.nn.MSELoss", _nn("MSELoss"), shapes=[[(3, 4), (3, 4)], [(3, 4), (1, 4)]], kwargs=REDUCTIONS),
    cell("mindspore.nn.L1Loss", _nn("L1Loss"), shapes=[[(3, 4), (3, 4)]], kwargs=REDUCTIONS),
    cell("mindspore.nn.SmoothL1Loss", _nn("SmoothL1Loss"), shapes=[[(3, 4), (3, 4)]],
         kwargs=[{}, {"beta": 0.5, "reduction": "mean"}]),
    cell("mindspore.nn.BCEWithLogitsLoss", _nn("BCEWithLogitsLoss"), shapes=[[(3, 4), T((3, 4), **PROB)]],
         kwargs=REDUCTIONS),
    cell("mindspore.nn.CrossEntropyLoss", _nn("CrossEntropyLoss"), shapes=[[(3, 4), T((3,), **LABEL)]],
         kwargs=[{}, {"reduction": "sum", "label_smoothing": 0.1}, {"reduction": "none"}]),
    cell("mindspore.nn.NLLLoss", _nn("NLLLoss"), shapes=[[(3, 4), T((3,), **LABEL)]], kwargs=REDUCTIONS),
    op("mindspore.ops.SigmoidCrossEntropyWithLogits", _f("SigmoidCrossEntropyWithLogits"),
       shapes=[[(3, 4), T((3, 4), **PROB)]]),
    op("mindspore.ops.SmoothL1Loss", _f("SmoothL1Loss"), shapes=[[(3, 4), (3, 4)]],
       kwargs=[{}, {"beta": 0.5, "reduction": "mean"}]),
    op("mindspore.ops.smooth_l1_loss", _f("smooth_l1_loss"), shapes=[[(3, 4), (3, 4)]],
       kwargs=[{}, {"beta": 2.0, "reduction": "sum"}]),
    op("mindspore.ops.l1_loss", _f("l1_loss"), shapes=[[(3, 4), (3, 4)]], kwargs=REDUCTIONS),
    op("mindspore.ops.mse_loss", _f("mse_loss"), shapes=[[(3, 4), (3, 4)]], kwargs=REDUCTIONS),
    op("mindspore.ops.cross_entropy", _f("cross_entropy"),
       shapes=[[(3, 4), T((3,), **LABEL)], [(3, 4), T((3, 4), **PROB)]], kwargs=[{}, {"reduction": "sum"}]),
    op("mindspore.ops.nll_loss", _f("nll_loss"), shapes=[[(3, 4), T((3,), **LABEL)]], kwargs=[{}, {"reduction": "none"}]),
    op("mindspore.ops.binary_cross_entropy_with_logits", _f("binary_cross_entropy_with_logits"),
       shapes=[[(3, 4), T((3, 4), **PROB)]], kwargs=REDUCTIONS),
]

# --- more losses (served later) -----------------------------------------------------------------------
SPECS += [
    cell("mindspore.nn.BCELoss", _nn("BCELoss"), shapes=[[T((3, 4), **PROB), T((3, 4), **PROB)]], kwargs=REDUCTIONS),
    cell("mindspore.nn.MAELoss", _nn("MAELoss"), shapes=[[(3, 4), (3, 4)]], kwargs=REDUCTIONS),
    cell("mindspore.nn.RMSELoss", _nn("RMSELoss"), shapes=[[(3, 4), (3, 4)]]),
    cell("mindspore.nn.HuberLoss", _nn("HuberLoss"), shapes=[[(3, 4), (3, 4)]], kwargs=[{}, {"delta": 0.5, "reduction": "sum"}]),
    cell("mindspore.nn.KLDivLoss", _nn("KLDivLoss"), shapes=[[(3, 4), T((3, 4), **PROB)]], kwargs=[{}, {"reduction": "sum"}]),
    cell("mindspore.nn.MarginRankingLoss", _nn("MarginRankingLoss"), shapes=[[(3,), (3,), (3,)]], kwargs=[{}, {"margin": 0.5}]),
    cell("mindspore.nn.CosineEmbeddingLoss", _nn("CosineEmbeddingLoss"),
         shapes=[[(3, 4), (3, 4), T((3,), values=[1, -1, 1], dtype="int32")]]),
    cell("mindspore.nn.DiceLoss", _nn("DiceLoss"), shapes=[[T((3, 4), **PROB), T((3, 4), values=[[0, 1, 0, 1]] * 3)]]),
    cell("mindspore.nn.GaussianNLLLoss", _nn("GaussianNLLLoss"), shapes=[[(3, 4), (3, 4), T((3, 4), low=0.2, high=2)]]),
    cell("mindspore.nn.PoissonNLLLoss", _nn("PoissonNLLLoss"), shapes=[[(3, 4), T((3, 4), low=0, high=3)]]),
    cell("mindspore.nn.MultiLabelSoftMarginLoss", _nn("MultiLabelSoftMarginLoss"), shapes=[[(3, 4), T((3, 4), values=[[0, 1, 0, 1]] * 3)]]),
    cell("mindspore.nn.FocalLoss", _nn("FocalLoss"), shapes=[[(3, 4, 2), T((3, 1, 2), dtype="int32", low=0, high=4)]]),
    op("mindspore.ops.SoftmaxCrossEntropyWithLogits", lambda ms, x, y: ms.ops.SoftmaxCrossEntropyWithLogits()(x, y),
       shapes=[[(3, 4), T((3, 4), **PROB)]]),
    op("mindspore.ops.SparseSoftmaxCrossEntropyWithLogits", lambda ms, x, y: ms.ops.SparseSoftmaxCrossEntropyWithLogits()(x, y),
       shapes=[[(3, 4), T((3,), **LABEL)]]),
    op("mindspore.ops.BinaryCrossEntropy", lambda ms, x, y, **kw: ms.ops.BinaryCrossEntropy(**kw)(x, y),
       shapes=[[T((3, 4), **PROB), T((3, 4), **PROB)]], kwargs=[{}, {"reduction": "sum"}]),
    op("mindspore.ops.binary_cross_entropy", _f("binary_cross_entropy"), shapes=[[T((3, 4), **PROB), T((3, 4), **PROB)]], kwargs=REDUCTIONS),
    op("mindspore.ops.BCEWithLogitsLoss", lambda ms, x, y, w, p, **kw: ms.ops.BCEWithLogitsLoss(**kw)(x, y, w, p),
       shapes=[[(3, 4), T((3, 4), **PROB), T((4,), values=[1.0] * 4), T((4,), values=[1.0, 2.0, 0.5, 1.0])]]),
    op("mindspore.ops.NLLLoss", lambda ms, x, y, w, **kw: ms.ops.NLLLoss(**kw)(x, y, w)[0],
       shapes=[[(3, 4), T((3,), **LABEL), T((4,), values=[1.0, 0.5, 2.0, 1.0])]]),
    op("mindspore.ops.KLDivLoss", lambda ms, x, y, **kw: ms.ops.KLDivLoss(**kw)(x, y), shapes=[[(3, 4), T((3, 4), **PROB)]],
       kwargs=[{}, {"reduction": "sum"}]),
    op("mindspore.ops.kl_div", _f("kl_div"), shapes=[[(3, 4), T((3, 4), **PROB)]], kwargs=[{}, {"reduction": "sum"}]),
    op("mindspore.ops.huber_loss", _f("huber_loss"), shapes=[[(3, 4), (3, 4)]], kwargs=[{}, {"delta": 0.5}]),
    op("mindspore.ops.margin_ranking_loss", _f("margin_ranking_loss"), shapes=[[(3,), (3,), (3,)]]),
    op("mindspore.ops.cosine_embedding_loss", _f("cosine_embedding_loss"),
       shapes=[[(3, 4), (3, 4), T((3,), values=[1, -1, 1], dtype="int32")]]),
    op("mindspore.ops.gaussian_nll_loss", _f("gaussian_nll_loss"), shapes=[[(3, 4), (3, 4), T((3, 4), low=0.2, high=2)]]),
    op("mindspore.ops.multilabel_soft_margin_loss", _f("multilabel_soft_margin_loss"),
       shapes=[[(3, 4), T((3, 4), values=[[0, 1, 0, 1]] * 3)]]),
]
# left out: SoftMarginLoss (no CPU kernel in MindSpore 2.10), HingeEmbeddingLoss (its CPU Add refuses the float target),
# MultiMarginLoss (int64 targets only)
