"""Array specs, round 2: rolls and rotations, stacking, index_add/index_fill/index_put, in-place row
updates, masked/slice/diagonal scatters, diagonals and triangles, and the Tensor methods and mint
functions they bring (float32 first: every (op, dtype) is a cold kernel build in CI)."""
from __future__ import annotations

import numpy as np

from .core import Py, T, op

F = ("float32", "float16")


def _no_cpu(oracle: str, kernel: str) -> str:
    """A spec's note: which oracle answered, and the kernel MindSpore 2.10 CPU lacks."""
    return f"oracle: {oracle} ({kernel} has no CPU kernel in MindSpore 2.10)"


def _roll_oracle(ms, x, shifts, dims=None):
    """np.roll's index order gathered from x with CPU ops, axis by axis (dims None: the flattened x, its
    shape restored), so the gradient is MindSpore's Gather's."""
    if dims is None:
        n = int(np.prod(x.shape))
        order = np.roll(np.arange(n), shifts if isinstance(shifts, int) else tuple(shifts)).astype(np.int32)
        return ms.ops.gather(x.reshape(-1), ms.Tensor(order), 0).reshape(x.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    for s, a in zip(shifts, dims):
        x = ms.ops.gather(x, ms.Tensor(np.roll(np.arange(x.shape[a]), s).astype(np.int32)), a)
    return x


def _take_oracle(ms, x, index):
    """take: the flattened input gathered at the index, a negative index counting from the end."""
    n = int(np.prod(x.shape))
    return ms.ops.gather(x.reshape(-1), ms.Tensor(index.asnumpy() % n), 0)


ROLL_NOTE = _no_cpu("np.roll's index order gathered with ops.gather", "Roll")
TAKE_NOTE = _no_cpu("ops.gather of the flattened input", "Take")


def _f(name: str):
    """ops.<name>(*xs, **kw)"""
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


def _m(name: str):
    """x.<name>(*args, **kw)"""
    return lambda ms, x, *args, **kw: getattr(x, name)(*args, **kw)


def _mint(name: str):
    return lambda ms, *xs, **kw: getattr(ms.mint, name)(*xs, **kw)


def _list(fn):
    """A function of a list of tensors, called with its inputs as one list."""
    return lambda ms, *xs, **kw: fn(ms)(list(xs), **kw)


def _param(name: str):
    """ops.<name>(Parameter(x), *rest): the op updates its Parameter in place."""
    return lambda ms, x, *xs, **kw: getattr(ms.ops, name)(ms.Parameter(x, name="x"), *xs, **kw)


def IDX(values):
    return T(values=values, dtype="int32")


M23 = (2, 3)
# ops.fold with its output_size as MindSpore takes it, an int32 Tensor
_FOLD = lambda ms, x, **kw: ms.ops.fold(x, ms.Tensor(kw.pop("size"), ms.int32), **kw)  # noqa: E731
SPECS = [
    # rolls, rotations, flips. MindSpore 2.10 CPU lacks the kernels of Roll, Take, SplitV and the in-place
    # Tensor methods (Ascend only): those specs carry an oracle (a CPU equivalent; see each note)
    op("mindspore.ops.roll", _f("roll"), shapes=[[M23, Py(1)], [M23, Py((1, 2)), Py((0, 1))]], oracle=_roll_oracle,
       note=ROLL_NOTE),
    op("mindspore.ops.Roll", lambda ms, x, **kw: ms.ops.Roll(**kw)(x), shapes=[M23], kwargs={"shifts": 1, "dims": 0},
       oracle=_roll_oracle, note=ROLL_NOTE),
    op("mindspore.Tensor.roll", _m("roll"), shapes=[[M23, Py(-1), Py(1)]], oracle=_roll_oracle, note=ROLL_NOTE),
    op("mindspore.mint.roll", _mint("roll"), shapes=[[M23, Py(2)]], oracle=_roll_oracle, note=ROLL_NOTE),
    op("mindspore.ops.rot90", _f("rot90"), shapes=[[M23, Py(1), Py((0, 1))], [(2, 3, 2), Py(3), Py((2, 0))],
                                                   [M23, Py(2), Py((1, 0))]],
       errors=[([M23, Py(1), Py((0,))], {}), ([M23, Py(1), Py((0, 0))], {})]),
    op("mindspore.Tensor.rot90", _m("rot90"), shapes=[[M23, Py(-1), Py((0, 1))]]),
    op("mindspore.ops.fliplr", _f("fliplr"), shapes=[M23, (2, 3, 2)], dtypes=("float32", "int32"), errors=[((3,), {})]),
    op("mindspore.ops.flipud", _f("flipud"), shapes=[M23, (4,)], errors=[((), {})]),
    op("mindspore.Tensor.fliplr", _m("fliplr"), shapes=[M23]),
    op("mindspore.Tensor.flipud", _m("flipud"), shapes=[M23]),
    # gathers
    op("mindspore.ops.take", _f("take"), shapes=[[M23, IDX([[0, 5], [-1, 2]])]], oracle=_take_oracle, note=TAKE_NOTE),
    op("mindspore.mint.take", _mint("take"), shapes=[[M23, IDX([4, 1])]], oracle=_take_oracle, note=TAKE_NOTE),
    op("mindspore.Tensor.take", _m("take"), shapes=[[M23, IDX([0, 7])], [M23, IDX([[0, 2]]), Py(1)],
                                                  [M23, IDX([-1, 4]), Py(1), Py("wrap")]]),
    # stacking and splitting
    op("mindspore.ops.vstack", _list(lambda ms: ms.ops.vstack), shapes=[[(3,), (3,)], [M23, (1, 3)]]),
    op("mindspore.ops.row_stack", _list(lambda ms: ms.ops.row_stack), shapes=[[(2,), (2,)]]),
    op("mindspore.ops.hstack", _list(lambda ms: ms.ops.hstack), shapes=[[(2,), ()], [M23, (2, 1)]]),
    op("mindspore.mint.hstack", _list(lambda ms: ms.mint.hstack), shapes=[[M23, (2, 2)]]),
    op("mindspore.ops.dstack", _list(lambda ms: ms.ops.dstack), shapes=[[(3,), (3,)], [M23, M23]]),
    op("mindspore.mint.dstack", _list(lambda ms: ms.mint.dstack), shapes=[[M23, (2, 3, 2)]]),
    op("mindspore.ops.column_stack", _list(lambda ms: ms.ops.column_stack), shapes=[[(3,), (3, 2)]]),
    op("mindspore.ops.dsplit", _f("dsplit"), shapes=[[(2, 2, 4), Py(2)], [(1, 2, 5), Py([1, 3])]],
       errors=[([M23, Py(2)], {})]),
    op("mindspore.Tensor.dsplit", _m("dsplit"), shapes=[[(1, 2, 4), Py(2)]]),
    op("mindspore.ops.Pack", lambda ms, a, b, **kw: ms.ops.Pack(**kw)((a, b)), shapes=[[M23, M23]],
       kwargs=[{"axis": 1}]),
    op("mindspore.ops.Unpack", lambda ms, x, **kw: ms.ops.Unpack(**kw)(x), shapes=[M23], kwargs=[{"axis": 1}]),
    op("mindspore.ops.SplitV", lambda ms, x, **kw: ms.ops.SplitV(**kw)(x), shapes=[(2, 4)],
       kwargs={"size_splits": (1, -1), "split_dim": 1, "num_split": 2},
       oracle=lambda ms, x, size_splits, split_dim, num_split: ms.ops.split(
           x, [x.shape[split_dim] - sum(s for s in size_splits if s != -1) if s == -1 else s for s in size_splits],
           split_dim),
       note=_no_cpu("ops.split with the -1 part's size worked out", "SplitV")),
    # scatters
    op("mindspore.ops.tensor_scatter_update", _f("tensor_scatter_update"),
       shapes=[[M23, IDX([[0, 1], [1, 2]]), (2,)], [M23, IDX([[1]]), (1, 3)]]),
    op("mindspore.ops.scatter_nd_update", _param("scatter_nd_update"), shapes=[[M23, IDX([[1]]), (1, 3)]],
       grad=False, graph=False),
    # MindSpore's IndexAdd writes its input in place, and a gradient's second call would add twice into the
    # recorded output: gradients are checked against finite differences in tests/test_array_breadth2.py
    op("mindspore.ops.index_add", _f("index_add"), shapes=[[M23, IDX([0, 2]), (2, 2), Py(1)],
                                                          [M23, IDX([1, 1]), M23, Py(0)]], grad=False),
    op("mindspore.ops.IndexAdd", lambda ms, x, i, y, **kw: ms.ops.IndexAdd(**kw)(x, i, y),
       shapes=[[M23, IDX([2, 0]), (2, 2)]], kwargs={"axis": 1}, grad=False),
    op("mindspore.Tensor.index_add", _m("index_add"), shapes=[[M23, IDX([1]), (2, 1), Py(1)]], grad=False),
    op("mindspore.Tensor.index_add_", _m("index_add_"), shapes=[[M23, Py(1), IDX([1]), (2, 1)]], grad=False,
       oracle=lambda ms, x, dim, index, source: ms.ops.index_add(x, index, source, dim),
       note=_no_cpu("ops.index_add", "InplaceIndexAddExt")),
    op("mindspore.mint.index_add", _mint("index_add"), shapes=[[M23, Py(0), IDX([1, 0]), M23]], kwargs=[{"alpha": 2}],
       grad=False),
    op("mindspore.ops.inplace_index_add", _param("inplace_index_add"), shapes=[[M23, IDX([0, 0]), M23, Py(0)]],
       grad=False, graph=False),
    op("mindspore.ops.InplaceIndexAdd", lambda ms, x, i, y, **kw: ms.ops.InplaceIndexAdd(**kw)(
        ms.Parameter(x, name="x"), i, y), shapes=[[M23, IDX([2]), (2, 1)]], kwargs={"axis": 1},
       grad=False, graph=False),
    op("mindspore.ops.inplace_add", _f("inplace_add"), shapes=[[M23, (1, 3), Py(1)], [M23, M23, Py((1, 0))]]),
    op("mindspore.ops.inplace_sub", _f("inplace_sub"), shapes=[[M23, (1, 3), Py((0,))]]),
    op("mindspore.ops.inplace_update", _f("inplace_update"), shapes=[[M23, (1, 3), Py(1)], [M23, M23, Py((1, 0))]]),
    op("mindspore.ops.InplaceAdd", lambda ms, x, v, **kw: ms.ops.InplaceAdd(**kw)(x, v), shapes=[[M23, (1, 3)]],
       kwargs={"indices": 0}),
    op("mindspore.ops.InplaceSub", lambda ms, x, v, **kw: ms.ops.InplaceSub(**kw)(x, v), shapes=[[M23, (2, 3)]],
       kwargs={"indices": (1, 0)}),
    op("mindspore.ops.InplaceUpdate", lambda ms, x, v, **kw: ms.ops.InplaceUpdate(**kw)(x, v), shapes=[[M23, (1, 3)]],
       kwargs={"indices": (1,)}),
    op("mindspore.ops.InplaceUpdateV2", lambda ms, x, v, **kw: ms.ops.InplaceUpdateV2()(x, kw["indices"], v),
       shapes=[[M23, (1, 3)]], kwargs={"indices": 0}),
    op("mindspore.Tensor.inplace_update", _m("inplace_update"), shapes=[[M23, (1, 3), Py(1)]]),
    op("mindspore.ops.index_fill", _f("index_fill"), shapes=[[M23, Py(1), IDX([0, 2]), Py(9.0)],
                                                            [M23, Py(-1), IDX([1]), T((), "float32")]]),
    op("mindspore.ops.IndexFill", lambda ms, x, d, i, v: ms.ops.IndexFill()(x, d, i, v),
       shapes=[[M23, Py(0), IDX([1]), T((), "float32")]]),
    op("mindspore.Tensor.index_fill", _m("index_fill"), shapes=[[M23, Py(1), IDX([1]), Py(-2.0)]]),
    op("mindspore.Tensor.index_fill_", _m("index_fill_"), shapes=[[M23, Py(0), IDX([0]), Py(3.0)]], grad=False,
       oracle=lambda ms, x, dim, index, value: ms.ops.index_fill(x, dim, index, value),
       note=_no_cpu("ops.index_fill", "InplaceIndexFillScalar")),
    op("mindspore.ops.IndexPut", lambda ms, x, v, i, j, **kw: ms.ops.IndexPut(**kw)(x, v, (i, j)),
       shapes=[[M23, (2,), IDX([0, 1]), IDX([1, 2])]], kwargs=[{}, {"accumulate": 1}]),
    op("mindspore.Tensor.index_put", lambda ms, x, i, v, **kw: x.index_put((i,), v, **kw),
       shapes=[[M23, IDX([1]), (3,)]], kwargs=[{}, {"accumulate": True}]),
    op("mindspore.Tensor.index_put_", lambda ms, x, i, v: x.index_put_((i,), v), shapes=[[M23, IDX([0]), (1,)]],
       grad=False, oracle=lambda ms, x, i, v: x.index_put((i,), v),
       note=_no_cpu("Tensor.index_put", "InplaceIndexPut")),
    op("mindspore.ops.MaskedScatter", lambda ms, x, m, s: ms.ops.MaskedScatter()(x, m, s),
       shapes=[[M23, T(values=[[True, False, True], [False, True, False]], dtype="bool"), (6,)]]),
    op("mindspore.Tensor.masked_scatter", _m("masked_scatter"),
       shapes=[[M23, T(values=[True, False, True], dtype="bool"), (2, 3)]]),
    op("mindspore.Tensor.masked_scatter_", _m("masked_scatter_"),
       shapes=[[M23, T(values=[[False, True, True], [True, False, False]], dtype="bool"), (4,)]], grad=False,
       oracle=lambda ms, x, m, s: x.masked_scatter(m, s),
       note=_no_cpu("Tensor.masked_scatter", "InplaceMaskedScatter")),
    op("mindspore.ops.select_scatter", _f("select_scatter"),
       shapes=[[M23, (2,), Py(1), Py(1)], [M23, (3,), Py(0), Py(-1)]],
       errors=[([M23, (3,), Py(1), Py(0)], {})]),
    op("mindspore.Tensor.select_scatter", _m("select_scatter"), shapes=[[M23, (3,), Py(0), Py(0)]]),
    op("mindspore.ops.slice_scatter", _f("slice_scatter"), shapes=[[M23, (2, 2), Py(1), Py(0), Py(3), Py(2)],
                                                                  [(4, 2), (4, 2)]]),
    op("mindspore.Tensor.slice_scatter", _m("slice_scatter"), shapes=[[(3, 2), (1, 2), Py(0), Py(1), Py(2)]]),
    op("mindspore.ops.diagonal_scatter", _f("diagonal_scatter"), shapes=[[M23, (2,), Py(1)], [(3, 3), (3,)],
                                                                        [(2, 3, 3), (2, 2), Py(-1), Py(1), Py(2)]]),
    op("mindspore.Tensor.diagonal_scatter", _m("diagonal_scatter"), shapes=[[(3, 2), (2,)]]),
    # diagonals, triangles, bands
    op("mindspore.ops.diag_embed", _f("diag_embed"), shapes=[[M23], [M23, Py(1)], [M23, Py(-1), Py(0), Py(2)]]),
    op("mindspore.ops.diagflat", _f("diagflat"), shapes=[[M23], [(3,), Py(-1)], [(2,), Py(2)]]),
    op("mindspore.Tensor.diagflat", _m("diagflat"), shapes=[[(2,), Py(1)]]),
    op("mindspore.ops.block_diag", lambda ms, *xs: ms.ops.block_diag(*xs), shapes=[[(1, 2), (), (2,)], [M23, (2, 2)]]),
    op("mindspore.ops.matrix_band_part", _f("matrix_band_part"),
       shapes=[[(3, 4), Py(1), Py(-1)], [(2, 3, 3), Py(0), Py(1)]]),
    op("mindspore.ops.MatrixBandPart", lambda ms, x, lo, up: ms.ops.MatrixBandPart()(x, lo, up),
       shapes=[[(4, 3), Py(-1), Py(0)]]),
    op("mindspore.ops.FillDiagonal", lambda ms, x, **kw: ms.ops.FillDiagonal(**kw)(x), shapes=[(5, 3), (3, 3)],
       kwargs=[{"fill_value": 5.0}, {"fill_value": -1.0, "wrap": True}], grad=False),
    op("mindspore.Tensor.fill_diagonal", _m("fill_diagonal"), shapes=[[(3, 3), Py(2.0)]], grad=False),
    op("mindspore.Tensor.fill_diagonal_", _m("fill_diagonal_"), shapes=[[(7, 3), Py(4.0), Py(True)]], grad=False,
       oracle=lambda ms, x, v, wrap: x.fill_diagonal(v, wrap),
       note="oracle: Tensor.fill_diagonal, the documented out-of-place twin (MindSpore 2.10's Tensor.fill_diagonal_ "
            "raises 'should not come here for fill_diagonal method', a bug)"),
    op("mindspore.ops.tril_indices", _f("tril_indices"), shapes=[[Py(3), Py(4), Py(1)], [Py(4), Py(3)]], grad=False),
    op("mindspore.ops.triu_indices", _f("triu_indices"), shapes=[[Py(3), Py(4), Py(1)], [Py(3), Py(3), Py(-1)]],
       grad=False),
    op("mindspore.ops.TrilIndices", lambda ms, **kw: ms.ops.TrilIndices(**kw)(),
       kwargs=[{"row": 3, "col": 4, "offset": -1}],
       shapes=[[]], grad=False),
    op("mindspore.ops.TriuIndices", lambda ms, **kw: ms.ops.TriuIndices(**kw)(), kwargs=[{"row": 4, "col": 3}],
       shapes=[[]], grad=False),
    # sliding blocks (MindSpore 2.10 CPU lacks mint's Im2ColExt and Col2ImExt: ops.unfold/ops.fold answer)
    op("mindspore.ops.unfold", _f("unfold"), shapes=[[(1, 2, 4, 5), Py(2), Py(1), Py(1), Py(2)],
                                                    [(1, 1, 4, 5), Py((2, 3)), Py((1, 2))]]),
    op("mindspore.ops.Im2Col", lambda ms, x, **kw: ms.ops.Im2Col(**kw)(x), shapes=[(1, 2, 4, 4)],
       kwargs={"ksizes": 2, "strides": 2, "pads": 1}),
    op("mindspore.Tensor.unfold", _m("unfold"), shapes=[[(1, 2, 3, 3), Py(2)]]),
    op("mindspore.mint.nn.functional.unfold", lambda ms, x, k: ms.mint.nn.functional.unfold(x, k),
       shapes=[[(1, 2, 3, 3), Py(2)]], oracle=lambda ms, x, k: ms.ops.unfold(x, k),
       note=_no_cpu("ops.unfold", "Im2ColExt")),
    op("mindspore.ops.fold", _FOLD, shapes=[(1, 8, 6)], kwargs={"size": [3, 4], "kernel_size": 2}),
    op("mindspore.ops.fold", _FOLD, shapes=[(1, 8, 9)], kwargs={"size": [4, 5], "kernel_size": 2, "stride": 2, "padding": 1}),
    op("mindspore.ops.Col2Im", lambda ms, x, **kw: ms.ops.Col2Im(kw.pop("kernel_size"))(x, ms.Tensor(kw["size"], ms.int32)),
       shapes=[(1, 2, 4, 6)], kwargs={"size": [3, 4], "kernel_size": 2}),
    op("mindspore.ops.col2im", lambda ms, x: ms.ops.col2im(x, ms.Tensor([3, 3], ms.int32), 2, 1, 1, 2),
       shapes=[(1, 2, 4, 4)]),
    op("mindspore.Tensor.col2im", lambda ms, x: x.col2im(ms.Tensor([3, 4], ms.int32), 2, 1, 0, 1), shapes=[(1, 1, 4, 6)]),
    op("mindspore.Tensor.fold", lambda ms, x: x.fold(ms.Tensor([3, 4], ms.int32), 2), shapes=[(1, 4, 6)]),
    op("mindspore.mint.nn.functional.fold", lambda ms, x: ms.mint.nn.functional.fold(x, (3, 4), 2), shapes=[(1, 4, 6)],
       oracle=lambda ms, x: ms.ops.fold(x, ms.Tensor([3, 4], ms.int32), 2), note=_no_cpu("ops.fold", "Col2ImExt")),
    # space <-> batch (MindSpore 2.10 CPU lacks SpaceToBatch/BatchToSpace kernels: the ND primitives answer)
    op("mindspore.ops.SpaceToBatchND", lambda ms, x, **kw: ms.ops.SpaceToBatchND(**kw)(x), shapes=[(2, 1, 4, 6)],
       kwargs={"block_shape": (2, 3), "paddings": [[0, 0], [1, 2]]}),
    op("mindspore.ops.space_to_batch_nd", _f("space_to_batch_nd"), shapes=[[(1, 2, 4, 4), Py((2, 2)), Py([[0, 0], [0, 0]])]]),
    op("mindspore.ops.BatchToSpaceND", lambda ms, x, **kw: ms.ops.BatchToSpaceND(**kw)(x), shapes=[(4, 1, 2, 3)],
       kwargs={"block_shape": (2, 1), "crops": [[1, 0], [0, 2]]}),
    op("mindspore.ops.batch_to_space_nd", _f("batch_to_space_nd"), shapes=[[(4, 2, 2, 2), Py((2, 2)), Py([[0, 1], [1, 0]])]]),
    op("mindspore.ops.SpaceToBatch", lambda ms, x, **kw: ms.ops.SpaceToBatch(**kw)(x), shapes=[(1, 1, 2, 4)],
       kwargs={"block_size": 2, "paddings": [[1, 1], [0, 0]]},
       oracle=lambda ms, x, block_size, paddings: ms.ops.SpaceToBatchND((block_size, block_size), paddings)(x),
       note=_no_cpu("SpaceToBatchND with a square block", "SpaceToBatch")),
    op("mindspore.ops.BatchToSpace", lambda ms, x, **kw: ms.ops.BatchToSpace(**kw)(x), shapes=[(4, 1, 2, 2)],
       kwargs={"block_size": 2, "crops": [[0, 1], [1, 0]]},
       oracle=lambda ms, x, block_size, crops: ms.ops.BatchToSpaceND((block_size, block_size), crops)(x),
       note=_no_cpu("BatchToSpaceND with a square block", "BatchToSpace")),
    # products, combinations, index arithmetic
    op("mindspore.ops.cartesian_prod", lambda ms, *xs: ms.ops.cartesian_prod(*xs),
       shapes=[[(2,), (3,)], [(2,), (1,), (2,)]]),
    op("mindspore.ops.combinations", _f("combinations"), shapes=[[(4,)], [(3,), Py(2), Py(True)], [(4,), Py(3)]]),
    op("mindspore.ops.vander", _f("vander"), shapes=[[(3,)], [(3,), Py(4)]], errors=[([M23], {})]),
    op("mindspore.ops.InvertPermutation", lambda ms, p: ms.ops.InvertPermutation()(p), shapes=[[Py((3, 4, 0, 2, 1))]],
       grad=False, graph=False),
    op("mindspore.ops.UnravelIndex", lambda ms, i, d: ms.ops.UnravelIndex()(i, d),
       shapes=[[IDX([22, 41, 37]), IDX([7, 6])]], grad=False),
    op("mindspore.ops.Range", lambda ms, a, b, c: ms.ops.Range()(a, b, c),
       shapes=[[T(values=0.0, dtype="float32"), T(values=1.0, dtype="float32"), T(values=0.25, dtype="float32")],
               [T(values=1, dtype="int32"), T(values=10, dtype="int32"), T(values=4, dtype="int32")]],
       grad=False, graph=False),
]
