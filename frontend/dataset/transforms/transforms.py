"""``mindspore.dataset.transforms``: the transform protocol and the general (non-image) transforms.

A transform is a :class:`TensorOperation`: ``_apply(args, rng)`` maps the input columns of one row (a
tuple of numpy arrays) to an array or a tuple of arrays. ``map`` calls it row by row with the row's own
random Generator (seeded from ``dataset.config``, the map's height, the pass and the row number), so a
random transform gives the same result for the same row however the pipeline is batched or run.
Called directly (``TypeCast(mstype.int32)(array)``) a transform runs eagerly, as in MindSpore, drawing
from one process-wide eager Generator seeded from the same global seed.
Any other Python callable may stand in a ``map`` as well; it gets the columns as positional arguments.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ascendemu.errors import FeatureNotSupportedError, InvalidParamError, check_int, short_repr

from ...common import dtype as mstype
from .. import config

_eager: dict[str, Any] = {"seed": None, "rng": None}


def eager_rng() -> np.random.Generator:
    """The Generator of eagerly called random transforms: restarted whenever the global seed changes."""
    if _eager["seed"] != config.get_seed():
        _eager["seed"], _eager["rng"] = config.get_seed(), config.generator(config.EAGER_STREAM)
    return _eager["rng"]


class TensorOperation:
    """Base of the built-in transforms. ``random`` says whether ``_apply`` draws from its Generator."""

    random = False

    def __call__(self, *args: Any) -> Any:
        if not args:
            raise InvalidParamError(f"{type(self).__name__}: call it with the input data, e.g. op(image)")
        return self._apply(args, eager_rng())

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def one_input(op: TensorOperation, args: tuple) -> Any:
    """The single column a one-input transform works on; more columns is a pipeline mistake."""
    if len(args) != 1:
        raise InvalidParamError(f"{type(op).__name__} takes 1 input column, got {len(args)}; give map "
                                f"input_columns=[one column] for it")
    return args[0]


def as_array(value: Any, who: str) -> np.ndarray:
    """``value`` as a numpy array, as MindSpore converts a row's items; anything numpy can only hold as
    ``object`` (None, a dict, a ragged list) is refused, naming ``who`` produced it."""
    if isinstance(value, np.ndarray):
        arr = value
    elif hasattr(value, "asnumpy"):                      # a mindspore Tensor returned by user code
        arr = value.asnumpy()
    else:
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError) as exc:           # e.g. a ragged nested list in numpy >= 1.24
            raise InvalidParamError(f"{who} gave {short_repr(value)}, which is not array data ({exc}); "
                                    "return a numpy array, a number or a tuple of them") from None
    if arr.dtype == object:
        raise InvalidParamError(f"{who} gave a {type(value).__name__} ({short_repr(value)}), which is not "
                                "array data; return a numpy array, a number or a tuple of them (one per "
                                "output column)")
    return arr


def apply_operations(ops: Sequence[Any], args: tuple, rng: np.random.Generator) -> tuple:
    """Run ``ops`` in turn: each gets the previous one's outputs as its inputs. Returns a tuple."""
    for op in ops:
        out = op._apply(args, rng) if isinstance(op, TensorOperation) else op(*args)
        args = out if isinstance(out, tuple) else (out,)
    return args


def to_np_dtype(data_type: Any, who: str) -> np.dtype:
    """A MindSpore type (``mstype.int32``) or a numpy dtype/name as a numpy dtype."""
    if isinstance(data_type, mstype.Type):
        return np.dtype(mstype.dtype_to_nptype(data_type))
    try:
        return np.dtype(data_type)
    except TypeError:
        raise InvalidParamError(f"{who}: data_type {short_repr(data_type)} is not a type; give a mindspore "
                                "type such as mstype.int32 or a numpy dtype such as np.float32") from None


class TypeCast(TensorOperation):
    """Cast the column to ``data_type`` (e.g. MNIST's uint32 label to ``mstype.int32``)."""

    def __init__(self, data_type: Any):
        self.data_type = to_np_dtype(data_type, "TypeCast")

    def _apply(self, args: tuple, rng: np.random.Generator) -> np.ndarray:
        return as_array(one_input(self, args), "TypeCast's input").astype(self.data_type)


class OneHot(TensorOperation):
    """A scalar or 1-D integer label to one-hot rows of ``num_classes``, in the label's integer type."""

    def __init__(self, num_classes: int, smoothing_rate: float = 0.0):
        self.num_classes = check_int(num_classes, "OneHot: num_classes", minimum=1)
        if smoothing_rate != 0.0:
            raise FeatureNotSupportedError("OneHot: smoothing_rate other than 0.0 is not supported; smooth the "
                                           "labels in a map of your own or in the loss")
        self.smoothing_rate = smoothing_rate

    def _apply(self, args: tuple, rng: np.random.Generator) -> np.ndarray:
        label = np.squeeze(as_array(one_input(self, args), "OneHot's input"))
        if label.dtype.kind not in "iu" or label.ndim > 1:
            raise InvalidParamError(f"OneHot: the label must be an integer scalar or 1-D array, got "
                                    f"{label.dtype} of shape {label.shape}; TypeCast it to an integer type first")
        if label.size and (label.min() < 0 or label.max() >= self.num_classes):
            raise InvalidParamError(f"OneHot: label values {label.min()}..{label.max()} are outside "
                                    f"0..{self.num_classes - 1} (num_classes={self.num_classes})")
        return (np.arange(self.num_classes) == label[..., None]).astype(label.dtype)


class Fill(TensorOperation):
    """Every element set to ``fill_value`` (cast to the input's type), shape and type unchanged."""

    def __init__(self, fill_value: Any):
        if not isinstance(fill_value, (int, float, bool, str, bytes, np.generic)):
            raise InvalidParamError(f"Fill: fill_value {short_repr(fill_value)} must be a scalar")
        self.fill_value = fill_value

    def _apply(self, args: tuple, rng: np.random.Generator) -> np.ndarray:
        arr = as_array(one_input(self, args), "Fill's input")
        return np.full(arr.shape, self.fill_value, dtype=arr.dtype)


class Compose(TensorOperation):
    """Several transforms applied in order, usable wherever one transform is."""

    def __init__(self, transforms: Sequence[Callable]):
        transforms = list(transforms) if isinstance(transforms, (list, tuple)) else [transforms]
        if not transforms or not all(callable(t) for t in transforms):
            raise InvalidParamError(f"Compose: transforms {short_repr(transforms)} must be a non-empty list "
                                    "of transforms or callables")
        self.transforms = transforms
        self.random = any(getattr(t, "random", False) for t in transforms)

    def _apply(self, args: tuple, rng: np.random.Generator) -> Any:
        out = apply_operations(self.transforms, args, rng)
        return out if len(out) != 1 else out[0]


__all__ = ["TensorOperation", "TypeCast", "OneHot", "Fill", "Compose", "apply_operations", "as_array"]
