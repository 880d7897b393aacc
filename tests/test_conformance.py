"""The differential conformance suite: every recorded sample of tests/conformance/ run on the emulator in
PyNative and in GRAPH_MODE (a Cell wrapping the call, O0), compared with what real MindSpore 2.10 CPU
gave (tests/fixtures/conformance/, recorded by tools/record_conformance.py): outputs' values, dtypes and
shapes within each dtype's tolerance, gradients, a Cell's parameter names, and for samples MindSpore
refuses, the type of its exception (TypeError, ValueError, RuntimeError, ...).

``tests/conformance/KNOWN_MISMATCHES.txt`` lists the samples where the emulator differs today (the test
fails if one of them starts to match: take it off the list); ``UNSAMPLED.txt`` the served names without
samples (it may only shrink).

Cost: a cold kernel cache compiles every (op, dtype) kernel and its gradient's with numba (1-3 s each,
thousands of them), so the default tier runs each name's first sample and first error sample (the
"smoke" tier); ``ASCENDEMU_CONFORMANCE=full`` runs every sample. ``ASCENDEMU_CONFORMANCE_CACHE=<dir>``
keeps the kernels in that directory across runs (with a fixed ``ASCENDEMU_CACHE_KEY_FILE``, since
entries made under another key are quarantined), which makes a re-run mostly cache hits.
"""
from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.frontend.api_coverage import coverage, is_served
from conformance import FAMILIES, HERE, all_specs
from conformance.core import Outcome, Spec, error_kind, run_sample, unpack

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "conformance"
SPECS = all_specs()
BY_NAME: dict[str, Spec] = {spec.name: spec for specs in SPECS.values() for spec in specs}
MODES = ("pynative", "graph")
# which samples run: "smoke" (default: each name's first sample and first error sample) or "full" (all)
TIER = os.environ.get("ASCENDEMU_CONFORMANCE", "smoke")
TIERS = ("smoke", "full")
# a kernel cache kept across runs (see the module docstring); unset: the session's shared cache
PERSISTENT_CACHE = os.environ.get("ASCENDEMU_CONFORMANCE_CACHE")


# a comment starts with "#" at the start of a line or after a blank ("add#3" is a sample id, not a comment)
COMMENT = re.compile(r"(?:^|\s)#.*$")


def _listed(path: Path) -> list[str]:
    """A list file's entries: one per line, comments and blank lines ignored."""
    if not path.exists():
        return []
    entries = (COMMENT.sub("", line).strip() for line in path.read_text().splitlines())
    return [e for e in entries if e]


# (sample id, mode) of the samples where the emulator differs from MindSpore today (the reason is the comment)
KNOWN: set[tuple[str, str]] = {tuple(entry.split()) for entry in _listed(HERE / "KNOWN_MISMATCHES.txt")}


@functools.lru_cache(maxsize=None)
def recorded(family: str) -> tuple[dict, dict]:
    """The family's index and its arrays (the npz's per-dtype blobs)."""
    index = json.loads((FIXTURES / f"{family}.json").read_text())
    with np.load(FIXTURES / f"{family}.npz") as npz:
        blobs = {k: npz[k] for k in npz.files}
    return index, blobs


@pytest.fixture(scope="module")
def ascendemu_kernel_cache(ascendemu_kernel_cache: Path) -> Path:
    """The kernel cache of this module's ``ex``: ``ASCENDEMU_CONFORMANCE_CACHE`` if set, else the session's."""
    if not PERSISTENT_CACHE:
        return ascendemu_kernel_cache
    root = Path(PERSISTENT_CACHE)
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return root


def selected(spec: Spec) -> list[int]:
    """The indices of the spec's samples the tier runs."""
    if TIER not in TIERS:
        raise ValueError(f"ASCENDEMU_CONFORMANCE must be one of {TIERS}, got {TIER!r}")
    if TIER == "full":
        return list(range(len(spec.samples)))
    first_ok = [i for i, s in enumerate(spec.samples) if not s.error][:1]
    first_error = [i for i, s in enumerate(spec.samples) if s.error][:1]
    return first_ok + first_error


@pytest.fixture(autouse=True)
def device(ex, restore_context):
    """Every test on the module's emulated device (conftest's ``ex``); the mode is put back after."""
    yield


def _close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> bool:
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "fc" or got.dtype.kind in "fc":
        wide = np.complex128 if "c" in want.dtype.kind + got.dtype.kind else np.float64
        return bool(np.allclose(got.astype(wide), want.astype(wide), rtol=rtol, atol=atol, equal_nan=True))
    return bool(np.array_equal(got, want))


def compare(entry: dict, got: Outcome, arrays: dict, sample_id: str) -> list[str]:
    """What differs between MindSpore's recorded outcome and the emulator's (empty: conforms)."""
    if "error" in entry:
        if got.error is None:
            return [f"MindSpore raised {entry['error_message'][:120]!r}; the emulator returned"]
        if error_kind(got.error) != entry["error"]:
            return [f"MindSpore raised {entry['error']}, the emulator {type(got.error).__name__}: {got.error}"[:300]]
        return []
    if got.error is not None:
        return [f"the emulator raised {type(got.error).__name__}: {got.error}"[:300]]
    problems = []
    if "params" in entry and sorted(got.params) != entry["params"]:
        problems.append(f"parameters {sorted(got.params)} != MindSpore's {entry['params']}")
    outputs = entry["outputs"]
    if len(got.outputs) != len(outputs):
        return problems + [f"{len(got.outputs)} outputs, MindSpore {len(outputs)}: "
                           f"{[(k, d, a.shape) for k, d, a in got.outputs]}"]
    for k, ((kind, dtype, value), (want_kind, want_dtype, shape, rtol, atol)) in enumerate(zip(got.outputs, outputs)):
        if (kind, dtype, list(value.shape)) != (want_kind, want_dtype, shape):
            problems.append(f"output {k}: {kind} {dtype} {list(value.shape)}, MindSpore {want_kind} {want_dtype} {shape}")
        elif not _close(value, arrays[f"{sample_id}/out{k}"], rtol, atol):
            want = arrays[f"{sample_id}/out{k}"]
            problems.append(f"output {k} values differ (rtol={rtol}, atol={atol}): {value.ravel()[:6]} vs "
                            f"MindSpore {want.ravel()[:6]}")
    if entry.get("grads"):
        rtol, atol = entry["grad_tol"]
        if len(got.grads) != entry["grads"]:
            problems.append(f"{len(got.grads)} gradients, MindSpore {entry['grads']}")
        else:
            for k, g in enumerate(got.grads):
                want = arrays[f"{sample_id}/grad{k}"]
                if not _close(g, want, rtol, atol):
                    problems.append(f"gradient {k} differs: {g.shape} {g.ravel()[:6]} vs MindSpore {want.shape} "
                                    f"{want.ravel()[:6]}")
    return problems


def run_recorded(spec: Spec, mode: str) -> dict[str, list[str]]:
    """Every sample of the spec on the emulator in ``mode``: sample id -> what differs from MindSpore."""
    meta, blobs = recorded(spec.family)
    index, table = meta["samples"], meta["arrays"]
    failures = {}
    ids = spec.sample_ids()
    for k in selected(spec):
        sample_id, sample = ids[k], spec.samples[k]
        entry = index.get(sample_id)
        if entry is None or entry["fingerprint"] != sample.describe():
            failures[sample_id] = ["not recorded, or recorded from another spec: run tools/record_conformance.py "
                                   f"--family {spec.family}"]
            continue
        arrays = {key: unpack(blobs, table, key) for key in table if key.startswith(sample_id + "/")}
        inputs = [arrays.get(f"{sample_id}/in{k}") for k in range(len(sample.inputs))]
        params = {p: arrays[f"{sample_id}/param/{p}"] for p in entry["params"]} if "params" in entry else None
        got = run_sample(ms, spec, sample, inputs, params, bool(entry.get("grads")), graph=mode == "graph")
        problems = compare(entry, got, arrays, sample_id)
        if problems:
            failures[sample_id] = problems
    return failures


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_conforms_to_mindspore(name: str, mode: str) -> None:
    spec = BY_NAME[name]
    if not is_served(name):
        pytest.skip(f"{name} is recorded but not served yet")
    if mode == "graph" and not spec.graph:
        pytest.skip(f"{name} is not a graph op")
    if mode == "graph":
        ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    else:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    failures = run_recorded(spec, mode)
    ran = {spec.sample_ids()[k] for k in selected(spec)}
    known = {sid for sid, m in KNOWN if m == mode and sid in ran}
    unexpected = {sid: p for sid, p in failures.items() if sid not in known}
    now_conform = sorted(known - set(failures))
    lines = [f"{sid} {spec.samples[int(sid.rsplit('#', 1)[1])].describe()}: {'; '.join(p)}"
             for sid, p in unexpected.items()]
    assert not unexpected, f"{len(unexpected)} samples differ from MindSpore 2.10 ({mode}):\n" + "\n".join(lines)
    assert not now_conform, f"now conforming: take {now_conform} ({mode}) off KNOWN_MISMATCHES.txt"


def test_fixtures_are_the_specs_samples() -> None:
    """Each family's fixture holds exactly its specs' samples (none orphaned, none missing)."""
    for family in FAMILIES:
        expected = {sid for spec in SPECS[family] for sid in spec.sample_ids()}
        if not expected and not (FIXTURES / f"{family}.json").exists():
            continue
        recorded_ids = set(recorded(family)[0]["samples"])
        assert recorded_ids == expected, (f"{family}: re-record with tools/record_conformance.py --family {family}; "
                                          f"missing {sorted(expected - recorded_ids)[:5]}, "
                                          f"orphaned {sorted(recorded_ids - expected)[:5]}")


def test_every_spec_has_samples() -> None:
    """A spec without samples would count its name as sampled while checking nothing."""
    empty = sorted(name for name, spec in BY_NAME.items() if not spec.samples)
    assert not empty, f"specs without samples (give them shapes, or errors): {empty}"


def test_known_mismatches_name_recorded_samples() -> None:
    ids = {sid for spec in BY_NAME.values() for sid in spec.sample_ids()}
    stale = sorted((sid, m) for sid, m in KNOWN if sid not in ids or m not in MODES)
    assert not stale, f"KNOWN_MISMATCHES.txt names samples or modes that do not exist: {stale}"


def test_a_served_name_without_samples_is_listed_and_the_list_only_shrinks() -> None:
    """A served name with no samples is a failing test, except those in UNSAMPLED.txt, which may only
    shrink: a listed name that gains samples, or is no longer served, must come off the list."""
    served = {q for group in coverage() for q in group.served}
    listed = set(_listed(HERE / "UNSAMPLED.txt"))
    sampled = set(BY_NAME)
    assert not listed & sampled, f"sampled now, take them off UNSAMPLED.txt: {sorted(listed & sampled)}"
    assert not listed - served, f"not served, take them off UNSAMPLED.txt: {sorted(listed - served)}"
    missing = sorted(served - sampled - listed)
    assert not missing, f"served without conformance samples (add specs in tests/conformance/): {missing}"
