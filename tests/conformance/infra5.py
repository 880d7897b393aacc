"""Specs of ``infra5`` (issue 21): the infrastructure names, each sampled as the small scenario a user
script runs it in: a user-defined Cell (and its CellList / CellDict containers) called on an input, its
parameter names and gradients; a user ``nn.Optimizer`` subclass implementing SGD (two steps on a
Parameter); a MindIR exported with ``ms.export`` and run by ``nn.GraphCell``; one
``TrainOneStepWithLossScaleCell`` step; user primitives (``Primitive`` / ``PrimitiveWithInfer`` /
``PrimitiveWithCheck``, defined as MindSpore's docs define them); ``recompute_block`` inside a jit
graph; ``Print``; and Ascend's float status primitives (numpy oracles of their documented results:
MindSpore 2.10 CPU has no kernels for them)."""
from __future__ import annotations

import os
import tempfile

import numpy as np

from .core import Py, T, cell, op

STATEFUL = dict(grad=False, graph=False)


# ---- Cell, CellList, CellDict: user-defined Cells -------------------------------------------------

def _user_cell(ms, construct=True):
    """A user Cell: Dense + ReLU built in __init__ and a Parameter named by its attribute, used in
    construct; ``construct=False``: a Cell subclass that defines no construct (MindSpore refuses the call)."""
    if not construct:
        class Bare(ms.nn.Cell):
            pass
        return Bare()

    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = ms.nn.Dense(3, 2)
            self.relu = ms.nn.ReLU()
            self.scale = ms.Parameter(ms.ops.ones((2,), ms.float32))

        def construct(self, x):
            return self.relu(self.dense(x)) * self.scale
    return Net()


def _cell_list(ms, bad=False):
    """A Cell iterating a CellList (built from a list, then appended to) in construct."""
    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = ms.nn.CellList([ms.nn.Dense(3, 4), ms.nn.ReLU()])
            self.layers.append(1 if bad else ms.nn.Dense(4, 2))

        def construct(self, x):
            for layer in self.layers:
                x = layer(x)
            return x
    return Net()


def _cell_dict(ms, bad=False):
    """A Cell running a CellDict's Cells by key in construct."""
    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.blocks = ms.nn.CellDict({"dense": ms.nn.Dense(3, 2), "act": 1 if bad else ms.nn.Tanh()})

        def construct(self, x):
            return self.blocks["act"](self.blocks["dense"](x))
    return Net()


# ---- Optimizer: a user subclass --------------------------------------------------------------------

def _user_sgd(ms, w, g, learning_rate, weight_decay=0.0, parameter=True):
    """Plain SGD written as a user ``nn.Optimizer`` subclass (get_lr, decay_weight, assign), two steps
    on one Parameter: its new values and the learning rate; ``parameter=False``: given a Tensor."""
    class MySGD(ms.nn.Optimizer):
        def __init__(self, params, learning_rate, weight_decay=0.0):
            super().__init__(learning_rate, params, weight_decay)

        def construct(self, gradients):
            lr = self.get_lr()
            gradients = self.decay_weight(gradients)
            for param, grad in zip(self.parameters, gradients):
                ms.ops.assign(param, param - lr * grad)
            return True
    p = ms.Parameter(w, name="w") if parameter else w
    opt = MySGD([p], learning_rate, weight_decay)
    opt((g,))
    opt((g,))
    return p * 1, opt.get_lr() * 1


# ---- GraphCell: a MindIR exported and loaded back ---------------------------------------------------

def _graph_cell(ms, x, w, b, params_init=False, graph="mindir"):
    """A Dense exported with ``ms.export`` (MINDIR, in a temp dir), loaded with ``ms.load`` and run by
    ``nn.GraphCell`` on x (``params_init``: its weight replaced by w + 1); ``graph="str"``: a str given
    as the graph; ``params_init="float"``: a Python float given as a parameter's value."""
    net = ms.nn.Dense(3, 2, weight_init=w, bias_init=b)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dense")
        ms.export(net, x, file_name=path, file_format="MINDIR")
        loaded = ms.load(path + ".mindir")
    if graph == "str":
        loaded = path
    init = None
    if params_init == "float":
        init = {"weight": 1.0}
    elif params_init:
        init = {"weight": w + 1}
    graph_cell = ms.nn.GraphCell(loaded, params_init=init)
    return graph_cell(x), sorted(p.name for p in graph_cell.get_parameters()) == ["bias", "weight"]


# ---- TrainOneStepWithLossScaleCell -------------------------------------------------------------------

def _loss_scale_step(ms, x, y, w, b, scale, sense="tensor", oracle=False):
    """One TrainOneStepWithLossScaleCell step of an MSE Dense under SGD with a fixed scale sense (a Tensor):
    (loss, overflow, scale) and the updated weights; ``sense="float"``: a Python float as the scale sense."""
    net = ms.nn.Dense(3, 2, weight_init=w, bias_init=b)
    opt = ms.nn.SGD(net.trainable_params(), learning_rate=0.1)
    step = ms.nn.TrainOneStepWithLossScaleCell(ms.nn.WithLossCell(net, ms.nn.MSELoss()), opt,
                                               scale_sense=1024.0 if sense == "float" else scale)
    if oracle:
        # MindSpore's own Ascend INFNAN-mode overflow check (IsFinite of every gradient, ops CPU has) in
        # place of the 910A status register (NPUGetFloatStatusV2, which CPU lacks): both say whether a
        # gradient overflowed
        step.ascend_910a_target, step.ascend_910b_target = False, True
        step._ascend_check_overflow_mode, step.enable_allfinite = "INFNAN_MODE", False
    loss, overflow, scaling = step(x, y)
    return loss, overflow, scaling, net.weight * 1, net.bias * 1


def _loss_scale_step_oracle(ms, *inputs, **kw):
    return _loss_scale_step(ms, *inputs, **kw, oracle=True)


# ---- Primitive, PrimitiveWithInfer, PrimitiveWithCheck: user primitives --------------------------------

def _primitive(ms, *xs, name="Add"):
    """``ops.Primitive(name)`` called: the kernel of that name runs."""
    return ms.ops.Primitive(name)(*xs)


def _primitive_subclass(ms, x, axis=0, epsilon=1e-4):
    """A user ``Primitive`` subclass with attributes (MindSpore's docs' ``@prim_attr_register`` form):
    the L2Normalize kernel runs with them; also its name and attributes."""
    class L2Normalize(ms.ops.Primitive):
        @ms.ops.prim_attr_register
        def __init__(self, axis=0, epsilon=1e-4):
            """init for L2Normalize"""
    prim = L2Normalize(axis=axis, epsilon=epsilon)
    return prim(x), prim.name, prim.axis, prim.attrs["epsilon"]


def _primitive_with_infer(ms, *xs):
    """MindSpore's docs' ``Add(PrimitiveWithInfer)`` (infer_shape / infer_dtype) called on xs."""
    class Add(ms.ops.PrimitiveWithInfer):
        @ms.ops.prim_attr_register
        def __init__(self):
            pass

        def infer_shape(self, x, y):
            return x

        def infer_dtype(self, x, y):
            return x
    add = Add()
    return add(*xs), add.name


def _primitive_with_check(ms, x):
    """MindSpore's docs' ``Flatten(PrimitiveWithCheck)`` (check_shape / check_dtype) called on x."""
    class Flatten(ms.ops.PrimitiveWithCheck):
        @ms.ops.prim_attr_register
        def __init__(self):
            pass

        def check_shape(self, input_x):
            if len(input_x) < 1:
                raise ValueError(f"For '{self.name}', the rank of 'input_x' must be >= 1")

        def check_dtype(self, input_x):
            return None
    flatten = Flatten()
    return flatten(x), flatten.name


# ---- recompute_block: inside a jit graph ----------------------------------------------------------------

def _recompute_block(ms, output_recompute=False):
    """A Cell whose jit construct runs a Dense + Tanh block through ``ops.recompute_block`` (the form
    ``mindspore.recompute`` takes in a graph): outputs and gradients are the block's own."""
    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.block = ms.nn.SequentialCell([ms.nn.Dense(3, 2), ms.nn.Tanh()])

        @ms.jit
        def construct(self, x):
            return ms.ops.recompute_block(self.block, output_recompute)(x) * 2
    return Net()


# ---- Print --------------------------------------------------------------------------------------------

def _print(ms, x, y):
    """``ops.Print()`` of a string, tensors, a number and a tuple: its output (None in PyNative; what it
    prints is not compared)."""
    return ms.ops.Print()("x and y:", x, y, 3, (1, 2.5))


# ---- Ascend's float status (numpy oracles) ------------------------------------------------------------

def _float_status(ms, x):
    return ms.ops.FloatStatus()(x)


def _float_status_oracle(ms, x):
    """FloatStatus as documented: (1,) float32, 1.0 if x holds an inf or NaN, else 0.0; x must be
    float16/32/64 (TypeError)."""
    data = x.asnumpy()
    if data.dtype not in (np.float16, np.float32, np.float64):
        raise TypeError(f"For 'FloatStatus', the dtype of 'x' must be float16, float32 or float64, got {x.dtype}")
    return ms.Tensor(np.array([0.0 if np.isfinite(data).all() else 1.0], np.float32))


def _alloc_status(ms):
    return ms.ops.NPUAllocFloatStatus()()


def _alloc_status_oracle(ms):
    """NPUAllocFloatStatus as documented: a float32 (8,) tensor of zeros."""
    return ms.Tensor(np.zeros(8, np.float32))


def _status_oracle_check(name, status):
    """The documented refusals of NPUClear/GetFloatStatus: a non-Tensor, a dtype other than float16/32."""
    if not hasattr(status, "asnumpy"):
        raise TypeError(f"For '{name}', 'x' must be a Tensor, got {type(status).__name__}")
    if status.asnumpy().dtype not in (np.float16, np.float32):
        raise TypeError(f"For '{name}', the dtype of 'x' must be float16 or float32, got {status.dtype}")


def _clear_status(ms, status):
    """NPUClearFloatStatus on a status tensor: its output (zeros shaped like it)."""
    return ms.ops.NPUClearFloatStatus()(status)


def _clear_status_oracle(ms, status):
    """NPUClearFloatStatus as documented: a tensor shaped like x, all zeros."""
    _status_oracle_check("NPUClearFloatStatus", status)
    return ms.Tensor(np.zeros(status.shape, status.asnumpy().dtype))


def _get_status(ms, x, status=None):
    """MindSpore's docs' sequence: alloc, clear, compute x - (-x) (then, for a second reading, x / 0),
    get: the result and whether each reading's status sums to more than 0 (overflow); ``status``
    given: NPUGetFloatStatus called on it directly (a refusal)."""
    if status is not None:
        return ms.ops.NPUGetFloatStatus()(status)
    alloc, clear, get = ms.ops.NPUAllocFloatStatus(), ms.ops.NPUClearFloatStatus(), ms.ops.NPUGetFloatStatus()
    init = alloc()
    cleared = clear(init)
    x = ms.ops.depend(x, cleared)
    res = ms.ops.sub(x, ms.ops.neg(x))
    init = ms.ops.depend(init, res)
    first = get(init)
    res = ms.ops.depend(res, first)
    first_overflow = first.sum() > 0
    cleared = clear(init)
    res = ms.ops.depend(res, cleared)
    inf = ms.ops.div(res, ms.ops.zeros_like(res))
    init = ms.ops.depend(init, inf)
    second = get(init)
    return res, first_overflow, second.sum() > 0, second.shape


def _get_status_oracle(ms, x, status=None):
    """NPUGetFloatStatus as documented: the status shaped like x, summing to 0 without an overflow since
    the clear and to more than 0 after one; x must be a float16/32 Tensor (TypeError)."""
    if status is not None:
        _status_oracle_check("NPUGetFloatStatus", status)
        return ms.Tensor(np.zeros(status.shape, status.asnumpy().dtype))
    res = x.asnumpy() * 2
    return ms.Tensor(res), ms.Tensor(False), ms.Tensor(True), (8,)


FLOAT_STATUS_NOTE = ("MindSpore 2.10 CPU has no {} kernel (Ascend/GPU only): numpy oracle of the documented "
                     "result")
X23 = (2, 3)
DENSE_IO = [(4, 3), (4, 2), (2, 3), (2,)]
INF_X = T(values=[[np.inf, 1.0, 0.5], [0.25, -1.0, 2.0], [1.5, 0.0, -0.5], [1.0, 1.0, 1.0]])

SPECS = [
    cell("mindspore.nn.Cell", _user_cell, shapes=[(4, 3)], errors=[((4, 3), {"construct": False})]),
    cell("mindspore.nn.CellList", _cell_list, shapes=[(4, 3)], errors=[((4, 3), {"bad": True})]),
    cell("mindspore.nn.CellDict", _cell_dict, shapes=[(4, 3)], errors=[((4, 3), {"bad": True})]),
    op("mindspore.nn.Optimizer", _user_sgd, shapes=[[X23, X23]],
       kwargs=[{"learning_rate": 0.1}, {"learning_rate": 0.1, "weight_decay": 0.1}],
       errors=[([X23, X23], {"learning_rate": 0.1, "parameter": False}),
               ([X23, X23], {"learning_rate": -0.1})], **STATEFUL),
    op("mindspore.nn.GraphCell", _graph_cell, shapes=[[(4, 3), (2, 3), (2,)]],
       kwargs=[{}, {"params_init": True}],
       errors=[([(4, 3), (2, 3), (2,)], {"graph": "str"}), ([(4, 3), (2, 3), (2,)], {"params_init": "float"})],
       **STATEFUL),
    op("mindspore.nn.TrainOneStepWithLossScaleCell", _loss_scale_step,
       shapes=[DENSE_IO + [T(values=1024.0)], [INF_X] + DENSE_IO[1:] + [T(values=[8.0])]],
       errors=[(DENSE_IO + [T(values=1024.0)], {"sense": "float"}),
               (DENSE_IO + [T(values=[1024.0, 2.0])], {})], oracle=_loss_scale_step_oracle,
       note="MindSpore 2.10 CPU has no NPUGetFloatStatusV2 kernel (the 910A overflow register the step reads): the "
            "oracle is the same step with MindSpore's Ascend INFNAN-mode overflow check (IsFinite of the gradients)",
       **STATEFUL),
    op("mindspore.ops.Primitive", _primitive, shapes=[[X23, X23]],
       errors=[([X23], {}), ([X23, X23], {"name": 3})]),
    op("mindspore.ops.Primitive", _primitive_subclass, shapes=[(2, 3, 4)], kwargs=[{"axis": 1, "epsilon": 1e-3}]),
    op("mindspore.ops.PrimitiveWithInfer", _primitive_with_infer, shapes=[[X23, X23]], errors=[([X23], {})]),
    op("mindspore.ops.PrimitiveWithCheck", _primitive_with_check, shapes=[[(2, 3, 2)]], errors=[([()], {})]),
    cell("mindspore.ops.recompute_block", _recompute_block, shapes=[(4, 3)], graph=False),
    op("mindspore.ops.Print", _print, shapes=[[X23, T((2,), "int32")]], grad=False),
    op("mindspore.ops.FloatStatus", _float_status,
       shapes=[T(values=[1.0, np.inf, 2.0]), T(values=[1.0, -2.0, 3.0]), T(values=[np.nan, 0.0], dtype="float16")],
       errors=[(T((3,), "int32"), {})], grad=False, oracle=_float_status_oracle,
       note=FLOAT_STATUS_NOTE.format("FloatStatus") + " (1.0 if any inf/NaN else 0.0, shape (1,), float32)"),
    op("mindspore.ops.NPUAllocFloatStatus", _alloc_status, shapes=[[]], grad=False, oracle=_alloc_status_oracle,
       note=FLOAT_STATUS_NOTE.format("NPUAllocFloatStatus") + " (8 zeros, float32)"),
    op("mindspore.ops.NPUClearFloatStatus", _clear_status, shapes=[T((8,), low=0.0, high=1.0)],
       errors=[(T((8,), "int32"), {})], grad=False, oracle=_clear_status_oracle,
       note=FLOAT_STATUS_NOTE.format("NPUClearFloatStatus") + " (zeros shaped like x)"),
    op("mindspore.ops.NPUGetFloatStatus", _get_status, shapes=[T(values=np.full((2, 3), 5.0))],
       errors=[([X23, Py([0.0] * 8)], {})], grad=False, oracle=_get_status_oracle,
       note=FLOAT_STATUS_NOTE.format("NPUGetFloatStatus") + " (the docs' alloc/clear/compute/get sequence: "
            "the status sums to 0 without an overflow, to more than 0 after one; shape (8,))"),
]
