"""Record real MindSpore's answers for the differential conformance suite (tests/conformance/).

Every spec's samples run once on real MindSpore 2.10 (CPU, PyNative); per family the inputs, a Cell's
parameters, the outputs and the gradients go to ``tests/fixtures/conformance/<family>.npz`` (compressed;
float16 samples stay float16) and an index ``<family>.json``: MindSpore's version, per sample its
fingerprint (so a changed spec is caught as stale), input/output dtypes and shapes, tolerances, the
exception type MindSpore raised, and the spec's note (where MindSpore documents Ascend behaviour that
differs from its CPU one).

Run it with real MindSpore (CI never needs it; ascendemu is not imported)::

    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_conformance.py [--family math ...]

After the lead merges newly served names, rewrite tests/conformance/UNSAMPLED.txt (served names without
samples, most used first) with the project's venv (this mode imports ascendemu, not MindSpore)::

    .venv/bin/python tools/record_conformance.py --unsampled

A family whose module sets ``COMMUNICATOR = True`` (the collectives, ``comm5``) is recorded in a one-rank
MindSpore job: the recorder starts itself under ``msrun --worker_num=1 --local_worker_num=1`` (from the
interpreter's bin directory) for that family, and the worker calls ``mindspore.communication.init()``
(MindSpore CPU's ``mccl`` world of one) before it records; msrun's scheduler process only serves that init.

It prints every sample whose outcome was not the one its spec expects (a sample MindSpore refused that
the spec did not mark as an error, or the reverse): fix the spec, or keep the sample as MindSpore's
answer when that is the point.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "conformance"
sys.path.insert(0, str(ROOT / "tests"))

from conformance import FAMILIES, all_specs  # noqa: E402
from conformance.core import (GRAD_TOLERANCE, TOLERANCES, Spec, build_call, error_kind, make_inputs,  # noqa: E402
                              make_param, pack, run_sample)

MESSAGE_CHARS = 300          # how much of MindSpore's error message the index keeps (for the report)


def wants_grad(spec: Spec, sample: Any) -> bool:
    """Gradients are recorded for float32 samples that MindSpore should accept."""
    return sample.grad and sample.dtype == "float32" and not sample.error


def tolerance(spec: Spec, dtype_text: str) -> list[float]:
    """(rtol, atol) of an output: the spec's, else its dtype's, else exact."""
    if spec.tol is not None:
        return list(spec.tol)
    return list(TOLERANCES.get(dtype_text.lower(), (0.0, 0.0)))


def cell_params(ms: Any, spec: Spec, sample: Any, sample_id: str) -> dict[str, np.ndarray] | None:
    """A Cell's parameters made from the sample id (names, shapes and dtypes as MindSpore builds them)."""
    if spec.cell is None:
        return None
    try:
        _, net = build_call(ms, spec, sample, None, oracle=True)
    except Exception:                # noqa: BLE001 - the sample's run records the refusal
        return {}
    return {p.name: make_param(sample_id, p.name, tuple(p.shape), str(p.asnumpy().dtype))
            for p in net.get_parameters()}


def record_family(ms: Any, family: str, specs: list[Spec]) -> tuple[dict, dict[str, np.ndarray]]:
    """The family's index entries and arrays."""
    index: dict[str, dict] = {}
    arrays: dict[str, np.ndarray] = {}
    for spec in specs:
        for sample_id, sample in zip(spec.sample_ids(), spec.samples):
            inputs = make_inputs(sample_id, sample)
            params = cell_params(ms, spec, sample, sample_id)
            outcome = run_sample(ms, spec, sample, inputs, params, wants_grad(spec, sample), oracle=True)
            entry: dict[str, Any] = {"fingerprint": sample.describe(), "dtype": sample.dtype,
                                     "inputs": [None if a is None else [str(a.dtype), list(a.shape)] for a in inputs]}
            if spec.note:
                entry["note"] = spec.note
            for k, a in enumerate(inputs):
                if a is not None:
                    arrays[f"{sample_id}/in{k}"] = a
            for name, a in (params or {}).items():
                arrays[f"{sample_id}/param/{name}"] = a
            if params is not None:
                entry["params"] = sorted(params)
            if outcome.error is not None:
                entry["error"] = error_kind(outcome.error)
                entry["error_message"] = f"{type(outcome.error).__name__}: {outcome.error}"[:MESSAGE_CHARS]
                if not sample.error:
                    print(f"UNEXPECTED ERROR {sample_id} {sample.describe()}: {entry['error_message'][:160]}")
            else:
                if sample.error:
                    print(f"ACCEPTED ERROR SAMPLE {sample_id} {sample.describe()}")
                entry["outputs"] = []
                for k, (kind, dtype_text, value) in enumerate(outcome.outputs):
                    arrays[f"{sample_id}/out{k}"] = value
                    entry["outputs"].append([kind, dtype_text, list(value.shape), *tolerance(spec, dtype_text)])
                for k, g in enumerate(outcome.grads):
                    arrays[f"{sample_id}/grad{k}"] = g
                if outcome.grads:
                    entry["grads"] = len(outcome.grads)
                    entry["grad_tol"] = list(spec.grad_tol or GRAD_TOLERANCE)
            index[sample_id] = entry
    return index, arrays


def write_index(path: Path, meta: dict, index: dict, table: dict) -> None:
    """The index as JSON with one sample (and one array) per line, so a re-recording diffs readably."""
    lines = ["{"] + [f"{json.dumps(k)}: {json.dumps(v)}," for k, v in meta.items()]
    for key, rows in (("samples", index), ("arrays", table)):
        body = ",\n".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in rows.items())
        lines.append(f"{json.dumps(key)}: {{\n{body}\n}}" + ("," if key == "samples" else ""))
    path.write_text("\n".join(lines) + "\n}\n")


def write_unsampled() -> int:
    """Rewrite UNSAMPLED.txt: its comment header, then every served name without samples, most used first."""
    from ascendemu.frontend.api_coverage import coverage, usage
    counts = usage()
    sampled = {spec.name for specs in all_specs().values() for spec in specs}
    missing = sorted({q for g in coverage() for q in g.served} - sampled, key=lambda q: (-counts.get(q, 0), q))
    path = ROOT / "tests" / "conformance" / "UNSAMPLED.txt"
    header = [line for line in path.read_text().splitlines() if line.startswith("#")]
    path.write_text("\n".join(header + missing) + "\n")
    print(f"{path}: {len(missing)} served names without samples")
    return 0


def needs_communicator(family: str) -> bool:
    """Whether the family records in a one-rank msrun job (its module sets ``COMMUNICATOR = True``)."""
    return bool(getattr(importlib.import_module(f"conformance.{family}"), "COMMUNICATOR", False))


def record_under_msrun(family: str) -> int:
    """Record ``family`` in a one-rank msrun job (this script again, as its worker); msrun's return code."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bin_dir = Path(sys.executable).parent            # msrun runs `python`: this interpreter's
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    with tempfile.TemporaryDirectory(prefix="msrun_record_") as logs:
        cmd = [str(bin_dir / "msrun"), "--worker_num=1", "--local_worker_num=1", f"--master_port={port}",
               "--join=True", f"--log_dir={logs}", str(Path(__file__).resolve()), "--family", family]
        proc = subprocess.run(cmd, env=env, check=False)
        if proc.returncode:
            worker = Path(logs) / "worker_0.log"
            print(worker.read_text()[-4000:] if worker.exists() else f"msrun failed: {cmd}", file=sys.stderr)
    return proc.returncode


def record(ms: Any, families: list[str]) -> None:
    """Record each family's samples on ``ms`` and write its fixture."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    specs = all_specs()
    for family in families:
        index, arrays = record_family(ms, family, specs[family])
        blobs, table = pack(arrays)
        np.savez_compressed(FIXTURES / f"{family}.npz", **blobs)
        meta = {"mindspore_version": ms.__version__, "device_target": "CPU", "mode": "PYNATIVE_MODE",
                "recorded_by": "tools/record_conformance.py"}
        if needs_communicator(family):
            meta["launcher"] = "msrun --worker_num=1 (mindspore.communication.init(), one rank)"
        write_index(FIXTURES / f"{family}.json", meta, index, table)
        print(f"{family}: {len(index)} samples, {sum('error' in e for e in index.values())} errors")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", choices=FAMILIES, help="record only these (default: all)")
    parser.add_argument("--unsampled", action="store_true",
                        help="rewrite UNSAMPLED.txt (needs ascendemu, not MindSpore)")
    args = parser.parse_args(argv)
    if args.unsampled:
        return write_unsampled()
    families = list(args.family or FAMILIES)
    import mindspore as ms
    # synchronous PyNative: an op's error is raised by its own sample, never by the next one
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU", pynative_synchronize=True)
    role = os.environ.get("MS_ROLE")                  # set in the processes msrun starts
    if role is not None:
        ms.communication.init()                       # the scheduler serves the worker's init here
        if role == "MS_SCHED":
            return 0
        record(ms, families)
        return 0
    record(ms, [f for f in families if not needs_communicator(f)])
    failed = [f for f in families if needs_communicator(f) and record_under_msrun(f)]
    if failed:
        print(f"msrun failed to record {failed}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
