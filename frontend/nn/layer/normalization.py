"""``mindspore.nn.layer.normalization``: BatchNorm1d/2d/3d, SyncBatchNorm, LayerNorm, GroupNorm and
InstanceNorm1d/2d/3d, where MindSpore defines them."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError, InvalidValueError

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.normalization has it)
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm", "BatchNorm3d", "SyncBatchNorm", "GroupNorm", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d", "LayerNormExt"]


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
        # MindSpore's order (moving statistics first): parameters_and_names() and checkpoints list them so.
        # MindSpore's names "mean"/"variance" show on a standalone cell; inside a network the attribute path
        # (``bn1.moving_mean``) replaces them (Cell._adopt)
        self.moving_mean = Parameter(initializer(moving_mean_init, num_features, dtype), name="mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer(moving_var_init, num_features, dtype),
                                         name="variance", requires_grad=False)
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



class BatchNorm3d(Cell):
    """Batch norm of (N, C, D, H, W) as MindSpore builds it: a BatchNorm2d ``bn2d`` of x seen as
    (N, C, D * H, W), so its parameters are ``bn2d.moving_mean``... as in MindSpore's checkpoints."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", moving_mean_init: Any = "zeros",
                 moving_var_init: Any = "ones", use_batch_statistics: Any = None, dtype: Any = mstype.float32):
        super().__init__()
        self.bn2d = BatchNorm2d(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                                moving_var_init, use_batch_statistics, dtype=dtype)

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim != 5:
            raise InvalidParamError(f"BatchNorm3d: input must have rank 5 (N, C, D, H, W), got shape {x.shape}")
        n, c, d, h, w = x.shape
        return ops.reshape(self.bn2d(ops.reshape(x, (n, c, d * h, w))), x.shape)


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics MindSpore gathers over a group of devices; on one device (this
    emulator's job) that group is the device itself, so it is BatchNorm2d (ranks 2 and 4 as there).
    ``process_groups`` must be None (every device: this one)."""

    ranks = (2, 4)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", moving_mean_init: Any = "zeros",
                 moving_var_init: Any = "ones", use_batch_statistics: Any = None, process_groups: Any = None,
                 dtype: Any = mstype.float32):
        if process_groups is not None:
            raise InvalidParamError(f"SyncBatchNorm: process_groups={process_groups!r} is not supported on one "
                                    f"device; leave it None")
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                         moving_var_init, use_batch_statistics, dtype=dtype)


def _check_norm_args(layer: str, num: int, eps: Any, affine: Any) -> None:
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise InvalidParamError(f"{layer}: num_features/num_channels={num!r} must be an int >= 1")
    if not isinstance(eps, float):
        raise InvalidParamError(f"{layer}: eps={eps!r} must be a float")
    if not isinstance(affine, bool):
        raise InvalidParamError(f"{layer}: affine={affine!r} must be a bool")


class GroupNorm(Cell):
    """``ops.group_norm`` of (N, C, *) with per-channel ``gamma``/``beta`` (trainable when ``affine``)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", dtype: Any = mstype.float32):
        super().__init__()
        _check_norm_args("GroupNorm", num_channels, eps, affine)
        if (isinstance(num_groups, bool) or not isinstance(num_groups, int) or num_groups < 1
                or num_channels % num_groups):
            raise InvalidParamError(f"GroupNorm: num_groups={num_groups!r} must be an int >= 1 dividing "
                                    f"num_channels={num_channels}")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.gamma = Parameter(initializer(gamma_init, num_channels, dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, num_channels, dtype), name="beta", requires_grad=affine)

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise InvalidParamError(f"GroupNorm: input dim 1 must be num_channels={self.num_channels}, got shape "
                                    f"{x.shape}")
        return ops.group_norm(x, self.num_groups, ops.cast(self.gamma, x.dtype), ops.cast(self.beta, x.dtype),
                              self.eps)

    def extend_repr(self) -> str:
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(Cell):
    """Normalise each (sample, channel) over its spatial axes (biased variance), then ``* gamma +
    beta`` per channel: ``ops.group_norm`` with one group per channel, in training and evaluation
    alike (MindSpore's InstanceNorm always uses the instance's statistics). ``moving_mean`` and
    ``moving_variance`` are kept as MindSpore keeps them (checkpoints list them) but, as the
    output never reads them, they are not updated here."""

    rank = 4

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = True,
                 gamma_init: Any = "ones", beta_init: Any = "zeros", dtype: Any = mstype.float32):
        super().__init__()
        layer = type(self).__name__
        _check_norm_args(layer, num_features, eps, affine)
        if isinstance(momentum, bool) or not isinstance(momentum, float) or not 0.0 <= momentum <= 1.0:
            raise InvalidParamError(f"{layer}: momentum={momentum!r} must be a float in [0, 1]")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.moving_mean = Parameter(initializer("zeros", num_features, dtype), name="mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer("ones", num_features, dtype), name="variance",
                                         requires_grad=False)
        self.gamma = Parameter(initializer(gamma_init, num_features, dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, num_features, dtype), name="beta", requires_grad=affine)

    def construct(self, x: Tensor) -> Tensor:
        if x.ndim != self.rank or x.shape[1] != self.num_features:
            # MindSpore's _check_input_dim raises ValueError ("the in_shape must have 4 dims")
            raise InvalidValueError(f"{type(self).__name__}: input must have rank {self.rank} and "
                                    f"{self.num_features} channels (dim 1), got shape {x.shape}")
        return ops.group_norm(x, self.num_features, self.gamma, self.beta, self.eps)

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, gamma={self.gamma}, "
                f"beta={self.beta}, moving_mean={self.moving_mean}, moving_variance={self.moving_variance}")


class InstanceNorm1d(_InstanceNorm):
    rank = 3


class InstanceNorm2d(_InstanceNorm):
    rank = 4


class InstanceNorm3d(_InstanceNorm):
    rank = 5


class LayerNormExt(Cell):
    """``ops.layer_norm`` over the trailing ``normalized_shape`` axes, with ``weight`` (ones) and ``bias``
    (zeros) of that shape when ``elementwise_affine`` (no bias when ``bias`` is False)."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 dtype: Any = None):
        super().__init__()
        if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, (tuple, list)) or not normalized_shape:
            raise InvalidParamError(f"LayerNormExt: normalized_shape={normalized_shape!r} must be a non-empty tuple "
                                    f"or list of ints")
        self.normalized_shape, self.eps, self.elementwise_affine = tuple(normalized_shape), eps, elementwise_affine
        dtype = mstype.float32 if dtype is None else dtype
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = Parameter(initializer("ones", self.normalized_shape, dtype), name="weight")
            if bias:
                self.bias = Parameter(initializer("zeros", self.normalized_shape, dtype), name="bias")

    def construct(self, input: Tensor) -> Tensor:
        return ops.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extend_repr(self) -> str:
        return (f"normalized_shape={self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
