"""Traces of a run: the Chrome/Perfetto trace writer the device model and runtime feed (``chrome``), and
the ``.aetrace`` record/replay format (``aetrace``: typed records, writer, reader; docs/TRACE_FORMAT.md)."""

__all__ = ["aetrace", "chrome"]
