"""Dropout: the Philox-4x32-10 mask kernel against a numpy Philox (itself checked against the
Random123 known-answer vectors), its statistics, its determinism across runs, steps and jit levels,
MindSpore's front-end forms (nn.Dropout, ops.Dropout, ops.dropout) and their argument checks, the
backward rule against finite differences, and a TrainOneStepCell step against numpy using the same
masks."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.frontend.common.seed import DEFAULT_GRAPH_SEED, MAXINT32, OP_SEED_STEP
from ascendemu.graph.plan import compile_graph
from ascendemu.kernels.library import infer_outputs
from ascendemu.kernels.signature import OpSignature

from gradcheck import assert_grads_close, autodiff_grads, numeric_grads
from philox import philox, ref_mask

SHAPE, KEEP = (8, 32), 0.6                 # one small Dropout kernel shared by most tests
RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def restore_context():
    saved = {k: ms.get_context(k) for k in ("mode", "jit_config")}
    yield
    ms.set_context(**saved)
    ms.set_seed(0)


def test_numpy_philox_matches_random123_known_answers():
    """The oracle itself, against the known-answer vectors published with Random123."""
    cases = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
             ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
              (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for counter, key, want in cases:
        assert tuple(int(w) for w in philox([np.uint64(v) for v in counter], key)) == want


# ------------------------------------------------------------------------------------------ kernel

def run(ex, x: np.ndarray, state, keep: float) -> list[np.ndarray]:
    sig = OpSignature.make("Dropout", [(x.shape, str(x.dtype)), ((3,), "int32")], keep_prob=keep)
    return ex.run_op(sig, [x, np.asarray(state, np.int32)], infer_outputs(sig))


def test_kernel_mask_is_philox_bitwise_with_binomial_statistics(ex):
    """262,144 elements over 4 blocks: mask and output bit-identical to numpy, the kept fraction
    within 5 sigma of keep_prob; the mask depends on the element index only, so a 1-block kernel
    over a prefix draws the same prefix (no dependence on blockDim or tiling)."""
    keep, seeds, offset = 0.3, (-5, 2**31 - 1), 9            # negative seed words are their 32 bits
    x = RNG.standard_normal((64, 4096)).astype(np.float32)
    y, mask = run(ex, x, seeds + (offset,), keep)
    want = ref_mask(x.shape, keep, *seeds, offset)
    np.testing.assert_array_equal(mask, want)
    np.testing.assert_array_equal(y, x * want * np.float32(1 / keep))
    n = x.size
    assert abs(mask.sum() - n * keep) < 5 * np.sqrt(n * keep * (1 - keep))
    _, head = run(ex, x[:1, :1000].copy(), seeds + (offset,), keep)
    np.testing.assert_array_equal(head, want[:1, :1000])


def test_masks_differ_by_offset_and_seed(ex):
    x = np.ones(SHAPE, np.float32)
    masks = [run(ex, x, state, KEEP)[1] for state in ((1, 2, 0), (1, 2, 1), (1, 3, 0))]
    for state, m in zip(((1, 2, 0), (1, 2, 1), (1, 3, 0)), masks):
        np.testing.assert_array_equal(m, ref_mask(SHAPE, KEEP, *state))
    assert (masks[0] != masks[1]).any() and (masks[0] != masks[2]).any()


def test_float16_scales_in_float32_registers(ex):
    x = RNG.standard_normal(SHAPE).astype(np.float16)
    y, mask = run(ex, x, (4, 4, 4), KEEP)
    assert mask.dtype == np.float16
    np.testing.assert_array_equal(mask, ref_mask(SHAPE, KEEP, 4, 4, 4))
    want = (x.astype(np.float32) * mask.astype(np.float32) * np.float32(1 / KEEP)).astype(np.float16)
    np.testing.assert_array_equal(y, want)


# -------------------------------------------------------------------------------------- backward

def test_gradient_matches_finite_differences_and_the_analytic_rule(ex):
    """With the mask fixed by the state, dropout is linear in x: dx = dout * mask / keep_prob."""
    x, state = RNG.standard_normal(SHAPE).astype(np.float32), np.array([6, 7, 3], np.int32)
    mask = ref_mask(SHAPE, KEEP, 6, 7, 3)
    cot = RNG.standard_normal(SHAPE).astype(np.float32)
    out, dx, dstate = autodiff_grads(ex, "Dropout", [x, state], {"keep_prob": KEEP}, cot)
    np.testing.assert_array_equal(out, x * mask * np.float32(1 / KEEP))
    np.testing.assert_array_equal(dx, cot * mask * np.float32(1 / KEEP))
    assert not dstate.any()
    want = numeric_grads(lambda a, s: a * mask / KEEP, [x, state], cot, wrt=[0])
    assert_grads_close([dx], want[:1])


# ------------------------------------------------------------------------------------- front end

class MaskNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.drop = ops.Dropout(keep_prob=KEEP, Seed0=21, Seed1=22)

    def construct(self, x):
        return self.drop(x)


@pytest.mark.parametrize("mode", ["pynative", "O0", "O1", "O2"])
def test_primitive_masks_step_by_step_are_the_same_every_run_and_level(ex, mode):
    """ops.Dropout returns (output, mask); each call advances the generator: masks differ step to
    step, are Philox of offsets 0, 1, 2 at every jit level and in PyNative, and repeat run to run."""
    if mode == "pynative":
        ms.set_context(mode=ms.PYNATIVE_MODE)
    else:
        ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": mode})
    x = RNG.standard_normal(SHAPE).astype(np.float32)
    for _ in range(2):                        # two runs from a fresh primitive
        net = MaskNet()
        masks = []
        for step in range(3):
            out, mask = net(Tensor(x))
            masks.append(mask.asnumpy())
            np.testing.assert_array_equal(mask.asnumpy(), ref_mask(SHAPE, KEEP, 21, 22, step))
            np.testing.assert_array_equal(out.asnumpy(), x * masks[-1] * np.float32(1 / KEEP))
        assert (masks[0] != masks[1]).any() and (masks[1] != masks[2]).any()
        assert net.drop.state.asnumpy().tolist() == [21, 22, 3]


def test_nn_dropout_identity_in_eval_mode_and_when_nothing_drops(ex):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    x = Tensor(RNG.standard_normal(SHAPE).astype(np.float32))
    fresh = nn.Dropout(p=0.5)
    assert not fresh.training and fresh(x) is x
    for cell in (nn.Dropout(p=0), nn.Dropout(keep_prob=1.0), nn.Dropout(p=0.0)):
        assert cell.set_train()(x) is x
    assert ops.dropout(x, p=0.5, training=False) is x
    assert nn.Dropout(p=0.5).set_train().set_train(False)(x) is x
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_array_equal(nn.Dropout(p=0.5)(x).asnumpy(), x.asnumpy())


def test_nn_dropout_training_scales_by_one_over_one_minus_p(ex):
    """p wins over keep_prob; kept values scaled by 1/(1-p) (the mask read back from the state)."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(5)
    cell = nn.Dropout(keep_prob=0.9, p=1 - KEEP).set_train()
    assert cell.dropout.keep_prob == pytest.approx(KEEP)
    x = RNG.standard_normal(SHAPE).astype(np.float32)
    y = cell(Tensor(x)).asnumpy()
    mask = ref_mask(SHAPE, KEEP, 5, 0, 0)
    np.testing.assert_array_equal(y, x * mask * np.float32(1 / KEEP))
    # as real MindSpore 2.10 prints them
    assert repr(cell) == f"Dropout(p={1 - KEEP})" and repr(nn.Dropout(0.8)) == "Dropout(keep_prob=0.8)"


def test_seed_pairs_follow_mindsporess_graph_seed():
    """Each random op takes (global seed, op seed); the op seed advances per op and set_seed restarts
    it, so two layers draw different masks and a rerun the same ones; global seed 0 stands for
    MindSpore's default graph seed."""
    ms.set_seed(7)
    pairs = [nn.Dropout(p=0.1).dropout for _ in range(2)] + [ops.Dropout()]
    assert [(d.Seed0, d.Seed1) for d in pairs] == [(7, 0), (7, OP_SEED_STEP % MAXINT32),
                                                   (7, 2 * OP_SEED_STEP % MAXINT32)]
    assert (ops.Dropout(Seed0=3, Seed1=4).Seed0, ms.get_seed()) == (3, 7)
    ms.set_seed(7)
    assert (nn.Dropout(p=0.1).dropout.Seed1, ops.Dropout(0.5, 9, 0).Seed1) == (0, 0)
    ms.set_seed(0)
    assert nn.Dropout(p=0.1).dropout.Seed0 == DEFAULT_GRAPH_SEED


@pytest.mark.parametrize("make", [
    lambda: nn.Dropout(p=1), lambda: nn.Dropout(p=-0.1), lambda: nn.Dropout(p="0.5"),
    lambda: nn.Dropout(keep_prob=0.0), lambda: nn.Dropout(keep_prob=1.5), lambda: nn.Dropout(keep_prob=1),
    lambda: ops.Dropout(keep_prob=0), lambda: ops.Dropout(keep_prob=True), lambda: ops.Dropout(Seed0=1.5),
    lambda: ops.dropout(Tensor(np.ones(3, np.float32)), p=1.0),
    lambda: ops.dropout(Tensor(np.ones(3, np.float32)), p=0.5, training="yes"),
    lambda: ops.Dropout()(Tensor(np.ones(3, np.int32))),
    lambda: ops.Dropout()(Tensor(np.float32(1.0))),
])
def test_bad_arguments_raise_typed_errors(make):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(InvalidParamError) as err:
        make()
    assert err.value.code == InvalidParamError.code


# -------------------------------------------------------------------------------------- training

class Net(nn.Cell):
    """Dense then dropout: the loss reaches the weights through the mask."""

    def __init__(self, functional: bool = False):
        super().__init__()
        self.fc = nn.Dense(6, 4)
        self.drop, self.functional = nn.Dropout(p=1 - KEEP), functional

    def construct(self, x):
        h = self.fc(x)
        return ops.dropout(h, 1 - KEEP, self.training) if self.functional else self.drop(h)


def train_step(net: Net) -> nn.TrainOneStepCell:
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    return nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt).set_train()


@pytest.mark.parametrize("functional", [False, True])
def test_gradient_forward_replays_the_mask_and_cse_merges_it(functional):
    """TrainOneStepCell computes the forward twice (loss, then the gradient's own); both read the
    generator as it was when the graph began, so they draw one mask, CSE leaves one Dropout kernel
    and the offset advances once per step."""
    ms.set_seed(1)
    net = Net(functional)
    x, y = Tensor(np.ones((5, 6), np.float32)), Tensor(np.ones((5, 4), np.float32))
    graph, _ = ms.capture(train_step(net), x, y)
    drops = [n for n in graph.nodes if n.op == "Dropout"]
    assert len(drops) == 2 and drops[0].inputs[1] == drops[1].inputs[1]
    state = drops[0].inputs[1]
    assert graph.updates[state] == next(n for n in graph.nodes if n.op == "Add" and state in n.inputs).outputs[0]
    kernels = [k.signature.op for k in compile_graph(graph, "O0").kernels]
    assert kernels.count("Dropout") == 1


def reference_training(x, y, w, b, masks, lr=0.1):
    """Dense -> dropout (given masks, float32 scale) -> MSE, plain SGD, in float64."""
    scale = float(np.float32(1 / KEEP))
    w, b = np.asarray(w, np.float64), np.asarray(b, np.float64)
    losses = []
    for mask in masks:
        out = (x @ w.T + b) * mask * scale
        losses.append(np.mean((out - y) ** 2))
        gh = 2 * (out - y) / out.size * mask * scale
        w, b = w - lr * gh.T @ x, b - lr * gh.sum(0)
    return losses, (w, b)


def test_train_one_step_with_dropout_matches_numpy_and_is_bitwise_across_levels(ex):
    """Three SGD steps of Dense-Dropout-MSE at O0 and O2: losses and weights match numpy run with the
    masks Philox draws for offsets 0, 1, 2 (so every step's mask was new and the loss and gradients
    used the same one), and the levels agree bit for bit (O2 adds only the static plan to O1)."""
    x = RNG.standard_normal((5, 6)).astype(np.float32)
    y = RNG.standard_normal((5, 4)).astype(np.float32)
    results = {}
    for level in ("O0", "O2"):
        ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": level})
        ms.set_seed(4)
        net = Net()
        seeds = net.drop.dropout.Seed0, net.drop.dropout.Seed1
        start = net.fc.weight.asnumpy().copy(), net.fc.bias.asnumpy().copy()
        step = train_step(net)
        losses = [float(step(Tensor(x), Tensor(y)).asnumpy()) for _ in range(3)]
        weights = net.fc.weight.asnumpy(), net.fc.bias.asnumpy()
        masks = [ref_mask((5, 4), KEEP, *seeds, t) for t in range(3)]
        assert not (masks[0] == masks[1]).all() and not (masks[1] == masks[2]).all()
        want_losses, want_weights = reference_training(x, y, *start, masks)
        np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
        for got, want in zip(weights, want_weights):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert net.drop.dropout.state.asnumpy().tolist() == [*seeds, 3]
        results[level] = (losses, weights)
    assert results["O2"][0] == results["O0"][0]
    for a, b in zip(results["O2"][1], results["O0"][1]):
        np.testing.assert_array_equal(a, b)
