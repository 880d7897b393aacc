"""A Parameter's device buffer (``GraphPreparer.state_buffer``) belongs to the emulated node it was allocated on.
A finalized and re-initialised runtime hands the same addresses out again, so a buffer of an earlier node must
neither be freed when its Parameter dies later (that freed whatever now lives at the address) nor be used for
the Parameter on the new node (that read and wrote someone else's memory)."""
from __future__ import annotations

import gc

import numpy as np

from ascendemu.graph.graph_cache import GraphCache
from ascendemu.graph.modes import Compute
from ascendemu.graph.prepare import GraphPreparer
from ascendemu.graph.transfer import Transfers
from ascendemu.hal.runtime import Runtime
from ascendemu.kernels.signature import TensorDesc

DESC = TensorDesc((256,), "float32")


class _Source:
    """A Parameter as the preparer sees it."""

    version = 0

    def host_data(self) -> np.ndarray:
        return np.arange(256, dtype=np.float32)


def _preparer(tmp_path) -> tuple[Runtime, GraphPreparer]:
    rt = Runtime()
    rt.init()
    rt.set_device(0)
    mode = Compute(None, False)
    return rt, GraphPreparer(rt, 0, mode, Transfers(rt, mode), GraphCache(tmp_path, 0), "dfs")


def _renew(rt: Runtime) -> None:
    rt.finalize()
    rt.init()
    rt.set_device(0)


def test_a_parameter_dropped_after_the_node_was_renewed_frees_nothing_of_the_new_node(tmp_path):
    rt, prep = _preparer(tmp_path)
    source = _Source()
    old = prep.state_buffer(source, DESC)
    _renew(rt)
    live = rt.malloc(1024)
    assert live == old                              # the new pool's first block: the same address
    del source
    gc.collect()                                    # the old Parameter's finalizer runs
    assert live in rt.node.devices[0].memory.allocations
    rt.free(live)


def test_a_parameter_used_on_a_renewed_node_gets_a_buffer_there_with_its_values(tmp_path):
    rt, prep = _preparer(tmp_path)
    source = _Source()
    prep.state_buffer(source, DESC)
    _renew(rt)
    other = rt.malloc(1024)                         # someone else's memory at the old address
    ptr = prep.state_buffer(source, DESC)
    assert ptr != other and ptr in rt.node.devices[0].memory.allocations
    np.testing.assert_array_equal(prep.transfers.download(ptr, DESC), source.host_data())
