"""MLCommons Chakra execution traces: the checked-in schema module against its .proto, a recorded run
exported (read back with google.protobuf and Chakra's own framing: node types, attributes and
dependencies as the program made them), exported then imported (the same simulated time, node for
node), and a hand-written ET in the style of a PyTorch run converted by Chakra, run on the emulated 910A
with times computed here from the device spec and the cost and interconnect formulas."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ascendemu.cli.main import main as cli
from ascendemu.device.cost import KernelCost
from ascendemu.device.spec import get_spec
from ascendemu.errors import InvalidFileError
from ascendemu.hal.hccl import HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM
from ascendemu.hal.kernel import ArgSpec, KernelFunction
from ascendemu.hal.memory import MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE
from ascendemu.hal.record import Recorder
from ascendemu.hal.runtime import Runtime
from ascendemu.replay.chakra import export_chakra, run_chakra
from ascendemu.replay.replayer import replay
from ascendemu.traces import chakra as et
from ascendemu.traces import et_def_pb2 as pb

from test_collectives import A_H, B_H, G

PROTO = Path(et.__file__).with_name("et_def.proto")
N = 1 << 16                                       # float32 elements per buffer


# -- the schema -----------------------------------------------------------------------------------------
SCALARS = {"double": 1, "float": 2, "int64": 3, "uint64": 4, "int32": 5, "fixed64": 6, "fixed32": 7, "bool": 8,
           "string": 9, "bytes": 12, "uint32": 13, "sfixed32": 15, "sfixed64": 16, "sint32": 17, "sint64": 18}


def proto_text() -> tuple[dict, dict]:
    """Messages (name -> {field: (number, type name, repeated, oneof)}) and enums of et_def.proto, read
    with regular expressions (the file is flat: no nesting, no options)."""
    text = re.sub(r"//[^\n]*", "", PROTO.read_text())
    messages, enums = {}, {}
    for name, body in re.findall(r"message\s+(\w+)\s*\{((?:[^{}]|\{[^{}]*\})*)\}", text):
        fields = {}
        for oneof, inner in re.findall(r"oneof\s+(\w+)\s*\{([^}]*)\}", body):
            for typ, fname, num in re.findall(r"(\w+)\s+(\w+)\s*=\s*(\d+)\s*;", inner):
                fields[fname] = (int(num), typ, False, oneof)
        body = re.sub(r"oneof\s+\w+\s*\{[^}]*\}", "", body)
        for rep, typ, fname, num in re.findall(r"(repeated\s+)?(\w+)\s+(\w+)\s*=\s*(\d+)\s*;", body):
            fields[fname] = (int(num), typ, bool(rep), None)
        messages[name] = fields
    for name, body in re.findall(r"enum\s+(\w+)\s*\{([^}]*)\}", text):
        enums[name] = {k: int(v) for k, v in re.findall(r"(\w+)\s*=\s*(\d+)\s*;", body)}
    return messages, enums


def test_the_checked_in_module_is_the_proto():
    messages, enums = proto_text()
    d = pb.DESCRIPTOR
    assert d.package == "ChakraProtoMsg" and set(d.message_types_by_name) == set(messages)
    assert {n: {v.name: v.number for v in e.values} for n, e in d.enum_types_by_name.items()} == enums
    for name, fields in messages.items():
        got = {}
        for f in d.message_types_by_name[name].fields:
            typ = f.message_type.name if f.message_type else f.enum_type.name if f.enum_type else f.type
            oneof = f.containing_oneof.name if f.containing_oneof else None
            got[f.name] = (f.number, typ, f.is_repeated, oneof)
        want = {k: (num, SCALARS.get(typ, typ), rep, oneof) for k, (num, typ, rep, oneof) in fields.items()}
        assert got == want, name
    assert len(messages["AttributeProto"]) == 32 and enums["NodeType"]["COMM_COLL_NODE"] == 7


# -- export ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    """A recorded run: a synchronous upload; on stream 1 kernels k1 (a -> b) and k3 (a -> d), then an
    event; stream 2 waits for it, runs k1 (b -> c), an AllReduce of c in a world of one, a download of c."""
    path = tmp_path_factory.mktemp("chakra") / "prog.aetrace"
    rt = Runtime()
    rec = Recorder(path).attach(rt)
    rt.init("Ascend910A", 1, backing=False)
    rt.set_device(0)
    s1, s2 = rt.create_stream(), rt.create_stream()
    ev = rt.create_event()
    a, b, c, d = (rt.malloc(4 * N) for _ in range(4))
    rt.memcpy(a, 4 * N, np.zeros(N, np.float32), 4 * N, MEMCPY_HOST_TO_DEVICE)
    args = (ArgSpec(4 * N, "in"), ArgSpec(4 * N, "out"))
    k1 = KernelFunction("k1", 0, 8, args, KernelCost(0, N, 8 * N, "float32"))
    k3 = KernelFunction("k3", 0, 8, args, KernelCost(1 << 24, 0, 8 * N, "float16"))
    rt.launch_kernel(k1, 8, [a, b], s1)
    rt.launch_kernel(k3, 8, [a, d], s1)
    rt.record_event(ev, s1)
    rt.stream_wait_event(s2, ev)
    rt.launch_kernel(k1, 8, [b, c], s2)
    world = rt.comm_init_world(1, 0)
    rt.all_reduce(c, c, N, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, world, s2)
    rt.memcpy_async(np.empty(N, np.float32), 4 * N, c, 4 * N, MEMCPY_DEVICE_TO_HOST, s2)
    rt.synchronize_device()
    rt.finalize()
    rec.close()
    return path


def chakra_messages(path: Path) -> tuple[pb.GlobalMetadata, list[pb.Node]]:
    """Read an ET as Chakra's protolib does: varint32 length, message, until a zero length or the end."""
    data, at, out = path.read_bytes(), 0, []
    while at < len(data):
        size, shift = 0, 0
        while True:
            byte = data[at]
            at += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        out.append(data[at:at + size])
        at += size
    meta = pb.GlobalMetadata.FromString(out[0])
    return meta, [pb.Node.FromString(m) for m in out[1:]]


def attrs(node: pb.Node) -> dict:
    return {a.name: getattr(a, a.WhichOneof("value")) for a in node.attr}


def test_export_writes_the_nodes_and_dependencies_the_program_made(program, tmp_path):
    (path,) = export_chakra(program, tmp_path)
    assert path == tmp_path / "prog.0.et"
    meta, nodes = chakra_messages(path)
    assert meta.version and {a.name: a.string_val for a in meta.attr}["schema"] == "1.0.2-chakra.1.0.0"
    upload, k1, k3, k1b, ar, download = nodes
    assert [pb.NodeType.Name(n.type) for n in nodes] == ["MEM_LOAD_NODE", "COMP_NODE", "COMP_NODE", "COMP_NODE",
                                                         "COMM_COLL_NODE", "MEM_STORE_NODE"]
    assert [n.id for n in nodes] == list(range(6)) and (k1.name, k3.name) == ("k1", "k3")
    # the attribute fields Chakra's feeder reads
    assert next(a for a in k3.attr if a.name == "num_ops").int64_val == 1 << 24
    assert next(a for a in k1.attr if a.name == "tensor_size").uint64_val == 8 * N
    assert next(a for a in upload.attr if a.name == "tensor_size").uint64_val == 4 * N
    a = attrs(ar)
    assert (a["comm_type"], a["comm_size"], a["pg_name"]) == (pb.ALL_REDUCE, 4 * N, "world")
    assert attrs(k1)["is_cpu_op"] is False and attrs(k1)["block_dim"] == 8
    # data: each reader on the last writer of its buffer; control: stream order and the event
    assert (list(k1.data_deps), list(k3.data_deps), list(k1b.data_deps)) == ([0], [0], [1])
    assert list(k3.ctrl_deps) == [1] and list(k1b.ctrl_deps) == [2]      # after the wait: what preceded the record
    assert (list(ar.data_deps), list(download.data_deps)) == ([3], [4])
    s1, s2 = attrs(k1)["stream"], attrs(k1b)["stream"]
    assert s1 != s2 and attrs(k3)["stream"] == s1 and attrs(ar)["stream"] == attrs(download)["stream"] == s2
    # times: the event orders k1b after k3; Chakra's integer microseconds round the exact seconds
    assert attrs(k1b)["start_s"] >= attrs(k3)["end_s"] > attrs(k1)["end_s"]
    for n in nodes:
        t = attrs(n)
        assert n.duration_micros == round((t["end_s"] - t["start_s"]) * 1e6) and t["issue_s"] <= t["start_s"]


def test_export_then_import_gives_the_replayed_times_node_for_node(program, tmp_path):
    export_chakra(program, tmp_path)
    (run,) = run_chakra(tmp_path)
    figures = replay(str(program)).figures
    last_end = max(s[2] for s in figures["devices"]["0"]["streams"].values())
    assert run.makespan_s == last_end and run.rank == 0
    _, nodes = et.read_et(tmp_path / "prog.0.et")
    assert run.ends == {n.id: et.attrs(n)["end_s"] for n in nodes}
    assert run.priced == {"copy": 2, "kernel (exported cost)": 3, "collective": 1}


# -- import of a foreign ET -------------------------------------------------------------------------------
def pytorch_style() -> tuple[pb.GlobalMetadata, list[pb.Node]]:
    """A rank of a PyTorch run as Chakra's converter writes it: CPU ops with their host durations, GPU
    kernels with a control dependency on the op that launched them, num_ops/tensor_size, an NCCL
    AllReduce of 1 MiB; PyTorch's own attributes (rf_id, tid, op_schema ...)."""
    meta = pb.GlobalMetadata(version="0.0.4", attr=[et.attr("schema", "1.0.2-chakra.0.0.4"), et.attr("pid", 4242),
                                                     et.attr("time", "2026-11-22 10:00:00")])

    def node(i, name, typ, cpu, dur, ctrl=(), data=(), **extra):
        n = pb.Node(id=i, name=name, type=typ, duration_micros=dur, ctrl_deps=list(ctrl), data_deps=list(data))
        n.inputs.types = "['Tensor(float)', 'Tensor(float)']"
        n.attr.extend([et.attr("rf_id", i), et.attr("tid", 1), et.attr("op_schema", ""), et.attr("is_cpu_op", cpu)])
        n.attr.extend(et.attr(k, v) for k, v in extra.items())
        return n
    return meta, [
        node(10, "aten::mm", pb.COMP_NODE, True, 10),
        node(11, "ampere_sgemm_128x64_nn", pb.COMP_NODE, False, 7, ctrl=[10], stream=7,
             num_ops=2 * 256 ** 3, tensor_size=3 * 256 * 256 * 4),
        node(12, "aten::relu", pb.COMP_NODE, True, 4, ctrl=[10]),
        node(13, "void at::native::vectorized_elementwise_kernel<4>", pb.COMP_NODE, False, 3, ctrl=[12], data=[11],
             stream=7, num_ops=256 * 256, tensor_size=2 * 256 * 256 * 4),
        node(14, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", pb.COMM_COLL_NODE, False, 50, ctrl=[13], stream=20,
             comm_type=pb.ALL_REDUCE, comm_size=1 << 20, pg_name="0"),
    ]


def test_a_pytorch_style_et_runs_on_the_910a_in_the_time_the_formulas_give(tmp_path):
    for rank in (0, 1):
        et.write_et(tmp_path / f"pytorch_et.{rank}.et", *pytorch_style())
    spec = get_spec("Ascend910A")
    runs = run_chakra(tmp_path, spec)
    assert [r.rank for r in runs] == [0, 1]

    def kernel_us(cube, vector, nbytes):               # fp32, one wave (docs/FIDELITY.md, no matrix shape)
        cores = min(spec.ai_cores, -(-nbytes // 32))       # a vector kernel's data spreads in 32-byte blocks
        cube_s = cube / (spec.peak_cube_flops * spec.cube_efficiency)       # fp32 at the fp16 cube rate
        vector_s = vector * 2 / (cores * spec.vector_lanes_fp16 * spec.clock_hz)   # fp32: half the lanes
        port_s = nbytes / (cores * spec.core_port_bytes_per_cycle * spec.clock_hz)
        hbm_s = nbytes / spec.hbm_bandwidth
        return (spec.task_overhead_s + max(cube_s, vector_s, port_s, hbm_s) + spec.block_overhead_s) * 1e6
    sgemm_end = 10 + kernel_us(2 * 256 ** 3, 0, 3 * 256 * 256 * 4)         # after aten::mm's 10 us on the host
    relu_end = 14
    eltwise_end = max(sgemm_end, relu_end) + kernel_us(0, 256 * 256, 2 * 256 * 256 * 4)
    m = 1 << 20                                          # bytes, 2 ranks in one HCCS group: a mesh
    all_reduce = 2 * (A_H + m / 2 * B_H) + m / 2 * G
    for r in runs:
        ends = {i: t * 1e6 for i, t in r.ends.items()}
        assert ends[10] == pytest.approx(10) and ends[12] == pytest.approx(relu_end)
        assert ends[11] == pytest.approx(sgemm_end, rel=1e-9) and ends[13] == pytest.approx(eltwise_end, rel=1e-9)
        assert r.makespan_s * 1e6 == pytest.approx(eltwise_end + all_reduce * 1e6, rel=1e-9)
        assert r.priced == {"recorded duration": 2, "roofline (num_ops, tensor_size)": 2, "collective": 1}
        assert r.recorded_us == 0.0                      # the converter wrote no start times


def test_import_errors_say_what_is_wrong(tmp_path):
    bad = tmp_path / "x.et"
    bad.write_bytes(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")
    with pytest.raises(et.ChakraFormatError, match="length prefix"):
        run_chakra(bad)
    meta, nodes = pytorch_style()
    nodes[1].data_deps.append(13)      # the sgemm reads what the kernel reading it writes: a data cycle
    et.write_et(bad, meta, nodes)      # (a cycle through control dependencies: tests/test_trace_hostile.py)
    with pytest.raises(InvalidFileError, match="data dependencies of nodes .* form a cycle"):
        run_chakra(bad)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InvalidFileError, match="holds no .et file"):
        run_chakra(empty)


def test_the_cli_exports_and_imports(program, tmp_path, capsys):
    assert cli(["trace", "export-chakra", str(program), "-o", str(tmp_path)]) == 0
    assert cli(["trace", "import-chakra", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "prog.0.et" in out and "6 node(s)" in out and "simulated" in out
    assert cli(["trace", "import-chakra", str(tmp_path / "missing")]) == 2
