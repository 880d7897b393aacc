"""``mindspore.version``: the MindSpore release the front end follows, with the emulator as a PEP 440 local
label (``2.10.0+ascendemu.0.1.0``): version parsers read 2.10.0, and the label says it is the emulator."""
from ascendemu import __version__ as _ascendemu_version

# the MindSpore release whose API, printed text and file formats the front end follows
MINDSPORE_VERSION = "2.10.0"
__version__ = f"{MINDSPORE_VERSION}+ascendemu.{_ascendemu_version}"

__all__ = ["__version__", "MINDSPORE_VERSION"]
