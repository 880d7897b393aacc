"""The front end's process-wide state, back to how a fresh process starts it.

A MindSpore script owns its process; a test suite runs many scripts' worth of tests in one. Between
them (the pytest plugin's device fixtures do it) :func:`reset` puts back what a script may have
changed: the context (mode, jit level, device), the auto-parallel context and algo parameters, the
seeds of initializers, random ops and the dataset pipeline, and the communication world. Each
module keeps its own defaults; this only calls their resets. The backend is the caller's to install.
"""
from __future__ import annotations

from . import context, parallel
from .common import seed
from .communication import management
from .dataset import config

__all__ = ["reset"]


def reset() -> None:
    """Put every process-wide setting of the front end back to its default."""
    context._reset()
    context.reset_auto_parallel_context()
    parallel.reset_algo_parameters()
    seed._reset()
    config._reset()
    management.release()
