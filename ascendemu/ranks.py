"""Which rank this process is (bottom layer): ``RANK_ID``, as MindSpore's launchers set it.

Several layers need the rank: the kernel and graph caches live under ``rank_N/``, and a Chrome trace
names its process after it so that the traces of several ranks merge. This is the one reader of the
variable for them.
"""
from __future__ import annotations

import os

from .errors import InvalidParamError, check_int

__all__ = ["RANK_ENV", "resolve_rank"]

RANK_ENV = "RANK_ID"


def resolve_rank(rank: int | None = None) -> int:
    """The explicit rank, else ``RANK_ID`` (empty or unset means 0)."""
    if rank is not None:
        return check_int(rank, "rank", minimum=0)
    raw = os.environ.get(RANK_ENV, "").strip()
    if raw == "":
        return 0
    if not raw.isdigit():
        raise InvalidParamError(
            f"environment variable {RANK_ENV}={raw!r} is not a non-negative integer; "
            f"set it to the rank number (e.g. {RANK_ENV}=0) or unset it")
    return int(raw)
