"""``mindspore.run_check()``: the installation check MindSpore prints, on the emulated device.

MindSpore multiplies two small tensors on the current device_target and prints its version and the
platform. The emulator does the same through the installed backend and says which device it emulates
(no Ascend hardware is involved), so a user's first command tells them where their ops really run.
"""
from __future__ import annotations

import numpy as np

from ascendemu import __version__ as ASCENDEMU_VERSION

__all__ = ["run_check"]

# MindSpore 2.10's run_check computes [1, 2, 3] * [4, 5, 6] and prints these lines (recorded from real
# MindSpore 2.10 on CPU; the platform part is adapted to name the emulated device)
CHECK_X, CHECK_Y = [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]


def _emulated_device() -> tuple[str, bool]:
    """The preset the installed backend emulates and whether it is a DryRun (computes nothing)."""
    from .backend import get_backend
    backend = get_backend()
    rt = getattr(backend, "rt", None)
    spec = getattr(getattr(rt, "node", None), "spec", None)
    return (spec.name if spec is not None else "no emulated device"), bool(getattr(backend, "dry_run", False))


def run_check() -> None:
    """Print MindSpore's version and check one multiplication on the emulated device, as MindSpore's
    ``run_check`` does; any error is printed, not raised (MindSpore's behaviour)."""
    from . import ops
    from .context import get_context
    from .version import __version__
    from .common import dtype as mstype
    from .common.tensor import Tensor
    try:
        print("MindSpore version: ", __version__)
        out = ops.Mul()(Tensor(np.array(CHECK_X), mstype.float32), Tensor(np.array(CHECK_Y), mstype.float32))
        got = out.asnumpy()
        device, dry_run = _emulated_device()
        platform = f"[{get_context('device_target')}] (emulated {device}, ascendemu {ASCENDEMU_VERSION})"
        if dry_run:
            print(f"DryRun: nothing is computed, so the multiplication was planned but not checked; MindSpore "
                  f"(the emulator) is installed on platform {platform}.")
            return
        want = np.multiply(CHECK_X, CHECK_Y).astype(np.float32)
        if not np.array_equal(got, want):
            raise ArithmeticError(f"the multiplication gave {got.tolist()}, expected {want.tolist()}")
        print("The result of multiplication calculation is correct, MindSpore has been installed on platform "
              f"{platform} successfully!")
    except Exception as e:        # noqa: BLE001  MindSpore prints any failure of the check and returns
        print("MindSpore running check failed.")
        print(str(e))
