"""``mindspore.mint`` (frontend/mint/): each served name has the signature MindSpore 2.10 records for it,
is importable as ``mindspore.mint...`` under ``ascendemu run``'s alias, and computes what numpy
computes under mint's PyTorch-style parameters (``dim``, ``keepdim``, ``dim0/dim1``). Oracles: numpy,
the signature table."""
from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.errors import InvalidParamError
from ascendemu.frontend import Tensor, mint, nn
from ascendemu.frontend.api_coverage import coverage, rows_signature, load_table


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


A = np.arange(6, dtype=np.float32).reshape(2, 3) - 2


def _rows(signature: inspect.Signature) -> list[tuple]:
    """Names, kinds and defaults: what a caller sees (annotations are not part of the table)."""
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


def test_every_served_mint_function_has_mindsporess_signature():
    entries = load_table()["entries"]
    group = next(g for g in coverage() if g.group == "mint")
    checked = 0
    for qualified in group.served:
        entry = entries[qualified]
        if entry["kind"] != "function":
            continue
        module = importlib.import_module("ascendemu.frontend" + qualified.rsplit(".", 1)[0][len("mindspore"):])
        fn = getattr(module, qualified.rsplit(".", 1)[1])
        assert _rows(inspect.signature(fn)) == _rows(rows_signature(entry["signatures"][0])), qualified
        checked += 1
    assert checked > 50


def test_mint_cells_are_nns_own_classes():
    assert mint.nn.ReLU is nn.ReLU and mint.nn.Identity is nn.Identity


@pytest.mark.parametrize("call, expected", [
    (lambda x: mint.sum(x, 1, True), A.sum(1, keepdims=True)),
    (lambda x: mint.sum(x, dim=0), A.sum(0)),
    (lambda x: mint.transpose(x, 0, 1), A.T),
    (lambda x: mint.split(x, [1, 2], dim=1)[1], A[:, 1:]),
    (lambda x: mint.cat((x, x), dim=1), np.concatenate((A, A), 1)),
    (lambda x: mint.gather(x, 1, Tensor(np.array([[2], [0]], np.int32))), np.array([[0.0], [1.0]])),
    (lambda x: mint.select(x, 1, 0), A[:, 0]),
    (lambda x: mint.max(x), A.max()),
    (lambda x: mint.add(x, 1, alpha=3), A + 3),
    (lambda x: mint.sub(x, x, alpha=2), -A),
    (lambda x: mint.clamp(x, -1, 1), np.clip(A, -1, 1)),
    (lambda x: mint.argmax(x, dim=1), A.argmax(1)),
    (lambda x: mint.nn.functional.relu(x), np.maximum(A, 0)),
    (lambda x: mint.nn.functional.softmax(x), np.exp(A) / np.exp(A).sum(1, keepdims=True)),   # 2-d: dim 1
    (lambda x: mint.nn.functional.log_softmax(x, dim=0), A - np.log(np.exp(A).sum(0, keepdims=True))),
    (lambda x: mint.nn.functional.leaky_relu(x, 0.1), np.where(A > 0, A, 0.1 * A)),
])
def test_mint_computes_what_numpy_computes(call, expected):
    np.testing.assert_allclose(call(Tensor(A.copy())).asnumpy(), np.asarray(expected, np.float32), rtol=1e-5,
                               atol=1e-6)


def test_mint_in_graph_mode():
    class Net(nn.Cell):
        def construct(self, x):
            return mint.transpose(mint.nn.functional.relu(x), 0, 1).sum(0)

    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(Net()(Tensor(A)).asnumpy(), np.maximum(A, 0).T.sum(0))


def test_sort_is_stable_as_mint_sort_stable_asks():
    ties = np.random.RandomState(0).randint(0, 4, (3, 40)).astype(np.float32)
    for descending in (False, True):
        _, index = mint.sort(Tensor(ties), dim=1, descending=descending, stable=True)
        np.testing.assert_array_equal(index.asnumpy(), np.argsort(-ties if descending else ties, 1, kind="stable"))
        got = mint.argsort(Tensor(ties), dim=1, descending=descending, stable=True)
        np.testing.assert_array_equal(got.asnumpy(), np.argsort(-ties if descending else ties, 1, kind="stable"))


def test_options_mint_does_not_serve_are_refused():
    with pytest.raises(InvalidParamError, match="inplace"):
        mint.nn.functional.dropout(Tensor(A), inplace=True)


def test_mint_imports_as_mindspore_mint():
    from ascendemu.cli.run import _resolve
    assert _resolve("ascendemu.frontend.mint.nn.functional") is mint.nn.functional
    assert ms.mint is mint and "mint" in ms.__all__
