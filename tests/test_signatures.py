"""Every served ``mindspore.ops`` function and Primitive has real MindSpore 2.10's signature, as the
table recorded from it (frontend/signatures.json) gives it: parameter names, kinds and defaults of a
function (any one of its overloads), of a Primitive's ``__init__`` and, where MindSpore names them (its
``__call__`` is mostly ``*args``), of a Primitive's ``__call__``. The registry-generated primitives
and functions take their signatures from that table, and a wrong call raises Python's TypeError text,
as MindSpore's plain Python functions do."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from ascendemu.errors import ArgumentError, InvalidParamError
from ascendemu.frontend import ops
from ascendemu.frontend.api_coverage import RecordedDefault, coverage, load_table, rows_signature
from ascendemu.frontend.common import dtype as mstype
from ascendemu.frontend.common.tensor import Tensor

# Served names whose signature cannot equal MindSpore's yet, each with the reason (as few as possible).
ALLOWED_MISMATCHES: dict[str, str] = {
    # MindSpore's default is the exact erf form ('none'); the device's GeLU kernel is the tanh
    # approximation only (no Erf kernel), so the default stays 'tanh' rather than silently differ.
}


def _rows(signature: inspect.Signature) -> list[tuple]:
    """A signature as comparable rows (name, kind, default); a default recorded only by repr compares
    by the repr of ours."""
    rows = []
    for p in signature.parameters.values():
        default = p.default
        if isinstance(default, mstype.Type):              # MindSpore's repr of mstype.int32
            default = RecordedDefault(f"mindspore.{default.name}")
        elif default is not p.empty and not isinstance(default, (type(None), bool, int, float, str, tuple, list)):
            default = RecordedDefault(repr(default))
        rows.append((p.name, p.kind.name, "<required>" if default is p.empty else default))
    return rows


def _table_rows(rows: list) -> list[tuple]:
    return _rows(rows_signature(rows))


def _ours(obj: object, part: str) -> list[tuple]:
    if part == "signatures":
        return _rows(inspect.signature(obj))
    method = obj.__init__ if part == "init" else obj.__call__
    params = list(inspect.signature(method).parameters.values())
    return _rows(inspect.Signature(params[1:]))       # without self


def signature_mismatches() -> list[str]:
    """``qualified part: ours != MindSpore's`` for every served ops name whose signature differs."""
    entries = load_table()["entries"]
    out = []
    for group in coverage():
        if group.group not in ("ops-functions", "ops-primitives"):
            continue
        for qualified in group.served:
            entry = entries[qualified]
            obj = getattr(ops, qualified.rsplit(".", 1)[1])
            if entry["kind"] == "function":
                checks = [("signatures", entry["signatures"])]
            else:
                checks = [("init", [entry["init"]])]
                if all(row[1] != "VAR_POSITIONAL" for row in entry["call"] or []) and entry["call"] is not None:
                    checks.append(("call", [entry["call"]]))
            for part, overloads in checks:
                ours = _ours(obj, part)
                if not any(ours == _table_rows(rows) for rows in overloads):
                    out.append(f"{qualified} {part}: ours {ours} != MindSpore's {_table_rows(overloads[0])}")
    return out


def test_every_served_ops_signature_equals_mindsporess():
    mismatches = [m for m in signature_mismatches() if m.split(" ", 1)[0] not in ALLOWED_MISMATCHES]
    print("\n".join(mismatches))
    assert mismatches == [], f"{len(mismatches)} signatures differ from MindSpore 2.10's:\n" + "\n".join(mismatches)


def test_allow_list_names_only_real_mismatches():
    """An allow-listed name that now matches must leave the list."""
    mismatched = {m.split(" ", 1)[0] for m in signature_mismatches()}
    assert sorted(set(ALLOWED_MISMATCHES) - mismatched) == []


def test_generated_function_takes_mindsporess_keywords(ex):
    x, y = np.array([1.0, -2.0], np.float32), np.array([3.0, 4.0], np.float32)
    assert str(inspect.signature(ops.add)) == "(input, other)"
    np.testing.assert_allclose(ops.add(input=Tensor(x), other=Tensor(y)).asnumpy(), x + y)
    np.testing.assert_allclose(ops.pow(Tensor(y), exponent=Tensor(x)).asnumpy(), y ** x)
    np.testing.assert_allclose(ops.relu(Tensor(x), inplace=False).asnumpy(), np.maximum(x, 0))
    np.testing.assert_allclose(ops.Add()(input=Tensor(x), other=Tensor(y)).asnumpy(), x + y)


def test_generated_function_raises_pythons_type_error_text(ex):
    x = Tensor(np.ones(2, np.float32))
    cases = [(lambda: ops.add(x), "add() missing 1 required positional argument: 'other'"),
             (lambda: ops.add(x, x, x), "add() takes 2 positional arguments but 3 were given"),
             (lambda: ops.add(x, y=x), "add() got an unexpected keyword argument 'y'"),
             (lambda: ops.add(x, input=x), "add() got multiple values for argument 'input'"),
             (lambda: ops.Add()(x), "Add() missing 1 required positional argument: 'other'"),
             (lambda: ops.relu(x, False, 1), "relu() takes from 1 to 2 positional arguments but 3 were given"),
             (lambda: ops.neg(x, x), "neg() takes 1 positional argument but 2 were given"),
             (lambda: ops.mul(x, x, "floor"), "mul() takes 2 positional arguments but 3 were given"),
             (lambda: ops.sub(), "sub() missing 2 required positional arguments: 'input' and 'other'")]
    for call, text in cases:
        with pytest.raises(TypeError) as info:
            call()
        assert isinstance(info.value, ArgumentError) and info.value.message == text


def test_generated_function_refuses_an_unsupported_non_default(ex):
    x = Tensor(np.ones(2, np.float32))
    with pytest.raises(InvalidParamError, match="inplace=True is not supported"):
        ops.relu(x, inplace=True)


def test_primitives_take_no_name_argument_as_mindsporess():
    with pytest.raises(TypeError):
        ops.Reshape("Reshape")
    assert list(inspect.signature(ops.Reshape).parameters) == []
    assert ops.Reshape().name == "Reshape" and ops.Primitive("ReLU").name == "ReLU"


def test_parameters_added_for_mindsporess_signature_behave_as_mindspore(ex):
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    t = Tensor(x)
    # grad/value_and_grad(sens_param=True): the call's last argument is the output's gradient
    sens = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 2.0]], np.float32)
    g = ops.grad(lambda a: a * a, sens_param=True)(t, Tensor(sens))
    np.testing.assert_allclose(g.asnumpy(), 2 * x * sens, rtol=1e-6)
    value, g = ops.value_and_grad(lambda a: a * a, sens_param=True)(t, Tensor(sens))
    np.testing.assert_allclose(value.asnumpy(), x * x, rtol=1e-6)
    np.testing.assert_allclose(g.asnumpy(), 2 * x * sens, rtol=1e-6)
    # sum(dtype=) and softmax(dtype=) compute on the input cast to dtype
    ints = Tensor(np.array([[1, 2], [3, 4]], np.int32))
    s = ops.sum(ints, 1, dtype=mstype.float32)
    assert s.dtype == mstype.float32 and s.asnumpy().tolist() == [3.0, 7.0]
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    sm = ops.softmax(Tensor(x.astype(np.float16)), dtype=mstype.float32)
    assert sm.dtype == mstype.float32
    np.testing.assert_allclose(sm.asnumpy(), e / e.sum(axis=-1, keepdims=True), rtol=1e-3)
    # ReduceSum(skip_mode=True) with an empty axis reduces nothing; otherwise as before
    np.testing.assert_array_equal(ops.ReduceSum(skip_mode=True)(t).asnumpy(), x)
    np.testing.assert_allclose(ops.ReduceSum(skip_mode=True)(t, 0).asnumpy(), x.sum(axis=0))
    np.testing.assert_allclose(ops.ReduceSum()(t).asnumpy(), x.sum(), rtol=1e-6)
    # Ones/Zeros default to float32; ones_like's dtype is keyword-only; gather's axis is required
    assert ops.Ones()((2,)).dtype == mstype.float32 and ops.Zeros()((2,)).asnumpy().tolist() == [0.0, 0.0]
    assert ops.ones_like(ints, dtype=mstype.float32).dtype == mstype.float32
    with pytest.raises(TypeError):
        ops.ones_like(ints, mstype.float32)
    with pytest.raises(TypeError):
        ops.gather(t, Tensor(np.array([1], np.int32)))
    np.testing.assert_array_equal(ops.gather(t, Tensor(np.array([1], np.int32)), 0).asnumpy(), x[[1]])
    # amax's numpy-only keywords are refused unless left None; partial binds its first argument
    with pytest.raises(InvalidParamError, match="initial=0.0 is not supported"):
        ops.amax(t, initial=0.0)
    assert ops.partial(max, 5)(3) == 5
    with pytest.raises(InvalidParamError, match="partial: takes the function"):
        ops.partial()


def test_a_corrupt_table_row_is_refused_by_name_not_looked_up():
    from ascendemu.errors import InvalidFileError
    assert str(rows_signature([["input", "POSITIONAL_OR_KEYWORD"], ["dim", "KEYWORD_ONLY", {"tuple": [1]}]])) \
        == "(input, *, dim=(1,))"
    for bad in (["x", "__class__"], ["x"], [3, "POSITIONAL_OR_KEYWORD"], "x"):
        with pytest.raises(InvalidFileError, match="is not \\[name, kind, default\\?\\]"):
            rows_signature([bad])
    for bad in ([["1x", "POSITIONAL_OR_KEYWORD"]], [["a", "KEYWORD_ONLY"], ["b", "POSITIONAL_OR_KEYWORD"]], "rows"):
        with pytest.raises(InvalidFileError, match="signature"):
            rows_signature(bad)
