"""The op families of the kernel library, each a module of :class:`~ascendemu.kernels.opdef.OpDef`
stanzas (``OPS``): shape rules, launch plans and kernel source generators, all pure Python.

``nb`` (numba intrinsics and the source compiler) is the only module here that imports numba; it is
loaded on a cache miss, never by importing this package.
"""
from . import (comm, conv, elementwise, index, loss, matmul, misc, norm, optim, order, pool, random, reduce, resize,
               scan)
from . import linalg, special
from . import search
from . import fft
from . import attention

__all__ = ["FAMILIES", "common", "src", "nb"] + [m.__name__.rsplit(".", 1)[-1] for m in
                                                  (comm, conv, elementwise, index, loss, matmul, misc, norm, optim, order,
                                                   pool, random, reduce, resize, scan, search, linalg, special, fft, attention)]

# every family module, in the order their ops are listed
FAMILIES = (elementwise, norm, loss, reduce, scan, order, matmul, conv, pool, resize, misc, index, optim, random, comm,
            search, linalg, special, fft, attention)
