"""Every MindSpore real dtype on the emulated device: Tensors keep their dtype, Cast converts between
every pair with MindSpore's semantics, elementwise ops and reductions compute by dtype (float64 in
float64, float16/bfloat16 in float32 rounded to nearest even when stored), and binary ops promote
as MindSpore 2.10 does.

Oracles: numpy (float64, int64 and ml_dtypes' bfloat16, then converted), hand-computed values, and
the promotion table recorded from MindSpore 2.10 by tools/record_dtype_promotion.py
(tests/fixtures/dtype_promotion.json)."""
from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.frontend.ops.primitive import PromotionError, _binary_operands, promote_types
from ascendemu.kernels.signature import ITEMSIZE, TensorDesc

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "dtype_promotion.json").read_text())
DTYPES = tuple(FIXTURE["dtypes"])
FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def np_type(name: str):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name).type


def ms_type(name: str) -> ms.Type:
    return getattr(ms, "bool_" if name == "bool" else name)


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test runs on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


# ------------------------------------------------------------------------------------------ tensors

# str() of each dtype in MindSpore 2.10 (its repr is "mindspore.<name>": mindspore.bool, mindspore.uint8)
LABELS = {"bool": "Bool", "int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64", "uint8": "UInt8",
          "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64", "float16": "Float16", "float32": "Float32",
          "float64": "Float64", "bfloat16": "BFloat16", "complex64": "Complex64", "complex128": "Complex128"}


@pytest.mark.parametrize("name", DTYPES)
def test_tensor_keeps_its_dtype(name):
    data = np.array([[1, 0, 3]]).astype(np_type(name))
    t = Tensor(data)
    # MindSpore 2.10 prints a dtype's str as its label (Bool, UInt8, BFloat16), its repr qualified
    assert t.dtype == ms_type(name) and str(t.dtype) == LABELS[name]
    assert repr(t.dtype) == f"mindspore.{name}"
    out = t.asnumpy()
    assert out.dtype == np.dtype(np_type(name)) and np.array_equal(out, data)     # bfloat16: ml_dtypes' array
    assert t.itemsize == ITEMSIZE[name] == np.dtype(np_type(name)).itemsize
    assert ms.dtype_to_nptype(ms_type(name)) is np_type(name)


def test_python_data_and_complex():
    """MindSpore's defaults: Python ints make int64, Python floats float32, numpy float64 stays float64."""
    assert Tensor([1, 2]).dtype == ms.int64
    assert Tensor([1.0, 2]).dtype == ms.float32 and Tensor(1.5).dtype == ms.float32
    assert Tensor(np.float64(1.5)).dtype == ms.float64 and Tensor(np.ones(2)).dtype == ms.float64
    assert Tensor([True]).dtype == ms.bool_
    assert ms.pytype_to_dtype(int) == ms.int64 and ms.pytype_to_dtype(float) == ms.float64
    # complex64/complex128 are device dtypes (tests/test_complex_fft.py); a non-MindSpore type is refused
    assert Tensor(np.array([1 + 2j], np.complex64)).dtype == ms.complex64
    assert TensorDesc((2,), "complex128").nbytes == 32
    with pytest.raises(InvalidParamError, match="float8"):
        TensorDesc((2,), "float8")


def test_repr_of_new_dtypes():
    """As MindSpore 2.10 prints them (measured there)."""
    assert repr(Tensor([1, 2], ms.int64)) == "Tensor(shape=[2], dtype=Int64, value= [1, 2])"
    assert repr(Tensor(np.array([1.5, 2.0]))) == ("Tensor(shape=[2], dtype=Float64, value= "
                                                   "[ 1.50000000e+00,  2.00000000e+00])")
    assert repr(Tensor([1, 2], ms.uint8)) == "Tensor(shape=[2], dtype=UInt8, value= [1, 2])"
    assert repr(Tensor(np.array([[1.5, -2.25], [3, 4]]), ms.bfloat16)) == (
        "Tensor(shape=[2, 2], dtype=BFloat16, value=\n[[  1.5, -2.25],\n [    3,     4]])")


def test_bfloat16_rounds_to_nearest_even():
    """1 + 2^-8 lies halfway between two bfloat16 values: it rounds to the even one (1.0); 1 + 3 * 2^-8
    rounds up to 1 + 2^-6... (ml_dtypes agrees); the device computes in float32 and rounds once."""
    x = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.3, -7.1, 1e30], np.float32)
    out = ops.cast(Tensor(x), ms.bfloat16).asnumpy()
    assert out.dtype == ml_dtypes.bfloat16
    assert out[0] == 1.0 and out[1] == 1 + 2 ** -6
    assert np.array_equal(out.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))
    a = np.array([1.5, 3.3, -0.7], ml_dtypes.bfloat16)
    b = np.array([2.1, 0.3, 5.9], ml_dtypes.bfloat16)
    got = (Tensor(a) * Tensor(b)).asnumpy()
    want = (a.astype(np.float32) * b.astype(np.float32)).astype(ml_dtypes.bfloat16)
    assert got.dtype == ml_dtypes.bfloat16 and np.array_equal(got.view(np.uint16), want.view(np.uint16))


# --------------------------------------------------------------------------------------------- cast

def source_values(name: str) -> np.ndarray:
    """Values of ``name`` exactly representable in every float type (bfloat16's 8 significant bits)."""
    if name == "bool":
        return np.array([True, False, True])
    if name in FLOATS:
        return np.array([-1.75, 0.0, 2.5, 7.25, 100.5, -100.5]).astype(np_type(name))
    signed = name.startswith("int")
    return np.array([0, 1, 5, 100, 127] + ([-3, -128] if signed else [])).astype(np_type(name))


def cast_reference(values: np.ndarray, target: str) -> np.ndarray:
    """MindSpore's Cast: float -> int truncates toward zero, then wraps to the width; x -> bool is x != 0."""
    if target == "bool":
        return values.astype(np.float64) != 0
    if target in FLOATS:
        return values.astype(np.float64).astype(np_type(target))
    as_int = np.trunc(values.astype(np.float64)).astype(np.int64)
    return as_int.astype(np_type(target))          # numpy's int -> int conversion wraps


@pytest.mark.parametrize("source", DTYPES)
def test_cast_between_every_pair(source):
    values = source_values(source)
    x = Tensor(values)
    for target in DTYPES:
        out = ops.cast(x, ms_type(target))
        got = out.asnumpy()
        want = cast_reference(values, target)
        assert out.dtype == ms_type(target) and got.dtype == want.dtype, (source, target)
        assert np.array_equal(got, want), (source, target, got, want)


def test_tensor_astype_and_to():
    x = Tensor(np.array([-1.7, 2.7, 300.0], np.float32))
    assert x.astype(ms.int8).asnumpy().tolist() == [-1, 2, 44]          # 300 wraps, as MindSpore's Cast
    assert x.to(ms.uint8).asnumpy().tolist() == [255, 2, 44]
    assert x.to(ms.float32) is x and x.to(ms.float64).dtype == ms.float64


# ---------------------------------------------------------------------------------------- promotion

@pytest.mark.parametrize("a", DTYPES)
def test_promotion_table_matches_mindspore(a):
    for b in DTYPES:
        want = FIXTURE["tensor_tensor"][f"{a},{b}"]
        if a == b:      # no promotion; whether Add takes the dtype is the op's rule (MindSpore's Add refuses bool)
            assert want in (a, "error:TypeError")
            continue
        if want.startswith("error"):
            with pytest.raises(PromotionError):
                promote_types(a, b)
        else:
            assert promote_types(a, b) == want, (a, b)


SCALARS = {"bool": True, "int": 2, "float": 2.5}


@pytest.mark.parametrize("a", DTYPES)
def test_scalar_promotion_matches_mindspore(a):
    """The dtype of tensor + scalar and scalar + tensor, from the operands binary ops compute on."""
    x = Tensor(np.array([1, 0, 1]).astype(np_type(a)))
    for kind, value in SCALARS.items():
        for key, operands in ((f"{a},{kind}", (x, value)), (f"{kind},{a}", (value, x))):
            part = "tensor_scalar" if key.startswith(a + ",") else "scalar_tensor"
            want = FIXTURE[part][key]
            if want.startswith("error"):
                with pytest.raises(TypeError):
                    _binary_operands(*operands)
            elif a == "bool" and kind == "bool":
                continue        # MindSpore's Add accepts bool + True (a logical or), not bool tensors: op rule
            else:
                left, right = _binary_operands(*operands)
                assert left.dtype == right.dtype == ms_type(want), (key, left.dtype, right.dtype)


@pytest.mark.parametrize("a,b", [("int32", "float32"), ("int64", "int32"), ("bool", "int8"), ("float16", "float32"),
                                 ("uint8", "int8"), ("float16", "bfloat16"), ("int64", "float64"),
                                 ("bfloat16", "float32")])
def test_add_promotes_and_computes(a, b):
    x, y = np.array([1, 2, 3]).astype(np_type(a)), np.array([4, 0, 1]).astype(np_type(b))
    out = ops.add(Tensor(x), Tensor(y))
    want = FIXTURE["tensor_tensor"][f"{a},{b}"]
    assert out.dtype == ms_type(want)
    assert np.array_equal(out.asnumpy(), (x.astype(np.float64) + y.astype(np.float64)).astype(np_type(want)))
    with pytest.raises(TypeError, match="implicit conversion"):
        ops.add(Tensor(np.array([1], np.uint16)), Tensor(np.array([1], np.int8)))


# ------------------------------------------------------------------------------- elementwise, reduce

@pytest.mark.parametrize("name", INTS)
def test_integer_ops_wrap_and_compare(name):
    """Ints compute in int64 registers and store wrapped. uint64 values from 2^63 on read as negative
    int64 there, so its ordering ops are exact only below 2^63 (the documented limit)."""
    info = np.iinfo(name)
    top = 2 ** 63 - 1 if name == "uint64" else info.max
    x = np.array([top, info.min, 7, 0], dtype=name)
    y = np.array([1, 1, 2, 3], dtype=name)
    tx, ty = Tensor(x), Tensor(y)
    with np.errstate(over="ignore"):
        assert np.array_equal((tx + ty).asnumpy(), x + y)       # wraps at the type's width
        assert np.array_equal((tx * ty).asnumpy(), x * y)
    assert np.array_equal(ops.maximum(tx, ty).asnumpy(), np.maximum(x, y))
    assert np.array_equal((tx > ty).asnumpy(), x > y) and (tx > ty).dtype == ms.bool_
    assert (tx + ty).dtype == ms_type(name)


def test_int64_keeps_values_beyond_int32():
    big = np.array([3_000_000_000, -5_000_000_000, 7], np.int64)
    t = Tensor(big)
    assert np.array_equal((t + t).asnumpy(), big * 2)
    assert ops.ReduceSum()(t).asnumpy() == big.sum()
    assert ops.ReduceMax()(t).asnumpy() == 3_000_000_000 and ops.ReduceMin()(t).asnumpy() == -5_000_000_000


def test_float64_computes_in_float64():
    x = np.array([0.1, 1.0 + 1e-12, -3.7, 20.0])
    t = Tensor(x)
    np.testing.assert_allclose(ops.exp(t).asnumpy(), np.exp(x), rtol=1e-14)
    np.testing.assert_allclose(ops.sigmoid(t).asnumpy(), 1 / (1 + np.exp(-x)), rtol=1e-14)
    assert (t * t).asnumpy()[1] == x[1] * x[1] != np.float32(x[1]) ** 2
    np.testing.assert_allclose(ops.ReduceMean()(t).asnumpy(), x.mean(), rtol=1e-15)
    assert ops.ReduceMax()(t).asnumpy() == 20.0 and ops.ReduceMax()(t).dtype == ms.float64


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "uint32", "uint64", "bfloat16", "float16"])
def test_reductions_by_dtype(name):
    x = np.array([[1, 5, 3], [7, 2, 0]]).astype(np_type(name))
    t = Tensor(x)
    wide = x.astype(np.float64)
    for op, ref in ((ops.ReduceSum(), np.sum), (ops.ReduceMax(), np.max), (ops.ReduceMin(), np.min)):
        out = op(t, 1)
        assert out.dtype == ms_type(name)
        assert np.array_equal(out.asnumpy().astype(np.float64), ref(wide, axis=1)), (op, name)


def test_reduce_sum_of_int8_wraps():
    x = np.full(5, 100, np.int8)
    assert ops.ReduceSum()(Tensor(x)).asnumpy() == np.int8(500 - 512)


def test_graph_mode_keeps_dtypes():
    """A GRAPH_MODE cell on int64 and float64 inputs: no narrowing through the graph."""
    class Net(nn.Cell):
        def construct(self, x, y):
            return ops.cast(x, ms.float64) * y + 1, x * 2

    ms.set_context(mode=ms.GRAPH_MODE)
    x, y = np.array([3_000_000_000, -2], np.int64), np.array([0.5, 1e-12])
    a, b = Net()(Tensor(x), Tensor(y))
    assert a.dtype == ms.float64 and b.dtype == ms.int64
    np.testing.assert_allclose(a.asnumpy(), x * y + 1, rtol=1e-15)
    assert np.array_equal(b.asnumpy(), x * 2)


def test_float64_gradient():
    """A gradient through float64 ops stays float64 (oracle: d/dx x*x*3 = 6x)."""
    class Net(nn.Cell):
        def construct(self, x):
            return (x * x * 3).sum()

    x = np.array([0.25, -1.0, 1e-10])
    g = ms.grad(Net())(Tensor(x))
    assert g.dtype == ms.float64
    np.testing.assert_allclose(g.asnumpy(), 6 * x, rtol=1e-15)


# ----------------------------------------------------------------------------- checkpoints, dataset

def test_checkpoint_keeps_every_dtype(tmp_path):
    """A checkpoint stores MindSpore's dtype names (Int64, Float64, BFloat16, ...) and loads them back as
    themselves."""
    entries = {name: Tensor(np.array([[1, 0, 3]]).astype(np_type(name))) for name in DTYPES}
    ms.save_checkpoint(entries, str(tmp_path / "all.ckpt"))
    back = ms.load_checkpoint(str(tmp_path / "all.ckpt"))
    for name in DTYPES:
        assert back[name].dtype == ms_type(name), name
        assert np.array_equal(back[name].asnumpy(), entries[name].asnumpy()), name


def test_dataset_rows_keep_their_dtypes():
    import ascendemu.frontend.dataset as ds
    columns = {"u16": np.arange(3, dtype=np.uint16), "i64": np.arange(3, dtype=np.int64) * 2 ** 40,
               "f64": np.arange(3, dtype=np.float64) / 3}
    row = next(iter(ds.NumpySlicesDataset(columns, shuffle=False).create_dict_iterator()))
    assert row["u16"].dtype == ms.uint16 and row["i64"].dtype == ms.int64 and row["f64"].dtype == ms.float64
    assert row["i64"].asnumpy() == 0 and row["f64"].asnumpy() == 0.0
