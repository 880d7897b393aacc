"""MS_ALLOC_CONF=memory_tracker:True: our run writes MindSpore's memory_block.csv and task.csv
(graph/memory_tracker.py).

The oracle for the columns is the head of real MindSpore 2.10's files (tests/fixtures/msdryrun/memory_tracker_sample/,
recorded with the stub CANN by ``tools/record_msdryrun_parallel.py --tracker-sample``); for the figures, the run's own
"Used peak memory usage" line (the pool's) against the blocks' sizes summed over time, and numpy's byte counts.
"""
from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.device.memory import ACL_SIZE_PAD, ACL_SIZE_ROUND
from ascendemu.device.pool import ALIGN
from ascendemu.graph.memory_tracker import tracker_enabled

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from record_msdryrun_parallel import memory_blocks_summary  # noqa: E402  (how MindSpore's file is read)

SAMPLE = Path(__file__).parent / "fixtures" / "msdryrun" / "memory_tracker_sample"
USED = re.compile(r"DryRun: Used peak memory usage \(without fragments\): ([\d.]+)M")
SCRIPT = """
import numpy as np
import mindspore as ms
from mindspore import nn, Tensor
ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
net = nn.Dense(256, 128)
step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
step(Tensor(np.ones((64, 256), np.float32)), Tensor(np.ones((64, 128), np.float32)))
"""


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def test_ms_alloc_conf_spelling():
    assert tracker_enabled({"MS_ALLOC_CONF": "memory_tracker:True"})
    assert tracker_enabled({"MS_ALLOC_CONF": "enable_vmm:False, memory_tracker:True"})
    assert not tracker_enabled({"MS_ALLOC_CONF": "memory_tracker:False"})
    assert not tracker_enabled({})


def test_dryrun_writes_mindspores_tracker_files(tmp_path):
    (tmp_path / "net.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "MS_COMPILER_CACHE", "RANK"))}
    env["MS_ALLOC_CONF"] = "memory_tracker:True"
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", "net.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in ("memory_block.csv", "task.csv"):
        ours, theirs = _rows(tmp_path / "rank_0" / name)[0], _rows(SAMPLE / name)[0]
        assert ours == theirs, name                 # the same columns in the same order (and the trailing comma)
    _, blocks = _rows(tmp_path / "rank_0" / "memory_block.csv")
    # the blocks' sizes summed at each time stamp (read as the recorder reads MindSpore's) peak at the pool's
    # used peak, which the last block allocated at that peak reports
    peak = memory_blocks_summary(tmp_path / "rank_0" / "memory_block.csv")["peak_mb"]
    assert peak == pytest.approx(float(USED.findall(proc.stdout)[-1]), abs=0.01)
    assert peak == pytest.approx(max(int(b["actual_peak_memory"]) for b in blocks) / 2 ** 20, abs=0.01)
    # the Dense weight (128 x 256 float32) is a persistent Weight block of its bytes rounded and padded as ACL's
    # malloc does, in the pool's 512-byte blocks (MindSpore's 65536000-byte embedding is a 65536512-byte block too)
    block = lambda n: -(-(-(-n // ACL_SIZE_ROUND) * ACL_SIZE_ROUND + ACL_SIZE_PAD) // ALIGN) * ALIGN  # noqa: E731
    weight = block(np.zeros((128, 256), np.float32).nbytes)
    assert any(b["type"] == "Weight" and b["is_persistent"] == "1" and int(b["size"]) == weight for b in blocks)
    # the MatMul's output (64 x 128 float32) is a Kernel block named by its op, freed within the step
    matmul = [b for b in blocks if b["type"] == "Kernel" and "MatMul" in b["node_name"]
              and int(b["size"]) == block(np.zeros((64, 128), np.float32).nbytes)]
    assert matmul and all(int(b["end_time_stamp"]) < 2 ** 63 - 1 for b in matmul)
