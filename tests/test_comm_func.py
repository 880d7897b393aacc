"""mindspore.ops' PyTorch-style communication functions (ops.function.comm_func, also
mindspore.mint.distributed): real ranks under mpiexec, each result checked against numpy on every rank
and bitwise identical across ranks; a world of one in process (every collective an identity, in place
as MindSpore writes them), GRAPH_MODE, MindSpore's signatures and errors, and objects as JSON only."""
from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

import ascendemu.frontend as ms
from ascendemu.cli.pytest_plugin import emulated_device
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import mint, nn, ops
from ascendemu.frontend.api_coverage import load_table, rows_signature
from ascendemu.frontend.communication import management
from ascendemu.frontend.ops.function import array_func, comm_func
from test_collectives import mpiexec
from test_communication import unset

WORKER = Path(__file__).parent / "fixtures" / "ranks" / "comm_func_worker.py"


@pytest.mark.parametrize("n", [2, 3])
def test_ranks_run_the_functions_like_numpy(n, ascendemu_kernel_cache, tmp_path):
    proc, ranks = mpiexec(n, WORKER, tmp_path, env={"MS_COMPILER_CACHE_PATH": str(ascendemu_kernel_cache)},
                          timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0 and sorted(ranks) == list(range(n)), proc.stderr[-3000:]
    for name in ("all_reduce", "all_reduce_avg", "all_gather_into_tensor", "broadcast", "group_all_reduce",
                 *(f"all_gather_{i}" for i in range(n))):
        assert len({ranks[r]["digests"][name] for r in range(n)}) == 1, name
    assert ranks[0]["digests"]["batch_isend_irecv"] and ranks[1]["digests"]["recv_1"]


@pytest.fixture
def world_of_one(ascendemu_kernel_cache, monkeypatch):
    unset(monkeypatch, "RANK_ID", "RANK_SIZE", "DEVICE_ID", "PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE",
          "MS_SIMULATION_LEVEL")
    management.release()
    with emulated_device(ascendemu_kernel_cache):
        yield monkeypatch
        comm_func.set_comm_ops_inplace(True)
        management.release()


def T(a, dtype=np.float32):
    return ms.Tensor(np.asarray(a, dtype))


X = np.arange(6, dtype=np.float32).reshape(3, 2) - 2.5


def test_process_groups_in_a_world_of_one(world_of_one):
    assert ops.is_available() and not ops.is_initialized()
    assert ops.get_rank() == -1 and ops.get_world_size() == -1          # MindSpore warns and answers -1
    ops.init_process_group(world_size=1, rank=0)
    assert ops.is_initialized() and (ops.get_rank(), ops.get_world_size()) == (0, 1)
    assert ops.new_group() == "hccl_world_group"
    group = ops.new_group([0])
    assert group == "hccl_1_b6589fc6ab0dc82cf12099d1c2d40ab994e8410c"     # "hccl_<n>_" + sha1("0")
    assert ops.get_process_group_ranks(group) == [0] and ops.get_backend(group) == "hccl" == ops.get_backend()
    assert ops.get_global_rank(group, 0) == 0 == ops.get_group_rank(group, 0) == ops.get_global_rank(None, 0)
    ops.destroy_process_group(group)
    with pytest.raises(ValueError, match="does not exist"):
        ops.get_process_group_ranks(group)
    with pytest.raises(TypeError, match="ranks must be list"):
        ops.new_group((0,))
    with pytest.raises(TypeError, match="The global_rank argument must be integer"):
        ops.get_group_rank(None, "0")
    with pytest.raises(ValueError, match="world_size is wrong"):
        ops.init_process_group(world_size=2)
    ops.destroy_process_group()
    assert not ops.is_initialized()
    with pytest.raises(ValueError, match="Only support hccl"):
        ops.init_process_group("nccl")
    with pytest.raises(InvalidParamError, match="TCP rendezvous.*is not emulated; launch the ranks with `mpiexec"):
        ops.init_process_group(init_method="tcp://127.0.0.1:1234", world_size=1, rank=0)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_every_collective_of_a_world_of_one_is_an_identity_written_in_place(world_of_one, dtype):
    ops.init_process_group()
    x = X.astype(dtype) if dtype == np.float32 else np.arange(6, dtype=dtype).reshape(3, 2)
    for op in ("sum", "prod", "min", "max", "avg"):
        t = T(x, dtype)
        assert ops.all_reduce(t, op) is None and np.array_equal(t.asnumpy(), x), op
    t = T(x, dtype)
    handle = ops.all_reduce(t, async_op=True)
    assert isinstance(handle, comm_func.CommHandle) and handle.wait() is None
    zeros = lambda shape=x.shape: T(np.zeros(shape), dtype)      # noqa: E731
    cases = {
        "all_gather_into_tensor": lambda o: ops.all_gather_into_tensor(o, T(x, dtype)),
        "reduce_scatter_tensor": lambda o: ops.reduce_scatter_tensor(o, T(x, dtype), "min"),
        "broadcast": lambda o: ops.broadcast(o, 0),
        "scatter_tensor": lambda o: ops.scatter_tensor(o, T(x, dtype)),
        "gather_into_tensor": lambda o: ops.gather_into_tensor(o, T(x, dtype)),
        "all_to_all_single": lambda o: ops.all_to_all_single(o, T(x, dtype), [3], [3]),
        "all_gather_into_tensor_uneven": lambda o: ops.all_gather_into_tensor_uneven(o, T(x, dtype), [3]),
        "reduce_scatter_tensor_uneven": lambda o: ops.reduce_scatter_tensor_uneven(o, T(x, dtype), [3], "max"),
        "all_to_all_v_c": lambda o: ops.all_to_all_v_c(o, T(x, dtype), [6]),
        "mint.scatter": lambda o: mint.distributed.scatter(o, [T(x, dtype)]),
        "mint.reduce_scatter": lambda o: mint.distributed.reduce_scatter(o, [T(x, dtype)]),
    }
    for name, run in cases.items():
        out = zeros() if name != "broadcast" else T(x, dtype)
        run(out)
        assert np.array_equal(out.asnumpy(), x) and out.dtype == T(x, dtype).dtype, name
    lists = {"all_gather": lambda o: mint.distributed.all_gather(o, T(x, dtype)),
             "gather": lambda o: mint.distributed.gather(T(x, dtype), o),
             "all_to_all": lambda o: ops.all_to_all(o, [T(x, dtype)])}
    for name, run in lists.items():
        outs = [zeros()]
        assert run(outs) is None and np.array_equal(outs[0].asnumpy(), x), name
    got = zeros()
    assert ops.batch_isend_irecv([ops.P2POp("isend", T(x, dtype), 0), ops.P2POp(ops.irecv, got, 0)])[0].wait() is None
    assert ops.barrier() is None and ops.barrier(async_op=True).wait() is None


def test_out_of_place_mode_returns_the_outputs(world_of_one):
    ops.init_process_group()
    comm_func.set_comm_ops_inplace(False, ["all_reduce", "all_to_all", "all_to_all_single", "broadcast"])
    t = T(X)
    out, handle = ops.all_reduce(t, "max")
    assert np.array_equal(out.asnumpy(), X) and handle is None and t is not out
    (got,), handle = ops.all_to_all([(2, 3)], [T(X)], async_op=True)
    assert np.array_equal(got.asnumpy(), X.reshape(2, 3)) and isinstance(handle, comm_func.CommHandle)
    out, _ = ops.all_to_all_single(None, T(X))
    assert np.array_equal(out.asnumpy(), X)
    with pytest.raises(ValueError, match="non-inplace mode is currently not supported"):
        ops.broadcast(T(X), 0)
    with pytest.raises(ValueError, match="must be correct, but got all_reduce_x"):
        comm_func.set_comm_ops_inplace(True, ["all_reduce_x"])
    with pytest.raises(TypeError, match="'is_enable' must be type of bool"):
        comm_func.set_comm_ops_inplace(1)


def test_objects_travel_as_json_and_nothing_else(world_of_one):
    ops.init_process_group()
    objs = [None]
    ops.all_gather_object(objs, {"a": [1, 2.5, None], "b": "x"})
    assert objs == [{"a": [1, 2.5, None], "b": "x"}]
    objs = [(1, 2), "s"]
    ops.broadcast_object_list(objs)
    assert objs == [(1, 2), "s"]                      # the source keeps its own objects
    mine, gathered = [None], [None]
    ops.scatter_object_list(mine, [[True, False]])
    ops.gather_object({"k": 1}, gathered)
    assert mine == [[True, False]] and gathered == [{"k": 1}]
    with pytest.raises(TypeError, match="must be JSON data.*not pickled"):
        ops.all_gather_object([None], {1, 2})
    with pytest.raises(TypeError, match="must be JSON data"):
        ops.broadcast_object_list([np.zeros(2)])
    with pytest.raises(ValueError, match="more than MAX_OBJECT_BYTES"):
        ops.all_gather_object([None], "x" * comm_func.MAX_OBJECT_BYTES)
    with pytest.raises(ValueError, match="announced object sizes"):
        comm_func._checked_sizes("recv_object_list", T([4, comm_func.MAX_OBJECT_BYTES + 1], np.int32))
    with pytest.raises(ValueError, match="not serialised JSON"):
        comm_func._decode("recv_object_list", T([0x80, 0x81], np.int32), 2)
    with pytest.raises(TypeError, match="len of argument object_list must be equal to group rank size"):
        ops.all_gather_object([None, None], 1)


def test_mindspores_argument_errors(world_of_one):
    ops.init_process_group()
    x = T(X)
    with pytest.raises(TypeError, match="For all_reduce, the input tensor must be tensor"):
        ops.all_reduce(X)
    with pytest.raises(TypeError, match="op value must be one of sum, prod, min, max, avg"):
        ops.all_reduce(x, "mean")
    with pytest.raises(TypeError, match="'group' must be type of string"):
        ops.all_reduce(x, group=0)
    with pytest.raises(TypeError, match="'async_op' must be a bool"):
        ops.all_reduce(x, async_op=1)
    with pytest.raises(TypeError, match="op value must be one of sum, min, max, avg"):
        ops.reduce_scatter_tensor_uneven(T(X), x, op="prod")
    with pytest.raises(TypeError, match="For broadcast, the src must be int"):
        ops.broadcast(x, "0")
    with pytest.raises(ValueError, match="destination rank should not be the same"):
        ops.send(x, 0)
    with pytest.raises(TypeError, match="output shape should be"):
        mint.distributed.all_gather([T(np.zeros((2, 2)))], x)
    with pytest.raises(TypeError, match="list tensor len must be equal to group rank size"):
        mint.distributed.all_gather([x, x], x)
    with pytest.raises(ValueError, match="expects \\[4\\] elements.*but they send \\[6\\]"):
        ops.all_to_all([T(np.zeros(4))], [x])
    with pytest.raises(TypeError, match="Expected op to be of type isend or irecv"):
        ops.P2POp("send", x, 0)
    with pytest.raises(NotImplementedError, match="tag is not support yet"):
        ops.P2POp("isend", x, 0, tag=1)
    with pytest.raises(TypeError, match="can not be empty list"):
        ops.batch_isend_irecv([])
    with pytest.raises(TypeError, match="send_count_matrix must be square matrix"):
        ops.all_to_all_v_c(T(X), x, [1, 2])


def test_all_reduce_in_a_graph_writes_the_traced_tensor(world_of_one, restore_context):
    ops.init_process_group()

    class Net(nn.Cell):
        def construct(self, x):
            y = x * 2
            ops.all_reduce(y, "max")
            return y + 1

    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_array_equal(Net()(T(X)).asnumpy(), X * 2 + 1)


def test_mint_distributed_serves_the_table_signatures():
    entries = load_table()["entries"]
    names = [q.rsplit(".", 1)[1] for q in entries if q.startswith("mindspore.mint.distributed.")]
    assert len(names) >= 36
    wrong = []
    for name in names:
        entry, obj = entries[f"mindspore.mint.distributed.{name}"], getattr(mint.distributed, name)
        if entry["kind"] == "function":
            want = [rows_signature(rows) for rows in entry["signatures"]]
            ours = inspect.signature(obj)
        else:
            want = [rows_signature(entry["init"])]
            ours = inspect.Signature(list(inspect.signature(obj.__init__).parameters.values())[1:])
        if not any([(p.name, p.kind, p.default) for p in ours.parameters.values()] ==
                   [(p.name, p.kind, p.default) for p in w.parameters.values()] for w in want):
            wrong.append(f"{name}: {ours} != {want}")
    assert not wrong, wrong
    assert mint.distributed.gather is not ops.gather and ops.gather is array_func.gather
