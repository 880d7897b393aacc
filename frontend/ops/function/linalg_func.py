"""``mindspore.ops.function.linalg_func``: qr, svd, pinv and geqrf, over the decompositions of
``operations.linalg_ops`` and ``math_ops`` (kernels/ops/linalg.py)."""
from __future__ import annotations

from typing import Any

from ...common import dtype as mstype
from ...common.tensor import Tensor
from ...unsupported import unsupported
from .. import operations
from .._utils import defined_here
from ..composite_op import install_composite_functions
from ..operations.linalg_ops import Svd
from ..operations.math_ops import _binary, _matmul_any, _matrix_transpose, _typed, LINALG_DTYPES, Qr
from ..primitive import apply_op

# the machine epsilon of each dtype pinv's default rtol scales (max(m, n) * eps)
EPS = {"float32": 1.1920928955078125e-07, "float64": 2.220446049250313e-16}


def qr(input: Any, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    """(Q, R): 'reduced' (Q m x p, R p x n, p = min(m, n)) or 'complete' (Q m x m, R m x n)."""
    if mode not in ("reduced", "complete"):
        raise TypeError(f"For qr, the arg mode must be 'reduced' or 'complete', but got {mode}.")
    return Qr(mode == "complete")(input)


def svd(input: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """(s, u, v), or s alone without ``compute_uv``."""
    s, u, v = Svd(full_matrices=full_matrices, compute_uv=compute_uv)(input)
    return (s, u, v) if compute_uv else s


def _tolerance(label: str, value: Any, like: Tensor) -> Tensor:
    """A tolerance (Python number or Tensor) as a (batch..., 1) tensor of ``like``'s dtype."""
    t = value if isinstance(value, Tensor) else Tensor(float(value), like.dtype)
    t = apply_op("Cast", [t], {"dst_type": like.dtype.name})[0]
    return apply_op("ExpandDims", [t], {"axis": -1})[0]


def pinv(x: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse from the SVD: singular values above max(atol, rtol * s_max)
    inverted, the others dropped; rtol defaults to max(m, n) * eps when atol is None too, else 0
    (MindSpore's rule). ``hermitian`` takes the same SVD (the pseudo-inverse is the same)."""
    a = _typed("pinv", x, LINALG_DTYPES)
    if a.ndim < 2:
        raise ValueError(f"For pinv, the dimension of x must be at least 2, but got {a.ndim}.")
    if not isinstance(hermitian, bool):
        raise TypeError(f"For pinv, hermitian must be a bool, but got {type(hermitian).__name__}.")
    if rtol is None:
        rtol = max(a.shape[-2:]) * EPS[a.dtype.name] if atol is None else 0.0
    atol = 0.0 if atol is None else atol
    s, u, v = Svd()(a)
    largest = apply_op("ReduceMax", [s], {"axis": (-1,), "keep_dims": True})[0]
    threshold = apply_op("Maximum", [_tolerance("atol", atol, s), _binary("Mul", _tolerance("rtol", rtol, s),
                                                                          largest)])[0]
    keep = apply_op("Greater", [s, apply_op("BroadcastTo", [threshold], {"shape": s.shape})[0]])[0]
    inverse = apply_op("Select", [keep, apply_op("Reciprocal", [s])[0], _binary("Mul", s, 0.0)])[0]
    scaled = _binary("Mul", v, apply_op("ExpandDims", [inverse], {"axis": -2})[0])
    return _matmul_any(scaled, _matrix_transpose(u))


install_composite_functions(globals(), "mindspore.ops.function.linalg_func")

__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.linalg_func", name, __all__)
