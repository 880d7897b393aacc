"""The checked-in Chakra schema module (traces/et_def_pb2.py) loads on the oldest protobuf runtime the
project declares (pyproject: protobuf >= PROTOBUF_FLOOR), not only on the one that generated it: a
user's other packages often pin protobuf 3.20-5.x. The floor's wheel is installed into a directory of
its own and the module is imported there with site-packages off, so only that protobuf is visible; the
bytes it writes for a node are compared with what this process's (newest) protobuf writes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ascendemu.traces import et_def_pb2 as pb

ROOT = Path(__file__).resolve().parents[1]
PROTOBUF_FLOOR = "3.20.3"

CHECK = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("et_def_pb2", sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
import google.protobuf
n = m.Node(id=3, name="conv", type=m.COMP_NODE, data_deps=[1, 2], duration_micros=5)
n.attr.add(name="k", int64_val=7)
print(google.protobuf.__version__, n.SerializeToString().hex())
"""


def test_pyproject_declares_the_floor_tested_here():
    assert f'"protobuf>={PROTOBUF_FLOOR}"' in (ROOT / "pyproject.toml").read_text()


def test_schema_module_loads_and_writes_the_same_bytes_on_the_protobuf_floor(tmp_path):
    target = tmp_path / "floor"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                          f"protobuf=={PROTOBUF_FLOOR}"], capture_output=True, text=True)
    if pip.returncode != 0:
        pytest.skip(f"cannot install protobuf=={PROTOBUF_FLOOR} here (no package index?): {pip.stderr[-300:]}")
    out = subprocess.run([sys.executable, "-S", "-c", CHECK, pb.__file__], env={"PYTHONPATH": str(target)},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    version, data = out.stdout.split()
    assert version == PROTOBUF_FLOOR
    node = pb.Node(id=3, name="conv", type=pb.COMP_NODE, data_deps=[1, 2], duration_micros=5)
    node.attr.add(name="k", int64_val=7)
    assert bytes.fromhex(data) == node.SerializeToString()


MIND_IR_CHECK = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("mind_ir_pb2", sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
import google.protobuf
model = m.ModelProto(producer_name="MindSpore", mind_ir_version=3)
n = model.graph.node.add(name="n", op_type="REF::MatMul:1")
n.attribute.add(name="v", type=m.AttributeProto.TUPLE).values.add(ints=[2], type=m.AttributeProto.INT64)
print(google.protobuf.__version__, model.SerializeToString().hex())
"""


def test_mind_ir_module_loads_and_writes_the_same_bytes_on_the_protobuf_floor(tmp_path):
    """The same for the MindIR schema (frontend/train/mind_ir_pb2.py, tests/test_mindir.py)."""
    from ascendemu.frontend.train import mind_ir_pb2 as mi

    target = tmp_path / "floor"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                          f"protobuf=={PROTOBUF_FLOOR}"], capture_output=True, text=True)
    if pip.returncode != 0:
        pytest.skip(f"cannot install protobuf=={PROTOBUF_FLOOR} here (no package index?): {pip.stderr[-300:]}")
    out = subprocess.run([sys.executable, "-S", "-c", MIND_IR_CHECK, mi.__file__], env={"PYTHONPATH": str(target)},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    version, data = out.stdout.split()
    assert version == PROTOBUF_FLOOR
    model = mi.ModelProto(producer_name="MindSpore", mind_ir_version=3)
    n = model.graph.node.add(name="n", op_type="REF::MatMul:1")
    n.attribute.add(name="v", type=mi.AttributeProto.TUPLE).values.add(ints=[2], type=mi.AttributeProto.INT64)
    assert bytes.fromhex(data) == model.SerializeToString()
