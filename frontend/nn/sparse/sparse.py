"""``mindspore.nn.sparse.sparse``: SparseToDense (a COOTensor's ``to_dense``) and SparseTensorDenseMatmul
(``ops.SparseTensorDenseMatmul``), as MindSpore builds them."""
from __future__ import annotations

from typing import Any

from ... import ops
from ...common.sparse_tensor import COOTensor
from ...common.tensor import Tensor
from ..cell import Cell

__all__ = ["SparseToDense", "SparseTensorDenseMatmul"]


class SparseToDense(Cell):
    """A COOTensor's dense form (MindSpore's ``nn.SparseToDense``)."""

    def construct(self, sparse_tensor: COOTensor) -> Tensor:
        if not isinstance(sparse_tensor, COOTensor):
            raise TypeError(f"For 'SparseToDense', the input must be a COOTensor, but got "
                            f"{type(sparse_tensor).__name__}.")
        return sparse_tensor.to_dense()


class SparseTensorDenseMatmul(Cell):
    """``op(sparse) @ op(dense)``, the sparse matrix given by (indices, values, sparse_shape); ``op``
    transposes when ``adjoint_st`` / ``adjoint_dt``: ``ops.SparseTensorDenseMatmul`` as a cell."""

    def __init__(self, adjoint_st: bool = False, adjoint_dt: bool = False) -> None:
        super().__init__()
        self.adj_st, self.adj_dt = adjoint_st, adjoint_dt
        self.sparse_dense_matmul = ops.SparseTensorDenseMatmul(adjoint_st=adjoint_st, adjoint_dt=adjoint_dt)

    def construct(self, indices: Tensor, values: Tensor, sparse_shape: Any, dense: Tensor) -> Tensor:
        return self.sparse_dense_matmul(indices, values, sparse_shape, dense)
