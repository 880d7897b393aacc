"""Specs of the round-3 breadth family ``image3``: signal windows, colour-space ops, bit packing, unique with
padding, the host-computed data-dependent ops (ListDiff, RaggedRange, sparse_segment_mean, greedy CTC
decoding, edit distance, NMS over an overlap table).

A window's length is a Python int made into a Tensor inside the call (a constant of the graph: a window's
shape depends on it). The ops whose output length depends on tensor values run in PyNative only
(``graph=False``), as Unique. Dtypes are written as names and looked up on the ``ms`` module."""
from __future__ import annotations

import numpy as np

from .core import Py, T, op


def _kw(ms, kw: dict) -> dict:
    """kwargs with dtype names (``dtype``, ``out_idx``, ``Tsplits``) looked up on ``ms``."""
    return {k: getattr(ms, v) if k in ("dtype", "out_idx", "Tsplits") else v for k, v in kw.items()}


def _window_fn(name: str, dtype: str = "int32"):
    """``ops.<name>(Tensor(n, dtype), **kw)``."""
    return lambda ms, n, **kw: getattr(ms.ops, name)(ms.Tensor(n, getattr(ms, dtype)), **_kw(ms, kw))


def _window_prim(name: str, shape: tuple = (), dtype: str = "int32"):
    """``ops.<Name>(**kw)(Tensor(n))``, the length a 0-d (or ``shape`` (1,)) int Tensor."""
    def run(ms, n, **kw):
        length = ms.Tensor(np.full(shape, n, dtype))
        return getattr(ms.ops, name)(**_kw(ms, kw))(length)
    return run


def _fn(name: str):
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **_kw(ms, kw))


def _prim(name: str):
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(**_kw(ms, kw))(*xs)


RGB = T((1, 6, 3), values=[[[0.1, 0.5, 0.9], [0.8, 0.2, 0.3], [0.5, 0.5, 0.5], [0.0, 0.0, 0.0], [0.3, 0.9, 0.1],
                            [0.9, 0.9, 0.2]]])
HSV = T((1, 1, 6, 3), values=[[[[0.1, 0.5, 0.9], [0.8, 0.2, 0.3], [0.95, 1.0, 0.5], [1.0, 0.5, 0.5], [-0.2, 0.5, 0.5],
                                [0.0, 0.0, 0.0]]]])


def _scalar(value: float, dtype: str = "float32") -> T:
    return T((), dtype=dtype, values=value)


BITS = [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]]
REPEATS = [1, 2, 5, 2, 1, 7]
LOGITS = T((4, 2, 3), dtype="float32", low=-2.0, high=2.0)
SEQ_LEN = T((2,), dtype="int32", values=[4, 3])
OVERLAPS = T((4, 4), dtype="float32", values=[[1.0, 0.6, 0.2, 0.1], [0.6, 1.0, 0.7, 0.1], [0.2, 0.7, 1.0, 0.3],
                                              [0.1, 0.1, 0.3, 1.0]])
NMS_SCORES = T((4,), dtype="float32", values=[0.9, 0.8, 0.7, 0.3])
HYP = [T((4, 3), dtype="int64", values=[[0, 0, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]]),
       T((4,), dtype="float32", values=[1.0, 2.0, 3.0, 4.0]), T((3,), dtype="int64", values=[2, 2, 2])]
TRUTH = [T((4, 3), dtype="int64", values=[[0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1]]),
         T((4,), dtype="float32", values=[1.0, 3.0, 2.0, 1.0]), T((3,), dtype="int64", values=[2, 2, 2])]
SEG_X = T((4, 3), values=np.arange(12.0).reshape(4, 3).tolist())
SEG_IDX = T((4,), dtype="int32", values=[0, 1, 2, 3])
SEG_IDS = T((4,), dtype="int32", values=[0, 0, 2, 2])
NO_GRAD = {"grad": False}


def COUNTS(per_class: int, total: int, iou: float, floor: float) -> list:
    """CombinedNonMaxSuppression's four scalar operands."""
    return [T((), dtype="int32", values=per_class), T((), dtype="int32", values=total), _scalar(iou), _scalar(floor)]

HOST = {"grad": False, "graph": False}

SPECS = [
    # signal windows (host constants)
    op("mindspore.ops.bartlett_window", _window_fn("bartlett_window"), shapes=[[Py(5)], [Py(1)]],
       kwargs=[{}, {"periodic": False}, {"dtype": "float64"}],
       errors=[([Py(-1)], {}), ([Py(4)], {"dtype": "int32"})], **NO_GRAD),
    op("mindspore.ops.blackman_window", _window_fn("blackman_window"), shapes=[[Py(6)]],
       kwargs=[{}, {"periodic": False}], errors=[([Py(4)], {"dtype": "int32"})], **NO_GRAD),
    op("mindspore.ops.BartlettWindow", _window_prim("BartlettWindow"), shapes=[[Py(5)]],
       kwargs=[{}, {"periodic": False, "dtype": "float16"}], **NO_GRAD),
    op("mindspore.ops.BartlettWindow", _window_prim("BartlettWindow", (1,)), errors=[([Py(5)], {})]),
    op("mindspore.ops.BlackmanWindow", _window_prim("BlackmanWindow", (), "int64"), shapes=[[Py(5)]],
       kwargs=[{}, {"periodic": False}], **NO_GRAD),
    op("mindspore.ops.BlackmanWindow", _window_prim("BlackmanWindow", (), "float32"), errors=[([Py(5)], {})]),
    op("mindspore.ops.HammingWindow", _window_prim("HammingWindow", (1,)), shapes=[[Py(5)]],
       kwargs=[{}, {"periodic": False, "alpha": 0.5, "beta": 0.3}], **NO_GRAD),
    op("mindspore.ops.HammingWindow", _window_prim("HammingWindow"), errors=[([Py(5)], {})]),
    op("mindspore.ops.hamming_window", _fn("hamming_window"), shapes=[[Py(5)], [Py(1)]],
       kwargs=[{}, {"periodic": False}, {"dtype": "float16"}],
       errors=[([Py(-1)], {}), ([Py(5.0)], {}), ([Py(5)], {"alpha": 1})], **NO_GRAD),
    op("mindspore.ops.kaiser_window", _fn("kaiser_window"), shapes=[[Py(5)], [Py(0)]],
       kwargs=[{}, {"periodic": False, "beta": 5.0}, {"dtype": "float32"}],
       errors=[([Py(-1)], {}), ([Py(2.0)], {})], **NO_GRAD),
    # colour spaces (compositions of elementwise ops)
    op("mindspore.ops.RGBToHSV", _prim("RGBToHSV"), shapes=[[RGB], [T((2, 3))]], dtypes=("float32", "float64"),
       errors=[([T((2, 2))], {}), ([T((2, 3), dtype="int32")], {})], **NO_GRAD),
    op("mindspore.ops.HSVToRGB", _prim("HSVToRGB"), shapes=[[HSV]], dtypes=("float32", "float64"),
       errors=[([T((6, 3))], {})], **NO_GRAD),
    op("mindspore.ops.AdjustHue", _prim("AdjustHue"), shapes=[[RGB, _scalar(0.3)], [RGB, _scalar(2.6)]],
       dtypes=("float32", "float16"),
       errors=[([RGB, T((1,), dtype="float32", values=[0.3])], {}), ([T((6, 3)), _scalar(0.3)], {}),
               ([RGB, _scalar(0.3, "float16")], {})], **NO_GRAD),
    op("mindspore.ops.AdjustSaturation", _prim("AdjustSaturation"),
       shapes=[[RGB, _scalar(1.5)], [RGB, _scalar(-1.5)], [RGB, _scalar(0.4)]],
       errors=[([T((1, 6, 2)), _scalar(1.5)], {})], **NO_GRAD),
    # bit packing, unique with padding (static shapes, composed)
    op("mindspore.ops.CompareAndBitpack", _prim("CompareAndBitpack"),
       shapes=[[T((2, 8), values=BITS), _scalar(4.0, None)], [T((2, 8), low=-1, high=1), _scalar(0.0, None)]],
       dtypes=("float32", "int32"),
       errors=[([T((2, 6)), _scalar(4.0)], {}), ([T((2, 8)), T((1,), values=[4.0])], {})], **NO_GRAD),
    op("mindspore.ops.CompareAndBitpack", _prim("CompareAndBitpack"),
       shapes=[[T((2, 8), dtype="bool", values=(np.array(BITS) > 3).tolist()), T((), dtype="bool", values=True)]],
       **NO_GRAD),
    op("mindspore.ops.UniqueWithPad", _prim("UniqueWithPad"),
       shapes=[[T((6,), dtype="int32", values=REPEATS), Py(0)],
               [T((6,), dtype="int64", values=REPEATS), T((), dtype="int64", values=-1)],
               [T((6,), dtype="float32", values=REPEATS), Py(0.0)]],
       errors=[([T((2, 3), dtype="int32", values=[[1, 2, 5], [2, 1, 7]]), Py(0)], {})], **NO_GRAD),
    op("mindspore.ops.unique_with_pad", _fn("unique_with_pad"), shapes=[[T((6,), dtype="int32", values=REPEATS),
                                                                         Py(3)]], **NO_GRAD),
    op("mindspore.Tensor.unique_with_pad", lambda ms, x, pad: x.unique_with_pad(pad),
       shapes=[[T((6,), dtype="int32", values=REPEATS), Py(3)]], **NO_GRAD),
    op("mindspore.ops.ExtractVolumePatches", _prim("ExtractVolumePatches"), shapes=[(1, 2, 3, 4, 4)],
       dtypes=("float32", "int32"),
       kwargs=[{"kernel_size": (1, 1, 2, 2, 2), "strides": (1, 1, 1, 2, 2), "padding": "VALID"},
               {"kernel_size": (1, 1, 2, 3, 3), "strides": (1, 1, 2, 2, 2), "padding": "SAME"},
               {"kernel_size": 2, "strides": 1, "padding": "same"}],
       errors=[((1, 2, 3, 4, 4), {"kernel_size": (2, 1, 2, 2, 2), "strides": 1, "padding": "VALID"}),
               ((1, 2, 3, 4, 4), {"kernel_size": 2, "strides": 1, "padding": "FULL"}),
               ((1, 2, 3, 4, 4), {"kernel_size": (1, 1, 4, 2, 2), "strides": 1, "padding": "VALID"}),
               ((2, 3, 4, 4), {"kernel_size": 2, "strides": 1, "padding": "VALID"})]),
    # data-dependent shapes: computed from host data, PyNative only
    op("mindspore.ops.SubAndFilter", _prim("SubAndFilter"),
       shapes=[[T((8,), dtype="int32", values=[1, 3, 5, 8, 9, 16, -2, 0]), Py(10), Py(1)],
               [T((2, 4), dtype="int64", values=[[1, 3, 5, 8], [9, 16, -2, 0]]), Py(10), Py(5)]],
       errors=[([T((3,), dtype="float32", values=[1.0, 2.0, 3.0]), Py(10), Py(1)], {})], **HOST),
    op("mindspore.ops.ListDiff", _prim("ListDiff"),
       shapes=[[T((6,), dtype="int32", values=[1, 2, 3, 4, 5, 6]), T((3,), dtype="int32", values=[1, 3, 5])]],
       kwargs=[{}, {"out_idx": "int64"}], **HOST),
    op("mindspore.ops.RaggedRange", _prim("RaggedRange"),
       shapes=[[T((3,), dtype="int32", values=[2, 5, 8]), T((3,), dtype="int32", values=[3, 5, 12]),
                T((3,), dtype="int32", values=[1, 1, 1])],
               [T((2,), dtype="float32", values=[0.0, 5.0]), T((2,), dtype="float32", values=[3.0, 1.0]),
                T((2,), dtype="float32", values=[1.5, -2.0])]],
       kwargs=[{"Tsplits": "int64"}, {"Tsplits": "int32"}],
       errors=[([T((), dtype="int32", values=2), T((2,), dtype="int32", values=[3, 6]), T((), dtype="int32", values=1)],
                {"Tsplits": "int32"})], **HOST),
    op("mindspore.ops.sparse_segment_mean", _fn("sparse_segment_mean"),
       shapes=[[SEG_X, SEG_IDX, SEG_IDS], [SEG_X, T((2,), dtype="int32", values=[0, 2]),
                                           T((2,), dtype="int32", values=[1, 1])]],
       dtypes=("float32", "float16"),
       errors=[([SEG_X, SEG_IDX, T((4,), dtype="int64", values=[0, 0, 2, 2])], {}),
               ([T((4, 3), dtype="int32"), SEG_IDX, SEG_IDS], {})], **HOST),
    op("mindspore.ops.ctc_greedy_decoder", _fn("ctc_greedy_decoder"), shapes=[[LOGITS, SEQ_LEN]],
       kwargs=[{}, {"merge_repeated": False}],
       errors=[([LOGITS, T((2,), dtype="int64", values=[4, 3])], {}),
               ([LOGITS, T((2,), dtype="int32", values=[5, 3])], {}),
               ([T((4, 3), dtype="float32"), SEQ_LEN], {})], **HOST),
    op("mindspore.ops.CTCGreedyDecoder", _prim("CTCGreedyDecoder"), shapes=[[LOGITS, SEQ_LEN]],
       dtypes=("float32",), errors=[([T((4, 2, 3), dtype="float16"), SEQ_LEN], {})], **HOST),
    op("mindspore.ops.EditDistance", _prim("EditDistance"), shapes=[HYP + TRUTH],
       kwargs=[{}, {"normalize": False}], errors=[([T((4, 3), dtype="int32", values=[[0, 0, 0]] * 4)] + HYP[1:] + TRUTH,
                                                   {})], **HOST),
    op("mindspore.ops.CombinedNonMaxSuppression", _prim("CombinedNonMaxSuppression"),
       shapes=[[T((2, 5, 1, 4), low=-0.1, high=1.1), T((2, 5, 3), low=0.0, high=1.0)] + COUNTS(2, 4, 0.3, 0.2),
               [T((2, 5, 3, 4), low=0.0, high=1.0), T((2, 5, 3), low=0.0, high=1.0)] + COUNTS(1, 5, 0.5, 0.0)],
       kwargs=[{}, {"pad_per_class": True, "clip_boxes": False}],
       errors=[([T((2, 5, 2, 4)), T((2, 5, 3))] + COUNTS(2, 4, 0.3, 0.2), {})], **HOST),
    op("mindspore.ops.NonMaxSuppressionWithOverlaps", _prim("NonMaxSuppressionWithOverlaps"),
       shapes=[[OVERLAPS, NMS_SCORES, T((), dtype="int32", values=4), _scalar(0.5), _scalar(0.0)],
               [OVERLAPS, NMS_SCORES, T((), dtype="int32", values=4), _scalar(0.5), _scalar(0.5)],
               [OVERLAPS, NMS_SCORES, T((), dtype="int32", values=1), _scalar(0.5), _scalar(0.0)]], **HOST),
]
