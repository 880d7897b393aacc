"""Checkpoints under the front end's top level (``ascendemu.frontend.serialization``; ``mindspore`` has
``save_checkpoint`` & co. at its top): a re-export of ``train.serialization``, their home, where MindSpore
keeps them. Patch module constants such as ``SLICE_BYTES`` there, not here."""
from __future__ import annotations

from .train.serialization import (CheckpointFileError, CheckpointWarning, export, load_checkpoint,
                                  load_param_into_net, save_checkpoint)

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "CheckpointWarning", "CheckpointFileError",
           "export"]
