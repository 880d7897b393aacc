"""``mindspore.train.metrics`` (also ``mindspore.nn.metrics`` and ``nn.Accuracy`` ...): host-side
evaluation metrics over numpy arrays, with MindSpore's update rules and results.

A metric accumulates with ``update(y_pred, y)`` (Tensors, lists or arrays), answers with ``eval()``
and starts over with ``clear()``; ``Model.eval`` feeds it the eval network's (loss, logits, label)
through ``eval_indexes``. ``get_metrics`` turns ``Model(metrics={"acc", "loss"})`` names into metrics.
"""
from __future__ import annotations

import functools
import sys
from abc import ABCMeta, abstractmethod
from typing import Any, Callable

import numpy as np

from ascendemu.errors import InvalidParamError

from ..common.tensor import Tensor
from ..unsupported import unsupported

__all__ = ["names", "get_metric_fn", "get_metrics", "rearrange_inputs", "Metric", "Accuracy", "Loss", "MAE",
           "MSE", "Precision", "Recall", "Fbeta", "F1", "TopKCategoricalAccuracy", "Top1CategoricalAccuracy",
           "Top5CategoricalAccuracy"]

EVAL_TYPES = ("classification", "multilabel")
EPS = sys.float_info.min          # MindSpore's guard against 0/0 in precision, recall and F-beta


def rearrange_inputs(func: Callable) -> Callable:
    """Let ``update`` take its inputs in the order ``set_indexes`` chose."""
    @functools.wraps(func)
    def wrapper(self: "Metric", *inputs: Any) -> Any:
        indexes = self.indexes
        return func(self, *(inputs if not indexes else [inputs[i] for i in indexes]))
    return wrapper


class Metric(metaclass=ABCMeta):
    """Base of every metric: ``clear``, ``update``, ``eval``; calling it is clear + update + eval."""

    def __init__(self):
        self._indexes: list[int] | None = None

    @staticmethod
    def _convert_data(data: Any) -> np.ndarray:
        if isinstance(data, Tensor):
            return data.asnumpy()
        if isinstance(data, list):
            return np.array(data)
        if isinstance(data, np.ndarray):
            return data
        raise InvalidParamError(f"metric inputs must be Tensors, lists or numpy arrays, got {type(data).__name__}")

    @property
    def indexes(self) -> list[int] | None:
        return getattr(self, "_indexes", None)

    def set_indexes(self, indexes: list[int]) -> "Metric":
        """Which of ``update``'s inputs it uses, in order (e.g. [1, 2]: logits and label of (loss, logits,
        label))."""
        if not isinstance(indexes, list) or not all(isinstance(i, int) for i in indexes):
            raise InvalidParamError(f"set_indexes: indexes must be a list of ints, got {indexes!r}")
        self._indexes = indexes
        return self

    def __call__(self, *inputs: Any) -> Any:
        self.clear()
        self.update(*inputs)
        return self.eval()

    @abstractmethod
    def clear(self) -> None:
        """Forget what was accumulated."""

    @abstractmethod
    def update(self, *inputs: Any) -> None:
        """Accumulate one batch."""

    @abstractmethod
    def eval(self) -> Any:
        """The result over every batch since ``clear``."""


def _two_inputs(who: str, inputs: tuple) -> tuple[np.ndarray, np.ndarray]:
    if len(inputs) != 2:
        raise InvalidParamError(f"{who}.update needs 2 inputs (predicted value, true value), but got {len(inputs)}")
    return Metric._convert_data(inputs[0]), Metric._convert_data(inputs[1])


def _is_onehot(data: np.ndarray) -> bool:
    """0/1 values with exactly one 1 along axis 1."""
    if data.ndim > 1 and np.equal(data ** 2, data).all():
        return bool(np.equal(np.ones((data.shape[0],) + data.shape[2:]), data.sum(axis=1)).all())
    return False


def _no_samples(who: str) -> InvalidParamError:
    return InvalidParamError(f"{who} can not be calculated, because the number of samples is 0; call update() "
                             f"with predicted and true values before eval()")


class _Evaluation(Metric):
    """Metrics with an ``eval_type``: "classification" (y_pred (N, C, ...) scores, y (N, ...) class
    indices or one-hot) or "multilabel" (both 0/1 of the same shape)."""

    def __init__(self, eval_type: str):
        super().__init__()
        if eval_type not in EVAL_TYPES:
            raise InvalidParamError(f"{type(self).__name__}: eval_type must be one of {EVAL_TYPES}, got {eval_type!r}")
        self._type = eval_type

    def _checked(self, inputs: tuple) -> tuple[np.ndarray, np.ndarray]:
        """(y_pred, y) validated; a one-hot label becomes class indices (classification)."""
        who = type(self).__name__
        y_pred, y = _two_inputs(who, inputs)
        if self._type == "classification" and y_pred.ndim == y.ndim and _is_onehot(y):
            y = y.argmax(axis=1)
        if self._type == "classification":
            if y_pred.ndim != y.ndim + 1 or y.shape != (y_pred.shape[0],) + y_pred.shape[2:]:
                raise InvalidParamError(f"{who}: in classification, y must have y_pred's shape without axis 1 "
                                        f"(class scores): got y_pred {y_pred.shape} and y {y.shape}")
        else:
            if y_pred.shape != y.shape:
                raise InvalidParamError(f"{who}: in multilabel, y_pred and y must have the same shape, got "
                                        f"{y_pred.shape} and {y.shape}")
            if not (np.equal(y_pred ** 2, y_pred).all() and np.equal(y ** 2, y).all()):
                raise InvalidParamError(f"{who}: in multilabel, every element of y_pred and y must be 0 or 1")
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise InvalidParamError(f"{who}: class number does not match: earlier predictions had {self._class_num} "
                                    f"classes, this one has {y_pred.shape[1]}")
        return y_pred, y


class Accuracy(_Evaluation):
    """Fraction of samples whose argmax over axis 1 equals the label (classification), or whose every
    label matches (multilabel). ``eval`` returns a numpy float64."""

    def __init__(self, eval_type: str = "classification"):
        super().__init__(eval_type)
        self.clear()

    def clear(self) -> None:
        self._correct_num = 0
        self._total_num = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        y_pred, y = self._checked(inputs)
        if self._type == "classification":
            result = (np.equal(y_pred.argmax(axis=1), y) * 1).reshape(-1)
        else:
            last = y_pred.ndim - 1
            y_pred = y_pred.swapaxes(1, last).reshape(-1, self._class_num)
            y = y.swapaxes(1, last).reshape(-1, self._class_num)
            result = np.equal(y_pred, y).all(axis=1) * 1
        self._correct_num += result.sum()
        self._total_num += result.shape[0]

    def eval(self) -> np.float64:
        if self._total_num == 0:
            raise _no_samples("Accuracy")
        return self._correct_num / self._total_num


class _PerClass(_Evaluation):
    """Precision and Recall: per class true positives over (predicted or actual) positives."""

    def __init__(self, eval_type: str = "classification"):
        super().__init__(eval_type)
        self.clear()

    def clear(self) -> None:
        self._class_num = 0
        if self._type == "multilabel":
            self._true_positives, self._denominators = np.empty(0), np.empty(0)
            self._true_positives_average, self._denominators_average = 0, 0
        else:
            self._true_positives, self._denominators = 0, 0

    def _denominator(self, y_pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        y_pred, y = self._checked(inputs)
        n = self._class_num
        if self._type == "classification":
            if y.max() + 1 > n:
                raise InvalidParamError(f"{type(self).__name__}: labels go up to {int(y.max())} but y_pred has {n} "
                                        f"classes")
            y = np.eye(n)[y.reshape(-1).astype(np.int64)]
            y_pred = np.eye(n)[y_pred.argmax(axis=1).reshape(-1)]
        else:
            y_pred = y_pred.swapaxes(1, 0).reshape(n, -1)
            y = y.swapaxes(1, 0).reshape(n, -1)
        denominators = self._denominator(y_pred, y)
        true_positives = (y * y_pred).sum(axis=0)
        if self._type == "multilabel":
            self._true_positives_average += np.sum(true_positives / (denominators + EPS))
            self._denominators_average += len(denominators)
            self._true_positives = np.concatenate((self._true_positives, true_positives))
            self._denominators = np.concatenate((self._denominators, denominators))
        else:
            self._true_positives = self._true_positives + true_positives
            self._denominators = self._denominators + denominators

    def eval(self, average: bool = False) -> Any:
        """Per class (an array), or their mean with ``average=True``."""
        if self._class_num == 0:
            raise _no_samples(type(self).__name__)
        if not isinstance(average, bool):
            raise InvalidParamError(f"{type(self).__name__}.eval: average must be a bool, got {average!r}")
        result = self._true_positives / (self._denominators + EPS)
        if average:
            if self._type == "multilabel":
                result = self._true_positives_average / (self._denominators_average + EPS)
            return result.mean()
        return result


class Precision(_PerClass):
    """Per class: true positives / predicted positives."""

    def _denominator(self, y_pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        return y_pred.sum(axis=0)


class Recall(_PerClass):
    """Per class: true positives / actual positives."""

    def _denominator(self, y_pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        return y.sum(axis=0)


class Fbeta(Metric):
    """Per class (1 + beta^2) tp / (beta^2 (tp + fn) + tp + fp), from the argmax of y_pred."""

    def __init__(self, beta: float):
        super().__init__()
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta > 0:
            raise InvalidParamError(f"Fbeta: beta must be greater than 0, got {beta!r}")
        self.beta = beta
        self.clear()

    def clear(self) -> None:
        self._true_positives = self._actual_positives = self._positives = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        y_pred, y = _two_inputs("Fbeta", inputs)
        if y_pred.ndim == y.ndim and _is_onehot(y):
            y = y.argmax(axis=1)
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise InvalidParamError(f"Fbeta: class number does not match: earlier predictions had {self._class_num} "
                                    f"classes, this one has {y_pred.shape[1]}")
        n = self._class_num
        if y.max() + 1 > n:
            raise InvalidParamError(f"Fbeta: labels go up to {int(y.max())} but y_pred has {n} classes")
        y = np.eye(n)[y.reshape(-1).astype(np.int64)]
        y_pred = np.eye(n)[y_pred.argmax(axis=1).reshape(-1)]
        self._true_positives = self._true_positives + (y * y_pred).sum(axis=0)
        self._positives = self._positives + y_pred.sum(axis=0)
        self._actual_positives = self._actual_positives + y.sum(axis=0)

    def eval(self, average: bool = False) -> Any:
        if self._class_num == 0:
            raise _no_samples("Fbeta")
        if not isinstance(average, bool):
            raise InvalidParamError(f"Fbeta.eval: average must be a bool, got {average!r}")
        b2 = self.beta ** 2
        fbeta = (1.0 + b2) * self._true_positives / (b2 * self._actual_positives + self._positives + EPS)
        return fbeta.mean() if average else fbeta


class F1(Fbeta):
    """F-beta with beta = 1."""

    def __init__(self):
        super().__init__(1.0)


class TopKCategoricalAccuracy(Metric):
    """Fraction of samples whose label is among the ``k`` highest scores (ties: the first wins)."""

    def __init__(self, k: int):
        super().__init__()
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidParamError(f"TopKCategoricalAccuracy: k must be an int >= 1, got {k!r}")
        self.k = k
        self.clear()

    def clear(self) -> None:
        self._correct_num = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        y_pred, y = _two_inputs(type(self).__name__, inputs)
        if y_pred.ndim == y.ndim and _is_onehot(y):
            y = y.argmax(axis=1)
        if y_pred.ndim != 2 or y_pred.shape[1] < self.k:
            raise InvalidParamError(f"{type(self).__name__}: y_pred must be (samples, classes) with at least k "
                                    f"classes; k={self.k} is more than the {y_pred.shape[-1]} classes of shape "
                                    f"{y_pred.shape}")
        indices = np.argsort(-y_pred, axis=1)[:, :self.k]
        repeated_y = y.reshape(-1, 1).repeat(self.k, axis=1)
        self._correct_num += np.equal(indices, repeated_y).sum(axis=1).sum()
        self._samples_num += repeated_y.shape[0]

    def eval(self) -> np.float64:
        if self._samples_num == 0:
            raise _no_samples(type(self).__name__)
        return self._correct_num / self._samples_num


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(5)


class _ErrorSum(Metric):
    """MAE and MSE: the sum of an elementwise error over the samples (axis 0) seen."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self) -> None:
        self._error_sum = 0
        self._samples_num = 0

    @staticmethod
    def _error(diff: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        y_pred, y = _two_inputs(type(self).__name__, inputs)
        self._error_sum += self._error(y.reshape(y_pred.shape) - y_pred).sum()
        self._samples_num += y.shape[0]

    def eval(self) -> np.float64:
        if self._samples_num == 0:
            raise _no_samples(type(self).__name__)
        return self._error_sum / self._samples_num


class MAE(_ErrorSum):
    """Sum of |y_pred - y| over all elements, divided by the number of samples."""

    _error = staticmethod(np.abs)


class MSE(_ErrorSum):
    """Sum of (y_pred - y)^2 over all elements, divided by the number of samples."""

    _error = staticmethod(np.square)


class Loss(Metric):
    """The mean over ``update`` calls of each call's mean loss (a scalar or 1-d)."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self) -> None:
        self._sum_loss = 0
        self._total_num = 0

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        if len(inputs) != 1:
            raise InvalidParamError(f"Loss.update needs 1 input (the loss), but got {len(inputs)}")
        loss = self._convert_data(inputs[0])
        if loss.ndim == 0:
            loss = loss.reshape(1)
        if loss.ndim != 1:
            raise InvalidParamError(f"Loss.update: the loss must be a scalar or 1-d, got {loss.ndim} dimensions")
        self._sum_loss += loss.mean(-1)
        self._total_num += 1

    def eval(self) -> np.float64:
        if self._total_num == 0:
            raise _no_samples("Loss")
        return self._sum_loss / self._total_num


# Model(metrics={...}) names (MindSpore's __factory__); the ones not built here fail with UnsupportedOpError
_FACTORY: dict[str, type[Metric]] = {
    "accuracy": Accuracy, "acc": Accuracy, "precision": Precision, "recall": Recall, "F1": F1,
    "top_1_accuracy": Top1CategoricalAccuracy, "top_5_accuracy": Top5CategoricalAccuracy, "mae": MAE, "mse": MSE,
    "loss": Loss,
}
_NOT_BUILT = ("dice", "roc", "auc", "bleu_score", "cosine_similarity", "occlusion_sensitivity", "topk",
              "hausdorff_distance", "mean_surface_distance", "root_mean_square_distance", "perplexity",
              "confusion_matrix", "confusion_matrix_metric")


def names() -> list[str]:
    """The metric names ``get_metric_fn`` knows, sorted."""
    return sorted(_FACTORY)


def get_metric_fn(name: str, *args: Any, **kwargs: Any) -> Metric:
    """A new metric by name (``"acc"``, ``"loss"``, ``"top_5_accuracy"``, ...)."""
    if name in _NOT_BUILT:
        raise unsupported("train.metrics", name, names())
    if name not in _FACTORY:
        raise InvalidParamError(f"get_metric_fn: unsupported metric {name!r}; known names: {names()}")
    return _FACTORY[name](*args, **kwargs)


def get_metrics(metrics: Any) -> dict[str, Metric] | None:
    """``Model``'s metrics: a dict name -> Metric as given, or a set of names made into metrics."""
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        for name, metric in metrics.items():
            if not isinstance(name, str) or not isinstance(metric, Metric):
                raise InvalidParamError(f"metrics: a dict must map str names to Metric objects, got "
                                        f"{type(name).__name__} -> {type(metric).__name__}")
        return metrics
    if isinstance(metrics, set):
        return {name: get_metric_fn(name) for name in metrics}
    raise InvalidParamError(f"metrics must be None, a dict or a set, got {type(metrics).__name__}")


def __getattr__(name: str) -> Any:
    raise unsupported("train.metrics", name, __all__)
