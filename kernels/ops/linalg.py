"""Linear algebra on batches of small matrices: determinants (MatrixDeterminant, LogMatrixDeterminant),
MatrixInverse, MatrixSolve and MatrixTriangularSolve, Cholesky, the Householder QR family (Qr, Geqrf,
Orgqr, Ormqr) and the singular value decomposition (Svd).

Every op reads x as (batch, m, n) (its leading dimensions flattened) and each block factors whole
matrices [lo, hi) of the batch, one after the other, so an output never depends on the block count. A
matrix is copied into a float64 workspace of its own (float32 inputs are factored in float64, rounded
once when stored), so no block ever shares scratch memory with another.

Methods: LU with partial pivoting (Doolittle, row swaps; a zero pivot leaves its column and makes the
determinant 0 and the inverse or solution inf/NaN, where MindSpore's CPU kernels raise), Cholesky by
columns (a non positive-definite matrix gives NaN), Householder QR in LAPACK's convention (dgeqrf:
R's diagonal may be negative, tau = (beta - alpha) / beta), and one-sided Jacobi SVD (Hestenes):
singular values sorted descending; the singular vectors of repeated or zero values are any orthonormal
basis, as LAPACK's are (compare U S V^T, not the vectors).

Dynamic-shape kernels: the sizes (batch, rows, columns, right-hand sides, the workspace's words per
matrix) are run-time tiling data, and so are the attributes that only move an index, reverse a loop or
skip one (``adjoint`` but MatrixSolve's, ``upper``, ``lower``, ``left``, ``transpose``,
``full_matrices``, ``compute_uv``, an SVD's wide input): one kernel per op and dtype, two for
MatrixSolve (``adjoint`` solves with another program: a static fact). Same arithmetic in the same
order as the size-specialised kernels they replaced, so the same bits.

Backward rules: d det(A) = det(A) A^-T, d log|det A| = A^-T (the sign gets none), d inv(A) =
-A^-T G A^-T, each through this family's own solves (dtype-generic, float64 included); MindSpore's
other rules (Cholesky, Qr, Svd, MatrixSolve) are not served.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import check_arity, check_dtype, fail, same_dtype

# the dtypes the decompositions take (MindSpore's CPU kernels: float32, float64 and the complex types,
# which the device has not)
LINALG_DTYPES = ("float32", "float64")
# one-sided Jacobi: a pair of columns is rotated while |c_pq| > JACOBI_TOL sqrt(c_pp c_qq); at most
# JACOBI_SWEEPS sweeps (quadratic convergence: small matrices need < 10)
JACOBI_TOL = 1e-15
JACOBI_SWEEPS = 60


# ------------------------------------------------------------------------------------------- infer

def _matrix(sig: OpSignature, index: int, name: str, square: bool = True) -> tuple[tuple[int, ...], int, int]:
    """(batch shape, rows, columns) of input ``index``, which must be a (batch of) matrix."""
    shape = sig.inputs[index].shape
    if len(shape) < 2:
        raise fail(sig, f"input {index} ({name}) must have rank >= 2, got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise fail(sig, f"input {index} ({name}) must be a (batch of) square matrix, got shape {shape}")
    return shape[:-2], shape[-2], shape[-1]


def infer_square(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """MatrixDeterminant, LogMatrixDeterminant, MatrixInverse, Cholesky: one square matrix input."""
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, LINALG_DTYPES, "x")
    batch, n, _ = _matrix(sig, 0, "x")
    if sig.op == "MatrixDeterminant":
        return (TensorDesc(batch, dtype),)
    if sig.op == "LogMatrixDeterminant":
        return TensorDesc(batch, dtype), TensorDesc(batch, dtype)
    return (TensorDesc(sig.inputs[0].shape, dtype),)


def infer_solve(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """MatrixSolve, MatrixTriangularSolve: (matrix (..., n, n), rhs (..., n, k)) of one batch shape."""
    check_arity(sig, 2, ("matrix", "rhs"))
    dtype = same_dtype(sig, LINALG_DTYPES)
    batch, n, _ = _matrix(sig, 0, "matrix")
    rbatch, rows, _ = _matrix(sig, 1, "rhs", square=False)
    if rbatch != batch or rows != n:
        raise fail(sig, f"rhs shape {sig.inputs[1].shape} must be matrix's batch {batch} + ({n}, k)")
    return (TensorDesc(sig.inputs[1].shape, dtype),)


def infer_qr(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Qr (q, r; ``full_matrices``) and Geqrf (y, tau) of an (..., m, n) matrix."""
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, LINALG_DTYPES, "x")
    batch, m, n = _matrix(sig, 0, "x", square=False)
    k = min(m, n)
    if sig.op == "Geqrf":
        return TensorDesc(sig.inputs[0].shape, dtype), TensorDesc(batch + (k,), dtype)
    cols = m if sig.attr("full_matrices", False) else k
    return TensorDesc(batch + (m, cols), dtype), TensorDesc(batch + (cols, n), dtype)


def infer_orgqr(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Orgqr(x (..., m, n), tau (..., k)): Q's first n columns, k <= n <= m."""
    check_arity(sig, 2, ("x", "tau"))
    dtype = same_dtype(sig, LINALG_DTYPES)
    batch, m, n = _matrix(sig, 0, "x", square=False)
    tau = sig.inputs[1].shape
    if tau[:-1] != batch or not tau or tau[-1] > n or n > m:
        raise fail(sig, f"x {sig.inputs[0].shape} and tau {tau} must be (..., m, n) and (..., k) with k <= n <= m")
    return (TensorDesc(sig.inputs[0].shape, dtype),)


def infer_ormqr(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Ormqr(x (..., mn, k), tau (..., k'), other (..., m, n); left, transpose): Q or Q^T times other."""
    check_arity(sig, 3, ("x", "tau", "other"))
    dtype = same_dtype(sig, LINALG_DTYPES)
    batch, mn, k = _matrix(sig, 0, "x", square=False)
    obatch, m, n = _matrix(sig, 2, "other", square=False)
    tau = sig.inputs[1].shape
    side = m if sig.attr("left", True) else n
    if obatch != batch or tau[:-1] != batch or not tau or tau[-1] > min(mn, k) or mn != side:
        raise fail(sig, f"x {sig.inputs[0].shape}, tau {tau} and other {sig.inputs[2].shape} must share the batch, "
                        f"x's rows must be other's {'rows' if sig.attr('left', True) else 'columns'} and tau "
                        f"hold at most min(x's rows, columns) factors")
    return (TensorDesc(sig.inputs[2].shape, dtype),)


def infer_svd(sig: OpSignature) -> tuple[TensorDesc, ...]:
    """Svd(x (..., m, n); full_matrices, compute_uv) -> s (..., k), u (..., m, k | m), v (..., n, k | n);
    without compute_uv u and v are (0,) placeholders, as MindSpore's."""
    check_arity(sig, 1, ("x",))
    dtype = check_dtype(sig, 0, LINALG_DTYPES, "x")
    batch, m, n = _matrix(sig, 0, "x", square=False)
    k = min(m, n)
    s = TensorDesc(batch + (k,), dtype)
    if not sig.attr("compute_uv", True):
        return s, TensorDesc((0,), dtype), TensorDesc((0,), dtype)
    full = sig.attr("full_matrices", False)
    return s, TensorDesc(batch + (m, m if full else k), dtype), TensorDesc(batch + (n, n if full else k), dtype)


# -------------------------------------------------------------------------------------------- plan

def _dims(sig: OpSignature) -> tuple[int, int, int]:
    """(batch, m, n) of input 0."""
    shape = sig.inputs[0].shape
    return math.prod(shape[:-2]), shape[-2], shape[-1]


# the run-time tiling facts of each kind of op (what the plan's tiling holds besides them is static);
# si, sj: the strides of element (i, j) of an n x n matrix, (n, 1) or, transposed, (1, n)
SQUARE_TILING = ("batch", "n", "per")
INVERSE_TILING = SQUARE_TILING + ("si", "sj")         # the output's (MatrixInverse adjoint, Cholesky upper)
SOLVE_TILING = ("batch", "n", "k", "per")
# the matrix's (adjoint); up: 1 to solve from the last row up (an upper triangle once transposed)
TRIANGULAR_TILING = SOLVE_TILING + ("si", "sj", "up")
# k = min(m, n); kt: the reflectors applied; rows x cols: the matrix they are applied to (Ormqr's
# other, or Q's first cols columns)
QR_TILING = ("batch", "m", "n", "k", "kt", "rows", "cols", "per")
# Ormqr applies them to C's ``lines`` columns (left) or rows, elements ``es`` apart, lines ``ls`` apart;
# down: 1 to apply the last reflector first
ORMQR_TILING = QR_TILING + ("lines", "es", "ls", "down")
# A is m x n, the worked matrix W r x c (A, or A^T when wide: A's (i, j) is W's i * xi + j * xj), ucols
# of its left vectors kept; uv: compute_uv; U's and V's rows x cols from the workspace (W's or V's) at
# wb + off, rows rs apart (0 x 0 without compute_uv)
SVD_TILING = ("batch", "m", "n", "r", "c", "ucols", "xi", "xj", "uv", "u_off", "u_rs", "u_rows", "u_cols",
              "v_off", "v_rs", "v_rows", "v_cols", "per")


def _strides(n: int, transposed: bool) -> dict:
    """si, sj: where element (i, j) of an n x n matrix is, i * si + j * sj."""
    return dict(si=1, sj=n) if transposed else dict(si=n, sj=1)


def _tiling(sig: OpSignature, outputs: tuple[TensorDesc, ...], batch: int, m: int, n: int) -> dict:
    """The sizes each op's kernel loops over, and as static facts the attributes that choose its code."""
    op = sig.op
    if op in ("MatrixDeterminant", "LogMatrixDeterminant"):
        return dict(batch=batch, n=n)
    if op in ("MatrixInverse", "Cholesky"):
        return dict(batch=batch, n=n, **_strides(n, bool(sig.attr("adjoint" if op == "MatrixInverse" else "upper",
                                                                  False))))
    adjoint = bool(sig.attr("adjoint", False))
    if op == "MatrixSolve":
        return dict(batch=batch, n=n, k=sig.inputs[1].shape[-1], adjoint=adjoint)
    if op == "MatrixTriangularSolve":       # lower and not adjoint, or upper and adjoint: from row 0 down
        return dict(batch=batch, n=n, k=sig.inputs[1].shape[-1], up=int(bool(sig.attr("lower", True)) == adjoint),
                    **_strides(n, adjoint))
    if op == "Svd":
        wide, compute_uv = m < n, bool(sig.attr("compute_uv", True))
        full = bool(sig.attr("full_matrices", False))
        r, c = (n, m) if wide else (m, n)
        ucols = r if (full and compute_uv) else c
        # the worked matrix is W S V^T: A's U is W and its V is V, or, when A is wide (A = V S W^T), the other way
        w_, v_ = (0, ucols, r, ucols), (r * ucols, c, c, c)
        left, right = ((v_, w_) if wide else (w_, v_)) if compute_uv else ((0, 0, 0, 0),) * 2
        return dict(batch=batch, m=m, n=n, r=r, c=c, ucols=ucols, xi=1 if wide else ucols, xj=ucols if wide else 1,
                    uv=int(compute_uv), **dict(zip(("u_off", "u_rs", "u_rows", "u_cols"), left)),
                    **dict(zip(("v_off", "v_rs", "v_rows", "v_cols"), right)))
    k = min(m, n)
    facts = dict(batch=batch, m=m, n=n, k=k, kt=k if op in ("Qr", "Geqrf") else sig.inputs[1].shape[-1],
                 rows=m, cols=outputs[0].shape[-1])
    if op == "Ormqr":
        rows, cols = sig.inputs[2].shape[-2:]
        left = bool(sig.attr("left", True))
        # Q = H_0 ... H_(kt-1): Q C and C Q^T apply the last reflector first, Q^T C and C Q the first
        facts.update(rows=rows, cols=cols, lines=cols if left else rows, es=cols if left else 1, ls=1 if left else cols,
                     down=int(left != bool(sig.attr("transpose", False))))
    return facts


def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    """One block per few matrices; a float64 workspace of (m + 1) * (max(m, n) + the right-hand side's
    columns) per matrix; the work of a cubic factorisation (times the sweeps of a Jacobi SVD)."""
    batch, m, n = _dims(sig)
    extra = sig.inputs[-1].shape[-1] if sig.op in ("MatrixSolve", "MatrixTriangularSolve", "Ormqr") else 0
    side = max(m, n, sig.inputs[-1].shape[-2] if sig.op == "Ormqr" else 0)
    per = (side + 1) * (side + max(extra, side) + 2)
    work = batch * side ** 3 * (10 if sig.op == "Svd" else 1)
    moved = sum(d.nbytes for d in sig.inputs) + sum(d.nbytes for d in outputs)
    cost = KernelCost(vector_ops=max(work, 1), bytes=moved, dtype=sig.inputs[0].dtype)
    return Plan(max(1, min(src.MAX_BLOCKS, batch)), cost, (max(batch * per, 1) * 8,),
                dict(_tiling(sig, outputs, batch, m, n), per=per))


# -------------------------------------------------------------------------------------------- emit
# Source fragments over a matrix copied to the workspace at ``wb`` (row-major, its own row length);
# each returns lines for the body of ``for u in range(lo, hi)`` (u: the matrix).
Size = int | src.RuntimeInt      # a size: a literal, or a dynamic-shape kernel's tiling value


def _load_matrix(name: str, rows: Size, cols: Size, dtype: str, dest: str = "wb") -> list[str]:
    size = rows * cols
    return [f"for i in range({size}):",
            f"    w[{dest} + i] = f64({src.load(dtype, f'{name}[u * {size} + i]')})"]


def _lu(n: Size) -> list[str]:
    """LU with partial pivoting of the n x n matrix at wb (in place); the row permutation as floats at
    pb (position -> original row), ``sign`` the permutation's parity."""
    return [f"for i in range({n}):",
            "    w[pb + i] = f64(i)",
            "sign = f64(1.0)",
            f"for k in range({n}):",
            "    p = k",
            f"    best = abs(w[wb + k * {n} + k])",
            f"    for i in range(k + 1, {n}):",
            f"        v = abs(w[wb + i * {n} + k])",
            "        if v > best:",
            "            best = v",
            "            p = i",
            "    if p != k:",
            "        sign = -sign",
            "        t = w[pb + k]",
            "        w[pb + k] = w[pb + p]",
            "        w[pb + p] = t",
            f"        for j in range({n}):",
            f"            t = w[wb + k * {n} + j]",
            f"            w[wb + k * {n} + j] = w[wb + p * {n} + j]",
            f"            w[wb + p * {n} + j] = t",
            f"    piv = w[wb + k * {n} + k]",
            "    if piv != f64(0.0):",
            f"        for i in range(k + 1, {n}):",
            f"            f = w[wb + i * {n} + k] / piv",
            f"            w[wb + i * {n} + k] = f",
            f"            for j in range(k + 1, {n}):",
            f"                w[wb + i * {n} + j] -= f * w[wb + k * {n} + j]"]


def _lu_solve_column(n: Size, adjoint: bool) -> list[str]:
    """Solve (A or A^T) x = b for the column b at cb (in place), with A's LU at wb and permutation at pb."""
    if not adjoint:       # P A = L U: y = L^-1 P b, x = U^-1 y (y kept at yb)
        return [f"for i in range({n}):",
                "    s = w[cb + i64(w[pb + i])]",
                "    for j in range(i):",
                f"        s -= w[wb + i * {n} + j] * w[yb + j]",
                "    w[yb + i] = s",
                f"for i in range({n} - 1, -1, -1):",
                "    s = w[yb + i]",
                f"    for j in range(i + 1, {n}):",
                f"        s -= w[wb + i * {n} + j] * w[yb + j]",
                f"    w[yb + i] = s / w[wb + i * {n} + i]",
                f"for i in range({n}):",
                "    w[cb + i] = w[yb + i]"]
    # A^T = U^T L^T P: U^T z = b, L^T y = z, x = P^T y
    return [f"for i in range({n}):",
            "    s = w[cb + i]",
            "    for j in range(i):",
            f"        s -= w[wb + j * {n} + i] * w[yb + j]",
            f"    w[yb + i] = s / w[wb + i * {n} + i]",
            f"for i in range({n} - 1, -1, -1):",
            "    s = w[yb + i]",
            f"    for j in range(i + 1, {n}):",
            f"        s -= w[wb + j * {n} + i] * w[yb + j]",
            "    w[yb + i] = s",
            f"for i in range({n}):",
            "    w[cb + i64(w[pb + i])] = w[yb + i]"]


def _frame(views: list[tuple[str, int, str]], batch: Size, body: list[str], per: Size) -> str:
    """A kernel over matrices [lo, hi) of the batch, each with ``per`` float64 workspace words at wb."""
    lines = src.HEADER + src.views(*views) + src.indent(src.split_lines(str(batch)))
    lines += ["    for u in range(lo, hi):", f"        wb = u * {per}"] + src.indent(body, 2)
    return src.finish(lines)


def emit_square(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Determinants and the inverse from one LU; Cholesky by columns."""
    dtype, t = sig.inputs[0].dtype, plan.tiling
    batch, n = t["batch"], t["n"]
    ws = len(sig.inputs) + len(outputs)
    views = [("x", 0, dtype)] + [(f"y{i}", 1 + i, d.dtype) for i, d in enumerate(outputs)] + [("w", ws, "float64")]
    body = _load_matrix("x", n, n, dtype) + [f"pb = wb + {n * n}", f"yb = pb + {n}", f"cb = yb + {n}"]
    if sig.op == "Cholesky":
        body = _load_matrix("x", n, n, dtype) + _cholesky(n) + [
            f"for i in range({n}):",
            f"    for j in range({n}):",
            f"        v = w[wb + i * {n} + j] if j <= i else f64(0.0)",
            f"        y0[u * {n * n} + i * {t['si']} + j * {t['sj']}] = " + src.store(dtype, "v")]
        return _frame(views, batch, body, plan.tiling["per"])
    body += _lu(n)
    if sig.op == "MatrixDeterminant":
        body += ["d = sign", f"for i in range({n}):", f"    d *= w[wb + i * {n} + i]",
                 "y0[u] = " + src.store(dtype, "d")]
    elif sig.op == "LogMatrixDeterminant":
        body += ["s = sign", "la = f64(0.0)", f"for i in range({n}):", f"    d = w[wb + i * {n} + i]",
                 "    if d < f64(0.0):", "        s = -s", "    la += math.log(abs(d))",
                 "if la == -np.inf:", "    s = f64(0.0)",
                 "y0[u] = " + src.store(dtype, "s"), "y1[u] = " + src.store(dtype, "la")]
    else:                                  # MatrixInverse: solve for each column of the identity
        index = f"i * {t['si']} + c * {t['sj']}"
        body += [f"for c in range({n}):",
                 f"    for i in range({n}):",
                 "        w[cb + i] = f64(1.0) if i == c else f64(0.0)"]
        body += src.indent(_lu_solve_column(n, False))
        body += [f"    for i in range({n}):",
                 f"        y0[u * {n * n} + {index}] = " + src.store(dtype, "w[cb + i]")]
    return _frame(views, batch, body, plan.tiling["per"])


def _cholesky(n: Size) -> list[str]:
    """The lower Cholesky factor in place at wb (NaN from the first non-positive pivot on)."""
    return [f"for j in range({n}):",
            f"    s = w[wb + j * {n} + j]",
            "    for k in range(j):",
            f"        s -= w[wb + j * {n} + k] * w[wb + j * {n} + k]",
            "    d = math.sqrt(s) if s > f64(0.0) else np.nan",
            f"    w[wb + j * {n} + j] = d",
            f"    for i in range(j + 1, {n}):",
            f"        s = w[wb + i * {n} + j]",
            "        for k in range(j):",
            f"            s -= w[wb + i * {n} + k] * w[wb + j * {n} + k]",
            f"        w[wb + i * {n} + j] = s / d"]


def emit_solve(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Each right-hand side column: LU solve (MatrixSolve) or substitution (MatrixTriangularSolve,
    reading only the ``lower`` or upper triangle, of the matrix or its transpose with ``adjoint``)."""
    dtype, t = sig.inputs[0].dtype, plan.tiling
    batch, n, k = t["batch"], t["n"], t["k"]
    views = [("a", 0, dtype), ("b", 1, dtype), ("y", 2, dtype), ("w", 3, "float64")]
    body = _load_matrix("a", n, n, dtype) + [f"pb = wb + {n * n}", f"yb = pb + {n}", f"cb = yb + {n}"]
    if sig.op == "MatrixSolve":
        body += _lu(n)
        solve = _lu_solve_column(n, t["adjoint"])
    else:      # rows 0, 1, ... each from those above it, or (up) n - 1, n - 2, ... from those below it
        up = t["up"]
        at = lambda i, j: f"w[wb + {i} * {t['si']} + {j} * {t['sj']}]"     # noqa: E731
        solve = [f"for ii in range({n}):", f"    i = ii + {up} * ({n} - 1 - 2 * ii)", "    s = w[cb + i]",
                 f"    for j in range({up} * (i + 1), i + {up} * ({n} - i)):",
                 f"        s -= {at('i', 'j')} * w[cb + j]", f"    w[cb + i] = s / {at('i', 'i')}"]
    body += [f"for c in range({k}):",
             f"    for i in range({n}):",
             f"        w[cb + i] = f64({src.load(dtype, f'b[u * {n * k} + i * {k} + c]')})"]
    body += src.indent(solve)
    body += [f"    for i in range({n}):", f"        y[u * {n * k} + i * {k} + c] = " + src.store(dtype, "w[cb + i]")]
    return _frame(views, batch, body, plan.tiling["per"])


def _householder(m: Size, n: Size, k: Size) -> list[str]:
    """LAPACK's dgeqr2 in place on the m x n matrix at wb (k = min(m, n)): R on and above the diagonal,
    the reflectors' vectors (v[0] = 1 implied) below it, their factors tau at tb."""
    return [f"for k in range({k}):",
            f"    alpha = w[wb + k * {n} + k]",
            "    xn = f64(0.0)",
            f"    for i in range(k + 1, {m}):",
            f"        xn += w[wb + i * {n} + k] * w[wb + i * {n} + k]",
            "    if xn == f64(0.0):",
            "        w[tb + k] = f64(0.0)",
            "        continue",
            "    beta = -math.copysign(math.sqrt(alpha * alpha + xn), alpha)",
            "    w[tb + k] = (beta - alpha) / beta",
            "    scale = f64(1.0) / (alpha - beta)",
            f"    for i in range(k + 1, {m}):",
            f"        w[wb + i * {n} + k] *= scale",
            f"    w[wb + k * {n} + k] = beta",
            f"    for j in range(k + 1, {n}):",
            f"        s = w[wb + k * {n} + j]",
            f"        for i in range(k + 1, {m}):",
            f"            s += w[wb + i * {n} + k] * w[wb + i * {n} + j]",
            "        s *= w[tb + k]",
            f"        w[wb + k * {n} + j] -= s",
            f"        for i in range(k + 1, {m}):",
            f"            w[wb + i * {n} + j] -= s * w[wb + i * {n} + k]"]


def _apply_reflector(m: Size, n: Size, lines: Size, es: Size, ls: Size) -> list[str]:
    """C (at cb) <- H_k C or C H_k, H_k = I - tau_k v v^T, v the k-th column of the reflectors (m x n
    at wb, v[k] = 1): to each of C's ``lines`` columns (left: elements ``es`` = C's row length apart,
    lines ``ls`` = 1 apart) or rows (right: es = 1, ls = the row length)."""
    v = f"(f64(1.0) if i == k else w[wb + i * {n} + k])"
    return [f"for j in range({lines}):",
            "    s = f64(0.0)",
            f"    for i in range(k, {m}):",
            f"        s += {v} * w[cb + i * {es} + j * {ls}]",
            "    s *= w[tb + k]",
            f"    for i in range(k, {m}):",
            f"        w[cb + i * {es} + j * {ls}] -= s * {v}"]


def emit_qr(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """Geqrf: the reflectors and tau; Qr: R from them and Q as H_0 ... H_(k-1) applied to I's columns;
    Orgqr and Ormqr: the given reflectors applied to I's first n columns or to ``other``."""
    dtype, t = sig.inputs[0].dtype, plan.tiling
    batch, m, n, k, kt, rows, cols = (t[name] for name in ("batch", "m", "n", "k", "kt", "rows", "cols"))
    ws = len(sig.inputs) + len(outputs)
    views = ([("x", 0, dtype)] + ([("tau", 1, dtype)] if sig.op in ("Orgqr", "Ormqr") else [])
             + ([("c", 2, dtype)] if sig.op == "Ormqr" else [])
             + [(f"y{i}", len(sig.inputs) + i, d.dtype) for i, d in enumerate(outputs)] + [("w", ws, "float64")])
    body = _load_matrix("x", m, n, dtype) + [f"tb = wb + {m * n}", f"cb = tb + {k}"]
    if sig.op in ("Geqrf", "Qr"):
        body += _householder(m, n, k)
    else:
        body += [f"for i in range({k}):", f"    w[tb + i] = f64({src.load(dtype, f'tau[u * {kt} + i]')}) "
                                          f"if i < {kt} else f64(0.0)"]
    if sig.op == "Geqrf":
        body += [f"for i in range({m * n}):", f"    y0[u * {m * n} + i] = " + src.store(dtype, "w[wb + i]"),
                 f"for i in range({k}):", f"    y1[u * {k} + i] = " + src.store(dtype, "w[tb + i]")]
        return _frame(views, batch, body, plan.tiling["per"])
    if sig.op == "Ormqr":
        body += [f"for i in range({rows * cols}):",
                 f"    w[cb + i] = f64({src.load(dtype, f'c[u * {rows * cols} + i]')})"]
        body += [f"for kk in range({kt}):", f"    k = kk + {t['down']} * ({kt} - 1 - 2 * kk)"]
        body += src.indent(_apply_reflector(m, n, t["lines"], t["es"], t["ls"]))
        body += [f"for i in range({rows * cols}):", f"    y0[u * {rows * cols} + i] = " + src.store(dtype, "w[cb + i]")]
        return _frame(views, batch, body, plan.tiling["per"])
    # Qr and Orgqr: Q's first ``cols`` columns
    body += [f"for i in range({m}):", f"    for j in range({cols}):",
             f"        w[cb + i * {cols} + j] = f64(1.0) if i == j else f64(0.0)",
             f"for k in range({kt} - 1, -1, -1):"] + src.indent(_apply_reflector(m, n, cols, cols, 1))
    body += [f"for i in range({m * cols}):", f"    y0[u * {m * cols} + i] = " + src.store(dtype, "w[cb + i]")]
    if sig.op == "Qr":
        body += [f"for i in range({cols}):", f"    for j in range({n}):",
                 f"        v = w[wb + i * {n} + j] if (j >= i and i < {k}) else f64(0.0)",
                 f"        y1[u * {cols * n} + i * {n} + j] = " + src.store(dtype, "v")]
    return _frame(views, batch, body, plan.tiling["per"])


def emit_svd(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    """One-sided Jacobi on A (or A^T when m < n, so the worked matrix is tall: r x c, r >= c): its
    columns are rotated until orthogonal (W = A V); s_j = |W_j|, U_j = W_j / s_j, sorted descending;
    U's columns completed to an orthonormal set (zero singular values, ``full_matrices``) by
    Gram-Schmidt on the unit vectors."""
    dtype, t = sig.inputs[0].dtype, plan.tiling
    batch, r, c, ucols = t["batch"], t["r"], t["c"], t["ucols"]   # ucols: the worked matrix's left vectors needed
    m, n = t["m"], t["n"]
    views = [("x", 0, dtype), ("s", 1, dtype), ("uo", 2, dtype), ("vo", 3, dtype), ("w", 4, "float64")]
    # workspace: W (r x ucols: its first c columns are A's), V (c x c), s (c)
    load = [f"for i in range({r}):", f"    for j in range({ucols}):",
            "        w[wb + i * {u} + j] = f64(0.0)".format(u=ucols),
            f"for i in range({m}):", f"    for j in range({n}):",
            f"        v = f64({src.load(dtype, f'x[u * {m * n} + i * {n} + j]')})",
            f"        w[wb + i * {t['xi']} + j * {t['xj']}] = v",
            f"vb = wb + {r * ucols}", f"sb = vb + {c * c}",
            f"for i in range({c}):", f"    for j in range({c}):",
            f"        w[vb + i * {c} + j] = f64(1.0) if i == j else f64(0.0)"]
    W = lambda i, j: f"w[wb + {i} * {ucols} + {j}]"      # noqa: E731
    V = lambda i, j: f"w[vb + {i} * {c} + {j}]"          # noqa: E731
    sweep = [f"for sweep in range({JACOBI_SWEEPS}):",
             "    rotated = False",
             f"    for p in range({c} - 1):",
             f"        for q in range(p + 1, {c}):",
             "            al = f64(0.0)", "            be = f64(0.0)", "            ga = f64(0.0)",
             f"            for i in range({r}):",
             f"                al += {W('i', 'p')} * {W('i', 'p')}",
             f"                be += {W('i', 'q')} * {W('i', 'q')}",
             f"                ga += {W('i', 'p')} * {W('i', 'q')}",
             f"            if abs(ga) <= f64({JACOBI_TOL!r}) * math.sqrt(al * be) or ga == f64(0.0):",
             "                continue",
             "            rotated = True",
             "            ze = (be - al) / (f64(2.0) * ga)",
             "            t = math.copysign(f64(1.0), ze) / (abs(ze) + math.sqrt(f64(1.0) + ze * ze))",
             "            cs = f64(1.0) / math.sqrt(f64(1.0) + t * t)",
             "            sn = cs * t",
             f"            for i in range({r}):",
             f"                a0 = {W('i', 'p')}", f"                a1 = {W('i', 'q')}",
             f"                {W('i', 'p')} = cs * a0 - sn * a1", f"                {W('i', 'q')} = sn * a0 + cs * a1",
             f"            for i in range({c}):",
             f"                a0 = {V('i', 'p')}", f"                a1 = {V('i', 'q')}",
             f"                {V('i', 'p')} = cs * a0 - sn * a1", f"                {V('i', 'q')} = sn * a0 + cs * a1",
             "    if not rotated:", "        break"]
    norms = [f"for j in range({c}):", "    t = f64(0.0)", f"    for i in range({r}):",
             f"        t += {W('i', 'j')} * {W('i', 'j')}", "    w[sb + j] = math.sqrt(t)"]
    # selection sort, descending, moving W's and V's columns along
    order = [f"for j in range({c}):", "    b = j",
             f"    for q in range(j + 1, {c}):", "        if w[sb + q] > w[sb + b]:", "            b = q",
             "    if b != j:", "        t = w[sb + j]", "        w[sb + j] = w[sb + b]", "        w[sb + b] = t",
             f"        for i in range({r}):", f"            t = {W('i', 'j')}", f"            {W('i', 'j')} = {W('i', 'b')}",
             f"            {W('i', 'b')} = t",
             f"        for i in range({c}):", f"            t = {V('i', 'j')}", f"            {V('i', 'j')} = {V('i', 'b')}",
             f"            {V('i', 'b')} = t"]
    # U: normalised columns while s_j > tol * s_0; the rest by Gram-Schmidt on e_0, e_1, ...
    tol = f"(f64({r}) * f64(2.3e-16)) * w[sb]"
    complete = ["ready = 0",
                f"for j in range({c}):",
                f"    if w[sb + j] > {tol} and w[sb + j] > f64(0.0):",
                f"        for i in range({r}):", f"            {W('i', 'j')} /= w[sb + j]",
                "        ready = j + 1",
                "    else:", "        break",
                "e = 0",
                f"for j in range(ready, {ucols}):",
                f"    while e < {r}:",
                f"        for i in range({r}):", f"            {W('i', 'j')} = f64(1.0) if i == e else f64(0.0)",
                "        e += 1",
                "        for twice in range(2):",
                "            for q in range(j):",
                "                d = f64(0.0)",
                f"                for i in range({r}):", f"                    d += {W('i', 'q')} * {W('i', 'j')}",
                f"                for i in range({r}):", f"                    {W('i', 'j')} -= d * {W('i', 'q')}",
                "        t = f64(0.0)",
                f"        for i in range({r}):", f"            t += {W('i', 'j')} * {W('i', 'j')}",
                "        if t > f64(0.25):",
                "            t = math.sqrt(t)",
                f"            for i in range({r}):", f"                {W('i', 'j')} /= t",
                "            break"]
    store = [f"for j in range({c}):", f"    s[u * {c} + j] = " + src.store(dtype, "w[sb + j]")]
    for out, side in (("uo", "u"), ("vo", "v")):
        rows, cols, off, rs = (t[f"{side}_{fact}"] for fact in ("rows", "cols", "off", "rs"))
        store += [f"for i in range({rows}):", f"    for j in range({cols}):",
                  f"        {out}[u * {rows * cols} + i * {cols} + j] = "
                  + src.store(dtype, f"w[wb + {off} + i * {rs} + j]")]
    body = load + sweep + norms + order + [f"if {t['uv']} != 0:"] + src.indent(complete) + store
    return _frame(views, batch, body, plan.tiling["per"])


# ------------------------------------------------------------------------------------ backward rules

def _transpose(b: GradBuilder, x: int) -> int:
    rank = len(b.desc(x).shape)
    return b.op("Transpose", x, perm=tuple(range(rank - 2)) + (rank - 1, rank - 2))


def _per_matrix(b: GradBuilder, value: int) -> int:
    """A (batch,) value as (batch, 1, 1), to scale each matrix."""
    return b.op("Reshape", value, shape=tuple(b.desc(value).shape) + (1, 1))


def grad_det(b: GradBuilder, c: GradCall) -> tuple[int]:
    """d det(A) = dout * det(A) * A^-T."""
    scale = _per_matrix(b, b.op("Mul", c.douts[0], c.outputs[0]))
    return (b.op("Mul", scale, b.op("MatrixInverse", c.inputs[0], adjoint=True)),)


def grad_logdet(b: GradBuilder, c: GradCall) -> tuple[int | None]:
    """d log|det A| = A^-T (the sign is piecewise constant)."""
    if c.douts[1] is None:
        return (None,)
    return (b.op("Mul", _per_matrix(b, c.douts[1]), b.op("MatrixInverse", c.inputs[0], adjoint=True)),)


def grad_inverse(b: GradBuilder, c: GradCall) -> tuple[int]:
    """d inv(A) = -A^-T G A^-T = -(A^-1 (A^-T G)^T)^T, by two solves; with ``adjoint`` (out = A^-T) the
    same of G^T."""
    a, g = c.inputs[0], c.douts[0]
    if c.sig.attr("adjoint", False):
        g = _transpose(b, g)
    x = b.op("MatrixSolve", a, g, adjoint=True)
    return (b.op("Neg", _transpose(b, b.op("MatrixSolve", a, _transpose(b, x), adjoint=False))),)


OPS: tuple[OpDef, ...] = (
    OpDef("MatrixDeterminant", "matrix_determinant", infer_square, plan, emit_square, grad=grad_det,
          frontend=Exposure(("MatrixDeterminant",), ("det", "matrix_determinant")),
          runtime_tiling=SQUARE_TILING),
    OpDef("LogMatrixDeterminant", "log_matrix_determinant", infer_square, plan, emit_square, grad=grad_logdet,
          frontend=Exposure(("LogMatrixDeterminant",), ("slogdet", "log_matrix_determinant")),
          runtime_tiling=SQUARE_TILING),
    OpDef("MatrixInverse", "matrix_inverse", infer_square, plan, emit_square, grad=grad_inverse,
          frontend=Exposure(("MatrixInverse",), ("inverse",)),
          runtime_tiling=INVERSE_TILING),
    OpDef("Cholesky", "cholesky", infer_square, plan, emit_square, frontend=Exposure(("Cholesky",), ("cholesky",)),
          runtime_tiling=INVERSE_TILING),
    OpDef("MatrixSolve", "matrix_solve", infer_solve, plan, emit_solve,
          frontend=Exposure(("MatrixSolve",), ("matrix_solve",)),
          runtime_tiling=SOLVE_TILING),
    OpDef("MatrixTriangularSolve", "matrix_triangular_solve", infer_solve, plan, emit_solve,
          frontend=Exposure(("MatrixTriangularSolve",), ()),
          runtime_tiling=TRIANGULAR_TILING),
    OpDef("Qr", "qr", infer_qr, plan, emit_qr, frontend=Exposure(("Qr",), ("qr",)),
          runtime_tiling=QR_TILING),
    OpDef("Geqrf", "geqrf", infer_qr, plan, emit_qr, frontend=Exposure(("Geqrf",), ("geqrf",)),
          runtime_tiling=QR_TILING),
    OpDef("Orgqr", "orgqr", infer_orgqr, plan, emit_qr, frontend=Exposure(("Orgqr",), ("orgqr",)),
          runtime_tiling=QR_TILING),
    OpDef("Ormqr", "ormqr", infer_ormqr, plan, emit_qr, frontend=Exposure(("Ormqr",), ("ormqr",)),
          runtime_tiling=ORMQR_TILING),
    OpDef("Svd", "svd", infer_svd, plan, emit_svd, frontend=Exposure(("Svd",), ("svd",)),
          runtime_tiling=SVD_TILING),
)
