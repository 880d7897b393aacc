"""Specs of the round-3 family ``transforms``: the functional transforms (vmap, vjp, jvp, linearize,
jacfwd, jacrev, get_grad), the loop primitives (ForiLoop, WhileLoop, Scan), the graph internals of
round 3 (tail, zip_operation, hyper_add, augassign_*, switch, switch_layer, is_tensor_bool_cond),
TensorAdd and the Tensor's storage facts.

The functions transformed are module-level ``def``s: MindSpore parses them (its vjp/jvp run them under
jit even in PyNative) and refuses lambdas that share a line with other code. Transforms' results are
gradients already, so their samples check no gradient of their own (``grad=False``) except vmap's."""
from __future__ import annotations

from .core import Py, op
from .internals import _graph

V = (2, 3)


def _mul_add(a, b):
    return a * b + 1


def _cube_plus(x, y):
    return x * x * x + y


def _two_outputs(x, y):
    return x * y, x + y


def _product(x, y):
    return x * y


def _double_plus_index(i, v):
    return v * 2 + i


def _running_sum(carry, x):
    carry = carry + x
    return carry, carry * 2


def _below_ten(v):
    return v < 10


def _add_three(v):
    return v + 3


def _first(x):
    return x


def _second(x):
    return x * 2


def _vmap(ms, x, y, in_axes=(0, None), out_axes=0):
    return ms.ops.vmap(_mul_add, in_axes=in_axes, out_axes=out_axes)(x, y)


# MindSpore's graph parser reads these from their source: named functions, not lambdas
def _tail(ms):
    return ms.ops.tail((1, 2, 3))


def _zip_operation(ms):
    return ms.ops.zip_operation((1, 2), (3, 4))


def _switch_layer(ms):
    return ms.ops.switch_layer(ms.Tensor(-1, ms.int32), (_first, _second))(ms.Tensor([1.0, 2.5]))


def _m(name):
    """``x.<name>()`` for a method, ``x.<name>`` for a property."""
    def run(ms, x):
        value = getattr(x, name)
        return value() if callable(value) else value
    return run


SPECS = [
    op("mindspore.ops.vmap", _vmap, shapes=[[(3, 2), (2,)]], kwargs=[{}, {"out_axes": 1}],
       errors=[([(3, 2), (2,)], {"in_axes": (0, 0, 0)}), ([(3, 2), (2,)], {"in_axes": 5}),
               ([(3, 2), (2,)], {"in_axes": (None, None)}), ([(3, 2), (2, 2)], {"in_axes": 0})]),
    op("mindspore.ops.vmap", _vmap, shapes=[[(2, 3), (3, 2)]], kwargs={"in_axes": (1, 0)}),
    op("mindspore.ops.vjp", lambda ms, x, y, v: ms.ops.vjp(_cube_plus, x, y)[1](v), shapes=[[V, V, V]], grad=False),
    op("mindspore.ops.jvp", lambda ms, x, y, u, v: ms.ops.jvp(_two_outputs, (x, y), (u, v)), shapes=[[V, V, V, V]],
       grad=False, graph=False),
    op("mindspore.ops.linearize", lambda ms, x, y, u, v: ms.ops.linearize(_cube_plus, (x, y))[1]((u, v)),
       shapes=[[V, V, V, V]], grad=False, graph=False),
    op("mindspore.ops.jacfwd", lambda ms, x, y: ms.ops.jacfwd(_two_outputs, grad_position=(0, 1))(x, y),
       shapes=[[(2,), (2,)]], grad=False, graph=False),
    op("mindspore.ops.jacrev", lambda ms, x, y: ms.ops.jacrev(_cube_plus)(x, y), shapes=[[(2,), (2,)]], grad=False,
       graph=False),
    op("mindspore.ops.get_grad",
       lambda ms, x, y: ms.ops.get_grad(ms.ops.grad(_product, (0, 1), return_ids=True)(x, y), 1),
       shapes=[[V, V]], grad=False, graph=False),
    op("mindspore.ops.TensorAdd", lambda ms, x, y: ms.ops.TensorAdd()(x, y), shapes=[[V, V], [V, ()]]),
    op("mindspore.ops.ForiLoop", lambda ms, x: ms.ops.ForiLoop()(0, 3, _double_plus_index, x), shapes=[V],
       grad=False, graph=False),
    op("mindspore.ops.WhileLoop", lambda ms: ms.ops.WhileLoop()(_below_ten, _add_three, 1), grad=False, graph=False),
    op("mindspore.ops.Scan", lambda ms, x, a, b: ms.ops.Scan()(_running_sum, x, [a, b]), shapes=[[V, V, V]],
       grad=False, graph=False),
    # graph internals: Python values in PyNative, or (tail, zip_operation: MetaFuncGraphs MindSpore runs only
    # while compiling) inside a GRAPH_MODE Cell
    op("mindspore.ops.tail", _graph(_tail), grad=False, graph=False),
    op("mindspore.ops.zip_operation", _graph(_zip_operation), grad=False, graph=False),
    op("mindspore.ops.hyper_add", lambda ms, x, y: ms.ops.hyper_add((x, (x, 1)), (y, (y, 2))), shapes=[[V, V]],
       grad=False, graph=False),
    *[op(f"mindspore.ops.augassign_{name}", lambda ms, x, y, _n=name: getattr(ms.ops, f"augassign_{_n}")(x, y),
         shapes=[[V, V]], grad=False, graph=False) for name in ("add", "sub", "mul")],
    # MindSpore 2.10 PyNative refuses augassign_div of two many-element tensors (it asks for one element)
    op("mindspore.ops.augassign_div", lambda ms, x: ms.ops.augassign_div(x, 2.0), shapes=[V], grad=False,
       graph=False),
    op("mindspore.ops.augassign_floordiv", lambda ms, x: ms.ops.augassign_floordiv(x, 0.5), shapes=[V], grad=False,
       graph=False),
    op("mindspore.ops.augassign_mod", lambda ms, x: ms.ops.augassign_mod(x, 0.75), shapes=[V], grad=False,
       graph=False),
    op("mindspore.ops.switch", lambda ms, flag: ms.ops.switch(flag, 1, 2), shapes=[[Py(True)], [Py(False)]],
       grad=False, graph=False),
    # MindSpore 2.10 runs switch_layer only in a graph
    op("mindspore.ops.switch_layer", _graph(_switch_layer), grad=False, graph=False),
    op("mindspore.ops.is_tensor_bool_cond", lambda ms, x: ms.ops.is_tensor_bool_cond(x), shapes=[(1,)], grad=False,
       graph=False, errors=[([(2,)], {})]),
    # the Tensor's storage facts
    *[op(f"mindspore.Tensor.{name}", _m(name), shapes=[(2, 3, 4)], grad=False, graph=False)
      for name in ("stride", "strides", "storage_offset", "has_init", "init", "init_flag", "is_meta", "device",
                   "hooks")],
    op("mindspore.Tensor.data", lambda ms, x: x.data, shapes=[V], grad=False, graph=False),
    op("mindspore.Tensor.data_ptr", lambda ms, x: x.data_ptr() > 0, shapes=[V], grad=False, graph=False),
    op("mindspore.Tensor.data_sync", lambda ms, x: x.data_sync(True), shapes=[V], grad=False, graph=False),
]
