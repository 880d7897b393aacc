"""``mindspore.common``: dtype, initializer, seed, jit, JitConfig, lazy_inline."""
from . import dtype, initializer, jit_config
from .api import jit
from .jit_config import JitConfig
from .lazy_inline import lazy_inline
from .seed import get_seed, set_seed
from .sparse_tensor import COOTensor, CSRTensor, RowTensor, RowTensorInner, SparseTensor
