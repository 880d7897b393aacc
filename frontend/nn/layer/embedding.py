"""``mindspore.nn.layer.embedding``: Embedding and EmbeddingLookup, where MindSpore defines them."""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...ops import constexpr  # noqa: F401  (MindSpore's nn.layer.embedding has it)
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell
from .basic import ClipByNorm, _positive_int  # noqa: F401  (MindSpore's nn.layer.embedding has ClipByNorm)

__all__ = ["Embedding", "EmbeddingLookup"]


class Embedding(Cell):
    """A lookup table ``embedding_table`` of shape (vocab_size, embedding_size): ids of any shape give
    ids.shape + (embedding_size,) by Gather of the flattened ids (an id outside [0, vocab_size) gives
    zeros). As in MindSpore, ``padding_idx`` only zeroes that row of the initial table (its gradient
    still flows), and ``use_one_hot=True`` (one-hot ids times the table) equals the Gather in value and
    gradient, so it runs the Gather; ``dtype`` is the one-hot dtype there and unused here."""

    def __init__(self, vocab_size: int, embedding_size: int, use_one_hot: bool = False,
                 embedding_table: Any = "normal", dtype: Any = mstype.float32, padding_idx: Any = None):
        super().__init__()
        self.vocab_size = _positive_int("Embedding", "vocab_size", vocab_size)
        self.embedding_size = _positive_int("Embedding", "embedding_size", embedding_size)
        if not isinstance(use_one_hot, bool):
            raise InvalidParamError(f"Embedding: use_one_hot={use_one_hot!r} must be a bool")
        self.use_one_hot, self.dtype, self.padding_idx = use_one_hot, mstype.to_type(dtype), padding_idx
        table = initializer(embedding_table, (vocab_size, embedding_size))
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, int) or not 0 <= padding_idx < vocab_size:
                raise InvalidParamError(f"Embedding: padding_idx={padding_idx!r} must be an int in [0, {vocab_size})")
            values = table.asnumpy()
            values[padding_idx] = 0
            table = Tensor(values)
        self.embedding_table = Parameter(table, name="embedding_table")
        self.gather = ops.Gather()

    def construct(self, ids: Tensor) -> Tensor:
        flat = ops.reshape(ids, (-1,))
        return ops.reshape(self.gather(self.embedding_table, flat, 0), ids.shape + (self.embedding_size,))

    def extend_repr(self) -> str:
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, "
                f"use_one_hot={self.use_one_hot}, embedding_table={self.embedding_table!r}, dtype={self.dtype}, "
                f"padding_idx={self.padding_idx}")



class EmbeddingLookup(Cell):
    """Rows of ``embedding_table`` (vocab_size, embedding_size) for ids of any shape, by Gather (an id
    outside [0, vocab_size) gives zeros). ``target`` ('CPU' or 'DEVICE') says where MindSpore runs the
    lookup and ``sparse`` how it writes the gradient: both give these values and gradients, so both
    run the device Gather. ``slice_mode`` and ``manual_shapes`` shard the table over devices in
    semi-auto parallel; on one device only their defaults are meaningful. With ``max_norm``, each
    looked-up row whose L2 norm exceeds it is scaled down to it, as MindSpore's clip_by_norm does."""

    BATCH_SLICE, FIELD_SLICE, TABLE_ROW_SLICE, TABLE_COLUMN_SLICE = ("batch_slice", "field_slice", "table_row_slice",
                                                                     "table_column_slice")

    def __init__(self, vocab_size: int, embedding_size: int, param_init: Any = "normal", target: str = "CPU",
                 slice_mode: str = "batch_slice", manual_shapes: Any = None, max_norm: Any = None,
                 sparse: bool = True, dtype: Any = mstype.float32):
        super().__init__()
        self.vocab_size = _positive_int("EmbeddingLookup", "vocab_size", vocab_size)
        self.embedding_size = _positive_int("EmbeddingLookup", "embedding_size", embedding_size)
        if target not in ("CPU", "DEVICE"):
            raise InvalidParamError(f"EmbeddingLookup: target={target!r} must be 'CPU' or 'DEVICE'")
        if slice_mode not in (self.BATCH_SLICE, self.FIELD_SLICE, self.TABLE_ROW_SLICE, self.TABLE_COLUMN_SLICE):
            raise InvalidParamError(f"EmbeddingLookup: slice_mode={slice_mode!r} is not a MindSpore slice mode")
        if manual_shapes is not None:
            raise InvalidParamError("EmbeddingLookup: manual_shapes shards the table over devices; it is not "
                                    "supported on one device, leave it None")
        if not isinstance(sparse, bool):
            raise InvalidParamError(f"EmbeddingLookup: sparse={sparse!r} must be a bool")
        if max_norm is not None and (isinstance(max_norm, bool) or not isinstance(max_norm, (int, float))
                                     or max_norm <= 0):
            raise InvalidParamError(f"EmbeddingLookup: max_norm={max_norm!r} must be None or a float > 0")
        self.target, self.slice_mode, self.sparse, self.max_norm = target, slice_mode, sparse, max_norm
        self.embedding_table = Parameter(initializer(param_init, (vocab_size, embedding_size), dtype),
                                         name="embedding_table")
        self.gather = ops.Gather()

    def construct(self, indices: Tensor) -> Tensor:
        flat = ops.reshape(indices, (-1,))
        out = self.gather(self.embedding_table, flat, 0)
        if self.max_norm is not None:
            norm = ops.sqrt(ops.sum(ops.square(out), 1, keepdim=True))
            out = out * self.max_norm / ops.maximum(norm, self.max_norm)
        return ops.reshape(out, indices.shape + (self.embedding_size,))
