"""The front end's validators raise the builtin exception type MindSpore 2.10 raises for the same misuse
(issue 21), as a typed InvalidParamError that keeps the ACL code 100000 and the emulator's message.

Oracle: the error types real MindSpore 2.10 raised for these calls, recorded in
tests/fixtures/conformance/*.json (the sample named in each case's comment); the conformance suite
checks the type per sample, this file checks that one error is both that type and an ACL error."""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu import errors
from ascendemu.frontend import Tensor, ops

X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield


def test_check_int_raises_type_error_for_a_non_int_and_error_for_a_bad_value():
    """MindSpore's validators: TypeError for the type, ValueError for the range."""
    kinds = {"error": errors.InvalidValueError, "type_error": errors.InvalidTypeError}
    with pytest.raises(errors.InvalidTypeError, match=r"invalid n 2\.5: must be a positive int"):
        errors.check_int(2.5, "n", minimum=1, **kinds)
    with pytest.raises(errors.InvalidValueError, match="invalid n 0: must be a positive int") as e:
        errors.check_int(0, "n", minimum=1, **kinds)
    assert not isinstance(e.value, TypeError) and e.value.code == errors.ACL_ERROR_INVALID_PARAM
    with pytest.raises(errors.InvalidValueError):         # without type_error, error serves both
        errors.check_int(True, "n", error=errors.InvalidValueError)


@pytest.mark.parametrize("call,builtin,message", [
    (lambda: ops.chunk(Tensor(X), 0), ValueError, "chunks 0: must be a positive int"),         # ops.chunk#2
    (lambda: ops.make_range(1.5), TypeError, "argument 1.5: must be an int"),                  # make_range#2
    (lambda: ops.reshape(Tensor(X), (4, 2)), ValueError, r"cannot reshape \(2, 3\)"),          # reshape#9
    (lambda: ops.Trace()(Tensor(X[0])), RuntimeError, "must be a 2-D tensor"),                 # Trace#4
    (lambda: ops.diff(Tensor(X), 2), RuntimeError, "MindSpore computes n=1 only"),             # diff#2
    (lambda: ops.full(2.5, 1.0), TypeError, "must be a tuple or list of ints"),                 # full#1
    (lambda: ops.nan_to_num(Tensor(X), "a"), TypeError, "'nan' should be one of"),             # NanToNum#2
    (lambda: Tensor(X).select(0, 5), ValueError, r"index 5: must be an int in -2\.\.1"),       # Tensor.select#2
])
def test_a_misuse_is_mindspores_builtin_type_and_an_acl_error(call, builtin, message):
    with pytest.raises(builtin, match=message) as e:
        call()
    assert isinstance(e.value, errors.InvalidParamError) and e.value.code == errors.ACL_ERROR_INVALID_PARAM
