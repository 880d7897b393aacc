"""The losses of nn.loss and their ops (functions and primitives) against float64 numpy formulas
(MindSpore's, from its ops/function/nn_func.py and nn/loss/loss.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from gradcheck import numeric_grads

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops

RNG = np.random.RandomState(5)
X = RNG.randn(4, 3)
Y = RNG.randn(4, 3)
P = 1 / (1 + np.exp(-X))                        # probabilities
B = (RNG.rand(4, 3) > 0.5).astype(np.float64)   # binary labels
S = np.where(B > 0, 1.0, -1.0)                  # +-1 labels
C = np.array([0, 2, 1, 2])                      # class indices
V = RNG.rand(4, 3) + 0.5
T = lambda a: Tensor(np.asarray(a, np.float32))                      # noqa: E731
Ti = lambda a: Tensor(np.asarray(a, np.int32))                       # noqa: E731


def _cos(a, b):
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def _multi_margin(x, c, margin=1.0):
    picked = x[np.arange(len(c)), c][:, None]
    gap = np.maximum(margin - picked + x, 0)
    gap[np.arange(len(c)), c] = 0
    return (gap.sum(1) / x.shape[1]).mean()


CASES = {
    "binary_cross_entropy": (lambda: ops.binary_cross_entropy(T(P), T(B)),
                             -(B * np.log(P) + (1 - B) * np.log(1 - P)).mean()),
    "BCELoss-sum": (lambda: nn.BCELoss(reduction="sum")(T(P), T(B)), -(B * np.log(P) + (1 - B) * np.log(1 - P)).sum()),
    "kl_div": (lambda: ops.kl_div(T(X), T(V)), (V * (np.log(V) - X)).mean()),
    "KLDivLoss-batchmean": (lambda: nn.KLDivLoss("batchmean")(T(X), T(V)), (V * (np.log(V) - X)).sum() / 4),
    "soft_margin_loss": (lambda: ops.soft_margin_loss(T(X), T(S)), np.log1p(np.exp(-S * X)).mean()),
    "huber_loss": (lambda: nn.HuberLoss(delta=0.5)(T(X), T(Y)),
                   np.where(np.abs(X - Y) < 0.5, 0.5 * (X - Y) ** 2, 0.5 * (np.abs(X - Y) - 0.25)).mean()),
    "margin_ranking_loss": (lambda: nn.MarginRankingLoss(0.2)(T(X), T(Y), T(S)),
                            np.maximum(-S * (X - Y) + 0.2, 0).mean()),
    "cosine_embedding_loss": (lambda: nn.CosineEmbeddingLoss(0.1)(T(X), T(Y), T([1, -1, 1, -1])),
                              np.where([1, 0, 1, 0], 1 - _cos(X, Y), np.maximum(_cos(X, Y) - 0.1, 0)).mean()),
    "multilabel_soft_margin_loss": (lambda: nn.MultiLabelSoftMarginLoss()(T(X), T(B)),
                                    (B * np.log1p(np.exp(-X)) + (1 - B) * np.log1p(np.exp(X))).mean(1).mean()),
    "multi_margin_loss": (lambda: nn.MultiMarginLoss()(T(X), Ti(C)), _multi_margin(X, C)),
    "triplet_margin_loss": (lambda: nn.TripletMarginLoss()(T(X), T(Y), T(V)),
                            np.maximum(np.linalg.norm(X - Y + 1e-6, axis=1) - np.linalg.norm(X - V + 1e-6, axis=1)
                                       + 1.0, 0).mean()),
    "gaussian_nll_loss": (lambda: nn.GaussianNLLLoss()(T(X), T(Y), T(V)),
                          (0.5 * (np.log(V) + (X - Y) ** 2 / V)).mean()),
    "hinge_embedding_loss": (lambda: nn.HingeEmbeddingLoss(0.5)(T(X), T(S)),
                             np.where(S > 0, X, np.maximum(0.5 - X, 0)).mean()),
    "PoissonNLLLoss": (lambda: nn.PoissonNLLLoss()(T(X), T(V)), (np.exp(X) - V * X).mean()),
    "RMSELoss": (lambda: nn.RMSELoss()(T(X), T(Y)), np.sqrt(((X - Y) ** 2).mean())),
    "MAELoss": (lambda: nn.MAELoss()(T(X), T(Y)), np.abs(X - Y).mean()),
    "DiceLoss": (lambda: nn.DiceLoss()(T(P), T(B)), 1 - 2 * (P * B).sum() / ((P * P).sum() + (B * B).sum() + 1e-5)),
    "L2Loss": (lambda: ops.L2Loss()(T(X)), (X * X).sum() / 2),
    "SparseSoftmaxCrossEntropyWithLogits": (
        lambda: ops.SparseSoftmaxCrossEntropyWithLogits()(T(X), Ti(C)),
        -(X[np.arange(4), C] - np.log(np.exp(X).sum(1))).mean()),
    "NLLLoss": (lambda: ops.NLLLoss()(T(X), Ti(C), T([1.0, 2.0, 0.5]))[0],
                -(X[np.arange(4), C] * np.array([1.0, 2.0, 0.5])[C]).sum() / np.array([1.0, 2.0, 0.5])[C].sum()),
    "FocalLoss": (lambda: nn.FocalLoss()(T(X), T(np.eye(3)[C])),
                  (-(1 - np.exp(X - np.log(np.exp(X).sum(1, keepdims=True)))) ** 2 * np.eye(3)[C]
                   * (X - np.log(np.exp(X).sum(1, keepdims=True)))).mean(1).mean()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_matches_numpy(ex, name):
    run, want = CASES[name]
    np.testing.assert_allclose(run().asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_losses_in_graph_mode(ex, restore_context):
    """A loss cell traced into a graph gives the eager numbers, and its gradient flows to the logits."""
    ms.set_context(mode=ms.GRAPH_MODE)
    loss = nn.SoftMarginLoss()
    np.testing.assert_allclose(loss(T(X), T(S)).asnumpy(), np.log1p(np.exp(-S * X)).mean(), rtol=1e-5)
    grad = ms.grad(nn.BCELoss())(T(P), T(B))
    np.testing.assert_allclose(grad.asnumpy(), (P - B) / (P * (1 - P)) / P.size, rtol=1e-4)


def test_losses_refuse_bad_arguments(ex):
    with pytest.raises(InvalidParamError, match="reduction"):
        ops.binary_cross_entropy(T(P), T(B), reduction="avg")
    with pytest.raises(InvalidParamError, match="delta"):
        ops.huber_loss(T(X), T(Y), delta=0)
    with pytest.raises(InvalidParamError, match="margin"):
        ops.cosine_embedding_loss(T(X), T(Y), T(S[:, 0]), margin=2.0)
    with pytest.raises(InvalidParamError, match="p="):
        ops.multi_margin_loss(T(X), Ti(C), p=3)


# ---- MultilabelMarginLoss, TripletMarginWithDistanceLoss, L1LossExt, CTC ----
ML_TARGET = np.array([[1, 2, -1], [0, -1, 2], [2, 1, 0], [-1, 0, 1]])     # each list ends at its first -1


def _multilabel_margin(x, target):
    """Per sample sum over target j (before the first -1) and non-target i of max(0, 1 - x_j + x_i) / C."""
    out = []
    for row, t in zip(x, target):
        ends = list(t).index(-1) if -1 in list(t) else len(t)
        targets = set(t[:ends])
        out.append(sum(max(0.0, 1 - row[j] + row[i]) for j in targets for i in range(len(row)) if i not in targets)
                   / len(row))
    return np.array(out)


def _pairwise(a, b):
    return np.linalg.norm(np.abs(a - b), axis=1)


MORE_CASES = {
    "multilabel_margin_loss": (lambda: ops.multilabel_margin_loss(T(X), Ti(ML_TARGET)),
                               _multilabel_margin(X, ML_TARGET).mean()),
    "MultilabelMarginLoss-none": (lambda: nn.MultilabelMarginLoss("none")(T(X), Ti(ML_TARGET)),
                                  _multilabel_margin(X, ML_TARGET)),
    "MultilabelMarginLoss-1d-sum": (lambda: ops.MultilabelMarginLoss("sum")(T(X[2]), Ti(ML_TARGET[2]))[0],
                                    _multilabel_margin(X[2:3], ML_TARGET[2:3]).sum()),
    "MultilabelMarginLoss-is_target": (lambda: ops.MultilabelMarginLoss()(T(X), Ti(ML_TARGET))[1],
                                       np.array([[0, 1, 1], [1, 0, 0], [1, 1, 1], [0, 0, 0]])),
    "TripletMarginWithDistanceLoss": (lambda: nn.TripletMarginWithDistanceLoss()(T(X), T(Y), T(V)),
                                      np.maximum(_pairwise(X, Y) - _pairwise(X, V) + 1.0, 0).mean()),
    "TripletMarginWithDistanceLoss-swap": (
        lambda: nn.TripletMarginWithDistanceLoss(lambda a, b: ops.sum(ops.abs(a - b), 1), True, "none", 0.5)(
            T(X), T(Y), T(V)),
        np.maximum(np.abs(X - Y).sum(1) - np.minimum(np.abs(X - V).sum(1), np.abs(Y - V).sum(1)) + 0.5, 0)),
    "L1LossExt-sum": (lambda: nn.L1LossExt("sum")(T(X), T(Y)), np.abs(X - Y).sum()),
}


@pytest.mark.parametrize("name", sorted(MORE_CASES))
def test_more_losses_match_numpy(ex, name):
    run, want = MORE_CASES[name]
    np.testing.assert_allclose(run().asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_multilabel_margin_loss_gradient(ex):
    """The composite's gradient against central differences of the float64 formula."""
    x = X.copy()
    grad = ms.grad(lambda v: ops.multilabel_margin_loss(v, Ti(ML_TARGET), "sum"))(T(x)).asnumpy()
    numeric = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += 1e-5
        down[idx] -= 1e-5
        numeric[idx] = (_multilabel_margin(up, ML_TARGET).sum() - _multilabel_margin(down, ML_TARGET).sum()) / 2e-5
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-4)


def _record_ctc():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "tools" / "record_ctc_loss.py"
    spec = importlib.util.spec_from_file_location("record_ctc_loss", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, json.loads((path.parents[1] / "tests" / "fixtures" / "ctc_loss.json").read_text())


@pytest.mark.parametrize("name", ["repeats", "blank2-impossible"])
def test_ctc_loss_matches_mindspore(ex, name):
    """ops.ctc_loss against real MindSpore 2.10 (tools/record_ctc_loss.py): per-sample, summed and mean
    losses, log_alpha, and the gradient of the summed loss (MindSpore's backward: exp(lp) - posterior).
    Deviation: with zero_infinity an infinite loss is 0, as documented (MindSpore 2.10's CPU kernel
    still returns inf in the forward, while its gradient is zero, as here)."""
    record, fixture = _record_ctc()
    case = record.cases()[name]
    ours, want = record.run_case(ms, case), fixture["cases"][name]
    none = np.array(want["none"])
    if case["zero_infinity"]:
        none = np.where(np.isinf(none), 0.0, none)
        want = dict(want, sum=none.sum(), mean=(none / np.maximum(case["target_lengths"], 1)).mean())
    np.testing.assert_allclose(ours["none"], none, rtol=2e-6)
    np.testing.assert_allclose(ours["sum"], want["sum"], rtol=2e-6)
    np.testing.assert_allclose(ours["mean"], want["mean"], rtol=2e-6)
    np.testing.assert_allclose(ours["log_alpha"], want["log_alpha"], rtol=2e-6, atol=1e-5)
    np.testing.assert_allclose(ours["grad"], want["grad"], rtol=1e-5, atol=2e-6)


def test_ctc_loss_cell_graph_mode(ex, restore_context):
    """nn.CTCLoss on (T, C) log_probs in GRAPH_MODE (recorded from MindSpore), and the loss of a
    log_softmax whose gradient wrt the logits matches central differences of a float64 CTC."""
    ms.set_context(mode=ms.GRAPH_MODE)
    record, fixture = _record_ctc()
    np.testing.assert_allclose(record.run_cell(ms), fixture["cell_2d"], rtol=2e-6)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.loss = nn.CTCLoss(blank=0, reduction="sum")

        def construct(self, logits):
            lp = ops.log_softmax(logits, 2)
            return self.loss(lp, Ti([[1, 2], [2, 2]]), Ti([4, 3]), Ti([2, 2]))

    logits = RNG.randn(4, 2, 3)
    grad = ms.grad(Net())(T(logits)).asnumpy()

    def nll(z):
        lp = z - np.log(np.exp(z).sum(2, keepdims=True))
        return sum(_ctc_nll(lp[:, n], lab, length) for n, (lab, length) in enumerate([([1, 2], 4), ([2, 2], 3)]))

    (numeric,) = numeric_grads(nll, [logits], np.float64(1.0), eps=1e-6)
    np.testing.assert_allclose(grad, numeric, rtol=1e-3, atol=1e-5)


def _ctc_nll(lp, labels, length, blank=0):
    """-log p(labels) by the alpha recursion in probability space (float64, a second oracle)."""
    ext = [blank]
    for lab in labels:
        ext += [lab, blank]
    alpha = np.zeros(len(ext))
    alpha[0], alpha[1] = np.exp(lp[0, blank]), np.exp(lp[0, ext[1]])
    for t in range(1, length):
        prev = alpha.copy()
        for s in range(len(ext)):
            total = prev[s] + (prev[s - 1] if s > 0 else 0.0)
            if s > 1 and ext[s] != blank and ext[s] != ext[s - 2]:
                total += prev[s - 2]
            alpha[s] = total * np.exp(lp[t, ext[s]])
    return -np.log(alpha[-1] + alpha[-2])


def test_ctc_and_multilabel_refuse_as_mindspore(ex):
    lp = T(np.log(np.full((3, 1, 3), 1 / 3)))
    with pytest.raises(ValueError, match="reduction"):
        ops.ctc_loss(lp, Ti([[1]]), Ti([3]), Ti([1]), reduction="avg")
    with pytest.raises(TypeError, match="blank"):
        ops.ctc_loss(lp, Ti([[1]]), Ti([3]), Ti([1]), blank=1.0)
    with pytest.raises(ValueError, match="first dimension"):
        nn.CTCLoss()(T(np.zeros((3, 3))), Ti([[1], [1]]), Ti([3]), Ti([1]))
    with pytest.raises(TypeError, match="int32"):
        ops.multilabel_margin_loss(T(X), T(ML_TARGET))
    with pytest.raises(TypeError, match="margin"):
        nn.TripletMarginWithDistanceLoss(margin=1)


def test_ctc_loss_primitive_matches_mindspore(ex):
    """ops.CTCLoss (logits, sparse labels, blank = last class): loss and its gradient output against real
    MindSpore; the autodiff gradient of the summed loss equals that gradient output."""
    record, fixture = _record_ctc()
    ours, want = record.run_primitive(ms), fixture["primitive"]
    np.testing.assert_allclose(ours["loss"], want["loss"], rtol=2e-6)
    np.testing.assert_allclose(ours["gradient"], want["gradient"], rtol=1e-5, atol=2e-6)
    c = record.PRIMITIVE_CASE
    x = np.random.RandomState(23).randn(5, 2, 4).astype(np.float32)
    args = (Tensor(np.array(c["labels_indices"], np.int64)), Ti(c["labels_values"]), Ti(c["sequence_length"]))
    grad = ms.grad(lambda v: ops.CTCLoss()(v, *args)[0].sum())(T(x))
    np.testing.assert_allclose(grad.asnumpy(), want["gradient"], rtol=1e-5, atol=2e-6)
    with pytest.raises(InvalidParamError, match="preprocess_collapse_repeated"):
        ops.CTCLoss(preprocess_collapse_repeated=True)


def test_ctc_loss_without_merging_repeats_sums_the_unmerged_paths(ex):
    """ctc_merge_repeated=False (TensorFlow's simplified CTC): a path means its labels with the blanks
    dropped and nothing merged, so [0, 0] is read from "0 0" too. Oracle: every path of T = 4 steps over
    3 classes (blank 2) enumerated, the loss's gradient output against finite differences of it."""
    import itertools

    x = RNG.randn(4, 1, 3)
    labels = [0, 0]

    def nll(z):
        p = np.exp(z[:, 0] - np.log(np.exp(z[:, 0]).sum(1, keepdims=True)))
        total = sum(np.prod([p[t, k] for t, k in enumerate(path)]) for path in itertools.product(range(3), repeat=4)
                    if [k for k in path if k != 2] == labels)
        return -np.log(total)

    loss, gradient = ops.CTCLoss(ctc_merge_repeated=False)(T(x), Tensor(np.array([[0, 0], [0, 1]], np.int64)),
                                                            Ti(labels), Ti([4]))
    np.testing.assert_allclose(loss.asnumpy(), [nll(x)], rtol=1e-5)
    (numeric,) = numeric_grads(nll, [x], np.float64(1.0), eps=1e-6)
    np.testing.assert_allclose(gradient.asnumpy(), numeric, rtol=1e-3, atol=1e-5)
