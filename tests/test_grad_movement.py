"""Data-movement ops and their backward rules (training, issue 9): Transpose, Concat, Split, Slice,
Pad, Gather and UnsortedSegmentSum.

Forward kernels are checked against numpy; every backward rule twice, against an analytic numpy
adjoint written here (np.add.at for the scatters) and against central finite differences of the
forward reference (tests/gradcheck.py). The segment sum's scatter-add is checked for ownership (each
block writes only its own output range) and for determinism (bitwise the same in any block order,
and bitwise np.add.at's row-ordered float32 sum).
"""
from __future__ import annotations

import numpy as np
import pytest
from gradcheck import assert_grads_close, autodiff_grads, numeric_grads
from hypothesis import given, settings, strategies as st
from test_ops import kernel, launch, sig

import ascendemu.frontend as ms
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.frontend import nn, ops
from ascendemu.graph.autodiff import differentiate
from ascendemu.graph.capture import Tracer
from ascendemu.kernels.library import infer_outputs, plan_kernel
from ascendemu.kernels.signature import OpSignature, TensorDesc

RNG = np.random.default_rng(2024)


def rand(shape, dtype="float32"):
    if dtype == "int32":
        return RNG.integers(-50, 50, shape).astype(np.int32)
    return RNG.standard_normal(shape).astype(dtype)


def grads(ex, op, arrays, attrs, ct, **kw):
    """Forward output and input gradients on the device, kernels built in this process."""
    return autodiff_grads(ex, op, arrays, attrs, ct, **kw)


def check_rule(ex, op, arrays, attrs, reference, adjoint, out_index=0, jit_level="O0", tol=None):
    """The rule's gradients against the analytic ``adjoint(ct)`` and finite differences of ``reference``."""
    out = reference(*arrays)
    ct = rand(out.shape, str(out.dtype))
    got = grads(ex, op, arrays, attrs, ct, out_index=out_index, jit_level=jit_level)
    tol = tol or dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[0], out, **tol)
    want = adjoint(ct)
    for i, w in enumerate(want):
        if w is not None:
            assert got[1 + i].shape == w.shape and got[1 + i].dtype == arrays[i].dtype
            np.testing.assert_allclose(got[1 + i], w, **tol, err_msg=f"analytic gradient of input {i}")
    assert_grads_close(got[1:], numeric_grads(reference, arrays, ct, wrt=[i for i, w in enumerate(want)
                                                                            if w is not None]))
    return got


# ------------------------------------------------------------------------------- numpy references

def take_ref(p, idx, axis):
    """Gather: np.take with zeros for out-of-range indices (the kernel never reads outside params)."""
    valid = (idx >= 0) & (idx < p.shape[axis])
    out = np.take(p, np.where(valid, idx, 0), axis=axis)
    mask = valid.reshape((1,) * axis + idx.shape + (1,) * (p.ndim - axis - 1))
    return np.where(mask, out, 0).astype(p.dtype)


def take_adjoint(shape, idx, axis, ct):
    """d Gather / d params: every valid index adds its slice of ct into its row, repeats accumulating."""
    g = np.zeros(shape, np.float64)
    rows = np.moveaxis(g, axis, 0)
    k = idx.ndim
    moved = np.moveaxis(np.asarray(ct, np.float64), tuple(range(axis, axis + k)), tuple(range(k)))
    valid = (idx >= 0) & (idx < shape[axis])
    np.add.at(rows, idx[valid], moved[valid])
    return g


def segment_sum_ref(x, ids, count, dtype=None):
    out = np.zeros((count,) + x.shape[ids.ndim:], dtype or x.dtype)
    valid = (ids >= 0) & (ids < count)
    np.add.at(out, ids[valid], x[valid].astype(out.dtype))
    return out


# ------------------------------------------------------------------------------------- forward ops

FORWARD = {
    "slice-f32": (lambda: [rand((4, 5, 3))], "Slice", dict(begin=(1, 2, 0), size=(2, -1, 2)),
                  lambda x: x[1:3, 2:, 0:2]),
    "slice-f16-inner": (lambda: [rand((3, 7), "float16")], "Slice", dict(begin=(0, 3), size=(3, 4)),
                        lambda x: x[:, 3:]),
    "slice-i32-empty": (lambda: [rand((3, 4), "int32")], "Slice", dict(begin=(3, 1), size=(0, 2)),
                        lambda x: x[3:3, 1:3]),
    "pad-f32": (lambda: [rand((2, 3, 4))], "Pad", dict(paddings=((1, 0), (0, 2), (3, 1))),
                lambda x: np.pad(x, ((1, 0), (0, 2), (3, 1)))),
    "pad-i32": (lambda: [rand((5,), "int32")], "Pad", dict(paddings=((2, 3),)), lambda x: np.pad(x, (2, 3))),
    "pad-f16-value": (lambda: [rand((2, 3), "float16")], "Pad", dict(paddings=((0, 1), (2, 0)), value=-1.5),
                      lambda x: np.pad(x, ((0, 1), (2, 0)), constant_values=-1.5)),
    "split-f16": (lambda: [rand((2, 6, 3), "float16")], "Split", dict(axis=1, output_num=3),
                  lambda x: np.split(x, 3, axis=1)),
    "split-i32-neg-axis": (lambda: [rand((4, 2), "int32")], "Split", dict(axis=-2, output_num=4),
                           lambda x: np.split(x, 4, axis=0)),
    "segsum-i32-2d-ids": (lambda: [rand((2, 3, 4), "int32"), np.array([[2, 0, 2], [7, -1, 0]], np.int32)],
                          "UnsortedSegmentSum", dict(num_segments=4), lambda x, i: segment_sum_ref(x, i, 4)),
}


@pytest.mark.parametrize("case", list(FORWARD))
def test_forward_ops_match_numpy(case):
    make, op, attrs, ref = FORWARD[case]
    arrays = make()
    outs = launch(sig(op, arrays, **attrs), arrays)
    want = ref(*arrays)
    want = want if isinstance(want, list) else [want]
    assert len(outs) == len(want)
    for got, w in zip(outs, want):
        assert got.dtype == w.dtype
        np.testing.assert_array_equal(got, w)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_segment_sum_blocks_own_their_rows_and_sum_deterministically(dtype):
    """Many rows into a large output (several blocks), repeated and dropped ids: each block writes
    exactly its own output range, any block order (or threads) gives the same bits, and those bits are
    np.add.at's float32 row-ordered sum (rounded once to float16)."""
    rows, count = 40000, 33000
    x = rand((rows, 4), dtype)
    ids = RNG.integers(-2, count + 2, rows).astype(np.int32)
    ids[:50] = 7                                   # a heavily repeated segment
    s = sig("UnsortedSegmentSum", [x, ids], num_segments=count)
    assert kernel(s).block_dim > 1
    (full,) = launch(s, [x, ids])
    want = segment_sum_ref(x.astype(np.float32), ids, count).astype(dtype)
    np.testing.assert_array_equal(full, want)
    (shuffled,) = launch(s, [x, ids], blocks=list(RNG.permutation(kernel(s).block_dim)), threads=4)
    np.testing.assert_array_equal(shuffled, full)
    owner = np.zeros(full.size, np.int64)
    for b in range(kernel(s).block_dim):
        (part,) = launch(s, [x, ids], blocks=[b], sentinel=True)
        bits = part.reshape(-1).view(np.uint16 if dtype == "float16" else np.uint32)
        mine = bits != np.iinfo(bits.dtype).max
        np.testing.assert_array_equal(part.reshape(-1)[mine], full.reshape(-1)[mine])
        owner += mine
    assert (owner == 1).all()


def test_plans_price_the_bytes_they_move():
    """Slice reads only its window; Pad reads all of x and writes the padded output; Split reads x and
    writes it as pieces; the segment sum reads x once and the ids once per block, and writes the output
    (zeroed) and then each row of x into it by an atomic add, one transfer per row (device/cost.py)."""
    x = TensorDesc((8, 10), "float32")
    sl = plan_kernel(OpSignature.make("Slice", [x], begin=(2, 0), size=(3, -1)))
    assert sl.cost.bytes == 2 * 3 * 10 * 4
    pad = plan_kernel(OpSignature.make("Pad", [x], paddings=((1, 1), (0, 2))))
    assert pad.cost.bytes == 8 * 10 * 4 + 10 * 12 * 4
    split = plan_kernel(OpSignature.make("Split", [x], axis=1, output_num=5))
    assert split.cost.bytes == 2 * 8 * 10 * 4 and len(split.outputs) == 5
    ids = TensorDesc((8,), "int32")
    seg = plan_kernel(OpSignature.make("UnsortedSegmentSum", [x, ids], num_segments=5))
    assert seg.cost.bytes == 2 * 8 * 10 * 4 + seg.block_dim * 8 * 4 + 5 * 10 * 4 and seg.cost.transfers == 8
    assert seg.cost.vector_ops == 8 * 10 + 5 * 10


# --------------------------------------------------------------------------------- backward rules

def test_transpose_rule_is_the_inverse_permutation(ex):
    x = rand((2, 3, 4))
    perm = (2, 0, 1)
    check_rule(ex, "Transpose", [x], {"perm": perm}, lambda a: a.transpose(perm),
               lambda ct: [ct.transpose(np.argsort(perm))])


@pytest.mark.parametrize("jit_level", ["O0", "O2"])
def test_concat_rule_slices_dout_per_input(ex, jit_level):
    xs = [rand((2, 3, 2)), rand((2, 1, 2)), rand((2, 4, 2))]
    check_rule(ex, "Concat", xs, {"axis": -2}, lambda *a: np.concatenate(a, axis=1),
               lambda ct: np.split(ct, [3, 4], axis=1), jit_level=jit_level)


def test_split_rule_concatenates_douts_with_zeros_for_unused_outputs(ex):
    """Only output 1 reaches the result: the other sections' gradients are zeros."""
    x = rand((3, 6))
    got = check_rule(ex, "Split", [x], {"axis": 1, "output_num": 3}, lambda a: np.split(a, 3, axis=1)[1],
                     lambda ct: [np.concatenate([np.zeros((3, 2), np.float32), ct, np.zeros((3, 2), np.float32)],
                                                axis=1)], out_index=1)
    assert not got[1][:, :2].any() and not got[1][:, 4:].any()


def test_slice_rule_pads_dout_and_pad_rule_slices_it(ex):
    x = rand((4, 5, 3))
    check_rule(ex, "Slice", [x], {"begin": (1, 0, 2), "size": (2, -1, 1)}, lambda a: a[1:3, :, 2:3],
               lambda ct: [np.pad(ct, ((1, 1), (0, 0), (2, 0)))])
    pads = ((0, 2), (1, 1), (3, 0))
    check_rule(ex, "Pad", [x], {"paddings": pads}, lambda a: np.pad(a, pads), lambda ct: [ct[0:4, 1:6, 3:6]])


GATHER = {
    # params shape, indices, axis, dtype: repeated, out-of-range and negative indices, every axis
    "axis0-repeats": ((5, 3), [[4, 0], [4, 4]], 0, "float32"),
    "axis1-out-of-range": ((3, 4, 2), [1, 1, -1, 9, 0], 1, "float32"),
    "axis-1-matrix": ((2, 3, 4), [[3, 3, 0]], -1, "float32"),
    "scalar-index": ((3, 4), 2, 1, "float32"),
    "float16": ((6, 2, 3), [5, 1, 5, 5], 0, "float16"),
}


@pytest.mark.parametrize("case", list(GATHER))
def test_gather_rule_scatters_dout_with_unsorted_segment_sum(ex, case):
    shape, indices, axis, dtype = GATHER[case]
    p, idx = rand(shape, dtype), np.array(indices, np.int32)
    ax = axis % len(shape)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=2e-2, atol=2e-2)
    ct = rand(take_ref(p, idx, ax).shape, dtype)
    got = grads(ex, "Gather", [p, idx], {"axis": axis}, ct)
    np.testing.assert_array_equal(got[0], take_ref(p, idx, ax))
    assert got[1].dtype == p.dtype
    np.testing.assert_allclose(got[1], take_adjoint(shape, idx, ax, ct), **tol)
    if dtype == "float32":
        assert_grads_close(got[1:2], numeric_grads(lambda a, i: take_ref(a, idx, ax), [p, idx], ct, wrt=[0])[:1])
    assert not got[2].any()                       # indices: no gradient (zeros)


def test_gather_rule_at_o2(ex):
    p, idx = rand((3, 5, 2)), np.array([[4, 0, 4]], np.int32)
    ct = rand((3, 1, 3, 2))
    got = grads(ex, "Gather", [p, idx], {"axis": 1}, ct, jit_level="O2")
    np.testing.assert_allclose(got[1], take_adjoint(p.shape, idx, 1, ct), rtol=1e-6, atol=1e-6)


def test_unsorted_segment_sum_rule_gathers_dout_by_segment(ex):
    x, ids = rand((2, 3, 4)), np.array([[2, 0, 2], [5, -1, 1]], np.int32)

    def adjoint(ct):
        valid = ((ids >= 0) & (ids < 3))[..., None]
        return [np.where(valid, ct[np.clip(ids, 0, 2)], 0), None]
    check_rule(ex, "UnsortedSegmentSum", [x, ids], {"num_segments": 3},
               lambda a, i: segment_sum_ref(a, ids, 3), adjoint)


def test_rules_build_only_wanted_gradients():
    """Concat differentiated with respect to one input slices dout once; Gather's rule gives its
    indices nothing."""
    tracer = Tracer("wants")
    a = tracer.input(TensorDesc((2, 3), "float32"))
    b = tracer.input(TensorDesc((2, 5), "float32"))
    idx = tracer.input(TensorDesc((4,), "int32"))
    with tracer.active():
        (c,) = tracer.apply("Concat", [a, b], {"axis": 1})
        (g,) = tracer.apply("Gather", [c, idx], {"axis": 1})
        before = len(tracer.graph.nodes)
        (da,) = differentiate(tracer, g, [a])
    backward = [n.op for n in tracer.graph.nodes[before:]]
    assert backward.count("Slice") == 1 and backward.count("UnsortedSegmentSum") == 1
    assert tracer.graph.values[da] == TensorDesc((2, 3), "float32")


@settings(max_examples=4, deadline=None)
@given(data=st.data())
def test_slice_rule_over_shapes(ex, data):
    """Any window of any shape: the gradient is ct padded back into zeros at the window."""
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3), label="shape"))
    begin = tuple(data.draw(st.integers(0, n - 1)) for n in shape)
    size = tuple(data.draw(st.sampled_from([-1, 1, n - b])) for n, b in zip(shape, begin))
    x = rand(shape)
    window = tuple(slice(b, n if s == -1 else b + s) for n, b, s in zip(shape, begin, size))
    ct = rand(x[window].shape)
    got = grads(ex, "Slice", [x], {"begin": begin, "size": size}, ct)
    want = np.zeros_like(x)
    want[window] = ct
    np.testing.assert_array_equal(got[0], x[window])
    np.testing.assert_array_equal(got[1], want)


@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_gather_rule_over_shapes_and_axes(ex, data):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3), label="shape"))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = shape[axis]
    idx_shape = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="indices shape"))
    idx = np.array(data.draw(st.lists(st.integers(-1, n), min_size=int(np.prod(idx_shape)),
                                      max_size=int(np.prod(idx_shape)))), np.int32).reshape(idx_shape)
    p = rand(shape)
    ct = rand(take_ref(p, idx, axis % len(shape)).shape)
    got = grads(ex, "Gather", [p, idx], {"axis": axis}, ct)
    np.testing.assert_allclose(got[1], take_adjoint(shape, idx, axis % len(shape), ct), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------------------- bad inputs

F32 = ((4, 5), "float32")
BAD = [
    (("Slice", [F32], dict(begin=(5, 0), size=(1, 1))), r"begin\[0\]=5 is outside dimension 0 .* \(valid: 0\.\.4\)"),
    (("Slice", [F32], dict(begin=(1, 2), size=(1, 4))), r"size\[1\]=4 from begin\[1\]=2 does not fit .* 0\.\.3, or -1"),
    (("Slice", [F32], dict(begin=(1,), size=(1, 1))), r"attr begin=\(1,\) must be an int or a tuple of 2 ints"),
    (("Pad", [F32], dict(paddings=((1, -1), (0, 0)))), r"paddings=.* pairs \(before, after\) of ints >= 0"),
    (("Split", [F32], dict(axis=1, output_num=2)), r"output_num=2 does not divide dimension 1 .* ops.split"),
    (("Split", [F32], dict(axis=2, output_num=1)), r"attr axis=2 is out of range for rank 2"),
    (("UnsortedSegmentSum", [F32, ((4,), "float32")], dict(num_segments=3)),
     r"input 1 \(segment_ids\) has dtype float32; supported dtypes are \('int32',\)"),
    (("UnsortedSegmentSum", [F32, ((4,), "int32")], dict(num_segments=0)), r"num_segments 0: must be a positive int"),
    (("UnsortedSegmentSum", [F32, ((5,), "int32")], dict(num_segments=3)),
     r"segment_ids\) shape \(5,\) must be a non-empty prefix of input 0 \(x\) shape \(4, 5\)"),
]


@pytest.mark.parametrize("case,message", BAD, ids=[f"{c[0]}-{i}" for i, (c, _) in enumerate(BAD)])
def test_bad_signatures_raise_typed_errors(case, message):
    op, inputs, attrs = case
    with pytest.raises(InvalidParamError, match=message) as err:
        infer_outputs(OpSignature.make(op, inputs, **attrs))
    assert err.value.code is not None


def test_front_end_rejects_bad_arguments(ex):
    x = ms.Tensor(rand((4, 6)))
    with pytest.raises(InvalidParamError, match=r"split_size_or_sections=\[2, 3\] must be sizes >= 0 that sum "
                                                r"to dimension 1 .* \(6\)"):
        ops.split(x, [2, 3], axis=1)
    with pytest.raises(InvalidParamError, match="split_size_or_sections 0: must be a positive int"):
        ops.split(x, 0)
    with pytest.raises(InvalidParamError, match=r"padding=\[1, -1\] must be >= 0"):
        ops.pad(x, (1, -1))
    with pytest.raises(FeatureNotSupportedError, match="mode='replicate' is not supported"):
        ops.pad(x, (1, 1), mode="replicate")
    with pytest.raises(InvalidParamError, match="num_segments -1: must be a positive int"):
        ops.unsorted_segment_sum(x, ms.Tensor(np.zeros(4, np.int32)), -1)


# ------------------------------------------------------------------------------------- front end

def test_front_end_functions_match_numpy(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    a = rand((4, 7))
    x = ms.Tensor(a)
    parts = ops.split(x, 3, axis=1)                 # 7 = 3 + 3 + 1: Split of a Slice, then a Slice
    assert [p.shape for p in parts] == [(4, 3), (4, 3), (4, 1)]
    for p, w in zip(parts, np.split(a, [3, 6], axis=1)):
        np.testing.assert_array_equal(p.asnumpy(), w)
    (whole,) = ops.split(x, 9, axis=1)
    np.testing.assert_array_equal(whole.asnumpy(), a)
    halves = ops.Split(axis=0, output_num=2)(x)
    assert isinstance(halves, tuple) and len(halves) == 2
    np.testing.assert_array_equal(halves[1].asnumpy(), a[2:])
    np.testing.assert_array_equal(ops.slice(x, (1, 2), (-1, 3)).asnumpy(), a[1:, 2:5])
    np.testing.assert_array_equal(ops.Pad(((1, 0), (0, 2)))(x).asnumpy(), np.pad(a, ((1, 0), (0, 2))))
    # ops.pad pads the last dimension first
    np.testing.assert_array_equal(ops.pad(x, (1, 2), value=3.0).asnumpy(),
                                  np.pad(a, ((0, 0), (1, 2)), constant_values=3.0))
    ids = np.array([1, 0, 1, 3], np.int32)
    got = ops.UnsortedSegmentSum()(x, ms.Tensor(ids), 3)
    np.testing.assert_allclose(got.asnumpy(), segment_sum_ref(a, ids, 3), rtol=1e-6)


class Movement(nn.Cell):
    """transpose -> concat -> split -> gather, each through the public ops API."""

    def construct(self, x, y, idx):
        c = ops.concat((ops.transpose(x, (1, 0)), y), axis=1)         # (4, 3) ++ (4, 2) -> (4, 5)
        a, b = ops.split(c, [2, 3], axis=1)
        g = ops.gather(b, idx, 0)                                      # repeated rows
        return ops.sum(g * g) + ops.sum(a * 3.0)


class GradMovement(nn.Cell):
    def __init__(self):
        super().__init__()
        self.net = Movement()

    def construct(self, x, y, idx):
        return ms.grad(self.net, grad_position=(0, 1))(x, y, idx)


def movement_grads_ref(x, y, idx):
    c = np.concatenate([x.T, y], axis=1).astype(np.float64)
    b = c[:, 2:]
    db = np.zeros_like(b)
    np.add.at(db, idx, 2 * b[idx])
    dc = np.concatenate([np.full((4, 2), 3.0), db], axis=1)
    return dc[:, :3].T, dc[:, 3:]


@pytest.mark.parametrize("mode", [ms.GRAPH_MODE, ms.PYNATIVE_MODE])
def test_ms_grad_through_the_public_movement_ops(ex, restore_context, mode):
    ms.set_context(mode=mode)
    x, y, idx = rand((3, 4)), rand((4, 2)), np.array([0, 3, 3, 1, 0], np.int32)
    dx, dy = GradMovement()(ms.Tensor(x), ms.Tensor(y), ms.Tensor(idx))
    want_dx, want_dy = movement_grads_ref(x, y, idx)
    np.testing.assert_allclose(dx.asnumpy(), want_dx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dy.asnumpy(), want_dy, rtol=1e-5, atol=1e-5)
