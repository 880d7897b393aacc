"""Control flow on tensors in GRAPH_MODE (frontend/common/parse.py rewrites, control_flow.py runs).

Oracles: numpy forwards and hand-derived gradients of the same Python programs, central finite
differences (tests/gradcheck.py) for gradients through a tensor ``if`` and an unrolled RNN, and
MindSpore's semantics that a skipped optimizer step leaves every parameter bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops
from ascendemu.frontend.amp import DynamicLossScaler, all_finite
from ascendemu.frontend.common import parse
from ascendemu.frontend.common.phase import PHASE_CACHE
from ascendemu.graph.capture import GraphCaptureError

from gradcheck import numeric_grads

LEVELS = ("O0", "O2")


@pytest.fixture(autouse=True)
def graph_mode(ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    yield


def _level(level: str) -> None:
    ms.set_context(jit_config={"jit_level": level})


# ------------------------------------------------------------------ (d) if/elif/else with early return

class Piecewise(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([1.0, -2.0, 0.5], np.float32)), name="w")

    def construct(self, x, limit=3.0):
        s = (x * self.w).sum()
        if s > limit:
            return x * 2
        elif s < -limit and not (x.max() > 5):
            y = x - self.w
            return y * y
        else:
            x = x + 10
        z = x * 3
        return z


def piecewise_ref(x, w, limit=3.0):
    s = float((x * w).sum())
    if s > limit:
        return x * 2
    if s < -limit and not x.max() > 5:
        return (x - w) ** 2
    return (x + 10) * 3


@pytest.mark.parametrize("level", LEVELS)
def test_if_elif_else_with_early_return_picks_the_branch_on_the_device(level):
    _level(level)
    net = Piecewise()
    w = net.w.asnumpy()
    cases = [np.array(v, np.float32) for v in ([4.0, 0.0, 1.0], [-1.0, 3.0, 0.0], [1.0, 1.0, 1.0],
                                               [6.0, 8.0, 0.0])]
    for x in cases:                      # then, elif, else, and the elif's `not` turning it down
        np.testing.assert_allclose(net(Tensor(x)).asnumpy(), piecewise_ref(x, w), rtol=1e-6)


def test_repeated_calls_hit_the_phase_cache_and_still_choose_per_call():
    net = Piecewise()
    x_then, x_else = np.array([4.0, 0.0, 1.0], np.float32), np.array([1.0, 1.0, 1.0], np.float32)
    net(Tensor(x_then))
    hits = PHASE_CACHE.hits
    out_else = net(Tensor(x_else)).asnumpy()
    out_then = net(Tensor(x_then)).asnumpy()
    assert PHASE_CACHE.hits == hits + 2          # one capture serves both branches
    np.testing.assert_allclose(out_else, piecewise_ref(x_else, net.w.asnumpy()), rtol=1e-6)
    np.testing.assert_allclose(out_then, piecewise_ref(x_then, net.w.asnumpy()), rtol=1e-6)


def test_a_python_condition_folds_and_keeps_python_values():
    class Static(nn.Cell):
        def __init__(self, double):
            super().__init__()
            self.double = double

        def construct(self, x):
            n = 0
            if self.double:
                n = 2                      # a Python int joined by a static condition stays Python
            k = 0
            while k < n:                   # a Python-bounded while unrolls
                x = x * 2
                k += 1
            return x + n, n

    x = np.array([1.0, -1.0], np.float32)
    out, n = Static(True)(Tensor(x))
    assert n == 2
    np.testing.assert_allclose(out.asnumpy(), x * 4 + 2)
    out, n = Static(False)(Tensor(x))
    assert n == 0
    np.testing.assert_allclose(out.asnumpy(), x)


def test_functions_without_control_flow_are_not_rewritten():
    def plain(x):
        return x * 2

    def flowing(x):
        if x > 0:
            x = x * 2
        return x

    assert parse.convert(plain) is plain
    assert parse.convert(flowing) is not flowing
    assert parse.convert(flowing).__code__ is parse.convert(flowing).__code__    # transformed once


# ------------------------------------------------------------------ tensor-if failures name the user's line

def test_a_tensor_while_runs_as_a_device_loop():
    # (it was refused here before device loops; tests/test_control_flow_while.py covers them)
    class Loop(nn.Cell):
        def construct(self, x):
            while x.sum() < 10:
                x = x * 2
            return x

    np.testing.assert_array_equal(Loop()(Tensor(np.ones(2, np.float32))).asnumpy(), np.full(2, 8, np.float32))


def test_branches_that_disagree_on_a_python_scalar_join_it_on_the_device_as_mindspore_does():
    """Real MindSpore 2.10 prints [1. 1.] and [-2. -2.] for these two calls (it joins the two ints into
    one scalar the device selects; the statements tutorial's `out = m` / `out = n` case)."""
    class Disagree(nn.Cell):
        def construct(self, x):
            if x.sum() > 0:
                k = 1
            else:
                k = 2
            return x * k

    np.testing.assert_array_equal(Disagree()(Tensor(np.ones(2, np.float32))).asnumpy(), [1.0, 1.0])
    np.testing.assert_array_equal(Disagree()(Tensor(-np.ones(2, np.float32))).asnumpy(), [-2.0, -2.0])


def test_branches_that_disagree_on_a_python_value_of_two_kinds_are_refused():
    class Disagree(nn.Cell):
        def construct(self, x):
            if x.sum() > 0:
                k = 1
            else:
                k = "two"
            return x, k

    with pytest.raises(TypeError, match="Cannot join the return values of different branches"):
        Disagree()(Tensor(np.ones(2, np.float32)))


def test_a_variable_set_in_one_branch_only_fails_where_it_is_used():
    class OneSided(nn.Cell):
        def construct(self, x):
            if x.sum() > 0:
                y = x * 2
            return y + 1

    with pytest.raises(GraphCaptureError, match="'y' is not assigned on every path"):
        OneSided()(Tensor(np.ones(2, np.float32)))


# ------------------------------------------------------------------ gradients

class Branchy(nn.Cell):
    def construct(self, x):
        if x.sum() > 0:
            y = x * x * 3.0
        else:
            y = ops.sin(x)
        return (y * ops.cos(x)).sum()


def branchy_ref(x):
    y = x * x * 3.0 if x.sum() > 0 else np.sin(x)
    return np.sum(y * np.cos(x))


@pytest.mark.parametrize("level", LEVELS)
def test_the_gradient_through_a_tensor_if_is_the_taken_branchs(level):
    _level(level)
    net = Branchy()
    for x in (np.array([0.3, 0.7, -0.2], np.float32), np.array([-0.3, 0.1, -0.9], np.float32)):
        got = ms.grad(net)(Tensor(x)).asnumpy()
        (want,) = numeric_grads(branchy_ref, [x], np.array(1.0))
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


# ------------------------------------------------------------------ (c) an RNN over a tensor's time steps

class TinyRNN(nn.Cell):
    def __init__(self, wx, wh):
        super().__init__()
        self.wx = Parameter(Tensor(wx), name="wx")
        self.wh = Parameter(Tensor(wh), name="wh")

    def construct(self, xs):
        h = ops.zeros((1, self.wh.shape[0]), ms.float32)
        for x_t in xs:                              # unrolled over the static time dimension
            h = ops.tanh(ops.matmul(x_t, self.wx) + ops.matmul(h, self.wh))
            if h.sum() > 100:                       # never true here: a tensor if inside the loop
                h = h * 0.5
        return (h * h).sum()


def rnn_ref(xs, wx, wh):
    h = np.zeros((1, wh.shape[0]))
    for x_t in xs:
        h = np.tanh(x_t @ wx + h @ wh)
    return np.sum(h * h)


@pytest.mark.parametrize("level", LEVELS)
def test_an_rnn_written_as_a_python_for_over_a_tensor_trains_by_finite_differences(level):
    _level(level)
    rng = np.random.default_rng(3)
    xs = rng.normal(size=(4, 1, 3)).astype(np.float32)
    wx = (rng.normal(size=(3, 2)) * 0.5).astype(np.float32)
    wh = (rng.normal(size=(2, 2)) * 0.5).astype(np.float32)
    net = TinyRNN(wx, wh)
    np.testing.assert_allclose(net(Tensor(xs)).asnumpy(), rnn_ref(xs, wx, wh), rtol=1e-5)
    g_wx, g_wh = ms.grad(net, grad_position=None, weights=net.trainable_params())(Tensor(xs))
    want = numeric_grads(lambda a, b: rnn_ref(xs, a, b), [wx, wh], np.array(1.0))
    np.testing.assert_allclose(g_wx.asnumpy(), want[0], rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(g_wh.asnumpy(), want[1], rtol=2e-3, atol=2e-3)


# ------------------------------------------------------------------ (a) the mixed-precision tutorial's step

@pytest.mark.parametrize("level", LEVELS)
def test_a_jitted_step_skips_the_update_on_overflow_with_a_tensor_if(level):
    """The MindSpore tutorial's `if is_finite: optimizer(grads)` step, on a Dense layer with MSE."""
    _level(level)
    w0 = np.array([[0.5, -0.25, 0.125]], np.float32)
    b0 = np.array([0.1], np.float32)
    model = nn.Dense(3, 1, weight_init=Tensor(w0), bias_init=Tensor(b0))
    loss_fn = nn.MSELoss()
    optimizer = nn.SGD(model.trainable_params(), learning_rate=0.1)
    loss_scaler = DynamicLossScaler(scale_value=2.0 ** 10, scale_factor=2, scale_window=50)

    def forward_fn(data, label):
        logits = model(data)
        loss = loss_fn(logits, label)
        loss = loss_scaler.scale(loss)
        return loss, logits

    grad_fn = ms.value_and_grad(forward_fn, None, model.trainable_params(), has_aux=True)

    @ms.jit
    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        loss = loss_scaler.unscale(loss)
        is_finite = all_finite(grads)
        if is_finite:
            grads = loss_scaler.unscale(grads)
            optimizer(grads)
        loss_scaler.adjust(is_finite)
        return loss

    x = np.array([[1.0, 2.0, -1.0], [0.5, -1.0, 2.0]], np.float32)
    y = np.array([[1.0], [-1.0]], np.float32)
    # a finite step: SGD on MSE's gradient (hand-derived, float64)
    err = x.astype(np.float64) @ w0.T.astype(np.float64) + b0 - y
    loss = train_step(Tensor(x), Tensor(y)).asnumpy()
    np.testing.assert_allclose(loss, np.mean(err ** 2), rtol=1e-5)
    w1 = w0 - 0.1 * (2 / err.size) * (err.T @ x)
    b1 = b0 - 0.1 * (2 / err.size) * err.sum(0)
    np.testing.assert_allclose(model.weight.asnumpy(), w1, rtol=1e-5)
    np.testing.assert_allclose(model.bias.asnumpy(), b1, rtol=1e-5)
    assert loss_scaler.scale_value.asnumpy() == 2.0 ** 10
    # an overflowing step (the same graph: the phase cache hits): nothing moves, the scale halves
    hits = PHASE_CACHE.hits
    w_before, b_before = model.weight.asnumpy(), model.bias.asnumpy()
    x_big = x.copy()
    x_big[0, 0] = 3e38
    train_step(Tensor(x_big), Tensor(y))
    assert PHASE_CACHE.hits == hits + 1
    assert model.weight.asnumpy().tobytes() == w_before.tobytes()
    assert model.bias.asnumpy().tobytes() == b_before.tobytes()
    assert loss_scaler.scale_value.asnumpy() == 2.0 ** 9
    # and a finite step after it updates again
    train_step(Tensor(x), Tensor(y))
    err = x.astype(np.float64) @ w_before.T.astype(np.float64) + b_before - y
    np.testing.assert_allclose(model.weight.asnumpy(), w_before - 0.1 * (2 / err.size) * (err.T @ x), rtol=1e-5)


def test_grad_of_a_plain_function_with_a_tensor_if_in_pynative(restore_context):
    """ms.grad captures the call as a graph even in PyNative, so the function's `if` compiles too."""
    ms.set_context(mode=ms.PYNATIVE_MODE)

    def g(x):
        if x.sum() > 0:
            return (x * x * 3.0 * ops.cos(x)).sum()
        return (ops.sin(x) * ops.cos(x)).sum()

    for x in (np.array([0.3, 0.7, -0.2], np.float32), np.array([-0.3, 0.1, -0.9], np.float32)):
        (want,) = numeric_grads(branchy_ref, [x], np.array(1.0))
        np.testing.assert_allclose(ms.grad(g)(Tensor(x)).asnumpy(), want, rtol=2e-3, atol=2e-3)


def test_a_condition_of_many_elements_is_ambiguous_as_in_mindspore():
    class Many(nn.Cell):
        def construct(self, x):
            return x if x > 0 else -x

    with pytest.raises(ValueError, match="The truth value of an array with more than one element is ambiguous"):
        Many()(Tensor(np.ones(2, np.float32)))


def test_a_conditional_expression_on_a_tensor_selects_on_the_device():
    class Abs(nn.Cell):
        def construct(self, x):
            return x * 2 if x.sum() > 0 else -x

    for v in ([1.0, -0.5], [-1.0, 0.5]):
        x = np.array(v, np.float32)
        np.testing.assert_allclose(Abs()(Tensor(x)).asnumpy(), x * 2 if x.sum() > 0 else -x)


# ------------------------------------------------------------------ only user code is rewritten

@pytest.mark.parametrize("level", LEVELS)
def test_jit_of_grad_of_a_function_with_a_tensor_if_differentiates_the_taken_branch(level):
    """ms.jit(ms.grad(f)): the parser rewrites f, never ms.grad's own wrapper (it once compiled f's
    source, found through functools.wraps' __wrapped__, under grad_func's globals: NameError ops)."""
    _level(level)

    def f(x):
        if x.sum() > 0:
            y = ops.exp(x)
        else:
            y = x * x
        return y.sum()

    g = ms.jit(ms.grad(f))
    for v in ([0.5, 1.0, -0.25], [-1.0, 0.5, -2.0]):
        x = np.array(v, np.float32)
        want = np.exp(x) if x.sum() > 0 else 2 * x          # d/dx sum(exp x) | d/dx sum(x^2)
        np.testing.assert_allclose(g(Tensor(x)).asnumpy(), want, rtol=1e-6)


def test_the_librarys_own_functions_are_never_rewritten_but_a_users_wrapper_is():
    import functools

    def f(x):
        if x > 0:
            x = x * 2
        return x

    wrapper = ms.grad(f)                 # ascendemu's function (its `if`s are on Python values)
    assert parse.convert(wrapper) is wrapper

    @functools.wraps(f)
    def user_wrapper(x):                 # the user's: its own source is rewritten, not f's
        if x > 0:
            return f(x) + 1
        return f(x) - 1

    converted = parse.convert(user_wrapper)
    assert converted is not user_wrapper and converted.__code__.co_name == "user_wrapper"
    assert converted(3) == 7 and converted(-3) == -4
