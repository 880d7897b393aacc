"""Parameter names as MindSpore gives them (checkpoints and optimizers key on them): a cell assigned to
an auto_prefix cell renames its parameters ``attribute.<path in it>`` (its attribute names, not the names
they had), containers name members by index (a list filled after it was assigned reads its path off its
first member), auto_prefix=False leaves its own children's names alone. Oracle: real MindSpore 2.10's
names and parameters_and_names() paths for tests/fixtures/cell_names/cell_name_nets.py
(tools/record_cell_names.py)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ascendemu.cli.run import install_mindspore_alias

FIXTURES = Path(__file__).parent / "fixtures" / "cell_names"
RECORDED = json.loads((FIXTURES / "names.mindspore-2.10-cpu.json").read_text())


@pytest.fixture(scope="module")
def nets():
    install_mindspore_alias()
    spec = importlib.util.spec_from_file_location("cell_name_nets", FIXTURES / "cell_name_nets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("net", sorted(RECORDED))
def test_parameter_names_and_paths_are_mindspores(nets, net):
    cell = nets.NETS[net]()
    assert [p.name for p in cell.get_parameters()] == RECORDED[net]["names"]
    assert [path for path, _ in cell.parameters_and_names()] == RECORDED[net]["paths"]


def test_parameters_dict_is_keyed_by_name_and_a_checkpoint_saves_those_names(nets, tmp_path):
    from ascendemu.frontend import load_checkpoint, save_checkpoint

    cell = nets.Top()
    assert list(cell.parameters_dict()) == RECORDED["top"]["names"]
    save_checkpoint(cell, str(tmp_path / "top.ckpt"))
    assert list(load_checkpoint(str(tmp_path / "top.ckpt"))) == RECORDED["top"]["names"]
