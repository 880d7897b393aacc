"""``mindspore.Tensor`` method and property specs."""
from __future__ import annotations

from .core import Py, T, op

F = ("float32", "float16")
FI = ("float32", "float16", "int32")


def _m(name: str):
    """x.<name>(*args, **kw)"""
    return lambda ms, x, *args, **kw: getattr(x, name)(*args, **kw)


def _p(name: str):
    """x.<name> (a property)"""
    return lambda ms, x: getattr(x, name)


R = (2, 3, 4)
SPECS = [
    op("mindspore.Tensor.reshape", _m("reshape"), shapes=[[R, Py((6, 4))], [R, Py((-1,))], [R, Py(4), Py(6)]], dtypes=FI),
    op("mindspore.Tensor.view", _m("view"), shapes=[[R, Py((6, 4))], [R, Py(4), Py(-1)]], dtypes=F),
    op("mindspore.Tensor.astype", lambda ms, x, dtype: x.astype(getattr(ms, dtype)), shapes=[(2, 3)], dtypes=FI,
       kwargs=[{"dtype": "float32"}, {"dtype": "float16"}, {"dtype": "int32"}, {"dtype": "bool"}]),
    op("mindspore.Tensor.transpose", _m("transpose"), shapes=[[R], [R, Py(2), Py(0), Py(1)], [R, Py((1, 0, 2))]], dtypes=FI),
    op("mindspore.Tensor.sum", _m("sum"), shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True}]),
    op("mindspore.Tensor.mean", _m("mean"), shapes=[R], dtypes=F, kwargs=[{}, {"axis": 1}, {"axis": -1, "keep_dims": True}]),
    op("mindspore.Tensor.max", _m("max"), shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}, {"axis": -1, "keepdims": True}]),
    op("mindspore.Tensor.min", _m("min"), shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}]),
    op("mindspore.Tensor.argmax", _m("argmax"), shapes=[R], dtypes=FI, kwargs=[{}, {"axis": 1}], grad=False),
    op("mindspore.Tensor.argmin", _m("argmin"), shapes=[R], dtypes=F, kwargs=[{}, {"axis": -1}], grad=False),
    op("mindspore.Tensor.sqrt", _m("sqrt"), shapes=[T((2, 3), low=0.1, high=3)], dtypes=F),
    op("mindspore.Tensor.log", _m("log"), shapes=[T((2, 3), low=0.1, high=3)], dtypes=F),
    op("mindspore.Tensor.exp", _m("exp"), shapes=[(2, 3)], dtypes=F),
    op("mindspore.Tensor.abs", _m("abs"), shapes=[(2, 3)], dtypes=FI),
    op("mindspore.Tensor.square", _m("square"), shapes=[(2, 3)], dtypes=FI),
    op("mindspore.Tensor.expand_dims", _m("expand_dims"), shapes=[[(2, 3), Py(0)], [(2, 3), Py(-1)]], dtypes=FI),
    op("mindspore.Tensor.squeeze", _m("squeeze"), shapes=[[(2, 1, 3, 1)], [(2, 1, 3, 1), Py(1)]], dtypes=FI),
    op("mindspore.Tensor.flatten", _m("flatten"), shapes=[R], dtypes=F, kwargs=[{}, {"start_dim": 1}]),
    op("mindspore.Tensor.matmul", _m("matmul"), shapes=[[(2, 3), (3, 4)], [(2, 2, 3), (3, 2)]], dtypes=F),
    op("mindspore.Tensor.tolist", _m("tolist"), shapes=[(2, 3), ()], dtypes=("float32", "int32"), grad=False, graph=False),
    op("mindspore.Tensor.item", _m("item"), shapes=[(), (1, 1)], dtypes=("float32", "int32"), grad=False, graph=False),
    op("mindspore.Tensor.asnumpy", _m("asnumpy"), shapes=[(2, 3), ()], dtypes=("float32", "float16", "int32", "bool"),
       grad=False, graph=False),
    op("mindspore.Tensor.from_numpy", lambda ms, x: ms.Tensor.from_numpy(x.asnumpy()), shapes=[(2, 3)],
       dtypes=("float32", "int32"), grad=False, graph=False),
]
for prop in ("dtype", "shape", "ndim", "size", "itemsize", "nbytes"):
    SPECS.append(op(f"mindspore.Tensor.{prop}", _p(prop), shapes=[(2, 3), (), (0, 4)], dtypes=("float32", "float16", "int32"),
                    grad=False, graph=False))

# elementwise and reduction methods, most used first (clone, repeat and select are left out: MindSpore
# 2.10 CPU has no kernel for them, so there is nothing to record)
POS = T((2, 3), low=0.2, high=3.0)
SPECS += [
    op("mindspore.Tensor.split", _m("split"), shapes=[[(4, 6), Py(2)], [(4, 6), Py([1, 3])]], dtypes=F,
       kwargs=[{}, {"axis": 0}]),
    op("mindspore.Tensor.copy", _m("copy"), shapes=[(2, 3)], dtypes=FI),
    op("mindspore.Tensor.add", _m("add"), shapes=[[(2, 3), (2, 3)], [(2, 1), (3,)], [(2, 3), Py(2.0)]], dtypes=FI),
    op("mindspore.Tensor.sub", _m("sub"), shapes=[[(2, 3), (2, 3)], [(2, 3), Py(1)]], dtypes=FI),
    op("mindspore.Tensor.mul", _m("mul"), shapes=[[(2, 3), (2, 3)], [(2, 1), (3,)]], dtypes=FI),
    op("mindspore.Tensor.multiply", _m("multiply"), shapes=[[(2, 3), (2, 3)]], dtypes=F),
    op("mindspore.Tensor.div", _m("div"), shapes=[[(2, 3), POS], [(2, 3), Py(4.0)]], dtypes=F),
    op("mindspore.Tensor.pow", _m("pow"), shapes=[[POS, (2, 3)], [POS, Py(2)]], dtypes=F),
    op("mindspore.Tensor.maximum", _m("maximum"), shapes=[[(2, 3), (2, 3)], [(2, 1), (3,)]], dtypes=FI),
    op("mindspore.Tensor.minimum", _m("minimum"), shapes=[[(2, 3), (2, 3)]], dtypes=FI),
    op("mindspore.Tensor.clip", _m("clip"), shapes=[[(2, 3), Py(-0.5), Py(0.5)]], dtypes=F),
    op("mindspore.Tensor.tile", _m("tile"), shapes=[[(2, 3), Py((2, 1))], [(3,), Py((2, 2))]], dtypes=FI),
    op("mindspore.Tensor.cos", _m("cos"), shapes=[(2, 3)], dtypes=F),
    op("mindspore.Tensor.sin", _m("sin"), shapes=[(2, 3)], dtypes=F),
    op("mindspore.Tensor.tanh", _m("tanh"), shapes=[(2, 3)], dtypes=F),
    op("mindspore.Tensor.sigmoid", _m("sigmoid"), shapes=[(2, 3)], dtypes=F),
    op("mindspore.Tensor.ceil", _m("ceil"), shapes=[(2, 3)], dtypes=F),
    op("mindspore.Tensor.floor", _m("floor"), shapes=[(2, 3)], dtypes=F),
    op("mindspore.Tensor.round", _m("round"), shapes=[T((2, 3), values=[[0.5, 1.5, 2.5], [-0.5, -1.7, 2.2]])], dtypes=F),
    op("mindspore.Tensor.neg", _m("neg"), shapes=[(2, 3)], dtypes=FI),
    op("mindspore.Tensor.softmax", _m("softmax"), shapes=[[(2, 3), Py(-1)], [(2, 3), Py(0)]], dtypes=F),
    op("mindspore.Tensor.equal", _m("equal"), shapes=[[T((2, 3), low=-2, high=2), T((2, 3), low=-2, high=2)]],
       dtypes=("int32", "float32"), grad=False),
    op("mindspore.Tensor.not_equal", _m("not_equal"), shapes=[[T((2, 3), low=-2, high=2), T((2, 3), low=-2, high=2)]],
       dtypes=("int32",), grad=False),
    op("mindspore.Tensor.greater", _m("greater"), shapes=[[(2, 3), (2, 3)], [(2, 3), Py(0.0)]], grad=False),
    op("mindspore.Tensor.less", _m("less"), shapes=[[(2, 3), (2, 3)]], dtypes=FI, grad=False),
    op("mindspore.Tensor.less_equal", _m("less_equal"), shapes=[[T((2, 3), low=-2, high=2), T((2, 3), low=-2, high=2)]],
       dtypes=("int32",), grad=False),
    op("mindspore.Tensor.logical_and", _m("logical_and"), shapes=[[(2, 3), (2, 3)]], dtypes=("bool",), grad=False),
    op("mindspore.Tensor.logical_not", _m("logical_not"), shapes=[(2, 3)], dtypes=("bool",), grad=False),
    op("mindspore.Tensor.where", lambda ms, x, c, y: x.where(c, y), shapes=[[(2, 3), T((2, 3), "bool"), (2, 3)]], dtypes=F),
    op("mindspore.Tensor.sort", _m("sort"), shapes=[(3, 4)], dtypes=F, kwargs=[{}, {"axis": 0, "descending": True}]),
    op("mindspore.Tensor.argsort", _m("argsort"), shapes=[(3, 4)], dtypes=F, kwargs=[{}, {"axis": 0, "descending": True}],
       grad=False),
    op("mindspore.Tensor.topk", _m("topk"), shapes=[[(3, 4), Py(2)]], dtypes=F),
    op("mindspore.Tensor.norm", _m("norm"), shapes=[(2, 3)], dtypes=("float32",), kwargs=[{}, {"dim": 1}]),
    op("mindspore.Tensor.gather", lambda ms, x, i, axis: x.gather(i, axis), shapes=[[(3, 4), T((2,), dtype="int32", low=0, high=3)]],
       dtypes=F, kwargs=[{"axis": 0}, {"axis": 1}]),
    op("mindspore.Tensor.any", _m("any"), shapes=[(2, 3)], dtypes=("bool",), kwargs=[{}, {"axis": 1}], grad=False),
    op("mindspore.Tensor.all", _m("all"), shapes=[(2, 3)], dtypes=("bool",), kwargs=[{}, {"axis": 0}], grad=False),
    op("mindspore.Tensor.flip", _m("flip"), shapes=[[(2, 3), Py((0,))], [(2, 3), Py((0, 1))]], dtypes=FI),
    op("mindspore.Tensor.broadcast_to", _m("broadcast_to"), shapes=[[(1, 3), Py((2, 3))]], dtypes=FI),
    op("mindspore.Tensor.expand_as", _m("expand_as"), shapes=[[(1, 3), (2, 3)]], dtypes=F, grad=False),
    op("mindspore.Tensor.cumsum", _m("cumsum"), shapes=[(2, 3)], dtypes=FI, kwargs=[{"axis": 0}, {"axis": 1}]),
    op("mindspore.Tensor.unsqueeze", _m("unsqueeze"), shapes=[[(2, 3), Py(0)], [(2, 3), Py(2)]], dtypes=F),
    op("mindspore.Tensor.prod", _m("prod"), shapes=[(2, 3)], dtypes=F, kwargs=[{}, {"dim": 1}]),
    op("mindspore.Tensor.std", _m("std"), shapes=[(3, 4)], kwargs=[{}, {"axis": 1}]),
    op("mindspore.Tensor.var", _m("var"), shapes=[(3, 4)], kwargs=[{}, {"axis": 0}]),
    op("mindspore.Tensor.diag", _m("diag"), shapes=[(3,)], dtypes=FI),
    op("mindspore.Tensor.swapaxes", _m("swapaxes"), shapes=[[(2, 3, 4), Py(0), Py(2)]], dtypes=F),
    op("mindspore.Tensor.permute", _m("permute"), shapes=[[(2, 3, 4), Py(2), Py(0), Py(1)]], dtypes=F),
    op("mindspore.Tensor.isnan", _m("isnan"), shapes=[T((4,), values=[1.0, float("nan"), float("inf"), 0.0])], grad=False),
    op("mindspore.Tensor.isinf", _m("isinf"), shapes=[T((4,), values=[1.0, float("nan"), float("-inf"), 0.0])], grad=False),
    op("mindspore.Tensor.tril", _m("tril"), shapes=[(3, 4)], dtypes=F, kwargs=[{}, {"diagonal": 1}]),
    op("mindspore.Tensor.triu", _m("triu"), shapes=[(3, 4)], dtypes=F, kwargs=[{}, {"diagonal": -1}]),
    op("mindspore.Tensor.ravel", _m("ravel"), shapes=[(2, 3)], dtypes=F),
    op("mindspore.Tensor.log10", _m("log10"), shapes=[POS], dtypes=F),
    op("mindspore.Tensor.log2", _m("log2"), shapes=[POS], dtypes=F),
    op("mindspore.Tensor.sign", _m("sign"), shapes=[(2, 3)], dtypes=FI),
    op("mindspore.Tensor.amax", _m("amax"), shapes=[(2, 3)], dtypes=F, kwargs=[{}, {"axis": 1}]),
    op("mindspore.Tensor.amin", _m("amin"), shapes=[(2, 3)], dtypes=F, kwargs=[{}, {"axis": 1}]),
    op("mindspore.Tensor.float", _m("float"), shapes=[(2, 3)], dtypes=("int32", "float16")),
    op("mindspore.Tensor.half", _m("half"), shapes=[(2, 3)], dtypes=("float32", "int32")),
    op("mindspore.Tensor.int", _m("int"), shapes=[(2, 3)], dtypes=("float32",), grad=False),
    op("mindspore.Tensor.t", _m("t"), shapes=[(2, 3)], dtypes=F),
    op("mindspore.Tensor.bmm", _m("bmm"), shapes=[[(2, 2, 3), (2, 3, 4)]], dtypes=F),
    op("mindspore.Tensor.clamp", _m("clamp"), shapes=[(2, 3)], dtypes=F, kwargs=[{"min": -0.5, "max": 0.5}]),
    op("mindspore.Tensor.rsqrt", _m("rsqrt"), shapes=[POS], dtypes=F),
    op("mindspore.Tensor.reciprocal", _m("reciprocal"), shapes=[POS], dtypes=F),
    op("mindspore.Tensor.numel", _m("numel"), shapes=[(2, 3)], grad=False, graph=False),
    op("mindspore.Tensor.dim", _m("dim"), shapes=[(2, 3)], grad=False, graph=False),
    op("mindspore.Tensor.numpy", _m("numpy"), shapes=[(2, 3)], dtypes=("float32", "int32"), grad=False, graph=False),
]
SPECS += [
    op("mindspore.Tensor.dot", _m("dot"), shapes=[[(2, 3), (3, 4)]]),
    op("mindspore.Tensor.expand", _m("expand"), shapes=[[(1, 3), T((2,), values=[2, 3], dtype="int32")]], dtypes=F),
    op("mindspore.Tensor.to", lambda ms, x, dtype: x.to(getattr(ms, dtype)), shapes=[(2, 3)],
       kwargs=[{"dtype": "float16"}, {"dtype": "int32"}]),
    op("mindspore.Tensor.nonzero", _m("nonzero"), shapes=[T((2, 3), values=[[0, 1, 0], [2, 0, 3]], dtype="int32")], grad=False,
       graph=False),
    op("mindspore.Tensor.resize", _m("resize"), shapes=[[(2, 3), Py(3), Py(2)], [(2, 3), Py((4, 2))]], grad=False),
]
