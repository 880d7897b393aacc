"""``mindspore.nn.sparse``: the cells on sparse tensors (``nn.SparseToDense``, ``nn.SparseTensorDenseMatmul``)."""
from . import sparse
from .sparse import SparseTensorDenseMatmul, SparseToDense

__all__ = ["SparseToDense", "SparseTensorDenseMatmul"]
