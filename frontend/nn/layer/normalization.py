"""``mindspore.nn.layer.normalization``: BatchNorm1d, BatchNorm2d, LayerNorm, where MindSpore defines them."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.normalization has it)
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm"]


class _BatchNorm(Cell):
    """Batch norm over channel dim 1. Training mode (``set_train()``, or ``use_batch_statistics=True``)
    normalises with the batch's statistics and updates the moving ones with ``momentum`` (MindSpore's
    nn convention: moving = momentum * moving + (1 - momentum) * batch); eval mode uses the moving ones.
    """

    ranks: tuple[int, ...] = (4,)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", moving_mean_init: Any = "zeros",
                 moving_var_init: Any = "ones", use_batch_statistics: Any = None, data_format: str = "NCHW",
                 dtype: Any = mstype.float32):
        super().__init__()
        if not 0.0 <= momentum <= 1.0:
            raise InvalidParamError(f"{type(self).__name__}: momentum={momentum!r} must be in [0, 1]")
        self.num_features, self.eps, self.momentum = int(num_features), float(eps), float(momentum)
        self.use_batch_statistics = use_batch_statistics
        # MindSpore's order (moving statistics first): parameters_and_names() and checkpoints list them so
        self.moving_mean = Parameter(initializer(moving_mean_init, num_features, dtype), name="moving_mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer(moving_var_init, num_features, dtype),
                                         name="moving_variance", requires_grad=False)
        self.gamma = Parameter(initializer(gamma_init, num_features, dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, num_features, dtype), name="beta", requires_grad=affine)
        self.bn_train = ops.BatchNorm(is_training=True, epsilon=eps, momentum=1.0 - momentum, data_format=data_format)
        self.bn_infer = ops.BatchNorm(is_training=False, epsilon=eps, data_format=data_format)

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim not in self.ranks:
            want = " or ".join(map(str, self.ranks))
            raise InvalidParamError(f"{type(self).__name__}: input must have rank {want}, got shape {x.shape}")
        batch_stats = self.training if self.use_batch_statistics is None else bool(self.use_batch_statistics)
        bn = self.bn_train if batch_stats else self.bn_infer
        return bn(x, self.gamma, self.beta, self.moving_mean, self.moving_variance)[0]

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, gamma={self.gamma!r}, "
                f"beta={self.beta!r}, moving_mean={self.moving_mean!r}, moving_variance={self.moving_variance!r}")


class BatchNorm2d(_BatchNorm):
    ranks = (4,)


class BatchNorm1d(_BatchNorm):
    """(N, C) or (N, C, L): statistics per channel C over N (and L)."""

    ranks = (2, 3)



class LayerNorm(Cell):
    def __init__(self, normalized_shape: Any, begin_norm_axis: int = -1, begin_params_axis: int = -1,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", epsilon: float = 1e-7,
                 dtype: Any = mstype.float32):
        super().__init__()
        if not isinstance(normalized_shape, (tuple, list)):
            raise InvalidParamError(f"LayerNorm: normalized_shape must be a tuple or list, got {normalized_shape!r}")
        self.normalized_shape = tuple(normalized_shape)
        self.begin_norm_axis, self.begin_params_axis = begin_norm_axis, begin_params_axis
        self.gamma = Parameter(initializer(gamma_init, self.normalized_shape, dtype), name="gamma")
        self.beta = Parameter(initializer(beta_init, self.normalized_shape, dtype), name="beta")
        self.layer_norm = ops.LayerNorm(begin_norm_axis, begin_params_axis, epsilon)

    def construct(self, x: Tensor) -> Tensor:
        return self.layer_norm(x, self.gamma, self.beta)[0]

    def extend_repr(self) -> str:
        # MindSpore 2.10's text, its missing '=' after gamma included
        return (f"normalized_shape={self.normalized_shape}, begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}, gamma{self.gamma!r}, beta={self.beta!r}")
