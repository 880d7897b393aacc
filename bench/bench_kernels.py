"""Kernel speed vs numpy on the same op and size, and vs numba's CUDA simulator per element.

Our kernels run through the uniform ABI exactly as the device runs them (every block, one after
another on the calling thread, then again on the 2 block worker threads the device model uses).
numpy runs the same op on the same data in the same process (its OpenBLAS on 2 cores for products).
Goals: MatMul, BatchMatMul and Conv2D at most 1.1x numpy's time, every other kernel at most 1.5x.
``--cpu`` compares the work per core instead (see CPU_MODE).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ascendemu.device.tasks import HOST_BLOCK_THREADS
from ascendemu.kernels.library import compile_inprocess
from ascendemu.kernels.signature import OpSignature, TensorDesc

REPEATS = 5
PARK_S = 0.3      # after a numpy call: long enough for its BLAS threads to stop spinning and sleep
# --cpu: every kernel and numpy on one thread (numpy's OpenBLAS pinned by OPENBLAS_NUM_THREADS=1, set
# before numpy loads), timed by the thread's CPU time: the work per core, which a shared machine's load
# barely moves (wall times on it swing 2-5x between runs).
CPU_MODE = "--cpu" in sys.argv
CLOCK = time.thread_time if CPU_MODE else time.perf_counter


def best(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        t0 = CLOCK()
        fn()
        times.append(CLOCK() - t0)
    return min(times)


def runner(sig: OpSignature, arrays: list[np.ndarray]):
    func = compile_inprocess(sig)
    argv = func.argv([a.ctypes.data for a in arrays])      # + a dynamic-shape kernel's tiling data
    pool = ThreadPoolExecutor(HOST_BLOCK_THREADS)
    # as the device computes a launch: a kernel with host_blocks runs as HOST_BLOCK_THREADS larger blocks
    blocks = min(func.block_dim, HOST_BLOCK_THREADS) if func.host_blocks else func.block_dim

    def serial():
        for b in range(blocks):
            func.call_block(argv, b, blocks)

    def threaded():
        list(pool.map(lambda b: func.call_block(argv, b, blocks), range(blocks)))
    return func, serial, threaded


def case(name: str, sig: OpSignature, inputs: list[np.ndarray], reference) -> tuple[str, float, float, float]:
    """Best of REPEATS rounds, each timing ours serial, ours threaded and numpy back to back (a
    shared machine's load then weighs on all three alike)."""
    from ascendemu.kernels.library import infer_outputs
    outs = [np.empty(d.shape, d.dtype) for d in infer_outputs(sig)]
    func, serial, threaded = runner(sig, inputs + outs)
    ws = [np.empty(a.nbytes, np.uint8) for a in func.args if a.role == "workspace"]
    if ws:
        func, serial, threaded = runner(sig, inputs + outs + ws)
    serial()
    np.testing.assert_allclose(outs[0], reference(), rtol=2e-3, atol=2e-3)
    rounds = [round_of(serial, threaded, reference) for _ in range(REPEATS)]
    return (name, *(min(r[i] for r in rounds) for i in range(3)))


def round_of(serial, threaded, reference) -> tuple[float, float, float]:
    """One timing of each, numpy last and then a pause: numpy's OpenBLAS threads spin for a while after a
    call (OPENBLAS_THREAD_TIMEOUT), and spinning on both cores they slowed whatever ran next (our 2-thread
    MatMul measured 12.8 ms right after numpy, 7.4 ms alone)."""
    times = best(serial, 1), best(threaded, 1), best(reference, 1)
    time.sleep(PARK_S)
    return times


def cuda_sim_per_element() -> float:
    """Per-element time of an elementwise square under NUMBA_ENABLE_CUDASIM=1 (a fresh process)."""
    code = r"""
import time, numpy as np
from numba import cuda
@cuda.jit
def sq(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = x[i] * x[i]
n = 2048
x = np.arange(n, dtype=np.float32); y = np.empty_like(x)
t = time.perf_counter(); sq[n // 256, 256](x, y); dt = time.perf_counter() - t
assert np.allclose(y, x * x)
print(dt / n)
"""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def family_rows(rng: np.random.Generator) -> list[tuple[str, float, float, float]]:
    """The kernel families of the breadth rounds (scan, sort/search, special functions, linear algebra,
    FFT, samplers), each against the numpy/scipy call a user would write instead."""
    from scipy import special

    f32 = lambda *s: TensorDesc(s, "float32")  # noqa: E731
    rows_x = rng.standard_normal((4096, 1000), dtype=np.float32)
    pos = np.abs(rng.standard_normal(1 << 20, dtype=np.float32)) + 0.5
    spd = rng.standard_normal((256, 32, 32), dtype=np.float32)
    spd = spd @ spd.transpose(0, 2, 1) + 32 * np.eye(32, dtype=np.float32)
    table = np.sort(rng.standard_normal(1 << 16, dtype=np.float32))
    probes = rng.standard_normal(1 << 20, dtype=np.float32)
    lines = rng.standard_normal((256, 1024)) + 1j * rng.standard_normal((256, 1024))
    lines = lines.astype(np.complex64)
    return [
        case("CumSum fp32 4096x1000, axis 1", OpSignature.make("CumSum", [f32(4096, 1000)], axis=1), [rows_x],
             lambda: np.cumsum(rows_x, 1)),
        case("Sort fp32 4096x1000, axis -1", OpSignature.make("Sort", [f32(4096, 1000)]), [rows_x],
             lambda: np.take_along_axis(rows_x, np.argsort(rows_x, -1, kind="stable"), -1)),  # values + indices
        case("TopK fp32 4096x1000, k 5", OpSignature.make("TopK", [f32(4096, 1000)], k=5), [rows_x],
             lambda: -np.sort(-np.take_along_axis(rows_x, np.argpartition(-rows_x, 5, -1)[:, :5], -1), -1)),
        case("SearchSorted fp32 64K table, 1M values", OpSignature.make(
            "SearchSorted", [f32(1 << 16), f32(1 << 20)]), [table, probes], lambda: np.searchsorted(table, probes)),
        case("Lgamma fp32 1M (scipy gammaln)", OpSignature.make("Lgamma", [f32(1 << 20)]), [pos],
             lambda: special.gammaln(pos)),
        case("Digamma fp32 1M (scipy psi)", OpSignature.make("Digamma", [f32(1 << 20)]), [pos],
             lambda: special.psi(pos)),
        case("Cholesky fp32 256x32x32", OpSignature.make("Cholesky", [f32(256, 32, 32)]), [spd],
             lambda: np.linalg.cholesky(spd)),
        case("MatrixInverse fp32 256x32x32", OpSignature.make("MatrixInverse", [f32(256, 32, 32)]), [spd],
             lambda: np.linalg.inv(spd)),
        *gather_rows(rng),
        case("DFT c2c complex64 256x1024", OpSignature.make(
            "DFT", [TensorDesc((256, 1024), "complex64")], mode="c2c", n=1024, axis=-1), [lines],
             lambda: np.fft.fft(lines, axis=-1)),
    ]


def gather_rows(rng: np.random.Generator) -> list[tuple[str, float, float, float]]:
    """Gather as the backward rules run it (out-of-range rows read zeros) and as MindSpore's Gather runs
    it (``check_indices``: a fault report in the status word), on embedding-table-sized rows: the
    check must cost nothing measurable on valid indices."""
    table = rng.standard_normal((65536, 256), dtype=np.float32)
    idx = rng.integers(0, 65536, 16384).astype(np.int32)
    descs = [TensorDesc(table.shape, "float32"), TensorDesc(idx.shape, "int32")]
    return [case(f"Gather fp32 64Kx256 by 16K rows{label}", OpSignature.make("Gather", descs, axis=0, **attrs),
                 [table, idx], lambda: table[idx])
            for label, attrs in (("", {}), (", checked", {"check_indices": True}))]


def main() -> None:
    rng = np.random.default_rng(0)
    n = 16 * 1024 * 1024
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    f32 = lambda *s: TensorDesc(s, "float32")  # noqa: E731
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    img = rng.standard_normal((8, 64, 56, 56), dtype=np.float32)
    w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32)

    def conv_ref():
        p = np.pad(img, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = np.lib.stride_tricks.sliding_window_view(p, (3, 3), axis=(2, 3))
        return np.einsum("nchwij,ocij->nohw", win, w, optimize=True)

    ba = rng.standard_normal((16, 256, 256), dtype=np.float32)
    bb = rng.standard_normal((16, 256, 256), dtype=np.float32)
    act = rng.standard_normal((8, 256, 28, 28), dtype=np.float32)
    w1 = rng.standard_normal((128, 256, 1, 1), dtype=np.float32)
    logits = rng.standard_normal((4096, 1000), dtype=np.float32)

    def softmax_ref():
        e = np.exp(logits - logits.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    rows = [
        case("Add fp32 16M", OpSignature.make("Add", [f32(n), f32(n)]), [x, y], lambda: x + y),
        case("Square fp32 16M", OpSignature.make("Square", [f32(n)]), [x], lambda: x * x),
        case("Exp fp32 16M", OpSignature.make("Exp", [f32(n)]), [x], lambda: np.exp(x)),
        case("MatMul fp32 1024^3", OpSignature.make("MatMul", [f32(1024, 1024), f32(1024, 1024)]), [a, b],
             lambda: a @ b),
        case("Conv2D fp32 8x64x56x56, 64x3x3, same", OpSignature.make(
            "Conv2D", [f32(8, 64, 56, 56), f32(64, 64, 3, 3)], out_channel=64, kernel_size=(3, 3),
            pad_mode="same"), [img, w], conv_ref),
        case("BatchMatMul fp32 16x256^3", OpSignature.make("BatchMatMul", [f32(16, 256, 256), f32(16, 256, 256)]),
             [ba, bb], lambda: ba @ bb),
        case("Conv2D fp32 8x256x28x28, 128x1x1", OpSignature.make(
            "Conv2D", [f32(8, 256, 28, 28), f32(128, 256, 1, 1)], out_channel=128, kernel_size=(1, 1)), [act, w1],
             lambda: np.matmul(w1.reshape(128, 256), act.reshape(8, 256, 784)).reshape(8, 128, 28, 28)),
        case("ReduceSum fp32 4096x1000, axis 1", OpSignature.make("ReduceSum", [f32(4096, 1000)], axis=(1,)),
             [logits], lambda: logits.sum(1)),
        case("Softmax fp32 4096x1000", OpSignature.make("Softmax", [f32(4096, 1000)]), [logits], softmax_ref),
    ] + family_rows(rng)
    if CPU_MODE:
        print("CPU time on one thread (numpy's OpenBLAS pinned to 1 thread); ours/numpy = ours 1 thread / numpy")
        rows = [(name, serial, serial, t_np) for name, serial, _, t_np in rows]
    print(f"{'kernel':40s} {'ours 1 thread':>14s} {'ours 2 threads':>15s} {'numpy':>10s} {'ours/numpy':>11s}")
    for name, serial, threaded, t_np in rows:
        print(f"{name:40s} {serial * 1e3:11.1f} ms {threaded * 1e3:12.1f} ms {t_np * 1e3:7.1f} ms "
              f"{min(serial, threaded) / t_np:10.2f}x")
    if CPU_MODE:
        return
    ours_per_elem = rows[1][1] / n
    sim = cuda_sim_per_element()
    print(f"elementwise square per element: ours {ours_per_elem * 1e9:.2f} ns, numba CUDA simulator "
          f"{sim * 1e6:.1f} us -> simulator/ours = {sim / ours_per_elem:,.0f}x")



if __name__ == "__main__":
    if CPU_MODE and os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        os.execve(sys.executable, [sys.executable, *sys.argv], dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    main()
