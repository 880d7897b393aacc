"""Tensor methods routed to ops (frontend/ops/tensor_method.py): each registered method has the signature
MindSpore 2.10 records for it (frontend/signatures.json), computes what numpy computes, takes MindSpore's
older overload (the op's own parameters), and the in-place forms update the tensor in PyNative and in a
GRAPH_MODE capture. Oracles: numpy, values measured on MindSpore 2.10 (cited inline), the table."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import ArgumentError, InvalidParamError
from ascendemu.frontend import Tensor, nn
from ascendemu.frontend.api_coverage import load_table, rows_signature
from ascendemu.frontend.ops.tensor_method import TENSOR_METHODS


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


A = np.arange(6, dtype=np.float32).reshape(2, 3)


def _t(a=A):
    return Tensor(a.copy())


def test_every_registered_method_has_mindsporess_signature():
    entries = load_table()["entries"]
    checked = 0
    for name in TENSOR_METHODS:
        member = Tensor.__dict__.get(name)
        if member is None or isinstance(member, property) or member.__qualname__.startswith("Tensor."):
            continue                        # not served yet, a property, or the class's own method
        rows = entries[f"mindspore.Tensor.{name}"].get("signatures") or [[]]
        ours = list(inspect.signature(member).parameters.values())[1:]
        assert inspect.Signature(ours) == rows_signature(rows[0]), name
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("call, expected", [
    (lambda x: x.split(1, 0)[1], A[1:]),
    (lambda x: x.split([1, 2], 1)[1], A[:, 1:]),
    (lambda x: x.split(2, axis=1)[1], A[:, 2:]),                        # the older overload
    (lambda x: x.clip(1, 3), np.clip(A, 1, 3)),
    (lambda x: x.select(1, 2), A[:, 2]),
    (lambda x: x.where(x > 2, Tensor(0.0)), np.where(A > 2, A, 0)),
    (lambda x: x.resize(4, 2), np.array([[0, 1], [2, 3], [4, 5], [0, 0]], np.float32)),   # MindSpore 2.10
    (lambda x: x.resize((2, 2)), A.ravel()[:4].reshape(2, 2)),
    (lambda x: x[0:1].expand(3, -1), np.broadcast_to(A[0:1], (3, 3))),
    (lambda x: x.repeat(2, 1), np.tile(A, (2, 1))),
    (lambda x: x.tile((2,)), np.tile(A, (1, 2))),
    (lambda x: x.add(1, alpha=2), A + 2),
    (lambda x: x.sub(1, alpha=2), A - 2),
    (lambda x: x.multiply(2), A * 2),
    (lambda x: x.maximum(Tensor(2.0)), np.maximum(A, 2)),
    (lambda x: x.gather(1, Tensor(np.array([[0], [2]], np.int32))), np.array([[0.0], [5.0]])),  # MindSpore 2.10
    (lambda x: x.gather(Tensor(np.array([0], np.int32)), 1), A[:, [0]]),                       # older overload
    (lambda x: x.sort(0, True)[0], -np.sort(-A, 0)),
    (lambda x: x.permute(1, 0), A.T), (lambda x: x.permute((1, 0)), A.T), (lambda x: x.T, A.T), (lambda x: x.t(), A.T),
    (lambda x: x.unsqueeze(0), A[None]),
    (lambda x: x.view_as(Tensor(np.ones(6))), A.ravel()),
    (lambda x: x[0].broadcast_to(2, 3), np.broadcast_to(A[0], (2, 3))),
    (lambda x: x.softmax(1), np.exp(A) / np.exp(A).sum(1, keepdims=True)),
    (lambda x: x.copy(), A), (lambda x: x.clone(), A), (lambda x: x.numpy(), A),
    (lambda x: x.new_zeros((2,)), np.zeros(2)), (lambda x: x.new_ones(3), np.ones(3)),
    (lambda x: x.new_full((2, 2), 3), np.full((2, 2), 3.0)), (lambda x: x.fill(3), np.full((2, 3), 3.0)),
    (lambda x: x.cos(), np.cos(A.astype(np.float64))), (lambda x: x.floor(), np.floor(A / 2) if False else np.floor(A)),
])
def test_methods_compute_what_numpy_computes(call, expected):
    got = call(_t())
    got = got if isinstance(got, np.ndarray) else got.asnumpy()
    np.testing.assert_allclose(got, np.asarray(expected, np.float64).astype(np.float32), rtol=1e-6, atol=1e-6)


def test_metadata_and_casts():
    x = _t()
    assert (x.dim(), x.ndimension(), x.numel(), x.nelement(), x.is_contiguous()) == (2, 2, 6, 6, True)
    assert x.type() == "Float32" and x.type(ms.float16).dtype == ms.float16      # MindSpore 2.10: 'Float32'
    assert x.int().dtype == ms.int32 and x.half().dtype == ms.float16 and x.bool().dtype == ms.bool_
    assert x.to(ms.int32).dtype == ms.int32 and x.type_as(Tensor(np.ones(1, np.int32))).dtype == ms.int32
    np.testing.assert_array_equal(x.bool().asnumpy(), A != 0)


def test_inplace_methods_update_the_tensor_and_return_it():
    x = _t()
    assert x.add_(1, alpha=2) is x
    np.testing.assert_array_equal(x.asnumpy(), A + 2)
    x.mul_(Tensor(np.float32(3)))
    np.testing.assert_array_equal(x.asnumpy(), (A + 2) * 3)
    np.testing.assert_array_equal(_t().clamp_(1, 3).asnumpy(), np.clip(A, 1, 3))
    np.testing.assert_array_equal(_t().fill_(2).asnumpy(), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(_t().zero_().asnumpy(), np.zeros((2, 3)))
    y = _t().copy_(Tensor(np.array([7, 8, 9], np.int32)))          # broadcast, cast to the tensor's dtype
    assert y.dtype == ms.float32
    np.testing.assert_array_equal(y.asnumpy(), np.array([[7, 8, 9]] * 2, np.float32))
    c = _t()
    d = c.clone()
    d.add_(1)
    np.testing.assert_array_equal(c.asnumpy(), A)                   # a clone is its own tensor
    with pytest.raises(InvalidParamError, match="cannot broadcast"):
        Tensor(np.ones(3, np.float32)).mul_(Tensor(np.ones((2, 3), np.float32)))


def test_inplace_in_graph_mode_rebinds_the_tensor():
    class Net(nn.Cell):
        def construct(self, x):
            y = x * 1
            y.add_(x, alpha=2)
            return y.mul_(2)

    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(Net()(_t()).asnumpy(), A * 6)


def test_graph_mode_methods():
    class Net(nn.Cell):
        def construct(self, x):
            a, b = x.split([1, 2], 1)
            return b.clip(1, 4).repeat(2, 1) + a.expand(-1, 2).tile((2, 1))

    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(Net()(_t()).asnumpy(), np.tile(np.clip(A[:, 1:], 1, 4), (2, 1)) +
                               np.tile(np.broadcast_to(A[:, :1], (2, 2)), (2, 1)))


def test_wrong_calls_raise_pythons_text():
    x = _t()
    with pytest.raises(ArgumentError, match=r"split\(\) missing 1 required positional argument: 'split_size'"):
        x.split()
    with pytest.raises(InvalidParamError, match="stable"):
        x.sort(stable=True)
    with pytest.raises(ArgumentError, match="unexpected keyword argument 'foo'"):
        x.clip(foo=1)


def test_inplace_on_a_parameter_assigns_it_in_both_modes():
    p = ms.Parameter(Tensor(np.ones(3, np.float32)), name="p")
    p.add_(1)
    np.testing.assert_array_equal(p.asnumpy(), np.full(3, 2.0))

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(Tensor(np.ones(3, np.float32)), name="w")

        def construct(self, x):
            self.w.mul_(3)
            return self.w + x

    ms.set_context(mode=ms.GRAPH_MODE)
    net = Net()
    np.testing.assert_array_equal(net(Tensor(np.ones(3, np.float32))).asnumpy(), np.full(3, 4.0))
    np.testing.assert_array_equal(net.w.asnumpy(), np.full(3, 3.0))      # the graph's update reached it


# What MindSpore 2.10 CPU did with a list or tuple operand (measured: Tensor([1., 2.]) op [1., 2.] and the reverse):
# +, - and the base of ** convert it to a Tensor, == / != compare as Python (False / True); every other
# operator, the ops functions and the primitives raise TypeError ("Failed calling Mul with ...").
SEQUENCE_OPERANDS = [
    (lambda t, v: t + v, [2.0, 4.0]), (lambda t, v: v + t, [2.0, 4.0]), (lambda t, v: t - v, [0.0, 0.0]),
    (lambda t, v: v - t, [0.0, 0.0]), (lambda t, v: v ** t, [1.0, 4.0]), (lambda t, v: t.add(v), [2.0, 4.0]),
    (lambda t, v: t.sub(v), [0.0, 0.0]), (lambda t, v: t == v, False), (lambda t, v: t != v, True),
    (lambda t, v: t * v, TypeError), (lambda t, v: v / t, TypeError), (lambda t, v: t ** v, TypeError),
    (lambda t, v: t > v, TypeError), (lambda t, v: t.mul(v), TypeError), (lambda t, v: ms.ops.add(t, v), TypeError),
    (lambda t, v: ms.ops.Add()(t, v), TypeError), (lambda t, v: ms.ops.abs(v), TypeError),
]


@pytest.mark.parametrize("sequence", [list, tuple])
@pytest.mark.parametrize("call,expected", SEQUENCE_OPERANDS)
def test_list_and_tuple_operands_as_mindspore_takes_them(call, expected, sequence):
    t, v = Tensor(np.array([1.0, 2.0], np.float32)), sequence([1.0, 2.0])
    if expected is TypeError:
        with pytest.raises(TypeError, match="Failed calling"):
            call(t, v)
    elif isinstance(expected, bool):
        assert call(t, v) is expected
    else:
        np.testing.assert_array_equal(call(t, v).asnumpy(), np.array(expected, np.float32))
