"""Shape and dtype inference with argument validation, one function per op (pure python, no numba).

The graph compiler calls this on the warm path, so it must stay cheap and must never import numba.
Every rejection is an InvalidParamError naming the op and the offending input or attribute.
"""
from __future__ import annotations

from typing import Any, Callable

from ascendemu.errors import InvalidParamError
from ascendemu.kernels.signature import DTYPES, OpSignature, TensorDesc

FLOAT = ("float32", "float16")
ANY = ("float32", "float16", "int32")

UNARY_DTYPES = {
    "Square": ANY, "Neg": ANY, "Abs": ANY, "ReLU": ANY,
    "Exp": FLOAT, "Log": FLOAT, "Sqrt": FLOAT, "Rsqrt": FLOAT, "Sigmoid": FLOAT, "Tanh": FLOAT,
    "GeLU": FLOAT,
}
BINARY_DTYPES = {
    "Add": ANY, "Sub": ANY, "Mul": ANY, "Div": ANY, "Maximum": ANY, "Minimum": ANY, "Pow": FLOAT,
}
REDUCE_DTYPES = {"ReduceSum": ANY, "ReduceMean": FLOAT, "ReduceMax": ANY}
# Step ops a FusedElemwise program may use: every float unary and binary elementwise op, plus Cast
# (a no-op on the float32 registers the program computes in).
FUSED_STEP_ARITY = {**{op: 1 for op in UNARY_DTYPES}, **{op: 2 for op in BINARY_DTYPES}, "Cast": 1}


def fail(sig: OpSignature, what: str) -> InvalidParamError:
    return InvalidParamError(f"{sig.op}: {what}")


def check_arity(sig: OpSignature, count: int | None, names: tuple[str, ...] = ()) -> None:
    n = len(sig.inputs)
    if count is None:
        if n < 1:
            raise fail(sig, "needs at least one input, got none")
        return
    if n != count:
        label = f" ({', '.join(names)})" if names else ""
        raise fail(sig, f"takes {count} input(s){label}, got {n}")


def check_dtype(sig: OpSignature, index: int, allowed: tuple[str, ...], name: str = "") -> str:
    dtype = sig.inputs[index].dtype
    if dtype not in allowed:
        label = f" ({name})" if name else ""
        raise fail(sig, f"input {index}{label} has dtype {dtype}; supported dtypes are {allowed}")
    return dtype


def same_dtype(sig: OpSignature, allowed: tuple[str, ...]) -> str:
    dtype = check_dtype(sig, 0, allowed)
    for i, desc in enumerate(sig.inputs[1:], start=1):
        if desc.dtype != dtype:
            raise fail(sig, f"input {i} has dtype {desc.dtype} but input 0 has {dtype}; "
                            f"cast the inputs to one dtype first")
    return dtype


def check_rank(sig: OpSignature, index: int, ranks: tuple[int, ...] | int, name: str = "") -> tuple[int, ...]:
    shape = sig.inputs[index].shape
    allowed = (ranks,) if isinstance(ranks, int) else ranks
    if len(shape) not in allowed:
        label = f" ({name})" if name else ""
        want = " or ".join(str(r) for r in allowed)
        raise fail(sig, f"input {index}{label} must have rank {want}, got shape {shape}")
    return shape


def norm_axis(sig: OpSignature, axis: Any, rank: int, attr: str = "axis") -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise fail(sig, f"attr {attr}={axis!r} must be an int")
    if not -rank <= axis < max(rank, 1):
        raise fail(sig, f"attr {attr}={axis} is out of range for rank {rank} (valid: {-rank}..{rank - 1})")
    return axis % rank if rank else 0


def broadcast_shapes(sig: OpSignature, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        size = 1
        for i, s in enumerate(shapes):
            dim = s[d - rank + len(s)] if d - rank + len(s) >= 0 else 1
            if dim != 1:
                if size not in (1, dim):
                    raise fail(sig, f"input {i} shape {s} does not broadcast with {shapes[:i]} "
                                    f"(dimension {d} of the broadcast shape)")
                size = dim
        out.append(size)
    return tuple(out)


def int_tuple(sig: OpSignature, name: str, value: Any, lengths: tuple[int, ...]) -> tuple[int, ...]:
    """An int or int tuple attribute; a single int is repeated to the first allowed length."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * lengths[0]
    if isinstance(value, tuple) and len(value) in lengths and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return value
    counts = " or ".join(map(str, lengths))
    raise fail(sig, f"attr {name}={value!r} must be an int or a tuple of {counts} ints")


def hw_pair(sig: OpSignature, name: str, value: Any, minimum: int) -> tuple[int, int]:
    """(h, w) from an int, a pair or MindSpore's 4-tuple (1, 1, h, w) / (n, c, h, w) form."""
    t = int_tuple(sig, name, value, (2, 4))
    pair = t[2:] if len(t) == 4 else t
    if any(v < minimum for v in pair):
        raise fail(sig, f"attr {name}={value!r} must be >= {minimum}")
    return pair


def check_format(sig: OpSignature, allowed: tuple[str, ...] = ("NCHW",)) -> str:
    fmt = sig.attr("data_format", sig.attr("format", allowed[0]))
    if fmt not in allowed:
        raise fail(sig, f"attr data_format={fmt!r} is not supported; use one of {allowed}")
    return fmt


# ---------------------------------------------------------------------------------------- elementwise

def infer_unary(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, UNARY_DTYPES[sig.op], "x")
    return (TensorDesc(sig.inputs[0].shape, dtype),)


def cast_target(sig: OpSignature) -> str:
    dst = sig.attr("dst_type")
    if not isinstance(dst, str) or dst.lower() not in DTYPES:
        raise fail(sig, f"attr dst_type={dst!r} must be one of {DTYPES}")
    return dst.lower()


def infer_cast(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    check_dtype(sig, 0, ANY, "x")
    return (TensorDesc(sig.inputs[0].shape, cast_target(sig)),)


def infer_binary(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("x", "y"))
    dtype = same_dtype(sig, BINARY_DTYPES[sig.op])
    return (TensorDesc(broadcast_shapes(sig, [d.shape for d in sig.inputs]), dtype),)


def infer_bias_add(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("x", "bias"))
    dtype = same_dtype(sig, ANY)
    fmt = check_format(sig, ("NCHW", "NHWC", "NCDHW"))
    x = sig.inputs[0].shape
    if len(x) < 2:
        raise fail(sig, f"input 0 (x) must have rank >= 2, got shape {x}")
    channels = x[-1] if fmt == "NHWC" else x[1]
    bias = check_rank(sig, 1, 1, "bias")
    if bias[0] != channels:
        raise fail(sig, f"input 1 (bias) has shape {bias} but x {x} has {channels} channels ({fmt})")
    return (TensorDesc(x, dtype),)


def fused_program(sig: OpSignature) -> tuple[tuple, tuple[int, ...]]:
    """Validated (steps, output step indices) of a FusedElemwise signature."""
    program = sig.attr("program")
    if not isinstance(program, tuple) or not program:
        raise fail(sig, "attr program must be a non-empty tuple of steps (op_name, operand, ...)")
    n_in = len(sig.inputs)
    for j, step in enumerate(program):
        if not isinstance(step, tuple) or not step or step[0] not in FUSED_STEP_ARITY:
            raise fail(sig, f"attr program step {j} {step!r} must be (op_name, operand, ...) with op_name "
                            f"one of {tuple(FUSED_STEP_ARITY)}")
        if len(step) - 1 != FUSED_STEP_ARITY[step[0]]:
            raise fail(sig, f"attr program step {j} {step!r}: {step[0]} takes "
                            f"{FUSED_STEP_ARITY[step[0]]} operand(s)")
        for operand in step[1:]:
            ok = isinstance(operand, tuple) and len(operand) == 2 and (
                (operand[0] == "in" and isinstance(operand[1], int) and 0 <= operand[1] < n_in)
                or (operand[0] == "t" and isinstance(operand[1], int) and 0 <= operand[1] < j)
                or (operand[0] == "c" and isinstance(operand[1], (int, float))
                    and not isinstance(operand[1], bool)))
            if not ok:
                raise fail(sig, f"attr program step {j} operand {operand!r} must be ('in', i) with "
                                f"0 <= i < {n_in}, ('t', j) with j < {j}, or ('c', number)")
    outputs = sig.attr("outputs", (len(program) - 1,))
    if isinstance(outputs, int) and not isinstance(outputs, bool):
        outputs = (outputs,)
    if (not isinstance(outputs, tuple) or not outputs
            or not all(isinstance(o, int) and 0 <= o < len(program) for o in outputs)):
        raise fail(sig, f"attr outputs={outputs!r} must be a non-empty tuple of step indices "
                        f"in 0..{len(program) - 1}")
    return program, outputs


def infer_fused(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, None)
    for i in range(len(sig.inputs)):
        check_dtype(sig, i, FLOAT)
    _, outputs = fused_program(sig)
    shape = broadcast_shapes(sig, [d.shape for d in sig.inputs])
    dst = sig.attr("dst_type")
    if dst is None:
        dtypes = {d.dtype for d in sig.inputs}
        if len(dtypes) != 1:
            raise fail(sig, f"inputs mix dtypes {sorted(dtypes)}; give attr dst_type for the outputs")
        out_dtypes = (dtypes.pop(),) * len(outputs)
    else:
        out_dtypes = (dst,) * len(outputs) if isinstance(dst, str) else dst
        if (not isinstance(out_dtypes, tuple) or len(out_dtypes) != len(outputs)
                or not all(t in FLOAT for t in out_dtypes)):
            raise fail(sig, f"attr dst_type={dst!r} must be one of {FLOAT} or a tuple of those, "
                            f"one per output ({len(outputs)})")
    return tuple(TensorDesc(shape, t) for t in out_dtypes)


# ------------------------------------------------------------------------------- rows and reductions

def softmax_axis(sig: OpSignature) -> int:
    rank = len(sig.inputs[0].shape)
    axis = sig.attr("axis", -1)
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise fail(sig, f"attr axis={axis!r} must be one int (or a 1-tuple)")
        axis = axis[0]
    if rank == 0:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    return norm_axis(sig, axis, rank)


def infer_softmax(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, FLOAT, "x")
    softmax_axis(sig)
    return (TensorDesc(sig.inputs[0].shape, dtype),)


def reduce_axes(sig: OpSignature) -> tuple[int, ...]:
    """Sorted distinct reduced axes; () means every axis."""
    rank = len(sig.inputs[0].shape)
    axis = sig.attr("axis", ())
    axes = (axis,) if isinstance(axis, int) and not isinstance(axis, bool) else axis
    if not isinstance(axes, tuple):
        raise fail(sig, f"attr axis={axis!r} must be an int or a tuple of ints")
    normed = sorted({norm_axis(sig, a, rank) for a in axes}) if rank else []
    if len(normed) != len(axes):
        raise fail(sig, f"attr axis={axis!r} names an axis twice")
    return tuple(normed) if normed else tuple(range(rank))


def infer_reduce(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, REDUCE_DTYPES[sig.op], "x")
    keep = sig.attr("keep_dims", False)
    if not isinstance(keep, bool):
        raise fail(sig, f"attr keep_dims={keep!r} must be a bool")
    axes = reduce_axes(sig)
    shape = sig.inputs[0].shape
    if any(shape[a] == 0 for a in axes) and sig.op == "ReduceMax":
        raise fail(sig, f"input 0 (x) shape {shape} reduces over an empty axis, which has no maximum")
    if keep:
        out = tuple(1 if d in axes else s for d, s in enumerate(shape))
    else:
        out = tuple(s for d, s in enumerate(shape) if d not in axes)
    return (TensorDesc(out, dtype),)


# ----------------------------------------------------------------------------------------- matmul

def check_bool(sig: OpSignature, name: str) -> bool:
    value = sig.attr(name, False)
    if not isinstance(value, bool):
        raise fail(sig, f"attr {name}={value!r} must be a bool")
    return value


def matmul_dims(sig: OpSignature) -> tuple[tuple[int, ...], int, int, int]:
    """(broadcast batch shape, M, N, K) of a MatMul or BatchMatMul signature."""
    ta, tb = check_bool(sig, "transpose_a"), check_bool(sig, "transpose_b")
    a, b = sig.inputs[0].shape, sig.inputs[1].shape
    if sig.op == "MatMul":
        check_rank(sig, 0, 2, "x1")
        check_rank(sig, 1, 2, "x2")
    else:
        for i, (s, n) in enumerate(((a, "x1"), (b, "x2"))):
            if len(s) < 2:
                raise fail(sig, f"input {i} ({n}) must have rank >= 2, got shape {s}")
    m, ka = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if ka != kb:
        raise fail(sig, f"input 0 (x1) shape {a} (transpose_a={ta}) and input 1 (x2) shape {b} "
                        f"(transpose_b={tb}) disagree on the contracted dimension ({ka} vs {kb})")
    batch = broadcast_shapes(sig, [a[:-2], b[:-2]]) if sig.op == "BatchMatMul" else ()
    return batch, m, n, ka


def infer_matmul(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """MatMul/BatchMatMul; with attr ``epilogue`` (a FusedElemwise program where ("in", 0) is the
    product and ("in", i) input i + 1) the inputs after x1, x2 are the epilogue's, broadcast to the output."""
    epilogue = sig.attr("epilogue")
    if epilogue is None:
        check_arity(sig, 2, ("x1", "x2"))
    elif len(sig.inputs) < 2:
        raise fail(sig, f"takes x1, x2 and the epilogue's inputs, got {len(sig.inputs)} input(s)")
    matmul = OpSignature(sig.op, sig.inputs[:2], tuple((k, v) for k, v in sig.attrs if k != "epilogue"))
    dtype = same_dtype(matmul, FLOAT)
    batch, m, n, _ = matmul_dims(matmul)
    out = TensorDesc(batch + (m, n), dtype)
    if epilogue is not None:
        extras = sig.inputs[2:]
        fused = OpSignature("FusedElemwise", (out,) + extras, (("program", epilogue),))
        (result,) = infer_fused(fused)
        if result != out:
            raise fail(sig, f"epilogue makes {result}, but it must keep the product's shape and dtype {out}")
    return (out,)


# ----------------------------------------------------------------------------------- conv and pool

def conv_geometry(sig: OpSignature) -> dict:
    """Validated Conv2D geometry: strides, dilations, explicit pads and output size."""
    x = check_rank(sig, 0, 4, "x")
    w = check_rank(sig, 1, 4, "weight")
    check_format(sig)
    n, c, h, wd = x
    group = sig.attr("group", 1)
    if isinstance(group, bool) or not isinstance(group, int) or group < 1 or c % group:
        raise fail(sig, f"attr group={group!r} must be a positive int dividing the {c} input channels")
    out_channel = sig.attr("out_channel", w[0])
    if out_channel != w[0] or w[0] % group:
        raise fail(sig, f"attr out_channel={out_channel!r} must equal weight dim 0 ({w[0]}) "
                        f"and be divisible by group={group}")
    if w[1] * group != c:
        raise fail(sig, f"input 1 (weight) shape {w} needs {w[1] * group} input channels "
                        f"(group={group}) but x {x} has {c}")
    kh, kw = hw_pair(sig, "kernel_size", sig.attr("kernel_size", (w[2], w[3])), 1)
    if (kh, kw) != (w[2], w[3]):
        raise fail(sig, f"attr kernel_size={sig.attr('kernel_size')!r} disagrees with weight shape {w}")
    sh, sw = hw_pair(sig, "stride", sig.attr("stride", 1), 1)
    dh, dw = hw_pair(sig, "dilation", sig.attr("dilation", 1), 1)
    mode = sig.attr("pad_mode", "valid")
    mode = mode.lower() if isinstance(mode, str) else mode
    pad = int_tuple(sig, "pad", sig.attr("pad", 0), (4,))
    if any(p < 0 for p in pad):
        raise fail(sig, f"attr pad={pad!r} must be >= 0")
    if mode not in ("valid", "same", "pad"):
        raise fail(sig, f"attr pad_mode={sig.attr('pad_mode')!r} must be 'valid', 'same' or 'pad'")
    if mode != "pad" and any(pad):
        raise fail(sig, f"attr pad={pad!r} must be 0 unless pad_mode is 'pad' (pad_mode={mode!r})")
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if mode == "same":
        oh, ow = -(-h // sh), -(-wd // sw)
        ph, pw = max((oh - 1) * sh + ekh - h, 0), max((ow - 1) * sw + ekw - wd, 0)
        pad = (ph // 2, ph - ph // 2, pw // 2, pw - pw // 2)
    oh = (h + pad[0] + pad[1] - ekh) // sh + 1
    ow = (wd + pad[2] + pad[3] - ekw) // sw + 1
    if oh < 1 or ow < 1:
        raise fail(sig, f"kernel {kh}x{kw} (dilation {dh}x{dw}) does not fit input {x} with pad {pad}")
    return dict(n=n, c=c, h=h, w=wd, oc=w[0], kh=kh, kw=kw, sh=sh, sw=sw, dh=dh, dw=dw,
                pt=pad[0], pl=pad[2], oh=oh, ow=ow, group=group)


def infer_conv2d(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("x", "weight"))
    dtype = same_dtype(sig, FLOAT)
    g = conv_geometry(sig)
    return (TensorDesc((g["n"], g["oc"], g["oh"], g["ow"]), dtype),)


def pool_geometry(sig: OpSignature) -> dict:
    n, c, h, w = check_rank(sig, 0, 4, "x")
    check_format(sig)
    kh, kw = hw_pair(sig, "kernel_size", sig.attr("kernel_size", 1), 1)
    sh, sw = hw_pair(sig, "strides", sig.attr("strides", 1), 1)
    mode = sig.attr("pad_mode", "VALID")
    mode = mode.upper() if isinstance(mode, str) else mode
    if mode == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + kh - h, 0), max((ow - 1) * sw + kw - w, 0)
        pt, pl = ph // 2, pw // 2
    elif mode == "VALID":
        oh, ow, pt, pl = (h - kh) // sh + 1, (w - kw) // sw + 1, 0, 0
        if h < kh or w < kw:
            raise fail(sig, f"attr kernel_size=({kh}, {kw}) is larger than the input {h}x{w} "
                            f"(pad_mode VALID)")
    else:
        raise fail(sig, f"attr pad_mode={sig.attr('pad_mode')!r} must be 'VALID' or 'SAME'")
    return dict(n=n, c=c, h=h, w=w, kh=kh, kw=kw, sh=sh, sw=sw, pt=pt, pl=pl, oh=oh, ow=ow)


def infer_pool(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, FLOAT, "x")
    g = pool_geometry(sig)
    return (TensorDesc((g["n"], g["c"], g["oh"], g["ow"]), dtype),)


# ------------------------------------------------------------------------------------------ norms

def check_epsilon(sig: OpSignature, default: float) -> float:
    eps = sig.attr("epsilon", default)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0:
        raise fail(sig, f"attr epsilon={eps!r} must be a number >= 0")
    return float(eps)


def infer_batch_norm(sig: OpSignature) -> tuple[TensorDesc, ...]:
    names = ("x", "scale", "bias", "mean", "variance")
    check_arity(sig, 5, names)
    dtype = check_dtype(sig, 0, FLOAT, "x")
    if sig.attr("is_training", False):
        raise fail(sig, "attr is_training=True is not supported; only inference BatchNorm is")
    check_format(sig)
    check_epsilon(sig, 1e-5)
    x = sig.inputs[0].shape
    if len(x) < 2:
        raise fail(sig, f"input 0 (x) must have rank >= 2, got shape {x}")
    for i in range(1, 5):
        check_dtype(sig, i, FLOAT, names[i])
        if sig.inputs[i].shape != (x[1],):
            raise fail(sig, f"input {i} ({names[i]}) must have shape ({x[1]},), got {sig.inputs[i].shape}")
    return (TensorDesc(x, dtype),)


def layer_norm_axes(sig: OpSignature) -> tuple[int, int]:
    rank = len(sig.inputs[0].shape)
    if rank == 0:
        raise fail(sig, "input 0 (x) must have rank >= 1, got a scalar")
    norm = norm_axis(sig, sig.attr("begin_norm_axis", 1), rank, "begin_norm_axis")
    params = norm_axis(sig, sig.attr("begin_params_axis", 1), rank, "begin_params_axis")
    return norm, params


def infer_layer_norm(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 3, ("x", "gamma", "beta"))
    dtype = same_dtype(sig, FLOAT)
    check_epsilon(sig, 1e-7)
    norm, params = layer_norm_axes(sig)
    x = sig.inputs[0].shape
    for i, name in ((1, "gamma"), (2, "beta")):
        if sig.inputs[i].shape != x[params:]:
            raise fail(sig, f"input {i} ({name}) must have shape {x[params:]} (x dims from "
                            f"begin_params_axis={params}), got {sig.inputs[i].shape}")
    stats = x[:norm] + (1,) * (len(x) - norm)
    return TensorDesc(x, dtype), TensorDesc(stats, dtype), TensorDesc(stats, dtype)


# ------------------------------------------------------------------------------------ data movement

def transpose_perm(sig: OpSignature) -> tuple[int, ...]:
    rank = len(sig.inputs[0].shape)
    perm = sig.attr("perm")
    ok = (isinstance(perm, tuple) and len(perm) == rank
          and all(isinstance(p, int) and not isinstance(p, bool) and -rank <= p < rank for p in perm)
          and sorted(p % rank for p in perm) == list(range(rank)))
    if not ok:
        raise fail(sig, f"attr perm={perm!r} must be a permutation of 0..{rank - 1}")
    return tuple(p % rank for p in perm)


def infer_transpose(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, ANY, "x")
    x = sig.inputs[0].shape
    return (TensorDesc(tuple(x[p] for p in transpose_perm(sig)), dtype),)


def infer_concat(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, None)
    dtype = same_dtype(sig, ANY)
    first = sig.inputs[0].shape
    if not first:
        raise fail(sig, "inputs must have rank >= 1, got scalars")
    axis = norm_axis(sig, sig.attr("axis", 0), len(first))
    total = 0
    for i, desc in enumerate(sig.inputs):
        s = desc.shape
        if len(s) != len(first) or s[:axis] + s[axis + 1:] != first[:axis] + first[axis + 1:]:
            raise fail(sig, f"input {i} shape {s} does not match input 0 shape {first} "
                            f"outside axis {axis}")
        total += s[axis]
    return (TensorDesc(first[:axis] + (total,) + first[axis + 1:], dtype),)


def infer_gather(sig: OpSignature) -> tuple[TensorDesc, ...]:
    check_arity(sig, 2, ("params", "indices"))
    dtype = check_dtype(sig, 0, ANY, "params")
    check_dtype(sig, 1, ("int32",), "indices")
    p = sig.inputs[0].shape
    if not p:
        raise fail(sig, "input 0 (params) must have rank >= 1, got a scalar")
    axis = norm_axis(sig, sig.attr("axis", 0), len(p))
    return (TensorDesc(p[:axis] + sig.inputs[1].shape + p[axis + 1:], dtype),)


INFER: dict[str, Callable[[OpSignature], tuple[TensorDesc, ...]]] = {
    **{op: infer_unary for op in UNARY_DTYPES},
    "Cast": infer_cast,
    **{op: infer_binary for op in BINARY_DTYPES},
    "BiasAdd": infer_bias_add,
    "FusedElemwise": infer_fused,
    "Softmax": infer_softmax, "LogSoftmax": infer_softmax,
    **{op: infer_reduce for op in REDUCE_DTYPES},
    "MatMul": infer_matmul, "BatchMatMul": infer_matmul,
    "Conv2D": infer_conv2d,
    "MaxPool": infer_pool, "AvgPool": infer_pool,
    "BatchNorm": infer_batch_norm, "LayerNorm": infer_layer_norm,
    "Transpose": infer_transpose, "Concat": infer_concat, "Gather": infer_gather,
}
