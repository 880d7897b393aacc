"""Record real MindSpore 2.10's recompute for tests/test_recompute.py: the errors of bad ``Cell.recompute`` /
``Primitive.recompute`` / ``mindspore.recompute`` arguments (type and message) into
tests/fixtures/recompute_errors.json, and the Ascend DryRun's peaks with and without recompute into
tests/fixtures/msdryrun/recompute_dryrun.json: tests/fixtures/msdryrun/mlp_recompute.py (RECOMPUTE=0/1) and
examples/llama/dryrun_7b.py at LLAMA's shape (--recompute none/full/select). Each run's printed peak lines and,
from memory_block.csv, the first step's peak (the script's later steps can peak higher in MindSpore's runtime).

Needs an installed MindSpore 2.10 and the stub CANN of /work/shared/msdryrun/make_fakecann.sh (CI reads the JSON):
    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_msdryrun_recompute.py /tmp/p8/fakecann
"""
from __future__ import annotations

import csv
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from record_msdryrun_parallel import FIXTURES, LLAMA_SCRIPT, peaks_of  # noqa: E402

sys.path.insert(0, str(FIXTURES.parent))
from recompute_error_cases import bad_calls  # noqa: E402

ERRORS = FIXTURES.parent / "recompute_errors.json"
# MindSpore appends its C++ call stack after this line; the message is what comes before it
STACK_SEPARATOR = "\n\n----"
# the Llama's shape: activations outweigh AdamWeightDecay's float32 temporaries, so recompute moves the peak
LLAMA = ["--num_layers", "4", "--hidden_size", "1024", "--num_heads", "8", "--seq_length", "4096",
         "--batch_size", "2", "--jit_level", "O0", "--train_cell", "plain"]
MB = 2 ** 20


def record_errors() -> dict:
    """Each bad call's exception type and message (None: MindSpore accepts it)."""
    import mindspore as ms
    from mindspore import ops

    cases = bad_calls(ms)
    out = {}
    for name, call in cases.items():
        try:
            call()
            out[name] = None
        except (TypeError, ValueError) as exc:
            out[name] = {"type": type(exc).__name__, "message": str(exc).split(STACK_SEPARATOR)[0]}
    prim = ops.ReLU()
    out["primitive_returns_itself"] = prim.recompute() is prim
    out["primitive_attr"] = [ops.ReLU().recompute().attrs["recompute"], ops.ReLU().recompute(False).attrs["recompute"]]
    return {"mindspore": ms.__version__, "cases": out}


def first_step_peak(path: Path) -> float:
    """The live bytes' peak (MB) of memory_block.csv before the first kernel's second launch (the second step)."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    kernels = [r for r in rows if r["type"] == "Kernel" and r["node_name"].startswith("Default/network")]
    first = min(kernels, key=lambda r: int(r["start_time_stamp"]))["node_name"]
    starts = sorted(int(r["start_time_stamp"]) for r in kernels if r["node_name"] == first)
    end = starts[1] if len(starts) > 1 else None
    deltas: dict[int, int] = {}
    for r in rows:
        deltas[int(r["start_time_stamp"])] = deltas.get(int(r["start_time_stamp"]), 0) + int(r["size"])
        deltas[int(r["end_time_stamp"])] = deltas.get(int(r["end_time_stamp"]), 0) - int(r["size"])
    live = peak = 0
    for t in sorted(deltas):
        if end is not None and t >= end:
            break
        live += deltas[t]
        peak = max(peak, live)
    return round(peak / MB, 2)


def record_dryrun(python: str, cann: Path, script: str, env: dict[str, str], args: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        peaks = peaks_of(python, cann, script, tmp, {**env, "RANK_SIZE": "1", "RANK_ID": "0",
                                                     "MS_ALLOC_CONF": "memory_tracker:True"}, args)
        step_peak = first_step_peak(Path(tmp) / "memory_block.csv")
    return {"script": Path(script).name, "env": env, "args": args,
            "used_peak_mb": peaks["Used peak memory usage (without fragments)"],
            "actual_peak_mb": peaks["Actual peak memory usage (with fragments)"], "first_step_peak_mb": step_peak}


def main() -> None:
    python, cann = sys.executable, Path(sys.argv[1])
    errors = record_errors()
    ERRORS.write_text(json.dumps(errors, indent=1) + "\n")
    runs = [record_dryrun(python, cann, "mlp_recompute.py", {"RECOMPUTE": flag}, []) for flag in ("0", "1")]
    runs += [record_dryrun(python, cann, str(LLAMA_SCRIPT), {}, LLAMA + ["--recompute", mode])
             for mode in ("none", "full", "select")]
    (FIXTURES / "recompute_dryrun.json").write_text(json.dumps({"mindspore": errors["mindspore"], "runs": runs},
                                                               indent=1) + "\n")
    for r in runs:
        print(r)


if __name__ == "__main__":
    main()
