"""complex64/complex128 as device dtypes and the FFT family (kernels/ops/fft.py, ops/function/fft_func.py).

Oracles: numpy in complex128 / float64 (numpy.fft is pocketfft), numpy's definitions of hfft/ihfft and
of the n-D transforms as 1-D ones per axis, torch.stft's formula written in numpy, and the text
MindSpore 2.10 prints for a complex tensor (recorded by hand from it)."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.kernels.library import infer_outputs
from ascendemu.kernels.signature import OpSignature


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test on the module's emulated device (conftest's ``ex``), PyNative unless it switches."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


RNG = np.random.default_rng(7)
Z = (RNG.uniform(-2, 2, (3, 8)) + 1j * RNG.uniform(-2, 2, (3, 8))).astype(np.complex64)
W = (RNG.uniform(-2, 2, (3, 8)) + 1j * RNG.uniform(-2, 2, (3, 8))).astype(np.complex64)
R = RNG.uniform(-2, 2, (3, 8)).astype(np.float32)
# complex64 results against complex128 numpy: float32 rounding of values of size ~10
C64_TOL = dict(rtol=1e-5, atol=1e-5)


def c128(a: np.ndarray) -> np.ndarray:
    return a.astype(np.complex128)


# ------------------------------------------------------------------------------- complex tensors

def test_complex_tensor_round_trip_and_prints_as_mindspore():
    x = Tensor(np.array([1 + 2j, -3 + 0.5j], np.complex64))
    assert x.dtype == ms.complex64 and Tensor(np.zeros(2, np.complex128)).dtype == ms.complex128
    np.testing.assert_array_equal(x.asnumpy(), np.array([1 + 2j, -3 + 0.5j], np.complex64))
    assert repr(x) == "Tensor(shape=[2], dtype=Complex64, value= [1+2j, -3+0.5j])"


@pytest.mark.parametrize("name,fn,ref", [
    ("div", lambda a, b: a / b, lambda a, b: a / b),
    ("exp", lambda a, b: ops.exp(a), lambda a, b: np.exp(a)),
    ("sqrt", lambda a, b: ops.sqrt(a), lambda a, b: np.sqrt(a)),
    ("abs", lambda a, b: ops.abs(a), lambda a, b: np.abs(a).astype(np.complex128)),  # MindSpore keeps complex
])
def test_complex_elementwise_is_numpy(name, fn, ref):
    got = fn(Tensor(Z), Tensor(W))
    assert got.dtype == ms.complex64
    np.testing.assert_allclose(got.asnumpy(), ref(c128(Z), c128(W)), **C64_TOL)


def test_complex_arithmetic_with_real_operands_and_casts():
    z = Tensor(Z)
    np.testing.assert_allclose((z * 2.5).asnumpy(), c128(Z) * 2.5, **C64_TOL)
    np.testing.assert_allclose((z + Tensor(R)).asnumpy(), c128(Z) + R, **C64_TOL)
    np.testing.assert_array_equal(ops.cast(z, ms.float32).asnumpy(), Z.real)          # the real part
    np.testing.assert_array_equal(ops.cast(Tensor(R), ms.complex64).asnumpy(), R.astype(np.complex64))


def test_parts_of_complex_numbers_are_numpy():
    z = Tensor(Z)
    np.testing.assert_array_equal(ops.real(z).asnumpy(), Z.real)
    np.testing.assert_array_equal(ops.imag(z).asnumpy(), Z.imag)
    np.testing.assert_array_equal(ops.conj(z).asnumpy(), Z.conj())
    np.testing.assert_allclose(ops.angle(z).asnumpy(), np.angle(c128(Z)), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ops.ComplexAbs()(z).asnumpy(), np.abs(c128(Z)), rtol=1e-6)
    np.testing.assert_array_equal(ops.Complex()(Tensor(R), Tensor(R)).asnumpy(), R + 1j * R)
    np.testing.assert_allclose(ops.polar(Tensor(R), Tensor(R)).asnumpy(), R * np.exp(1j * R.astype(np.float64)),
                               **C64_TOL)
    np.testing.assert_array_equal(ops.view_as_real(z).asnumpy(), np.stack([Z.real, Z.imag], -1))
    np.testing.assert_array_equal(z.H.asnumpy(), Z.conj().T)
    np.testing.assert_array_equal(z.adjoint().asnumpy(), Z.conj().T)
    # a real tensor is its own real part and conjugate, and has no imaginary part
    np.testing.assert_array_equal(ops.imag(Tensor(R)).asnumpy(), np.zeros_like(R))
    with pytest.raises(TypeError):
        ops.angle(Tensor(R))
    with pytest.raises(TypeError):
        ops.view_as_real(Tensor(R))


# ------------------------------------------------------------------------------------------ FFT

@pytest.mark.parametrize("n", [16, 12, 7, 1])       # radix-2, the direct sum (even and prime), one point
def test_fft_is_pocketfft_accurate_in_complex128(n):
    x = RNG.standard_normal((2, n)) + 1j * RNG.standard_normal((2, n))
    got = ops.fft(Tensor(x)).asnumpy()
    assert got.dtype == np.complex128
    want = np.fft.fft(x)
    assert np.abs(got - want).max() <= 1e-13 * max(1.0, np.abs(want).max())


@pytest.mark.parametrize("norm", ["ortho"])
def test_fft_norm_modes_and_round_trip(norm):
    got = ops.fft(Tensor(Z), norm=norm).asnumpy()
    np.testing.assert_allclose(got, np.fft.fft(c128(Z), norm=norm), rtol=1e-5, atol=1e-5)
    back = ops.ifft(Tensor(got), norm=norm).asnumpy()
    np.testing.assert_allclose(back, Z, rtol=1e-5, atol=1e-5)


def _close_to(got: Tensor, want: np.ndarray) -> None:
    """complex64/float32 results against numpy's complex128/float64: float32 rounding of the largest value."""
    got = got.asnumpy()
    assert got.shape == want.shape and got.dtype.kind == want.dtype.kind
    assert np.abs(got - want).max() <= 4e-7 * max(1.0, np.abs(want).max()) * np.sqrt(got.size)


# The transforms below run in complex64/float32, on the kernels the conformance samples build too
def test_one_dimensional_transforms_cut_pad_and_axis():
    x = RNG.standard_normal((4, 6, 3)).astype(np.float32)
    z = (x + 1j * RNG.standard_normal((4, 6, 3))).astype(np.complex64)
    cases = [
        (ops.fft(Tensor(z), n=9, dim=1), np.fft.fft(z, 9, axis=1)),
        (ops.ifft(Tensor(z), n=4, dim=0, norm="ortho"), np.fft.ifft(z, 4, axis=0, norm="ortho")),
        (ops.rfft(Tensor(x), n=7, dim=1), np.fft.rfft(x, 7, axis=1)),
        (ops.irfft(Tensor(z), dim=1), np.fft.irfft(z, axis=1)),
        (ops.hfft(Tensor(z), n=8, dim=1), np.fft.hfft(z, 8, axis=1)),
        (ops.ihfft(Tensor(x), dim=1), np.fft.ihfft(x, axis=1)),
    ]
    for got, want in cases:
        _close_to(got, want)


def test_multi_dimensional_transforms_are_numpy():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    z = (x + 1j * RNG.standard_normal((2, 3, 4))).astype(np.complex64)
    cases = [
        (ops.fft2(Tensor(z)), np.fft.fft2(z)),
        (ops.ifft2(Tensor(z), s=(5, 2)), np.fft.ifft2(z, s=(5, 2))),
        (ops.fftn(Tensor(z), dim=(0, 2)), np.fft.fftn(z, axes=(0, 2))),
        (ops.ifftn(Tensor(z)), np.fft.ifftn(z)),
        (ops.rfft2(Tensor(x)), np.fft.rfft2(x)),
        (ops.irfft2(Tensor(z), s=(3, 5)), np.fft.irfft2(z, s=(3, 5))),
        (ops.rfftn(Tensor(x)), np.fft.rfftn(x)),
        (ops.irfftn(Tensor(z)), np.fft.irfftn(z, axes=(0, 1, 2))),
        # numpy's definitions: hfftn = irfftn of the conjugate, forward-scaled; ihfftn its inverse
        (ops.hfft2(Tensor(z)), np.fft.irfft2(z.conj(), norm="forward")),
        (ops.ihfftn(Tensor(x)), np.fft.rfftn(x, norm="forward").conj()),
    ]
    for got, want in cases:
        _close_to(got, want)


def test_input_dtypes_as_mindspore_serves_them():
    assert ops.fft(Tensor(R)).dtype == ms.complex64
    assert ops.fft(Tensor(np.arange(6, dtype=np.int32))).dtype == ms.complex64
    assert ops.irfft(Tensor(Z)).dtype == ms.float32
    np.testing.assert_allclose(ops.rfft(Tensor(R)).asnumpy(), np.fft.rfft(R.astype(np.float64)), **C64_TOL)


def test_fft_errors_are_mindsporess():
    with pytest.raises(ValueError):
        ops.fft(Tensor(R), n=0)
    with pytest.raises(ValueError):
        ops.fft(Tensor(R), dim=2)
    with pytest.raises(ValueError):
        ops.fft(Tensor(R), norm="bad")
    with pytest.raises(TypeError):
        ops.fft(Tensor(np.ones(4, bool)))
    with pytest.raises(InvalidParamError):       # the kernel's own check of its attributes
        infer_outputs(OpSignature.make("DFT", [((4,), "complex64")], mode="c2c", n=0, axis=-1))


def test_shifts_and_frequencies_are_numpy():
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    np.testing.assert_array_equal(ops.fftshift(Tensor(x)).asnumpy(), np.fft.fftshift(x))
    np.testing.assert_array_equal(ops.ifftshift(Tensor(x), dim=1).asnumpy(), np.fft.ifftshift(x, axes=1))
    np.testing.assert_allclose(ops.fftfreq(5, 0.3).asnumpy(), np.fft.fftfreq(5, 0.3), rtol=1e-6)
    np.testing.assert_allclose(ops.rfftfreq(8, 2.0, ms.float64).asnumpy(), np.fft.rfftfreq(8, 2.0), rtol=1e-15)


def test_stft_is_torch_formula():
    x = RNG.standard_normal((2, 40)).astype(np.float32)
    window = np.hanning(6).astype(np.float32)
    got = ops.stft(Tensor(x), 8, hop_length=3, win_length=6, window=Tensor(window), return_complex=True).asnumpy()
    padded = np.pad(x.astype(np.float64), ((0, 0), (4, 4)), mode="reflect")
    full_window = np.pad(window.astype(np.float64), (1, 1))
    frames = np.stack([padded[:, t:t + 8] * full_window for t in range(0, padded.shape[1] - 8 + 1, 3)], 1)
    want = np.fft.rfft(frames, axis=-1).transpose(0, 2, 1)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_fft_and_complex_ops_in_graph_mode():
    class Net(nn.Cell):
        def construct(self, x, z):
            return ops.real(ops.fft(x)) * 2, ops.irfft(z * z, n=6), ops.conj(z)

    ms.set_context(mode=ms.GRAPH_MODE)
    spectrum, signal, conj = Net()(Tensor(R), Tensor(Z))
    np.testing.assert_allclose(spectrum.asnumpy(), np.fft.fft(R.astype(np.float64)).real * 2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(signal.asnumpy(), np.fft.irfft(c128(Z) * c128(Z), 6), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(conj.asnumpy(), Z.conj())
