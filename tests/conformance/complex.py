"""Complex dtypes and the FFT family: Real/Imag/Conj/Angle/ComplexAbs/Complex/Polar, view_as_real, the
Tensor properties H/mH, fft/ifft/rfft/irfft/hfft/ihfft in 1-D, 2-D and n-D, fftshift, fftfreq, stft,
FFTWithSize and STFT. No gradients are sampled: the emulator differentiates real floats only, and the
transforms' outputs are complex. Shapes are small and shared so the DFT kernels (one per mode,
direction, norm and dtype) are built few times."""
from __future__ import annotations

from .core import method_call as _m, ops_call as _f, Py, T, op

C64 = ("complex64",)
M = T((2, 8))                      # a real signal: 2 rows of 8 (power-of-two: the radix-2 path)
M6 = T((2, 6))                     # 6 samples: the direct-sum path
Z = T((2, 5), "complex64")         # a complex half spectrum / signal
ZZ = T((2, 3, 4), "complex64")




def _prop(name: str):
    return lambda ms, x: getattr(x, name)


def _mint(name: str):
    return lambda ms, *xs, **kw: getattr(ms.mint, name)(*xs, **kw)


def _fft(name: str, shapes, kwargs=None, errors=()):
    return op(f"mindspore.ops.{name}", _f(name), shapes=shapes, kwargs=kwargs, errors=errors, grad=False)


SPECS = [
    # parts of complex numbers
    op("mindspore.ops.real", _f("real"), shapes=[(2, 3), T((2, 3), "float32")], dtypes=C64, grad=False),
    op("mindspore.ops.imag", _f("imag"), shapes=[(2, 3), T((3,), "float32")], dtypes=C64, grad=False),
    op("mindspore.ops.conj", _f("conj"), shapes=[(2, 3), T((3,), "float32")], dtypes=C64, grad=False),
    op("mindspore.ops.angle", _f("angle"), shapes=[(2, 3)], dtypes=C64, grad=False,
       errors=[(T((3,), "float32"), {})]),
    op("mindspore.ops.Real", _f("Real"), shapes=[(2, 3)], dtypes=("complex64", "complex128"), grad=False),
    op("mindspore.ops.Imag", _f("Imag"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.ops.Conj", _f("Conj"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.ops.Angle", _f("Angle"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.ops.ComplexAbs", _f("ComplexAbs"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.ops.Complex", _f("Complex"), shapes=[[(2, 3), (2, 3)]], grad=False,
       errors=[([T((3,), "float32"), T((3,), "float64")], {})]),
    op("mindspore.ops.polar", _f("polar"), shapes=[[(2, 3), (2, 3)]], grad=False),
    op("mindspore.ops.Polar", _f("Polar"), shapes=[[(2, 3), (2, 3)]], grad=False),
    op("mindspore.mint.polar", _mint("polar"), shapes=[[(2, 3), (2, 3)]], grad=False),
    op("mindspore.mint.real", _mint("real"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.mint.imag", _mint("imag"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.ops.view_as_real", _f("view_as_real"), shapes=[(2, 3)], dtypes=C64, grad=False,
       errors=[(T((3,), "float32"), {})]),
    op("mindspore.ops.ConjugateTranspose", lambda ms, x, perm: ms.ops.ConjugateTranspose()(x, perm),
       shapes=[[(2, 3), Py((1, 0))]], dtypes=C64, grad=False),
    op("mindspore.Tensor.real", _m("real"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.Tensor.imag", _m("imag"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.Tensor.conj", _m("conj"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.Tensor.angle", _m("angle"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.Tensor.H", _prop("H"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.Tensor.mH", _prop("mH"), shapes=[(2, 2, 3)], dtypes=C64, grad=False),
    op("mindspore.Tensor.adjoint", _m("adjoint"), shapes=[(2, 3)], dtypes=C64, grad=False),
    op("mindspore.Tensor.mT", _prop("mT"), shapes=[(1, 2, 3)], grad=False, errors=[((3,), {})]),
    # 1-D transforms
    _fft("fft", [M, M6, Z, T((2, 8), "int32")], [{}, {"n": 6, "dim": 0, "norm": "ortho"}],
         errors=[(M, {"n": 0}), (M, {"dim": 2})]),
    _fft("ifft", [Z], [{}, {"n": 8, "norm": "forward"}], errors=[(M, {"norm": "bad"})]),
    _fft("rfft", [M, M6], [{}, {"n": 5, "norm": "forward"}]),
    _fft("irfft", [Z], [{}, {"n": 7, "dim": 1, "norm": "ortho"}]),
    _fft("hfft", [Z], [{}, {"n": 6}]),
    _fft("ihfft", [M, M6]),
    # 2-D and n-D
    _fft("fft2", [ZZ, M], [{}, {"s": (4, 4)}]),
    _fft("ifft2", [ZZ], [{}, {"norm": "ortho"}]),
    _fft("fftn", [ZZ], [{}, {"dim": (0, 2)}]),
    _fft("ifftn", [ZZ], [{}, {"s": (2, 5), "dim": (1, 2)}]),
    _fft("rfft2", [T((2, 3, 4))]),
    _fft("irfft2", [ZZ], [{}, {"s": (3, 5)}]),
    _fft("rfftn", [T((2, 3, 4))]),
    _fft("irfftn", [ZZ]),
    _fft("hfft2", [ZZ]),
    _fft("ihfft2", [T((2, 3, 4))]),
    _fft("hfftn", [ZZ]),
    _fft("ihfftn", [T((2, 3, 4))]),
    # shifts and frequencies
    _fft("fftshift", [T((2, 5)), T((3, 4), "int32")], [{}, {"dim": 1}]),
    _fft("ifftshift", [T((2, 5))], [{}, {"dim": (0, 1)}]),
    op("mindspore.ops.fftfreq", lambda ms, n, d: ms.ops.fftfreq(n, d), shapes=[[Py(5), Py(0.3)], [Py(8), Py(1.0)]],
       grad=False, graph=False),
    op("mindspore.ops.rfftfreq", lambda ms, n, d: ms.ops.rfftfreq(n, d), shapes=[[Py(6), Py(1.0)], [Py(7), Py(0.5)]],
       grad=False, graph=False),
    # the transforms as primitives, and the short-time transform
    op("mindspore.ops.FFTWithSize", _f("FFTWithSize"), shapes=[ZZ],
       kwargs=[{"signal_ndim": 1, "inverse": False, "real": False},
               {"signal_ndim": 2, "inverse": True, "real": False, "norm": "ortho"}], grad=False),
    op("mindspore.ops.FFTWithSize", _f("FFTWithSize"), shapes=[T((2, 8))],
       kwargs=[{"signal_ndim": 1, "inverse": False, "real": True}], grad=False),
    op("mindspore.ops.STFT", lambda ms, x, w, **kw: ms.ops.STFT(**kw)(x, w), shapes=[[T((2, 32)), T((8,))]],
       kwargs=[{"n_fft": 8, "hop_length": 4, "win_length": 8, "normalized": False, "onesided": True,
                "return_complex": True}], grad=False),
    op("mindspore.ops.stft", lambda ms, x, **kw: ms.ops.stft(x, **kw), shapes=[T((2, 32))],
       kwargs=[{"n_fft": 8, "return_complex": True}, {"n_fft": 8, "hop_length": 3, "return_complex": False}],
       grad=False),
]
