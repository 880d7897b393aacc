"""A shape or an axis given as a Tensor argument of a GRAPH_MODE call (or of ``ms.grad``): the capture
reads it on the host, so the graph is specialised to its value (frontend/common/api.py ``_hold``), as
MindSpore 2.10 runs such calls (it compiles a dynamic output shape). Oracles: numpy, and central finite
differences for the gradient.
"""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.frontend.common.phase import PHASE_CACHE
from ascendemu.graph.capture import GraphCaptureError

from gradcheck import numeric_grads

X = np.array([[1.5], [-2.0]], np.float32)


class ExpandTo(nn.Cell):
    def construct(self, x, shape):
        return ops.Expand()(x, shape) * 2.0


@pytest.fixture(autouse=True)
def graph_mode(ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    yield


def test_a_shape_tensor_is_held_and_each_value_gets_its_graph():
    net = ExpandTo()
    for cols in (3, 2, 3):
        got = net(Tensor(X), Tensor(np.array([2, cols], np.int32))).asnumpy()
        np.testing.assert_array_equal(got, np.broadcast_to(X, (2, cols)) * 2.0)
    misses = PHASE_CACHE.misses
    net(Tensor(X), Tensor(np.array([2, 2], np.int32)))        # a value seen before: its phase again
    assert PHASE_CACHE.misses == misses


def test_grad_through_a_held_axis_matches_finite_differences():
    x = np.array([[0.3, -1.2, 2.0], [0.5, 0.1, -0.7]], np.float32)

    def f(t, axis):
        return (ops.CumulativeLogsumexp()(t, axis) * Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))).sum()

    got = ms.grad(f)(Tensor(x), Tensor(np.int32(1))).asnumpy()

    def ref(a):
        shift = a.max(1, keepdims=True)
        return np.log(np.cumsum(np.exp(a - shift), 1)) + shift

    want = numeric_grads(ref, [x], np.arange(6, dtype=np.float64).reshape(2, 3))[0]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_a_float_input_read_on_the_host_is_still_a_capture_error():
    class HostRead(nn.Cell):
        def construct(self, x):
            return Tensor(x.asnumpy() * 2)

    with pytest.raises(GraphCaptureError, match="data-dependent"):
        HostRead()(Tensor(X))
