"""The cache-miss compiler answers numba's BLAS probe itself (kernels/codegen.py
``_load_numba_without_blas_probe``): a cold process no longer imports scipy.linalg, and the objects
it builds are the bytes numba's own start-up (scipy probed) gives."""
from __future__ import annotations

import json
import subprocess
import sys

from limits import SUBPROCESS_TIMEOUT_S

BUILD = r'''
import hashlib, json, sys
if sys.argv[1] == "probed":
    import numba.np.arraymath          # numba's own start-up: its import probes scipy.linalg
from ascendemu.kernels import library
from ascendemu.kernels.codegen import compile_object
from ascendemu.kernels.signature import OpSignature, TensorDesc

def t(shape, dtype="float32"):
    return TensorDesc(shape, dtype)

sigs = [OpSignature("Add", (t((4, 9)), t((1, 9)))), OpSignature("Exp", (t((4, 8), "float16"),)),
        OpSignature("MatMul", (t((4, 8)), t((8, 3))))]
digests = [hashlib.sha256(compile_object(library.generate(s).pyfunc, "k", b"meta")[0]).hexdigest() for s in sigs]
print(json.dumps({"objects": digests, "scipy_linalg": "scipy.linalg" in sys.modules}))
'''


def _build(mode: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", BUILD, mode], capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_cold_build_skips_scipy_and_builds_the_same_objects():
    ours, probed = _build("ours"), _build("probed")
    assert probed["scipy_linalg"] and not ours["scipy_linalg"]
    assert ours["objects"] == probed["objects"]
