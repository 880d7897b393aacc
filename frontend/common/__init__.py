"""``mindspore.common``: dtype, initializer, seed, jit, JitConfig."""
from . import dtype, initializer, jit_config
from .api import jit
from .jit_config import JitConfig
from .seed import get_seed, set_seed
from .sparse_tensor import COOTensor, CSRTensor, RowTensor, RowTensorInner, SparseTensor
