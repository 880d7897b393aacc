"""Launching ranks as a user does: ``mpiexec -n 2 ascendemu run`` and ``ascendemu msrun``.

Each launch is a real process tree (mpiexec of the mpich wheel, the msrun scheduler, one supervisor
and one ``ascendemu run`` per rank) over the session's warm kernel cache. What is checked is what
MindSpore documents or does: each rank's RANK_ID / RANK_SIZE / DEVICE_ID and rank_N directory,
msrun's log files and flag errors, a failed or hung worker named with its status and log within
``--cluster_time_out``, and the DryRun table of every rank.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.cli import msrun
from ascendemu.cli.cluster import describe_status, dryrun_figures, exit_code, find_mpiexec
from ascendemu.ranks import DYNAMIC_CLUSTER_WARNING, apply_mpi_place, mpi_place
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError

TIMEOUT_S = SUBPROCESS_TIMEOUT_S
LAUNCH_VARS = ("RANK_ID", "RANK_SIZE", "DEVICE_ID", "MS_ROLE", "MS_SIMULATION_LEVEL", "MS_NODE_ID", "MS_WORKER_NUM")

# prints where it stands (one atomic line, also kept in done_<rank>: mpich's hydra forwards a rank's stdout
# best-effort, and a CI run under load once lost rank 0's line), runs one kernel (the rank's kernel_meta), and exits
# with EXIT_<rank> if set, once every rank has printed (so a failing rank never stops one that has not reported yet)
REPORT = """
import os, sys, time
import numpy as np
import mindspore as ms
from mindspore import Tensor
out = (Tensor(np.ones((4,), np.float32)) + Tensor(np.ones((4,), np.float32))).asnumpy()
line = " ".join(["place", *(os.environ.get(k, "-") for k in ("RANK_ID", "RANK_SIZE", "DEVICE_ID", "MS_ROLE",
                 "MS_NODE_ID", "MS_WORKER_NUM", "MS_SCHED_HOST", "MS_SCHED_PORT", "MS_TOPO_TIMEOUT")), str(out.sum())])
os.write(1, (line + "\\n").encode())     # one write: the ranks share the pipe, print's pieces could interleave
open("done_" + os.environ["RANK_ID"], "w").write(line + "\\n")
status = int(os.environ.get("EXIT_" + os.environ["RANK_ID"], "0"))
while status and not all(os.path.exists(f"done_{r}") for r in range(int(os.environ["RANK_SIZE"]))):
    time.sleep(0.05)
sys.exit(status)
"""


def clean_env(cache_root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in LAUNCH_VARS and not k.startswith(("PMI_", "OMPI_", "MPI_", "PYTEST_"))}
    return {**env, "MS_COMPILER_CACHE_PATH": str(cache_root), **extra}


def launch(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=TIMEOUT_S)


def ascendemu_msrun(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return launch([sys.executable, "-m", "ascendemu", "msrun", *args], cwd, env)


def places(text: str) -> list[list[str]]:
    return [line.split()[1:] for line in text.splitlines() if line.startswith("place ")]


# ------------------------------------------------------------------------------- environment mapping

@pytest.mark.parametrize("environ, place", [
    ({"PMI_RANK": "3", "PMI_SIZE": "8", "MPI_LOCALRANKID": "3"}, ("3", "8", "3")),
    ({"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "16", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}, ("5", "16", "1")),
    ({"PMI_RANK": "2", "PMI_SIZE": "4"}, ("2", "4", "2")),                      # no local rank: one node
    ({"PMI_RANK": "1", "PMI_SIZE": "2", "RANK_ID": "7", "RANK_SIZE": "9"}, ("1", "2", "1")),   # MPI's numbers win
])
def test_mpi_environment_becomes_mindspores(environ, place):
    env = dict(environ)
    apply_mpi_place(env)
    assert (env["RANK_ID"], env["RANK_SIZE"], env["DEVICE_ID"]) == place


def test_dynamic_cluster_keeps_its_numbers(capsys):
    env = {"PMI_RANK": "1", "PMI_SIZE": "2", "MS_ROLE": "MS_WORKER", "RANK_ID": "0", "RANK_SIZE": "2"}
    apply_mpi_place(env)
    assert (env["RANK_ID"], env["RANK_SIZE"]) == ("0", "2")
    assert DYNAMIC_CLUSTER_WARNING in capsys.readouterr().err
    assert mpi_place({}) is None and apply_mpi_place({}) is None
    with pytest.raises(InvalidParamError, match="PMI_SIZE"):
        mpi_place({"PMI_RANK": "2", "PMI_SIZE": "2"})


def test_mpiexec_gives_each_rank_its_place_and_kernel_meta(ascendemu_kernel_cache, tmp_path):
    (tmp_path / "report.py").write_text(REPORT)
    proc = launch([find_mpiexec(), "-n", "2", sys.executable, "-m", "ascendemu", "run", "report.py"], tmp_path,
                  clean_env(ascendemu_kernel_cache, RANK_ID="0"))         # a stale RANK_ID does not win over MPI's
    assert proc.returncode == 0, proc.stderr
    reported = [places((tmp_path / f"done_{rank}").read_text()) for rank in (0, 1)]
    assert reported == [[["0", "2", "0", "-", "-", "-", "-", "-", "-", "8.0"]],
                        [["1", "2", "1", "-", "-", "-", "-", "-", "-", "8.0"]]]
    for rank in (0, 1):      # each rank's kernel, for its own device, in its own directory
        assert list((ascendemu_kernel_cache / f"rank_{rank}" / "kernel_meta").glob(f"add_*_{rank}.o"))


# ------------------------------------------------------------------------------------------- msrun

@pytest.mark.parametrize("argv, message", [
    (["--sim_level", "5", "x.py"], "argument --sim_level: invalid choice: 5 (choose from 0, 1, 2, 3)"),
    (["--join", "yes", "x.py"], "argument --join: invalid literal_eval value: 'yes'"),
    (["--join", "x.py"], "argument --join: invalid literal_eval value: 'x.py'"),     # --join takes a value
    (["--worker_num", "two", "x.py"], "argument --worker_num: invalid int value: 'two'"),
    (["--bind_core", '{"dev0": ["0-1"]}', "x.py"], "Key 'dev0' must be in format 'deviceX' (X ≥ 0)."),
    (["--bind_core", '{"device0": ["0:1"]}', "x.py"],
     "CPU range '0:1' in '['0:1']' should be in format 'cpuidX-cpuidY'."),
])
def test_msrun_flag_errors_are_msruns(argv, message, capsys):
    assert msrun.main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, error, message", [
    (["--worker_num", "0", "x.py"], InvalidParamError, "worker_num must be greater than 0, but got 0."),
    (["--worker_num", "2", "--local_worker_num", "4", "x.py"], InvalidParamError,
     "Total worker number is 2, but got exceeded local worker number: 4."),
    (["--log_dir", "logs/", "x.py"], InvalidParamError, "The 'logs/' cannot be a directory path."),
    (["--log_dir", "lo gs", "x.py"], InvalidParamError, "The 'lo gs' is illegal, it must be match regular"),
    (["--worker_num", "8", "--local_worker_num", "4", "--node_rank", "0", "x.py"], FeatureNotSupportedError,
     "mpiexec -f hostfile -n 8 ascendemu run x.py"),
    (["--sim_level", "1", "--sim_rank_id", "8", "--worker_num", "8", "x.py"], InvalidParamError,
     "sim_rank_id 8 is not a rank of worker_num 8"),
])
def test_msrun_value_errors(argv, error, message):
    with pytest.raises(error) as info:
        msrun.main(argv)
    assert message in info.value.message


def test_msrun_join_logs_and_worst_status(ascendemu_kernel_cache, tmp_path):
    (tmp_path / "report.py").write_text(REPORT)
    env = clean_env(ascendemu_kernel_cache, EXIT_1="3")
    proc = ascendemu_msrun(tmp_path, env, "--worker_num", "2", "--local_worker_num", "2", "--log_dir", "logs",
                           "--master_port", "9123", "--cluster_time_out", "60", "--join", "True", "report.py")
    assert proc.returncode == 3, proc.stdout + proc.stderr              # the worst worker status
    logs = tmp_path / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["scheduler.log", "worker_0.log", "worker_1.log"]
    for rank in (0, 1):     # msrun's variables (MS_ROLE, MS_NODE_ID, MS_WORKER_NUM, the scheduler address)
        assert places((logs / f"worker_{rank}.log").read_text()) == [
            [str(rank), "2", str(rank), "MS_WORKER", str(rank), "2", "127.0.0.1", "9123", "60", "8.0"]]
    scheduler = (logs / "scheduler.log").read_text()
    assert ("Start worker process with rank id:1, log file:logs/worker_1.log. Environment variable [RANK_ID=1] "
            "is exported.") in scheduler
    assert "worker rank 1" in scheduler and "exited with status 3; its log: logs/worker_1.log" in scheduler
    assert "Distributed job exited with exception. Please check logs in directory: logs." in scheduler
    assert "exited with status 3; its log: logs/worker_1.log" in proc.stdout     # --join shows the scheduler


KILLED = """
import os, signal, time
if os.environ["RANK_ID"] == "1":
    print("rank 1 dies now", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(600)
"""

HUNG = """
import os, time
if os.environ["RANK_ID"] == "1":
    time.sleep(600)
"""


def test_killed_worker_is_named_and_the_others_stopped(ascendemu_kernel_cache, tmp_path):
    (tmp_path / "killed.py").write_text(KILLED)
    proc = ascendemu_msrun(tmp_path, clean_env(ascendemu_kernel_cache), "--worker_num", "2", "--local_worker_num", "2",
                           "--log_dir", "logs", "--join", "True", "killed.py")
    # rank 0 would sleep 600 s: it was stopped as soon as rank 1 died (else the subprocess times out)
    assert proc.returncode == 137
    assert re.search(r"worker rank 1 \(pid \d+\) exited with status 137 \(killed by signal 9, SIGKILL\); "
                     r"its log: logs/worker_1.log", proc.stdout)
    assert "stopped worker rank(s) [0]" in proc.stdout and "rank 1 dies now" in proc.stdout


def test_hung_worker_is_named_after_the_cluster_time_out(ascendemu_kernel_cache, tmp_path):
    (tmp_path / "hung.py").write_text(HUNG)
    proc = ascendemu_msrun(tmp_path, clean_env(ascendemu_kernel_cache), "--worker_num", "2", "--local_worker_num", "2",
                           "--log_dir", "logs", "--join", "True", "--cluster_time_out", "2", "hung.py")
    assert proc.returncode == 1
    assert re.search(r"worker rank 1 \(pid \d+\) is still running 2 s \(--cluster_time_out\) after worker rank 0 "
                     r"finished: .*; stopped it. Its log: logs/worker_1.log", proc.stdout)


KILLED_MID_STEP = """
import os, signal
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor
from mindspore.communication import init, get_rank
ms.set_context(mode=ms.GRAPH_MODE)
init()


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(8, 8)
        self.all_reduce = ops.AllReduce()

    def construct(self, x):
        return self.all_reduce(self.dense(x))


net = Net()
for step in range(1000):
    net(Tensor(np.ones((4, 8), np.float32))).asnumpy()
    if step == 2 and get_rank() == 1:            # the others are already in the next step's AllReduce
        os.kill(os.getpid(), signal.SIGKILL)
"""


def test_rank_killed_mid_step_ends_every_rank_with_hccls_error(ascendemu_kernel_cache, tmp_path):
    """Three ranks train with an AllReduce per step; rank 1 is killed. The two survivors, waiting for it in
    the AllReduce, end with HCCL's error naming rank 1 within HCCL_EXEC_TIMEOUT (the launcher gives them
    that long, then stops them), msrun returns rank 1's status and names it, and the survivors' kernel
    caches stay valid."""
    (tmp_path / "killed.py").write_text(KILLED_MID_STEP)
    t0 = time.monotonic()
    proc = ascendemu_msrun(tmp_path, clean_env(ascendemu_kernel_cache, HCCL_EXEC_TIMEOUT="6"), "--worker_num", "3",
                           "--local_worker_num", "3", "--log_dir", "logs", "--join", "True",
                           "--cluster_time_out", "30", "killed.py")
    assert time.monotonic() - t0 < 30
    assert proc.returncode == 137, proc.stdout
    assert re.search(r"worker rank 1 \(pid \d+\) exited with status 137 \(killed by signal 9, SIGKILL\); "
                     r"its log: logs/worker_1.log", proc.stdout)
    scheduler = (tmp_path / "logs" / "scheduler.log").read_text()
    for rank in (0, 2):      # each survivor's HCCL error, in its log and in the launcher's report
        error = next(line for line in scheduler.splitlines() if line.startswith(f"[ERROR] worker rank {rank}: "))
        assert "HcclTimeoutError" in error or "HcclRemoteError" in error
        assert "rank(s) [1] did not arrive within 6 s" in error
        assert error.split(": ", 1)[1] in (tmp_path / "logs" / f"worker_{rank}.log").read_text()
    for rank in (0, 2):
        verify = launch([sys.executable, "-m", "ascendemu", "cache", "verify", "--root", str(ascendemu_kernel_cache),
                         "--rank", str(rank)], tmp_path, clean_env(ascendemu_kernel_cache))
        assert verify.returncode == 0, verify.stdout + verify.stderr


WAITS = """
import os, time
while not os.path.exists("go"):
    time.sleep(0.05)
print("rank", os.environ["RANK_ID"], "went", flush=True)
"""


def test_msrun_without_join_returns_at_once(ascendemu_kernel_cache, tmp_path):
    (tmp_path / "waits.py").write_text(WAITS)
    proc = ascendemu_msrun(tmp_path, clean_env(ascendemu_kernel_cache), "--worker_num", "2", "--local_worker_num", "2",
                           "--log_dir", "logs", "waits.py")
    assert proc.returncode == 0           # the workers are still waiting for "go": msrun did not wait for them
    assert proc.stdout.count("Start worker process with rank id:") == 2
    (tmp_path / "go").touch()
    scheduler = tmp_path / "logs" / "scheduler.log"
    deadline = time.monotonic() + TIMEOUT_S
    while "All workers successfully exit!" not in scheduler.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "All workers successfully exit!" in scheduler.read_text()
    assert "rank 1 went" in (tmp_path / "logs" / "worker_1.log").read_text()


SIMULATED = """
import os
import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor
from mindspore.communication import init
ms.set_context(mode=ms.GRAPH_MODE)
init()                                               # a rank simulated alone joins a simulated world
rank = int(os.environ["RANK_ID"])
print("place", os.environ["RANK_ID"], os.environ["RANK_SIZE"], os.environ["MS_SIMULATION_LEVEL"],
      os.environ.get("MS_ROLE", "-"), flush=True)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(64 * (rank + 1), 1024)   # each rank holds a larger layer than the one before
        self.all_reduce = ops.AllReduce()
        self.reduce = not os.environ.get("NO_REDUCE")

    def construct(self, x):
        y = self.dense(x)
        return self.all_reduce(y) if self.reduce else y


net = Net()
for _ in range(3):
    net(Tensor(np.ones((256, 64 * (rank + 1)), np.float32)))
"""
ALL_REDUCE_BYTES = 256 * 1024 * 4


def test_msrun_sim_level_table_of_every_rank(ascendemu_kernel_cache, tmp_path):
    """Every rank in a DryRun, one after another: the table holds each rank's own figures, its step
    time includes the AllReduce as the interconnect model prices it, and each rank writes MindSpore's
    execution order files with the collective's row."""
    from ascendemu.device.interconnect import choose_algorithm, reduction_gamma
    from ascendemu.device.spec import get_spec

    (tmp_path / "sim.py").write_text(SIMULATED)
    env = clean_env(ascendemu_kernel_cache)
    proc = ascendemu_msrun(tmp_path, env, "--worker_num", "4", "--local_worker_num", "4", "--log_dir", "logs",
                           "--join", "True", "--sim_level", "1", "sim.py")
    assert proc.returncode == 0, proc.stdout
    assert sorted(places(proc.stdout)) == [[str(r), "4", "1", "-"] for r in range(4)]   # no MS_ROLE in a DryRun
    rows = table_rows(proc.stdout, 4)
    assert [row[0] for row in rows] == ["0", "1", "2", "3"]
    for row in rows:         # each rank's figures are the ones its own DryRun summary printed
        log = (tmp_path / "logs" / f"worker_{row[0]}.log").read_text()
        assert dryrun_figures(log) == {"used": row[1], "actual": row[2], "step": f"{row[3]} ms",
                                       "comm": f"{row[5]} ms", "exposed": f"{row[7]} ms"}
    used = [float(row[1].rstrip("M")) for row in rows]
    assert used == sorted(used) and len(set(used)) == 4                 # larger layers, larger peaks
    for rank in range(4):    # MindSpore writes the execution order of every rank in a DryRun
        order = (tmp_path / f"rank_{rank}" / "execute_order" / "execute_order.csv").read_text().splitlines()
        assert order[0] == "index,node_name,logic_id,stream_id,node_info,event_id,group"
        assert order[1].startswith('"1","Default/dense-Dense/MatMul')
        reduce_row = next(line for line in order if "AllReduce" in line)
        comm = (tmp_path / f"rank_{rank}" / "execute_order" / "comm_execute_order.csv").read_text().splitlines()
        assert comm == ["index,group,comm_rank,primitive,src_rank,dest_rank,root_rank,input_shape,input_type,"
                        "output_shape,output_type,input_size,output_size",
                        f'{reduce_row.split(",")[0]},"hccl_world_group","0 1 2 3","AllReduce","","","",'
                        f'"(256, 1024)","Float32","(256, 1024)","Float32","{ALL_REDUCE_BYTES}","{ALL_REDUCE_BYTES}"']
        assert reduce_row.endswith('"hccl_world_group"')
    # rank 3 alone (--sim_rank_id), without the AllReduce: the step is shorter by the modelled collective
    # (a mesh of 4 on one HCCS group, by the formula) and the peak lower by the AllReduce's output
    one = ascendemu_msrun(tmp_path, {**env, "NO_REDUCE": "1"}, "--worker_num", "4", "--local_worker_num", "4",
                          "--log_dir", "one", "--join", "True", "--sim_level", "1", "--sim_rank_id", "3", "sim.py")
    assert one.returncode == 0 and places(one.stdout) == [["3", "4", "1", "-"]]
    [alone] = table_rows(one.stdout, 1)
    spec = get_spec()
    modelled_ms = choose_algorithm(range(4), spec).all_reduce(ALL_REDUCE_BYTES, reduction_gamma(spec, "float32")) * 1e3
    assert float(rows[3][3]) - float(alone[3]) == pytest.approx(modelled_ms, abs=0.0015)   # table rounds to 1 us
    assert float(rows[3][1].rstrip("M")) - float(alone[1].rstrip("M")) == pytest.approx(1.0, abs=0.01)


def table_rows(text: str, ranks: int) -> list[list[str]]:
    """The rows of msrun's DryRun table in ``text``."""
    table = text[text.index(f"DryRun (MS_SIMULATION_LEVEL=1) of {ranks} rank(s)"):]
    return [line.split() for line in table.splitlines()[2:2 + ranks]]


def test_status_words():
    assert (exit_code(-9), exit_code(3)) == (137, 3)
    assert describe_status(-15) == "143 (killed by signal 15, SIGTERM)"


# ------------------------------------------------------------------ one build per kernel per machine

BUILDS = """
import numpy as np
import mindspore as ms
from mindspore import Tensor, ops
a = np.arange(15, dtype=np.float32).reshape(3, 5) - 7
b = np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)
assert np.array_equal((Tensor(a) * Tensor(b)).asnumpy(), a * b)
assert np.array_equal(ops.neg(Tensor(b)).asnumpy(), -b)
print("ok", flush=True)
"""


def test_ranks_on_one_machine_build_each_kernel_once(tmp_path):
    """Four ranks start together on a cold cache root and need the same two kernels: each kernel is
    built by one rank; the others wait on its machine-wide lock and import the entry into their own
    kernel_meta (each for its own device), where it verifies, authenticates and computes as numpy."""
    root = tmp_path / "cache"
    (tmp_path / "builds.py").write_text(BUILDS)
    procs = [subprocess.Popen([sys.executable, "-m", "ascendemu", "run", "--quiet", "builds.py"], cwd=tmp_path,
                              env=clean_env(root, RANK_ID=str(r), DEVICE_ID=str(r)), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for r in range(4)]
    outs = [p.communicate(timeout=TIMEOUT_S)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, outs
    how: dict[str, list[str]] = {}
    for r in range(4):
        for line in (root / f"rank_{r}" / "kernel_meta" / ".build.log").read_text().splitlines():
            status, name = line.split()[2:4]
            assert name.endswith(f"_{r}")                               # the rank's own device
            how.setdefault(name.rsplit("_", 1)[0], []).append(status)
    assert len(how) == 2
    for statuses in how.values():
        assert sorted(statuses) == ["built", "imported", "imported", "imported"]
    verify = launch([sys.executable, "-m", "ascendemu", "cache", "verify", "--root", str(root)], tmp_path,
                    clean_env(root))
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_kernel_for_another_device_is_the_same_object_renamed():
    """What makes importing sound: the object built for device 1 is the one built for device 0 with the
    kernel's name replaced (both really built and compared byte for byte)."""
    from ascendemu.kernels.binary import build_binary, build_info, retarget
    from ascendemu.kernels.signature import OpSignature

    sig = OpSignature.make("Sub", [((6,), "float32"), ((6,), "float32")])
    zero, one = build_binary(sig, 0), build_binary(sig, 1)
    moved = retarget(zero, build_info(sig, 1))
    assert zero.obj != one.obj and moved.obj == one.obj and moved.json == one.json and moved.info == one.info
