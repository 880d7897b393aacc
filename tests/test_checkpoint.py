"""MindSpore checkpoints (frontend.train.serialization) against independent oracles: the two files real
MindSpore 2.10 saved after training (shared/oracles/training, with MindSpore's printed eval line),
the byte layout measured from MindSpore (REFERENCE-training.md 1.1), google.protobuf parsing with
this file's own copy of the schema, the ``safetensors`` library, and crc32 computed here.
"""
from __future__ import annotations

import binascii
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import ascendemu.frontend as ms  # noqa: E402
from ascendemu.errors import FeatureNotSupportedError  # noqa: E402
from ascendemu.frontend import Parameter, Tensor, context, nn  # noqa: E402
from ascendemu.frontend.train import serialization  # noqa: E402
from ascendemu.frontend.train.serialization import CheckpointWarning, load_checkpoint, load_param_into_net, save_checkpoint
from examples.networks import LeNet5  # noqa: E402
from test_graph import NumpyBackend  # noqa: E402

ORACLES = ROOT / "tests" / "fixtures" / "oracles" / "training"      # a copy of ../shared/oracles/training
CASES = ("lenet_momentum", "cnn_bn_adam")
WEIGHTS = {   # the trained network's parameters, in the order MindSpore saved them (README: trainable first)
    "lenet_momentum": ["conv1.weight", "conv2.weight", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
                       "fc3.weight", "fc3.bias"],
    "cnn_bn_adam": ["conv.weight", "bn.gamma", "bn.beta", "fc.weight", "fc.bias", "bn.moving_mean",
                    "bn.moving_variance"],
}
# What MindSpore printed after training (<case>.mindspore-2.10-cpu.txt): eval sum and absmax of net(x).
EVAL = {"lenet_momentum": (-57.3080673, 1.98891032), "cnn_bn_adam": (-100.196793, 4.43908739)}
NP_OF = {"Float32": np.float32, "Float16": np.float16, "Int32": np.int32, "Int64": np.int64, "Bool": np.bool_}


def oracle(case: str) -> Path:
    return ORACLES / f"{case}.mindspore-2.10-cpu.ckpt"


# ------------------------------------------------------------------ the schema, parsed by google.protobuf

def checkpoint_message_class():
    """``Checkpoint`` from the checkpoint.proto recovered from MindSpore 2.10 (REFERENCE-training.md
    1.1), in a private pool: proto2, no package, dims not packed."""
    F = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="test_checkpoint.proto", syntax="proto2")
    tensor = f.message_type.add(name="TensorProto")
    tensor.field.add(name="dims", number=1, label=F.LABEL_REPEATED, type=F.TYPE_INT64)
    tensor.field.add(name="tensor_type", number=2, label=F.LABEL_REQUIRED, type=F.TYPE_STRING)
    tensor.field.add(name="tensor_content", number=3, label=F.LABEL_REQUIRED, type=F.TYPE_BYTES)
    map_tensor = f.message_type.add(name="MapTensorProto")
    map_tensor.field.add(name="tensor", number=1, label=F.LABEL_REPEATED, type=F.TYPE_MESSAGE,
                         type_name=".TensorProto")
    checkpoint = f.message_type.add(name="Checkpoint")
    value = checkpoint.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    value.field.add(name="tag", number=1, label=F.LABEL_REQUIRED, type=F.TYPE_STRING)
    value.field.add(name="tensor", number=2, label=F.LABEL_OPTIONAL, type=F.TYPE_MESSAGE,
                    type_name=".TensorProto", oneof_index=0)
    value.field.add(name="maptensor", number=3, label=F.LABEL_OPTIONAL, type=F.TYPE_MESSAGE,
                    type_name=".MapTensorProto", oneof_index=0)
    checkpoint.field.add(name="value", number=1, label=F.LABEL_REPEATED, type=F.TYPE_MESSAGE,
                         type_name=".Checkpoint.Value")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("Checkpoint"))


Checkpoint = checkpoint_message_class()


def decode(data: bytes) -> list[tuple[str, list[int], str, bytes]]:
    """(tag, dims, tensor_type, content) of every Value of a .ckpt body (no crc trailer): the
    concatenated one-Value messages parse as one Checkpoint, since repeated fields merge."""
    checkpoint = Checkpoint.FromString(data)
    assert checkpoint.IsInitialized()
    return [(v.tag, list(v.tensor.dims), v.tensor.tensor_type, v.tensor.tensor_content) for v in checkpoint.value]


def encode_value(tag: str, dims: list[int], type_name: str, content: bytes) -> bytes:
    """One one-Value Checkpoint message, as MindSpore's writer builds it (for hand-made files)."""
    checkpoint = Checkpoint()
    value = checkpoint.value.add()
    value.tag = tag
    value.tensor.dims.extend(dims)
    value.tensor.tensor_type = type_name
    value.tensor.tensor_content = content
    return checkpoint.SerializeToString()


# ------------------------------------------------------------------ fixtures and small networks

@pytest.fixture(autouse=True)
def numpy_backend():
    previous = ms.set_backend(NumpyBackend())
    yield
    ms.set_backend(previous)
    ms.set_context(mode=ms.PYNATIVE_MODE, jit_config={"jit_level": context.DEFAULT_JIT_LEVEL})


class Conv1(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 2, 3)


class CnnBn(nn.Cell):
    """train_oracle.py's CnnBn."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, pad_mode="same", has_bias=False)
        self.bn = nn.BatchNorm2d(8, momentum=0.9)
        self.relu = nn.ReLU()
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(8 * 4 * 4, 10)

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.bn(self.conv(x))))))


class Wrapper(nn.Cell):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Dense(3, 2)


def dense(weight: float = 1.0) -> nn.Dense:
    return nn.Dense(3, 2, weight_init=weight, bias_init=0.5)


# ------------------------------------------------------------------ the MindSpore 2.10 files

@pytest.mark.parametrize("case", CASES)
def test_oracle_files_load_with_names_shapes_and_dtypes(case):
    raw = oracle(case).read_bytes()
    entries = decode(raw)
    initial = np.load(ORACLES / f"{case}.npz")
    params = load_checkpoint(str(oracle(case)))
    assert list(params) == [tag for tag, *_ in entries]
    assert list(params)[:len(WEIGHTS[case])] == WEIGHTS[case]
    for tag, dims, type_name, content in entries:
        p = params[tag]
        assert isinstance(p, Parameter) and p.name == tag
        assert p.shape == tuple(dims) and str(p.dtype) == type_name
        np.testing.assert_array_equal(p.asnumpy(), np.frombuffer(content, NP_OF[type_name]).reshape(dims))
    for name in WEIGHTS[case]:                           # the starting weights, trained for 10 steps
        assert params[name].shape == initial[name].shape
        assert not np.array_equal(params[name].asnumpy(), initial[name])
    assert params["global_step"].shape == (1,) and str(params["global_step"].dtype) == "Int32"
    assert params["global_step"].asnumpy().tolist() == [10]
    assert params["learning_rate"].shape == ()


def test_adam_state_holds_beta_powers_after_ten_steps():
    params = load_checkpoint(str(oracle("cnn_bn_adam")))
    assert np.float32(params["learning_rate"].asnumpy()) == np.float32(0.01)
    for name, beta in (("beta1_power", 0.9), ("beta2_power", 0.999)):
        power = np.float32(1)
        for _ in range(10):                              # float32 beta_power *= beta, once per step
            power = np.float32(power * np.float32(beta))
        assert params[name].shape == () and params[name].asnumpy() == power
        assert abs(float(power) - beta ** 10) < 1e-6
    assert [n for n in params if n.startswith("moment1.")] == [f"moment1.{w}" for w in WEIGHTS["cnn_bn_adam"][:5]]


@pytest.mark.parametrize("case", CASES)
def test_resaving_a_mindspore_file_is_byte_identical(case, tmp_path):
    save_checkpoint(load_checkpoint(str(oracle(case))), str(tmp_path / case))
    assert (tmp_path / f"{case}.ckpt").read_bytes() == oracle(case).read_bytes()


@pytest.mark.parametrize("case", CASES)
def test_trained_weights_reproduce_mindspores_eval(case):
    """Loading into the network and running it gives what MindSpore printed after training."""
    net = LeNet5() if case == "lenet_momentum" else CnnBn()
    params = load_checkpoint(str(oracle(case)), net=net)
    np.testing.assert_array_equal(dict(net.parameters_and_names())[WEIGHTS[case][0]].asnumpy(),
                                  params[WEIGHTS[case][0]].asnumpy())
    ms.set_context(mode=ms.GRAPH_MODE)
    out = net(Tensor(np.load(ORACLES / f"{case}.npz")["x"])).asnumpy()
    np.testing.assert_allclose([out.sum(), np.abs(out).max()], EVAL[case], rtol=1e-5)


def test_loading_a_training_checkpoint_reports_the_optimizer_state_as_not_loaded():
    net = CnnBn()
    params = load_checkpoint(str(oracle("cnn_bn_adam")))
    not_loaded, ckpt_left = load_param_into_net(net, params)
    assert not_loaded == []
    assert ckpt_left == [n for n in params if n not in WEIGHTS["cnn_bn_adam"]]
    assert ckpt_left[:4] == ["global_step", "learning_rate", "beta1_power", "beta2_power"]


# ------------------------------------------------------------------ what save_checkpoint writes

def test_saved_bytes_match_the_measured_mindspore_layout(tmp_path):
    net = Conv1()
    save_checkpoint(net, str(tmp_path / "conv"))
    data = (tmp_path / "conv.ckpt").read_bytes()
    # measured from MindSpore: 0a 6b | 0a 0c "conv1.weight" | 12 5b | 08 02 08 01 08 03 08 03 | 12 07 "Float32" | 1a 48
    head = (bytes.fromhex("0a6b 0a0c") + b"conv1.weight" + bytes.fromhex("125b 0802 0801 0803 0803 1207") + b"Float32"
            + bytes.fromhex("1a48"))
    assert data[:len(head)] == head
    assert data[len(head):] == net.conv1.weight.asnumpy().tobytes() and len(data) == len(head) + 72
    assert stat.S_IMODE(os.stat(tmp_path / "conv.ckpt").st_mode) == stat.S_IRUSR     # read-only, as MindSpore


def test_cell_then_append_dict_in_order_with_mindspores_types(tmp_path):
    net = CnnBn()
    extra = Tensor(np.arange(6, dtype=np.float16).reshape(2, 3))
    save_checkpoint(net, str(tmp_path / "net.ckpt"), choice_func=lambda n: not n.startswith("bn.moving"),
                    append_dict={"epoch_num": 3, "lr": 0.25, "done": True, "note": "héllo", "t": extra})
    entries = decode((tmp_path / "net.ckpt").read_bytes())
    assert [e[0] for e in entries] == ["conv.weight", "bn.gamma", "bn.beta", "fc.weight", "fc.bias",
                                       "epoch_num", "lr", "done", "note", "t"]
    by_name = {tag: (dims, type_name, content) for tag, dims, type_name, content in entries}
    assert by_name["fc.weight"] == ([10, 128], "Float32", net.fc.weight.asnumpy().tobytes())
    assert by_name["epoch_num"] == ([], "Int64", (3).to_bytes(8, "little"))
    assert by_name["lr"] == ([], "Float32", np.float32(0.25).tobytes())
    assert by_name["done"] == ([], "Bool", b"\x01")
    assert by_name["note"] == ([0], "str", "héllo".encode("utf-32-le"))
    assert by_name["t"] == ([2, 3], "Float16", extra.asnumpy().tobytes())

    back = load_checkpoint(str(tmp_path / "net.ckpt"))
    assert back["note"] == "héllo"
    assert back["lr"].shape == () and float(back["lr"].asnumpy()) == 0.25
    assert back["done"].asnumpy().item() is True
    # every MindSpore dtype is a device dtype: an Int64 entry comes back as Int64
    assert str(back["epoch_num"].dtype) == "Int64" and back["epoch_num"].asnumpy().item() == 3
    np.testing.assert_array_equal(back["t"].asnumpy(), extra.asnumpy())


def test_lists_and_dicts_save_in_their_order(tmp_path):
    net = dense()
    save_checkpoint([net.bias, net.weight], str(tmp_path / "list.ckpt"))
    assert [e[0] for e in decode((tmp_path / "list.ckpt").read_bytes())] == ["bias", "weight"]
    save_checkpoint([{"name": "b", "data": net.bias}, {"name": "a", "data": net.weight}], str(tmp_path / "dicts"),
                    choice_func=lambda n: n != "a")
    assert [e[0] for e in decode((tmp_path / "dicts.ckpt").read_bytes())] == ["b"]
    save_checkpoint({"z": np.arange(3, dtype=np.float64), "a": "text", "空": np.zeros((0, 3), np.float32)},
                    str(tmp_path / "dict.ckpt"))
    assert decode((tmp_path / "dict.ckpt").read_bytes()) == [
        ("z", [3], "Float64", np.arange(3, dtype=np.float64).tobytes()), ("a", [0], "str", "text".encode("utf-32-le")),
        ("空", [0, 3], "Float32", b"")]
    back = load_checkpoint(str(tmp_path / "dict.ckpt"))
    assert back["a"] == "text" and back["空"].shape == (0, 3)
    assert str(back["z"].dtype) == "Float64"               # kept, as MindSpore keeps it
    np.testing.assert_array_equal(back["z"].asnumpy(), [0, 1, 2])


def test_a_large_tensor_is_sliced_and_joined(tmp_path, monkeypatch):
    monkeypatch.setattr(serialization, "SLICE_BYTES", 64)
    values = np.arange(40, dtype=np.float32).reshape(4, 10)       # 160 bytes -> 64 + 64 + 32
    save_checkpoint({"big": Parameter(values), "small": Parameter(np.ones(2, np.float32))}, str(tmp_path / "s"))
    entries = decode((tmp_path / "s.ckpt").read_bytes())
    assert [(tag, dims, len(content)) for tag, dims, _, content in entries] == [
        ("big", [4, 10], 64), ("big", [4, 10], 64), ("big", [4, 10], 32), ("small", [2], 8)]
    np.testing.assert_array_equal(load_checkpoint(str(tmp_path / "s.ckpt"))["big"].asnumpy(), values)


def test_crc_trailer_round_trip_and_corruption(tmp_path):
    path = tmp_path / "crc.ckpt"
    save_checkpoint(dense(), str(path), crc_check=True)
    data = path.read_bytes()
    body = data[:-17]
    assert data[-17:] == b"crc_num" + binascii.crc32(body).to_bytes(10, "big")
    assert [e[0] for e in decode(body)] == ["weight", "bias"]
    assert list(load_checkpoint(str(path), crc_check=True)) == ["weight", "bias"]

    damaged = bytearray(data)
    damaged[len(body) - 1] ^= 0xFF                                  # last byte of bias's content
    os.chmod(path, stat.S_IWUSR | stat.S_IRUSR)
    path.write_bytes(bytes(damaged))
    with pytest.raises(ValueError, match=f"crc check of {path} failed"):
        load_checkpoint(str(path), crc_check=True)
    assert load_checkpoint(str(path))["bias"].shape == (2,)        # trailer stripped, not checked


def test_safetensors_variant_reads_back_with_the_safetensors_library(tmp_path):
    from safetensors import safe_open
    from safetensors.numpy import load_file

    net = dense(2.0)
    save_checkpoint(net, str(tmp_path / "net"), format="safetensors", crc_check=True,
                    append_dict={"step": 7})
    path = tmp_path / "net.safetensors"
    arrays = load_file(str(path))
    np.testing.assert_array_equal(arrays["weight"], net.weight.asnumpy())
    assert arrays["step"].dtype == np.int64 and arrays["step"].shape == ()
    crc = 0
    for name in ("bias", "step", "weight"):
        crc = binascii.crc32(arrays[name].tobytes(), binascii.crc32(name.encode(), crc))
    with safe_open(str(path), framework="np") as f:
        assert f.metadata() == {"format": "ms", "crc_num": str(crc)}
    header = path.read_bytes()[8:8 + int.from_bytes(path.read_bytes()[:8], "little")].decode()
    # the library lays tensors out by dtype alignment, then by name: the two F32 ones in sorted order
    assert header.index('"step"') < header.index('"bias"') < header.index('"weight"')
    back = load_checkpoint(str(path), format="safetensors", crc_check=True)
    assert list(back) == ["bias", "step", "weight"] and back["weight"].name == "weight"


# ------------------------------------------------------------------ crash safety

def test_a_failed_save_keeps_the_previous_file(tmp_path):
    path = tmp_path / "net.ckpt"
    save_checkpoint(dense(1.0), str(path))
    before = path.read_bytes()
    with pytest.raises(TypeError, match="append_info"):
        save_checkpoint(dense(2.0), str(path), append_dict={"bad": object()})
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["net.ckpt"]
    save_checkpoint(dense(3.0), str(path))                          # over the read-only file
    assert load_checkpoint(str(path))["weight"].asnumpy()[0, 0] == 3.0


def test_a_save_that_runs_out_of_space_midway_leaves_the_old_file_and_no_temp(tmp_path):
    """The file-size limit makes the write fail after the first entries, like a full disk."""
    path = tmp_path / "net.ckpt"
    save_checkpoint({"w": Parameter(np.ones(4, np.float32))}, str(path))
    before = path.read_bytes()
    script = textwrap.dedent(f"""
        import resource, signal, numpy as np
        from ascendemu.frontend import Parameter
        from ascendemu.frontend.train.serialization import save_checkpoint
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            save_checkpoint({{"a": Parameter(np.ones(512, np.float32)),
                              "b": Parameter(np.ones(4096, np.float32))}}, {str(path)!r})
        except OSError as e:
            print("failed", e.errno)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert result.stdout.strip() == "failed 27", result.stderr           # EFBIG
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["net.ckpt"]


# ------------------------------------------------------------------ damaged files

def test_damaged_files_raise_value_errors_naming_the_file_and_entry(tmp_path):
    good = oracle("cnn_bn_adam").read_bytes()
    cases = {
        "truncated.ckpt": (good[:-100], "'moment2.fc.weight' at byte 13828 .*truncated"),
        "garbage.ckpt": (b"PK\x03\x04 not a checkpoint", "not a MindSpore checkpoint"),
        "size.ckpt": (encode_value("w", [2, 3], "Float32", bytes(20)), "'w' has dims \\[2, 3\\] .*24 bytes.* 20 bytes"),
        "type.ckpt": (encode_value("w", [1], "Complex64", bytes(8)), "'w' has an unknown tensor_type 'Complex64'"),
        "empty.ckpt": (b"", "empty"),
    }
    for name, (data, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match=f"{tmp_path / name}.*{message}"):
            load_checkpoint(str(tmp_path / name))
    with pytest.raises(ValueError, match="does not exist"):
        load_checkpoint(str(tmp_path / "missing.ckpt"))
    (tmp_path / "u.ckpt").write_bytes(encode_value("u", [1], "UInt32", bytes(4)))
    assert str(load_checkpoint(str(tmp_path / "u.ckpt"))["u"].dtype) == "UInt32"     # every real dtype loads
    (tmp_path / "q.ckpt").write_bytes(encode_value("q", [2], "Int4", bytes(1)))
    with pytest.raises(FeatureNotSupportedError, match="'q' is Int4"):
        load_checkpoint(str(tmp_path / "q.ckpt"))
    (tmp_path / "bad.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}")
    with pytest.raises(ValueError, match="bad.safetensors"):
        load_checkpoint(str(tmp_path / "bad.safetensors"), format="safetensors")


def test_any_valid_encoding_of_the_schema_is_read(tmp_path):
    """Fields out of order, packed dims and an unknown field: what another protobuf writer may emit."""
    def ld(number: int, payload: bytes) -> bytes:      # a length-delimited field (payload < 128 bytes)
        return bytes([number << 3 | 2, len(payload)]) + payload

    content = np.array([1, 2, 3, 4], np.float32).tobytes()
    tensor = ld(3, content) + ld(2, b"Float32") + ld(1, bytes([2, 2]))     # content, type, packed dims
    data = ld(1, bytes([9 << 3, 7]) + ld(2, tensor) + ld(1, b"w"))         # unknown field 9, tag last
    assert decode(data) == [("w", [2, 2], "Float32", content)]            # google.protobuf agrees
    (tmp_path / "odd.ckpt").write_bytes(data)
    np.testing.assert_array_equal(load_checkpoint(str(tmp_path / "odd.ckpt"))["w"].asnumpy(), [[1, 2], [3, 4]])

    checkpoint = Checkpoint()
    value = checkpoint.value.add()
    value.tag = "table"
    value.maptensor.tensor.add(dims=[1], tensor_type="Int64", tensor_content=bytes(8))
    (tmp_path / "map.ckpt").write_bytes(checkpoint.SerializeToString())
    with pytest.raises(FeatureNotSupportedError, match="'table' is a map tensor"):
        load_checkpoint(str(tmp_path / "map.ckpt"))


def test_hand_made_bfloat16_and_scalar_entries(tmp_path):
    bf16 = bytes.fromhex("c03f 10c0 c03d")          # bfloat16 1.5, -2.25, 0.09375 (little-endian)
    (tmp_path / "h.ckpt").write_bytes(encode_value("b", [3], "BFloat16", bf16)
                                      + encode_value("s", [0], "Float32", np.float32(4).tobytes()))
    back = load_checkpoint(str(tmp_path / "h.ckpt"))
    assert str(back["b"].dtype) == "BFloat16"
    np.testing.assert_array_equal(back["b"].asnumpy().astype(np.float32), [1.5, -2.25, 0.09375])
    assert back["s"].shape == () and back["s"].asnumpy() == 4


def test_encryption_is_refused_with_a_typed_error(tmp_path):
    with pytest.raises(FeatureNotSupportedError, match="enc_key"):
        save_checkpoint(dense(), str(tmp_path / "e"), enc_key=b"0" * 16)
    assert os.listdir(tmp_path) == []
    with pytest.raises(FeatureNotSupportedError, match="dec_key"):
        load_checkpoint(str(oracle("cnn_bn_adam")), dec_key=b"0" * 16)


# ------------------------------------------------------------------ filters and load_param_into_net

def test_prefix_and_choice_filters_follow_mindspore():
    path = str(oracle("cnn_bn_adam"))
    assert list(load_checkpoint(path, specify_prefix="bn.")) == ["bn.gamma", "bn.beta", "bn.moving_mean",
                                                                 "bn.moving_variance"]
    assert list(load_checkpoint(path, specify_prefix=["bn.", "fc."], filter_prefix="bn.moving")) == [
        "bn.gamma", "bn.beta", "fc.weight", "fc.bias"]
    assert list(load_checkpoint(path, choice_func=lambda n: n.endswith("_power"))) == ["beta1_power", "beta2_power"]
    # choice_func is ignored once a prefix is given (MindSpore's rule)
    assert list(load_checkpoint(path, specify_prefix="fc.", choice_func=lambda n: False)) == ["fc.weight", "fc.bias"]
    with pytest.raises(ValueError, match="empty"):
        load_checkpoint(path, specify_prefix="nothing")


def test_measured_dense_example_returns_missing_and_unused_names():
    net = dense(0.0)
    weight = np.arange(6, dtype=np.float32).reshape(2, 3)
    with pytest.warns(CheckpointWarning, match="1 parameters in the 'net' are not loaded"):
        result = load_param_into_net(net, {"weight": Parameter(weight), "extra": Parameter(np.ones(1, np.float32))})
    assert result == (["bias"], ["extra"])
    np.testing.assert_array_equal(net.weight.asnumpy(), weight)
    np.testing.assert_array_equal(net.bias.asnumpy(), [0.5, 0.5])


def test_prefix_fallback_loads_but_still_reports_the_keys():
    net = Wrapper()
    weight, bias = np.full((2, 3), 7, np.float32), np.full(2, 8, np.float32)
    params = {"net.backbone.weight": Parameter(weight), "net.backbone.bias": Parameter(bias)}
    with pytest.warns(CheckpointWarning, match="remove parameter prefix name: net., continue to load"):
        assert load_param_into_net(net, params) == ([], ["net.backbone.weight", "net.backbone.bias"])
    np.testing.assert_array_equal(net.backbone.weight.asnumpy(), weight)
    np.testing.assert_array_equal(net.backbone.bias.asnumpy(), bias)
    with pytest.warns(CheckpointWarning, match="2 parameters"):
        assert load_param_into_net(Wrapper(), params, strict_load=True) == (
            ["backbone.weight", "backbone.bias"], ["net.backbone.weight", "net.backbone.bias"])


def test_shape_rules():
    net = dense(0.0)
    with pytest.raises(RuntimeError, match=r"weight in the argument 'net' should have the same shape"):
        load_param_into_net(net, {"weight": Parameter(np.ones((3, 2), np.float32)), "bias": net.bias})
    conv_style = np.arange(6, dtype=np.float32).reshape(2, 3, 1, 1)      # extra trailing 1-dims are dropped
    assert load_param_into_net(net, {"weight": Parameter(conv_style), "bias": net.bias}) == ([], [])
    np.testing.assert_array_equal(net.weight.asnumpy(), conv_style.reshape(2, 3))


def test_dtype_rules():
    net = dense(0.0)
    half = Parameter(np.full((2, 3), 1.5, np.float16))
    with pytest.raises(RuntimeError, match="should have the same type"):
        load_param_into_net(net, {"weight": half, "bias": net.bias}, strict_load=True)
    with pytest.warns(CheckpointWarning, match="type convert from Float16 to Float32"):
        assert load_param_into_net(net, {"weight": half, "bias": net.bias}) == ([], [])
    assert net.weight.dtype == ms.float32 and net.weight.asnumpy()[0, 0] == 1.5
    with pytest.raises(RuntimeError, match="should have the same type"):
        load_param_into_net(net, {"weight": Parameter(np.ones((2, 3), np.int32)), "bias": net.bias})


def test_accu_grads_and_string_entries_are_not_reported():
    net = dense()
    net.accu_grads_w = Parameter(np.zeros(2, np.float32), name="accu_grads.weight")
    assert load_param_into_net(net, {"weight": net.weight, "bias": net.bias, "note": "text"}) == ([], ["note"])
