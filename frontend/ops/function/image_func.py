"""``mindspore.ops.function.image_func``: the functional forms of the detection box ops
(``ops.bounding_box_encode``, ``ops.bounding_box_decode``, ``ops.check_valid``), made from their
composite stanzas in ``operations.other_ops``."""
from __future__ import annotations

from typing import Any

from ...unsupported import unsupported
from .._utils import defined_here
from ..composite_op import install_composite_functions
from ..operations import other_ops  # noqa: F401  (defines the stanzas installed here)

install_composite_functions(globals(), "mindspore.ops.function.image_func")

__all__ = defined_here(globals(), __name__)


def __getattr__(name: str) -> Any:
    raise unsupported("ops.function.image_func", name, __all__)
