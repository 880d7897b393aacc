"""``mindspore.ops.operations.other_ops``: the primitives of state and gradient flow (Assign,
StopGradient, Depend), MindSpore's deprecated ``identity``, and the detection box ops MindSpore defines
here (IOU, BoundingBoxEncode, BoundingBoxDecode, CheckValid: compositions of elementwise ops)."""
from __future__ import annotations

import math
from typing import Any

from ascendemu.errors import InvalidParamError, InvalidTypeError, InvalidValueError
from ascendemu.graph.capture import current_tracer

from ...capture import tracer_value
from ...common.parameter import Parameter
from ...common.tensor import Tensor, hold_value
from ...unsupported import unsupported
from .._utils import defined_here
from ..primitive import Primitive, _Op, _cast, _tensor, apply_op
from .array_ops import Identity  # noqa: F401  (MindSpore serves it from other_ops too)
from .array_ops import BroadcastTo


class StopGradient(_Op):
    """The identity, except that no gradient flows back through it."""

    def __call__(self, x: Any) -> Tensor:
        return apply_op("StopGradient", [x])[0]


class Depend(_Op):
    """``Depend()(value, expr)`` returns ``value``. It orders side effects in MindSpore's graphs; here a
    graph's parameter updates always happen after everything that reads the old values."""

    def __call__(self, value: Any, expr: Any) -> Any:
        return value


def _assigned_value(variable: Any, value: Any) -> Tensor:
    """What an Assign writes into ``variable`` (a Parameter or a Tensor): ``value`` in its dtype and shape."""
    if not isinstance(variable, Tensor):
        raise InvalidParamError(f"Assign: variable must be a Parameter or a Tensor, got {type(variable).__name__}")
    value = _tensor(value)
    if value.dtype != variable.dtype:
        value = _cast(value, variable.dtype)
    if value.shape != variable.shape:
        value = BroadcastTo(variable.shape)(value)
    return value


class Assign(_Op):
    """``Assign()(variable, value)``: the Parameter holds ``value`` from here on (in a graph: later reads
    see it and the parameter's device memory receives it when the graph has run). A Tensor variable
    holds it too (``tensor.hold_value``; a graph input's caller-side tensor is not written back, where
    MindSpore's graph writes it)."""

    def __call__(self, variable: Any, value: Any) -> Tensor:
        value = _assigned_value(variable, value)
        if not isinstance(variable, Parameter):     # a Tensor holds the value (MindSpore 2.10, both modes)
            return hold_value(variable, value)
        tracer = current_tracer()
        if tracer is None:
            variable.set_data(value)
            return variable
        vid = tracer_value(tracer, value)
        tracer.assign(variable, variable.name, variable.desc, vid)
        return Tensor._symbolic(tracer, vid)


class identity(_Op):
    """``P.identity()(x)`` returns x itself (MindSpore's deprecated side-effect-propagating identity;
    ``nn.Identity``/``ops.Identity`` are the current names); ``ops.identity`` is an instance."""

    def __call__(self, x: Any) -> Any:
        return x


# ---- detection: box overlap, encoding, decoding and validity (compositions of elementwise ops) ----
from ascendemu.kernels.ops.common import FLOATS  # noqa: E402

from .array_ops import Concat, Reshape, Split  # noqa: E402
from ..composite_op import composite  # noqa: E402
from ..primitive import _binary_operands  # noqa: E402

# IOU's modes: intersection over union, or over the foreground (the gt box's own area)
IOU_MODES = ("iou", "iof")
# MindSpore's box convention (its CPU kernels and Ascend's): a box (x0, y0, x1, y1) covers the pixels
# x0..x1 inclusive, so widths and heights are x1 - x0 + 1; IOU, BoundingBoxEncode/Decode and CheckValid
# use it (NMSWithMask does not: see math_ops)
PIXEL = 1.0


def _elementwise(op: str, *operands: Any) -> Tensor:
    """One elementwise registry op (math_ops imports this module, so its classes are not imported here);
    a binary op's operands promoted as its primitive promotes them."""
    tensors = _binary_operands(*operands) if len(operands) == 2 else [_tensor(operands[0])]
    return apply_op(op, list(tensors))[0]


def _clip(x: Tensor, low: float, high: float) -> Tensor:
    return _elementwise("Minimum", _elementwise("Maximum", x, low), high)


def _box_columns(owner: str, name: str, boxes: Any, columns: int = 4) -> list[Tensor]:
    """The first four columns (x0, y0, x1, y1) of float boxes of shape (n, ``columns``), each (n, 1)."""
    b = _tensor(boxes)
    if b.dtype.name not in FLOATS:
        raise TypeError(f"For '{owner}', the dtype of '{name}' must be float16 or float32, but got {b.dtype}")
    if b.ndim != 2 or b.shape[1] != columns:
        raise InvalidParamError(f"{owner}: {name} must have shape (n, {columns}), got {b.shape}")
    return list(Split(1, columns)(b))[:4]


def _centers(x0: Tensor, y0: Tensor, x1: Tensor, y1: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(center x, center y, width, height) of boxes in the inclusive-pixel convention."""
    w, h = x1 - x0 + PIXEL, y1 - y0 + PIXEL
    return x0 + w * 0.5 - 0.5, y0 + h * 0.5 - 0.5, w, h


def _four_floats(owner: str, name: str, value: Any) -> tuple[float, ...]:
    """MindSpore's check of means/stds: a tuple of 4 floats."""
    if not isinstance(value, tuple):
        raise TypeError(f"For '{owner}', the type of '{name}' must be tuple, but got {type(value).__name__}")
    if any(not isinstance(v, float) for v in value):
        raise TypeError(f"For '{owner}', every element of '{name}' must be a float, got {value!r}")
    if len(value) != 4:
        raise ValueError(f"For '{owner}', the length of '{name}' must be 4, but got {len(value)}")
    return value


@composite("IOU", functions=("iou",))
def IOU(anchor_boxes: Any, gt_boxes: Any, mode: str = "iou") -> Tensor:
    """Overlap of every gt box (M, 4) with every anchor box (N, 4): an (M, N) tensor of intersection
    over union (``iou``) or over the gt box's area (``iof``), boxes as inclusive pixel ranges."""
    if mode not in IOU_MODES:
        raise KeyError(f"For 'IOU', only 'iou' or 'iof' are supported, but got 'mode': {mode}.")
    anchors = _box_columns("IOU", "anchor_boxes", anchor_boxes)
    n = anchors[0].shape[0]
    ax0, ay0, ax1, ay1 = (Reshape()(c, (1, n)) for c in anchors)
    gx0, gy0, gx1, gy1 = _box_columns("IOU", "gt_boxes", gt_boxes)
    width = _elementwise("Maximum", _elementwise("Minimum", gx1, ax1) - _elementwise("Maximum", gx0, ax0) + PIXEL, 0)
    height = _elementwise("Maximum", _elementwise("Minimum", gy1, ay1) - _elementwise("Maximum", gy0, ay0) + PIXEL, 0)
    inter = width * height
    gt_area = (gx1 - gx0 + PIXEL) * (gy1 - gy0 + PIXEL)
    if mode == "iof":
        return inter / gt_area
    return inter / (gt_area + (ax1 - ax0 + PIXEL) * (ay1 - ay0 + PIXEL) - inter)


@composite("BoundingBoxEncode", functions=("bounding_box_encode",))
def BoundingBoxEncode(anchor_box: Any, groundtruth_box: Any, means: tuple = (0.0, 0.0, 0.0, 0.0),
                      stds: tuple = (1.0, 1.0, 1.0, 1.0)) -> Tensor:
    """The deltas (dx, dy, dw, dh) taking each anchor box to its ground truth box, normalised by
    ``means`` and ``stds``: ((gx - px) / pw, (gy - py) / ph, log(gw / pw), log(gh / ph))."""
    means, stds = _four_floats("BoundingBoxEncode", "means", means), _four_floats("BoundingBoxEncode", "stds", stds)
    px, py, pw, ph = _centers(*_box_columns("BoundingBoxEncode", "anchor_box", anchor_box))
    gx, gy, gw, gh = _centers(*_box_columns("BoundingBoxEncode", "groundtruth_box", groundtruth_box))
    deltas = ((gx - px) / pw, (gy - py) / ph, _elementwise("Log", gw / pw), _elementwise("Log", gh / ph))
    return Concat(1)([(d - m) / s for d, m, s in zip(deltas, means, stds)])


@composite("BoundingBoxDecode", functions=("bounding_box_decode",))
def BoundingBoxDecode(anchor_box: Any, deltas: Any, max_shape: Any = None, means: tuple = (0.0, 0.0, 0.0, 0.0),
                      stds: tuple = (1.0, 1.0, 1.0, 1.0), wh_ratio_clip: float = 0.016) -> Tensor:
    """The boxes the deltas (as BoundingBoxEncode makes them) give each anchor box: dw and dh clipped
    to +-|log(wh_ratio_clip)|, then x clipped to [0, max_shape[1]] and y to [0, max_shape[0]] (as
    MindSpore's kernel clips; max_shape None clips nothing)."""
    means, stds = _four_floats("BoundingBoxDecode", "means", means), _four_floats("BoundingBoxDecode", "stds", stds)
    if not isinstance(wh_ratio_clip, float):
        raise TypeError(f"For 'BoundingBoxDecode', the type of 'wh_ratio_clip' must be float, "
                        f"but got {type(wh_ratio_clip).__name__}")
    if max_shape is not None and (not isinstance(max_shape, tuple) or len(max_shape) != 2):
        raise TypeError(f"For 'BoundingBoxDecode', 'max_shape' must be a tuple of 2 (height, width), "
                        f"got {max_shape!r}")
    px, py, pw, ph = _centers(*_box_columns("BoundingBoxDecode", "anchor_box", anchor_box))
    dx, dy, dw, dh = (d * s + m for d, m, s in zip(_box_columns("BoundingBoxDecode", "deltas", deltas), means, stds))
    limit = abs(math.log(wh_ratio_clip))
    gw = pw * _elementwise("Exp", _clip(dw, -limit, limit))
    gh = ph * _elementwise("Exp", _clip(dh, -limit, limit))
    gx, gy = px + pw * dx, py + ph * dy
    corners = [gx - gw * 0.5 + 0.5, gy - gh * 0.5 + 0.5, gx + gw * 0.5 - 0.5, gy + gh * 0.5 - 0.5]
    if max_shape is not None:
        height, width = max_shape
        corners = [_clip(c, 0, width if i % 2 == 0 else height) for i, c in enumerate(corners)]
    return Concat(1)(corners)


@composite("CheckValid", functions=("check_valid",))
def CheckValid(bboxes: Any, img_metas: Any) -> Tensor:
    """(N,) bool: box (x0, y0, x1, y1) lies in the image whose ``img_metas`` are (height, width,
    ratio): x0, y0 >= 0, x1 <= width * ratio - 1 and y1 <= height * ratio - 1."""
    x0, y0, x1, y1 = _box_columns("CheckValid", "bboxes", bboxes)
    metas = _tensor(img_metas)
    if metas.dtype.name not in FLOATS or metas.shape != (3,):
        error = InvalidTypeError if metas.dtype.name not in FLOATS else InvalidValueError
        raise error(f"CheckValid: img_metas must be a float tensor of shape (3,) (height, width, ratio), "
                    f"got {metas.dtype} {metas.shape}")
    height, width, ratio = (Reshape()(m, (1, 1)) for m in Split(0, 3)(metas))
    if metas.dtype != x0.dtype:
        height, width, ratio = (_cast(m, x0.dtype) for m in (height, width, ratio))
    inside = [_elementwise("GreaterEqual", x0, 0), _elementwise("GreaterEqual", y0, 0),
              _elementwise("LessEqual", x1, width * ratio - PIXEL), _elementwise("LessEqual", y1, height * ratio - PIXEL)]
    valid = _elementwise("LogicalAnd", _elementwise("LogicalAnd", inside[0], inside[1]),
                         _elementwise("LogicalAnd", inside[2], inside[3]))
    return Reshape()(valid, (x0.shape[0],))


# ---- internals round 2 ----
import functools  # noqa: E402
import inspect  # noqa: E402
from typing import Callable  # noqa: E402


class UpdateState(_Op):
    """``UpdateState()(state, *exprs)`` returns ``state``: MindSpore's monad plumbing, which orders side
    effects in its graphs; here effects already happen in capture order."""

    def __call__(self, *args: Any) -> Any:
        if not args:
            raise TypeError("For 'UpdateState', the inputs must not be empty.")
        return args[0]


class Partial(_Op):
    """``Partial()(fn, *args)``: ``fn`` with its first arguments bound (``functools.partial``)."""

    def __call__(self, *args: Any) -> Callable:
        return functools.partial(args[0].__call__, *args[1:])


def prim_arg_register(fn: Callable) -> Callable:
    """Decorates a primitive's ``__init__`` (MindSpore's built-in primitives use it): the primitive is
    named after its class (or ``substitute_name``) and every argument, defaults included, becomes an
    attribute of the object, of ``attrs`` and of ``init_attrs``; then ``fn`` runs."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def deco(self: Any, *args: Any, **kwargs: Any) -> None:
        Primitive.__init__(self, getattr(type(self), "substitute_name", type(self).__name__))
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name, value in list(bound.arguments.items())[1:]:
            self.__dict__[name] = value
            self.attrs[name] = value
            self.init_attrs[name] = value
        fn(self, *args, **kwargs)
    deco.decorated_func = fn
    return deco


__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.operations.other_ops", name, __all__)








# ---- collectives ----
# MoveTo copies a tensor between the host and the device; the emulated device's memory is this host's,
# so the copy is an Identity (a graph node in a capture). MindSpore's targets on an Ascend build:
MOVE_TO_TARGETS = ("Ascend", "CPU")


def check_move_to(to: Any, blocking: Any) -> None:
    """MindSpore's checks of MoveTo's ``to`` and ``blocking``."""
    if not isinstance(to, str):
        raise TypeError(f"For 'MoveTo', the type of 'to' must be str, but got {type(to).__name__}.")
    if to not in MOVE_TO_TARGETS:     # MindSpore's RuntimeError (its device check)
        raise RuntimeError(f"The value of arg 'to' of method 'move_to' should be one of {list(MOVE_TO_TARGETS)}, "
                           f"but got to:{to}")
    if not isinstance(blocking, bool):
        raise TypeError(f"For 'MoveTo', the type of 'blocking' must be bool, but got {type(blocking).__name__}.")


class MoveTo(_Op):
    """``MoveTo()(input, to, blocking)``: ``input`` (a Tensor, or a list/tuple converted to one) copied to
    ``to`` ("Ascend" or "CPU")."""

    def __call__(self, input: Any, to: str = "CPU", blocking: bool = True) -> Tensor:  # noqa: A002
        check_move_to(to, blocking)
        x = input if isinstance(input, Tensor) else _tensor(input)
        return Identity()(x)


__all__ += ["MoveTo"]
