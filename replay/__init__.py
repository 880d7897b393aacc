"""``ascendemu.replay``: replaying a recorded trace (``.aetrace``) against a fresh runtime, as recorded or
under a what-if, and comparing what runs measured.

Public modules:

* ``replayer``: :class:`~.replayer.Replayer` and :class:`~.replayer.WhatIf` (re-issue a trace's calls
  through the HAL: same figures bit for bit on the same preset; another preset, clock, HBM bandwidth,
  pool policy or one stream as a what-if; computing outputs from the kernel cache when asked);
* ``compare``: figures as rows with units, bit-for-bit differences, side-by-side tables, the
  regression gate and baseline files;
* ``chakra``: a recorded run exported as MLCommons Chakra execution traces (one per rank), and a Chakra
  ET (ours, or one captured elsewhere) run on the emulated device.
* ``report``: the HTML report of replayed traces (``ascendemu report``);
* ``ascend_profile``: a real Ascend profile (MindSpore's kernel_details.csv, msprof's op_summary csv)
  read as tasks and replayed with their recorded durations (``ascendemu profile replay``);
* ``fidelity``: the cost model's duration of each kernel of such a profile beside the recorded one,
  ranked by error (``ascendemu profile fidelity``).

It sits above the kernel cache (a computing replay loads kernels from it) and below the graph layer
(a replay needs no graph: the trace holds the calls the executor made). Nothing is imported here.
"""
__all__ = ["ascend_profile", "chakra", "compare", "fidelity", "replayer", "report"]
