"""A rank that fails ends the whole job, and the ranks' traces merge into one.

Real process trees: ``mpiexec -n N ascendemu run`` (the mpich wheel's mpiexec) and ``ascendemu msrun``.
A rank whose script raises tells the others through the fabric: each rank waiting for it (in a
collective, or in building the world communicator) fails with ``rank N failed: <its error>``, and the
job ends with a non-zero status instead of waiting HCCL_EXEC_TIMEOUT (unset here: 1800 s). What is
checked is what each process printed and its status, not how fast (the generous subprocess timeout
only keeps a regression from hanging the suite). ``--trace t.json`` under several ranks: each rank's
own file ``t.rank<N>.json``, and rank 0's merge into ``t.json``, read back with ``json``.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.errors import InvalidFileError, InvalidParamError
from ascendemu.traces.chrome import merge, rank_pid, read_trace

MPIEXEC = Path(sys.executable).parent / "mpiexec"
TIMEOUT_S = SUBPROCESS_TIMEOUT_S
ERROR = "RuntimeError: rank 1 fails on purpose"

# rank 1 raises; the others wait for it in an AllReduce (``after``) or in init()'s communicator (``before``)
RAISES = """
import os
import numpy as np
import mindspore as ms
from mindspore import ops, Tensor
from mindspore.communication import init, get_rank
if os.environ["WHEN"] == "before" and os.environ["RANK_ID"] == "1":
    raise RuntimeError("rank 1 fails on purpose")
init()
x = Tensor(np.full(4, get_rank() + 1, np.float32))
y = x * x
if get_rank() == 1:
    raise RuntimeError("rank 1 fails on purpose")
print("reduced", ops.AllReduce()(y).asnumpy())
"""


def clean_env(cache: Path, **extra: str) -> dict[str, str]:
    """This environment without an outer MPI job's or launcher's variables, and no HCCL timeout."""
    drop = ("RANK_ID", "RANK_SIZE", "DEVICE_ID", "MS_ROLE", "MS_SIMULATION_LEVEL", "HCCL_EXEC_TIMEOUT",
            "HCCL_CONNECT_TIMEOUT")
    env = {k: v for k, v in os.environ.items()
           if k not in drop and not k.startswith(("PMI_", "OMPI_", "MPI_LOCAL", "HYDRA_", "PYTEST_"))}
    return {**env, "MS_COMPILER_CACHE_PATH": str(cache), **extra}


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)


def by_rank(text: str) -> dict[int, str]:
    """The lines of ``mpiexec -prepend-rank`` output, per rank."""
    out: dict[int, list[str]] = {}
    for line in text.splitlines():
        m = re.match(r"\[(\d+)\] (.*)", line)
        if m:
            out.setdefault(int(m.group(1)), []).append(m.group(2))
    return {r: "\n".join(lines) for r, lines in out.items()}


@pytest.mark.parametrize("n, when", [(2, "after"), (4, "after"), (2, "before")])
def test_a_rank_that_raises_ends_the_mpi_job_and_the_others_name_it(ascendemu_kernel_cache, tmp_path, n, when):
    (tmp_path / "raises.py").write_text(RAISES)
    proc = run([str(MPIEXEC), "-prepend-rank", "-n", str(n), sys.executable, "-m", "ascendemu", "run", "--quiet",
                "raises.py"], tmp_path, clean_env(ascendemu_kernel_cache, WHEN=when))
    assert proc.returncode != 0
    ranks = by_rank(proc.stdout + proc.stderr)
    assert ranks[1].splitlines()[-1] == ERROR, ranks.get(1)               # its own traceback, last
    for r in set(range(n)) - {1}:             # every survivor: HCCL's error naming rank 1 and its error
        last = ranks[r].splitlines()[-1]
        assert last.startswith("ascendemu.errors.HcclRemoteError: "), ranks[r]
        assert f"rank 1 failed: {ERROR}. This rank (rank {r}) stops too" in last
        assert "reduced [" not in ranks[r]                         # its AllReduce never completed


def test_a_rank_that_raises_under_msrun_is_named_with_its_error_and_log(ascendemu_kernel_cache, tmp_path):
    (tmp_path / "raises.py").write_text(RAISES)
    proc = run([sys.executable, "-m", "ascendemu", "msrun", "--worker_num", "3", "--local_worker_num", "3",
                "--log_dir", "logs", "--join", "True", "raises.py"], tmp_path,
               clean_env(ascendemu_kernel_cache, WHEN="after"))
    assert proc.returncode == 1, proc.stdout[-3000:]          # rank 1's status (python's for an exception)
    scheduler = (tmp_path / "logs" / "scheduler.log").read_text()
    assert re.search(r"\[ERROR\] worker rank 1 \(pid \d+\) exited with status 1; its log: logs/worker_1.log",
                     scheduler), scheduler
    assert f"[ERROR] rank 1 failed: {ERROR}" in scheduler
    assert "[WARNING] stopped worker rank(s) [0, 2]" in scheduler
    for r in (0, 2):         # each survivor reported rank 1's error in its log before it was stopped
        line = next(x for x in scheduler.splitlines() if x.startswith(f"[ERROR] worker rank {r}: "))
        assert f"HcclRemoteError: [21] AllReduce(sum) #1 on communicator 'hccl_world_group': rank 1 failed: " \
               f"{ERROR}" in line
        assert line.split(": ", 1)[1] in (tmp_path / "logs" / f"worker_{r}.log").read_text()


def test_a_rank_refused_before_its_script_runs_ends_the_job_instead_of_hanging_mpi_start_up(ascendemu_kernel_cache,
                                                                                             tmp_path):
    """Rank 1 (its own command line, an MPMD job) is refused by ``ascendemu run``'s argument check. A rank
    that exits before MPI_Init leaves the others in MPI's start-up forever (mpiexec stops a job only for a
    rank that exits after it), so the rank runner joins the world before it checks anything, and tells the
    others why it ended: they fail naming it, instead of waiting for it."""
    (tmp_path / "raises.py").write_text(RAISES)
    rank = [sys.executable, "-m", "ascendemu", "run", "--quiet"]
    proc = run([str(MPIEXEC), "-prepend-rank", "-n", "1", *rank, "raises.py", ":", "-n", "1", *rank, "--no-such-flag",
                "raises.py"], tmp_path, clean_env(ascendemu_kernel_cache, WHEN="after"))
    assert proc.returncode != 0
    ranks = by_rank(proc.stdout + proc.stderr)
    assert "unrecognized arguments: --no-such-flag" in ranks[1], ranks
    last = ranks[0].splitlines()[-1]          # rank 0 is told at once (not after HCCL_CONNECT_TIMEOUT's 120 s)
    assert last.startswith("ascendemu.errors.HcclRemoteError: "), ranks[0]
    assert "rank 1 failed: `ascendemu run` ended with status 2 before the script ran" in last


TRAINS = """
import sys
import numpy as np
import mindspore as ms
from mindspore import ops, Tensor
from mindspore.communication import init, get_rank
init()
x = Tensor(np.full(4, get_rank() + 1, np.float32))
# one write per line: the ranks share mpiexec's stdout, and print's separate writes of its arguments interleave
sys.stdout.write(f"reduced {ops.AllReduce()(x * x).asnumpy()}\\n"); sys.stdout.flush()
"""


def test_each_rank_writes_its_trace_and_rank_0_merges_them(ascendemu_kernel_cache, tmp_path):
    (tmp_path / "trains.py").write_text(TRAINS)
    proc = run([str(MPIEXEC), "-n", "2", sys.executable, "-m", "ascendemu", "run", "--quiet", "--trace", "t.json",
                "trains.py"], tmp_path, clean_env(ascendemu_kernel_cache))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("reduced [5. 5. 5. 5.]") == 2          # 1*1 + 2*2 on both ranks
    merged = json.loads((tmp_path / "t.json").read_text())
    assert merged["otherData"]["ranks"] == [0, 1]
    names = {e["pid"]: e["args"]["name"] for e in merged["traceEvents"] if e.get("name") == "process_name"}
    assert sorted(names) == [1, 2] and names[1].startswith("rank 0") and names[2].startswith("rank 1")
    for rank in (0, 1):
        own = json.loads((tmp_path / f"t.rank{rank}.json").read_text())        # the rank's own file
        assert own["otherData"]["ranks"] == [rank]
        mine = [e for e in merged["traceEvents"] if e.get("pid") == rank + 1]
        assert mine == own["traceEvents"]
        spans = {e["name"] for e in mine if e["ph"] == "X"}
        # its multiply kernel, built for its own device (the kernel_meta name ends with the device id)
        assert any(re.fullmatch(rf"mul_\d+_{rank}", s) for s in spans), spans
        assert "AllReduce(sum)" in spans


def test_a_failed_rank_still_contributes_its_trace(ascendemu_kernel_cache, tmp_path):
    (tmp_path / "raises.py").write_text(RAISES)
    proc = run([str(MPIEXEC), "-n", "2", sys.executable, "-m", "ascendemu", "run", "--quiet", "--trace", "t.json",
                "raises.py"], tmp_path, clean_env(ascendemu_kernel_cache, WHEN="after"))
    assert proc.returncode != 0
    merged = json.loads((tmp_path / "t.json").read_text())
    assert merged["otherData"]["ranks"] == [0, 1]
    spans = {(e["pid"], e["name"]) for e in merged["traceEvents"] if e["ph"] == "X"}
    assert any(pid == rank_pid(1) and re.fullmatch(r"mul_\d+_1", name) for pid, name in spans)


def test_read_trace_refuses_what_a_rank_did_not_write(tmp_path):
    good = {"traceEvents": [{"ph": "X", "pid": 1}], "otherData": {"ranks": [0]}}
    (tmp_path / "good.json").write_text(json.dumps(good))
    assert read_trace(tmp_path / "good.json") == good
    os.mkfifo(tmp_path / "fifo.json")                     # opening it would block: refused before that
    (tmp_path / "cut.json").write_text(json.dumps(good)[:-5])
    (tmp_path / "other.json").write_text(json.dumps({"traceEvents": [], "otherData": {"ranks": ["0"]}}))
    (tmp_path / "list.json").write_text("[1, 2]")
    for name, why in [("fifo.json", "not a regular file"), ("cut.json", "not a JSON trace"),
                      ("other.json", "not an ascendemu trace"), ("list.json", "not an ascendemu trace"),
                      ("missing.json", "cannot be read")]:
        with pytest.raises(InvalidFileError, match=why):
            read_trace(tmp_path / name)
    with pytest.raises(InvalidParamError, match=r"rank\(s\) \[0\] appear in two traces"):
        merge([good, good])


SINKS = """
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
from mindspore import nn
from mindspore.train import Model
from mindspore.communication import init
ms.set_context(mode=ms.GRAPH_MODE)
init()
rng = np.random.default_rng(0)
x, y = rng.standard_normal((64, 16)).astype(np.float32), rng.standard_normal((64, 4)).astype(np.float32)
net = nn.Dense(16, 4)
model = Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9))
model.train(2, ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(16), dataset_sink_mode=True)
"""


def test_msrun_dry_run_table_shows_the_sunk_step_time(ascendemu_kernel_cache, tmp_path):
    """A script training in dataset sink mode: each rank's row holds the simulated time per sunk step
    that its own summary's sink line reports, not '-'."""
    (tmp_path / "sinks.py").write_text(SINKS)
    proc = run([sys.executable, "-m", "ascendemu", "msrun", "--worker_num", "2", "--local_worker_num", "2",
                "--log_dir", "logs", "--join", "True", "--sim_level", "1", "sinks.py"], tmp_path,
               clean_env(ascendemu_kernel_cache))
    assert proc.returncode == 0, proc.stdout[-3000:]
    table = proc.stdout[proc.stdout.index("DryRun (MS_SIMULATION_LEVEL=1) of 2 rank(s)"):]
    rows = [line.split() for line in table.splitlines()[2:4]]
    for row in rows:
        log = (tmp_path / "logs" / f"worker_{row[0]}.log").read_text()
        sunk = re.search(r"TrainOneStepCell \[O\d\] dataset sink mode: .*simulated device time (\d+\.\d+) ms/step", log)
        assert sunk, log
        assert row[3:5] == [sunk.group(1), "ms"]
