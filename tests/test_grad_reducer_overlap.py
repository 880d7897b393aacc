"""Data parallel's fused gradient AllReduces overlap the rest of the backward (nn.DistributedGradReducer,
graph.passes.optimizer_after_backward): MindSpore chains only the optimizer's updates after the backward,
so each bucket's AllReduce starts once its gradients exist. Oracle, by hand: of the 3 equal buckets, only
the one the backward completes last (the first layer's) has no backward left to hide behind, so at most one
bucket's transfer time is exposed (chained after the backward, all 3 were: exposed = communication)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from limits import SUBPROCESS_TIMEOUT_S

SCRIPT = Path(__file__).parent / "fixtures" / "ranks" / "dp_overlap.py"
COMM = re.compile(r"Simulated communication time: ([\d.]+) ms \((\d+) collective")
EXPOSED = re.compile(r"Simulated exposed communication: ([\d.]+) ms")
BUCKETS = 3


def test_gradient_buckets_overlap_the_backward(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "OMPI_", "PMI", "PYTEST_"))}
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", str(SCRIPT)], cwd=tmp_path,
                          env={**env, "RANK_SIZE": "8", "RANK_ID": "0"}, capture_output=True, text=True,
                          timeout=SUBPROCESS_TIMEOUT_S)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    comm, collectives = float(COMM.search(log).group(1)), int(COMM.search(log).group(2))
    exposed = float(EXPOSED.search(log).group(1))
    assert collectives >= BUCKETS and comm > 0
    assert exposed <= comm / BUCKETS, (exposed, comm)
