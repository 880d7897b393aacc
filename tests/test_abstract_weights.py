"""Abstract weights: under DryRun a Parameter keeps shape, dtype and its initializer's seeds, not values.

Oracles: real MindSpore 2.10's seeded weights (tests/fixtures/seed_parity.json, recorded by
tools/record_seed_parity.py), which an abstract weight must compute bit for bit when read; the same
DryRun with eager weights, whose simulated figures an abstract DryRun must equal; the child process's
own peak RSS (VmHWM) for a model whose weights would take more than 4 GiB.
"""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from limits import ABSTRACT_DRYRUN_RSS_MIB, SUBPROCESS_TIMEOUT_S

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, context, nn, set_backend
from ascendemu.frontend.common import initializer as init_mod
from ascendemu.graph.executor import DeviceExecutor
from ascendemu.hal.runtime import get_runtime

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "seed_parity.json").read_text())
REPO = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def dry_run(tmp_path: Path):
    """A DryRun executor installed as the backend, on a fresh runtime (finalized after)."""
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    executor = DeviceExecutor(cache_root=str(tmp_path), dry_run=True, progress=False)
    previous = set_backend(executor)
    try:
        yield executor
    finally:
        set_backend(previous)
        context.set_context(mode=context.PYNATIVE_MODE)
        rt.finalize()


def bits(x) -> list[int]:
    return np.asarray(x, np.float32).ravel()[:FIXTURE["first"]].view(np.uint32).tolist()


@pytest.mark.parametrize("seed", sorted(FIXTURE["layers"]))
def test_abstract_weights_fill_mindsporess_numbers_when_read(tmp_path, seed):
    """Built under DryRun, the recorder's layers hold no values; read afterwards (numpy drawn in
    between, as the recorder does), they are real MindSpore's, and numpy's stream moved on as eagerly."""
    with dry_run(tmp_path):
        ms.set_seed(int(seed))
        d1 = nn.Dense(4, 3)
        c1 = nn.Conv2d(2, 3, 3, has_bias=True)
        np.random.rand(2)
        d2 = nn.Dense(3, 2, dtype=ms.float16)
        after = np.random.rand()
        cells = (("d1", d1), ("c1", c1), ("d2", d2))
        assert all(p.has_init for _, cell in cells for p in cell.get_parameters())
        assert d2.weight.shape == (2, 3) and d2.weight.dtype == ms.float16 and d2.weight.nbytes == 12
    got = {}
    for prefix, cell in reversed(cells):             # read in another order: each has its own seeds
        for p in cell.get_parameters():
            got[f"{prefix}.{p.name.split('.')[-1]}"] = bits(p.asnumpy().astype(np.float32))
            assert not p.has_init
    assert got == FIXTURE["layers"][seed]
    ms.set_seed(int(seed))                           # eagerly: the same draw after the same layers
    nn.Dense(4, 3), nn.Conv2d(2, 3, 3, has_bias=True), np.random.rand(2), nn.Dense(3, 2, dtype=ms.float16)
    assert np.random.rand() == after


def test_deferred_init_as_mindspore(tmp_path):
    """MindSpore's deferred init: initializer() is lazy and draws when filled; a Parameter made from it
    fills at once outside DryRun; under DryRun ``Parameter.init_data()`` fills it and returns it."""
    ms.set_seed(3)
    want = init_mod.initializer("normal", (3, 4)).asnumpy()
    ms.set_seed(3)
    lazy = init_mod.initializer("normal", (3, 4))
    assert lazy.has_init and isinstance(lazy.init, init_mod.Normal) and lazy.shape == (3, 4)
    eager = Parameter(lazy, name="w")
    assert not eager.has_init and np.array_equal(eager.asnumpy(), want)
    ms.set_seed(3)
    assert np.array_equal(Tensor(shape=(3, 4), dtype=ms.float32, init="normal").asnumpy(), want)
    with dry_run(tmp_path):
        ms.set_seed(3)
        w = Parameter(init_mod.initializer("normal", (3, 4)), name="w")
        w_same = w.clone()
        moments = ms.ParameterTuple([w]).clone("moments", "zeros")
        assert w.has_init and w_same.has_init and moments[0].has_init
        assert w.init_data() is w and not w.has_init
        assert np.array_equal(w.asnumpy(), want) and np.array_equal(w_same.asnumpy(), want)
        assert np.array_equal(moments[0].asnumpy(), np.zeros((3, 4), np.float32))
        w.set_data(init_mod.initializer("ones", (3, 4)))            # stays abstract under DryRun
        assert w.has_init and np.array_equal(w.asnumpy(), np.ones((3, 4), np.float32))


def _train_twice(width: int, depth: int) -> tuple:
    layers = [nn.Dense(width, width) for _ in range(depth)]
    net = nn.SequentialCell(layers)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    x = Tensor(np.ones((4, width), np.float32))
    return train, x


@pytest.mark.parametrize("level", ["O0", "O2"])
def test_a_dry_run_never_fills_and_prices_as_with_eager_weights(tmp_path, level):
    figures = {}
    for abstract in (True, False):
        ms.set_seed(1)
        built = None if abstract else _train_twice(64, 3)      # eager: built before the DryRun
        with dry_run(tmp_path / str(abstract)) as executor:
            context.set_context(mode=context.GRAPH_MODE, jit_config={"jit_level": level})
            train, x = built or _train_twice(64, 3)
            weights = [p for p in train.get_parameters() if p.name.startswith(("0.", "moments."))]
            assert len(weights) == 2 + 6 and all(p.has_init == abstract for p in weights)
            train(x, x)
            train(x, x)
            mem = get_runtime().mem_stats()
            figures[abstract] = (executor.steps[-1].device_s, mem.peak_used, mem.actual_peak)
    assert figures[True] == figures[False]


def test_a_checkpoint_saved_under_dry_run_holds_the_eager_weights(tmp_path):
    """Decision: a checkpoint saved under DryRun writes the values an eager run would (each weight
    filled for the write and let go: the parameters stay abstract)."""
    ms.set_seed(11)
    eager = nn.Dense(5, 3)
    with dry_run(tmp_path):
        ms.set_seed(11)
        net = nn.Dense(5, 3)
        ms.save_checkpoint(net, str(tmp_path / "dry.ckpt"))
        assert net.weight.has_init and net.bias.has_init
    loaded = ms.load_checkpoint(str(tmp_path / "dry.ckpt"))
    assert np.array_equal(loaded["weight"].asnumpy(), eager.weight.asnumpy())
    assert np.array_equal(loaded["bias"].asnumpy(), eager.bias.asnumpy())


# A chain of square MatMuls whose weights take 5 x 16384^2 x 4 B = 5 GiB: abstract (initializer) or
# eager (numpy zeros: host data whose pages are never touched, so the eager run fits this machine too)
BIG_CHILD = """
import json, sys
import numpy as np
from ascendemu.frontend import Parameter, Tensor, context, nn, ops, set_backend
from ascendemu.frontend.common.initializer import initializer
from ascendemu.graph.executor import DeviceExecutor
from ascendemu.hal.runtime import get_runtime

WIDTH, DEPTH, abstract = 16384, 5, sys.argv[1] == "abstract"

class Chain(nn.Cell):
    def __init__(self):
        super().__init__()
        for i in range(DEPTH):
            data = initializer("normal", (WIDTH, WIDTH)) if abstract else np.zeros((WIDTH, WIDTH), np.float32)
            setattr(self, f"w{i}", Parameter(data, name=f"w{i}"))

    def construct(self, x):
        for i in range(DEPTH):
            x = ops.relu(ops.matmul(x, getattr(self, f"w{i}")))
        return x

executor = DeviceExecutor(cache_root=sys.argv[2], dry_run=True, progress=False)
set_backend(executor)
context.set_context(mode=context.GRAPH_MODE, jit_config={"jit_level": "O2"})
net = Chain()
x = Tensor(np.ones((8, WIDTH), np.float32))
net(x)
net(x)
mem = get_runtime().mem_stats()
hwm = [int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
print(json.dumps({"step": executor.steps[-1].device_s, "used": mem.peak_used, "actual": mem.actual_peak,
                  "abstract": [getattr(net, f"w{i}").has_init for i in range(DEPTH)], "rss_mib": hwm / 1024}))
"""


def test_a_dry_run_of_weights_over_4_gib_takes_modest_host_memory(tmp_path):
    runs = {}
    for kind in ("abstract", "eager"):
        out = subprocess.run([sys.executable, "-c", BIG_CHILD, kind, str(tmp_path)], capture_output=True,
                             text=True, cwd=REPO, timeout=SUBPROCESS_TIMEOUT_S)
        assert out.returncode == 0, out.stderr[-3000:]
        runs[kind] = json.loads(out.stdout.strip().splitlines()[-1])
    abstract, eager = runs["abstract"], runs["eager"]
    assert all(abstract["abstract"]) and not any(eager["abstract"])
    assert abstract["used"] >= 5 * 16384 ** 2 * 4 > 4 << 30           # the weights are on the device
    assert abstract["rss_mib"] < ABSTRACT_DRYRUN_RSS_MIB
    assert (abstract["step"], abstract["used"], abstract["actual"]) == (eager["step"], eager["used"],
                                                                       eager["actual"])
