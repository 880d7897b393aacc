"""MindIR export and load (``frontend/train/mindir.py``) against real MindSpore 2.10's files and numbers
(tests/fixtures/mindir, recorded by tools/record_mindir.py): our file has the structure of MindSpore's
for the same network (primitives, their settings, parameters with their data, inputs and outputs), is
byte for byte the file real MindSpore loaded and ran to its own outputs (ms_loads_ours.json);
``load`` + ``nn.GraphCell`` run MindSpore's files and ours on the device to MindSpore's outputs;
damaged or hostile files are typed errors."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import FeatureNotSupportedError, InvalidFileError
from ascendemu.frontend import nn
from ascendemu.frontend.train import mind_ir_pb2 as pb
from ascendemu.frontend.train.mindir import (MindIRFileError, UnsupportedPrimitiveError, mindir_model)
from ascendemu.frontend.unsupported import UnsupportedOpError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "mindir"
sys.path.insert(0, str(FIXTURES))
import nets  # noqa: E402

NETS = tuple(nets.SHAPES)
RTOL, ATOL = 1e-5, 1e-5
# MindSpore's side-effect plumbing, which our inference graphs leave out
MONAD_PRIMS = ("Load", "UpdateState", "Depend", "MakeTuple")


def read(path: Path):
    m = pb.ModelProto()
    m.ParseFromString(path.read_bytes())
    return m


def skeleton(m) -> list[tuple]:
    """The computation of a model: per node, MindSpore's primitive, its attributes and the values of
    its Constant inputs, sorted (MindSpore may order independent nodes differently). A product by a
    number is one form, ``Mul`` by that number: MindSpore writes ``x * 0.5`` as Muls and
    ``x * Tensor(0.5)`` as Mul of a 0-d tensor, which capture cannot tell apart (the same computation)."""
    prims = {p.name: p for p in m.primitives}
    consts = {n.output[0]: n.attribute[0] for n in m.graph.node if n.op_type == "Constant"}
    out = []
    for n in m.graph.node:
        if n.op_type == "Constant":
            continue
        p = prims[n.op_type.removeprefix("REF::")]
        if p.op_type in MONAD_PRIMS:
            continue
        attrs = sorted((a.name, str(a)) for a in p.attribute)
        args = [str(consts[i]).replace('name: "value"', "") for i in n.input if i in consts]
        number = _multiplier(p.op_type, [consts[i] for i in n.input if i in consts])
        out.append(("Mul", p.prim_type, attrs, [number]) if number is not None else
                   (p.op_type, p.prim_type, attrs, args))
    return sorted(out)


def _multiplier(op_type: str, consts: list) -> str | None:
    """The number a Muls, or a Mul by a 0-d float32 constant, multiplies by (as float32 text)."""
    if op_type == "Muls" and len(consts) == 1:
        return str(np.float32(consts[0].f))
    if op_type == "Mul" and len(consts) == 1 and consts[0].tensors and not consts[0].tensors[0].dims \
            and consts[0].tensors[0].data_type == pb.TensorProto.FLOAT:
        return str(np.frombuffer(consts[0].tensors[0].raw_data, "<f4")[0])
    return None


@pytest.fixture(scope="module")
def recorded():
    return np.load(FIXTURES / "outputs.npz")


@pytest.fixture(scope="module")
def device(ex):
    saved = {k: ms.get_context(k) for k in ("mode", "jit_config")}
    yield ex
    ms.set_context(**saved)


# ------------------------------------------------------------------------------------- the schema

def test_schema_reads_mindspores_files_and_proto_text_names_every_message():
    proto = (Path(ms.train.__file__).parent / "mind_ir.proto").read_text()
    for message in pb.DESCRIPTOR.message_types_by_name:
        assert f"message {message} {{" in proto
    m = read(FIXTURES / "mindspore_mlp.mindir")
    assert (m.producer_name, m.model_version, m.ir_version, m.mind_ir_version) == ("MindSpore", "2.10.0", "1.1", 3)
    assert [p.ref_key for p in m.graph.parameter] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]


# ------------------------------------------------------------------------------------------ export

@pytest.mark.parametrize("name", NETS)
def test_export_has_the_structure_of_mindspores_file(name):
    net, x = nets.build(ms, name)
    ours = mindir_model(net, ms.Tensor(x))
    theirs = read(FIXTURES / f"mindspore_{name}.mindir")
    for field in ("producer_name", "model_version", "ir_version", "mind_ir_version", "little_endian"):
        assert getattr(ours, field) == getattr(theirs, field)
    assert skeleton(ours) == skeleton(theirs)
    params = lambda m: [(p.ref_key, list(p.dims), p.data_type, p.raw_data) for p in m.graph.parameter]  # noqa: E731
    assert params(ours) == params(theirs)          # same names, shapes and bytes: the same weights
    for a, b in zip(ours.graph.parameter, theirs.graph.parameter):
        assert a.name.split(":")[-1] == b.name.split(":")[-1] == a.ref_key
    assert [(i.name.split(":")[-1], list(i.tensor[0].dims)) for i in ours.graph.input] == \
        [(i.name.split(":")[-1], list(i.tensor[0].dims)) for i in theirs.graph.input]
    assert [list(o.tensor[0].dims) for o in ours.graph.output] == [list(o.tensor[0].dims) for o in theirs.graph.output]


@pytest.mark.parametrize("name", NETS)
def test_export_writes_the_file_real_mindspore_loaded_and_ran(name, tmp_path):
    """ms_loads_ours.json: real MindSpore 2.10 loaded ascendemu_<net>.mindir with ms.load + nn.GraphCell and
    computed its own outputs; today's export must still write exactly that file."""
    verdict = json.loads((FIXTURES / "ms_loads_ours.json").read_text())["networks"][name]
    assert verdict["loaded"] and verdict["allclose"], verdict
    net, x = nets.build(ms, name)
    ms.export(net, ms.Tensor(x), file_name=str(tmp_path / name), file_format="MINDIR")
    path = tmp_path / f"{name}.mindir"
    assert path.read_bytes() == (FIXTURES / f"ascendemu_{name}.mindir").read_bytes()
    assert os.stat(path).st_mode & 0o777 == 0o400            # left read-only, as MindSpore leaves it


def test_export_refuses_an_op_without_a_mindir_form_and_mindir_only_options(tmp_path):
    with pytest.raises(UnsupportedOpError, match="Floor"):
        mindir_model(lambda x: ms.ops.floor(x), ms.Tensor(np.ones((2, 2), np.float32)))
    net, x = nets.build(ms, "mlp")
    with pytest.raises(FeatureNotSupportedError, match="enc_key"):
        ms.export(net, ms.Tensor(x), file_name=str(tmp_path / "m"), file_format="MINDIR", enc_key=b"0" * 16)
    assert not list(tmp_path.iterdir())


# -------------------------------------------------------------------------------------------- load

@pytest.mark.parametrize("who", ["mindspore", "ascendemu"])
@pytest.mark.parametrize("name", NETS)
def test_graphcell_runs_the_files_to_mindspores_outputs(device, recorded, who, name):
    ms.set_context(mode=ms.PYNATIVE_MODE)          # a GraphCell runs as a graph in either mode
    cell = nn.GraphCell(ms.load(str(FIXTURES / f"{who}_{name}.mindir")))
    y = cell(ms.Tensor(recorded[f"x_{name}"]))
    np.testing.assert_allclose(y.asnumpy(), recorded[f"y_{name}"], rtol=RTOL, atol=ATOL)
    net, _ = nets.build(ms, name)
    assert sorted((n, p.shape) for n, p in cell.parameters_and_names()) == \
        sorted((n, p.shape) for n, p in net.parameters_and_names())


def test_save_load_tutorial_flow(device, tmp_path):
    """MindSpore's save/load tutorial: export, load, GraphCell; the outputs are the network's (GRAPH_MODE)."""
    ms.set_context(mode=ms.GRAPH_MODE)
    net, x = nets.build(ms, "lenet")
    input_tensor = ms.Tensor(x)
    ms.export(net, input_tensor, file_name=str(tmp_path / "model"), file_format="MINDIR")
    graph = ms.load(str(tmp_path / "model.mindir"))
    model = nn.GraphCell(graph)
    np.testing.assert_allclose(model(input_tensor).asnumpy(), net(input_tensor).asnumpy(), rtol=RTOL, atol=ATOL)


def test_params_init_replaces_the_weights(device, recorded):
    graph = ms.load(str(FIXTURES / "mindspore_mlp.mindir"))
    w2 = np.zeros((3, 8), np.float32)
    cell = nn.GraphCell(graph, params_init={"fc2.weight": ms.Tensor(w2)})
    y = cell(ms.Tensor(recorded["x_mlp"])).asnumpy()
    np.testing.assert_allclose(y, np.broadcast_to(graph.parameters["fc2.bias"], y.shape), rtol=0, atol=0)


# ------------------------------------------------------------------------------- files are data

def _write(tmp_path: Path, model) -> str:
    path = tmp_path / "bad.mindir"
    path.write_bytes(model.SerializeToString())
    return str(path)


def test_damaged_files_are_typed_errors(tmp_path):
    data = (FIXTURES / "mindspore_mlp.mindir").read_bytes()
    for i, bad in enumerate([data[:3000], b"garbage!!", b""]):
        (tmp_path / f"{i}.mindir").write_bytes(bad)
        with pytest.raises(MindIRFileError, match="Load MindIR failed") as e:
            ms.load(str(tmp_path / f"{i}.mindir"))
        assert isinstance(e.value, (RuntimeError, InvalidFileError))
    os.mkfifo(tmp_path / "fifo.mindir")
    with pytest.raises(MindIRFileError, match="not a regular file"):
        ms.load(str(tmp_path / "fifo.mindir"))
    with pytest.raises(ValueError, match="does not exist"):
        ms.load(str(tmp_path / "none.mindir"))
    with pytest.raises(FeatureNotSupportedError, match="dec_key"):
        ms.load(str(FIXTURES / "mindspore_mlp.mindir"), dec_key=b"k" * 16)
    with pytest.raises(TypeError, match="FuncGraph"):
        nn.GraphCell("model.mindir")


def test_hostile_files_are_refused_before_anything_runs(tmp_path):
    base = read(FIXTURES / "mindspore_mlp.mindir")
    unknown = pb.ModelProto()
    unknown.CopyFrom(base)
    relu = next(p for p in unknown.primitives if p.op_type == "ReLU")
    relu.op_type = "os.system"
    with pytest.raises(UnsupportedPrimitiveError, match=r"CNode_15.*'os.system'"):
        ms.load(_write(tmp_path, unknown))
    dangling = pb.ModelProto()
    dangling.CopyFrom(base)
    dangling.graph.node[4].input[0] = "nowhere"
    with pytest.raises(MindIRFileError, match="'nowhere'"):
        ms.load(_write(tmp_path, dangling))
    short = pb.ModelProto()
    short.CopyFrom(base)
    short.graph.parameter[0].dims[0] = 1 << 40         # claims 2^42 floats, holds 32
    with pytest.raises(MindIRFileError, match="bytes of data"):
        ms.load(_write(tmp_path, short))
