"""A MindSpore-compatible front end for the emulated Ascend device (served as ``mindspore`` by the
import shim): Tensor/Parameter, context, dtypes, initializers, ``ops`` and ``nn``.

Module layout mirrors MindSpore's names: ``context``, ``ops`` (a package: ``operations``,
``functional``, ``composite``, ``primitive``), ``nn`` (with ``cell``, ``layer``, ``loss``, ``optim``,
``wrap``), ``common`` (``dtype``, ``initializer``, ``tensor``, ``parameter``; also ``dtype``),
``dataset`` (with ``vision`` and ``transforms``), ``train`` (``serialization``, ``callback``),
``communication`` (``management``), ``parallel``, ``numpy``, ``log``, ``amp``, ``profiler``, ``mindrecord``,
``onnx`` (``mindspore.onnx.export``). A name outside the subset raises UnsupportedOpError (``from mindspore
import X``: UnsupportedImportError), which names ``ascendemu api-coverage``.

``__version__`` (``version.py``) is MindSpore's version with the emulator as a PEP 440 local label.
"""
from typing import Any

from . import train  # noqa: I001  before amp: train imports amp whole, amp imports train.loss_scale_manager
from . import (amp, communication, context, dataset, index_update, indexing, log, mindrecord, nn, numpy,  # noqa: F401
               onnx, ops, parallel, profiler)  # indexing, index_update: register Tensor.__getitem__/__setitem__
from . import mint  # noqa: F401  (mindspore.mint: after ops and nn, whose names it serves)
from .backend import get_backend, set_backend
from .common import dtype
from .common.api import capture, jit, jit_class
from .common.dtype import (bfloat16, bool_, byte, cdouble, cfloat, complex64, complex128, double, dtype_to_nptype,
                           float16, float32, float64, half, int8, int16, int32, int64, intc, intp, long,
                           pytype_to_dtype, short, single, ubyte, uint8, uint16, uint32, uint64, uintc, uintp, ushort)
from .common.initializer import initializer
from .common.jit_config import JitConfig
from .common.lazy_inline import lazy_inline
from .common.mutable import mutable
from .common.parameter import Parameter
from .common.recompute import recompute
from .common.seed import get_seed, set_seed
from .common.tensor import Tensor, tensor
from .common.sparse_tensor import COOTensor, CSRTensor, RowTensor, SparseTensor
from .context import (GRAPH_MODE, PYNATIVE_MODE, ParallelMode, get_auto_parallel_context, get_context,
                      reset_auto_parallel_context, set_auto_parallel_context, set_context, set_device)
from .nn.cell import ParameterTuple
from .ops.composite import GradOperation
from .ops.function.grad import grad, value_and_grad
from .ops.function.grad import get_grad, jacfwd, jacrev, jvp, vjp  # noqa: F401  (function transforms)
from .ops.function.vmap_func import vmap  # noqa: F401
from .parallel import Layout, get_algo_parameters, reset_algo_parameters, set_algo_parameters
from .profiler import Profiler
from .run_check import run_check
from .train.serialization import export, load, load_checkpoint, load_param_into_net, save_checkpoint
from .train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager
from .train import *  # noqa: F401,F403  MindSpore's top level has mindspore.train's names (Model, callbacks, metrics)
from .unsupported import unsupported

from .version import MINDSPORE_VERSION, __version__  # noqa: F401

__all__ = ["context", "dataset", "nn", "ops", "dtype", "Tensor", "Parameter", "GRAPH_MODE", "PYNATIVE_MODE",
           "set_context", "get_context", "set_device", "set_seed", "get_seed", "jit", "initializer",
           "float16", "float32", "int32", "bool_", "capture", "set_backend", "get_backend", "grad",
           "value_and_grad", "GradOperation", "ParameterTuple", "train", "save_checkpoint",
           "load_checkpoint", "load_param_into_net", "export", "load", "profiler", "amp", "DynamicLossScaleManager", "FixedLossScaleManager",
           "LossScaleManager", "communication", "numpy", "log", "ParallelMode", "set_auto_parallel_context",
           "get_auto_parallel_context", "reset_auto_parallel_context", "mindrecord", "parallel",
           "set_algo_parameters", "get_algo_parameters", "reset_algo_parameters", "Layout", "Profiler", "run_check",
           "onnx",
           "__version__"]
__all__ += ["int8", "int16", "int64", "uint8", "uint16", "uint32", "uint64", "float64", "complex64", "complex128",
            "bfloat16", "half", "single", "double", "byte", "short", "intc", "long", "intp", "ubyte", "ushort", "uintc",
            "uintp", "cfloat", "cdouble", "dtype_to_nptype", "pytype_to_dtype", "JitConfig"]
__all__ += [n for n in train.__all__ if n not in __all__]
__all__ += ["mint"]
__all__ += ["COOTensor", "CSRTensor", "RowTensor", "SparseTensor"]
__all__ += ["vmap", "vjp", "jvp", "jacfwd", "jacrev", "get_grad"]
__all__ += ["tensor", "jit_class"]
__all__ += ["mutable"]
__all__ += ["recompute"]
__all__ += ["lazy_inline"]


def __getattr__(name: str) -> Any:
    raise unsupported("mindspore", name, __all__)

# MindSpore's ``mindspore.bool``, its alias of ``bool_`` (not in ``__all__``: a star import would shadow Python's)
bool = bool_  # noqa: A001
