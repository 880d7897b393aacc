"""Record the MindIR fixtures (tests/fixtures/mindir/) and check that real MindSpore loads ascendemu's files.

Three steps, two interpreters (real MindSpore is never a dependency of the project, never needed by CI)::

    /path/to/venv-with-mindspore/bin/python tools/record_mindir.py record [net ...]
        # real MindSpore exports each network of tests/fixtures/mindir/nets.py (mindspore_<net>.mindir),
        # loads the file back with ms.load + nn.GraphCell and runs it: outputs.npz (x_<net>, y_<net>);
        # naming networks records only those (the other files and outputs are kept as they are)
    .venv/bin/python tools/record_mindir.py export-ours
        # ascendemu exports the same networks with the same weights: ascendemu_<net>.mindir
    /path/to/venv-with-mindspore/bin/python tools/record_mindir.py check
        # real MindSpore loads ascendemu_<net>.mindir, runs it with nn.GraphCell and compares with its own
        # outputs: ms_loads_ours.json (per network: loaded, max abs difference, allclose)

tests/test_mindir.py checks that ascendemu's export still writes exactly the files MindSpore checked.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "mindir"
sys.path.insert(0, str(FIXTURES))
import nets  # noqa: E402

RTOL, ATOL = 1e-5, 1e-6


def record(ms, names: list[str]) -> None:
    ms.set_context(mode=ms.GRAPH_MODE)
    old = FIXTURES / "outputs.npz"
    arrays = dict(np.load(old)) if old.exists() else {}
    for name in names:
        net, x = nets.build(ms, name)
        (FIXTURES / f"mindspore_{name}.mindir").unlink(missing_ok=True)   # MindSpore leaves it read-only
        ms.export(net, ms.Tensor(x), file_name=str(FIXTURES / f"mindspore_{name}"), file_format="MINDIR")
        cell = ms.nn.GraphCell(ms.load(str(FIXTURES / f"mindspore_{name}.mindir")))
        y = cell(ms.Tensor(x)).asnumpy()
        np.testing.assert_allclose(y, net(ms.Tensor(x)).asnumpy(), rtol=RTOL, atol=ATOL)
        arrays[f"x_{name}"], arrays[f"y_{name}"] = x, y
        print(name, y.shape, (FIXTURES / f"mindspore_{name}.mindir").stat().st_size, "bytes")
    np.savez(FIXTURES / "outputs.npz", **arrays)


def export_ours(ms, names: list[str]) -> None:
    for name in names:
        net, x = nets.build(ms, name)
        path = FIXTURES / f"ascendemu_{name}.mindir"
        path.unlink(missing_ok=True)      # the export leaves its file read-only, as MindSpore does
        ms.export(net, ms.Tensor(x), file_name=str(path), file_format="MINDIR")
        print(name, path.stat().st_size, "bytes")


def check(ms, names: list[str]) -> None:
    ms.set_context(mode=ms.GRAPH_MODE)
    recorded = np.load(FIXTURES / "outputs.npz")
    result = {"mindspore_version": ms.__version__, "rtol": RTOL, "atol": ATOL, "networks": {}}
    for name in names:
        path = FIXTURES / f"ascendemu_{name}.mindir"
        entry: dict = {"file": path.name, "bytes": path.stat().st_size}
        try:
            cell = ms.nn.GraphCell(ms.load(str(path)))
            y = cell(ms.Tensor(recorded[f"x_{name}"])).asnumpy()
        except Exception as e:  # noqa: BLE001  a recorded verdict, not a crash
            entry.update(loaded=False, error=f"{type(e).__name__}: {str(e)[:500]}")
        else:
            want = recorded[f"y_{name}"]
            entry.update(loaded=True, shape=list(y.shape), max_abs_diff=float(np.max(np.abs(y - want))),
                         allclose=bool(y.shape == want.shape and np.allclose(y, want, rtol=RTOL, atol=ATOL)))
        result["networks"][name] = entry
        print(name, entry)
    (FIXTURES / "ms_loads_ours.json").write_text(json.dumps(result, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("record", "export-ours", "check"))
    parser.add_argument("nets", nargs="*", help=f"record/export only these networks (of {list(nets.SHAPES)})")
    args = parser.parse_args()
    unknown = sorted(set(args.nets) - set(nets.SHAPES))
    if unknown:
        parser.error(f"unknown network(s) {unknown}; the fixtures have {list(nets.SHAPES)}")
    ms = importlib.import_module("ascendemu.frontend" if args.step == "export-ours" else "mindspore")
    names = args.nets or list(nets.SHAPES)
    {"record": record, "export-ours": export_ours, "check": lambda m, _: check(m, list(nets.SHAPES))}[args.step](ms, names)


if __name__ == "__main__":
    main()
