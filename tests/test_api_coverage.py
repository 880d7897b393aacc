"""The signature table recorded from real MindSpore 2.10 (frontend/signatures.json, tools/record_signatures.py)
and the coverage measured against it. The totals are MindSpore 2.10's own counts, as its introspection
gives them (and as issue 26 quotes them): 875 ops functions, 577 ops Primitives, 228 nn Cells, 430 Tensor
attributes (405 methods, 25 properties)."""
from __future__ import annotations

from ascendemu.frontend import api_coverage
from ascendemu.frontend.api_coverage import coverage, is_served, load_table


def test_table_is_mindspore_2_10_with_its_own_counts():
    table = load_table()
    assert table["mindspore_version"] == "2.10.0"
    totals = {g.group: g.total for g in coverage()}
    assert totals["ops-functions"] == 875 and totals["ops-primitives"] == 577
    assert totals["nn-cells"] == 228 and totals["tensor-methods"] == 430


def test_table_keeps_signatures_and_import_paths_as_mindspore_has_them():
    e = load_table()["entries"]
    conv = e["mindspore.ops.Conv2D"]
    assert conv["kind"] == "primitive" and conv["defined_in"] == "mindspore.ops.operations.nn_ops"
    assert ["pad_mode", "POSITIONAL_OR_KEYWORD", "valid"] in conv["init"]
    assert "mindspore.ops.operations.nn_ops.Conv2D" in conv["paths"]
    assert e["mindspore.nn.Dense"]["init"][:2] == [["in_channels", "POSITIONAL_OR_KEYWORD"],
                                                   ["out_channels", "POSITIONAL_OR_KEYWORD"]]
    # a C++ Tensor method's signature comes from its docstring's first line
    assert e["mindspore.Tensor.add"]["signatures"] == [[["other", "POSITIONAL_OR_KEYWORD"]]]


def test_served_means_a_real_attribute_not_a_refusal():
    assert is_served("mindspore.ops.relu") and is_served("mindspore.nn.Dense") and is_served("mindspore.Tensor.asnumpy")
    assert not is_served("mindspore.ops.J")                      # ops' __getattr__ refuses it
    assert not is_served("mindspore.mint.distributed.TCPStore")  # mint.distributed's __getattr__ refuses it


def test_groups_partition_served_and_missing():
    for g in coverage():
        assert not set(g.served) & set(g.missing)
        assert all(is_served(n) for n in g.served[:50])
    assert api_coverage.SIGNATURES.stat().st_size > 100_000


def test_the_line_index_reads_each_entry_as_the_whole_table_does():
    """The front end's import reads entries through a per-line index (the recorder writes one entry per
    line); every entry must come out as json's parse of the whole file gives it."""
    entries = load_table()["entries"]
    assert set(api_coverage._entry_texts()) == set(entries)
    for name, entry in entries.items():
        assert api_coverage.table_entry(name) == entry
    assert api_coverage.table_entry("mindspore.ops.no_such_op") is None


def test_excluded_names_are_mindsporess_and_left_out_of_the_share_with_a_reason():
    entries = load_table()["entries"]
    assert set(api_coverage.EXCLUDED) <= set(entries)
    assert all(len(reason) > 20 for reason in api_coverage.EXCLUDED.values())
    groups = {g.group: g for g in coverage()}
    prims = groups["ops-primitives"]
    assert {"mindspore.ops.Pull", "mindspore.ops.Push"} <= set(prims.excluded)
    assert not set(prims.excluded) & (set(prims.served) | set(prims.missing))
    assert prims.share == len(prims.served) / (prims.total - len(prims.excluded))
