"""Kernel faults (``device.kernel_status``): a kernel that detects a bad input (an out-of-range Gather
or GatherD index) reports it in its status word, and the host learns of it at its next synchronisation as the
chip's AI Core exception (ACL 507015), with MindSpore's RuntimeError and text (recorded from real
MindSpore 2.10 by tools/record_gather_errors.py: tests/fixtures/gather_errors.json)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.device.kernel_status import STATUS_BYTES, IndexOutOfRange
from ascendemu.errors import ACL_ERROR_RT_AICORE_EXCEPTION, AicoreExceptionError, KernelFaultError
from ascendemu.frontend import nn, ops
from ascendemu.hal.runtime import MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE
from ascendemu.kernels.library import compile_inprocess
from ascendemu.kernels.signature import OpSignature, TensorDesc

RECORDED = json.loads((Path(__file__).resolve().parent / "fixtures" / "gather_errors.json").read_text())["cases"]
MODES = {"pynative": "PYNATIVE_MODE", "graph": "GRAPH_MODE"}


def _params(shape) -> np.ndarray:
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


def _call(op: str, x, index, axis: int):
    """The op as a model-zoo script calls it (tools/record_gather_errors.py calls it so)."""
    return ops.Gather()(x, index, axis) if op == "Gather" else ops.GatherD()(x, axis, index)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("case", range(len(RECORDED)))
def test_gather_refuses_what_mindspore_refuses_with_its_text(ex, restore_context, mode, case):
    rec = RECORDED[case]
    ms.set_context(mode=getattr(ms, MODES[mode]))
    x, idx = _params(rec["shape"]), np.array(rec["indices"], np.int32)
    net = lambda a, i: _call(rec["op"], a, i, rec["axis"])  # noqa: E731
    if mode == "graph":
        net = ms.jit(net)
    if rec["error"] is None:
        out = net(ms.Tensor(x), ms.Tensor(idx)).asnumpy()
        assert out.tolist() == rec["output"]
        return
    with pytest.raises(RuntimeError) as e:
        net(ms.Tensor(x), ms.Tensor(idx)).asnumpy()
    assert type(e.value).__name__ == "KernelFaultError" and rec["error"] == "RuntimeError"
    assert rec["message"].split(", error_code")[0] in str(e.value)       # MindSpore's words, then ours
    assert e.value.code == ACL_ERROR_RT_AICORE_EXCEPTION and e.value.op == rec["op"]
    assert e.value.fault is IndexOutOfRange and e.value.kernel in str(e.value)


def test_the_device_runs_on_after_a_fault_and_reports_it_once(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    x = ms.Tensor(_params((4, 3)))
    with pytest.raises(KernelFaultError, match="but got 9"):
        nn.Embedding(4, 3)(ms.Tensor(np.array([[1, 9]], np.int32))).asnumpy()
    y = ops.Gather()(x, ms.Tensor(np.array([3, 0], np.int32)), 0)                      # no stale report
    np.testing.assert_array_equal(y.asnumpy(), _params((4, 3))[[3, 0]])


def test_embedding_lookup_keeps_mindsporess_zero_rows(ex):
    """EmbeddingLookup is defined to give zeros outside [0, rows) (real MindSpore: [[0, 1, 2], [0, 0, 0]])."""
    out = ops.EmbeddingLookup()(ms.Tensor(_params((4, 3))), ms.Tensor(np.array([0, 7], np.int32)), 0)
    assert out.asnumpy().tolist() == [[0, 1, 2], [0, 0, 0]]


def test_the_backward_rules_own_gathers_still_read_zeros(ex):
    """Gather without check_indices (UnsortedSegmentSum's gradient gathers by segment id, dropped ids
    included): an out-of-range index reads zeros, no fault (MindSpore's _gather_drop_negatives)."""
    ids = ms.Tensor(np.array([0, -1, 2, 5], np.int32))
    g = ms.grad(lambda v: (ops.unsorted_segment_sum(v, ids, 3) * ms.Tensor(np.array([1.0, 2.0, 3.0],
                                                                                       np.float32))).sum())
    assert g(ms.Tensor(np.ones(4, np.float32))).asnumpy().tolist() == [1.0, 0.0, 3.0, 0.0]


# the runtime fixture finalises the process-wide runtime: last, after the tests on the module's executor
def test_the_fault_surfaces_at_synchronize_not_at_launch(rt):
    """HAL level: the launch returns; the stream's synchronisation raises the AI Core exception, whose
    report the status word (zeroed before each launch) carried; the next launch starts clean."""
    sig = OpSignature("Gather", (TensorDesc((4, 3), "float32"), TensorDesc((2,), "int32")),
                      {"axis": 0, "check_indices": True})
    func = compile_inprocess(sig)
    assert func.status_args == (3,) and func.args[3].nbytes == STATUS_BYTES and func.args[3].zero_init
    rt.init(device_count=1)
    rt.set_device(0)
    s = rt.create_stream()
    p, i, y, status = (rt.malloc(a.nbytes) for a in func.args)
    x = _params((4, 3))
    rt.memcpy(p, x.nbytes, x, x.nbytes, MEMCPY_HOST_TO_DEVICE)
    for indices, bad in (([1, 6], 6), ([2, 3], None)):
        idx = np.array(indices, np.int32)
        rt.memcpy(i, idx.nbytes, idx, idx.nbytes, MEMCPY_HOST_TO_DEVICE)
        rt.launch_kernel(func, func.block_dim, [p, i, y, status], s)          # returns: the device runs later
        if bad is not None:
            with pytest.raises(AicoreExceptionError, match=f"range \\[0, 4\\), but got {bad}") as e:
                rt.synchronize_stream(s)
            assert e.value.value == bad
        else:
            rt.synchronize_stream(s)
        out = np.zeros((2, 3), np.float32)
        rt.memcpy(out, out.nbytes, y, out.nbytes, MEMCPY_DEVICE_TO_HOST)
        valid = (idx >= 0) & (idx < 4)
        np.testing.assert_array_equal(out, np.where(valid[:, None], x[np.where(valid, idx, 0)], 0))
