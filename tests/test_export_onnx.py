"""``ms.export(..., file_format="ONNX")``: the example networks and the zoo's ops as ONNX models that
``onnx.checker`` accepts (full check: strict shape inference against every shape export declares)
and onnxruntime runs to the emulator's own outputs and to independent numpy references
(examples/reference.py and the formulas here); the graph's names, shapes and dtypes; eval mode;
typed errors; a failed export never leaves a torn or temporary file.
"""
from __future__ import annotations

import os
import resource
import stat
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import numpy_helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import ascendemu.frontend as ms  # noqa: E402
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError  # noqa: E402
from ascendemu.frontend import Parameter, Tensor, nn, ops  # noqa: E402
from ascendemu.frontend.onnx_export import LOWERINGS, ONNX_OPSET, ExportTypeError, ExportValueError  # noqa: E402
from ascendemu.frontend.unsupported import UnsupportedOpError  # noqa: E402
from ascendemu.graph.ir import NO_TASK_OPS  # noqa: E402
from ascendemu.kernels.registry import REGISTRY  # noqa: E402
from examples import reference as ref  # noqa: E402
from examples.networks import MLP, LeNet5, ResNet18, TransformerEncoderLayer  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
WEIGHT_SEED, INPUT_SEED = 7, 3
# shapes as tests/test_networks.py's, so that the two share kernels
NETWORKS = {
    "mlp": (lambda: MLP(64, (32, 16), 10), (4, 64), ref.mlp),
    "lenet5": (LeNet5, (2, 1, 32, 32), ref.lenet5),
    "resnet18": (ResNet18, (1, 3, 16, 16), ref.resnet18),
    # dropout > 0: exported in training mode, the model must still be the eval-mode network
    "transformer": (lambda: TransformerEncoderLayer(16, 2, 32, dropout=0.25), (2, 4, 16),
                    lambda p, x: ref.transformer_encoder_layer(p, x, nhead=2)),
}


def build(name: str) -> tuple[nn.Cell, np.ndarray, dict[str, np.ndarray]]:
    """The network with seeded weights; BatchNorm statistics and affine parameters drawn at random
    so that exporting the moving statistics (not batch statistics, not defaults) is visible."""
    factory, shape, _ = NETWORKS[name]
    ms.set_seed(WEIGHT_SEED)
    net = factory()
    rng = np.random.default_rng(WEIGHT_SEED)
    for pname, p in net.parameters_dict().items():
        if pname.endswith(("moving_mean", "beta")):
            p.set_data(rng.normal(0.0, 0.2, p.shape))
        elif pname.endswith(("moving_variance", "gamma")):
            p.set_data(rng.uniform(0.5, 1.5, p.shape))
    x = np.random.default_rng(INPUT_SEED).standard_normal(shape).astype(np.float32)
    return net, x, {k: p.asnumpy() for k, p in net.parameters_dict().items()}


def session(path: Path) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def export(net, *inputs, path: Path, **kwargs) -> Path:
    ms.export(net, *inputs, file_name=str(path), file_format="ONNX", **kwargs)
    return path.with_name(path.name + ".onnx")


@pytest.fixture(scope="module")
def executor(ex):
    """The shared device (conftest), with the context put back after the module's tests."""
    saved = {k: ms.get_context(k) for k in ("mode", "jit_config")}
    yield ex
    ms.set_context(**saved)


# ------------------------------------------------------------------------------------------ networks

@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_network_runs_in_onnxruntime_like_the_emulator_and_numpy(executor, tmp_path, name):
    net, x, params = build(name)
    net.set_train(True)
    path = export(net, Tensor(x), path=tmp_path / name)
    assert all(cell.training for _, cell in net.cells_and_names())       # each cell's mode restored
    assert stat.S_IMODE(path.stat().st_mode) == stat.S_IRUSR             # read-only, as MindSpore leaves it
    assert sorted(os.listdir(tmp_path)) == [path.name]                   # no temp file left

    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", ONNX_OPSET)]
    # every parameter is an initializer of its own name holding its values
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for pname, value in params.items():
        np.testing.assert_array_equal(inits[pname], value)

    want = NETWORKS[name][2](params, x)
    sess = session(path)
    assert [(i.name, i.shape, i.type) for i in sess.get_inputs()] == [("x", list(x.shape), "tensor(float)")]
    (out,) = sess.get_outputs()
    assert out.name.isdigit() and out.shape == list(want.shape) and out.type == "tensor(float)"
    got = sess.run(None, {"x": x})[0]

    net.set_train(False)
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O2"})
    emulated = net(Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, emulated, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


# ------------------------------------------------------------------------------- the zoo's ops

def same_pads(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """MindSpore's pad_mode="same": out = ceil(size / stride), the padding split with the extra
    row at the end."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def pool_ref(x: np.ndarray, kernel: int, stride: int, same: bool, reduce) -> np.ndarray:
    """Pooling over windows clipped to the input (padding is never part of a window)."""
    n, c, h, w = x.shape
    (pt, _), (pl, _) = (same_pads(h, kernel, stride), same_pads(w, kernel, stride)) if same else ((0, 0), (0, 0))
    oh = -(-h // stride) if same else (h - kernel) // stride + 1
    ow = -(-w // stride) if same else (w - kernel) // stride + 1
    out = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * stride - pt, j * stride - pl
            out[:, :, i, j] = reduce(x[:, :, max(h0, 0):h0 + kernel, max(w0, 0):w0 + kernel], axis=(2, 3))
    return out


class Zoo(nn.Cell):
    """The zoo's other ops in one network of four outputs: x (2, 4, 9, 9) float32, idx (2, 5) int32."""

    def __init__(self, rng: np.random.Generator):
        super().__init__()

        def param(name: str, values: np.ndarray) -> Parameter:
            return Parameter(Tensor(values.astype(np.float32)), name=name)

        self.weight = param("weight", rng.standard_normal((6, 2, 3, 3)))
        self.bias = param("bias", rng.standard_normal(6))
        self.table = param("table", rng.standard_normal((10, 3)))
        self.gamma = param("gamma", rng.uniform(0.5, 1.5, 3))
        self.beta = param("beta", rng.standard_normal(3))
        self.conv = ops.Conv2D(out_channel=6, kernel_size=3, pad_mode="same", stride=2, dilation=2, group=2)
        self.bias_add = ops.BiasAdd()
        self.avg = ops.AvgPool(kernel_size=3, strides=2, pad_mode="same")
        self.sum = ops.ReduceSum()
        self.max = ops.ReduceMax(keep_dims=True)
        self.concat = ops.Concat(axis=1)
        self.split = ops.Split(axis=1, output_num=3)
        self.gather = ops.Gather()
        self.layer_norm = ops.LayerNorm(begin_norm_axis=1, begin_params_axis=-1)
        self.log_softmax = ops.LogSoftmax(axis=1)
        self.dropout = ops.Dropout(keep_prob=0.5)
        self.pad = ops.Pad(((0, 0), (1, 2), (0, 1)))
        self.slice = ops.Slice()
        self.squeeze = ops.Squeeze(3)
        self.broadcast = ops.BroadcastTo((2, 5, 4))
        self.cast = ops.Cast()
        self.gram = ops.MatMul(transpose_a=True)
        self.bmm = ops.BatchMatMul(transpose_a=True)

    def construct(self, x, idx):
        y = self.avg(self.bias_add(self.conv(x, self.weight), self.bias))             # (2, 6, 3, 3)
        r = self.sum(y, (2, 3))                                                          # (2, 6)
        s0, s1, s2 = self.split(self.concat((r, ops.neg(r))))                            # 3 x (2, 4)
        a = ops.div(s0 * ops.sigmoid(s1) - ops.tanh(s2), 1.0 + ops.square(s0))
        a = ops.maximum(ops.minimum(a, 0.5), -0.5) + ops.rsqrt(ops.abs(s1) + 1.0)
        a = a * self.cast(ops.greater(s2, 0.0), ms.float32) - self.cast(ops.not_equal(s0, s1), ms.float32)
        a = self.log_softmax(a + ops.sqrt(ops.exp(s0) + 1.0))
        b = self.cast(self.cast(self.broadcast(ops.expand_dims(a, 1)), ms.float16), ms.float32)   # (2, 5, 4)
        g = self.layer_norm(self.gather(self.table, idx, 0), self.gamma, self.beta)[0]   # (2, 5, 3)
        g = self.dropout(ops.stop_gradient(g))[0]
        p = ops.reshape(self.pad(ops.transpose(g, (0, 2, 1))), (2, 36))                 # (2, 3, 5) -> (2, 6, 6)
        m = self.slice(self.squeeze(self.max(y, -1)), (0, 1, 0), (2, 3, -1))             # (2, 3, 3)
        return p, b, ops.log(ops.pow(m, 2.0) + 1.0) + self.bmm(g, g), self.gram(r, r)


def zoo_reference(params: dict[str, np.ndarray], x: np.ndarray, idx: np.ndarray) -> list[np.ndarray]:
    pads = same_pads(9, 3, 2, 2) * 2
    conv = ref.conv2d(x, params["weight"], stride=2, pad=pads, dilation=2, group=2)
    y = pool_ref(conv + params["bias"][:, None, None], 3, 2, True, np.mean)
    r = y.sum(axis=(2, 3))
    s0, s1, s2 = np.split(np.concatenate([r, -r], axis=1), 3, axis=1)
    a = (s0 / (1 + np.exp(-s1)) - np.tanh(s2)) / (1 + s0 ** 2)
    a = np.clip(a, -0.5, 0.5) + 1 / np.sqrt(np.abs(s1) + 1)
    a = a * (s2 > 0) - (s0 != s1)
    a = a + np.sqrt(np.exp(s0) + 1)
    a = a - a.max(axis=1, keepdims=True)
    a = a - np.log(np.exp(a).sum(axis=1, keepdims=True))
    b = np.broadcast_to(a.astype(np.float16).astype(np.float64)[:, None, :], (2, 5, 4))
    g = params["table"][idx].astype(np.float64)
    mean = g.mean(axis=(1, 2), keepdims=True)
    var = ((g - mean) ** 2).mean(axis=(1, 2), keepdims=True)
    g = (g - mean) / np.sqrt(var + ref.LAYERNORM_EPS) * params["gamma"] + params["beta"]
    p = np.pad(g.transpose(0, 2, 1), ((0, 0), (1, 2), (0, 1))).reshape(2, 36)
    m = y.max(axis=-1)[:, 1:4, :]
    return [p, b, np.log(m ** 2 + 1) + np.swapaxes(g, 1, 2) @ g, r.T @ r]


def test_zoo_ops_run_in_onnxruntime_like_numpy(tmp_path):
    rng = np.random.default_rng(0)
    net = Zoo(rng)
    x = rng.standard_normal((2, 4, 9, 9)).astype(np.float32)
    idx = rng.integers(0, 10, (2, 5)).astype(np.int32)
    path = export(net, Tensor(x), Tensor(idx), path=tmp_path / "zoo")
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert {t.name for t in model.graph.initializer} >= {"weight", "bias", "table", "gamma", "beta"}
    assert "dropout_state" not in {t.name for t in model.graph.initializer}       # the generator is no input
    sess = session(path)
    assert [(i.name, i.shape, i.type) for i in sess.get_inputs()] == [
        ("x", [2, 4, 9, 9], "tensor(float)"), ("idx", [2, 5], "tensor(int32)")]
    got = sess.run(None, {"x": x, "idx": idx})
    want = zoo_reference({k: p.asnumpy() for k, p in net.parameters_dict().items()}, x, idx)
    assert [o.shape for o in sess.get_outputs()] == [list(w.shape) for w in want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=1e-4)


@settings(max_examples=12, deadline=None)
@given(h=st.integers(5, 10), kernel=st.integers(1, 4), stride=st.integers(1, 3), dilation=st.integers(1, 2),
       mode=st.sampled_from(["same", "valid", "pad"]), pool=st.sampled_from(["max", "avg"]),
       pool_kernel=st.integers(1, 3), pool_stride=st.integers(1, 3), pool_mode=st.sampled_from(["same", "valid"]))
def test_conv_and_pool_pads_are_mindspores(tmp_path_factory, h, kernel, stride, dilation, mode, pool,
                                            pool_kernel, pool_stride, pool_mode):
    """Conv2D and pool padding, also uneven (same: the extra row at the end; pad: as given), on a
    non-square input: ONNX's explicit pads reproduce MindSpore's windows."""
    w = h + 1
    pad = (1, 0, 2, 1) if mode == "pad" else 0
    pads = ((same_pads(h, kernel, stride, dilation) + same_pads(w, kernel, stride, dilation)) if mode == "same"
            else pad if mode == "pad" else (0, 0, 0, 0))
    span = (kernel - 1) * dilation + 1
    conv_hw = [(n + pads[2 * i] + pads[2 * i + 1] - span) // stride + 1 for i, n in enumerate((h, w))]
    if min(conv_hw) < (pool_kernel if pool_mode == "valid" else 1):
        return                                    # the network would not fit its input
    rng = np.random.default_rng(h * 7 + kernel)
    x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
    weight = rng.standard_normal((2, 2, kernel, kernel)).astype(np.float32)

    class ConvPool(nn.Cell):
        def __init__(self):
            super().__init__()
            self.weight = Parameter(Tensor(weight), name="weight")
            self.conv = ops.Conv2D(2, kernel, pad_mode=mode, pad=pad, stride=stride, dilation=dilation)
            self.pool = (ops.MaxPool if pool == "max" else ops.AvgPool)(pool_kernel, pool_stride, pool_mode)

        def construct(self, x):
            return self.pool(self.conv(x, self.weight))

    path = export(ConvPool(), Tensor(x), path=tmp_path_factory.mktemp("convpool") / "net")
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    conv = ref.conv2d(x, weight, stride=stride, pad=pads, dilation=dilation)
    want = pool_ref(conv, pool_kernel, pool_stride, pool_mode == "same", np.max if pool == "max" else np.mean)
    np.testing.assert_allclose(session(path).run(None, {"x": x})[0], want, rtol=RTOL, atol=ATOL)


def test_outputs_that_are_not_computed_get_names_of_their_own(tmp_path):
    """A function returning its input, a parameter and one value twice: ONNX names are unique, so
    those outputs go through Identity nodes and every output has its own name."""
    bias = Parameter(Tensor(np.arange(3, dtype=np.float32)), name="b")

    def f(x, scale):
        y = ops.relu(x) * scale
        return y, x, y, bias

    x = np.array([[-1.0, 2.0, -3.0]], np.float32)
    path = export(f, Tensor(x), 2.0, path=tmp_path / "f")       # a Python float is baked in
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    sess = session(path)
    assert [i.name for i in sess.get_inputs()] == ["x"]
    assert len({o.name for o in sess.get_outputs()}) == 4
    got = sess.run(None, {"x": x})
    for g, w in zip(got, [np.maximum(x, 0) * 2, x, np.maximum(x, 0) * 2, np.arange(3)]):
        np.testing.assert_array_equal(g, w)


def test_lowering_table_names_ops_of_the_registry():
    assert set(LOWERINGS) <= set(REGISTRY) | set(NO_TASK_OPS)
    assert set(NO_TASK_OPS) <= set(LOWERINGS)                    # ordinary nodes at capture


# ---------------------------------------------------------------------------------------- errors

class SegmentSum(nn.Cell):
    def construct(self, x, ids):
        return ops.unsorted_segment_sum(x, ids, 3)


class TrainingBatchNorm(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bn = ops.BatchNorm(is_training=True)
        self.stats = [Parameter(Tensor(np.full(2, v, np.float32)), name=n)
                      for n, v in (("g", 1.0), ("b", 0.0), ("m", 0.0), ("v", 1.0))]

    def construct(self, x):
        return self.bn(x, *self.stats)[0]


@pytest.mark.parametrize("net, inputs, op", [
    (SegmentSum(), (np.ones((4, 2), np.float32), np.array([0, 2, 2, 1], np.int32)), "UnsortedSegmentSum"),
    (TrainingBatchNorm(), (np.ones((2, 2, 3, 3), np.float32),), "is_training=True"),
])
def test_an_op_without_lowering_is_an_unsupported_op_error(tmp_path, net, inputs, op):
    with pytest.raises(UnsupportedOpError, match=op) as info:
        export(net, *map(Tensor, inputs), path=tmp_path / "net")
    assert info.value.code == 207000 and isinstance(info.value, FeatureNotSupportedError)
    if op == "UnsortedSegmentSum":
        assert "Conv2D" in str(info.value)                       # names the exportable subset
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kwargs, error, match", [
    ({"file_format": "PB"}, ExportValueError, "must be one of"),
    ({"file_format": "onnx"}, ExportValueError, "must be one of"),      # MindSpore's check is case-sensitive
    ({"file_format": "AIR"}, FeatureNotSupportedError, "file_format='ONNX'"),
    ({"file_name": 3}, ExportTypeError, "'file_name' must be a str"),
    ({"file_name": ""}, ExportValueError, "non-empty"),
    ({"file_name": "missing_dir/net"}, ExportValueError, "does not exist"),
    ({"quant": "x"}, ExportTypeError, "unexpected keyword"),
    ({"enc_key": b"k" * 16, "enc_mode": "AES-GCM"}, ExportValueError, "customized encryption"),
    ({"enc_key": "k" * 16, "enc_mode": lambda d, k: d}, ExportTypeError, "'enc_key' must be bytes"),
    ({"enc_key": b"k" * 16, "enc_mode": lambda d, k: "text"}, ExportTypeError, "must return bytes"),
])
def test_bad_arguments_are_typed_errors(tmp_path, monkeypatch, kwargs, error, match):
    monkeypatch.chdir(tmp_path)
    args = {"file_name": "net", "file_format": "ONNX", **kwargs}
    with pytest.raises(error, match=match) as info:
        ms.export(MLP(4, (3,), 2), Tensor(np.ones((1, 4), np.float32)), **args)
    assert isinstance(info.value, (InvalidParamError, FeatureNotSupportedError))
    if error is ExportValueError:
        assert isinstance(info.value, ValueError)                 # what MindSpore raises
    elif error is ExportTypeError:
        assert isinstance(info.value, TypeError)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("inputs, error", [((), ExportValueError), ((np.ones((1, 4), np.float32),), ExportTypeError)])
def test_bad_inputs_are_typed_errors(tmp_path, inputs, error):
    with pytest.raises(error, match="input"):
        export(MLP(4, (3,), 2), *inputs, path=tmp_path / "net")


def test_custom_encryption_writes_what_enc_mode_returns(tmp_path):
    net, x = MLP(4, (3,), 2), Tensor(np.ones((1, 4), np.float32))
    key = bytes(range(16))

    def xor(data: bytes, k: bytes) -> bytes:
        return bytes(b ^ k[i % len(k)] for i, b in enumerate(data))

    plain = export(net, x, path=tmp_path / "plain").read_bytes()
    secret = export(net, x, path=tmp_path / "secret", enc_key=key, enc_mode=xor).read_bytes()
    assert secret != plain and xor(secret, key) == plain


def test_file_name_keeps_its_onnx_suffix_and_replaces_a_read_only_file(tmp_path):
    net, x = MLP(4, (3,), 2), Tensor(np.ones((1, 4), np.float32))
    ms.export(net, x, file_name=str(tmp_path / "a.onnx"), file_format="ONNX")
    first = (tmp_path / "a.onnx").read_bytes()
    for p in net.get_parameters():
        p.set_data(p.asnumpy() + 1.0)
    ms.export(net, x, file_name=str(tmp_path / "a.onnx"), file_format="ONNX")       # over the 0o400 file
    assert sorted(os.listdir(tmp_path)) == ["a.onnx"] and (tmp_path / "a.onnx").read_bytes() != first


def test_a_write_that_fails_midway_leaves_the_previous_file(tmp_path):
    """The file-size limit stops the write after 4 KiB (EFBIG, as a full disk would): the previous
    model stays complete and no temp file is left."""
    net, x = LeNet5(), Tensor(np.ones((1, 1, 32, 32), np.float32))
    path = export(net, x, path=tmp_path / "lenet")
    before = path.read_bytes()
    for p in net.get_parameters():
        p.set_data(p.asnumpy() * 2.0)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
    try:
        with pytest.raises(OSError):
            export(net, x, path=tmp_path / "lenet")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert len(before) > 4096 and path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["lenet.onnx"]
