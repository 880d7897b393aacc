"""Recompute (``Cell.recompute``, ``Primitive.recompute``, ``mindspore.recompute``; ``graph/recompute.py``):
gradients bit for bit those of the same network without it (and float64 finite differences) in PyNative and
GRAPH_MODE at O0/O1/O2; the backward reads late copies of the forward nodes, a cell's outputs are kept; bad
arguments raise what real MindSpore 2.10 raises (tests/fixtures/recompute_errors.json); the DryRun peak falls
as real MindSpore's does (tests/fixtures/msdryrun/recompute_dryrun.json, tools/record_msdryrun_recompute.py)."""
from __future__ import annotations

import builtins
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

import ascendemu.frontend as ms
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.graph.plan import compile_graph
from ascendemu.graph.recompute import RECOMPUTE_PREFIX

pytestmark = pytest.mark.usefixtures("restore_context")

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES))
from recompute_error_cases import bad_calls  # noqa: E402

ERRORS = json.loads((FIXTURES / "recompute_errors.json").read_text())["cases"]
DRYRUN = json.loads((FIXTURES / "msdryrun" / "recompute_dryrun.json").read_text())["runs"]
LLAMA = Path(__file__).parents[1] / "examples" / "llama" / "dryrun_7b.py"
RNG = np.random.default_rng(24)
W1, B1 = RNG.standard_normal((8, 4)).astype(np.float32) * 0.5, RNG.standard_normal(8).astype(np.float32) * 0.1
W2, B2 = RNG.standard_normal((4, 8)).astype(np.float32) * 0.5, RNG.standard_normal(4).astype(np.float32) * 0.1
X, Y = RNG.standard_normal((6, 4)).astype(np.float32), RNG.standard_normal((6, 4)).astype(np.float32)


class Block(nn.Cell):
    """x + down(tanh(up(x))): a residual feed-forward block."""

    def __init__(self):
        super().__init__()
        self.up = nn.Dense(4, 8, weight_init=Tensor(W1), bias_init=Tensor(B1))
        self.act = ops.Tanh()
        self.down = nn.Dense(8, 4, weight_init=Tensor(W2), bias_init=Tensor(B2))

    def construct(self, x):
        return x + self.down(self.act(self.up(x)))


class Net(nn.Cell):
    """Two blocks and a squared-error loss; ``how``: recompute nothing, each block (Cell.recompute) or each
    block's call through mindspore.recompute / ops.recompute_block."""

    def __init__(self, how: str = "none"):
        super().__init__()
        self.b1, self.b2 = Block(), Block()
        self.how = how
        if how == "cell":
            self.b1.recompute()
            self.b2.recompute(mp_comm_recompute=True)

    def construct(self, x, y):
        if self.how == "function":
            h = ms.recompute(self.b2, ops.recompute_block(self.b1)(x))
        else:
            h = self.b2(self.b1(x))
        return ops.reduce_mean(ops.square(h - y))


def _grads(how: str) -> list[np.ndarray]:
    net = Net(how)
    params = net.trainable_params()
    _, grads = ms.value_and_grad(net, None, params)(Tensor(X), Tensor(Y))
    return [g.asnumpy() for g in grads]


def _numpy_loss(w1: np.ndarray) -> float:
    """The network's loss in float64 with block weights ``w1`` for both blocks' up layer (the others fixed)."""
    h = X.astype(np.float64)
    for _ in range(2):
        h = h + np.tanh(h @ w1.T + B1) @ W2.T.astype(np.float64) + B2
    return float(np.mean((h - Y) ** 2))


def _finite_difference_up_weight() -> np.ndarray:
    """d loss / d W1 summed over the two blocks (they share the values, not the Parameters), central differences."""
    w = W1.astype(np.float64)
    out, eps = np.zeros_like(w), 1e-6
    for idx in np.ndindex(*w.shape):
        hi, lo = w.copy(), w.copy()
        hi[idx] += eps
        lo[idx] -= eps
        out[idx] = (_numpy_loss(hi) - _numpy_loss(lo)) / (2 * eps)
    return out


@pytest.mark.parametrize("mode,level", [("pynative", "O0"), ("graph", "O0"), ("graph", "O1"), ("graph", "O2")])
def test_gradients_are_bit_identical_with_and_without_recompute(ex, mode, level):
    ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE, jit_config={"jit_level": level})
    plain = _grads("none")
    for how in ("cell", "function"):
        got = _grads(how)
        assert all(np.array_equal(a, b) for a, b in zip(got, plain)), how
    # both blocks' up weights against float64 finite differences of the same network in numpy
    # (b1.up.weight + b2.up.weight equals d loss / d W1 when both blocks hold W1)
    np.testing.assert_allclose(plain[0] + plain[4], _finite_difference_up_weight(), rtol=1e-4, atol=1e-5)


class TrainStep(nn.Cell):
    """Loss and gradients of ``net`` in one graph (GradOperation inside construct)."""

    def __init__(self, net):
        super().__init__()
        self.net, self.params = net, net.trainable_params()
        self.grad = ops.GradOperation(get_by_list=True)

    def construct(self, x, y):
        return self.net(x, y), self.grad(self.net, self.params)(x, y)


def _compiled(net: nn.Cell, level: str = "O0", x: np.ndarray = X, y: np.ndarray = Y):
    graph, _ = ms.capture(TrainStep(net), Tensor(x), Tensor(y))
    return graph, compile_graph(graph, level)


def test_the_backward_reads_late_copies_and_the_cells_outputs_are_kept():
    graph, compiled = _compiled(Net("cell"))
    names = [k.full_name for k in compiled.kernels]
    copies = [i for i, n in enumerate(names) if n.startswith(RECOMPUTE_PREFIX)]
    # each block's up MatMul, BiasAdd and Tanh are copied (Tanh's gradient reads its output, the down layer's
    # weight gradient reads Tanh's output); the residual Add making the block's output is not marked
    copied_ops = sorted(n.rsplit("/", 1)[1].split("-")[0] for n in (names[i] for i in copies))
    assert copied_ops == ["BiasAdd", "BiasAdd", "MatMul", "MatMul", "Tanh", "Tanh"]
    assert not any(n.full_name.split("/")[-1].startswith("Add") for n in graph.nodes if n.full_name in graph.recompute)
    # the copies run in the backward: after the loss's gradient, block 2's before block 1's
    first_backward = min(i for i, n in enumerate(names) if n.startswith("Gradients/"))
    assert min(copies) > first_backward
    b2 = [i for i in copies if "/b2-Block/" in names[i]]
    b1 = [i for i in copies if "/b1-Block/" in names[i]]
    assert max(b2) < min(b1)


def test_recompute_lowers_the_planned_peak_at_every_level():
    """A batch large enough that the activations dominate: the planned peak live bytes fall at O0, O1, O2."""
    x = RNG.standard_normal((4096, 4)).astype(np.float32)
    y = RNG.standard_normal((4096, 4)).astype(np.float32)
    for level in ("O0", "O1", "O2"):
        plain = _compiled(Net("none"), level, x, y)[1].lower_bound
        recomputed = _compiled(Net("cell"), level, x, y)[1].lower_bound
        assert recomputed < plain, level


def test_a_primitive_decides_for_itself():
    """Primitive.recompute(False) inside a recomputed cell keeps its output; Primitive.recompute() outside one
    recomputes it (MindSpore: the primitive's mode wins)."""
    net = Net("cell")
    net.b1.act.recompute(False)
    graph, compiled = _compiled(net)
    copied = [k.full_name for k in compiled.kernels if k.full_name.startswith(RECOMPUTE_PREFIX)]
    assert not any("/b1-Block/Tanh-op" in n for n in copied)
    assert any("/b2-Block/Tanh-op" in n for n in copied)
    plain = Net("none")
    assert plain.b1.act.recompute() is plain.b1.act
    assert plain.b1.act.attrs["recompute"] is True
    _, compiled = _compiled(plain)
    copied = [k.full_name for k in compiled.kernels if k.full_name.startswith(RECOMPUTE_PREFIX)]
    assert copied and all("/b1-Block/Tanh-op" in n for n in copied)


def _raise(case: str):
    return bad_calls(ms)[case]()


@pytest.mark.parametrize("case", [c for c in ERRORS if c not in ("primitive_returns_itself", "primitive_attr")])
def test_bad_arguments_raise_what_mindspore_raises(case):
    want = ERRORS[case]
    if want is None:
        _raise(case)
        return
    with pytest.raises((TypeError, ValueError)) as info:
        _raise(case)
    assert isinstance(info.value, getattr(builtins, want["type"]))
    if case != "positional":           # Python's own TypeError text for an extra positional argument
        assert info.value.message == want["message"]


USED = re.compile(r"DryRun: Used peak memory usage \(without fragments\): ([\d.]+)M")
# MindSpore's later steps of the MLP peak higher than its first (its runtime keeps the recomputed ReLUs until
# the down layers' weight gradients, late in step 2): compared with its first step's peak
TOLERANCE = 0.10


def _dryrun_peak(tmp: Path, run: dict) -> float:
    """The used peak (MiB) ascendemu's DryRun prints for a recorded run, in ``tmp``."""
    if run["script"] == "mlp_recompute.py":
        shutil.copy(FIXTURES / "msdryrun" / run["script"], tmp / run["script"])
        script = run["script"]
    else:
        script = str(LLAMA)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "MS_COMPILER_CACHE", "RANK"))}
    env.update(run["env"])
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", script, *run["args"]], cwd=tmp,
                          env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return float(USED.findall(proc.stdout)[-1])


def test_dryrun_peak_of_the_mlp_falls_as_mindspores(tmp_path):
    """Within 10% of MindSpore's first-step peak without and with recompute (184 -> 176 MB reported over two
    steps; its first step 176 -> 132)."""
    runs = [r for r in DRYRUN if r["script"] == "mlp_recompute.py"]
    ours = [_dryrun_peak(tmp_path, r) for r in runs]
    theirs = [r["first_step_peak_mb"] for r in runs]
    print("ascendemu", ours, "MindSpore", theirs)
    for o, t in zip(ours, theirs):
        assert abs(o - t) <= TOLERANCE * t + 1.0
    assert ours[1] < ours[0]


# the Llama's peaks against MindSpore's (issue 24's Done-when: within 5%); measured +3.3% / -1.4% / -1.3%
LLAMA_TOLERANCE = 0.05


@pytest.mark.parametrize("run", [r for r in DRYRUN if r["script"] == "dryrun_7b.py"], ids=lambda r: r["args"][-1])
def test_dryrun_peak_of_the_llama_is_mindspores(run, tmp_path):
    """The Llama (4 layers, hidden 1024, seq 4096, batch 2, one device) without recompute, with full and with
    select recompute: each within LLAMA_TOLERANCE of MindSpore's peak (which falls none > select > full). All
    three peaks are in the loss's backward (five float32 logits-sized temporaries in both) beside the layers'
    saved activations and the embedding's three float32 update Casts (docs/ARCHITECTURE.md, Recompute)."""
    ours = _dryrun_peak(tmp_path, run)
    print(run["args"][-1], "ascendemu", ours, "MindSpore", run["first_step_peak_mb"])
    assert abs(ours - run["first_step_peak_mb"]) <= LLAMA_TOLERANCE * run["first_step_peak_mb"]


def test_a_sharded_llama_recomputes_its_layers_and_their_collectives(tmp_path):
    """Semi-auto parallel (dp 2 x mp 4, rank 0 of 8, DryRun): recompute=True copies each layer's forward AllReduce
    too (mp_comm_recompute's default) and the rank's peak falls."""
    args = ["--dp", "2", "--mp", "4", "--num_layers", "2", "--hidden_size", "256", "--num_heads", "4",
            "--seq_length", "1024", "--batch_size", "2", "--jit_level", "O0", "--train_cell", "plain", "--recompute"]
    peaks, copied = [], []
    for mode in ("none", "full"):
        run_dir = tmp_path / mode
        run_dir.mkdir()
        peaks.append(_dryrun_peak(run_dir, {"script": "dryrun_7b.py", "args": args + [mode],
                                            "env": {"RANK_SIZE": "8", "RANK_ID": "0"}}))
        order = (run_dir / "rank_0" / "execute_order" / "execute_order.csv").read_text().splitlines()
        copied.append([row.split(",")[1] for row in order[1:] if row.split(",")[1].startswith('"' + RECOMPUTE_PREFIX)])
    # without recompute, only RmsNorm's own x * rstd is made again for its backward (as RmsNormGrad does)
    assert copied[0] and all("RMSNorm/Mul-op" in name for name in copied[0])
    assert sum("/AllReduce-op" in name for name in copied[1]) == 2            # one per layer
    assert peaks[1] < peaks[0]
