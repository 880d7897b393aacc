"""Model-zoo idioms real MindSpore 2.10 accepts (issue 22, item 5), each checked against what MindSpore
returned or raised for the same call (recorded by hand from /work/msvenv, quoted in each test): an
``Initializer`` subclass written for MindSpore (``_initialize(arr)``), ``Parameter.value()`` and
``Tensor.value()``, ``TupleToArray`` of a ``range``, ``TrainOneStepWithLossScaleCell.hyper_map``, and
MatMul refusing float16 by float32 (MindSpore's TypeError, not a silent Cast), ReduceMax over an empty axis
tuple, zero gradients through an integer output and Erfinv. Elsewhere: the Ascend overflow-status ops
(tests/test_detection_ops.py: MindSpore CPU has none) and out-of-range Gather (tests/test_kernel_faults.py)."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops
from ascendemu.frontend.common.initializer import Initializer, initializer


class Threes(Initializer):
    """A user's initializer in MindSpore's protocol: fill ``arr`` in place."""

    def _initialize(self, arr):
        arr[:] = 3.0
        arr[0, 0] = -1.0


def test_an_initializer_subclass_fills_through_initialize(ex):
    got = initializer(Threes(), [2, 2], ms.float32).init_data().asnumpy()
    np.testing.assert_array_equal(got, [[-1.0, 3.0], [3.0, 3.0]])
    w = Parameter(initializer(Threes(), [2, 3], ms.float16), name="w")
    assert w.dtype == ms.float16 and w.asnumpy().tolist() == [[-1.0, 3.0, 3.0], [3.0, 3.0, 3.0]]


def test_parameter_value_is_a_load_and_tensor_value_is_itself(ex):
    p = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="p")
    v = p.value()
    assert type(v) is Tensor and v is not p and v.asnumpy().tolist() == [1.0, 2.0]   # MindSpore: a Tensor, not p
    t = Tensor(np.ones(2, np.float32))
    assert t.value() is t                                                       # MindSpore: `return self`

    class LoadThenAssign(nn.Cell):
        """The value loaded before an assign keeps the old values (a Load), the parameter has the new."""

        def __init__(self):
            super().__init__()
            self.p = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="p")

        def construct(self, x):
            before = self.p.value()
            ops.assign(self.p, x)
            return before * 10 + self.p

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        net = LoadThenAssign()
        out = net(Tensor(np.array([5.0, 7.0], np.float32)))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert out.asnumpy().tolist() == [15.0, 27.0]
    assert net.p.asnumpy().tolist() == [5.0, 7.0]


def test_tuple_to_array_takes_a_range():
    r = ops.TupleToArray()(range(2, 6))
    assert (r.dtype, r.asnumpy().tolist()) == (ms.int32, [2, 3, 4, 5])


def test_loss_scale_cell_has_mindsporess_hyper_map(ex):
    net = nn.Dense(2, 2)
    cell = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()),
                                            nn.Momentum(net.trainable_params(), 0.1, 0.9), scale_sense=Tensor(1.0))
    assert isinstance(cell.hyper_map, ops.HyperMap)
    grads = (Tensor(np.array([2.0], np.float32)), Tensor(np.array([4.0], np.float32)))
    halved = cell.hyper_map(lambda g: g / 2, grads)
    assert [g.asnumpy().tolist() for g in halved] == [[1.0], [2.0]]


@pytest.mark.parametrize("op", [ops.MatMul(), ops.BatchMatMul()])
def test_matmul_of_float16_by_float32_is_mindsporess_type_error(ex, op):
    a, b = Tensor(np.ones((2, 2), np.float16)), Tensor(np.ones((2, 2), np.float32))
    # MindSpore 2.10: "For 'MatMul', the type of 'x2' should be same as 'x1', but got 'x1' with type
    # Tensor[Float16] and 'x2' with type Tensor[Float32]."
    with pytest.raises(TypeError, match=r"the type of 'x2' should be same as 'x1', but got 'x1' with type "
                                        r"Tensor\[Float16\] and 'x2' with type Tensor\[Float32\]"):
        op(a, b)
    np.testing.assert_array_equal(op(a, Tensor(np.ones((2, 2), np.float16))).asnumpy(), np.full((2, 2), 2.0))


def test_reduce_max_over_an_empty_axis_tuple_reduces_every_axis(ex):
    x = Tensor(np.array([[1.0, -2.0], [3.0, 0.5]], np.float32))
    # MindSpore 2.10: ReduceMax()(x, ()) -> 3.0 (Float32, shape ()); keep_dims=True -> [[3.0]]
    assert ops.ReduceMax()(x, ()).asnumpy().tolist() == 3.0 and ops.ReduceMax()(x, ()).shape == ()
    assert ops.ReduceMax(keep_dims=True)(x, ()).asnumpy().tolist() == [[3.0]]


def test_the_gradient_through_an_op_with_an_integer_output_is_zeros(ex):
    x = Tensor(np.array([[1.0, -2.0], [3.0, 0.5]], np.float32))
    # MindSpore 2.10: grad(lambda a: cast(argmax(a, 1), float32).sum())(x) -> [[0, 0], [0, 0]]
    g = ms.grad(lambda a: ops.cast(ops.argmax(a, 1), ms.float32).sum())(x)
    assert (g.dtype, g.asnumpy().tolist()) == (ms.float32, [[0.0, 0.0], [0.0, 0.0]])
    # the float path beside it keeps its gradient: d/da sum(a * argmax) is argmax broadcast ([1, 0] -> rows)
    y = Tensor(np.array([[1.0, 2.0], [3.0, 0.5]], np.float32))
    g = ms.grad(lambda a: (a * ops.cast(ops.Argmax()(a), ms.float32)).sum())(y)
    assert g.asnumpy().tolist() == [[1.0, 0.0], [1.0, 0.0]]


def test_erfinv_is_mindsporess(ex):
    # MindSpore 2.10: Erfinv()([0, 0.5, -0.9]) -> [0.0, 0.47693628, -1.1630871] (float32)
    out = ops.Erfinv()(Tensor(np.array([0.0, 0.5, -0.9], np.float32)))
    np.testing.assert_allclose(out.asnumpy(), [0.0, 0.4769362807273865, -1.1630871295928955], rtol=2e-7, atol=0)
