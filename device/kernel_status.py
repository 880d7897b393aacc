"""A kernel's status word: how a kernel reports a fault it detects, as an AI Core reports an exception.

On the chip a kernel that reads outside its tensors (an out-of-range Gather index, say) raises an AI
Core exception: the task is marked failed and the host learns of it at its next synchronisation, as
ACL error 507015 (ACL_ERROR_RT_AICORE_EXCEPTION); MindSpore on Ascend then raises a RuntimeError. A
kernel here has no exception mechanism (a numba cfunc cannot raise), so a kernel that checks its
inputs takes one extra workspace, its *status word*: ``STATUS_WORDS`` int64 values, zeroed before the
launch (the argument's ``zero_init`` flag). On a fault the kernel writes the fault's code and its
details; when the launch ends the device reads the word and a non-zero code fails the task with
:class:`~ascendemu.errors.KernelFaultError`, which the stream keeps until the host synchronises
(``hal.streams``), exactly where the chip's exception surfaces. A normal launch pays one store-free
branch per index and one 32-byte read per launch.

Layout (int64 each): ``[code, value, low, high]``: which fault (a :class:`KernelFault` subclass's
``code``), the offending value and the range it had to lie in, ``[low, high)``. Several blocks may
report at once; the word then holds one of their reports (any one names a real fault).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ascendemu.errors import KernelFaultError

__all__ = ["STATUS_WORDS", "STATUS_BYTES", "KernelFault", "IndexOutOfRange", "FAULTS", "check_status"]

STATUS_WORDS = 4
STATUS_BYTES = 8 * STATUS_WORDS
# Words a kernel's fault report fills, by position in the status word
CODE, VALUE, LOW, HIGH = range(STATUS_WORDS)


class KernelFault:
    """One kind of fault a kernel reports; ``code`` is what the kernel writes in word 0."""

    code = 0
    what = "a fault"


class IndexOutOfRange(KernelFault):
    """An index outside the axis it indexes (Gather): the chip's out-of-bounds read."""

    code = 1
    what = "an index out of range"


FAULTS: dict[int, type[KernelFault]] = {f.code: f for f in (IndexOutOfRange,)}


def check_status(words: np.ndarray, kernel: str, op: str, describe: Callable[[Sequence[int]], str] | None) -> None:
    """Raise the fault a launch of ``kernel`` (computing ``op``) reported in its status ``words``, if
    any: ``describe`` words it as MindSpore does for that op (the layer that planned the kernel
    provides it), else a generic text."""
    code = int(words[CODE])
    if code == 0:
        return
    fault = FAULTS.get(code, KernelFault)
    report = [int(w) for w in words]
    text = describe(report) if describe is not None else \
        f"For '{op}', {fault.what}: {report[VALUE]} not in [{report[LOW]}, {report[HIGH]})"
    raise KernelFaultError(f"{text}. The AI Core raised an exception in kernel {kernel!r} (op {op}), reported at "
                           f"synchronisation; check the op's inputs (the indices) before the call",
                           fault=fault, op=op, kernel=kernel, value=report[VALUE])
