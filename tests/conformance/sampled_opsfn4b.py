"""Specs of ``sampled_opsfn4b``: the sparse ``mindspore.ops`` functions (COOTensor, CSRTensor, RowTensor)
and the functional collectives served without samples until issue 21's round 4.

A sample builds its sparse inputs inside the call from dense parts (indices, values) and returns a sparse
result as its parts (indices/indptr, values, shape), so outputs compare as tensors. Functions whose
result's sparsity depends on index or value data (coalesce, coo_add, coo_concat, csr_add,
dense_to_sparse_*) run in PyNative only: the emulator refuses them while GRAPH_MODE captures
(sparse_func's module docstring says why). MindSpore 2.10 runs MakeRowTensor and the RowTensor getters
in graphs only, so those samples run inside ``ms.jit``.

A collective needs a communicator MindSpore 2.10 CPU does not have (its all_reduce aborts the process),
so its samples are the argument checks MindSpore makes first (the emulator's runs are in
tests/test_comm*.py)."""
from __future__ import annotations

from .core import Py, T, op, ops_call

COO_IDX = T(values=[[0, 1], [1, 2], [2, 0]], dtype="int32")
COO_SHAPE = (3, 4)
CSR_INDPTR = T(values=[0, 1, 2, 4], dtype="int32")
CSR_IDX = T(values=[1, 2, 0, 3], dtype="int32")
CSR_SHAPE = (3, 4)
POS3 = T((3,), low=0.1, high=0.9)
POS4 = T((4,), low=0.1, high=0.9)

# the element-wise functions, and the value range each is sampled on (default: [0.1, 0.9))
UNARY = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "exp", "expm1", "floor",
         "inv", "isfinite", "isinf", "isnan", "log", "log1p", "neg", "relu", "relu6", "round", "sigmoid", "sin",
         "sinh", "softsign", "sqrt", "square", "tan", "tanh")
RANGES = {"acosh": (1.1, 2.0), "neg": (-1.0, 1.0), "relu": (-1.0, 1.0), "relu6": (-1.0, 7.0), "round": (-2.0, 2.0),
          "ceil": (-2.0, 2.0), "floor": (-2.0, 2.0), "abs": (-1.0, 1.0)}


def parts(ms, t):
    """A sparse tensor's parts (CSR: indptr, indices, values, shape; COO: indices, values, shape; RowTensor:
    indices, values, dense_shape); a dense tensor or tuple as it is."""
    if isinstance(t, ms.CSRTensor):
        return t.indptr, t.indices, t.values, t.shape
    if isinstance(t, ms.COOTensor):
        return t.indices, t.values, t.shape
    if hasattr(t, "dense_shape"):
        return t.indices, t.values, t.dense_shape
    return t


def coo(ms, indices, values, shape=COO_SHAPE):
    return ms.COOTensor(indices, values, shape)


def csr(ms, indptr, indices, values, shape=CSR_SHAPE):
    return ms.CSRTensor(indptr, indices, values, shape)


def _coo_fn(name: str):
    """``ops.<name>(COOTensor(indices, values), *rest)`` as its parts."""
    return lambda ms, i, v, *rest, **kw: parts(ms, getattr(ms.ops, name)(coo(ms, i, v), *rest, **kw))


def _csr_fn(name: str):
    """``ops.<name>(CSRTensor(indptr, indices, values), *rest)`` as its parts."""
    return lambda ms, p, i, v, *rest, **kw: parts(ms, getattr(ms.ops, name)(csr(ms, p, i, v), *rest, **kw))


def _unary(kind: str, name: str):
    low, high = RANGES.get(name, (0.1, 0.9))
    if kind == "coo":
        return op(f"mindspore.ops.coo_{name}", _coo_fn(f"coo_{name}"), shapes=[[COO_IDX, T((3,), low=low, high=high)]],
                  grad=False)
    return op(f"mindspore.ops.csr_{name}", _csr_fn(f"csr_{name}"),
              shapes=[[CSR_INDPTR, CSR_IDX, T((4,), low=low, high=high)]], grad=False)


def _coo_add(ms, i1, v1, i2, v2, thresh):
    return parts(ms, ms.ops.coo_add(coo(ms, i1, v1), coo(ms, i2, v2), thresh))


def _coo_concat(ms, i1, v1, i2, v2, **kw):
    return parts(ms, ms.ops.coo_concat((coo(ms, i1, v1), coo(ms, i2, v2)), **kw))


def _csr_add(ms, p, i, v1, v2, alpha, beta):
    return parts(ms, ms.ops.csr_add(csr(ms, p, i, v1), csr(ms, p, i, v2), alpha, beta))


def _make(name: str):
    return lambda ms, *xs: parts(ms, getattr(ms.ops, name)(*xs))


def _in_graph(name: str):
    """``ops.<name>`` of a RowTensor made of (indices, values), run by ``ms.jit``: MindSpore 2.10 runs
    MakeRowTensor and the RowTensor getters in graphs only."""
    def call(ms, indices, values):
        def run(i, v):
            return parts(ms, getattr(ms.ops, name)(ms.ops.make_row_tensor_inner(i, v, (4, 3))))
        return ms.jit(run)(indices, values)
    return call


def _made_in_graph(ms, *xs):
    """``make_row_tensor`` / ``make_coo_tensor`` / ``make_csr_tensor`` run by ``ms.jit``, as their parts."""
    def run(i, v, ci, cv, p, j, w):
        return (parts(ms, ms.ops.make_row_tensor(i, v, (4, 3))), parts(ms, ms.ops.make_coo_tensor(ci, cv, COO_SHAPE)),
                parts(ms, ms.ops.make_csr_tensor(p, j, w, CSR_SHAPE)))
    return ms.jit(run)(*xs)


def _prim_attrs(ms, k):
    """A Primitive whose __init__ is decorated: its arguments become attributes and attrs entries."""
    class Scaled(ms.ops.Primitive):
        @ms.ops.prim_attr_register
        def __init__(self, k=3, mode="a"):
            pass
    prim = Scaled(k)
    return prim.k, prim.attrs["k"], prim.attrs["mode"], prim.name


X = T((2, 3))
BAD = Py("a")
GROUP = {"group": 1}
COMM_ERRORS = [
    ("all_reduce", [X], {"op": 1}), ("all_gather", [Py([]), BAD], {}), ("all_gather_into_tensor", [X, BAD], {}),
    ("all_gather_into_tensor_uneven", [X, BAD], {}), ("all_gather_object", [Py([]), Py(1)], GROUP),
    ("all_to_all", [Py([]), BAD], {}), ("all_to_all_single", [X, BAD], {}), ("all_to_all_v_c", [X, BAD, Py([1])], {}),
    ("barrier", [], GROUP), ("batch_isend_irecv", [BAD], {}), ("broadcast", [BAD, Py(0)], {}),
    ("broadcast_object_list", [Py([1]), Py(0)], GROUP), ("destroy_process_group", [], GROUP),
    ("gather_into_tensor", [X, BAD], {}), ("gather_object", [Py(1), Py(None), Py(0)], GROUP),
    ("get_backend", [], GROUP), ("get_global_rank", [Py("g"), BAD], {}), ("get_group_rank", [Py("g"), BAD], {}),
    ("get_process_group_ranks", [], GROUP), ("get_rank", [], GROUP), ("get_world_size", [], GROUP),
    ("init_process_group", [], {"backend": "abc"}), ("irecv", [BAD, Py(0)], {}), ("isend", [BAD, Py(1)], {}),
    ("new_group", [], {"ranks": "a"}), ("recv", [BAD, Py(0)], {}), ("recv_object_list", [Py([1]), Py(0)], GROUP),
    ("reduce", [X, Py(0)], {"op": 1}), ("reduce_scatter", [X, BAD], {}), ("reduce_scatter_tensor", [X, BAD], {}),
    ("reduce_scatter_tensor_uneven", [X, BAD], {}), ("scatter_object_list", [Py([None]), Py([1]), Py(0)], GROUP),
    ("scatter_tensor", [X, BAD], {}), ("send", [BAD, Py(1)], {}), ("send_object_list", [Py([1]), Py(1)], GROUP),
    ("set_comm_ops_inplace", [Py(1)], {}),
]
I64 = dict(dtype="int64")
COO_IDX64 = T(values=[[0, 1], [1, 2], [2, 0]], **I64)      # SparseAdd and SparseConcat take int64 indices
ROW_IDX = T(values=[0, 2], dtype="int32")

SPECS = [
    *[_unary("coo", name) for name in UNARY],
    *[_unary("csr", name) for name in UNARY],
    op("mindspore.ops.coo2csr", lambda ms, x, *rest: ms.ops.coo2csr(x, *rest),
       shapes=[[T(values=[0, 0, 1, 2], dtype="int32"), Py(4)]], grad=False),
    op("mindspore.ops.csr2coo", lambda ms, x, *rest: ms.ops.csr2coo(x, *rest), shapes=[[CSR_INDPTR, Py(4)]],
       grad=False),
    op("mindspore.ops.coo_add", _coo_add, shapes=[[COO_IDX64, POS3, T(values=[[0, 1], [2, 3]], **I64),
                                                   T((2,), low=0.1, high=0.9), T(values=0.0)]],
       grad=False, graph=False),
    op("mindspore.ops.coo_concat", _coo_concat, shapes=[[COO_IDX64, POS3, COO_IDX64, POS3]],
       kwargs=[{}, {"concat_dim": 1}], grad=False, graph=False),
    *[op(f"mindspore.ops.coo_tensor_get_{what}", _coo_fn(f"coo_tensor_get_{what}"), shapes=[[COO_IDX, POS3]],
         grad=False) for what in ("dense_shape", "indices", "values")],
    op("mindspore.ops.csr_add", _csr_add,
       shapes=[[CSR_INDPTR, CSR_IDX, POS4, POS4, T(values=[1.0]), T(values=[2.0])]], grad=False, graph=False),
    op("mindspore.ops.csr_div", _csr_fn("csr_div"), shapes=[[CSR_INDPTR, CSR_IDX, POS4, T((3, 1), low=0.5, high=2)]],
       grad=False),
    op("mindspore.ops.csr_mul", _csr_fn("csr_mul"), shapes=[[CSR_INDPTR, CSR_IDX, POS4, (3, 4)]], grad=False),
    op("mindspore.ops.csr_gather", lambda ms, *xs: ms.ops.csr_gather(*xs, CSR_SHAPE),
       shapes=[[CSR_INDPTR, CSR_IDX, (3, 4, 2)]], grad=False),
    # no SparseMatrixSparseMatMul kernel on MindSpore CPU: the check of its operands' kinds
    op("mindspore.ops.csr_mm", _csr_fn("csr_mm"), errors=[([CSR_INDPTR, CSR_IDX, POS4, (4, 2)], {})]),
    op("mindspore.ops.csr_mv", _csr_fn("csr_mv"), shapes=[[CSR_INDPTR, CSR_IDX, POS4, (4, 1)]], grad=False),
    op("mindspore.ops.csr_reduce_sum", _csr_fn("csr_reduce_sum"), shapes=[[CSR_INDPTR, CSR_IDX, POS4, Py(1)]],
       grad=False),
    op("mindspore.ops.csr_softmax", lambda ms, p, i, v: parts(ms, ms.ops.csr_softmax(csr(ms, p, i, v), ms.float32)),
       shapes=[[CSR_INDPTR, CSR_IDX, POS4]], grad=False),
    *[op(f"mindspore.ops.csr_tensor_get_{what}", _csr_fn(f"csr_tensor_get_{what}"),
         shapes=[[CSR_INDPTR, CSR_IDX, POS4]], grad=False) for what in ("dense_shape", "indices", "indptr", "values")],
    op("mindspore.ops.csr_to_coo", _csr_fn("csr_to_coo"), shapes=[[CSR_INDPTR, CSR_IDX, POS4]], grad=False),
    op("mindspore.ops.csr_to_dense", _csr_fn("csr_to_dense"), shapes=[[CSR_INDPTR, CSR_IDX, POS4]], grad=False),
    op("mindspore.ops.dense_to_sparse_coo", _make("dense_to_sparse_coo"),
       shapes=[[T(values=[[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])]], grad=False, graph=False),
    op("mindspore.ops.dense_to_sparse_csr", _make("dense_to_sparse_csr"),
       shapes=[[T(values=[[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])]], grad=False, graph=False),
    op("mindspore.ops.coalesce", lambda ms, *xs: ms.ops.coalesce(*xs),
       shapes=[[T(values=[[0, 1, 0], [2, 0, 2]], **I64), POS3, T(values=[3, 4], **I64)]], grad=False, graph=False),
    # MindSpore CPU has no MakeCOOTensor/MakeCSRTensor/MakeRowTensor kernel (they build graph values): their
    # samples are the argument checks it makes first
    op("mindspore.ops.make_coo_tensor", lambda ms, *xs: ms.ops.make_coo_tensor(*xs),
       errors=[([COO_IDX, POS3, Py("a")], {})]),
    op("mindspore.ops.make_sparse_tensor", lambda ms, *xs: ms.ops.make_sparse_tensor(*xs),
       errors=[([COO_IDX, POS3, Py(5)], {})]),
    op("mindspore.ops.make_csr_tensor", lambda ms, *xs: ms.ops.make_csr_tensor(*xs),
       errors=[([CSR_INDPTR, CSR_IDX, POS4, Py("a")], {})]),
    op("mindspore.ops.make_row_tensor", lambda ms, *xs: ms.ops.make_row_tensor(*xs),
       errors=[([ROW_IDX, (2, 3), Py("a")], {})]),
    op("mindspore.ops.make_row_tensor_inner", lambda ms, *xs: ms.ops.make_row_tensor_inner(*xs),
       errors=[([ROW_IDX, (2, 3), Py((4, 3, 2, 1))], {})]),
    *[op(f"mindspore.ops.row_tensor_get_{what}", _in_graph(f"row_tensor_get_{what}"), shapes=[[ROW_IDX, (2, 3)]],
         grad=False, graph=False) for what in ("dense_shape", "indices", "values")],
    # no RowTensorAdd kernel on MindSpore CPU: the check of its first operand's kind
    op("mindspore.ops.row_tensor_add", lambda ms, *xs: ms.ops.row_tensor_add(*xs), errors=[([(2, 3), (2, 3)], {})]),
    op("mindspore.ops.make_row_tensor", _made_in_graph, grad=False, graph=False,
       shapes=[[ROW_IDX, (2, 3), COO_IDX, POS3, CSR_INDPTR, CSR_IDX, POS4]]),
    # the collectives: MindSpore's argument checks (a tensor where a tensor goes, a str group, an int rank)
    *[op(f"mindspore.ops.{name}", ops_call(name), graph=False, errors=[(args, kw)]) for name, args, kw in COMM_ERRORS],
    op("mindspore.ops.is_available", lambda ms: ms.ops.is_available(), shapes=[[]], grad=False, graph=False),
    op("mindspore.ops.prim_attr_register", _prim_attrs, shapes=[[Py(5)]], grad=False, graph=False),
]
