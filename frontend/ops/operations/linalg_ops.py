"""``mindspore.ops.operations.linalg_ops``: the linear algebra primitives MindSpore defines here, Svd
and Geqrf, each a stanza over its registry op (kernels/ops/linalg.py: one-sided Jacobi SVD, Householder
QR in LAPACK's convention, in float64 inside)."""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from .._utils import _flag, defined_here
from ..composite_op import composite
from ..primitive import apply_op
from .math_ops import LINALG_DTYPES, _typed

__all__: list[str] = []


@composite("Svd")
def Svd(input, full_matrices=False, compute_uv=True):
    """(s, u, v) with input = u diag(s) v^T, s descending; without ``compute_uv`` u and v are empty
    placeholders. The vectors of repeated singular values are any orthonormal basis of their space."""
    x = _typed("Svd", input, LINALG_DTYPES)
    if x.ndim < 2:
        raise ValueError(f"For Svd, the dimension of input must be at least 2, but got {x.ndim}.")
    s, u, v = apply_op("Svd", [x], {"full_matrices": _flag("Svd: full_matrices", full_matrices),
                                    "compute_uv": _flag("Svd: compute_uv", compute_uv)})
    return s, u, v


@composite("Geqrf", functions=("geqrf",))
def Geqrf(input):
    """(y, tau): R on and above y's diagonal, the Householder vectors below it (LAPACK's geqrf)."""
    x = _typed("Geqrf", input, LINALG_DTYPES)
    if x.ndim < 2:
        raise ValueError(f"For Geqrf, the dimension of input must be at least 2, but got {x.ndim}.")
    y, tau = apply_op("Geqrf", [x])
    return y, tau


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.linalg_ops", name, __all__)
