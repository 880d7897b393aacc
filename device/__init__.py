"""``ascendemu.device``: the emulated chip and node, simulated with SimPy.

Public modules:

* ``spec``: device specifications as data (Ascend910A preset and variants);
* ``cost``: the roofline cost model (kernel blocks, copies);
* ``pool``, ``memory``: the BestFit pool (and FirstFit, a what-if policy) and HBM with host backing;
* ``model``: AI cores and DMA engines (Units), streams and events, the Device;
* ``tasks``: what a stream runs, one class per kind (kernel, copy, record, wait, timed);
* ``system``: the Node of devices, the two clocks, deadlock detection.

Nothing is imported here, so importing one module does not pull in the others.
"""
__all__ = ["cost", "memory", "model", "pool", "spec", "system", "tasks"]
