"""MindSpore's graph-internal, scalar, sequence and debug primitives: ``ops.tuple_len``, ``make_dict``,
``scalar_add`` ..., ``ScalarCast``, ``DtypeToEnum``, the decorators (``add_flags``, ``op_info_register``,
``custom_info_register``, ``prim_arg_register``), ``TensorDump``/``tensordump``, ``Assert``,
``CheckNumerics``, the gradient hooks (``HookBackward``, ``InsertGradientOf``, ``Morph``) and the small
format/shape ops (``DataFormatDimMap``, ``DataFormatVecPermute``, ``Padding``, ``Eps``, ``dyn_shape``).

Oracles: hand-computed values and gradients (the chain rule on small products), numpy (``finfo``, casts,
gathers), MindSpore's documented example numbers (Morph's ``x_grad [400 1000 1800]``), and the files
read back with numpy. Real MindSpore's own answers are in the conformance family ``internals``.
"""
from __future__ import annotations

import importlib
import inspect
import os

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops

# the module (ops.op_info_register is the decorator, which shadows it there, as in MindSpore)
op_info_module = importlib.import_module("ascendemu.frontend.ops.op_info_register")


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def in_graph(fn, *args):
    """``fn(*args)`` as a GRAPH_MODE Cell's construct."""
    class Net(nn.Cell):
        def construct(self, *xs):
            return fn(*xs)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        return Net()(*args)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


# (call, expected): hand-computed
VALUE_CASES = [
    (lambda: ops.tuple_len((1, 2, 3)), 3), (lambda: ops.list_len([]), 0),
    (lambda: ops.make_tuple(1, "a"), (1, "a")), (lambda: ops.make_list(1, 2), [1, 2]),
    (lambda: ops.make_dict(("a", "b"), (1, 2)), {"a": 1, "b": 2}), (lambda: ops.make_slice(1, None, 2), slice(1, None, 2)),
    (lambda: ops.tuple_getitem((4, 5, 6), -1), 6), (lambda: ops.list_getitem([4, 5], 0), 4),
    (lambda: ops.tuple_setitem((1, 2, 3), -3, 0), (0, 2, 3)), (lambda: ops.list_setitem([1, 2], 1, 7), [1, 7]),
    (lambda: ops.dict_getitem({"k": 3}, "k"), 3), (lambda: ops.dict_setitem({"a": 1}, "a", 2), {"a": 2}),
    (lambda: ops.in_dict("a", {"a": 1}), True), (lambda: ops.not_in_dict("a", {"a": 1}), False),
    (lambda: ops.tuple_equal((1, 2), (1, 2)), True), (lambda: ops.list_equal([1], [1, 2]), False),
    (lambda: ops.tuple_reversed((1, 2, 3)), (3, 2, 1)), (lambda: ops.tuple_div((8, 9, -4), (2, 3, 2)), (4, 3, -2)),
    (lambda: ops.shape_mul((2, 3, 4)), 24), (lambda: ops.shape_mul(()), 1),
    (lambda: ops.reduced_shape((2, 3, 4), (0, -1)), (1, 3, 1)), (lambda: ops.reduced_shape((2, 3), ()), (1, 1)),
    (lambda: ops.is_(None, None), True), (lambda: ops.is_not(1, None), True),
    (lambda: ops.isconstant(2.5), True), (lambda: ops.is_sequence_shape_unknown((1, 2)), False),
    (lambda: ops.is_sequence_value_unknown([1, 2]), False),
    (lambda: ops.scalar_add(1, 2.5), 3.5), (lambda: ops.scalar_sub(1, 3), -2), (lambda: ops.scalar_mul(2, 3), 6),
    (lambda: ops.scalar_div(3, 2), 1.5), (lambda: ops.scalar_floordiv(-7, 2), -4), (lambda: ops.scalar_mod(-7, 2), 1),
    (lambda: ops.scalar_pow(2, 10), 1024), (lambda: ops.scalar_log(1.0), 0.0), (lambda: ops.scalar_uadd(-2), -2),
    (lambda: ops.scalar_usub(2.5), -2.5), (lambda: ops.scalar_max(2, 3.5), 3.5), (lambda: ops.scalar_min(2, 3.5), 2),
    (lambda: ops.scalar_eq(2, 2.0), True), (lambda: ops.scalar_ne(2, 3), True), (lambda: ops.scalar_lt(1, 2), True),
    (lambda: ops.scalar_le(2, 2), True), (lambda: ops.scalar_gt(1, 2), False), (lambda: ops.scalar_ge(1, 2), False),
    (lambda: ops.string_eq("ab", "ab"), True), (lambda: ops.string_concat("ab", "c"), "abc"),
    (lambda: ops.bool_and(True, False), False), (lambda: ops.bool_or(True, False), True),
    (lambda: ops.bool_eq(False, False), True),
    (lambda: ops.ScalarCast()(2.9, ms.int64), 2), (lambda: ops.scalar_cast(-2.9, ms.int64), -2),
    (lambda: ops.scalar_cast(3, ms.float64), 3.0), (lambda: ops.scalar_cast(0.0, ms.bool_), False),
    (lambda: ops.DtypeToEnum()("op", "dtype", ms.float32), 43), (lambda: ops.DtypeToEnum()("op", "dtype", ms.bool_), 30),
    (lambda: ops.TensorToTuple()(Tensor(np.array([1, 2], np.int32))), (1, 2)),
    (lambda: ops.UpdateState()(5, 6), 5), (lambda: ops.Partial()(lambda a, b: a - b, 10)(3), 7),
]


@pytest.mark.parametrize("k", range(len(VALUE_CASES)))
def test_python_value_internals_compute_what_python_does(k):
    call, expected = VALUE_CASES[k]
    got = call()
    assert got == expected and type(got) is type(expected), (got, expected)


def test_the_same_values_inside_a_graph_capture():
    """GRAPH_MODE runs them on the same Python values while capturing (MindSpore folds them)."""
    def body(x):
        n = ops.tuple_len(x.shape)
        size = ops.shape_mul(x.shape)
        keep = ops.reduced_shape(x.shape, (1,))
        return x * ops.scalar_add(n, size), ops.make_tuple(*keep), ops.bool_and(True, ops.isconstant(x))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, keep, const = in_graph(body, Tensor(x))
    np.testing.assert_array_equal(out.asnumpy(), x * 8)
    assert keep == (2, 1) and const is False                 # a graph input is not a constant


def test_errors_are_mindsporess_types():
    cases = [(lambda: ops.tuple_getitem((1, 2, 3), 3), IndexError), (lambda: ops.tuple_setitem((1,), 1, 0), IndexError),
             (lambda: ops.dict_getitem({"a": 1}, "b"), ValueError), (lambda: ops.tuple_len(3), RuntimeError),
             (lambda: ops.tuple_reversed([1]), TypeError), (lambda: ops.tuple_div((7,), (2,)), RuntimeError),
             (lambda: ops.tuple_div((4, 6), (2,)), RuntimeError), (lambda: ops.shape_mul([2, 3]), ValueError),
             (lambda: ops.reduced_shape((2, 3), (2,)), RuntimeError), (lambda: ops.make_slice(1, 2), RuntimeError),
             (lambda: ops.scalar_div(1, 0), ValueError), (lambda: ops.scalar_mod(1, 0), ValueError),
             (lambda: ops.scalar_log(0), ValueError), (lambda: ops.scalar_cast(1, ms.int32), ValueError),
             (lambda: ops.ScalarCast()(Tensor(1), ms.int64), TypeError),
             (lambda: ops.DtypeToEnum()("op", "dtype", 3), TypeError),
             (lambda: ops.is_sequence_shape_unknown(1), TypeError), (lambda: ops.string_eq("a", 1), TypeError)]
    for call, kind in cases:
        with pytest.raises(kind):
            call()


def test_primitive_instances_are_named_and_take_args_as_mindspore():
    assert repr(ops.tuple_len) == "Prim[sequence_len]" and repr(ops.make_tuple) == "Prim[MakeTuple]"
    assert [p.kind.name for p in inspect.signature(ops.tuple_getitem).parameters.values()] == ["VAR_POSITIONAL"]
    assert list(inspect.signature(ops.scalar_add).parameters) == ["x", "y"]
    assert repr(ops.scalar_add) == "Prim[ScalarAdd]"
    assert ops.bool_not(True).asnumpy().item() is False and ops.bool_not(True).dtype == ms.bool_   # PyNative: a Tensor
    np.testing.assert_array_equal(ops.bool_not(Tensor(np.array([True, False]))).asnumpy(), [False, True])


def test_scalar_cast_is_numpys_cast():
    for value in (2.5, -2.5, 7, True, 1e3):
        assert ops.scalar_cast(value, ms.int64) == int(np.float64(value).astype(np.int64))
        assert ops.scalar_cast(value, ms.float64) == float(value)


def test_decorators_register_and_return_the_function():
    def fn(v):
        return v + 1
    wrapped = ops.op_info_register({"op_name": "InternalsTestOp", "imply_type": "TBE"})(fn)
    assert wrapped(2) == 3 and wrapped.__name__ == "wrapped_function"
    assert op_info_module.REGISTERED["InternalsTestOp"]["imply_type"] == "TBE"
    with pytest.raises(TypeError):
        ops.op_info_register(3)(fn)
    custom = ops.custom_info_register("info", {"k": 1})(fn)
    assert custom(1) == 2 and custom.__name__ == "fn" and fn.reg_info == ("info", {"k": 1})
    flagged = ops.add_flags(fn, has_effect=True)
    assert flagged is fn and fn._func_graph_flags == {"has_effect": True}
    cell = ops.add_flags(nn.Dense(2, 2), defer_inline=True)
    assert cell.get_flags() == {"defer_inline": True}

    class Scaled(ops.PrimitiveWithInfer):
        @ops.prim_arg_register
        def __init__(self, alpha=2.0, axis=-1):
            self.extra = alpha * 2
    p = Scaled(alpha=0.5)
    assert (p.name, p.alpha, p.axis, p.extra, p.attrs["axis"], p.init_attrs) == (
        "Scaled", 0.5, -1, 1.0, -1, {"alpha": 0.5, "axis": -1})


def test_tensor_dump_names_files_as_mindspore(tmp_path):
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    ops.TensorDump()(str(tmp_path / "a.npy"), x)
    ops.tensordump(str(tmp_path / "deeper" / "b"), Tensor(np.array([1, 2], np.int32)), "in")
    ops.TensorDump()(str(tmp_path / "c"), x.astype(ms.bfloat16))
    files = sorted(os.path.relpath(p, tmp_path) for p in tmp_path.rglob("*.npy"))
    ids = [int(f.rsplit("_", 1)[1][:-4]) for f in files]
    assert [f.rsplit("_", 1)[0] for f in files] == ["a_float32", "c_bfloat16", os.path.join("deeper", "b_int32")]
    assert ids[0] + 2 == ids[1] and ids[0] + 1 == ids[2]        # one process-wide counter, in call order
    np.testing.assert_array_equal(np.load(tmp_path / files[0]), x.asnumpy())
    assert np.load(tmp_path / files[1]).dtype == np.float32 and np.load(tmp_path / files[2]).dtype == np.int32
    with pytest.raises(ValueError):
        ops.TensorDump("both")
    with pytest.raises(ValueError, match="'all'"):
        ops.tensordump("x", x, "all")
    with pytest.raises(ValueError):
        ops.TensorDump()("", x)
    # GRAPH_MODE: the graph's value is written after each run, under the next number
    def body(t):
        y = t * 2
        ops.TensorDump()(str(tmp_path / "g"), y)
        return y + 1
    np.testing.assert_array_equal(in_graph(body, x).asnumpy(), x.asnumpy() * 2 + 1)
    (dumped,) = tmp_path.glob("g_float32_*.npy")
    assert int(dumped.name.rsplit("_", 1)[1][:-4]) == ids[0] + 3
    np.testing.assert_array_equal(np.load(dumped), x.asnumpy() * 2)


def test_assert_prints_its_data_and_raises(capsys):
    x = Tensor(np.array([1.5, 2.5, 3.5, 4.5], np.float32))
    assert ops.Assert()(Tensor(True), [x]).shape == (1,)
    with pytest.raises(RuntimeError, match="assert failed"):
        ops.Assert(summarize=2)(Tensor(np.array([False])), [x])
    printed = capsys.readouterr().out
    assert "For 'Assert' condition is false." in printed and "[1.5 2.5]" in printed
    for bad, kind in ((lambda: ops.Assert()(Tensor(1), [x]), TypeError),
                      (lambda: ops.Assert()(Tensor(np.array([True, True])), [x]), ValueError),
                      (lambda: ops.Assert(1.5), TypeError)):
        with pytest.raises(kind):
            bad()


def test_check_numerics():
    x = Tensor(np.array([1.0, 2.0], np.float32))
    assert ops.CheckNumerics()(x) is x
    for bad, text in ((np.nan, "NaN"), (np.inf, "Inf")):
        with pytest.raises(RuntimeError, match=text):
            ops.CheckNumerics()(Tensor(np.array([1.0, bad], np.float32)))
    with pytest.raises(TypeError):
        ops.CheckNumerics()(Tensor(np.array([1, 2], np.int32)))


def test_hook_backward_replaces_the_gradient_pynative_and_graph():
    """f = hook(x * y) * 2, the hook triples the gradient: df/dx = 6 y, df/dy = 6 x."""
    seen = []

    def hook(grads):
        seen.append(len(grads))
        return grads[0] * 3

    hb = ops.HookBackward(hook)

    def f(x, y):
        return hb(x * y) * 2
    x, y = np.array([1.0, 2.0], np.float32), np.array([3.0, 5.0], np.float32)
    np.testing.assert_array_equal(f(Tensor(x), Tensor(y)).asnumpy(), x * y * 2)
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        gx, gy = ms.grad(f, grad_position=(0, 1))(Tensor(x), Tensor(y))
        np.testing.assert_allclose(gx.asnumpy(), 6 * y)
        np.testing.assert_allclose(gy.asnumpy(), 6 * x)
    assert seen and set(seen) == {1}
    # a hook returning None keeps the gradient; two inputs come back as a tuple
    keep = ops.HookBackward(lambda grads: None)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    g = ms.grad(lambda a: keep(a * 4) * 1.0)(Tensor(x))
    np.testing.assert_allclose(g.asnumpy(), [4.0, 4.0])
    a, b = ops.HookBackward(lambda grads: None)(Tensor(x), Tensor(y))
    np.testing.assert_array_equal(b.asnumpy(), y)
    with pytest.raises(TypeError):
        ops.HookBackward(3)


def test_insert_gradient_of_clips_the_gradient():
    """f = clip(x * y) * 1: the gradient of the product (1) clipped to 0.5, so df/dx = 0.5 y."""
    clip = ops.InsertGradientOf(lambda g: ops.clip_by_value(g, -0.5, 0.5))
    x, y = np.array([1.0, 2.0], np.float32), np.array([3.0, 5.0], np.float32)

    class Net(nn.Cell):
        def construct(self, a, b):
            return clip(a * b) * 1.0
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        gx, gy = ops.GradOperation(get_all=True)(Net())(Tensor(x), Tensor(y))
        np.testing.assert_allclose(gx.asnumpy(), 0.5 * y)
        np.testing.assert_allclose(gy.asnumpy(), 0.5 * x)


class MorphNet(nn.Cell):
    """MindSpore's documented Morph example (ops.Morph's docstring)."""

    def __init__(self, bprop_fn=None):
        super().__init__()
        self.weight0 = Parameter(Tensor(np.array([1.0, 2.0, 3.0], np.float32)), name="weight0")
        self.weight1 = Parameter(Tensor(np.array([4.0, 5.0, 6.0], np.float32)), name="weight1")
        self.mul_by_100 = ops.Morph(lambda x: 100 * x, lambda a: a, lambda a: a, bprop_fn)

    def construct(self, x):
        return self.mul_by_100(x * self.weight0) * self.weight1


def test_morph_runs_its_function_in_graph_mode_with_mindsporess_gradients():
    ms.set_context(mode=ms.GRAPH_MODE)
    x = Tensor(np.array([7.0, 8.0, 9.0], np.float32))
    net = MorphNet()
    (x_grad,), (w0_grad, w1_grad) = ops.GradOperation(get_all=True, get_by_list=True)(net, net.trainable_params())(x)
    np.testing.assert_allclose(x_grad.asnumpy(), [400.0, 1000.0, 1800.0])       # MindSpore's documented numbers
    np.testing.assert_allclose(w0_grad.asnumpy(), [2800.0, 4000.0, 5400.0])
    np.testing.assert_allclose(w1_grad.asnumpy(), [700.0, 1600.0, 2700.0])
    # a user bprop replaces fn's own gradient: d(in) = dout * 10 instead of dout * 100
    net = MorphNet(bprop_fn=lambda a, out, dout: (dout * 10,))
    np.testing.assert_allclose(net(x).asnumpy(), [2800.0, 8000.0, 16200.0])
    (x_grad,), (w0_grad, _) = ops.GradOperation(get_all=True, get_by_list=True)(net, net.trainable_params())(x)
    np.testing.assert_allclose(x_grad.asnumpy(), [40.0, 100.0, 180.0])
    np.testing.assert_allclose(w0_grad.asnumpy(), [280.0, 400.0, 540.0])
    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(RuntimeError, match="only supported in GRAPH_MODE"):
        net(x)


def test_data_format_ops_against_numpy():
    src, dst = "NHWC", "NCHW"
    position = np.array([src.index(c) for c in dst])
    x = np.array([-4, -3, -2, -1, 0, 1, 2, 3], np.int32)
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        got = in_graph(lambda t: ops.DataFormatDimMap()(t), Tensor(x)) if mode == ms.GRAPH_MODE else \
            ops.DataFormatDimMap()(Tensor(x))
        np.testing.assert_array_equal(got.asnumpy(), position[x % 4])
    ms.set_context(mode=ms.PYNATIVE_MODE)
    v = np.arange(8, dtype=np.int64).reshape(4, 2)
    np.testing.assert_array_equal(ops.DataFormatVecPermute()(Tensor(v)).asnumpy(), v[position])
    with pytest.raises(ValueError):
        ops.DataFormatVecPermute()(Tensor(np.arange(3, dtype=np.int32)))
    with pytest.raises(ValueError):
        ops.DataFormatDimMap("NHWC", "HWCN")
    with pytest.raises(TypeError):
        ops.DataFormatDimMap()(Tensor(np.ones(2, np.float32)))


def test_shape_and_fill_ops_against_numpy():
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    np.testing.assert_array_equal(ops.padding(Tensor(x), 4).asnumpy(), np.pad(x, ((0, 0), (0, 3))))
    with pytest.raises(ValueError):
        ops.Padding(4)(Tensor(np.ones((2, 2), np.float32)))
    for dtype in (np.float16, np.float32, np.float64):
        got = ops.eps(Tensor(np.ones((2, 2), dtype)))
        assert got.asnumpy().dtype == dtype and (got.asnumpy() == np.finfo(dtype).eps).all()
    shape = ops.dyn_shape(Tensor(np.ones((2, 3, 4), np.float32)))
    assert shape.dtype == ms.int64 and shape.asnumpy().tolist() == [2, 3, 4]
    a, b = ops.IdentityN()((Tensor(x), Tensor(np.array([1], np.int32))))
    np.testing.assert_array_equal(a.asnumpy(), x)
    np.testing.assert_array_equal(ops.deepcopy(Tensor(x)).asnumpy(), x)
    np.testing.assert_array_equal(ops.tensor_range(Tensor(5), Tensor(0), Tensor(-2)).asnumpy(), [5, 3, 1])
