"""Internals specs: MindSpore's graph-internal functions over Python values (tuples, dicts, scalars,
strings), the scalar primitives, the debug primitives (Assert, TensorDump, CheckNumerics, gradient
hooks) and the small format/shape ops. Python-only specs are ``graph=False``; the names MindSpore runs
only while compiling a graph (PyNative raises) run inside a GRAPH_MODE Cell built by :func:`_graph`."""
from __future__ import annotations

import glob
import os
import tempfile

import numpy as np

from .core import Py, T, op

M23 = (2, 3)


def _f(name: str):
    """ops.<name>(*xs, **kw)"""
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


def _graph(fn):
    """``fn(ms, **kw)`` run as a GRAPH_MODE Cell's construct (the mode put back after): MindSpore runs
    these names only while compiling a graph."""
    def run(ms, *xs, **kw):
        class Net(ms.nn.Cell):
            def construct(self):
                return fn(ms, **kw)
        prev = ms.get_context("mode")
        ms.set_context(mode=ms.GRAPH_MODE)
        try:
            return Net()()
        finally:
            ms.set_context(mode=prev)
    return run


def _binary_in_graph(name: str):
    def fn(ms, a, b):
        return getattr(ms.ops, name)(a, b)
    return _graph(fn)


def _make_dict(ms, k, v):
    return ms.ops.make_dict(k, v)


def _dict_setitem(ms, d, k, v):
    return ms.ops.dict_setitem(d, k, v)


def _cast_to(ms, x, dtype):
    return ms.ops.ScalarCast()(x, getattr(ms, dtype))


def _scalar_cast(ms, x, dtype):
    return ms.ops.scalar_cast(x, getattr(ms, dtype))


def _dtype_to_enum(ms, dtype):
    return ms.ops.DtypeToEnum()("op", "arg", getattr(ms, dtype))


def _tensor_dump(ms, x, mode=None, functional=False):
    """Dump into a fresh directory and read the file back: (its name without the process's counter, values)."""
    with tempfile.TemporaryDirectory() as folder:
        target = os.path.join(folder, "sub", "t.npy")
        if functional:
            ms.ops.tensordump(target, x, *([mode] if mode else []))
        else:
            (ms.ops.TensorDump(mode) if mode else ms.ops.TensorDump())(target, x)
        files = glob.glob(os.path.join(folder, "sub", "*.npy"))
        name = os.path.basename(files[0]).rsplit("_", 1)[0]
        return name, np.load(files[0])


def _assert(ms, cond, x, summarize=3):
    ms.ops.Assert(summarize)(cond, [x])
    return x


def _hook(ms, x):
    hook = ms.ops.HookBackward(lambda grads: grads[0] * 5)
    return hook(x * 2) * 3


def _insert_gradient_of(ms, x):
    def clip_gradient(g):
        return ms.ops.clip_by_value(g, -0.5, 0.5)
    return ms.ops.InsertGradientOf(clip_gradient)(x * 2) * 3


def _triple(a):
    return a * 3


def _same(*args):
    return args[0]


def _morph(ms, x):
    return ms.ops.Morph(_triple, _same, _same)(x)


def _morph_in_graph(ms, x):
    """A GRAPH_MODE Cell calling a Morph (the mode put back after)."""
    class Net(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.morph = ms.ops.Morph(_triple, _same, _same)

        def construct(self, a):
            return self.morph(a) + 1
    prev = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        return Net()(x)
    finally:
        ms.set_context(mode=prev)


def _partial(ms, x, y):
    return ms.ops.Partial()(ms.ops.add, x)(y)


def _op_info_register(ms, x):
    wrapped = ms.ops.op_info_register({"op_name": "MyAbs", "imply_type": "TBE"})(lambda v: v + 1)
    return wrapped(x), wrapped.__name__


def _custom_info_register(ms, x):
    def fn(v):
        return v * 2
    wrapped = ms.ops.custom_info_register("a", {"b": 1})(fn)
    return wrapped(x), wrapped.__name__, str(wrapped.reg_info)


def _add_flags(ms, x):
    def fn(v):
        return v
    return str(sorted(ms.ops.add_flags(fn, a=True, b=False)._func_graph_flags.items())), x


def _prim_arg_register(ms, x):
    class MyPrim(ms.ops.Primitive):
        @ms.ops.prim_arg_register
        def __init__(self, alpha=2, beta=3):
            pass
    p = MyPrim(alpha=5)
    return p.name, p.alpha, p.beta, str(sorted((k, v) for k, v in p.attrs.items() if k in ("alpha", "beta")))


SCALARS = [
    ("scalar_add", [[Py(1), Py(2)], [Py(1), Py(2.5)]], []),
    ("scalar_sub", [[Py(1), Py(2)], [Py(1.5), Py(2)]], []),
    ("scalar_mul", [[Py(3), Py(2)], [Py(1), Py(2.5)]], []),
    ("scalar_div", [[Py(3), Py(2)], [Py(-7.5), Py(2)]], [[Py(1), Py(0)]]),
    ("scalar_floordiv", [[Py(-7), Py(2)], [Py(7.5), Py(2)]], [[Py(1), Py(0)]]),
    ("scalar_mod", [[Py(-7), Py(2)], [Py(7.5), Py(-2)]], [[Py(1), Py(0)]]),
    ("scalar_pow", [[Py(2), Py(3)], [Py(2), Py(-1)]], []),
    ("scalar_eq", [[Py(2), Py(2)], [Py(2), Py(2.5)]], []),
    ("scalar_gt", [[Py(2), Py(1)], [Py(1), Py(2.0)]], []),
    ("scalar_ge", [[Py(2), Py(2)]], []),
    ("scalar_lt", [[Py(1), Py(2.0)]], []),
    ("scalar_le", [[Py(3), Py(2)]], []),
    ("scalar_max", [[Py(2), Py(3)], [Py(2), Py(1.5)]], []),
    ("scalar_min", [[Py(2), Py(1.5)]], []),
    ("scalar_log", [[Py(2.0)], [Py(8)]], [[Py(0)]]),
    ("scalar_uadd", [[Py(2)], [Py(-1.5)]], []),
    ("scalar_usub", [[Py(2)], [Py(True)]], []),
]

SPECS = [
    op(f"mindspore.ops.{name}", _f(name), shapes=shapes, errors=[(e, {}) for e in errors], graph=False)
    for name, shapes, errors in SCALARS
] + [
    op("mindspore.ops.ScalarCast", _cast_to, shapes=[[Py(2.7)], [Py(-2.7)], [Py(2)], [Py(0)]],
       kwargs=[{"dtype": "int64"}, {"dtype": "float64"}, {"dtype": "bool_"}],
       errors=[([Py(2)], {"dtype": "int32"}), ([(2,)], {"dtype": "int64"}), ([Py("2")], {"dtype": "float64"})],
       graph=False),
    op("mindspore.ops.scalar_cast", _scalar_cast, shapes=[[Py(255.0)]], kwargs={"dtype": "int64"},
       errors=[([Py(1.5)], {"dtype": "float32"})], graph=False),
    op("mindspore.ops.DtypeToEnum", _dtype_to_enum, shapes=[[]],
       kwargs=[{"dtype": d} for d in ("float32", "bool_", "int8", "int64", "uint16", "float16", "float64",
                                      "bfloat16")],
       graph=False),
    # sequences and dicts
    op("mindspore.ops.tuple_len", _f("tuple_len"), shapes=[[Py((1, 2, 3))], [Py([1, 2])]], errors=[([Py(3)], {})],
       graph=False),
    op("mindspore.ops.list_len", _f("list_len"), shapes=[[Py([1, 2, 3])]], graph=False),
    op("mindspore.ops.make_tuple", _f("make_tuple"), shapes=[[Py(1), Py(2)], [], [(2,), Py(3)]], graph=False),
    op("mindspore.ops.make_list", _f("make_list"), shapes=[[Py(1), Py(2)]], graph=False),
    op("mindspore.ops.make_slice", _f("make_slice"), shapes=[[Py(1), Py(5), Py(2)], [Py(None), Py(5), Py(None)]],
       errors=[([Py(1), Py(5)], {})], graph=False),
    op("mindspore.ops.tuple_getitem", _f("tuple_getitem"), shapes=[[Py((1, 2, 3)), Py(1)], [Py((1, 2, 3)), Py(-1)],
                                                               [Py([4, 5]), Py(0)]],
       errors=[([Py((1, 2, 3)), Py(5)], {})], graph=False),
    op("mindspore.ops.list_getitem", _f("list_getitem"), shapes=[[Py([1, 2, 3]), Py(1)]],
       errors=[([Py([1, 2, 3]), Py(-4)], {})], graph=False),
    op("mindspore.ops.tuple_setitem", _f("tuple_setitem"), shapes=[[Py((1, 2, 3)), Py(1), Py(9)]],
       errors=[([Py((1, 2, 3)), Py(5), Py(0)], {})], graph=False),
    op("mindspore.ops.list_setitem", _f("list_setitem"), shapes=[[Py([1, 2, 3]), Py(-1), Py(9)]], graph=False),
    op("mindspore.ops.dict_getitem", _f("dict_getitem"), shapes=[[Py({"a": 1, "b": 2.5}), Py("b")]],
       errors=[([Py({"a": 1}), Py("b")], {})], graph=False),
    op("mindspore.ops.in_dict", _f("in_dict"), shapes=[[Py("a"), Py({"a": 1})], [Py("b"), Py({"a": 1})]], graph=False),
    op("mindspore.ops.not_in_dict", _f("not_in_dict"), shapes=[[Py("a"), Py({"a": 1})]], graph=False),
    op("mindspore.ops.tuple_equal", _f("tuple_equal"), shapes=[[Py((1, 2)), Py((1, 2))], [Py((1, 2)), Py((1, 3))],
                                                           [Py((1, 2)), Py((1, 2, 3))]], graph=False),
    op("mindspore.ops.list_equal", _f("list_equal"), shapes=[[Py([1, 2]), Py([1, 2])], [Py([1]), Py([2])]],
       graph=False),
    op("mindspore.ops.tuple_reversed", _f("tuple_reversed"), shapes=[[Py((1, 2, 3))], [Py(())]],
       errors=[([Py([1, 2])], {})], graph=False),
    op("mindspore.ops.tuple_div", _f("tuple_div"), shapes=[[Py((4, 6)), Py((2, 3))], [Py((6, -6)), Py((2, 3))]],
       errors=[([Py((7, 6)), Py((2, 3))], {}), ([Py((4, 6)), Py((2,))], {})], graph=False),
    op("mindspore.ops.shape_mul", _f("shape_mul"), shapes=[[Py((2, 3, 4))], [Py(())]], errors=[([Py([2, 3])], {})],
       graph=False),
    op("mindspore.ops.reduced_shape", _f("reduced_shape"),
       shapes=[[Py((2, 3, 4)), Py((1,))], [Py((2, 3, 4)), Py((-1, 0))], [Py((2, 3, 4)), Py(())],
               [Py((2, 3, 4)), Py(1)]],
       errors=[([Py((2, 3, 4)), Py((3,))], {})], graph=False),
    op("mindspore.ops.is_", _f("is_"), shapes=[[Py(None), Py(None)], [Py(1), Py(None)]], graph=False),
    op("mindspore.ops.is_not", _f("is_not"), shapes=[[Py(1), Py(None)], [Py(None), Py(None)]], graph=False),
    op("mindspore.ops.isconstant", _f("isconstant"), shapes=[[Py(3)], [(2,)]], graph=False),
    op("mindspore.ops.is_sequence_shape_unknown", _f("is_sequence_shape_unknown"), shapes=[[Py((1, 2))], [Py([1])]],
       errors=[([Py(1)], {})], graph=False),
    op("mindspore.ops.is_sequence_value_unknown", _f("is_sequence_value_unknown"), shapes=[[Py((1, 2))]],
       errors=[([Py(1)], {})], graph=False),
    # the names MindSpore runs only inside a graph
    op("mindspore.ops.make_dict", _graph(_make_dict), shapes=[[]], kwargs={"k": ("a", "b"), "v": (1, 2)},
       graph=False),
    op("mindspore.ops.dict_setitem", _graph(_dict_setitem), shapes=[[]], kwargs={"d": {"a": 1}, "k": "b", "v": 2},
       graph=False),
    op("mindspore.ops.scalar_ne", _binary_in_graph("scalar_ne"), shapes=[[]],
       kwargs=[{"a": 1, "b": 2}, {"a": 2, "b": 2.0}], graph=False),
    op("mindspore.ops.string_eq", _binary_in_graph("string_eq"), shapes=[[]],
       kwargs=[{"a": "ab", "b": "ab"}, {"a": "ab", "b": "b"}], graph=False),
    op("mindspore.ops.string_concat", _binary_in_graph("string_concat"), shapes=[[]], kwargs={"a": "ab", "b": "cd"},
       graph=False),
    op("mindspore.ops.bool_and", _binary_in_graph("bool_and"), shapes=[[]],
       kwargs=[{"a": True, "b": False}, {"a": True, "b": True}], graph=False),
    op("mindspore.ops.bool_or", _binary_in_graph("bool_or"), shapes=[[]], kwargs={"a": False, "b": True}, graph=False),
    op("mindspore.ops.bool_eq", _binary_in_graph("bool_eq"), shapes=[[]],
       kwargs=[{"a": True, "b": True}, {"a": True, "b": False}], graph=False),
    op("mindspore.ops.bool_not", _f("bool_not"), shapes=[[Py(True)], [Py(False)]], graph=False),
    # tensors, shapes, dtypes
    op("mindspore.ops.TensorToTuple", lambda ms, x: ms.ops.TensorToTuple()(x),
       shapes=[[T(values=[1.5, 2.5])], [T(values=[1, 2, 3], dtype="int64")], [M23], [Py(3)]],
       errors=[([T(values=3, dtype="int64")], {})], graph=False),
    op("mindspore.ops.tensor_range", _f("tensor_range"),
       shapes=[[T(values=0.0), T(values=1.0), T(values=0.25)], [T(values=5, dtype="int64"), T(values=0, dtype="int64"),
                                                                T(values=-2, dtype="int64")]],
       errors=[([T(values=0, dtype="int64"), T(values=5, dtype="int64"), T(values=0, dtype="int64")], {})],
       graph=False, grad=False),
    op("mindspore.ops.dyn_shape", _f("dyn_shape"), shapes=[M23, ()], errors=[([Py(3)], {})]),
    op("mindspore.ops.deepcopy", _f("deepcopy"), shapes=[M23], dtypes=("float32", "int32"), errors=[([Py(3)], {})]),
    op("mindspore.ops.eps", _f("eps"), shapes=[M23], dtypes=("float32", "float16", "float64"),
       errors=[([T((2,), "int32")], {})]),
    op("mindspore.ops.Eps", lambda ms, x: ms.ops.Eps()(x), shapes=[(3,)], dtypes=("float32", "float64"),
       errors=[([T((2,), "int32")], {}), ([Py(1.0)], {})]),
    op("mindspore.ops.padding", _f("padding"), shapes=[[(2, 1), Py(4)], [(3, 1), Py(1)], [(2, 2, 1)]],
       errors=[([(2, 2), Py(4)], {}), ([(2, 1), Py(0)], {})]),
    op("mindspore.ops.Padding", lambda ms, x, **kw: ms.ops.Padding(**kw)(x), shapes=[(2, 1)],
       kwargs=[{}, {"pad_dim_size": 3}], errors=[((2, 1), {"pad_dim_size": -1})]),
    op("mindspore.ops.IdentityN", lambda ms, *xs: ms.ops.IdentityN()(list(xs)), shapes=[[M23, T((2,), "int32")]],
       errors=[([Py(1), Py(2)], {})]),
    op("mindspore.ops.CheckNumerics", lambda ms, x: ms.ops.CheckNumerics()(x), shapes=[M23],
       errors=[([T(values=[1.0, np.nan])], {}), ([T(values=[1.0, -np.inf])], {}), ([T((2,), "int32")], {})],
       graph=False, grad=False),
    op("mindspore.ops.DataFormatDimMap", lambda ms, x, **kw: ms.ops.DataFormatDimMap(**kw)(x),
       shapes=[T(values=[-4, -3, -2, -1, 0, 1, 2, 3], dtype="int32"), T(values=[[0, 5], [1, 2]], dtype="int64")],
       kwargs=[{}, {"src_format": "NCHW", "dst_format": "NHWC"}],
       errors=[(T(values=[1.0]), {}), (T(values=[1], dtype="int32"), {"src_format": "ABCD"})]),
    op("mindspore.ops.DataFormatVecPermute", lambda ms, x, **kw: ms.ops.DataFormatVecPermute(**kw)(x),
       shapes=[T(values=[1, 2, 3, 4], dtype="int32"), T(values=[[1, 2], [3, 4], [5, 6], [7, 8]], dtype="int64")],
       kwargs=[{}, {"src_format": "NCHW", "dst_format": "NHWC"}],
       errors=[(T(values=[1, 2], dtype="int32"), {}), (T(values=[1.0, 2.0, 3.0, 4.0]), {})]),
    op("mindspore.ops.TransposeView", lambda ms, x, **kw: ms.ops.TransposeView()(x, **kw), shapes=[(2, 3, 4)],
       kwargs={"input_perm": (2, 0, 1)}),
    op("mindspore.ops.TransposeExtView", lambda ms, x, **kw: ms.ops.TransposeExtView()(x, **kw), shapes=[(2, 3, 4)],
       kwargs=[{"dim0": 0, "dim1": -1}, {"dim0": 1, "dim1": 1}]),
    op("mindspore.ops.SelectView", lambda ms, x, *args: ms.ops.SelectView()(x, *args),
       shapes=[[M23, Py(1), Py(0)], [M23, Py(1), Py(-1)]], errors=[([M23, Py(-1), Py(1)], {}), ([M23, Py(0), Py(2)], {})]),
    # state, closures, decorators
    op("mindspore.ops.UpdateState", lambda ms, *xs: ms.ops.UpdateState()(*xs), shapes=[[M23, M23], [Py(1), Py(2)]]),
    op("mindspore.ops.Partial", _partial, shapes=[[M23, M23]], graph=False),
    op("mindspore.ops.add_flags", _add_flags, shapes=[[Py(1)]], graph=False),
    op("mindspore.ops.op_info_register", _op_info_register, shapes=[[Py(1)]], errors=[], graph=False),
    op("mindspore.ops.custom_info_register", _custom_info_register, shapes=[[Py(2)]], graph=False),
    op("mindspore.ops.prim_arg_register", _prim_arg_register, shapes=[[Py(0)]], graph=False),
    # debugging
    op("mindspore.ops.Assert", _assert, shapes=[[T(values=True, dtype="bool"), M23],
                                                [T(values=[True], dtype="bool"), M23]],
       errors=[([T(values=False, dtype="bool"), M23], {}), ([T(values=1, dtype="int64"), M23], {}),
               ([T(values=[True, False], dtype="bool"), M23], {}), ([Py(True), M23], {"summarize": 1.5})],
       graph=False, grad=False),
    op("mindspore.ops.TensorDump", _tensor_dump, shapes=[M23, T((3,), "int32")], kwargs=[{}, {"mode": "in"}],
       errors=[(M23, {"mode": "both"})], graph=False, grad=False),
    op("mindspore.ops.tensordump", lambda ms, x, **kw: _tensor_dump(ms, x, functional=True, **kw), shapes=[M23],
       errors=[(M23, {"mode": "all"}), (M23, {"mode": "zz"})], graph=False, grad=False),
    op("mindspore.ops.HookBackward", _hook, shapes=[(3,)], graph=False),
    op("mindspore.ops.InsertGradientOf", _insert_gradient_of, shapes=[(3,)], graph=False),
    op("mindspore.ops.Morph", _morph_in_graph, shapes=[(3,)], graph=False, grad=False),
    op("mindspore.ops.Morph", _morph, errors=[((3,), {})], graph=False),
]
