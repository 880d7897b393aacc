"""The MindSpore-compatible front end: tensors, context, initializers, ops/nn, capture errors, and
GRAPH_MODE vs PyNative results through the numpy reference backend of tests/test_graph.py."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ascendemu.frontend as ms  # noqa: E402
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError  # noqa: E402
from ascendemu.frontend import Parameter, Tensor, context, nn, ops  # noqa: E402
from ascendemu.frontend.common import dtype as mstype  # noqa: E402
from ascendemu.frontend.common.initializer import HeUniform, XavierUniform, initializer  # noqa: E402
from ascendemu.frontend.unsupported import UnsupportedOpError  # noqa: E402
from ascendemu.graph.capture import GraphCaptureError  # noqa: E402
from examples.networks import LeNet5, TransformerEncoderLayer  # noqa: E402
from test_graph import NumpyBackend, eval_op  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_context():
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE, jit_config={"jit_level": context.DEFAULT_JIT_LEVEL})


@pytest.fixture
def backend():
    be = NumpyBackend()
    previous = ms.set_backend(be)
    yield be
    ms.set_backend(previous)


# ------------------------------------------------------------------------------------ tensors

def test_tensor_from_numpy_list_scalar():
    t = Tensor(np.array([1.0, 4.0, 9.0], np.float32))
    assert t.shape == (3,) and t.dtype == ms.float32 and t.dtype == mstype.float32
    np.testing.assert_array_equal(t.asnumpy(), [1, 4, 9])
    assert Tensor([[1, 2], [3, 4]]).dtype == mstype.int64            # MindSpore's dtypes: kept, not narrowed
    assert Tensor(np.zeros(2)).dtype == mstype.float64
    assert Tensor(2.5).shape == () and Tensor(2.5).item() == 2.5
    assert Tensor([1, 2], dtype=ms.float16).asnumpy().dtype == np.float16
    assert Tensor(shape=(2, 3), dtype=ms.float32, init="ones").asnumpy().sum() == 6
    with pytest.raises(InvalidParamError, match="not supported"):
        Tensor([1], dtype="complex32")


def test_tensor_printing_like_mindspore():
    t = Tensor(np.array([1.0, 16.0, 81.0], np.float32))
    assert str(t) == str(np.array([1.0, 16.0, 81.0], np.float32))
    assert repr(t).startswith("Tensor(shape=[3], dtype=Float32, value= [")
    assert repr(Tensor(np.ones((2, 2), np.float32))).startswith("Tensor(shape=[2, 2], dtype=Float32, value=\n[[")
    assert repr(ms.float16) == "mindspore.float16" and str(ms.int32) == "Int32"      # as MindSpore 2.10 prints them
    assert repr(ops.Square()) == "Prim[Square]"


def test_parameter_and_cell_registration():
    class Inner(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.ones((2, 2), np.float32)))
            self.frozen = Parameter(Tensor(np.zeros(2, np.float32)), name="stat", requires_grad=False)

        def construct(self, x):
            return x

    class Outer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.fc = nn.Dense(2, 3)
            self.bn = nn.BatchNorm2d(4)

    net = Outer()
    # BatchNorm's moving statistics come first, as in MindSpore (tests/test_first_contact.py checks its order)
    # an adopted cell's parameters are named by attribute path, as MindSpore 2.10 names them ("frozen", not
    # its own name "stat": tests/test_cell_names.py has the recorded cases)
    assert list(net.parameters_dict()) == ["inner.w", "inner.frozen", "fc.weight", "fc.bias", "bn.moving_mean",
                                           "bn.moving_variance", "bn.gamma", "bn.beta"]
    assert [p.name for p in net.trainable_params()] == ["inner.w", "fc.weight", "fc.bias", "bn.gamma", "bn.beta"]
    assert repr(net.fc.weight) == "Parameter (name=fc.weight, shape=(3, 2), dtype=Float32, requires_grad=True)"
    assert [name for name, _ in net.cells_and_names()] == ["", "inner", "fc", "bn"]
    # Parameters are initialised when made: MindSpore's {original: initialised} maps each to itself
    replaced = net.init_parameters_data()
    assert list(replaced) == list(net.get_parameters()) and all(k is v for k, v in replaced.items())

    class Broken(nn.Cell):
        def __init__(self):
            self.w = Parameter(Tensor([1.0]))

    with pytest.raises(InvalidParamError, match="super\\(\\).__init__"):
        Broken()


def test_initializers_are_seeded_and_follow_formulas():
    ms.set_seed(3)
    a = initializer("normal", (4, 5)).asnumpy()
    ms.set_seed(3)
    b = initializer("normal", (4, 5)).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, initializer("normal", (4, 5)).asnumpy())
    # as MindSpore's set_seed: numpy's global state (zoo init code draws np.random.normal) and the
    # dataset pipeline's seed follow it
    ms.set_seed(7)
    drawn = np.random.normal(0, 1, 3)
    np.random.seed(7)
    np.testing.assert_array_equal(drawn, np.random.normal(0, 1, 3))
    assert ms.dataset.config.get_seed() == 7
    assert initializer("zeros", 3).asnumpy().tolist() == [0, 0, 0]
    assert initializer("ones", (2,), ms.float16).asnumpy().dtype == np.float16
    xu = initializer(XavierUniform(), (300, 200)).asnumpy()
    assert np.abs(xu).max() <= math.sqrt(6 / 500) and np.abs(xu).max() > 0.9 * math.sqrt(6 / 500)
    he = initializer(HeUniform(math.sqrt(5)), (64, 100)).asnumpy()   # Dense default: bound 1/sqrt(fan_in)
    assert np.abs(he).max() <= 0.1 + 1e-7 and np.abs(he).max() > 0.09
    ms.set_seed(5)
    n1 = LeNet5().fc1.weight.asnumpy()
    ms.set_seed(5)
    np.testing.assert_array_equal(n1, LeNet5().fc1.weight.asnumpy())
    with pytest.raises(InvalidParamError, match="xavier_uniform"):
        initializer("glorot", (2, 2))


def test_set_seed_also_seeds_numpy_and_the_dataset_pipeline():
    """MindSpore's set_seed calls np.random.seed and dataset.config.set_seed: the zoo's ResNet draws its
    initial weights from np.random after ms.set_seed(1)."""
    from ascendemu.frontend.dataset import config as ds_config
    try:
        ms.set_seed(1)
        assert np.random.normal(size=3).tolist() == np.random.RandomState(1).normal(size=3).tolist()
        assert ds_config.get_seed() == 1 and ms.get_seed() == 1
        with pytest.raises(InvalidParamError, match="seed"):
            ms.set_seed(2**32)
    finally:
        ms.set_seed(0)
        ds_config.set_seed(ds_config.DEFAULT_SEED)


def conv2d_valid(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """NCHW convolution, stride 1, no padding, group 1, in plain numpy."""
    windows = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))   # N,C,H',W',kh,kw
    return np.einsum("nchwij,ocij->nohw", windows, w) + b[None, :, None, None]


def test_layers_take_a_tensor_and_every_initializer_mindspore_accepts(backend):
    rng = np.random.default_rng(7)
    w, b = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    dense = nn.Dense(3, 4, weight_init=Tensor(w), bias_init=Tensor(b))
    np.testing.assert_array_equal(dense.weight.asnumpy(), w)
    np.testing.assert_array_equal(dense.bias.asnumpy(), b)
    np.testing.assert_allclose(dense(Tensor(x)).asnumpy(), x @ w.T + b, rtol=1e-5, atol=1e-6)

    cw, cb = rng.standard_normal((2, 3, 3, 3)).astype(np.float32), rng.standard_normal(2).astype(np.float32)
    img = rng.standard_normal((1, 3, 6, 5)).astype(np.float32)
    conv = nn.Conv2d(3, 2, 3, pad_mode="valid", has_bias=True, weight_init=Tensor(cw), bias_init=Tensor(cb))
    np.testing.assert_array_equal(conv.weight.asnumpy(), cw)
    out = conv(Tensor(img)).asnumpy()
    assert out.shape == (1, 2, 4, 3)
    np.testing.assert_allclose(out, conv2d_valid(img, cw, cb), rtol=1e-5, atol=1e-5)

    # MindSpore's public attributes, which zoo init code reads (bias None without a bias)
    plain = nn.Conv2d(8, 8, (3, 1), stride=2, pad_mode="pad", padding=1, group=4)
    assert (plain.kernel_size, plain.stride, plain.dilation, plain.padding, plain.group) == ((3, 1), (2, 2),
                                                                                             (1, 1), 1, 4)
    assert plain.pad_mode == "pad" and plain.data_format == "NCHW" and plain.bias is None
    assert nn.Dense(3, 4, has_bias=False).bias is None and nn.Conv1d(2, 2, 3).bias is None
    assert nn.Conv2dTranspose(2, 2, 3).bias is None and not list(nn.Conv2dTranspose(2, 2, 3).get_parameters())[1:]

    # a numpy array; numbers, 0 included (a constant, not "use the default"); a one-element Tensor
    np.testing.assert_array_equal(nn.Dense(3, 4, weight_init=w.astype(np.float64)).weight.asnumpy(), w)
    zero = nn.Dense(3, 4, weight_init=0, bias_init=0)
    assert zero.weight.asnumpy().tolist() == [[0.0] * 3] * 4 and zero.bias.asnumpy().tolist() == [0.0] * 4
    np.testing.assert_array_equal(nn.Conv2d(3, 2, 3, weight_init=2.5).weight.asnumpy(), np.full((2, 3, 3, 3), 2.5))
    assert nn.Dense(3, 1, bias_init=Tensor(np.array([0.0], np.float32))).bias.asnumpy().tolist() == [0.0]
    # names and Initializer instances draw the same values from the seeded stream
    assert nn.Dense(3, 4, weight_init="zeros").weight.asnumpy().tolist() == [[0.0] * 3] * 4
    ms.set_seed(11)
    named = nn.Conv2d(3, 2, 3, weight_init="he_uniform").weight.asnumpy()
    ms.set_seed(11)
    np.testing.assert_array_equal(nn.Conv2d(3, 2, 3, weight_init=HeUniform()).weight.asnumpy(), named)
    bound = math.sqrt(3) * math.sqrt(2) / math.sqrt(3 * 3 * 3)     # leaky_relu slope 0 gain, fan_in 27
    assert np.abs(named).max() <= bound and np.abs(named).max() > 0.5 * bound
    normal = nn.Dense(400, 300, weight_init="normal").weight.asnumpy()          # Normal(sigma=0.01)
    assert abs(normal.std() - 0.01) < 0.0005 and abs(normal.mean()) < 0.0005

    with pytest.raises(InvalidParamError, match=r"Dense: weight_init has shape \(3, 4\), but this layer's "
                                                r"weight has shape \(4, 3\)"):
        nn.Dense(3, 4, weight_init=Tensor(w.T))
    with pytest.raises(InvalidParamError, match=r"Conv2d: bias_init has shape \(3,\), but this layer's "
                                                r"bias has shape \(2,\)"):
        nn.Conv2d(3, 2, 3, has_bias=True, bias_init=Tensor(np.zeros(3, np.float32)))
    with pytest.raises(InvalidParamError, match=r"init array has shape \(2,\), but shape \(3,\) is expected"):
        nn.LayerNorm((3,), gamma_init=Tensor(np.ones(2, np.float32)))


# ------------------------------------------------------------------------------------ context

def test_context_set_and_get():
    ms.set_context(mode=ms.GRAPH_MODE, device_target="Ascend", device_id=0, jit_config={"jit_level": "O1"})
    assert ms.get_context("mode") == context.GRAPH_MODE == 0
    assert ms.get_context("jit_config") == {"jit_level": "O1"} and ms.get_context("jit_level") == "O1"
    ms.set_device("Ascend", 1)
    assert ms.get_context("device_id") == 1
    ms.set_context(device_id=0)
    with pytest.raises(InvalidParamError, match="jit_level"):
        ms.set_context(jit_config={"jit_level": "O3"})
    with pytest.raises(InvalidParamError, match=r"Unsupported device target GPU\. This process only supports "
                                                r"one of the \['Ascend', 'CPU'\]"):
        ms.set_context(device_target="GPU")
    with pytest.warns(UserWarning, match="no CPU backend") as caught:    # an Ascend install accepts CPU
        ms.set_context(device_target="CPU")
    assert caught[0].filename == __file__ and ms.get_context("device_target") == "CPU"
    ms.set_context(device_target="Ascend")
    with pytest.raises(InvalidParamError, match="unknown key"):
        ms.set_context(mode=ms.PYNATIVE_MODE, no_such_key=1)
    assert ms.get_context("mode") == ms.GRAPH_MODE       # a rejected call changes nothing


def test_unsupported_ops_and_layers_name_the_op_and_list_the_subset():
    from ascendemu.frontend.api_coverage import coverage
    missing = {g.group: g.missing for g in coverage()}      # names still missing today, whichever they are
    prim = missing["ops-primitives"][0].rsplit(".", 1)[1]
    cell = missing["nn-cells"][0].rsplit(".", 1)[1]
    with pytest.raises(UnsupportedOpError) as err:
        getattr(ops, prim)()
    assert f"ops.{prim}" in str(err.value) and "`ascendemu api-coverage`" in str(err.value)
    assert isinstance(err.value, AttributeError) and isinstance(err.value, FeatureNotSupportedError)
    with pytest.raises(AttributeError, match=f"nn.{cell} is not supported.*api-coverage"):
        getattr(nn, cell)(1, 2)
    assert not hasattr(ops, prim) and hasattr(ops, "BatchMatMul")
    from ascendemu.frontend.ops import operations as P
    assert P.Square is ops.Square


# ------------------------------------------------------------------------------------ pynative

def test_pynative_without_backend_runs_on_the_emulated_device(tmp_path, monkeypatch):
    from ascendemu.graph.executor import DeviceExecutor
    from ascendemu.hal.runtime import get_runtime

    monkeypatch.setenv("MS_COMPILER_CACHE_PATH", str(tmp_path))
    previous = ms.set_backend(None)
    try:
        out = ops.Square()(Tensor([1.0, 4.0, 9.0]))
        np.testing.assert_array_equal(out.asnumpy(), [1, 16, 81])
        assert isinstance(ms.get_backend(), DeviceExecutor)
        assert len(list((tmp_path / "rank_0" / "kernel_meta").glob("square_*_0.o"))) == 1
    finally:
        ms.set_backend(previous)
        get_runtime().finalize()


def test_pynative_arithmetic_runs_ops(backend):
    x, y = Tensor(np.array([1.0, 2.0], np.float32)), Tensor(np.array([3.0, 4.0], np.float32))
    np.testing.assert_allclose((x * y + 1).asnumpy(), [4, 9])
    np.testing.assert_allclose((2 - x / y).asnumpy(), [2 - 1 / 3, 1.5], rtol=1e-6)
    np.testing.assert_allclose(ops.Square()(Tensor([1.0, 4.0, 9.0])).asnumpy(), [1, 16, 81])
    np.testing.assert_allclose(ops.reshape(x, (2, 1)).shape, (2, 1))
    half = Tensor(np.array([1.0, 2.0], np.float16))
    mixed = half + x                                     # float16 promoted to float32 by a Cast
    assert mixed.dtype == ms.float32
    assert (x > 1.5).asnumpy().tolist() == [False, True]


# ------------------------------------------------------------------------------------ graph mode

def test_graph_mode_matches_pynative(backend):
    ms.set_seed(0)
    net = LeNet5()
    x = Tensor(np.random.default_rng(0).standard_normal((2, 1, 32, 32)).astype(np.float32))
    eager = net(x).asnumpy()
    assert backend.graphs == []
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O1"})
    graph_out = net(x)
    graph, level = backend.graphs[-1]
    assert level == "O1" and len(graph.nodes) == 15
    assert graph_out.shape == (2, 10)
    np.testing.assert_allclose(graph_out.asnumpy(), eager, rtol=1e-5, atol=1e-6)


def test_graph_mode_transformer_and_tuple_outputs(backend):
    class Two(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layer = TransformerEncoderLayer(16, 2, 32)

        def construct(self, x):
            y = self.layer(x)
            return y, (x, 3)

    net = Two()
    x = Tensor(np.random.default_rng(1).standard_normal((2, 5, 16)).astype(np.float32))
    eager = net(x)[0].asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    y, (same, three) = net(x)
    np.testing.assert_allclose(y.asnumpy(), eager, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(same.asnumpy(), x.asnumpy())
    assert three == 3 and backend.graphs[-1][1] == context.DEFAULT_JIT_LEVEL


def test_jit_decorator_runs_a_graph_in_pynative(backend):
    @ms.jit
    def f(a, b):
        return ops.relu(a * b - 1)

    a = Tensor(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(f(a, a).asnumpy(), [0, 3])
    graph, _ = backend.graphs[-1]
    assert [n.op for n in graph.nodes] == ["Mul", "Sub", "ReLU"]
    assert graph.nodes[0].full_name == "Default/Mul-op1"

    class Net(nn.Cell):
        @ms.jit(jit_level="O0")
        def construct(self, x):
            return ops.exp(x)

    np.testing.assert_allclose(Net()(a).asnumpy(), np.exp([1.0, 2.0]), rtol=1e-6)
    assert backend.graphs[-1][1] == "O0"


def test_capture_records_square_like_the_seed():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.square = ops.Square()

        def construct(self, data):
            return self.square(data)

    graph, _ = ms.capture(Net(), Tensor(np.array([1.0, 4.0, 9.0], np.float32)))
    (node,) = graph.nodes
    assert node.op == "Square" and node.full_name == "Default/Square-op1"
    assert graph.values[node.outputs[0]].shape == (3,)


def test_static_python_loops_unroll():
    class Net(nn.Cell):
        def construct(self, x):
            for _ in range(3):
                x = x * 2.0
            if x.shape[0] > 1:          # a static condition (shape), allowed
                x = ops.exp(x)
            return x

    graph, _ = ms.capture(Net(), Tensor(np.ones((2, 2), np.float32)))
    assert [n.op for n in graph.nodes] == ["Mul", "Mul", "Mul", "Exp"]
    assert len(graph.constants) == 1         # the literal 2.0 is one constant, reused


# (a tensor `if`, `x if t else y` and `for r in t` compile now: tests/test_control_flow.py)
@pytest.mark.parametrize("body", ["float", "asnumpy", "item"])
def test_data_dependent_control_flow_is_rejected(body):
    class Net(nn.Cell):
        def construct(self, x):
            y = ops.exp(x)
            if body == "if_compare":
                if y > 0:
                    return y
            elif body == "bool":
                return y if y else x
            elif body == "float":
                return y * float(y)
            elif body == "iterate":
                return [r for r in y]
            elif body == "asnumpy":
                return Tensor(y.asnumpy())
            elif body == "item":
                return y.item()
            return y

    with pytest.raises(GraphCaptureError) as err:
        ms.capture(Net(), Tensor(np.ones(2, np.float32)))
    msg = str(err.value)
    assert "data-dependent control flow is not supported in GRAPH_MODE" in msg
    assert "PYNATIVE_MODE" in msg and "static" in msg


def test_capture_errors_name_the_op():
    class Bad(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, 4)

        def construct(self, x):
            return self.fc(x)

    with pytest.raises(InvalidParamError, match="while capturing Default/fc-Dense/MatMul-op1: MatMul"):
        ms.capture(Bad(), Tensor(np.ones((2, 5), np.float32)))


def test_type_promotion_inserts_cast():
    def f(a, b):
        return a * b + 1

    graph, _ = ms.capture(f, Tensor(np.ones(2, np.float16)), Tensor(np.ones(2, np.float32)))
    assert [n.op for n in graph.nodes] == ["Cast", "Mul", "Add"]
    assert graph.nodes[0].attrs == {"dst_type": "float32"}
    assert graph.values[graph.outputs[0]].dtype == "float32"


def test_numpy_reference_backend_agrees_with_library_shapes(backend):
    # The reference backend is the oracle of the graph-mode tests: make sure it honours the shapes
    # the kernel library infers for a few attribute-heavy ops.
    x = Tensor(np.random.default_rng(2).standard_normal((1, 2, 7, 7)).astype(np.float32))
    w = Tensor(np.ones((4, 1, 3, 3), np.float32))
    y = ops.Conv2D(4, 3, pad_mode="same", stride=2, group=2)(x, w)
    assert y.shape == (1, 4, 4, 4)
    pooled = ops.MaxPool(3, 2, "same")(x)
    assert pooled.shape == (1, 2, 4, 4)
    # a 3x3 conv of ones over a group's two channels = sum of the 3x3 window of both channels
    xp = np.pad(x.asnumpy(), ((0, 0), (0, 0), (1, 1), (1, 1)))
    np.testing.assert_allclose(y.asnumpy()[0, 0, 1, 1], xp[0, 0, 2:5, 2:5].sum(), rtol=1e-5)
    assert eval_op("Softmax", {"axis": -1}, [np.zeros((2, 4), np.float32)],
                   [ms.Tensor(np.zeros((2, 4), np.float32)).desc])[0].sum() == pytest.approx(2.0)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_tensor_equality_is_elementwise_like_mindspore(mode, backend):
    """`==` and `!=` are Equal/NotEqual ops giving bool tensors (not object identity), like `>`."""
    a = Tensor(np.array([1.0, 2.0, np.nan], np.float32))
    b = Tensor(np.array([1.0, 3.0, np.nan], np.float32))

    def compare(x, y):
        return x == y, x != y, x > y, x <= 2.0

    if mode == "graph":
        graph, _ = ms.capture(compare, a, b)
        assert [n.op for n in graph.nodes] == ["Equal", "NotEqual", "Greater", "LessEqual"]
        assert all(graph.values[v].dtype == "bool" for v in graph.outputs)
        return
    eq, ne, gt, le = compare(a, b)
    assert isinstance(eq, Tensor) and eq.dtype == mstype.bool_
    assert eq.asnumpy().tolist() == [True, False, False]
    assert ne.asnumpy().tolist() == [False, True, True]
    assert gt.asnumpy().tolist() == [False, False, False]
    assert le.asnumpy().tolist() == [True, True, False]
    assert (a == None) is False and (a != None) is True        # noqa: E711 (MindSpore's answer)
    assert len({a, b}) == 2                                     # still hashable by identity


def test_every_registry_exposure_exists_in_mindspore_ops():
    """The op registry is the one table: each op's primitive and functional names resolve in ops
    (generated ones from the registry, hand-written ones by name), and each primitive runs that op."""
    from ascendemu.kernels.registry import REGISTRY

    exposed = [op for op in REGISTRY.values() if op.frontend is not None]
    assert {"Add", "Equal", "MatMul", "Conv2D", "Softmax", "Gather"} <= {op.name for op in exposed}
    for op in exposed:
        for name in op.frontend.primitives:
            prim = getattr(ops, name)
            assert isinstance(prim, type) and issubclass(prim, ops.Primitive), name
            if op.frontend.generated:
                assert prim.op == op.name and repr(prim()) == f"Prim[{name}]"
        for name in op.frontend.functions:
            assert callable(getattr(ops, name)), name
    assert ops.RealDiv.op == "Div" and ops.ne is not ops.not_equal


def test_tensor_with_a_placeholder_shape_and_an_initializer_says_why():
    from ascendemu.frontend.common.initializer import One

    with pytest.raises(InvalidParamError, match=r"shape=\(-1, 3\) must be a tuple of non-negative ints"):
        Tensor(shape=(-1, 3), init=One())
    assert Tensor(shape=(2, 3), init=One(), dtype=ms.float32).asnumpy().sum() == 6
