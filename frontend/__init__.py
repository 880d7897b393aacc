"""A MindSpore-compatible front end for the emulated Ascend device (served as ``mindspore`` by the
import shim): Tensor/Parameter, context, dtypes, initializers, ``ops`` and ``nn``.

Module layout mirrors MindSpore's names: ``context``, ``ops`` (with ``ops.operations`` and
``ops.functional``), ``nn``, ``common.dtype`` (also ``dtype``), ``common.initializer``, ``amp``, ``dataset``
(with ``dataset.vision`` and ``dataset.transforms``).
"""
from . import amp, context, dataset, nn, ops, serialization, train
from .backend import get_backend, set_backend
from .common import dtype
from .common.api import capture, jit
from .common.dtype import bool_, float16, float32, int32
from .common.initializer import initializer
from .common.seed import get_seed, set_seed
from .context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context, set_device
from .grad import GradOperation, grad, value_and_grad
from .nn.cell import ParameterTuple
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint
from .tensor import Parameter, Tensor
from .train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager

__all__ = ["context", "dataset", "nn", "ops", "dtype", "Tensor", "Parameter", "GRAPH_MODE", "PYNATIVE_MODE",
           "set_context", "get_context", "set_device", "set_seed", "get_seed", "jit", "initializer",
           "float16", "float32", "int32", "bool_", "capture", "set_backend", "get_backend", "grad",
           "value_and_grad", "GradOperation", "ParameterTuple", "serialization", "train", "save_checkpoint",
           "load_checkpoint", "load_param_into_net", "amp", "DynamicLossScaleManager", "FixedLossScaleManager",
           "LossScaleManager"]
