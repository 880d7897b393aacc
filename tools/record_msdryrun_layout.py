"""Record real MindSpore 2.10's ``mindspore.Layout`` and ``shard(out_strategy=...)`` as oracles:
- tests/fixtures/layout_api.json: what ``Layout(...)``, ``layout(...)``, ``to_dict()`` and ``Primitive.shard`` with
  Layouts return or raise (run in MindSpore's own Python, from a directory outside the repository);
- tests/fixtures/msdryrun/layout_dryrun.json: the DryRun (stub CANN) of tests/fixtures/msdryrun/layout_dryrun.py per
  CASE: the first step's collectives (as ``record_msdryrun_parallel.record``), and for the cases MindSpore refuses,
  its return code, exception line and the parallel compiler's error lines.
    python tools/record_msdryrun_layout.py /work/msvenv/bin/python /tmp/p8/fakecann
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_msdryrun_parallel import FIXTURES, dryrun_output, record  # noqa: E402

SCRIPT = "layout_dryrun.py"
# (CASE, RANK_SIZE, RANK_ID)
RUNS = [("layout_dp_mp", 4, 1), ("multi_axis", 8, 5), ("repeat_middle", 8, 5), ("out_rs_tuple", 4, 1),
        ("out_rs_layout", 4, 1)]
REFUSED = ["out_bad_tuple", "out_bad_layout", "out_relu", "layout_mismatch"]
PARALLEL_ERROR = re.compile(r"^\[ERROR\] PARALLEL\(.*?\] (\w+)\] (.*)$", re.M)

# each entry: a name and an expression over Layout, L = Layout((2, 2, 2), ("dp", "sp", "mp")) and ops
API_CASES = {
    "to_dict": 'L("dp", "mp").to_dict()',
    "to_dict_multi": 'L(("dp", "sp"), "None", "mp").to_dict()',
    "to_dict_none_in_tuple": 'L(("dp", "None"), "mp").to_dict()',
    "to_dict_rank_list": 'Layout((2, 2), ("a", "b"), [3, 2, 1, 0])("a", "b").to_dict()',
    "to_dict_interleaved": 'Layout((2, 2), ("dp", "interleaved_parallel"))(("dp", "interleaved_parallel"), "None")'
                           '.to_dict()',
    "called_then_original": '(L("mp", "dp"), L.to_dict())[1]',
    "uncalled_to_dict": 'Layout((2,), ("a",)).to_dict()',
    "device_matrix_list": 'Layout([2, 2], ("a", "b"))',
    "alias_list": 'Layout((2, 2), ["a", "b"])',
    "length_mismatch": 'Layout((2, 2), ("a",))',
    "device_matrix_float": 'Layout((2, 2.0), ("a", "b"))',
    "alias_int": 'Layout((2, 2), ("a", 1))',
    "alias_empty": 'Layout((2, 2), ("a", ""))',
    "alias_None": 'Layout((2, 2), ("a", "None"))',
    "alias_repeated": 'Layout((2, 2), ("a", "a"))',
    "interleaved_not_last": 'Layout((2, 2), ("interleaved_parallel", "a"))',
    "rank_list_tuple": 'Layout((2, 2), ("a", "b"), (0, 1, 2, 3))',
    "rank_list_float": 'Layout((2, 2), ("a", "b"), [0, 1, 2, 3.0])',
    "rank_list_length": 'Layout((2, 2), ("a", "b"), [0, 1, 2])',
    "call_unknown_alias": 'L("dp", "xx")',
    "call_alias_twice": 'L("dp", "dp")',
    "call_alias_twice_in_tuple": 'L(("dp", "mp"), "mp")',
    "shard_mixed_in_out": 'ops.MatMul().shard((L("dp", "sp"), L("sp", "mp")), ((4, 1),))',
    "shard_mixed_in": 'ops.MatMul().shard((L("dp", "sp"), (2, 1)))',
    "shard_out_only": 'ops.MatMul().shard(None, ((4, 1),))',
    "shard_uncalled_layout": 'ops.MatMul().shard((Layout((2, 2), ("a", "b")), Layout((2, 2), ("a", "b"))("a", "b")))',
    "in_layout_attr": 'ops.MatMul().shard((L("dp", "sp"), L("sp", "mp"))).attrs["in_layout"]',
    "out_layout_attr": 'ops.MatMul().shard((L("dp", "sp"), L("sp", "mp")), (L(("dp", "sp"), "mp"),))'
                       '.attrs["out_layout"]',
}

PROBE = """
import json, sys
from mindspore import Layout, ops
cases = json.loads(sys.argv[1])
out = {}
for name, expr in cases.items():
    L = Layout((2, 2, 2), ("dp", "sp", "mp"))
    try:
        value = eval(expr)
        out[name] = {"value": value if isinstance(value, (dict, tuple)) else repr(value)}
    except Exception as e:
        out[name] = {"error": type(e).__name__, "message": str(e)}
print("PROBE" + json.dumps(out))
"""


def record_api(python: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([python, "-c", PROBE, json.dumps(API_CASES)], cwd=tmp, capture_output=True, text=True,
                              timeout=300, check=True)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("PROBE"))
    return {"cases": API_CASES, "results": json.loads(line[len("PROBE"):])}


def record_refused(python: str, cann: Path, case: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        code, text = dryrun_output(python, cann, SCRIPT, tmp, {"CASE": case, "RANK_SIZE": "4", "RANK_ID": "1"})
    exception = [x for x in text.splitlines() if re.match(r"^\w+Error: ", x)]
    return {"case": case, "rank_size": 4, "rank_id": 1, "returncode": code, "exception": exception[-1:],
            "parallel_errors": [{"function": f, "message": m} for f, m in PARALLEL_ERROR.findall(text)]}


def main() -> None:
    python, cann = sys.argv[1], Path(sys.argv[2])
    version = subprocess.run([python, "-c", "import mindspore; print(mindspore.__version__)"], capture_output=True,
                             text=True, check=True, cwd=tempfile.gettempdir()).stdout.strip()
    api = record_api(python)
    (FIXTURES.parent / "layout_api.json").write_text(json.dumps({"mindspore": version, **api}, indent=1) + "\n")
    runs = [record(python, cann, SCRIPT, size, rank, {"CASE": case}) for case, size, rank in RUNS]
    refused = [record_refused(python, cann, case) for case in REFUSED]
    (FIXTURES / "layout_dryrun.json").write_text(json.dumps({"mindspore": version, "runs": runs, "refused": refused},
                                                            indent=1) + "\n")
    for r in runs:
        print(r["env"], r["used_peak_mb"], len(r["step_collectives"]))
    for r in refused:
        print(r["case"], r["returncode"], r["exception"], r["parallel_errors"][:1])


if __name__ == "__main__":
    main()
