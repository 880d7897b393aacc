"""The module paths and names real MindSpore scripts import, under ``ascendemu run``'s ``mindspore``
alias and directly as ``ascendemu.frontend``, and the API surface behind them: ``ops.composite``
(MultitypeFuncGraph, HyperMap, Map, partial), ``ops.primitive`` (user primitives, constexpr),
``ops.functional``, ``communication``, the auto-parallel context, ``mindspore.numpy``, ``log``.

``ZOO_PATHS`` is the module-path part of the census of issue 10 (bench/census.py over the model zoo's
LeNet, ResNet, MobileNetV2, VGG16, YOLOv5, SSD, UNet, ViT, BERT, Transformer, GPT and LSTM, mindcv's
ResNet and ViT, and nine beginner tutorials): every path those scripts import, with the names they
import from it (or a sample), each paired with the front-end object it must be.
"""
from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ascendemu.frontend as ms  # noqa: E402
from ascendemu.cli.run import MindSporeFinder  # noqa: E402
from ascendemu.errors import ContextNullError, FeatureNotSupportedError, InvalidParamError  # noqa: E402
from ascendemu.frontend import Parameter, Tensor, nn, ops  # noqa: E402
from ascendemu.frontend.common.api import capture  # noqa: E402
from ascendemu.frontend.communication import management  # noqa: E402
from ascendemu.frontend.ops import composite as C  # noqa: E402
from ascendemu.frontend.ops import functional as F  # noqa: E402
from ascendemu.frontend.ops.primitive import (PrimitiveWithInfer, constexpr,  # noqa: E402
                                              prim_attr_register)
from ascendemu.frontend.unsupported import UnsupportedImportError, UnsupportedOpError  # noqa: E402
from test_graph import NumpyBackend  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FRONT = "ascendemu.frontend"

# module path the zoo imports -> {name imported from it: the front-end object, as a path under FRONT}
ZOO_PATHS = {
    "mindspore": {"Tensor": "common.tensor.Tensor", "Parameter": "common.parameter.Parameter", "context": "context", "nn": "nn",
                  "ops": "ops", "dtype": "common.dtype", "jit": "common.api.jit", "log": "log",
                  "load_checkpoint": "train.serialization.load_checkpoint",
                  "save_checkpoint": "train.serialization.save_checkpoint",
                  "load_param_into_net": "train.serialization.load_param_into_net", "value_and_grad": "ops.value_and_grad",
                  "set_seed": "common.seed.set_seed", "ParallelMode": "context.ParallelMode",
                  "set_auto_parallel_context": "context.set_auto_parallel_context", "numpy": "numpy",
                  "communication": "communication", "float32": "common.dtype.float32", "int8": "common.dtype.int8",
                  "JitConfig": "common.jit_config.JitConfig"},
    "mindspore.common": {"dtype": "common.dtype", "initializer": "common.initializer",
                         "set_seed": "common.seed.set_seed", "JitConfig": "common.jit_config.JitConfig"},
    "mindspore.common.api": {"jit": "common.api.jit"},
    "mindspore.common.dtype": {"float16": "common.dtype.float16", "float32": "common.dtype.float32",
                               "int32": "common.dtype.int32"},
    "mindspore.common.initializer": {n: f"common.initializer.{n}" for n in (
        "Normal", "TruncatedNormal", "XavierUniform", "HeNormal", "HeUniform", "Uniform", "initializer")},
    "mindspore.common.parameter": {"Parameter": "common.parameter.Parameter", "ParameterTuple": "nn.cell.ParameterTuple"},
    "mindspore.common.tensor": {"Tensor": "common.tensor.Tensor"},
    "mindspore.communication": {n: f"communication.management.{n}" for n in (
        "init", "get_rank", "get_group_size", "GlobalComm")},
    "mindspore.communication.management": {n: f"communication.management.{n}" for n in (
        "init", "get_rank", "get_group_size", "GlobalComm", "HCCL_WORLD_COMM_GROUP")},
    "mindspore.context": {"ParallelMode": "context.ParallelMode", "GRAPH_MODE": "context.GRAPH_MODE",
                          "set_context": "context.set_context",
                          "reset_auto_parallel_context": "context.reset_auto_parallel_context"},
    "mindspore.dataset": {"GeneratorDataset": "dataset.GeneratorDataset", "MnistDataset": "dataset.MnistDataset",
                          "NumpySlicesDataset": "dataset.NumpySlicesDataset", "transforms": "dataset.transforms",
                          "vision": "dataset.vision", "MindDataset": "dataset.MindDataset",
                          "Shuffle": "dataset.Shuffle"},
    "mindspore.dataset.transforms": {"TypeCast": "dataset.transforms.TypeCast"},
    "mindspore.dataset.vision": {"Inter": "dataset.vision.Inter", "Pad": "dataset.vision.transforms.Pad"},
    "mindspore.dataset.vision.utils": {"Inter": "dataset.vision.Inter"},
    "mindspore.log": {n: f"log.{n}" for n in ("warning", "info", "debug", "error")},
    "mindspore.mindrecord": {"FileWriter": "mindrecord.FileWriter"},
    "mindspore.nn": {n: f"nn.{n}" for n in ("Cell", "Dense", "Dropout", "SequentialCell", "Conv2d", "ReLU",
                                            "SoftmaxCrossEntropyWithLogits", "Momentum", "TrainOneStepCell",
                                            "CentralCrop", "OneHot", "SmoothL1Loss")},
    "mindspore.nn.cell": {"Cell": "nn.cell.Cell"},
    "mindspore.nn.layer": {"CellList": "nn.layer.CellList"},
    "mindspore.nn.loss": {"LossBase": "nn.LossBase",
                          "SoftmaxCrossEntropyWithLogits": "nn.SoftmaxCrossEntropyWithLogits"},
    "mindspore.nn.loss.loss": {"LossBase": "nn.LossBase"},
    "mindspore.nn.optim": {n: f"nn.{n}" for n in ("Adam", "AdamWeightDecay", "Momentum", "Optimizer")},
    "mindspore.nn.optim.momentum": {"Momentum": "nn.Momentum"},
    "mindspore.nn.optim.optimizer": {"Optimizer": "nn.Optimizer"},
    "mindspore.numpy": {n: f"numpy.{n}" for n in ("ones", "zeros", "arange")},
    "mindspore.ops": {"operations": "ops.operations", "functional": "ops.functional", "composite": "ops.composite",
                      "expand_dims": "ops.expand_dims", "MultitypeFuncGraph": "ops.composite.MultitypeFuncGraph",
                      "HyperMap": "ops.composite.HyperMap", "partial": "ops.composite.partial"},
    "mindspore.ops.operations": {**{n: f"ops.{n}" for n in (
        "Add", "Cast", "Concat", "ReduceMean", "ReduceSum", "Reshape", "Transpose", "Squeeze", "MatMul",
        "BatchMatMul", "Softmax", "LogSoftmax", "Gather", "Greater", "LessEqual", "Mul", "Sqrt", "ZerosLike")},
        "identity": "ops.operations.identity"},
    "mindspore.ops.functional": {**{n: f"ops.{n}" for n in ("cast", "depend", "square", "sqrt", "expand_dims",
                                                            "fill", "assign", "not_equal", "identity", "dtype",
                                                            "scalar_to_tensor")},
                                 "partial": "ops.composite.partial", "tensor_pow": "ops.pow",
                                 "make_range": "ops.functional.make_range"},
    "mindspore.ops.composite": {"GradOperation": "ops.composite.base.GradOperation", "HyperMap": "ops.composite.HyperMap",
                                "MultitypeFuncGraph": "ops.composite.MultitypeFuncGraph"},
    "mindspore.ops.primitive": {"constexpr": "ops.primitive.constexpr", "Primitive": "ops.Primitive"},
    # MindSpore's own homes of ops' names (issue 26): where the signature table says they are defined
    "mindspore.ops.operations.nn_ops": {n: f"ops.{n}" for n in ("Conv2D", "ReLU", "Softmax", "Dropout", "BatchNorm")},
    "mindspore.ops.operations.math_ops": {n: f"ops.{n}" for n in ("Add", "ReduceSum", "MatMul")},
    "mindspore.ops.operations.array_ops": {n: f"ops.{n}" for n in ("Reshape", "Concat", "Cast", "StridedSlice")},
    "mindspore.ops.operations.comm_ops": {n: f"ops.{n}" for n in ("AllReduce", "ReduceOp", "AllGather")},
    "mindspore.ops.operations.other_ops": {"Assign": "ops.Assign", "StopGradient": "ops.StopGradient"},
    "mindspore.ops.function.array_func": {n: f"ops.{n}" for n in ("reshape", "concat", "split", "stack")},
    "mindspore.ops.function.math_func": {n: f"ops.{n}" for n in ("add", "sum", "matmul")},
    "mindspore.ops.function.nn_func": {n: f"ops.{n}" for n in ("relu", "dropout", "cross_entropy", "pad")},
    "mindspore.ops.function.grad": {n: f"ops.{n}" for n in ("grad", "value_and_grad", "stop_gradient")},
    "mindspore.ops.composite.base": {"GradOperation": "ops.GradOperation", "HyperMap": "ops.HyperMap"},
    "mindspore.parallel": {"set_algo_parameters": "parallel.set_algo_parameters"},
    "mindspore.parallel._utils": {n: f"parallel._utils.{n}" for n in (
        "_get_device_num", "_get_gradients_mean", "_get_parallel_mode")},
    "mindspore.parallel._auto_parallel_context": {"auto_parallel_context": "parallel._auto_parallel_context."
                                                                           "auto_parallel_context"},
    "mindspore.train.model": {"ParallelMode": "context.ParallelMode", "Model": "train.model.Model"},
    "mindspore.nn.wrap.grad_reducer": {"DistributedGradReducer": "nn.wrap.grad_reducer.DistributedGradReducer"},
    "mindspore.train": {"serialization": "train.serialization"},
    "mindspore.train.train_thor": {"ConvertModelUtils": "train.train_thor.ConvertModelUtils"},
    "mindspore.train.callback": {},       # its names come from mindspore.train's callbacks
    "mindspore.train.serialization": {n: f"train.serialization.{n}" for n in (
        "load_checkpoint", "load_param_into_net", "save_checkpoint")},
}
# paths MindSpore defines as a module that the front end keeps as an attribute of its parent
ALIAS_ONLY: set[str] = set()

# paths and names the zoo imports that stay outside the subset, with the error each gives
# (path, the first missing module the error names)
ZOO_UNSUPPORTED_PATHS = [("mindspore.boost", "mindspore.boost"),
                         ("mindspore.parallel._transformer.transformer", "mindspore.parallel._transformer"),
                         ("mindspore.nn.transformer.loss", "mindspore.nn.transformer")]
ZOO_UNSUPPORTED_NAMES = [("mindspore", "set_ps_context"), ("mindspore.nn", "EmbeddingLookupThor"),
                         ("mindspore.parallel", "shard"), ("mindspore.train.train_thor", "ConvertNetUtils"),
                         ("mindspore.ops", "DeformableOffsets"), ("mindspore.ops.operations", "NonMaxSuppressionV3"),
                         ("mindspore.ops.composite", "add_flags_x"), ("mindspore.numpy", "kron"),
                         ("mindspore.ops.functional", "hastype")]


def _front(path: str):
    """The front-end object at ``path`` (a dotted path under ascendemu.frontend)."""
    module, _, rest = path.partition(".")
    obj = importlib.import_module(f"{FRONT}.{module}")
    for part in rest.split(".") if rest else ():
        obj = getattr(obj, part)
    return obj


@pytest.fixture
def alias():
    """ascendemu run's `mindspore` alias in this process; afterwards the alias modules are dropped and
    the front-end modules get their own specs back (the alias import replaces ``__spec__``)."""
    specs = {name: m.__spec__ for name, m in list(sys.modules.items()) if name.startswith(FRONT)}
    finder = MindSporeFinder()
    sys.meta_path.insert(0, finder)
    yield
    sys.meta_path.remove(finder)
    for name in [n for n in sys.modules if n == "mindspore" or n.startswith("mindspore.")]:
        del sys.modules[name]
    for name, spec in specs.items():
        if name in sys.modules:
            sys.modules[name].__spec__ = spec


@pytest.mark.parametrize("path", sorted(ZOO_PATHS))
def test_zoo_module_path_resolves_under_the_alias(alias, path):
    module = importlib.import_module(path)
    assert module is _front(path[len("mindspore."):]) if path != "mindspore" else module is ms
    for name, target in ZOO_PATHS[path].items():
        assert getattr(module, name) is _front(target), (path, name)
        exec(f"from {path} import {name} as imported", {}, scope := {})
        assert scope["imported"] is _front(target)


@pytest.mark.parametrize("path", sorted(set(ZOO_PATHS) - ALIAS_ONLY - {"mindspore"}))
def test_zoo_module_path_resolves_directly(path):
    module = importlib.import_module(FRONT + path[len("mindspore"):])
    for name, target in ZOO_PATHS[path].items():
        assert getattr(module, name) is _front(target), (path, name)


@pytest.mark.parametrize("path, missing", ZOO_UNSUPPORTED_PATHS)
def test_unsupported_module_path_names_the_subset(alias, path, missing):
    with pytest.raises(ModuleNotFoundError, match=rf"No module named '{missing}' in ascendemu's "
                                                  r"MindSpore-compatible subset; it provides mindspore and .*"
                                                  r"mindspore\.communication.*mindspore\.numpy.*mindspore\.ops"):
        importlib.import_module(path)


@pytest.mark.parametrize("path, name", ZOO_UNSUPPORTED_NAMES)
def test_unsupported_name_is_a_clear_error_as_attribute_and_in_from_import(alias, path, name):
    module = importlib.import_module(path)
    shown = path[len("mindspore."):] if path != "mindspore" else "mindspore"
    message = rf"\[207000\] {shown}\.{name} is not supported by the emulated Ascend front end; .*`ascendemu api-coverage`"
    with pytest.raises(UnsupportedOpError, match=message):
        getattr(module, name)
    assert not hasattr(module, name)
    with pytest.raises(UnsupportedImportError, match=message):       # not Python's bare "cannot import name"
        exec(f"from {path} import {name}", {})
    with pytest.raises(UnsupportedImportError, match=message):       # the same without the alias
        exec(f"from {FRONT + path[len('mindspore'):]} import {name}", {})


def test_from_import_of_an_unsupported_name_under_ascendemu_run(tmp_path):
    """The user's view: exit status 2 (an AclError), the script's own line last in the traceback."""
    (tmp_path / "script.py").write_text("import mindspore.ops.operations as P\n"
                                        "from mindspore.nn import EmbeddingLookupThor\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "MS_COMPILER_CACHE_PATH"}
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--quiet", "script.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert [line for line in lines if line.startswith("  File ")] == ['  File "script.py", line 2, in <module>']
    assert lines[-1].startswith("ascendemu.frontend.unsupported.UnsupportedImportError: [207000] "
                                "nn.EmbeddingLookupThor "
                                "is not supported by the emulated Ascend front end; ")
    assert "`ascendemu api-coverage` lists the names each namespace serves" in lines[-1]


def test_ops_submodules_are_views_of_ops():
    from ascendemu.frontend.ops import operations as P
    own = ["identity", "kernel", "ms_kernel"]        # functions MindSpore serves from P too
    assert set(dir(P)) == set(ops.PRIMITIVES) | set(own) and P.__all__ == list(ops.PRIMITIVES) + own
    assert isinstance(ops.identity, P.identity) and F.identity is ops.identity     # MindSpore's deprecated pair
    assert all(getattr(P, n) is getattr(ops, n) for n in ops.PRIMITIVES)
    assert F.tensor_add is ops.add and F.neg_tensor is ops.neg and F.reduce_sum is ops.sum
    assert "square" in F.__all__ and "Square" not in F.__all__ and "make_range" in F.__all__
    with pytest.raises(UnsupportedOpError, match="ops.functional.Square is not supported"):
        F.Square                  # a primitive class is P's, not F's
    assert C.zeros_like is ops.zeros_like and ops.MultitypeFuncGraph is C.MultitypeFuncGraph
    assert F.make_range(4) == (0, 1, 2, 3) and F.make_range(2, 9, 3) == (2, 5, 8)
    assert F.make_range(3, 0, -1) == (3, 2, 1)
    assert F.tuple_len((1, 2, 3)) == 3
    with pytest.raises(InvalidParamError, match="delta must not be 0"):
        F.make_range(0, 3, 0)
    with pytest.raises(InvalidParamError, match="must be an int"):
        F.make_range(2.5)


# ------------------------------------------------------------------------------- ops.composite

def _overloads():
    f = C.MultitypeFuncGraph("f")
    f.register("Tensor", "Tensor")(lambda x, y: ("tt", x, y))
    f.register("Number", "Tensor")(lambda x, y: ("nt", x, y))
    f.register("Bool", "Tensor")(lambda x, y: ("bt", x, y))          # never chosen: Number comes first
    f.register("Function", "Tuple")(lambda g, t: ("ft", g, t))
    f.register("String")(lambda s: ("s", s))
    return f


def test_multitype_func_graph_picks_the_first_overload_whose_type_names_match():
    f, t, p = _overloads(), Tensor([1.0]), Parameter(Tensor([2.0]), name="w")
    assert f(t, p)[0] == "tt"                      # a Parameter is a Tensor
    assert f(3, t)[0] == "nt" and f(2.5, t)[0] == "nt" and f(np.float32(1), t)[0] == "nt"
    assert f(True, t)[0] == "nt"                   # Bool is a Number, and Number was registered first
    assert f(ops.ReLU(), ())[0] == "ft" and f(ops.partial(max, 1), (1,))[0] == "ft" and f(len, ())[0] == "ft"
    assert f("x") == ("s", "x")
    with pytest.raises(InvalidParamError, match=r"'f': no registered function matches the arguments \(Tensor, "
                                                r"Int\); registered: \[\['Tensor', 'Tensor'\]"):
        f(t, 3)
    with pytest.raises(InvalidParamError, match="unknown type name 'Tensr'"):
        f.register("Tensr")


def test_hypermap_maps_over_nested_tuples_and_lists_with_partial():
    scale = C.MultitypeFuncGraph("scale")
    scale.register("Number", "Number")(lambda s, g: s * g)
    grads = (1.0, (2.0, 3.0), [4.0, 5.0])
    assert C.HyperMap()(C.partial(scale, 10), grads) == (10.0, (20.0, 30.0), [40.0, 50.0])
    assert C.HyperMap(scale)((1, 2), (3, 4)) == (3, 8)               # ops given to the constructor
    assert C.HyperMap()(lambda a, b, c: a + b * c, (1, 2), (3, 4), (5, 6)) == (16, 26)
    assert C.Map()(lambda x: (x,), ((1, 2), (3,))) == (((1, 2),), ((3,),))  # one level only
    with pytest.raises(InvalidParamError, match=r"all must be tuples of one length; got \['Tuple\[2\]', "
                                                r"'Tuple\[3\]'\]"):
        C.HyperMap()(scale, (1, 2), (1, 2, 3))
    with pytest.raises(InvalidParamError, match="all must be lists of one length"):
        C.HyperMap()(scale, [1], (2,))
    with pytest.raises(InvalidParamError, match="ops must be a MultitypeFuncGraph or None"):
        C.HyperMap(lambda x: x)


def test_hypermap_optimizer_step_captures_one_update_per_parameter():
    """The zoo's optimizer idiom: hyper_map(partial(_opt, lr), grads, params) inside construct."""
    opt = C.MultitypeFuncGraph("opt")

    @opt.register("Tensor", "Tensor", "Tensor")
    def _update(lr, grad, param):
        return ops.assign(param, param - lr * grad)

    params = (Parameter(Tensor(np.ones((2, 3), np.float32)), name="a"),
              Parameter(Tensor(np.ones(4, np.float32)), name="b"))

    def step(lr, g0, g1):
        return C.HyperMap()(ops.partial(opt, lr), (g0, g1), params)

    graph, _ = capture(step, Tensor(np.float32(0.1)), Tensor(np.zeros((2, 3), np.float32)),
                       Tensor(np.zeros(4, np.float32)))
    assert [n.op for n in graph.nodes] == ["Mul", "Sub", "Mul", "Sub"]
    assert sorted(graph.constants[p].name for p in graph.updates) == ["a", "b"]


# ------------------------------------------------------------------------------- ops.primitive

def test_prim_attr_register_records_every_argument_and_the_class_name():
    class ClipMax(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self, limit, keep=True):
            self.init_prim_io_names(inputs=["x"], outputs=["y"])

    prim = ClipMax(3.0)
    assert prim.name == "ClipMax" and prim.init_attrs == {"limit": 3.0, "keep": True}
    assert prim.attrs == {"limit": 3.0, "keep": True, "input_names": ["x"], "output_names": ["y"]}
    assert repr(prim) == "Prim[ClipMax]"


def test_a_primitive_named_like_a_supported_one_runs_it():
    """MindSpore picks the kernel by the primitive's name, attributes from prim_attr_register."""
    class ReduceSum(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self, keep_dims=False):
            pass

    x = Tensor(np.ones((2, 3), np.float32))
    graph, _ = capture(lambda a: ReduceSum(keep_dims=True)(a, 1) + ops.Primitive("ReLU")(a), x)
    assert [(n.op, n.attrs) for n in graph.nodes][:2] == [("ReduceSum", {"axis": (1,), "keep_dims": True}),
                                                          ("ReLU", {})]
    assert graph.values[graph.outputs[0]].shape == (2, 3)


def test_a_user_primitive_without_a_kernel_fails_clearly_in_construct():
    class MyGelu(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self):
            pass

        def infer_shape(self, x):
            return x

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.act = MyGelu()

        def construct(self, x):
            return self.act(x)

    message = (r"ops.MyGelu is not supported by the emulated Ascend front end; MyGelu is a primitive known only by "
               r"its name, and only the primitives of mindspore.ops have kernels here: write it with them in "
               r"construct; .*`ascendemu api-coverage`")
    with pytest.raises(UnsupportedOpError, match=message):
        capture(Net(), Tensor(np.ones(2, np.float32)))
    with pytest.raises(UnsupportedOpError, match="ops.Softplus2 is not supported"):
        ops.Primitive("Softplus2")(Tensor([1.0]))

    class Square(PrimitiveWithInfer):
        @prim_attr_register
        def __init__(self, power=2):
            pass
    with pytest.raises(UnsupportedOpError, match=r"attributes \{'power': 2\} of Square do not build the "
                                                 r"supported Square"):
        Square()(Tensor([1.0]))


def test_constexpr_runs_on_constants_and_refuses_a_graph_tensor():
    @constexpr
    def lower_triangle(n):
        return Tensor(np.tril(np.ones((n, n))), ms.float32)

    def masked(x):
        return x * lower_triangle(x.shape[0])

    graph, _ = capture(masked, Tensor(np.ones((3, 3), np.float32)))
    assert [n.op for n in graph.nodes] == ["Mul"] and lower_triangle.__name__ == "lower_triangle"
    with pytest.raises(InvalidParamError, match="constexpr function lower_triangle: argument 0 is a tensor computed "
                                                "in the graph"):
        capture(lambda x: lower_triangle(x), Tensor(np.ones(3, np.float32)))
    assert constexpr(get_instance=False)(lambda: 7)()() == 7


# communication: tests/test_communication.py


def test_auto_parallel_context_records_and_checks_the_data_parallel_settings():
    ctx = ms.context
    try:
        assert ctx.get_auto_parallel_context("parallel_mode") == "stand_alone"
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True, device_num=1)
        assert ctx.get_auto_parallel_context("parallel_mode") == "data_parallel"
        assert ctx.get_auto_parallel_context("gradients_mean") is True
        from ascendemu.frontend.parallel._utils import _get_device_num, _get_gradients_mean, _get_parallel_mode
        from ascendemu.frontend.parallel._auto_parallel_context import auto_parallel_context
        assert auto_parallel_context().get_device_num_is_set()            # device_num=1 above
        ctx.set_auto_parallel_context(device_num=8, all_reduce_fusion_config=[85, 160])
        assert (_get_parallel_mode(), _get_gradients_mean(), _get_device_num()) == ("data_parallel", True, 8)
        assert auto_parallel_context().get_device_num_is_set()
        assert ctx.get_auto_parallel_context("all_reduce_fusion_config") == [85, 160]
        with pytest.raises(InvalidParamError, match="device_num"):
            ctx.set_auto_parallel_context(gradients_mean=False, device_num=4097)
        with pytest.raises(InvalidParamError, match="strictly increasing"):
            ctx.set_auto_parallel_context(all_reduce_fusion_config=[160, 85])
        assert ctx.get_auto_parallel_context("gradients_mean") is True        # a refused call changes nothing
        with pytest.raises(InvalidParamError, match="parallel_mode must be one of"):
            ctx.set_auto_parallel_context(parallel_mode="data")
        with pytest.raises(InvalidParamError, match="unknown key 'device_count'"):
            ctx.set_auto_parallel_context(device_count=1)
        ctx.reset_auto_parallel_context()
        assert ctx.get_auto_parallel_context("parallel_mode") == "stand_alone"
        assert ctx.get_auto_parallel_context("gradients_mean") is False
        assert not auto_parallel_context().get_device_num_is_set() and _get_device_num() == 1
    finally:
        ctx.reset_auto_parallel_context()


def test_algo_parameters_are_checked_recorded_and_reset():
    """mindspore.parallel's strategy-search parameters, with MindSpore 2.10's defaults and error types."""
    par = ms.parallel
    try:
        assert ms.get_algo_parameters("elementwise_op_strategy_follow") is False
        assert par.get_algo_parameters("tensor_slice_align_size") == 16
        assert par.get_algo_parameters("algo_approxi_epsilon") == 0.10000000149011612      # held as float32
        ms.set_algo_parameters(elementwise_op_strategy_follow=True, tensor_slice_align_size=32)
        assert par.get_algo_parameters("elementwise_op_strategy_follow") is True
        assert par.get_algo_parameters("tensor_slice_align_size") == 32
        with pytest.raises(TypeError, match="'fully_use_devices' must be bool, but got int"):
            par.set_algo_parameters(fully_use_devices=1)
        with pytest.raises(TypeError, match="'algo_approxi_epsilon' must be float"):
            par.set_algo_parameters(algo_approxi_epsilon=1)
        with pytest.raises(ValueError, match=r"tensor_slice_align_size must be in \[1, 1024\], but got 2000"):
            par.set_algo_parameters(enable_algo_approxi=True, tensor_slice_align_size=2000)
        assert par.get_algo_parameters("enable_algo_approxi") is False          # a refused call changes nothing
        with pytest.raises(RuntimeError, match=r"algo_approxi_epsilon must be in \(0, 1\]"):
            par.set_algo_parameters(algo_approxi_epsilon=0.0)
        with pytest.raises(ValueError, match="keyword 'foo' is not recognized"):
            par.get_algo_parameters("foo")
        with pytest.raises(InvalidParamError, match="keyword 'foo' is not recognized"):
            par.set_algo_parameters(foo=True)
        par.reset_algo_parameters()
        assert par.get_algo_parameters("elementwise_op_strategy_follow") is False
    finally:
        par.reset_algo_parameters()


def test_convert_to_thor_model_keeps_a_first_order_model():
    """The zoo's train.py imports ConvertModelUtils always; for a non-THOR optimizer MindSpore returns the
    model itself, and anything named like THOR's optimizers is refused clearly."""
    net = nn.Dense(3, 2)
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    model = ms.Model(net, nn.MSELoss(), opt)
    assert ms.train.ConvertModelUtils.convert_to_thor_model(model, net, optimizer=opt) is model
    thor = type("ThorAscend", (), {})()
    with pytest.raises(FeatureNotSupportedError, match="THOR .* not supported"):
        ms.train.ConvertModelUtils().convert_to_thor_model(model=model, network=net, optimizer=thor)


# ------------------------------------------------------------------------------- mindspore.numpy

def test_numpy_creation_matches_numpy_with_mindspores_dtypes():
    mnp = ms.numpy
    cases = [(mnp.zeros((2, 3)), np.zeros((2, 3)), ms.float32), (mnp.ones(4, ms.int32), np.ones(4), ms.int32),
             (mnp.full((2, 2), 7), np.full((2, 2), 7), ms.int32), (mnp.full(3, 0.5), np.full(3, 0.5), ms.float32),
             (mnp.arange(5), np.arange(5), ms.int32), (mnp.arange(1, 2, 0.25), np.arange(1, 2, 0.25), ms.float32),
             (mnp.arange(10, 0, -3), np.arange(10, 0, -3), ms.int32),
             (mnp.linspace(0, 1, 5), np.linspace(0, 1, 5), ms.float32),
             (mnp.eye(3, 4, 1), np.eye(3, 4, 1), ms.float32), (mnp.array([[1, 2]], ndmin=3), np.array([[[1, 2]]]),
                                                              ms.int32)]
    for got, want, dtype in cases:
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.asnumpy(), want)
    graph, _ = capture(lambda x: mnp.full_like(x, 2.5), Tensor(np.zeros((2, 3), np.float32)))
    # folded while compiling, as MindSpore folds Fill of a literal: a (2, 3) constant of 2.5, no kernel
    assert graph.nodes == [] and graph.values[graph.outputs[0]].shape == (2, 3)
    np.testing.assert_array_equal(graph.constants[graph.outputs[0]].data, np.full((2, 3), 2.5, np.float32))
    np.testing.assert_array_equal(next(iter(graph.constants.values())).data, np.float32(2.5))
    with pytest.raises(InvalidParamError, match="step must not be 0"):
        mnp.arange(0, 3, 0)
    with pytest.raises(InvalidParamError, match="shape=-1 must be"):
        mnp.zeros(-1)


def test_numpy_functions_on_ops_match_numpy():
    mnp, rng = ms.numpy, np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    v, w = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    previous = ms.set_backend(NumpyBackend())
    try:
        checks = [(mnp.stack([a, b], 1), np.stack([a, b], 1)), (mnp.stack([v, w], -1), np.stack([v, w], -1)),
                  (mnp.concatenate([a, b], axis=None), np.concatenate([a, b], axis=None)),
                  (mnp.transpose(np.ones((2, 3, 4), np.float32) * a[..., None]),
                   np.transpose(np.ones((2, 3, 4)) * a[..., None])),
                  (mnp.dot(v, w), np.dot(v, w)), (mnp.dot(a, v), np.dot(a, v)), (mnp.dot(a, b.T), np.dot(a, b.T)),
                  (mnp.clip(a, -0.5, 0.5), np.clip(a, -0.5, 0.5)), (mnp.clip(a, None, 0.1), np.clip(a, None, 0.1)),
                  (mnp.sum(a, axis=1, keepdims=True), a.sum(1, keepdims=True)), (mnp.mean(a), a.mean()),
                  (mnp.amax(a, 0), a.max(0)), (mnp.ravel(a), a.ravel()), (mnp.reshape(a, (3, -1)), a.reshape(3, -1)),
                  (mnp.subtract(a, b), a - b),
                  (mnp.true_divide(a, 2.0), a / 2.0), (mnp.sum(v, initial=1.0), v.sum(initial=1.0))]
        for got, want in checks:
            assert got.shape == np.shape(want)
            np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    finally:
        ms.set_backend(previous)


# ------------------------------------------------------------------------------- mindspore.log

def test_log_levels_follow_glog_v(monkeypatch, capsys):
    logger = logging.getLogger("mindspore")
    handlers, level = list(logger.handlers), logger.level
    for h in handlers:
        logger.removeHandler(h)
    monkeypatch.setenv("GLOG_v", "3")
    try:
        ms.log.warning("hidden %d", 1)
        ms.log.error("shown %d", 2)
        assert ms.log.get_level() == "3"
        err = capsys.readouterr().err
        assert "hidden" not in err and "[ERROR] ME(" in err and "shown 2" in err
        assert "test_import_paths.py:" in err         # the caller's file and line, as MindSpore prints them
    finally:
        for h in list(logger.handlers):
            logger.removeHandler(h)
        for h in handlers:
            logger.addHandler(h)
        logger.setLevel(level)


# ------------------------------------------------------------------------------- the census script

def test_census_reads_the_names_a_script_uses_through_its_aliases(alias):
    spec = importlib.util.spec_from_file_location("census", ROOT / "bench" / "census.py")
    census = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(census)
    source = ("import mindspore as ms\nimport mindspore.nn as nn\nfrom mindspore.ops import operations as P\n"
              "from mindspore import Tensor\nimport numpy as np\n"
              "class Net(nn.Cell):\n    def construct(self, x):\n        return P.ReLU()(x) + ms.ops.square(x)\n"
              "y = Tensor(np.ones(2)).asnumpy()\n")
    assert census.names_in_source(source, {}) == {
        "mindspore", "mindspore.nn", "mindspore.ops.operations", "mindspore.Tensor", "mindspore.nn.Cell",
        "mindspore.ops.operations.ReLU", "mindspore.ops.square"}
    assert census.resolves("mindspore.ops.operations.ReLU") and census.resolves("mindspore.nn.loss.loss.LossBase")
    assert not census.resolves("mindspore.ops.operations.NoSuchOp") and not census.resolves("mindspore.boost")
