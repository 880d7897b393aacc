"""mindspore.communication and the collective primitives: two real ranks under mpiexec (PyNative and
GRAPH_MODE with backward rules, each checked against numpy on every rank, bitwise identical across
ranks, collectives on their own stream), and MindSpore's errors in a world of one."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

import ascendemu.frontend as ms
from ascendemu.errors import ContextNullError, HcclParamError, InvalidParamError
from ascendemu.frontend import ops
from ascendemu.frontend.communication import comm_func, management

from ascendemu.cli.pytest_plugin import emulated_device
from test_collectives import mpiexec

WORKER = Path(__file__).parent / "fixtures" / "ranks" / "frontend_worker.py"


def test_two_ranks_run_the_primitives_and_their_gradients_like_numpy(ascendemu_kernel_cache, tmp_path):
    proc, ranks = mpiexec(2, WORKER, tmp_path, env={"MS_COMPILER_CACHE_PATH": str(ascendemu_kernel_cache)}, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0 and sorted(ranks) == [0, 1], proc.stderr[-3000:]
    for name in ("all_reduce", "all_reduce_max", "all_gather", "broadcast", "comm_func", "group_all_reduce"):
        assert ranks[0]["digests"][name] == ranks[1]["digests"][name], name
    assert ranks[1]["digests"]["recv_1"] and ranks[0]["digests"]["recv_0"]
    # every captured graph ran its collective on a stream of its own, ordered against compute by events
    for rank in ranks.values():
        assert rank["streams"] and all(comm and comm[0] not in compute and (events or not compute)
                                       for comm, compute, events in rank["streams"])


def unset(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Unset ``names`` for the test and put their values back afterwards, also when they were unset and
    the test (init()) set them: delenv alone records nothing for a variable that is not set."""
    for name in names:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


@pytest.fixture
def world_of_one(ascendemu_kernel_cache, monkeypatch):
    # init() exports RANK_ID/RANK_SIZE/DEVICE_ID as MindSpore does; monkeypatch puts them back afterwards
    unset(monkeypatch, "RANK_ID", "RANK_SIZE", "DEVICE_ID", "PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE",
          "MS_SIMULATION_LEVEL")
    management.release()
    with emulated_device(ascendemu_kernel_cache):
        yield monkeypatch
        management.release()


def test_a_world_of_one_and_mindspores_errors(world_of_one):
    with pytest.raises(ContextNullError, match="has not been initialized; call mindspore.communication.init"):
        management.get_rank()
    with pytest.raises(RuntimeError):                   # MindSpore raises RuntimeError here too
        management.get_group_size()
    management.init()
    assert (management.get_rank(), management.get_group_size()) == (0, 1)
    assert (management.get_local_rank(), management.get_local_rank_size()) == (0, 1)
    assert management.GlobalComm.INITED and management.GlobalComm.WORLD_COMM_GROUP == "hccl_world_group"
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    assert np.array_equal(ops.AllReduce()(x).asnumpy(), x.asnumpy())
    assert np.array_equal(comm_func.all_gather_into_tensor(x)[0].asnumpy(), x.asnumpy())
    with pytest.raises(ValueError, match="group 'group_a' does not exist"):
        management.get_rank("group_a")
    with pytest.raises(TypeError, match="For 'create_group', the argument 'rank_ids' must be type of list"):
        management.create_group("g", (0,))
    with pytest.raises(ValueError, match="List rank_ids in Group g has duplicate data!"):
        management.create_group("g", [0, 0])
    with pytest.raises(ValueError, match="does not support group 'hccl_world_group'"):
        management.create_group("hccl_world_group", [0])
    management.create_group("g", [0])
    assert management.get_group_rank_from_world_rank(0, "g") == 0 and management.get_process_group_ranks("g") == [0]
    with pytest.raises(ValueError, match="world rank 3 is not in group 'g'"):
        management.get_group_rank_from_world_rank(3, "g")
    management.destroy_group("g")
    with pytest.raises(TypeError, match="For 'AllReduce', the 'op' must be str"):
        ops.AllReduce(op=1)
    with pytest.raises(ValueError, match="For 'AlltoAll', the 'split_count' must be equal to the group size 1"):
        ops.AlltoAll(2, 0, 0)
    with pytest.raises(TypeError, match="For 'Broadcast', the 'input_x' must be a tuple"):
        ops.Broadcast(0)(x)
    with pytest.raises(InvalidParamError, match="backend_name='nccl' is not available"):
        management.init("nccl")


def test_more_ranks_need_a_launcher_or_dry_run(world_of_one):
    world_of_one.setenv("RANK_SIZE", "8")
    world_of_one.setenv("RANK_ID", "3")
    with pytest.raises(HcclParamError, match=r"a world of 8 ranks needs one process per rank: start them with "
                                             r"`mpiexec -n 8 ascendemu run script.py`.*simulate rank 3 alone"):
        management.init()
    world_of_one.setenv("RANK_SIZE", "1")
    with pytest.raises(InvalidParamError, match="RANK_ID=3 is not a rank of a world of RANK_SIZE=1"):
        management.init()
    world_of_one.setenv("RANK_SIZE", "two")
    with pytest.raises(InvalidParamError, match="RANK_SIZE='two' must be an integer"):
        management.init()
    assert not management.GlobalComm.INITED


def test_dry_run_simulates_one_rank_of_eight(ascendemu_kernel_cache, monkeypatch):
    unset(monkeypatch, "PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE", "DEVICE_ID")
    monkeypatch.setenv("RANK_SIZE", "8")
    monkeypatch.setenv("RANK_ID", "3")
    management.release()
    with emulated_device(ascendemu_kernel_cache, dry_run=True, trace=True) as ex:
        management.init()
        assert (management.get_rank(), management.get_group_size(), management.get_local_rank()) == (3, 8, 3)
        y = ops.AllGather()(ms.Tensor(np.ones((4, 256), np.float32)))
        assert y.shape == (32, 256)
        (span,) = [e for e in ex.rt.trace_events() if e.get("cat") == "collective"]
        n = 32 * 256 * 4                                        # bytes gathered; level 1 then level 0
        want = (10e-6 + n / 4 / 2 / 12.5e9) + (5e-6 + n / 4 / 30e9)
        assert span["dur"] == pytest.approx(want * 1e6, rel=0.01)
        management.release()
