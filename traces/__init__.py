"""Traces of a run: the Chrome/Perfetto trace writer the device model and runtime feed (``chrome``)."""

__all__ = ["chrome"]
