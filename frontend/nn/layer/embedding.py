"""``mindspore.nn.layer.embedding``: Embedding, where MindSpore defines it."""
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

__all__ = ["Embedding"]


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
