"""``mindspore.log``: MindSpore's logger (``logger.warning(...)``), a ``logging`` logger named
``mindspore`` on stderr whose level comes from ``GLOG_v`` as in MindSpore (0 debug, 1 info,
2 warning (the default), 3 error, 4 critical)."""
from __future__ import annotations

import logging
import os
import sys

from ascendemu.errors import InvalidParamError

__all__ = ["debug", "info", "warning", "error", "critical", "exception", "get_level"]

_LEVELS = {"0": logging.DEBUG, "1": logging.INFO, "2": logging.WARNING, "3": logging.ERROR, "4": logging.CRITICAL}


class _StderrHandler(logging.StreamHandler):
    """Writes to ``sys.stderr`` as it is when a record is emitted (as ``print`` does), not as it was when
    the logger was first used: a redirected or captured stderr gets the messages."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


_HANDLER = _StderrHandler()
_HANDLER.setFormatter(logging.Formatter("[%(levelname)s] ME(%(process)d:%(thread)d,%(processName)s):"
                                        "%(asctime)s [%(filename)s:%(lineno)d] %(message)s"))


def _logger() -> logging.Logger:
    """The ``mindspore`` logger, with this module's stderr handler attached (again, if something removed
    it; other handlers, such as a test harness's, may sit beside it) at the level GLOG_v gives."""
    logger = logging.getLogger("mindspore")
    if _HANDLER not in logger.handlers:
        level = os.environ.get("GLOG_v", "2")
        if level not in _LEVELS:
            raise InvalidParamError(f"GLOG_v={level!r} must be one of 0 (debug), 1 (info), 2 (warning), 3 (error), "
                                    "4 (critical)")
        logger.addHandler(_HANDLER)
        logger.setLevel(_LEVELS[level])
        logger.propagate = False
    return logger


def _at(level: int, name: str, exc_info: bool = False):
    def log(msg: str, *args: object, **kwargs: object) -> None:
        _logger().log(level, msg, *args, stacklevel=2, exc_info=exc_info, **kwargs)
    log.__name__ = log.__qualname__ = name
    log.__doc__ = f"Log ``msg % args`` at {logging.getLevelName(level)} level on MindSpore's logger."
    return log


debug = _at(logging.DEBUG, "debug")
info = _at(logging.INFO, "info")
warning = _at(logging.WARNING, "warning")
error = _at(logging.ERROR, "error")
critical = _at(logging.CRITICAL, "critical")
exception = _at(logging.ERROR, "exception", exc_info=True)


def get_level() -> str:
    """The GLOG_v level in force, as a string like MindSpore's (``'2'`` for warning)."""
    return {v: k for k, v in _LEVELS.items()}[_logger().level]
