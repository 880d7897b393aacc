"""How ``mindspore.mint``'s functions reach ``mindspore.ops``: each name is a route (``ops.tensor_method``):
the call is bound to the signature the table records for the mint name (PyTorch-style: ``input``,
``dim``, ``keepdim``), then passed to the served op under its own parameter names. A mint name whose op
is not served, or whose semantics no route here states, stays missing.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

from ascendemu.errors import InvalidParamError, InvalidValueError, RuntimeParamError

from ..api_coverage import load_table
from ..common import dtype as mstype
from ..ops import function
from ..ops.operations.nn_ops import elu_of
from ..ops.tensor_method import Route, alpha_scaled, recorded_signature, route
from . import _bodies as body

__all__ = ["serve", "MINT_ROUTES"]


def _softmax_dim(x: Any, dim: Any) -> int:
    """MindSpore's (PyTorch's) implicit softmax dim when ``dim`` is None: 0 for a 0-, 1- or 3-d
    input, else 1 (``_get_softmax_dim``)."""
    return dim if dim is not None else (0 if x.ndim in (0, 1, 3) else 1)


def _softmax(op: Callable, input: Any, dim: Any = None, dtype: Any = None) -> Any:
    return op(input, _softmax_dim(input, dim), dtype=dtype)


def _log_softmax(op: Callable, input: Any, dim: Any = None, dtype: Any = None) -> Any:
    x = input if dtype is None else function.cast(input, dtype)
    return op(x, _softmax_dim(x, dim))


def _transpose(op: Callable, input: Any, dim0: int, dim1: int) -> Any:
    """``mint.transpose(input, dim0, dim1)``: the two dims swapped (``ops.transpose`` with a permutation)."""
    perm = list(range(input.ndim))
    for d in (dim0, dim1):
        if isinstance(d, bool) or not isinstance(d, int) or not -input.ndim <= d < max(input.ndim, 1):
            raise InvalidParamError(f"transpose: dim {d!r} is out of range for a {input.ndim}-d input")
    a, b = dim0 % max(input.ndim, 1), dim1 % max(input.ndim, 1)
    perm[a], perm[b] = perm[b], perm[a]
    return op(input, tuple(perm))


def _select(op: Callable, input: Any, dim: int, index: int) -> Any:
    if isinstance(dim, bool) or not isinstance(dim, int) or not -input.ndim <= dim < max(input.ndim, 1):
        raise InvalidValueError(f"select: dim={dim!r} is out of range for a {input.ndim}-d input")
    return input[(slice(None),) * (dim % input.ndim) + (index,)]


def _conv(op: Callable, input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
          dilation: Any = 1, groups: int = 1) -> Any:
    """``mint.nn.functional.conv1d``/``conv2d``/``conv3d``: ``padding`` is 'same'/'valid' or zero padding, an
    int or one int per spatial dim (each dim padded at both ends: the ops' pad takes both ends apiece)."""
    if isinstance(padding, str):
        return op(input, weight, bias, stride, padding, 0, dilation, groups)
    spatial = weight.ndim - 2
    if spatial == 1:        # ops.conv1d takes ints (or the two ends) for a 1-d kernel
        stride, dilation = (v[0] if isinstance(v, (tuple, list)) else v for v in (stride, dilation))
    if isinstance(padding, (tuple, list)) and len(padding) in (1, spatial):
        padding = tuple(p for p in (padding * spatial if len(padding) == 1 else padding) for _ in range(2))
    return op(input, weight, bias, stride, "pad", padding, dilation, groups)


def _dropout(op: Callable, input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
    if inplace is not False:
        raise InvalidParamError("dropout: inplace=True is not supported here; use the returned tensor (inplace=False)")
    return op(input, p, training)


def _int64_indices(out: Any) -> Any:
    """mint's index outputs are int64 (SortExt, TopkExt, ArgMinExt, ArgSort, CountNonZero infer them so),
    where the ops functions give int32: the last output (or the only one) cast."""
    if isinstance(out, tuple):
        return (*out[:-1], function.cast(out[-1], mstype.int64))
    return function.cast(out, mstype.int64)


def _bincount(op: Callable, input: Any, weights: Any = None, minlength: int = 0) -> Any:
    """``mint.bincount``: ops.bincount's counts; without ``weights`` int64, as BincountExt infers them
    (ops.bincount's are float32)."""
    out = op(input, weights, minlength)
    return function.cast(out, mstype.int64) if weights is None else out


def _sort(op: Callable, input: Any, *, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """``mint.sort``; ``stable`` changes nothing: the Sort kernel keeps equal elements in index order."""
    return _int64_indices(op(input, dim, descending))


def _topk(op: Callable, input: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    return _int64_indices(op(input, k, dim, largest, sorted))


def _argmin(op: Callable, input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return _int64_indices(op(input, dim, keepdim))


def _argsort(op: Callable, input: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """``mint.argsort``; always stable, as the Sort kernel is (``stable`` changes nothing)."""
    return _int64_indices(op(input, dim, descending))


def _count_nonzero(op: Callable, input: Any, dim: Any = None) -> Any:
    return op(input, () if dim is None else dim, dtype=mstype.int64)


def _median(op: Callable, input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """``mint.median(input)``: the lower median of every element (element (n - 1) // 2 of the sorted
    values); with ``dim``, ops.median's (values, int64 indices) along it."""
    if dim is not None:
        return op(input, dim, keepdim)
    flat = function.reshape(input, (-1,))
    return function.sort(flat)[0][(flat.shape[0] - 1) // 2]


def _outer(op: Callable, input: Any, vec2: Any) -> Any:
    if input.ndim != 1 or vec2.ndim != 1:      # Outer's shape inference: a ValueError
        raise InvalidValueError(f"outer: the inputs must be 1-D, got shapes {input.shape} and {vec2.shape}")
    return op(input, vec2)


def _mv(op: Callable, input: Any, vec: Any) -> Any:
    if input.ndim != 2 or vec.ndim != 1 or input.shape[1] != vec.shape[0]:     # Mv's: a RuntimeError
        raise RuntimeParamError(f"mv: input must be 2-D and vec 1-D of its row length, got shapes {input.shape} "
                                f"and {vec.shape}")
    return op(input, vec)


def _addbmm(op: Callable, input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    if batch1.ndim != 3 or batch2.ndim != 3 or batch1.shape[0] != batch2.shape[0] \
            or batch1.shape[2] != batch2.shape[1]:                              # Addbmm's: a RuntimeError
        raise RuntimeParamError(f"addbmm: batch1 {batch1.shape} and batch2 {batch2.shape} must be 3-D batches of "
                                f"matrices that multiply")
    return op(input, batch1, batch2, beta=beta, alpha=alpha)


def _dot(op: Callable, input: Any, other: Any) -> Any:
    """``mint.dot``: the inner product of two 1-D tensors of one length."""
    if input.ndim != 1 or other.ndim != 1 or input.shape != other.shape:
        raise RuntimeParamError(f"dot: the inputs must be 1-D of one length, got shapes {input.shape} and "
                                f"{other.shape}")
    return op(input, other)


def _diag(op: Callable, input: Any, diagonal: int = 0) -> Any:
    """``mint.diag``: a 1-D input as the ``diagonal``-th diagonal of a square matrix (zeros elsewhere), a
    2-D input's ``diagonal``-th diagonal."""
    if input.ndim == 2:
        return function.diagonal(input, diagonal)
    if input.ndim != 1:                                                         # DiagExt's: a RuntimeError
        raise RuntimeParamError(f"diag: the input must be 1-D or 2-D, got shape {input.shape}")
    out = op(input)
    if diagonal:
        k = abs(diagonal)      # (left, right, top, bottom): the diagonal moved right (up) or left (down)
        out = function.pad(out, (k, 0, 0, k) if diagonal > 0 else (0, k, k, 0))
    return out


def _scatter_add(op: Callable, input: Any, dim: int, index: Any, src: Any) -> Any:
    """``mint.scatter_add(input, dim, index, src)``: ``tensor_scatter_elements`` adding along ``dim``."""
    if not input.ndim == index.ndim == src.ndim:                                # ScatterAddExt's: a ValueError
        raise InvalidValueError(f"scatter_add: input {input.shape}, index {index.shape} and src {src.shape} must "
                                f"have one rank")
    return op(input, index, src, dim, "add")


def _whole(op: Callable, input: Any) -> Any:
    """``mint.max(input)`` / ``mint.min(input)``: over every element."""
    return op(input)


# the signatures of the mint names the table records as (*args, **kwargs) (MindSpore's decorators hide them)
def _reshape(input: Any, shape: Any) -> None: ...
def _flatten(input: Any, start_dim: int = 0, end_dim: int = -1) -> None: ...
def _squeeze(input: Any, dim: Any) -> None: ...
def _t(input: Any) -> None: ...
def _addcdiv(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> None: ...
def _empty(*size: Any, dtype: Any = None, device: Any = None) -> None: ...


for _stub, _name in ((_reshape, "reshape"), (_flatten, "flatten"), (_squeeze, "squeeze"), (_t, "t"),
                     (_addcdiv, "addcdiv"), (_empty, "empty")):
    _stub.__name__ = _name


def _flatten_dims(op: Callable, input: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    return op(input, start_dim=start_dim, end_dim=end_dim)


def _exact(qualified: str, generic: Callable) -> Callable:
    """``generic(op, input, ..., **rest)`` under exactly ``op`` + the table's signature of ``qualified``, so a
    call the table's signature refuses is not taken by the body's ``**rest`` (``route``'s other overload)."""
    def exact(op: Callable, *args: Any, **kwargs: Any) -> Any:
        return generic(op, *args, **kwargs)
    signature = recorded_signature(qualified)
    if signature is not None:
        head = inspect.Parameter("op", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        exact.__signature__ = signature.replace(parameters=[head, *signature.parameters.values()])
    return exact


_NN_F = "mindspore.mint.nn.functional."
# mint names that are not the op of the same name with the arguments renamed
MINT_ROUTES: Mapping[str, Route] = {
    "mindspore.mint.reshape": Route("reshape", body.unpacked(_reshape)),
    "mindspore.mint.flatten": Route("flatten", body.unpacked(_flatten, _flatten_dims)),
    "mindspore.mint.squeeze": Route("squeeze", body.unpacked(_squeeze, body.squeeze)),
    "mindspore.mint.t": Route("t", body.unpacked(_t)),
    "mindspore.mint.addcdiv": Route("addcdiv", body.unpacked(_addcdiv)),
    "mindspore.mint.empty": Route("zeros", body.unpacked(_empty, body.empty)),
    "mindspore.mint.empty_like": Route("zeros_like", body.empty_like),
    "mindspore.mint.einsum": Route("einsum", body.einsum),
    "mindspore.mint.meshgrid": Route("meshgrid", body.meshgrid),
    "mindspore.mint.allclose": Route("isclose", body.allclose),
    "mindspore.mint.bitwise_not": Route("invert", body.bitwise_not),
    "mindspore.mint.clone": Route("reshape", body.clone),
    "mindspore.mint.vdot": Route("mul", body.vdot),
    "mindspore.mint.npu_gelu": Route("erf", body.gelu),
    _NN_F + "gelu": Route("erf", body.gelu),
    _NN_F + "one_hot": Route("one_hot", body.one_hot),
    _NN_F + "normalize": Route("sqrt", body.normalize),
    _NN_F + "linear": Route("matmul", body.linear),
    _NN_F + "embedding": Route("gather", body.embedding),
    _NN_F + "batch_norm": Route("mean", body.batch_norm),
    _NN_F + "conv_transpose2d": Route("conv2d", body.conv_transpose2d),
    _NN_F + "pad": Route("pad", body.pad),
    **{_NN_F + name: Route(name, _exact(_NN_F + name, body.inplace_capable))
       for name in ("relu", "relu6", "silu", "hardtanh", "threshold")},
    **{_NN_F + name + "_": Route(name, _exact(_NN_F + name + "_", body.inplace))
       for name in ("relu", "sigmoid", "hardtanh", "threshold")},
    # mint's elu (Ascend's EluExt) takes any alpha; ops.elu only 1.0
    _NN_F + "elu": Route("elu", _exact(_NN_F + "elu", lambda op, *args, **kwargs: body.inplace_capable(
        elu_of, *args, **kwargs))),
    _NN_F + "elu_": Route("elu", _exact(_NN_F + "elu_", lambda op, *args, **kwargs: body.inplace(
        elu_of, *args, **kwargs))),
    "mindspore.mint.transpose": Route("transpose", _transpose),
    "mindspore.mint.swapaxes": Route("transpose",
                                     lambda op, input, axis0, axis1: _transpose(op, input, axis0, axis1)),
    "mindspore.mint.gather": Route("gather_elements"),
    "mindspore.mint.select": Route("reshape", lambda op, input, dim, index: _select(op, input, dim, index)),
    "mindspore.mint.max": Route("amax", _whole), "mindspore.mint.min": Route("amin", _whole),
    "mindspore.mint.eq": Route("equal"),
    "mindspore.mint.add": Route("add", alpha_scaled), "mindspore.mint.sub": Route("sub", alpha_scaled),
    "mindspore.mint.nn.functional.dropout": Route("dropout", _dropout),
    "mindspore.mint.concat": Route("cat"),
    "mindspore.mint.softmax": Route("softmax", _softmax),
    "mindspore.mint.nn.functional.softmax": Route("softmax", _softmax),
    "mindspore.mint.nn.functional.log_softmax": Route("log_softmax", _log_softmax),
    "mindspore.mint.special.log_softmax": Route("log_softmax", _log_softmax),
    "mindspore.mint.nn.functional.conv1d": Route("conv1d", _conv),
    "mindspore.mint.nn.functional.conv2d": Route("conv2d", _conv),
    "mindspore.mint.nn.functional.conv3d": Route("conv3d", _conv),
    "mindspore.mint.nn.functional.binary_cross_entropy_with_logits": Route("binary_cross_entropy_with_logits"),
    "mindspore.mint.index_add": Route("index_add", function.array_func._index_add_dim),
    "mindspore.mint.cummax": Route("cummax", body.running_extreme),
    "mindspore.mint.cummin": Route("cummin", body.running_extreme),
    "mindspore.mint.sort": Route("sort", _sort),
    "mindspore.mint.topk": Route("topk", _topk),
    "mindspore.mint.argmin": Route("argmin", _argmin),
    "mindspore.mint.argsort": Route("argsort", _argsort),
    "mindspore.mint.count_nonzero": Route("count_nonzero", _count_nonzero),
    "mindspore.mint.bincount": Route("bincount", _bincount),
    "mindspore.mint.median": Route("median", _median),
    "mindspore.mint.outer": Route("outer", _outer),
    "mindspore.mint.mv": Route("mv", _mv),
    "mindspore.mint.addbmm": Route("addbmm", _addbmm),
    "mindspore.mint.dot": Route("inner", _dot),
    "mindspore.mint.diag": Route("diag", _diag),
    "mindspore.mint.scatter_add": Route("tensor_scatter_elements", _scatter_add),
    "mindspore.mint.conv2d": Route("conv2d", _conv),
    # mint.linalg.inv is the matrix inverse (MatrixInverseExt), not ops.inv's reciprocal
    "mindspore.mint.linalg.inv": Route("inverse"),
    # random (bodies in ops/function/random_func.py)
    "mindspore.mint.rand": Route("rand", function.random_func._mint_rand),
    "mindspore.mint.randn": Route("randn", function.random_func._mint_rand),
    "mindspore.mint.randint": Route("randint", function.random_func._mint_randint),
    "mindspore.mint.randint_like": Route("randint_like", function.random_func._mint_randint_like),
    "mindspore.mint.randn_like": Route("randn_like", function.random_func._mint_randn_like),
    "mindspore.mint.normal": Route("normal", function.random_func._mint_normal),
    "mindspore.mint.multinomial": Route("multinomial", function.random_func._mint_multinomial),
    "mindspore.mint.randperm": Route("randperm", function.random_func._mint_randperm),
    "mindspore.mint.bernoulli": Route("bernoulli_ext"),
}
# same-named ops whose parameters do not line up with mint's (left missing until a route states them)
# (a table signature of *args/**kwargs is never routed by name: MindSpore dispatches those in C++)
NOT_ROUTED: frozenset[str] = frozenset()


def _variadic(qualified: str) -> bool:
    signature = recorded_signature(qualified)
    return signature is not None and any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                                         for p in signature.parameters.values())


def serve(namespace: str) -> dict[str, Callable]:
    """The functions of ``namespace`` (``mindspore.mint``, ``mindspore.mint.nn.functional``) this front end
    serves: name -> callable with the table's signature."""
    out = {}
    for qualified, entry in load_table()["entries"].items():
        if entry["kind"] != "function" or qualified.rsplit(".", 1)[0] != namespace or qualified in NOT_ROUTED:
            continue
        name = qualified.rsplit(".", 1)[1]
        if qualified not in MINT_ROUTES and _variadic(qualified):
            continue
        fn = route(name, qualified, MINT_ROUTES.get(qualified, Route(name)), method=False)
        if fn is not None:
            fn.__module__ = namespace.replace("mindspore", __package__.rsplit(".", 1)[0], 1)
            out[name] = fn
    return out
