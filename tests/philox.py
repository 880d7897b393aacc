"""The numpy oracle of the Dropout kernel's generator: Philox-4x32-10 and the keep mask it draws."""
from __future__ import annotations

import numpy as np

W32 = np.uint64(0xFFFFFFFF)


def philox(counters: list[np.ndarray], key: tuple[int, int]) -> list[np.ndarray]:
    """Philox-4x32-10 written from the paper (Salmon et al., SC'11), vectorised over counters."""
    c = [np.asarray(w, np.uint64) for w in counters]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & W32, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & W32]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & W32, (k1 + np.uint64(0xBB67AE85)) & W32
    return c


def ref_mask(shape, keep: float, seed0: int, seed1: int, offset: int) -> np.ndarray:
    """1.0 where element i's first Philox word of counter (i, 0, offset, 0) is below keep * 2^32."""
    i = np.arange(int(np.prod(shape)), dtype=np.uint64)
    word = philox([i & W32, i >> np.uint64(32), np.full_like(i, offset), np.zeros_like(i)],
                  (seed0 & 0xFFFFFFFF, seed1 & 0xFFFFFFFF))[0]
    return (word < np.uint64(min(1 << 32, int(keep * 2**32)))).astype(np.float32).reshape(shape)
