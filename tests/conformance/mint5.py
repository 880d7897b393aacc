"""``mindspore.mint`` names MindSpore 2.10's CPU build cannot run (issue 21): their Ascend-only pyboost
primitives (``AcosExt``, ``SortExt``, ``Addmm``, ...) have no CPU kernel ("The kernel X unregistered";
``conv1d``/``conv3d``: "only supports Ascend"). Each ok sample is recorded through an ``oracle``: the
documented MindSpore CPU op with exactly mint's semantics (the arguments mapped: ``dim`` -> ``axis``,
``correction`` -> ``ddof``, ...; the int64 indices mint's primitives infer cast from the CPU op's int32),
or, where no CPU op expresses it, the documented formula in MindSpore CPU ops. Each error sample runs the
mint name itself: MindSpore infers a pyboost op's shapes before it selects a kernel, so the refusal is
mint's own, raised on CPU as on Ascend."""
from __future__ import annotations

from .core import Py, T, op
from .mint import _mint

POS = dict(low=0.2, high=3.0)
UNIT = dict(low=-0.9, high=0.9)
R = (2, 3, 4)
_NN_F = "nn.functional."
# int64 index tensors (mint's index arguments take int32 and int64 alike)
IDX2 = T((2,), dtype="int64", values=[2, 0])
SCATTER_IDX = T((2, 2), dtype="int64", values=[[0, 1], [2, 3]])
SIGNS = T((3,), dtype="int32", values=[1, -1, 1])


def _note(name: str, kernel: str, oracle: str, errors: bool) -> str:
    return (f"MindSpore 2.10 CPU has no kernel for mint.{name} ({kernel}, Ascend-only); recorded through "
            f"{oracle}, which computes the same result" + (f"; error samples run mint.{name} itself (refused by "
                                                            f"its shape inference, before kernel selection)"
                                                            if errors else ""))


def _ops(name: str):
    """ops.<name>(*xs, **kw): the oracle of a mint name whose ops function has mint's parameters."""
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


def _int64(ms, out):
    """(values, indices) with the indices int64, as mint's primitives infer them."""
    return out[0], out[1].astype(ms.int64)


def mint_spec(path: str, kernel: str, oracle_text: str, oracle, shapes, kwargs=None, errors=(), fn=None,
              **options) -> list:
    """The ok samples of ``mint.<path>`` (``fn``, default ``mint.<path>(*inputs, **kwargs)``; recorded
    through ``oracle``) and its error samples (recorded on the mint name itself): two specs of one name,
    merged by ``all_specs``."""
    name, fn = f"mindspore.mint.{path}", fn or _mint(path)
    note = _note(path, kernel, oracle_text, bool(errors))
    specs = [op(name, fn, shapes=shapes, kwargs=kwargs, oracle=oracle, note=note, **options)]
    if errors:
        specs.append(op(name, fn, errors=errors, **options))
    return specs


SPECS: list = []

# --- element-wise math ----------------------------------------------------------------------------------
UNARY = [("acos", "AcosExt", "acos", UNIT), ("arccos", "AcosExt", "arccos", UNIT),
         ("acosh", "AcoshExt", "acosh", dict(low=1.1, high=3.0)),
         ("arccosh", "AcoshExt", "arccosh", dict(low=1.1, high=3.0)),
         ("asin", "AsinExt", "asin", UNIT), ("arcsin", "AsinExt", "arcsin", UNIT),
         ("asinh", "AsinhExt", "asinh", None), ("arcsinh", "AsinhExt", "arcsinh", None),
         ("atan", "AtanExt", "atan", None), ("arctan", "AtanExt", "arctan", None),
         ("exp2", "Exp2", "exp2", None), ("special.exp2", "Exp2", "exp2", None), ("frac", "Frac", "frac", None),
         ("log10", "Log10", "log10", POS), ("log2", "Log2", "log2", POS),
         (_NN_F + "logsigmoid", "LogSigmoid", "logsigmoid", None), (_NN_F + "relu6", "Hardtanh", "relu6", None)]
for _path, _kernel, _ops_name, _domain in UNARY:
    SPECS += mint_spec(_path, _kernel, f"ops.{_ops_name}", _ops(_ops_name), shapes=[T((2, 3), **(_domain or {}))],
                       errors=[([T((2, 3), dtype="int32")], {})] if _path == _NN_F + "logsigmoid" else ())

for _path, _kernel, _ops_name in (("atan2", "Atan2Ext", "atan2"), ("arctan2", "Atan2Ext", "arctan2"),
                                  ("logaddexp", "LogAddExp", "logaddexp"), ("logaddexp2", "LogAddExp2", "logaddexp2")):
    SPECS += mint_spec(_path, _kernel, f"ops.{_ops_name}", _ops(_ops_name),
                       shapes=[[T((2, 3)), T((2, 3), **POS)], [T((2, 1)), T((3,), **POS)]],
                       errors=[([(2, 3), (4,)], {})] if _path in ("atan2", "logaddexp") else ())

for _path, _kernel in (("bitwise_or", "BitwiseOrTensor"), ("bitwise_xor", "BitwiseXorTensor")):
    SPECS += mint_spec(_path, _kernel, f"ops.{_path}", _ops(_path),
                       shapes=[[T((2, 3), dtype="int32"), T((2, 3), dtype="int32")]],
                       errors=[([(2, 3), (2, 3)], {})], grad=False)

SPECS += mint_spec("isneginf", "IsNegInf", "ops.isneginf", _ops("isneginf"),
                   shapes=[T((5,), values=[1.0, float("-inf"), float("inf"), float("nan"), -2.0])], grad=False)
SPECS += mint_spec("full_like", "FullLike", "ops.full_like", _ops("full_like"), shapes=[[(2, 3), Py(2.5)]], grad=False)

# --- reductions, scans, sorting -------------------------------------------------------------------------
SPECS += mint_spec("cumsum", "CumsumExt", "ops.cumsum (dim -> axis)",
                   lambda ms, x, dim: ms.ops.cumsum(x, dim), shapes=[[(2, 3), Py(1)]], errors=[([(2, 3), Py(3)], {})])
SPECS += mint_spec("cummin", "CumminExt", "ops.cummin's indices (int64) and the values gathered at them "
                   "(ops.gather_elements, so the gradient flows as CumminExt's does)",
                   lambda ms, x, dim: (lambda i: (ms.ops.gather_elements(x, dim, i), i))(
                       ms.ops.cummin(x, dim)[1].astype(ms.int64)),
                   shapes=[[(2, 5), Py(1)]], errors=[([(2, 3), Py(3)], {})])
SPECS += mint_spec("logsumexp", "LogSumExp", "ops.logsumexp (dim -> axis, keepdim -> keep_dims)",
                   lambda ms, x, dim, keepdim=False: ms.ops.logsumexp(x, dim, keepdim),
                   shapes=[[R, Py(1)]], kwargs=[{"keepdim": True}], errors=[([(2, 3), Py(3)], {})])
SPECS += mint_spec("argmin", "ArgMinExt", "ops.argmin (dim -> axis, keepdim -> keepdims), indices cast to int64",
                   lambda ms, x, dim=None, keepdim=False: ms.ops.argmin(x, dim, keepdim).astype(ms.int64),
                   shapes=[R], kwargs=[{"dim": 1}, {}], errors=[([(2, 3)], {"dim": 2})], grad=False)
SPECS += mint_spec("argsort", "ArgSort", "ops.argsort (dim -> axis), indices cast to int64",
                   lambda ms, x, dim=-1, descending=False: ms.ops.argsort(x, dim, descending).astype(ms.int64),
                   shapes=[(3, 4)], kwargs=[{"dim": 0, "descending": True}], grad=False)
SPECS += mint_spec("sort", "SortExt", "ops.sort (dim -> axis), indices cast to int64",
                   lambda ms, x, dim=-1, descending=False: _int64(ms, ms.ops.sort(x, dim, descending)),
                   shapes=[(3, 4)], kwargs=[{"dim": 0, "descending": True}], errors=[([(2, 3)], {"dim": 2})])
SPECS += mint_spec("topk", "TopkExt", "ops.topk, indices cast to int64",
                   lambda ms, x, k, dim=-1, largest=True: _int64(ms, ms.ops.topk(x, k, dim, largest)),
                   shapes=[[(3, 4), Py(2)]], kwargs=[{"dim": 0, "largest": False}, {}], errors=[([(2, 3), Py(5)], {})])
SPECS += mint_spec("median", "MedianExt/MedianDim", "ops.Median(global_median=True) without dim, ops.median "
                   "(dim -> axis) with it (both the lower median, indices int64)",
                   lambda ms, x, dim=None, keepdim=False: (ms.ops.Median(True)(x)[0] if dim is None
                                                           else ms.ops.median(x, dim, keepdim)),
                   shapes=[(3, 5)], kwargs=[{"dim": 1}, {}], errors=[([(2, 3)], {"dim": 3})])
SPECS += mint_spec("count_nonzero", "CountNonZero", "ops.count_nonzero (dim -> axis) with dtype int64",
                   lambda ms, x, dim=None: ms.ops.count_nonzero(x, () if dim is None else dim, dtype=ms.int64),
                   shapes=[T((2, 3), values=[[0, 1, 0], [2, 0, 3]], dtype="int32")], kwargs=[{"dim": 1}, {}],
                   errors=[([T((2, 3), dtype="int32")], {"dim": 3})], grad=False)
for _path, _kernel in (("std", "Std"), ("var", "Var"), ("std_mean", "StdMean"), ("var_mean", "VarMean")):
    SPECS += mint_spec(_path, _kernel, f"ops.{_path} (dim -> axis, correction -> ddof, keepdim -> keepdims)",
                       (lambda name: lambda ms, x, dim=None, correction=1, keepdim=False: getattr(ms.ops, name)(
                           x, dim, correction, keepdim))(_path),
                       shapes=[R], kwargs=[{"dim": 1}, {"dim": (0, 2), "correction": 0, "keepdim": True}],
                       errors=[([(2, 3)], {"dim": 3})])
for _path, _kernel, _oracle_text, _oracle, _kwargs, _error in (
        ("norm", "LinalgVectorNorm", "ops.norm (p -> ord)",
         lambda ms, x, p="fro", dim=None, keepdim=False: ms.ops.norm(x, p, dim, keepdim),
         [{}, {"p": 3.0, "dim": 1}], {"p": "abc"}),
        ("linalg.vector_norm", "LinalgVectorNorm", "ops.vector_norm (dim -> axis)",
         lambda ms, x, ord=2, dim=None, keepdim=False: ms.ops.vector_norm(x, ord, dim, keepdim),
         [{"ord": 1, "dim": 1}, {}], {"dim": 3}),
        ("linalg.matrix_norm", "LinalgVectorNorm", "ops.matrix_norm (dim -> axis)",
         lambda ms, x, ord="fro", dim=(-2, -1), keepdim=False: ms.ops.matrix_norm(x, ord, dim, keepdim),
         [{}], {"ord": 3}),
        ("linalg.norm", "LinalgVectorNorm", "ops.norm",
         lambda ms, x, ord=None, dim=None, keepdim=False: ms.ops.norm(x, ord, dim, keepdim),
         [{}, {"ord": float("inf"), "dim": 1}], {"ord": "abc"})):
    SPECS += mint_spec(_path, _kernel, _oracle_text, _oracle, shapes=[(2, 3)], kwargs=_kwargs,
                       errors=[([(2, 3)], _error)])

# --- linear algebra -------------------------------------------------------------------------------------
SPECS += mint_spec("mm", "Mm", "ops.matmul of two matrices", _ops("matmul"), shapes=[[(2, 3), (3, 4)]],
                   errors=[([(2, 2, 3), (3, 2)], {})])
SPECS += mint_spec("mv", "Mv", "ops.mv", _ops("mv"), shapes=[[(2, 3), (3,)]], errors=[([(2, 3), (3, 1)], {})])
SPECS += mint_spec("dot", "Dot", "ops.tensor_dot over the one axis", lambda ms, a, b: ms.ops.tensor_dot(a, b, 1),
                   shapes=[[(3,), (3,)]])
SPECS += mint_spec("outer", "Outer", "ops.outer", _ops("outer"), shapes=[[(2,), (3,)]], errors=[([(2, 3), (3,)], {})])
SPECS += mint_spec("addmm", "Addmm", "ops.addmm", _ops("addmm"), shapes=[[(2, 4), (2, 3), (3, 4)]],
                   kwargs=[{"beta": 0.5, "alpha": 2.0}], errors=[([(2, 4), (2, 3), (2, 4)], {})])
SPECS += mint_spec("addmv", "Addmv", "ops.addmv", _ops("addmv"), shapes=[[(2,), (2, 3), (3,)]],
                   kwargs=[{"beta": 0.5, "alpha": 2.0}], errors=[([(2,), (2, 3), (4,)], {})])
SPECS += mint_spec("addbmm", "Addbmm", "ops.addbmm", _ops("addbmm"), shapes=[[(2, 4), (3, 2, 3), (3, 3, 4)]],
                   kwargs=[{"beta": 0.5, "alpha": 2.0}], errors=[([(2, 4), (3, 2, 3), (3, 2, 4)], {})])
SPECS += mint_spec("trace", "TraceExt", "ops.trace", _ops("trace"), shapes=[(3, 4)], errors=[([(2, 2, 2)], {})])
SPECS += mint_spec("tril", "TrilExt", "ops.tril", _ops("tril"), shapes=[(3, 4)], kwargs=[{"diagonal": -1}],
                   errors=[([(3,)], {})])
SPECS += mint_spec("diag", "DiagExt", "ops.diag (a vector, diagonal 0) and ops.diagonal (a matrix's diagonal)",
                   lambda ms, x, diagonal=0: ms.ops.diag(x) if x.ndim == 1 else ms.ops.diagonal(x, diagonal),
                   shapes=[(3,), (3, 4)], kwargs=[{}], errors=[([(2, 2, 2)], {})])
SPECS += mint_spec("diag", "DiagExt", "ops.diagonal", lambda ms, x, diagonal=0: ms.ops.diagonal(x, diagonal),
                   shapes=[(3, 4)], kwargs=[{"diagonal": 1}])
SPECS += mint_spec("linalg.inv", "MatrixInverseExt", "ops.inverse", _ops("inverse"),
                   shapes=[T((2, 2), values=[[2.0, 1.0], [1.0, 3.0]]), T((2, 3, 3), low=-1.0, high=1.0)],
                   errors=[([(2, 3)], {})])

# --- shaping, indexing ----------------------------------------------------------------------------------
SPECS += mint_spec("repeat_interleave", "RepeatInterleaveInt", "ops.repeat_elements (repeats -> rep, dim -> axis)",
                   lambda ms, x, repeats, dim=None: ms.ops.repeat_elements(x, repeats, dim),
                   shapes=[[(2, 3), Py(2)]], kwargs=[{"dim": 1}], errors=[([(2, 3), Py(2)], {"dim": 3})])
SPECS += mint_spec("index_select", "IndexSelect", "ops.gather (dim -> axis)",
                   lambda ms, x, dim, index: ms.ops.gather(x, index, dim), shapes=[[(3, 4), Py(1), IDX2]],
                   errors=[([(3, 4), Py(1), T((1, 2), dtype="int64", values=[[0, 1]])], {})])
SPECS += mint_spec("scatter_add", "ScatterAddExt", "ops.tensor_scatter_elements with reduction 'add'",
                   lambda ms, x, dim, index, src: ms.ops.tensor_scatter_elements(x, index, src, dim, "add"),
                   shapes=[[(3, 4), Py(1), SCATTER_IDX, (2, 2)]],
                   errors=[([(3, 4), Py(1), T((2,), dtype="int64", values=[0, 1]), (2, 2)], {})])
SPECS += mint_spec("stack", "StackExt", "ops.stack (dim -> axis)",
                   lambda ms, a, b, dim=0: ms.ops.stack((a, b), dim), shapes=[[(2, 3), (2, 3)]], kwargs=[{"dim": 1}],
                   errors=[([(2, 3), (3, 2)], {})], fn=lambda ms, a, b, **kw: ms.mint.stack((a, b), **kw))

# --- mint.nn.functional: convolution, pooling -------------------------------------------------------------
for _path, _kernel, _ops_name, _x, _w in (("conv2d", "Conv2DExt", "conv2d", (1, 2, 5, 5), (3, 2, 3, 3)),
                                          (_NN_F + "conv2d", "Conv2DExt", "conv2d", (1, 2, 5, 5), (3, 2, 3, 3)),
                                          (_NN_F + "conv1d", "Conv1DExt", "conv1d", (1, 2, 7), (3, 2, 3)),
                                          (_NN_F + "conv3d", "Conv3DExt", "conv3d", (1, 2, 4, 4, 4), (3, 2, 3, 3, 3))):
    SPECS += mint_spec(_path, _kernel, f"ops.{_ops_name} with pad_mode='pad'",
                       (lambda name: lambda ms, x, w, b=None, stride=1, padding=0, dilation=1, groups=1: getattr(
                           ms.ops, name)(x, w, b, stride, "pad", padding, dilation, groups))(_ops_name),
                       shapes=[[_x, _w, (3,)]], kwargs=[{"stride": 2, "padding": 1}],
                       errors=[([_x, (3, 4) + _w[2:]], {})] if "conv2d" in _path else ())


def _pool1d_as_2d(name: str):
    """adaptive_{avg,max}_pool1d as its 2-D op over an inserted unit height (ops' 1-D forms need the
    length divisible by the output size; mint's adaptive windows do not)."""
    def oracle(ms, x, output_size):
        return getattr(ms.ops, name)(x.expand_dims(-2), (1, output_size)).squeeze(-2)
    return oracle


SPECS += mint_spec(_NN_F + "adaptive_avg_pool1d", "AdaptiveAvgPool1D", "ops.adaptive_avg_pool2d over a unit height",
                   _pool1d_as_2d("adaptive_avg_pool2d"), shapes=[[(1, 2, 5), Py(3)]],
                   errors=[([(2, 3, 4, 5), Py(2)], {})])
SPECS += mint_spec(_NN_F + "adaptive_max_pool1d", "AdaptiveMaxPool1D", "ops.adaptive_max_pool2d over a unit height",
                   _pool1d_as_2d("adaptive_max_pool2d"), shapes=[[(1, 2, 5), Py(3)]],
                   errors=[([(2, 3, 4, 5), Py(2)], {})])
SPECS += mint_spec(_NN_F + "adaptive_avg_pool2d", "AdaptiveAvgPool2DExt", "ops.adaptive_avg_pool2d",
                   _ops("adaptive_avg_pool2d"), shapes=[[(1, 2, 5, 5), Py((3, 2))]], errors=[([(4,), Py((2, 2))], {})])
SPECS += mint_spec(_NN_F + "adaptive_avg_pool3d", "AdaptiveAvgPool3DExt", "ops.adaptive_avg_pool3d",
                   _ops("adaptive_avg_pool3d"), shapes=[[(1, 2, 4, 5, 4), Py((2, 3, 2))]],
                   errors=[([(2, 4), Py((2, 2, 2))], {})])
SPECS += mint_spec(_NN_F + "avg_pool1d", "AvgPool1D", "ops.avg_pool1d (stride None -> kernel_size)",
                   lambda ms, x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True:
                   ms.ops.avg_pool1d(x, kernel_size, kernel_size if stride is None else stride, padding, ceil_mode,
                                     count_include_pad),
                   shapes=[[(1, 2, 7), Py(3)]], kwargs=[{"stride": 2, "padding": 1}], errors=[([(1, 2, 6), Py(0)], {})])
SPECS += mint_spec(_NN_F + "avg_pool2d", "AvgPool2D", "ops.avg_pool2d (stride None -> kernel_size)",
                   lambda ms, x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True:
                   ms.ops.avg_pool2d(x, kernel_size, kernel_size if stride is None else stride, padding, ceil_mode,
                                     count_include_pad),
                   shapes=[[(1, 2, 5, 5), Py(3)]], kwargs=[{"stride": 2, "padding": 1, "count_include_pad": False}],
                   errors=[([(1, 2, 4, 4), Py(2)], {"padding": 2})])
SPECS += mint_spec(_NN_F + "avg_pool3d", "AvgPool3DExt", "ops.avg_pool3d (stride None -> kernel_size)",
                   lambda ms, x, kernel_size, stride=None: ms.ops.avg_pool3d(
                       x, kernel_size, kernel_size if stride is None else stride),
                   shapes=[[(1, 2, 4, 4, 4), Py(2)]], errors=[([(1, 2, 4, 4, 4), Py(0)], {})])

# --- mint.nn.functional: activations, normalisation, dropout ---------------------------------------------
SPECS += mint_spec(_NN_F + "elu", "EluExt", "its documented formula in MindSpore CPU ops, "
                   "where(x > 0, x, alpha * (exp(x) - 1)) (ops.elu takes alpha 1.0 only)",
                   lambda ms, x, alpha=1.0: ms.ops.where(x > 0, x, alpha * (ms.ops.exp(x) - 1)),
                   shapes=[(2, 3)], kwargs=[{"alpha": 0.5}])
SPECS += mint_spec(_NN_F + "hardtanh", "Hardtanh", "ops.hardtanh", _ops("hardtanh"), shapes=[(2, 3)],
                   kwargs=[{"min_val": -0.5, "max_val": 1.0}])
SPECS += mint_spec(_NN_F + "leaky_relu", "LeakyReLUExt", "ops.leaky_relu (negative_slope -> alpha)",
                   lambda ms, x, negative_slope=0.01: ms.ops.leaky_relu(x, negative_slope), shapes=[(2, 3)],
                   kwargs=[{"negative_slope": 0.2}, {}])
SPECS += mint_spec(_NN_F + "threshold", "Threshold", "ops.threshold", _ops("threshold"),
                   shapes=[[(2, 3), Py(0.5), Py(-1.0)]])
SPECS += mint_spec(_NN_F + "layer_norm", "LayerNormExt", "ops.LayerNorm over the normalized_shape's trailing dims",
                   lambda ms, x, shape, w=None, b=None, eps=1e-5: ms.ops.LayerNorm(
                       x.ndim - len(shape), x.ndim - len(shape), eps)(x, w, b)[0],
                   shapes=[[R, Py((4,)), (4,), (4,)], [R, Py((3, 4)), (3, 4), (3, 4)]],
                   errors=[([R, Py((5,)), (5,), (5,)], {})])
SPECS += mint_spec(_NN_F + "dropout2d", "Dropout2DExt", "ops.dropout2d (training=False: the input unchanged)",
                   _ops("dropout2d"), shapes=[(1, 2, 3, 3)], kwargs=[{"training": False}])

# --- mint.nn.functional: losses ---------------------------------------------------------------------------
SPECS += mint_spec(_NN_F + "mse_loss", "MSELossExt", "ops.mse_loss", _ops("mse_loss"), shapes=[[(2, 3), (2, 3)]],
                   kwargs=[{}, {"reduction": "sum"}], errors=[([(2, 3), (2, 3)], {"reduction": "abc"})])
# kl_div, soft_margin_loss: the target is held constant (stop_gradient) on both sides, so only the input's
# gradient is compared: what Ascend's bprop gives a target is not something the CPU oracle can show
SPECS += mint_spec(_NN_F + "kl_div", "KLDiv", "ops.kl_div (reduction 'mean': the mean of every element, as mint "
                   "documents; the target held constant)",
                   lambda ms, x, y, reduction="mean": ms.ops.kl_div(x, ms.ops.stop_gradient(y), reduction),
                   shapes=[[(3, 4), T((3, 4), low=0.1, high=0.9)]], kwargs=[{}, {"reduction": "batchmean"}],
                   errors=[([(3, 4), (3, 4)], {"reduction": "abc"})],
                   fn=lambda ms, x, y, **kw: ms.mint.nn.functional.kl_div(x, ms.ops.stop_gradient(y), **kw))
SPECS += mint_spec(_NN_F + "cosine_embedding_loss", "CosineEmbeddingLoss", "ops.cosine_embedding_loss",
                   _ops("cosine_embedding_loss"), shapes=[[(3, 4), (3, 4), SIGNS]], kwargs=[{"margin": 0.2}],
                   errors=[([(3, 4), (3, 4), SIGNS], {"reduction": "abc"})])
SPECS += mint_spec(_NN_F + "soft_margin_loss", "SoftMarginLoss", "its documented formula in MindSpore CPU ops, "
                   "mean(log(1 + exp(-target * input))) (ops.soft_margin_loss calls the same Ascend-only kernel)",
                   lambda ms, x, y, reduction="mean": ms.ops.log(1 + ms.ops.exp(-ms.ops.stop_gradient(y) * x)).mean(),
                   shapes=[[(2, 3), T((2, 3), values=[[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]])]],
                   errors=[([(2, 3), (2, 3)], {"reduction": "abc"})],
                   fn=lambda ms, x, y, **kw: ms.mint.nn.functional.soft_margin_loss(x, ms.ops.stop_gradient(y), **kw))
