"""Special functions, elementwise: Lgamma, Digamma, Polygamma, Zeta (Hurwitz), Igamma/Igammac (the
regularised incomplete gamma functions), Betainc (the regularised incomplete beta function) and the
Bessel functions I0, I1, J0, J1, Y0, Y1, K0, K1 (and the exponentially scaled I0e, I1e, K0e, K1e).

Dynamic-shape kernels, as the elementwise family's: the element count, the coalesced loop dims and the
operands' broadcast strides along them are run-time tiling data (``elementwise.RUNTIME_TILING``), the
stride kinds and the dtypes compiled in, so one kernel per (op, dtypes, broadcast pattern) serves every
shape; the per-element program holds no size, so the arithmetic and its order are the specialised
kernels' and so are the bits.

Each is the elementwise family's loop (:func:`~ascendemu.kernels.ops.elementwise.layout_source`:
broadcast operands, blocks splitting the flat output) around a per-element program with loops, so it
is no FusedElemwise step: every value is computed in float64 registers whatever the operands' float
type, and rounded once when stored. Methods (all classical, none needing tables):
- lgamma: Lanczos' approximation (libm's is not linkable); digamma: recurrence up to x >= 10, then its asymptotic series; reflection for x < 0;
- Hurwitz zeta: Euler-Maclaurin summation (Cephes' ``zeta``); polygamma(n, x) = (-1)^(n+1) n! zeta(n+1, x);
- igamma: the power series for x < a + 1, else the continued fraction of the complement (Numerical
  Recipes' gser/gcf); betainc: the continued fraction (betacf) on the side where it converges fast;
- Bessel functions: their power series for |x| < BESSEL_SERIES_LIMIT (I, J, Y) or x <= 2 (K), Hankel's
  asymptotic expansions beyond (I, J, Y, and K above K_ASYMPTOTIC; the neglected terms are ~e^-2x), and
  for K with 2 < x <= K_ASYMPTOTIC the integral int_0^inf exp(-x cosh t) cosh(nt) dt by the trapezoidal rule (exponentially accurate for
  this even, doubly-exponentially decaying integrand).

Backward rules: lgamma' = digamma, digamma' = polygamma(1, x), polygamma(n, x)' = polygamma(n + 1, x),
d igamma(a, x)/dx = x^(a-1) e^-x / Gamma(a) (igammac: its negative; a gets none, MindSpore's
IgammaGradA is not served), and the Bessel functions' derivatives by their recurrences.
"""
from __future__ import annotations

import math

from ascendemu.device.cost import KernelCost
from ascendemu.kernels.opdef import Exposure, Grad, GradBuilder, GradCall, OpDef, Plan
from ascendemu.kernels.signature import OpSignature, TensorDesc

from . import src
from .common import FLOATS, INDEX, broadcast_shapes, check_arity, check_dtype, fail
from .elementwise import RUNTIME_TILING, broadcast_strides, layout_source, strided_layout

# the power series of I, J and Y below this |x|, Hankel's asymptotic expansions above it: the series
# loses ~e^x / 1e16 to cancellation (J, Y), the expansion is good to ~e^-2x
BESSEL_SERIES_LIMIT = 17.0
# the trapezoidal rule's step for K (error ~ exp(-pi^2 / step)) and where the integrand is negligible
K_STEP = 0.0625
K_TAIL = 745.0
# K's asymptotic expansion above this x (its neglected terms are ~e^-2x)
K_ASYMPTOTIC = 20.0
# the iteration caps of the series and continued fractions (each stops at float64 precision first)
MAX_TERMS = 2000
EPS = 2.220446049250313e-16
EULER = 0.5772156649015329
# Lanczos' approximation of Gamma (g = 7, n = 9: Numerical Recipes' / Boost's double coefficients)
LANCZOS_G = 7.0
LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
           12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)
# Cephes' Euler-Maclaurin coefficients of zeta: (2k)! / B_2k
ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
          -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
          1.8152105401943546773e17, -7.1661652561756670113e18)


# ---------------------------------------------------------------------------------- element programs
# Each takes the names of float64 operand variables and returns lines leaving the result in ``out``;
# every local is prefixed z_ (the loop around owns the others).

def _lgamma(x: str, out: str, tag: str = "") -> list[str]:
    """log|Gamma(x)| by Lanczos' approximation (g = 7, 9 terms; ~1e-15), reflected below 1/2; inf at the
    poles. (libm's lgamma is not linkable by a kernel.)"""
    v = f"z_lg{tag}"
    series = " + ".join(f"f64({c!r}) / ({v}x + f64({float(i)!r}))" for i, c in enumerate(LANCZOS[1:], start=1))
    return [f"{v}r = f64(0.0)", f"{v}x = {x}",
            f"if {v}x != {v}x or {v}x == np.inf:", f"    {out} = abs({v}x)",
            f"elif {v}x <= f64(0.0) and {v}x == np.floor({v}x):", f"    {out} = np.inf",
            "else:",
            f"    if {v}x < f64(0.5):",       # log|Gamma(x)| = log(pi / |sin(pi x)|) - log Gamma(1 - x)
            f"        {v}r = math.log(math.pi / abs(math.sin(math.pi * {v}x)))",
            f"        {v}x = f64(1.0) - {v}x",
            f"    {v}x -= f64(1.0)",
            f"    {v}t = {v}x + f64({LANCZOS_G + 0.5!r})",
            f"    {v}a = f64({LANCZOS[0]!r}) + {series}",
            f"    {v}l = f64({0.5 * math.log(2 * math.pi)!r}) + ({v}x + f64(0.5)) * math.log({v}t) - {v}t + math.log({v}a)",
            f"    {out} = {v}r - {v}l if {v}r != f64(0.0) else {v}l"]


def _digamma(x: str, out: str) -> list[str]:
    return [f"z_x = {x}", "z_acc = f64(0.0)",
            "if z_x != z_x or z_x == -np.inf:", f"    {out} = np.nan",
            "elif z_x == f64(0.0):", f"    {out} = -np.inf",          # MindSpore's value at 0; NaN at the other poles
            "elif z_x < f64(0.0) and z_x == np.floor(z_x):", f"    {out} = np.nan",
            "else:",
            "    if z_x < f64(0.0):",      # psi(x) = psi(1 - x) - pi / tan(pi x)
            "        z_acc = -math.pi / math.tan(math.pi * z_x)",
            "        z_x = f64(1.0) - z_x",
            "    while z_x < f64(10.0):",
            "        z_acc -= f64(1.0) / z_x",
            "        z_x += f64(1.0)",
            "    z_f = f64(1.0) / (z_x * z_x)",
            "    z_p = z_f * (f64(1.0 / 12) - z_f * (f64(1.0 / 120) - z_f * (f64(1.0 / 252) - z_f * (f64(1.0 / 240) "
            "- z_f * f64(1.0 / 132)))))",
            f"    {out} = math.log(z_x) - f64(0.5) / z_x - z_p + z_acc"]


def _zeta(x: str, q: str, out: str) -> list[str]:
    """Cephes' zeta(x, q) = sum_k (k + q)^-x."""
    lines = ["z_s = f64(0.0)", f"z_zx = {x}", f"z_zq = {q}", "z_done = False",
             "if z_zx != z_zx or z_zq != z_zq:", f"    {out} = np.nan", "    z_done = True",
             "elif z_zx == f64(1.0):", f"    {out} = np.inf", "    z_done = True",
             "elif z_zx < f64(1.0):", f"    {out} = np.nan", "    z_done = True",
             "elif z_zq <= f64(0.0) and z_zq == np.floor(z_zq):", f"    {out} = np.inf", "    z_done = True",
             "elif z_zq <= f64(0.0) and z_zx != np.floor(z_zx):", f"    {out} = np.nan", "    z_done = True",
             "if not z_done:",
             "    z_s = math.pow(z_zq, -z_zx)", "    z_a = z_zq", "    z_i = 0", "    z_b = f64(0.0)",
             "    while z_i < 9 or z_a <= f64(9.0):",
             "        z_i += 1", "        z_a += f64(1.0)", "        z_b = math.pow(z_a, -z_zx)", "        z_s += z_b",
             f"        if abs(z_b / z_s) < f64({EPS!r}):", "            z_done = True", "            break",
             f"    {out} = z_s",
             "if not z_done:",
             "    z_w = z_a", "    z_s += z_b * z_w / (z_zx - f64(1.0))", "    z_s -= f64(0.5) * z_b",
             "    z_a = f64(1.0)", "    z_k = f64(0.0)"]
    for coefficient in ZETA_A:
        lines += ["    if not z_done:",
                  "        z_a *= z_zx + z_k", "        z_b /= z_w", f"        z_t = z_a * z_b / f64({coefficient!r})",
                  "        z_s += z_t",
                  f"        if abs(z_t / z_s) < f64({EPS!r}):", "            z_done = True",
                  "        z_k += f64(1.0)", "        z_a *= z_zx + z_k", "        z_b /= z_w", "        z_k += f64(1.0)"]
    return lines + [f"    {out} = z_s"]


def _polygamma(n: str, x: str, out: str) -> list[str]:
    return (["if " + n + " == 0:"] + src.indent(_digamma(x, out))
            + [f"elif {n} < 0:", f"    {out} = np.nan", "else:"]
            + src.indent(_zeta(f"f64({n} + 1)", x, "z_zv"))
            + ["    z_fact = f64(1.0)", f"    for z_i in range(2, {n} + 1):", "        z_fact *= f64(z_i)",
               f"    {out} = (f64(1.0) if {n} % 2 == 1 else f64(-1.0)) * z_fact * z_zv"])


def _igamma(a: str, x: str, out: str, upper: bool) -> list[str]:
    """P(a, x) (or Q = 1 - P with ``upper``): NR's gser below x = a + 1, gcf above."""
    lower_value, upper_value = ("z_g", "f64(1.0) - z_g") if not upper else ("f64(1.0) - z_g", "z_g")
    return [f"z_a = {a}", f"z_xx = {x}",
            "if z_a != z_a or z_xx != z_xx or z_xx < f64(0.0) or z_a <= f64(0.0):", f"    {out} = np.nan",
            "elif z_xx == f64(0.0):", f"    {out} = " + ("f64(1.0)" if upper else "f64(0.0)"),
            "elif z_xx == np.inf:", f"    {out} = " + ("np.nan" if upper else "f64(1.0)"),   # as MindSpore
            "else:",
            ] + src.indent(_lgamma("z_a", "z_lga")) + [
            "    z_front = math.exp(-z_xx + z_a * math.log(z_xx) - z_lga)",
            "    if z_xx < z_a + f64(1.0):",
            "        z_ap = z_a", "        z_del = f64(1.0) / z_a", "        z_sum = z_del",
            f"        for z_i in range({MAX_TERMS}):",
            "            z_ap += f64(1.0)", "            z_del *= z_xx / z_ap", "            z_sum += z_del",
            f"            if abs(z_del) < abs(z_sum) * f64({EPS!r}):", "                break",
            "        z_g = z_sum * z_front",
            f"        {out} = {lower_value}",
            "    else:",
            "        z_b = z_xx + f64(1.0) - z_a", "        z_c = f64(1e300)", "        z_d = f64(1.0) / z_b",
            "        z_h = z_d",
            f"        for z_i in range(1, {MAX_TERMS}):",
            "            z_an = -z_i * (z_i - z_a)", "            z_b += f64(2.0)",
            "            z_d = z_an * z_d + z_b",
            "            if abs(z_d) < f64(1e-300):", "                z_d = f64(1e-300)",
            "            z_c = z_b + z_an / z_c",
            "            if abs(z_c) < f64(1e-300):", "                z_c = f64(1e-300)",
            "            z_d = f64(1.0) / z_d", "            z_del = z_d * z_c", "            z_h *= z_del",
            f"            if abs(z_del - f64(1.0)) < f64({EPS!r}):", "                break",
            "        z_g = z_front * z_h",
            f"        {out} = {upper_value}"]


def _betainc(a: str, b: str, x: str, out: str) -> list[str]:
    """I_x(a, b): NR's betai, the continued fraction (Lentz) of the side x < (a + 1) / (a + b + 2)."""
    return [f"z_a = {a}", f"z_b = {b}", f"z_x = {x}",
            "if z_a != z_a or z_b != z_b or z_x != z_x or z_x < f64(0.0) or z_x > f64(1.0) or z_a <= f64(0.0) "
            "or z_b <= f64(0.0):", f"    {out} = np.nan",
            "elif z_x == f64(0.0) or z_x == f64(1.0):", f"    {out} = z_x",
            "else:",
            ] + src.indent(_lgamma("z_a + z_b", "z_g0", "0") + _lgamma("z_a", "z_g1", "1") + _lgamma("z_b", "z_g2", "2")) + [
            "    z_bt = math.exp(z_g0 - z_g1 - z_g2 + z_a * math.log(z_x) + z_b * math.log1p(-z_x))",
            "    z_flip = z_x >= (z_a + f64(1.0)) / (z_a + z_b + f64(2.0))",
            "    z_p = z_b if z_flip else z_a", "    z_q = z_a if z_flip else z_b",
            "    z_t = f64(1.0) - z_x if z_flip else z_x",
            "    z_qab = z_p + z_q", "    z_qap = z_p + f64(1.0)", "    z_qam = z_p - f64(1.0)",
            "    z_c = f64(1.0)", "    z_d = f64(1.0) - z_qab * z_t / z_qap",
            "    if abs(z_d) < f64(1e-300):", "        z_d = f64(1e-300)",
            "    z_d = f64(1.0) / z_d", "    z_h = z_d",
            f"    for z_m in range(1, {MAX_TERMS}):",
            "        z_m2 = 2 * z_m",
            "        z_aa = z_m * (z_q - z_m) * z_t / ((z_qam + z_m2) * (z_p + z_m2))",
            "        z_d = f64(1.0) + z_aa * z_d",
            "        if abs(z_d) < f64(1e-300):", "            z_d = f64(1e-300)",
            "        z_c = f64(1.0) + z_aa / z_c",
            "        if abs(z_c) < f64(1e-300):", "            z_c = f64(1e-300)",
            "        z_d = f64(1.0) / z_d", "        z_h *= z_d * z_c",
            "        z_aa = -(z_p + z_m) * (z_qab + z_m) * z_t / ((z_p + z_m2) * (z_qap + z_m2))",
            "        z_d = f64(1.0) + z_aa * z_d",
            "        if abs(z_d) < f64(1e-300):", "            z_d = f64(1e-300)",
            "        z_c = f64(1.0) + z_aa / z_c",
            "        if abs(z_c) < f64(1e-300):", "            z_c = f64(1e-300)",
            "        z_d = f64(1.0) / z_d", "        z_del = z_d * z_c", "        z_h *= z_del",
            f"        if abs(z_del - f64(1.0)) < f64({EPS!r}):", "            break",
            "    z_r = z_bt * z_h / z_p",
            f"    {out} = f64(1.0) - z_r if z_flip else z_r"]


def _series(order: int, x: str, sign: int) -> list[str]:
    """z_sj = sum_k sign^k (x/2)^(2k+n) / (k! (k+n)!) (J for sign -1, I for +1) and z_sy = the same
    terms times psi(k+1) + psi(n+k+1) (Y's and K's logarithmic series), for n = ``order``."""
    first = "f64(1.0)" if order == 0 else "z_h"
    return ["z_h = f64(0.5) * " + x, "z_q = z_h * z_h", f"z_t = {first}", "z_hk = f64(0.0)",
            f"z_hn = f64({sum(1.0 / i for i in range(1, order + 1))!r})",
            "z_sj = z_t", f"z_sy = z_t * (z_hk + z_hn - f64({2 * EULER!r}))",
            f"for z_k in range(1, {MAX_TERMS}):",
            f"    z_t *= f64({float(sign)!r}) * z_q / (z_k * (z_k + {order}))",
            "    z_hk += f64(1.0) / z_k", f"    z_hn += f64(1.0) / (z_k + {order})",
            "    z_sj += z_t", f"    z_sy += z_t * (z_hk + z_hn - f64({2 * EULER!r}))",
            "    if z_k > z_h and abs(z_t) <= f64(1e-17) * abs(z_sj):", "        break"]


def _hankel(order: int, x: str, alternating: bool | None) -> list[str]:
    """Hankel's expansions in 1/x for order n: z_pp = sum (-1)^k a_2k, z_qq = sum (-1)^k a_(2k+1) (J, Y),
    ``alternating`` None), or z_pp = sum (-1)^k a_k for I (True) and K (False), a_k = prod (mu - (2i-1)^2) / (k! (8x)^k)."""
    mu = 4.0 * order * order
    lines = ["z_pp = f64(1.0)", "z_qq = f64(0.0)", "z_a = f64(1.0)",
             "for z_k in range(1, 40):",
             f"    z_a *= (f64({mu!r}) - f64((2 * z_k - 1) * (2 * z_k - 1))) / (f64(8.0) * z_k * {x})"]
    if alternating is None:
        lines += ["    if z_k % 2 == 1:", "        z_qq += z_a if (z_k // 2) % 2 == 0 else -z_a",
                  "    else:", "        z_pp += z_a if (z_k // 2) % 2 == 0 else -z_a"]
    elif alternating:
        lines += ["    z_pp += -z_a if z_k % 2 == 1 else z_a"]
    else:
        lines += ["    z_pp += z_a"]
    return lines + ["    if abs(z_a) < f64(1e-17):", "        break"]


def _bessel_i(order: int, scaled: bool, x: str, out: str) -> list[str]:
    odd = "(-1.0 if " + x + " < f64(0.0) else 1.0)" if order == 1 else "1.0"
    big = _hankel(order, "z_ax", True)
    scale_big = "" if scaled else " * math.exp(z_ax)"
    scale_small = " * math.exp(-z_ax)" if scaled else ""
    return ([f"z_ax = abs({x})", f"if {x} != {x}:", f"    {out} = np.nan",
             f"elif z_ax < f64({BESSEL_SERIES_LIMIT!r}):"]
            + src.indent(_series(order, "z_ax", 1)) + [f"    {out} = f64({odd}) * z_sj{scale_small}", "else:"]
            + src.indent(big)
            + [f"    {out} = f64({odd}) * z_pp / math.sqrt(f64(2.0) * math.pi * z_ax){scale_big}"])


def _bessel_jy(order: int, kind: str, x: str, out: str) -> list[str]:
    """J_n (any x; odd or even) or Y_n (x > 0)."""
    sign = "(-1.0 if " + x + " < f64(0.0) else 1.0)" if order == 1 else "1.0"
    phase = (order / 2.0 + 0.25) * math.pi
    if kind == "J":
        small = [f"    {out} = f64({sign}) * z_sj"]
        large = [f"    {out} = f64({sign}) * math.sqrt(f64(2.0) / (math.pi * z_ax)) * (z_pp * z_cos - z_qq * z_sin)"]
        head = [f"z_ax = abs({x})", f"if {x} != {x}:", f"    {out} = np.nan"]
    else:
        inverse = " - f64(2.0) / (math.pi * z_ax)" if order == 1 else ""
        small = [f"    {out} = f64(2.0) / math.pi * z_sj * math.log(f64(0.5) * z_ax) - z_sy / math.pi{inverse}"]
        large = [f"    {out} = math.sqrt(f64(2.0) / (math.pi * z_ax)) * (z_pp * z_sin + z_qq * z_cos)"]
        # MindSpore's values off the domain: -inf below 0; at 0, -inf (Y0) and NaN (Y1)
        head = [f"z_ax = {x}", f"if {x} != {x}:", f"    {out} = np.nan",
                f"elif {x} < f64(0.0):", f"    {out} = -np.inf",
                f"elif {x} == f64(0.0):", f"    {out} = " + ("np.nan" if order == 1 else "-np.inf")]
    return (head + [f"elif z_ax < f64({BESSEL_SERIES_LIMIT!r}):"] + src.indent(_series(order, "z_ax", -1)) + small
            + ["else:"] + src.indent(_hankel(order, "z_ax", None)) + [f"    z_chi = z_ax - f64({phase!r})",
               # sin as a cosine of another argument: LLVM would merge sin(a) and cos(a) into a call of
               # sincos, which no kernel may link
               "    z_cos = math.cos(z_chi)", f"    z_sin = math.cos(z_chi - f64({math.pi / 2!r}))"] + large)


def _bessel_k(order: int, scaled: bool, x: str, out: str) -> list[str]:
    """K_n for x > 0: the logarithmic series up to 2, the integral, then the asymptotic expansion."""
    inverse = " + f64(1.0) / z_ax" if order == 1 else ""
    log_sign = "f64(1.0)" if order == 1 else "f64(-1.0)"
    sum_sign = "f64(-0.5)" if order == 1 else "f64(0.5)"
    return [f"z_ax = {x}", f"if {x} != {x}:", f"    {out} = np.nan",
            f"elif {x} <= f64(0.0):", f"    {out} = np.inf",           # MindSpore's value below 0 too
            "elif z_ax <= f64(2.0):"] + src.indent(_series(order, "z_ax", 1)) + [
            f"    {out} = ({log_sign} * math.log(f64(0.5) * z_ax) * z_sj + {sum_sign} * z_sy{inverse})"
            + (" * math.exp(z_ax)" if scaled else ""),
            f"elif z_ax > f64({K_ASYMPTOTIC!r}):"] + src.indent(_hankel(order, "z_ax", False)) + [
            "    " + out + " = z_pp * math.sqrt(math.pi / (f64(2.0) * z_ax))" + ("" if scaled else " * math.exp(-z_ax)"),
            "else:",
            "    z_sum = f64(0.5)",
            f"    z_t = f64({K_STEP!r})",
            "    while True:",
            "        z_e = z_ax * (math.cosh(z_t) - f64(1.0))",
            f"        if z_e > f64({K_TAIL!r}):", "            break",
            f"        z_sum += math.exp(-z_e) * math.cosh(f64({float(order)!r}) * z_t)",
            f"        z_t += f64({K_STEP!r})",
            f"    {out} = z_sum * f64({K_STEP!r})" + ("" if scaled else " * math.exp(-z_ax)")]


# ------------------------------------------------------------------------------------------- infer

def _infer(operands: tuple[str, ...], int_first: bool = False):
    """Broadcasting operands of one float dtype (Polygamma: an integer order first, then x)."""
    def infer(sig: OpSignature) -> tuple[TensorDesc, ...]:
        check_arity(sig, len(operands), operands)
        floats = sig.inputs[1:] if int_first else sig.inputs
        if int_first:
            check_dtype(sig, 0, INDEX, operands[0])
        dtype = check_dtype(sig, len(sig.inputs) - len(floats), FLOATS, operands[-1])
        for i, desc in enumerate(floats):
            if desc.dtype != dtype:
                raise fail(sig, f"operands {operands} must share one float dtype, got {[d.dtype for d in floats]}")
        return (TensorDesc(broadcast_shapes(sig, [d.shape for d in sig.inputs]), dtype),)
    return infer


# the element program of each op: operand variables -> lines leaving ``z_out``
PROGRAMS = {
    "Lgamma": lambda v: _lgamma(v[0], "z_out"),
    "Digamma": lambda v: _digamma(v[0], "z_out"),
    "Polygamma": lambda v: _polygamma(v[0], v[1], "z_out"),
    "Zeta": lambda v: _zeta(v[0], v[1], "z_out"),
    "Igamma": lambda v: _igamma(v[0], v[1], "z_out", False),
    "Igammac": lambda v: _igamma(v[0], v[1], "z_out", True),
    "Betainc": lambda v: _betainc(v[0], v[1], v[2], "z_out"),
    "BesselI0": lambda v: _bessel_i(0, False, v[0], "z_out"),
    "BesselI0e": lambda v: _bessel_i(0, True, v[0], "z_out"),
    "BesselI1": lambda v: _bessel_i(1, False, v[0], "z_out"),
    "BesselI1e": lambda v: _bessel_i(1, True, v[0], "z_out"),
    "BesselJ0": lambda v: _bessel_jy(0, "J", v[0], "z_out"),
    "BesselJ1": lambda v: _bessel_jy(1, "J", v[0], "z_out"),
    "BesselY0": lambda v: _bessel_jy(0, "Y", v[0], "z_out"),
    "BesselY1": lambda v: _bessel_jy(1, "Y", v[0], "z_out"),
    "BesselK0": lambda v: _bessel_k(0, False, v[0], "z_out"),
    "BesselK0e": lambda v: _bessel_k(0, True, v[0], "z_out"),
    "BesselK1": lambda v: _bessel_k(1, False, v[0], "z_out"),
    "BesselK1e": lambda v: _bessel_k(1, True, v[0], "z_out"),
}
# float work per element charged to the cost model (the loops' typical length)
WORK_PER_ELEMENT = 60


def plan(sig: OpSignature, outputs: tuple[TensorDesc, ...]) -> Plan:
    n = outputs[0].size
    out_shape = outputs[0].shape
    layout = strided_layout(out_shape, [broadcast_strides(out_shape, d.shape) for d in sig.inputs])
    moved = sum(d.nbytes for d in sig.inputs) + outputs[0].nbytes
    cost = KernelCost(vector_ops=n * WORK_PER_ELEMENT, bytes=moved, dtype=outputs[0].dtype)
    return Plan(src.elementwise_blocks(n), cost, (), layout)


def emit(sig: OpSignature, outputs: tuple[TensorDesc, ...], plan: Plan) -> str:
    names = []
    steps = []
    for i, desc in enumerate(sig.inputs):
        if desc.dtype in FLOATS:
            steps.append(f"z_v{i} = f64(v{i})")
            names.append(f"z_v{i}")
        else:
            names.append(f"v{i}")
    steps += ["z_out = f64(0.0)"] + PROGRAMS[sig.op](names)
    return layout_source(tuple(d.dtype for d in sig.inputs), plan.tiling, steps, [("z_out", outputs[0].dtype)], "d")


# ------------------------------------------------------------------------------------ backward rules

def _k(b: GradBuilder, value: float, like: int) -> int:
    return b.scalar(value, b.desc(like).dtype)


def _unary(local) -> Grad:
    def rule(b: GradBuilder, c: GradCall) -> tuple[int]:
        return (b.op("Mul", c.douts[0], local(b, c.inputs[0], c.outputs[0])),)
    return rule


def _polygamma_of(b: GradBuilder, order: int, x: int) -> int:
    return b.op("Polygamma", b.scalar(order, "int64"), x)


def grad_polygamma(b: GradBuilder, c: GradCall) -> tuple[None, int]:
    n, x = c.inputs
    up = b.op("Add", n, b.scalar(1, b.desc(n).dtype))
    return None, b.sum_to(b.op("Mul", c.douts[0], b.op("Polygamma", up, x)), b.desc(x).shape)


def _igamma_rule(sign: float) -> Grad:
    """d P(a, x)/dx = exp((a - 1) log x - x - lgamma(a)); Q's is its negative; a gets none."""
    def rule(b: GradBuilder, c: GradCall) -> tuple[None, int]:
        a, x = c.inputs
        expo = b.op("Sub", b.op("Sub", b.op("Mul", b.op("Sub", a, _k(b, 1.0, a)), b.op("Log", x)), x),
                    b.op("Lgamma", a))
        slope = b.op("Mul", _k(b, sign, x), b.op("Exp", expo))
        return None, b.sum_to(b.op("Mul", c.douts[0], slope), b.desc(x).shape)
    return rule


def _over_x(b: GradBuilder, value: int, x: int) -> int:
    return b.op("Div", value, x)


def _sign(b: GradBuilder, x: int) -> int:
    return b.op("Sign", x)


BESSEL_SLOPES = {      # d f(x) / dx from x and out = f(x)
    "BesselI0": lambda b, x, out: b.op("BesselI1", x),
    "BesselI0e": lambda b, x, out: b.op("Sub", b.op("BesselI1e", x), b.op("Mul", _sign(b, x), out)),
    "BesselI1": lambda b, x, out: b.op("Sub", b.op("BesselI0", x), _over_x(b, out, x)),
    "BesselI1e": lambda b, x, out: b.op("Sub", b.op("Sub", b.op("BesselI0e", x), b.op("Mul", _sign(b, x), out)),
                                        _over_x(b, out, x)),
    "BesselJ0": lambda b, x, out: b.op("Neg", b.op("BesselJ1", x)),
    "BesselJ1": lambda b, x, out: b.op("Sub", b.op("BesselJ0", x), _over_x(b, out, x)),
    "BesselY0": lambda b, x, out: b.op("Neg", b.op("BesselY1", x)),
    "BesselY1": lambda b, x, out: b.op("Sub", b.op("BesselY0", x), _over_x(b, out, x)),
    "BesselK0": lambda b, x, out: b.op("Neg", b.op("BesselK1", x)),
    "BesselK0e": lambda b, x, out: b.op("Sub", out, b.op("BesselK1e", x)),
    "BesselK1": lambda b, x, out: b.op("Neg", b.op("Add", b.op("BesselK0", x), _over_x(b, out, x))),
    "BesselK1e": lambda b, x, out: b.op("Sub", b.op("Sub", out, b.op("BesselK0e", x)), _over_x(b, out, x)),
}


def _op(name: str, func_name: str, operands: tuple[str, ...], grad: Grad | None, functions: tuple[str, ...],
        int_first: bool = False) -> OpDef:
    return OpDef(name, func_name, _infer(operands, int_first), plan, emit, grad=grad,
                 frontend=Exposure((name,), functions), runtime_tiling=RUNTIME_TILING)


OPS: tuple[OpDef, ...] = (
    _op("Lgamma", "lgamma", ("x",), _unary(lambda b, x, out: b.op("Digamma", x)), ("lgamma",)),
    _op("Digamma", "digamma", ("x",), _unary(lambda b, x, out: _polygamma_of(b, 1, x)), ("digamma",)),
    _op("Polygamma", "polygamma", ("a", "x"), grad_polygamma, ("polygamma",), int_first=True),
    _op("Zeta", "zeta", ("x", "q"), None, ("zeta",)),
    _op("Igamma", "igamma", ("a", "x"), _igamma_rule(1.0), ("igamma",)),
    _op("Igammac", "igammac", ("a", "x"), _igamma_rule(-1.0), ("igammac",)),
    _op("Betainc", "betainc", ("a", "b", "x"), None, ()),
) + tuple(_op(name, "bessel_" + name[6:].lower(), ("x",), _unary(slope), ("bessel_" + name[6:].lower(),))
          for name, slope in BESSEL_SLOPES.items())
