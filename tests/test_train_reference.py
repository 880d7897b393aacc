"""Training steps of the example networks against an independent numpy reference (issue 9).

tests/numpy_autograd.py differentiates float64 numpy forwards with hand-written backward rules and
updates the weights with MindSpore's documented optimizer formulas; its rules are checked here
against central finite differences. The emulator runs the same steps as a MindSpore user would:
``nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
reduction='mean')), optimizer)`` in GRAPH_MODE, from the same initial weights on the same batch.
Compared: each step's loss and, after the last step, every parameter (BatchNorm's moving statistics
included), both absolutely and relative to how far the step moved it (a parameter that barely
moves would otherwise pass whatever its update).

LeNet-5 trains with Momentum + weight decay, ResNet-18 (CIFAR stem, BatchNorm in training mode)
with Adam + weight decay, a TransformerEncoderLayer with a classification head with
AdamWeightDecay.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ascendemu.frontend as ms  # noqa: E402
from ascendemu.frontend import Tensor, nn, ops  # noqa: E402
from examples import reference as ref  # noqa: E402
from examples.networks import LeNet5, ResNet18, TransformerEncoderLayer  # noqa: E402

import numpy_autograd as na  # noqa: E402
from gradcheck import numeric_grads  # noqa: E402
from numpy_autograd import Var  # noqa: E402
from philox import ref_mask  # noqa: E402

STEPS = 3
WEIGHT_SEED, DATA_SEED = 3, 17
LOSS_RTOL = 1e-4                  # float32 device vs float64 numpy, per step
PARAM_RTOL, PARAM_ATOL = 1e-4, 1e-5
UPDATE_RTOL = 1e-2                # max |emulator - reference| <= 1% of max |reference - initial|
# Adam divides each element's step by its own gradient scale, so with a tiny epsilon float32 noise on
# a gradient that is exactly zero (the attention key bias: softmax is shift invariant) or nearly so
# would become a full-size step of random sign. An epsilon well above that noise keeps such elements
# in Adam's linear regime; it also makes where epsilon sits (MindSpore: outside the bias correction)
# visible in the result.
ADAM_EPS = 1e-4
DROPOUT_P = 0.25                  # the Transformer's dropout case: masks from the kernel's Philox oracle
Params = Mapping[str, Var]


# --------------------------------------------------------------------------- numpy forward passes

def _bn(p: Params, name: str, x: Var, updates: dict[str, np.ndarray]) -> Var:
    y, updates[f"{name}.moving_mean"], updates[f"{name}.moving_variance"] = na.batch_norm_train(
        x, p[f"{name}.gamma"], p[f"{name}.beta"], p[f"{name}.moving_mean"].value,
        p[f"{name}.moving_variance"].value)
    return y


def lenet5(p: Params, x: Var, updates: dict[str, np.ndarray]) -> Var:
    x = na.max_pool2d(na.relu(na.conv2d(x, p["conv1.weight"])), 2, 2)
    x = na.max_pool2d(na.relu(na.conv2d(x, p["conv2.weight"])), 2, 2)
    x = na.reshape(x, (x.shape[0], -1))
    x = na.relu(na.dense(x, p["fc1.weight"], p["fc1.bias"]))
    x = na.relu(na.dense(x, p["fc2.weight"], p["fc2.bias"]))
    return na.dense(x, p["fc3.weight"], p["fc3.bias"])


def basic_block(p: Params, prefix: str, x: Var, stride: int, updates: dict[str, np.ndarray]) -> Var:
    identity = x
    if f"{prefix}downsample.0.weight" in p:
        identity = _bn(p, f"{prefix}downsample.1", na.conv2d(x, p[f"{prefix}downsample.0.weight"], stride), updates)
    out = na.relu(_bn(p, f"{prefix}bn1", na.conv2d(x, p[f"{prefix}conv1.weight"], stride, pad=1), updates))
    out = _bn(p, f"{prefix}bn2", na.conv2d(out, p[f"{prefix}conv2.weight"], pad=1), updates)
    return na.relu(na.add(out, identity))


def resnet18_cifar(p: Params, x: Var, updates: dict[str, np.ndarray]) -> Var:
    x = na.relu(_bn(p, "bn1", na.conv2d(x, p["conv1.weight"], pad=1), updates))
    for stage, stride in enumerate(ref.RESNET18_STAGE_STRIDES, start=1):
        x = basic_block(p, f"layer{stage}.0.", x, stride, updates)
        x = basic_block(p, f"layer{stage}.1.", x, 1, updates)
    return na.dense(na.mean(x, (2, 3)), p["fc.weight"], p["fc.bias"])


def encoder_layer(p: Params, prefix: str, x: Var, nhead: int, p_drop: float = 0.0,
                  masks: Mapping[str, np.ndarray] | None = None) -> Var:
    """Post-norm encoder layer. Dropout sits where PyTorch's TransformerEncoderLayer has it (after the
    attention, after the FFN activation, after the FFN); ``masks`` (keep masks by site) with ``p_drop``
    is the hook for dropout p > 0, ones by default."""
    batch, seq, d_model = x.shape
    head_dim = d_model // nhead

    def drop(site: str, v: Var) -> Var:
        return na.dropout(v, np.ones(v.shape) if masks is None else masks[site], p_drop)

    def heads(name: str) -> Var:
        y = na.dense(x, p[f"{prefix}self_attn.{name}.weight"], p[f"{prefix}self_attn.{name}.bias"])
        return na.transpose(na.reshape(y, (batch, seq, nhead, head_dim)), (0, 2, 1, 3))

    q, k, v = heads("query"), heads("key"), heads("value")
    scores = na.scale(na.matmul(q, na.transpose(k, (0, 1, 3, 2))), 1.0 / np.sqrt(head_dim))
    ctx = na.transpose(na.matmul(na.softmax(scores), v), (0, 2, 1, 3))
    attn = na.dense(na.reshape(ctx, (batch, seq, d_model)), p[f"{prefix}self_attn.out.weight"],
                    p[f"{prefix}self_attn.out.bias"])
    x = na.layer_norm(na.add(x, drop("attention", attn)), p[f"{prefix}norm1.gamma"], p[f"{prefix}norm1.beta"])
    hidden = drop("activation", na.gelu(na.dense(x, p[f"{prefix}linear1.weight"], p[f"{prefix}linear1.bias"])))
    ffn = drop("ffn", na.dense(hidden, p[f"{prefix}linear2.weight"], p[f"{prefix}linear2.bias"]))
    return na.layer_norm(na.add(x, ffn), p[f"{prefix}norm2.gamma"], p[f"{prefix}norm2.beta"])


NHEAD = 4


def transformer_classifier(p: Params, x: Var, updates: dict[str, np.ndarray]) -> Var:
    return na.dense(na.mean(encoder_layer(p, "encoder.", x, NHEAD), (1,)), p["head.weight"], p["head.bias"])


class DropoutTransformerClassifier:
    """The classifier with dropout ``p_drop`` at its three sites: step t's keep masks are what the
    Dropout kernel draws at generator offset t (tests/philox.py, the kernel's independent oracle),
    from each site's seed pair, which the emulator net's Dropout layers hold."""

    SITES = {"attention": "dropout1", "activation": "dropout", "ffn": "dropout2"}

    def __init__(self, net: nn.Cell, p_drop: float):
        layer = net.encoder
        self.p_drop = p_drop
        self.seeds = {site: (getattr(layer, attr).dropout.Seed0, getattr(layer, attr).dropout.Seed1)
                      for site, attr in self.SITES.items()}
        self.step = 0

    def __call__(self, p: Params, x: Var, updates: dict[str, np.ndarray]) -> Var:
        batch, seq, d_model = x.shape
        shapes = {"attention": x.shape, "activation": (batch, seq, p["encoder.linear1.bias"].shape[0]),
                  "ffn": x.shape}
        masks = {site: ref_mask(shapes[site], 1.0 - self.p_drop, *self.seeds[site], self.step)
                 for site in self.SITES}
        self.step += 1
        hidden = encoder_layer(p, "encoder.", x, NHEAD, self.p_drop, masks)
        return na.dense(na.mean(hidden, (1,)), p["head.weight"], p["head.bias"])


# --------------------------------------------------------------------------------------- networks

class TransformerClassifier(nn.Cell):
    """TransformerEncoderLayer, mean over the sequence, Dense to class logits."""

    def __init__(self, d_model: int = 32, nhead: int = NHEAD, dim_feedforward: int = 64, num_classes: int = 5,
                 dropout: float = 0.0):
        super().__init__()
        self.encoder = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout)
        self.mean = ops.ReduceMean()
        self.head = nn.Dense(d_model, num_classes)

    def construct(self, x):
        return self.head(self.mean(self.encoder(x), 1))


@dataclass(frozen=True)
class Case:
    net: Callable[[], nn.Cell]
    input_shape: tuple[int, ...]
    classes: int
    forward: Callable[[nn.Cell], na.Forward]        # the reference forward of the built emulator net
    emulator_optimizer: Callable[[list], nn.Cell]
    reference_optimizer: Callable[[], na.Optimizer]


CASES = {
    "lenet5": Case(LeNet5, (4, 1, 32, 32), 10, lambda net: lenet5,
                   lambda ps: nn.Momentum(ps, learning_rate=0.05, momentum=0.9, weight_decay=1e-3),
                   lambda: na.Momentum(0.05, 0.9, weight_decay=1e-3)),
    "resnet18": Case(lambda: ResNet18(num_classes=10, cifar_stem=True), (2, 3, 12, 12), 10, lambda net: resnet18_cifar,
                     lambda ps: nn.Adam(ps, learning_rate=1e-4, eps=ADAM_EPS, weight_decay=1e-4),
                     lambda: na.Adam(1e-4, eps=ADAM_EPS, weight_decay=1e-4)),
    "transformer": Case(TransformerClassifier, (2, 8, 32), 5, lambda net: transformer_classifier,
                        lambda ps: nn.AdamWeightDecay(ps, learning_rate=1e-3, eps=ADAM_EPS, weight_decay=1e-2),
                        lambda: na.AdamWeightDecay(1e-3, eps=ADAM_EPS, weight_decay=1e-2)),
    "transformer_dropout": Case(lambda: TransformerClassifier(dropout=DROPOUT_P), (2, 8, 32), 5,
                                lambda net: DropoutTransformerClassifier(net, DROPOUT_P),
                                lambda ps: nn.AdamWeightDecay(ps, learning_rate=1e-3, eps=ADAM_EPS,
                                                              weight_decay=1e-2),
                                lambda: na.AdamWeightDecay(1e-3, eps=ADAM_EPS, weight_decay=1e-2)),
}


def build(name: str) -> tuple[nn.Cell, dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The network with seeded weights, its weights as float64, a seeded batch and labels."""
    case = CASES[name]
    ms.set_seed(WEIGHT_SEED)
    net = case.net()
    rng = np.random.default_rng(DATA_SEED)
    x = rng.standard_normal(case.input_shape).astype(np.float32)
    labels = rng.integers(0, case.classes, case.input_shape[0]).astype(np.int32)
    return net, {k: p.asnumpy().astype(np.float64) for k, p in net.parameters_dict().items()}, x, labels


@functools.lru_cache(maxsize=None)
def reference_run(name: str) -> tuple[dict[str, np.ndarray], list[float], dict[str, np.ndarray]]:
    """(initial weights, losses, final weights) of the numpy reference; shared by the jit levels."""
    case = CASES[name]
    net, params, x, labels = build(name)
    trainable = [p.name for p in net.trainable_params()]
    losses, final = na.train(case.forward(net), params, trainable, x, labels, case.reference_optimizer(), STEPS)
    return params, losses, final


# ------------------------------------------------------------------------------------------ fixtures


pytestmark = pytest.mark.usefixtures("restore_context")


# --------------------------------------------------------------------------- emulator vs reference

def run_emulator(name: str, level: str) -> tuple[dict[str, np.ndarray], list[float], dict[str, np.ndarray]]:
    case = CASES[name]
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": level})
    net, initial, x, labels = build(name)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), case.emulator_optimizer(net.trainable_params()))
    step.set_train()
    losses = [float(step(Tensor(x), Tensor(labels)).asnumpy()) for _ in range(STEPS)]
    return initial, losses, {k: p.asnumpy() for k, p in net.parameters_dict().items()}


def check_against_reference(name: str, level: str) -> None:
    initial, losses, final = run_emulator(name, level)
    ref_initial, ref_losses, ref_final = reference_run(name)
    for k, v in initial.items():
        np.testing.assert_array_equal(v, ref_initial[k], err_msg=f"{k}: initial weights differ")
    np.testing.assert_allclose(losses, ref_losses, rtol=LOSS_RTOL)
    assert len(set(np.round(ref_losses, 6))) == STEPS, "the loss must change from step to step"
    assert final.keys() == ref_final.keys()
    for k, want in ref_final.items():
        np.testing.assert_allclose(final[k], want, rtol=PARAM_RTOL, atol=PARAM_ATOL, err_msg=k)
        moved = np.abs(want - initial[k]).max()
        assert moved > 0, f"{k} did not change in {STEPS} steps"
        assert np.abs(final[k] - want).max() <= UPDATE_RTOL * moved, f"{k}: update differs"


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_lenet5_momentum_matches_numpy(ex, level):
    check_against_reference("lenet5", level)


def test_resnet18_batchnorm_adam_matches_numpy(ex):
    """At O2 only (LeNet-5 and the Transformer cover O0): ResNet-18 is the file's costliest compile."""
    check_against_reference("resnet18", "O2")


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_transformer_adamweightdecay_matches_numpy(ex, level):
    check_against_reference("transformer", level)


def test_transformer_with_dropout_matches_numpy_with_the_kernels_masks(ex):
    """Dropout p=0.25 at the encoder's three sites, a new mask per site and step (generator offsets
    0, 1, 2), the loss and the gradients of a step using the same one."""
    check_against_reference("transformer_dropout", "O2")


# ----------------------------------------------------------------- the reference against itself

RNG = np.random.default_rng(5)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


MASK = (RNG.random((2, 3, 4)) > 0.25).astype(np.float64)
VJP_CASES = {
    "conv_stride_pad_group": (lambda x, w: na.conv2d(x, w, stride=2, pad=1, group=2),
                              [rand(2, 4, 7, 7), rand(6, 2, 3, 3)]),
    "conv_dilation": (lambda x, w: na.conv2d(x, w, dilation=2), [rand(1, 2, 7, 6), rand(3, 2, 2, 3)]),
    "max_pool": (lambda x: na.max_pool2d(x, 2, 2), [rand(2, 3, 6, 6)]),
    "max_pool_overlapping": (lambda x: na.max_pool2d(x, 3, 2), [rand(1, 2, 7, 7)]),
    "relu": (na.relu, [rand(3, 5)]),
    "gelu": (na.gelu, [rand(3, 5)]),
    "add_broadcast": (na.add, [rand(2, 3, 4), rand(4)]),
    "scale": (lambda x: na.scale(x, 0.3), [rand(4)]),
    "dropout_mask": (lambda x: na.dropout(x, MASK, 0.25), [rand(2, 3, 4)]),
    "reshape": (lambda x: na.reshape(x, (6, 4)), [rand(2, 3, 4)]),
    "transpose": (lambda x: na.transpose(x, (2, 0, 1)), [rand(2, 3, 4)]),
    "mean": (lambda x: na.mean(x, (2, 3)), [rand(2, 3, 2, 4)]),
    "dense_3d": (na.dense, [rand(2, 3, 4), rand(5, 4), rand(5)]),
    "batch_matmul": (na.matmul, [rand(2, 3, 4, 5), rand(2, 3, 5, 2)]),
    "softmax": (na.softmax, [rand(3, 6)]),
    "layer_norm": (na.layer_norm, [rand(2, 3, 6), rand(6), rand(6)]),
    "batch_norm_train": (lambda x, g, b: na.batch_norm_train(x, g, b, np.zeros(3), np.ones(3))[0],
                         [rand(2, 3, 2, 3), rand(3), rand(3)]),
    "softmax_cross_entropy": (lambda z: na.softmax_cross_entropy(z, np.array([2, 0, 4])), [rand(3, 5)]),
}


def tape_value(op: Callable[..., Var], *arrays: np.ndarray) -> np.ndarray:
    tape = na.Tape()
    return op(*(tape.var(a) for a in arrays)).value


@pytest.mark.parametrize("name", sorted(VJP_CASES))
def test_tape_vjps_match_finite_differences(name):
    op, arrays = VJP_CASES[name]
    tape = na.Tape()
    inputs = [tape.var(a) for a in arrays]
    out = op(*inputs)
    ct = RNG.standard_normal(out.shape)
    tape.backward(out, ct)
    want = numeric_grads(lambda *xs: tape_value(op, *xs), arrays, ct, eps=1e-6)
    for i, (var, w) in enumerate(zip(inputs, want)):
        np.testing.assert_allclose(var.grad, w, rtol=1e-6, atol=1e-8, err_msg=f"input {i}")


def network_loss_grads(forward: na.Forward, params: dict[str, np.ndarray], x: np.ndarray,
                       labels: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
    tape = na.Tape()
    vs = {k: tape.var(v) for k, v in params.items()}
    loss = na.softmax_cross_entropy(forward(vs, tape.var(x), {}), labels)
    tape.backward(loss)
    return float(loss.value), {k: v.grad for k, v in vs.items()}


def test_tape_composes_whole_networks():
    """Fan-out (residual adds), BatchNorm in training mode, attention: the gradient of a small block
    and a small encoder layer with respect to every weight, against finite differences of the loss."""
    block = {"conv1.weight": rand(4, 2, 3, 3), "bn1.gamma": rand(4), "bn1.beta": rand(4),
             "conv2.weight": rand(4, 4, 3, 3), "bn2.gamma": rand(4), "bn2.beta": rand(4),
             "downsample.0.weight": rand(4, 2, 1, 1), "downsample.1.gamma": rand(4),
             "downsample.1.beta": rand(4), "fc.weight": rand(3, 4), "fc.bias": rand(3)}
    stats = {f"{bn}.{s}": np.full(4, 0.5) for bn in ("bn1", "bn2", "downsample.1")
             for s in ("moving_mean", "moving_variance")}

    def block_net(p: Params, x: Var, updates: dict) -> Var:
        return na.dense(na.mean(basic_block(p, "", x, 2, updates), (2, 3)), p["fc.weight"], p["fc.bias"])

    d, ff = 8, 16
    layer = {f"encoder.self_attn.{n}.{k}": rand(d, d) if k == "weight" else rand(d)
             for n in ("query", "key", "value", "out") for k in ("weight", "bias")}
    layer.update({"encoder.norm1.gamma": rand(d), "encoder.norm1.beta": rand(d), "encoder.norm2.gamma": rand(d),
                  "encoder.norm2.beta": rand(d), "encoder.linear1.weight": rand(ff, d),
                  "encoder.linear1.bias": rand(ff), "encoder.linear2.weight": rand(d, ff),
                  "encoder.linear2.bias": rand(d), "head.weight": rand(3, d), "head.bias": rand(3)})

    for forward, params, x, frozen in ((block_net, block, rand(2, 2, 5, 5), stats),
                                       (transformer_classifier, layer, rand(2, 3, d), {})):
        labels = np.array([2, 0])
        names = sorted(params)

        def loss_of(*arrays: np.ndarray) -> np.ndarray:
            return np.asarray(network_loss_grads(forward, {**dict(zip(names, arrays)), **frozen}, x, labels)[0])

        _, grads = network_loss_grads(forward, {**params, **frozen}, x, labels)
        want = numeric_grads(loss_of, [params[n] for n in names], np.array(1.0), eps=1e-6)
        for n, w in zip(names, want):
            np.testing.assert_allclose(grads[n], w, rtol=1e-5, atol=1e-7, err_msg=n)


def tape_forward(name: str) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """(weights, input, logits of the tape's forward) for case ``name``."""
    net, params, x, _ = build(name)
    tape = na.Tape()
    forward = CASES[name].forward(net)
    return params, x, forward({k: tape.var(v) for k, v in params.items()}, tape.var(x), {}).value


def test_tape_forwards_match_the_inference_references():
    """The training forwards compute the networks of examples/reference.py (written independently)."""
    params, x, logits = tape_forward("lenet5")
    np.testing.assert_allclose(logits, ref.lenet5(params, x), rtol=1e-12, atol=1e-12)
    params, x, logits = tape_forward("transformer")
    encoder = {k.removeprefix("encoder."): v for k, v in params.items() if k.startswith("encoder.")}
    hidden = ref.transformer_encoder_layer(encoder, x, nhead=NHEAD).mean(axis=1)
    np.testing.assert_allclose(logits, ref.dense(hidden, params["head.weight"], params["head.bias"]),
                               rtol=1e-12, atol=1e-12)


def test_reference_optimizers_follow_the_documented_first_step():
    """Hand-derived first steps: Adam's bias correction reduces to lr g / (|g| + eps / sqrt(1 - b2));
    AdamWeightDecay has none; Momentum's first velocity is the decayed gradient; gamma and beta are
    never decayed."""
    p = {"w": np.array([0.5, -2.0]), "bn.gamma": np.array([1.5]), "ln.beta": np.array([0.25])}
    g = {"w": np.array([0.1, -3.0]), "bn.gamma": np.array([0.2]), "ln.beta": np.array([-0.4])}
    lr, wd, b2 = 0.1, 0.01, 0.999
    adam = dict(p)
    na.Adam(lr, weight_decay=wd, eps=1e-3).step(adam, g)
    for k in p:
        gk = g[k] + (wd * p[k] if k == "w" else 0.0)
        np.testing.assert_allclose(adam[k], p[k] - lr * gk / (np.abs(gk) + 1e-3 / np.sqrt(1 - b2)), rtol=1e-12)
    adamw = dict(p)
    na.AdamWeightDecay(lr, weight_decay=wd, eps=1e-3).step(adamw, g)
    for k in p:
        step = 0.1 * g[k] / (np.sqrt(1 - b2) * np.abs(g[k]) + 1e-3) + (wd * p[k] if k == "w" else 0.0)
        np.testing.assert_allclose(adamw[k], p[k] - lr * step, rtol=1e-12)
    mom, opt = dict(p), na.Momentum(lr, 0.9, weight_decay=wd)
    opt.step(mom, g)
    opt.step(mom, g)
    for k in p:
        v1 = g[k] + (wd * p[k] if k == "w" else 0.0)
        p1 = p[k] - lr * v1
        v2 = 0.9 * v1 + g[k] + (wd * p1 if k == "w" else 0.0)
        np.testing.assert_allclose(mom[k], p1 - lr * v2, rtol=1e-12)


@pytest.mark.parametrize("name", ["lenet5", "transformer_dropout"])
def test_o0_and_o2_agree_bitwise(ex, name):
    """No fusion at O2 reorders these networks' arithmetic (fused programs compute in the same float32
    steps as the single kernels), so one kernel per op and the sunk graph give the same bits."""
    (_, losses0, final0), (_, losses2, final2) = (run_emulator(name, level) for level in ("O0", "O2"))
    assert losses0 == losses2
    for k in final0:
        np.testing.assert_array_equal(final0[k], final2[k], err_msg=k)
