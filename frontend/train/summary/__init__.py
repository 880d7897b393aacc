"""``mindspore.train.summary``: ``SummaryRecord``, which writes MindSpore's summary files."""
from __future__ import annotations

from .summary_record import SummaryRecord

__all__ = ["SummaryRecord"]
