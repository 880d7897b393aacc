"""``mindspore.JitConfig`` (also ``mindspore.common.JitConfig``): a cell's compile options.

``Cell.set_jit_config(JitConfig(jit_level="O1"))`` makes that cell's graphs compile at O1 whatever the
context says (the training wrappers and ``Model`` inherit it from the network they wrap, as in
MindSpore); ``jit(fn, jit_config=...)`` does the same for a function. Of the options only
``jit_level`` changes anything here: O0, O1 and O2 are the emulator's levels (``graph.plan``), and
``""`` leaves the choice to the context. The others are validated as MindSpore validates them and
kept in ``jit_config_dict``.
"""
from __future__ import annotations

from typing import Any

from ascendemu.errors import InvalidParamError
from ascendemu.graph.plan import JIT_LEVELS

__all__ = ["JitConfig"]

# MindSpore's choices for each option ("" means: not set here, the context decides)
_CHOICES = {"jit_level": ("",) + JIT_LEVELS, "exc_mode": ("auto", "sink", "no_sink"),
            "jit_syntax_level": ("", "STRICT", "COMPATIBLE", "LAX"), "debug_level": ("RELEASE", "DEBUG"),
            "infer_boost": ("", "on", "off")}


class JitConfig:
    """``JitConfig(jit_level="", exc_mode="auto", jit_syntax_level="", debug_level="RELEASE",
    infer_boost="off", **kwargs)``; the options, extra keywords included, are in ``jit_config_dict``."""

    def __init__(self, jit_level: str = "", exc_mode: str = "auto", jit_syntax_level: str = "",
                 debug_level: str = "RELEASE", infer_boost: str = "off", **kwargs: Any):
        options = {"jit_level": jit_level, "exc_mode": exc_mode, "jit_syntax_level": jit_syntax_level,
                   "debug_level": debug_level, "infer_boost": infer_boost}
        for name, value in options.items():
            if value not in _CHOICES[name]:
                raise InvalidParamError(f"JitConfig: {name}={value!r} must be one of {list(_CHOICES[name])}")
        kwargs.pop("suppress_infer_boost_warning", None)
        self.jit_config_dict: dict[str, Any] = dict(kwargs, **options)
        if "backend" not in kwargs and jit_level:           # MindSpore's backend for the level
            self.jit_config_dict["backend"] = "GE" if jit_level == "O2" else "ms_backend"

    def __repr__(self) -> str:
        return f"JitConfig({self.jit_config_dict})"


def jit_level_of(config: Any, who: str) -> str | None:
    """The jit level a JitConfig asks for; None: the context's."""
    if not isinstance(config, JitConfig):
        raise InvalidParamError(f"{who}: jit_config must be a mindspore.JitConfig, got {type(config).__name__}")
    return config.jit_config_dict["jit_level"] or None
