"""RNN primitives, fused transformer/LLM ops and the mask dropouts (breadth round 2): DynamicRNN,
DynamicGRUV2, BasicLSTMCell, RmsNorm/rms_norm/add_rms_norm, FastGeLU/fast_gelu/FastGelu, Gelu, swiglu,
rotary_position_embedding, the flash-attention family, moe_token_permute/unpermute, Dropout2D/3D and
DropoutGenMask/DropoutDoMask.

Most run only on Ascend in MindSpore (its CPU raises "unregistered"), so the oracles are numpy
implementations of MindSpore's documented formulas (float64, compared at the dtype's precision), the
examples in its docstrings, and central finite differences for the gradients."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops

F16 = dict(rtol=2e-2, atol=2e-2)       # a float16 result against a float64 reference


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def f64(*arrays):
    return [np.asarray(a, np.float64) for a in arrays]


# ---- RmsNorm, add_rms_norm, FastGeLU, swiglu, rotary_position_embedding --------------------------

def rms_ref(x, g, eps=1e-6):
    x, g = f64(x, g)
    axes = tuple(range(x.ndim - g.ndim, x.ndim))
    rstd = 1.0 / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return x * rstd * g, rstd


@pytest.mark.parametrize("shape,gshape,dtype", [((2, 3, 4), (4,), np.float32), ((2, 3, 4), (3, 4), np.float32),
                                                ((3, 8), (8,), np.float16)])
def test_rms_norm_is_the_documented_formula(shape, gshape, dtype):
    rng = np.random.RandomState(0)
    x, g = rng.randn(*shape).astype(dtype), rng.randn(*gshape).astype(dtype)
    y, rstd = ops.rms_norm(Tensor(x), Tensor(g), 1e-5)
    want_y, want_rstd = rms_ref(x, g, 1e-5)
    tol = F16 if dtype == np.float16 else dict(rtol=1e-5, atol=1e-6)
    assert y.dtype == Tensor(x).dtype and rstd.dtype == ms.float32 and rstd.shape == want_rstd.shape
    np.testing.assert_allclose(y.asnumpy(), want_y, **tol)
    np.testing.assert_allclose(rstd.asnumpy(), want_rstd, rtol=1e-5)
    y2, _ = ops.RmsNorm(epsilon=1e-5)(Tensor(x), Tensor(g))
    np.testing.assert_array_equal(y2.asnumpy(), y.asnumpy())


def test_rms_norm_docstring_example_and_add_rms_norm():
    x = Tensor(np.array([[1, 2, 3], [1, 2, 3]], np.float32))
    y, rstd = ops.rms_norm(x, Tensor(np.ones(3, np.float32)))
    np.testing.assert_allclose(y.asnumpy(), [[0.46290997, 0.92581993, 1.3887299]] * 2, rtol=1e-6)
    np.testing.assert_allclose(rstd.asnumpy(), [[0.46290997]] * 2, rtol=1e-6)
    a, b = np.random.RandomState(1).randn(2, 2, 5).astype(np.float32)
    g = np.linspace(0.5, 1.5, 5).astype(np.float32)
    y, rstd, s = ops.add_rms_norm(Tensor(a), Tensor(b), Tensor(g))
    np.testing.assert_allclose(s.asnumpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose(y.asnumpy(), rms_ref(a + b, g)[0], rtol=1e-5, atol=1e-6)


def test_rms_norm_refuses_what_mindspore_refuses():
    x = Tensor(np.ones((2, 4), np.float32))
    with pytest.raises(TypeError):
        ops.rms_norm(x, Tensor(np.ones(4, np.float16)))          # gamma's dtype differs
    with pytest.raises(TypeError):
        ops.rms_norm(Tensor(np.ones((2, 4), np.int32)), Tensor(np.ones(4, np.int32)))
    with pytest.raises(ValueError):
        ops.rms_norm(x, Tensor(np.ones(4, np.float32)), 2.0)     # epsilon outside (0, 1]
    with pytest.raises(ValueError):
        ops.rms_norm(x, Tensor(np.ones((3, 2, 4), np.float32)))  # gamma of higher rank
    with pytest.raises(RuntimeError):
        ops.add_rms_norm(x, Tensor(np.ones((1, 4), np.float32)), Tensor(np.ones(4, np.float32)))


def fast_gelu_ref(x):
    x = np.asarray(x, np.float64)
    return x / (1 + np.exp(-1.702 * np.abs(x))) * np.exp(0.851 * (x - np.abs(x)))


def test_fast_gelu_gelu_and_swiglu_are_their_formulas():
    x = np.array([-30.0, -3.0, -0.5, 0.0, 0.25, 2.0, 30.0], np.float32)
    for got in (ops.fast_gelu(Tensor(x)), ops.FastGeLU()(Tensor(x)), ops.FastGelu()(Tensor(x))):
        np.testing.assert_allclose(got.asnumpy(), fast_gelu_ref(x), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(ops.Gelu()(Tensor(x)).asnumpy(), ops.GeLU()(Tensor(x)).asnumpy())
    # swiglu: MindSpore's docstring example (dim 0), then the last axis
    got = ops.swiglu(Tensor(np.array([[-0.12, 0.123, 31.122], [2.1223, 4.1212121217, 0.3123]], np.float32)), 0)
    np.testing.assert_allclose(got.asnumpy(), [[-0.11970687, 0.2690224, 9.7194]], rtol=1e-4)
    y = np.random.RandomState(2).randn(3, 6).astype(np.float32)
    a, b = f64(y[:, :3], y[:, 3:])
    np.testing.assert_allclose(ops.swiglu(Tensor(y)).asnumpy(), a * sigmoid(a) * b, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError):
        ops.swiglu(Tensor(np.ones((3, 5), np.float32)))


def test_gradients_of_the_fused_activations_match_finite_differences():
    x = np.array([-2.5, -0.7, -0.1, 0.2, 0.9, 2.2], np.float32)
    got = ms.grad(lambda t: ops.fast_gelu(t).sum())(Tensor(x)).asnumpy()
    h = 1e-6
    numeric = (fast_gelu_ref(x.astype(np.float64) + h) - fast_gelu_ref(x.astype(np.float64) - h)) / (2 * h)
    np.testing.assert_allclose(got, numeric, rtol=1e-4, atol=1e-6)
    rng = np.random.RandomState(3)
    xs, g = rng.randn(2, 4).astype(np.float32), rng.randn(4).astype(np.float32)
    ct = rng.randn(2, 4)
    got_x, got_g = ms.grad(lambda a, b: (ops.rms_norm(a, b)[0] * Tensor(ct.astype(np.float32))).sum(),
                           grad_position=(0, 1))(Tensor(xs), Tensor(g))
    for got, k in ((got_x.asnumpy(), 0), (got_g.asnumpy(), 1)):
        arrays = f64(xs, g)
        numeric = np.zeros_like(arrays[k])
        for i in np.ndindex(numeric.shape):
            for sign in (1, -1):
                moved = [a.copy() for a in arrays]
                moved[k][i] += sign * 1e-6
                numeric[i] += sign * (rms_ref(*moved)[0] * ct).sum() / 2e-6
        np.testing.assert_allclose(got, numeric, rtol=1e-3, atol=1e-4)


def rope_ref(x, cos, sin, mode):
    x, cos, sin = f64(x, cos, sin)
    if mode == 0:
        half = x.shape[-1] // 2
        rotated = np.concatenate([-x[..., half:], x[..., :half]], -1)
    else:
        rotated = np.stack([-x[..., 1::2], x[..., 0::2]], -1).reshape(x.shape)
    return x * cos + rotated * sin


@pytest.mark.parametrize("mode", [0, 1])
def test_rotary_position_embedding_modes(mode):
    rng = np.random.RandomState(4)
    x = rng.uniform(-2, 2, (2, 3, 2, 8)).astype(np.float32)           # BSND, cos/sin 1S1D
    cos, sin = (rng.uniform(-1, 1, (1, 3, 1, 8)).astype(np.float32) for _ in range(2))
    got = ops.rotary_position_embedding(Tensor(x), Tensor(cos), Tensor(sin), mode)
    np.testing.assert_allclose(got.asnumpy(), rope_ref(x, cos, sin, mode), rtol=1e-5, atol=1e-6)
    from ascendemu.frontend.ops.function import other_func
    assert other_func.rotary_position_embedding is ops.rotary_position_embedding


# ---- DynamicRNN, BasicLSTMCell, DynamicGRUV2 ------------------------------------------------------

def lstm_ref(x, w, b, h, c, forget_bias=0.0):
    """Ascend's LSTM cell over time: w rows input then hidden, gate columns i, j, f, o."""
    x, w, b, h, c = f64(x, w, b, h, c)
    inputs, hidden = x.shape[-1], w.shape[1] // 4
    outs = []
    for xt in x:
        gates = xt @ w[:inputs] + h @ w[inputs:] + b
        i, j, f, o = np.split(gates, 4, axis=-1)
        i, j, f, o = sigmoid(i), np.tanh(j), sigmoid(f + forget_bias), sigmoid(o)
        c = f * c + i * j
        h = o * np.tanh(c)
        outs.append((h, h, c, i, j, f, o, np.tanh(c)))
    return [np.stack([s[k] for s in outs]) for k in range(8)]


def _lstm_inputs(steps=3, batch=2, inputs=4, hidden=5, seed=5):
    rng = np.random.RandomState(seed)
    shapes = [((steps, batch, inputs), 1.0), ((inputs + hidden, 4 * hidden), 0.5), ((4 * hidden,), 0.5),
              ((1, batch, hidden), 0.3), ((1, batch, hidden), 0.3)]
    return tuple((rng.randn(*shape) * scale).astype(np.float16) for shape, scale in shapes)


@pytest.mark.parametrize("forget_bias,bias_dtype", [(0.0, np.float16), (1.0, np.float32)])
def test_dynamic_rnn_is_ascends_lstm(forget_bias, bias_dtype):
    x, w, b, h0, c0 = _lstm_inputs()
    b = b.astype(bias_dtype)
    outs = ops.DynamicRNN(forget_bias=forget_bias)(Tensor(x), Tensor(w), Tensor(b), None, Tensor(h0), Tensor(c0))
    want = lstm_ref(x, w, b, h0[0], c0[0], forget_bias)
    assert len(outs) == 8
    for k, (got, ref) in enumerate(zip(outs, want)):
        assert got.shape == (3, 2, 5)
        assert got.dtype == (ms.float16 if k == 1 or bias_dtype == np.float16 else ms.float32)
        np.testing.assert_allclose(got.asnumpy(), ref, **F16)


def test_dynamic_rnn_refuses_what_it_does_not_serve():
    x, w, b, h0, c0 = (Tensor(a) for a in _lstm_inputs())
    with pytest.raises(TypeError):
        ops.DynamicRNN()(Tensor(np.ones((3, 2, 4), np.float32)), w, b, None, h0, c0)   # x must be float16
    with pytest.raises(TypeError):
        ops.DynamicRNN(forget_bias=1)(x, w, b, None, h0, c0)                            # an int, not a float
    with pytest.raises(InvalidParamError, match="use_peephole"):
        ops.DynamicRNN(use_peephole=True)(x, w, b, None, h0, c0)
    with pytest.raises(InvalidParamError, match="seq_length"):
        ops.DynamicRNN()(x, w, b, Tensor(np.array([3, 3], np.int32)), h0, c0)
    with pytest.raises(ValueError):
        ops.DynamicRNN()(x, Tensor(np.ones((8, 20), np.float16)), b, None, h0, c0)      # w is not (I + H, 4H)


def test_basic_lstm_cell_is_one_step_and_its_gradient_comes_from_the_parts():
    rng = np.random.RandomState(6)
    x, h, c = rng.randn(2, 3).astype(np.float32), rng.randn(2, 4).astype(np.float32), rng.randn(2, 4).astype(np.float32)
    w, b = (rng.randn(7, 16) * 0.5).astype(np.float32), (rng.randn(16) * 0.5).astype(np.float32)
    outs = ops.BasicLSTMCell()(*(Tensor(a) for a in (x, h, c, w, b)))
    ref = lstm_ref(x[None], w, b, h, c, forget_bias=1.0)
    want = [ref[2][0], ref[1][0]] + [r[0] for r in ref[3:]]     # ct, ht, it, jt, ft, ot, tanhct
    assert outs[1].dtype == ms.float16 and outs[0].dtype == ms.float32
    for got, r in zip(outs, want):
        np.testing.assert_allclose(got.asnumpy(), r, rtol=2e-3, atol=2e-3)
    # d sum(ct) / d w by central differences of the numpy cell
    got = ms.grad(lambda ww: ops.BasicLSTMCell()(Tensor(x), Tensor(h), Tensor(c), ww, Tensor(b))[0].sum())(Tensor(w))
    numeric = np.zeros(w.shape)
    for i in np.ndindex(w.shape):
        for sign in (1, -1):
            moved = w.astype(np.float64)
            moved[i] += sign * 1e-6
            numeric[i] += sign * lstm_ref(x[None], moved, b, h, c, 1.0)[2].sum() / 2e-6
    np.testing.assert_allclose(got.asnumpy(), numeric, rtol=1e-3, atol=1e-4)


def gru_ref(x, wi, wh, bi, bh, h, gate_order="rzh", reset_after=True):
    x, wi, wh, h = f64(x, wi, wh, h)
    hidden = wh.shape[0]
    bi = np.zeros(3 * hidden) if bi is None else np.asarray(bi, np.float64)
    bh = np.zeros(3 * hidden) if bh is None else np.asarray(bh, np.float64)
    r_at, z_at = (0, 1) if gate_order == "rzh" else (1, 0)
    blk = lambda a, k: a[..., k * hidden:(k + 1) * hidden]  # noqa: E731
    outs = []
    for xt in x:
        xp, hp = xt @ wi + bi, h @ wh + bh
        r = sigmoid(blk(xp, r_at) + blk(hp, r_at))
        z = sigmoid(blk(xp, z_at) + blk(hp, z_at))
        hn = blk(hp, 2) if reset_after else (r * h) @ blk(wh, 2) + blk(bh, 2)
        n = np.tanh(blk(xp, 2) + (r * hn if reset_after else hn))
        h = (1 - z) * n + z * h
        outs.append((h, h, z, r, n, hn))
    return [np.stack([s[k] for s in outs]) for k in range(6)]


@pytest.mark.parametrize("gate_order,reset_after,biases", [("rzh", True, True), ("zrh", True, True),
                                                            ("rzh", False, True), ("rzh", True, False)])
def test_dynamic_gru_v2_is_the_documented_gru(gate_order, reset_after, biases):
    rng = np.random.RandomState(7)
    x = rng.randn(3, 2, 4).astype(np.float16)
    wi, wh = (rng.randn(4, 15) * 0.5).astype(np.float16), (rng.randn(5, 15) * 0.5).astype(np.float16)
    bi, bh = (rng.randn(15) * 0.5).astype(np.float32), (rng.randn(15) * 0.5).astype(np.float32)
    h0 = (rng.randn(2, 5) * 0.3).astype(np.float16)
    if not biases:
        bi = bh = None
    outs = ops.DynamicGRUV2(gate_order=gate_order, reset_after=reset_after)(
        Tensor(x), Tensor(wi), Tensor(wh), None if bi is None else Tensor(bi), None if bh is None else Tensor(bh),
        None, Tensor(h0))
    want = gru_ref(x, wi, wh, bi, bh, h0, gate_order, reset_after)
    dtype = ms.float32 if biases else ms.float16
    for got, ref in zip(outs, want):
        assert got.shape == (3, 2, 5) and got.dtype == dtype
        np.testing.assert_allclose(got.asnumpy(), ref, **F16)


# ---- Dropout2D/3D, DropoutGenMask/DropoutDoMask ----------------------------------------------------

@pytest.mark.parametrize("cls,shape", [(ops.Dropout2D, (2, 6, 3, 3)), (ops.Dropout3D, (2, 6, 2, 2, 3))])
def test_channel_dropout_zeroes_whole_maps(cls, shape):
    x = np.random.RandomState(8).uniform(1, 2, shape).astype(np.float32)
    drop = cls(keep_prob=0.5)
    out, mask = drop(Tensor(x))
    out, mask = out.asnumpy(), mask.asnumpy()
    assert mask.dtype == np.bool_ and mask.shape == shape
    per_map = mask.reshape(2, 6, -1)
    assert (per_map.all(-1) | ~per_map.any(-1)).all()                # each map kept or dropped whole
    np.testing.assert_allclose(out, np.where(mask, x * 2.0, 0.0), rtol=1e-6)
    second = drop(Tensor(x))[1].asnumpy()
    assert not np.array_equal(second, mask) or per_map.all() or not per_map.any()
    out1, mask1 = cls(keep_prob=1.0)(Tensor(x))
    np.testing.assert_array_equal(out1.asnumpy(), x)
    assert mask1.asnumpy().all()
    with pytest.raises(ValueError):
        cls(keep_prob=1.5)
    with pytest.raises(TypeError):
        cls(keep_prob=1)
    with pytest.raises(ValueError):
        cls()(Tensor(np.ones((2, 3), np.float32)))


def test_dropout_gen_mask_is_a_bit_mask_that_do_mask_applies():
    shape = (3, 50)                                          # 150 elements: 256 bits, 32 bytes
    mask = ops.DropoutGenMask(Seed0=3, Seed1=4)(shape, Tensor(np.float32(0.5)))
    assert mask.dtype == ms.uint8 and mask.shape == (32,)
    bits = np.unpackbits(mask.asnumpy(), bitorder="little")[:150].reshape(shape)
    assert 0 < bits.sum() < 150
    x = np.random.RandomState(9).randn(*shape).astype(np.float32)
    out = ops.DropoutDoMask()(Tensor(x), mask, Tensor(np.float32(0.5)))
    np.testing.assert_allclose(out.asnumpy(), x * bits / 0.5, rtol=1e-6)
    again = ops.DropoutGenMask(Seed0=3, Seed1=4)(shape, Tensor(np.float32(0.5)))
    np.testing.assert_array_equal(again.asnumpy(), mask.asnumpy())        # the seeds fix the stream
    everything = ops.DropoutGenMask()((5,), Tensor(np.float32(1.0))).asnumpy()
    assert everything.shape == (16,) and (everything == 255).all()
    with pytest.raises(TypeError):
        ops.DropoutDoMask()(Tensor(x), Tensor(np.zeros(32, np.int32)), Tensor(np.float32(0.5)))


# ---- the flash-attention family ------------------------------------------------------------------

def attention_ref(q, k, v, scale, pse=None, discard=None):
    """(B, N, S, D) numpy attention; key/value heads repeated for GQA; ``discard`` True drops a score."""
    q, k, v = f64(q, k, v)
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = scale * q @ np.swapaxes(k, -1, -2)
    if pse is not None:
        s = s + np.asarray(pse, np.float64)
    if discard is not None:
        s = np.where(discard, -np.inf, s)
    top = s.max(-1, keepdims=True)
    e = np.exp(s - top)
    return (e / e.sum(-1, keepdims=True)) @ v, top + np.log(e.sum(-1, keepdims=True))


def to_layout(x, layout):
    """(B, N, S, D) -> layout."""
    b, n, s, d = x.shape
    return {"BNSD": x, "BSND": x.transpose(0, 2, 1, 3), "BSH": x.transpose(0, 2, 1, 3).reshape(b, s, n * d),
            "SBH": x.transpose(2, 0, 1, 3).reshape(s, b, n * d)}[layout]


def _qkv(b=2, n=4, n_kv=4, s1=5, s2=5, d=8, seed=10):
    rng = np.random.RandomState(seed)
    return (rng.randn(b, n, s1, d).astype(np.float16), rng.randn(b, n_kv, s2, d).astype(np.float16),
            rng.randn(b, n_kv, s2, d).astype(np.float16))


@pytest.mark.parametrize("layout", ["BSH", "BNSD", "SBH", "BSND"])
def test_flash_attention_score_layouts_and_gqa(layout):
    q, k, v = _qkv(n=4, n_kv=2)
    out = ops.flash_attention_score(*(Tensor(to_layout(a, layout)) for a in (q, k, v)), 4, scalar_value=0.35,
                                    input_layout=layout)
    assert out.dtype == ms.float16 and out.shape == to_layout(q, layout).shape
    np.testing.assert_allclose(out.asnumpy(), to_layout(attention_ref(q, k, v, 0.35)[0], layout), **F16)


def test_flash_attention_masks_sparse_modes_and_pse():
    q, k, v = _qkv(s1=4, s2=6)
    rng = np.random.RandomState(11)
    user = rng.rand(2, 1, 4, 6) < 0.3
    user[..., 0] = False                                      # no row fully masked
    pse = (rng.randn(1, 4, 4, 6) * 0.5).astype(np.float16)
    i, j = np.arange(4)[:, None], np.arange(6)[None, :]
    for kwargs, discard in (({"attn_mask": Tensor(user)}, user),
                            ({"attn_mask": Tensor(user.astype(np.uint8)), "sparse_mode": 1}, user),
                            ({"attn_mask": Tensor(user[0, 0]), "next_tokens": 1, "pre_tokens": 1},
                             user[0, 0] | (j > i + 1) | (j < i - 1)),
                            ({"sparse_mode": 2}, j > i), ({"sparse_mode": 3}, j > i + 2),
                            ({"real_shift": Tensor(pse)}, None)):
        out = ops.flash_attention_score(Tensor(q), Tensor(k), Tensor(v), 4, input_layout="BNSD", **kwargs)
        want = attention_ref(q, k, v, 1.0, pse if "real_shift" in kwargs else None, discard)[0]
        np.testing.assert_allclose(out.asnumpy(), want, **F16, err_msg=str(sorted(kwargs)))


def test_flash_attention_gradient_matches_finite_differences():
    rng = np.random.RandomState(12)
    q, k, v = (rng.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float16) for _ in range(3))
    ct = rng.randn(1, 2, 3, 4)

    def loss(a, b, c):
        return (ops.flash_attention_score(a, b, c, 2, scalar_value=0.5, input_layout="BNSD")
                * Tensor(ct.astype(np.float16))).sum()
    grads = ms.grad(loss, grad_position=(0, 1, 2))(Tensor(q), Tensor(k), Tensor(v))
    for pos, got in enumerate(grads):
        arrays = f64(q, k, v)
        numeric = np.zeros(arrays[pos].shape)
        for i in np.ndindex(numeric.shape):
            for sign in (1, -1):
                moved = [a.copy() for a in arrays]
                moved[pos][i] += sign * 1e-5
                numeric[i] += sign * (attention_ref(*moved, 0.5)[0] * ct).sum() / 2e-5
        np.testing.assert_allclose(got.asnumpy(), numeric, rtol=5e-2, atol=3e-2)


def test_prompt_incre_and_fused_infer_attention():
    q, k, v = _qkv(n=4, n_kv=2, s1=4, s2=4, seed=13)
    mask = np.zeros((4, 4), bool)
    causal = np.arange(4)[None, :] > np.arange(4)[:, None]
    # prompt: a mask with next_tokens 0 (the default) keeps the band j <= i
    bsh = [Tensor(to_layout(a, "BSH")) for a in (q, k, v)]
    out = ops.prompt_flash_attention(*bsh, attn_mask=Tensor(mask), num_heads=4, num_key_value_heads=2, scale_value=0.3)
    np.testing.assert_allclose(out.asnumpy(), to_layout(attention_ref(q, k, v, 0.3, discard=causal)[0], "BSH"), **F16)
    # incremental: one query step against a cache of which each batch uses its first lengths[b] entries
    step = q[:, :, :1]
    lengths = [3, 4]
    past = np.arange(4)[None, :] >= np.array(lengths)[:, None]
    out = ops.incre_flash_attention(Tensor(step), [Tensor(k)], [Tensor(v)], actual_seq_lengths=lengths, num_heads=4,
                                    input_layout="BNSD", scale_value=0.3, num_key_value_heads=2)
    want = attention_ref(step, k, v, 0.3, discard=past.reshape(2, 1, 1, 4))[0]
    np.testing.assert_allclose(out.asnumpy(), want, **F16)
    # fused: the prompt branch with its log-sum-exp
    out, lse = ops.fused_infer_attention_score(Tensor(q), Tensor(k), Tensor(v), num_heads=4, scale=0.3,
                                               input_layout="BNSD", sparse_mode=3, atten_mask=Tensor(mask),
                                               softmax_lse_flag=True)
    want, want_lse = attention_ref(q, k, v, 0.3, discard=causal)
    np.testing.assert_allclose(out.asnumpy(), want, **F16)
    assert lse.dtype == ms.float32 and lse.shape == (2, 4, 4, 1)
    np.testing.assert_allclose(lse.asnumpy(), want_lse, rtol=1e-2, atol=1e-2)
    _, no_lse = ops.fused_infer_attention_score(Tensor(q), Tensor(k), Tensor(v), num_heads=4, input_layout="BNSD")
    np.testing.assert_array_equal(no_lse.asnumpy(), np.zeros(1, np.float32))


def test_attention_refuses_unserved_arguments_by_name():
    q, k, v = (Tensor(a) for a in _qkv())
    with pytest.raises(InvalidParamError, match="keep_prob"):
        ops.flash_attention_score(q, k, v, 4, keep_prob=0.9, input_layout="BNSD")
    with pytest.raises(InvalidParamError, match="TND"):
        ops.flash_attention_score(q, k, v, 4, input_layout="TND")
    with pytest.raises(ValueError):
        ops.flash_attention_score(q, k, v, 4, input_layout="NSBD")
    with pytest.raises(InvalidParamError, match="quant_scale2"):
        ops.prompt_flash_attention(q, k, v, quant_scale2=Tensor(np.ones(1, np.float32)), num_heads=4,
                                   input_layout="BNSD")
    with pytest.raises(InvalidParamError, match="block_table"):
        ops.incre_flash_attention(q, [k], [v], block_table=Tensor(np.zeros((2, 1), np.int32)), num_heads=4,
                                  input_layout="BNSD")
    with pytest.raises(TypeError):                       # MindSpore's kernels take float16/bfloat16
        ops.flash_attention_score(*(Tensor(a.astype(np.float32)) for a in _qkv()), 4, input_layout="BNSD")
    with pytest.raises(RuntimeError):
        ops.flash_attention_score(q, k, v, 3, input_layout="BNSD")           # N is 4


# ---- MoE token permutation ------------------------------------------------------------------------

def test_moe_token_permute_docstring_example_and_unpermute_inverse():
    tokens = np.array([[1] * 3, [7] * 3, [2] * 3, [1] * 3, [2] * 3, [3] * 3], np.float32)
    out, sorted_indices = ops.moe_token_permute(Tensor(tokens), Tensor(np.array([5, 0, 3, 1, 2, 4], np.int32)))
    np.testing.assert_array_equal(out.asnumpy()[:, 0], [7, 1, 2, 2, 3, 1])
    np.testing.assert_array_equal(sorted_indices.asnumpy(), [5, 0, 3, 1, 2, 4])
    assert sorted_indices.dtype == ms.int32
    # top-2: each token goes to two experts; unpermute with probs merges the copies back
    rng = np.random.RandomState(14)
    x = rng.randn(4, 3).astype(np.float32)
    experts = np.array([[0, 2], [1, 0], [2, 1], [0, 1]], np.int32)
    probs = rng.uniform(0, 1, (4, 2)).astype(np.float32)
    permuted, where = ops.moe_token_permute(Tensor(x), Tensor(experts))
    order = np.argsort(experts.reshape(-1), kind="stable")
    np.testing.assert_array_equal(permuted.asnumpy(), x[order // 2])
    np.testing.assert_array_equal(where.asnumpy(), np.argsort(order))
    merged = ops.moe_token_unpermute(permuted, where, Tensor(probs))
    np.testing.assert_allclose(merged.asnumpy(), x * probs.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(ops.moe_token_unpermute(permuted, where).asnumpy(), np.repeat(x, 2, axis=0))
    with pytest.raises(ValueError):
        ops.moe_token_permute(Tensor(x), Tensor(experts), padded_mode=True)
    with pytest.raises(TypeError):
        ops.moe_token_permute(Tensor(x), Tensor(experts.astype(np.float32)))


# ---- GRAPH_MODE -----------------------------------------------------------------------------------

def test_the_fused_ops_run_in_graph_mode():
    q, k, v = _qkv(s1=3, s2=3, d=4)
    x, w, b, h0, c0 = _lstm_inputs(steps=2)
    g = np.linspace(0.5, 1.5, 4).astype(np.float32)

    class Net(nn.Cell):
        def construct(self, q, k, v, x, w, b, h0, c0, g):
            att = ops.flash_attention_score(q, k, v, 4, input_layout="BNSD", sparse_mode=2)
            y = ops.DynamicRNN()(x, w, b, None, h0, c0)[0]
            return att, y, ops.rms_norm(ops.fast_gelu(ops.cast(att, ms.float32)), g)[0]

    ms.set_context(mode=ms.GRAPH_MODE)
    att, y, normed = Net()(*(Tensor(a) for a in (q, k, v, x, w, b, h0, c0, g)))
    causal = np.arange(3)[None, :] > np.arange(3)[:, None]
    want_att = attention_ref(q, k, v, 1.0, discard=causal)[0]
    np.testing.assert_allclose(att.asnumpy(), want_att, **F16)
    np.testing.assert_allclose(y.asnumpy(), lstm_ref(x, w, b, h0[0], c0[0])[0], **F16)
    np.testing.assert_allclose(normed.asnumpy(), rms_ref(fast_gelu_ref(att.asnumpy().astype(np.float32)), g)[0],
                               rtol=1e-4, atol=1e-5)


# ---- the LSTM primitive (MindSpore CPU/GPU) ---------------------------------------------------------

def torch_lstm_ref(x, h, c, w_ih, w_hh, bias):
    """One-layer LSTM in PyTorch's gate order (i, f, g, o)."""
    x, h, c, w_ih, w_hh, bias = f64(x, h, c, w_ih, w_hh, bias)
    ys = []
    for xt in x:
        i, f, g, o = np.split(xt @ w_ih.T + h @ w_hh.T + bias, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        ys.append(h)
    return np.stack(ys), h, c


@pytest.mark.parametrize("biases", [0, 1, 2])
def test_lstm_primitive_weight_layouts(biases):
    rng = np.random.RandomState(15)
    x, h0, c0 = (rng.randn(*shape).astype(np.float32) for shape in ((3, 2, 4), (1, 2, 5), (1, 2, 5)))
    w_ih, w_hh = (rng.randn(20, 4) * 0.5).astype(np.float32), (rng.randn(20, 5) * 0.5).astype(np.float32)
    b = [(rng.randn(20) * 0.5).astype(np.float32) for _ in range(biases)]
    w = np.concatenate([w_ih.ravel(), w_hh.ravel()] + b).reshape(-1, 1, 1)
    out, h_n, c_n, reserve, state = ops.LSTM(4, 5, 1, biases > 0, False, 0.0)(*(Tensor(a) for a in (x, h0, c0, w)))
    want_y, want_h, want_c = torch_lstm_ref(x, h0[0], c0[0], w_ih, w_hh, sum(b) if b else np.zeros(20))
    np.testing.assert_allclose(out.asnumpy(), want_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h_n.asnumpy()[0], want_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c_n.asnumpy()[0], want_c, rtol=1e-5, atol=1e-6)
    assert reserve.shape == state.shape == (1, 1)


def test_lstm_primitive_refuses_what_it_does_not_serve():
    with pytest.raises(InvalidParamError, match="num_layers"):
        ops.LSTM(4, 5, 2, True, False, 0.0)
    with pytest.raises(InvalidParamError, match="bidirectional"):
        ops.LSTM(4, 5, 1, True, True, 0.0)
    with pytest.raises(ValueError):
        ops.LSTM(4, 5, 1, True, False, 1.5)
    with pytest.raises(TypeError):
        ops.LSTM(4, 5, 1, 1, False, 0.0)
    with pytest.raises(ValueError):           # 4H (I + H) + 4H values for one bias
        ops.LSTM(4, 5, 1, True, False, 0.0)(*(Tensor(np.ones(shape, np.float32))
                                              for shape in ((3, 2, 4), (1, 2, 5), (1, 2, 5), (7, 1, 1))))


# ---- ReshapeAndCache (paged KV cache) ---------------------------------------------------------------

@pytest.mark.parametrize("graph", [False, True])
def test_reshape_and_cache_writes_tokens_into_their_slots(graph):
    rng = np.random.RandomState(16)
    key, value = rng.randn(3, 2, 4).astype(np.float16), rng.randn(3, 8).astype(np.float16)   # (T, N, D), (T, N*D)
    k0, v0 = rng.randn(2, 4, 2, 4).astype(np.float16), rng.randn(2, 4, 2, 4).astype(np.float16)
    slots = np.array([5, 0, 7], np.int32)
    key_cache, value_cache = ms.Parameter(Tensor(k0), name="key_cache"), ms.Parameter(Tensor(v0), name="value_cache")

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.key_cache, self.value_cache = key_cache, value_cache

        def construct(self, k, v, s):
            return ops.ReshapeAndCache()(k, v, self.key_cache, self.value_cache, s)

    if graph:
        ms.set_context(mode=ms.GRAPH_MODE)
    out = Net()(Tensor(key), Tensor(value), Tensor(slots))
    np.testing.assert_array_equal(out.asnumpy(), key)
    want_k, want_v = k0.reshape(8, 2, 4).copy(), v0.reshape(8, 2, 4).copy()
    want_k[slots], want_v[slots] = key, value.reshape(3, 2, 4)
    np.testing.assert_array_equal(key_cache.asnumpy(), want_k.reshape(k0.shape))
    np.testing.assert_array_equal(value_cache.asnumpy(), want_v.reshape(v0.shape))
    with pytest.raises(InvalidParamError, match="Parameter"):
        ops.ReshapeAndCache()(Tensor(key), None, Tensor(k0), None, Tensor(slots))
