"""`while` on tensor conditions in GRAPH_MODE as device loops (graph.ir.WhileNode, graph.program,
graph.program_runner; the HAL's label_switch/label_goto).

Oracles: numpy runs of the same Python programs (a greedy decode by a Dense + argmax "model", a Collatz
count), PyNative runs of the same cells, and the cost model's LABEL_SWITCH_S/LABEL_GOTO_S for the loop's
control tasks in the Chrome trace.
"""
from __future__ import annotations

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.device.cost import LABEL_GOTO_S, LABEL_SWITCH_S
from ascendemu.errors import FeatureNotSupportedError, LoopTripLimitError
from ascendemu.frontend import Parameter, Tensor, nn, ops
from ascendemu.frontend.common.phase import PHASE_CACHE
from ascendemu.graph import program_runner
from ascendemu.graph.ir import WhileNode
from ascendemu.graph.program import Loop, Segment, split
from ascendemu.traces import aetrace as fmt

from replay_check import record_and_replay

LEVELS = ("O0", "O2")
VOCAB, HIDDEN, MAX_LEN, EOS = 6, 4, 7, 0


@pytest.fixture(autouse=True)
def graph_mode(ex, restore_context):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    yield


def _level(level: str) -> None:
    ms.set_context(jit_config={"jit_level": level})


# ------------------------------------------------------------------ the done-when scenario: greedy decode

class GreedyDecoder(nn.Cell):
    """A bounded greedy decode: the "model" is an embedding table and a Dense over the vocabulary; each
    step appends argmax(dense(embed[last token] + context)) until EOS or max_len."""

    def __init__(self, embed: np.ndarray, weight: np.ndarray, bias: np.ndarray):
        super().__init__()
        self.embed = Parameter(Tensor(embed), name="embed")
        self.dense = nn.Dense(HIDDEN, VOCAB, weight_init=Tensor(weight), bias_init=Tensor(bias))
        self.positions = Tensor(np.arange(MAX_LEN, dtype=np.int32))

    def construct(self, context, first):
        tokens = ops.zeros((MAX_LEN,), ms.int32)
        i = Tensor(np.array(0, np.int32))
        done = Tensor(np.array(False))
        last = first
        while i < MAX_LEN and not done:
            h = ops.gather(self.embed, last.reshape((1,)), 0) + context
            logits = self.dense(h)
            nxt = ops.argmax(logits, dim=-1).astype(ms.int32).reshape(())
            tokens = ops.select(self.positions == i, nxt.broadcast_to((MAX_LEN,)), tokens)
            done = nxt == EOS
            last = nxt
            i = i + 1
        return tokens, i


def decode_ref(embed, weight, bias, context, first):
    tokens, i, done, last = np.zeros(MAX_LEN, np.int32), 0, False, int(first)
    while i < MAX_LEN and not done:
        h = embed[last][None] + context
        nxt = int(np.argmax(h @ weight.T + bias, axis=-1)[0])
        tokens[i] = nxt
        done = nxt == EOS
        last = nxt
        i += 1
    return tokens, i


def _decoder(seed: int = 0):
    rng = np.random.default_rng(seed)
    embed = rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32)
    weight = rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32)
    bias = rng.standard_normal(VOCAB).astype(np.float32)
    return GreedyDecoder(embed, weight, bias), (embed, weight, bias)


def _contexts(params, want_eos: bool, rng) -> np.ndarray:
    """A context whose decode stops at EOS before max_len (``want_eos``) or runs to max_len."""
    for _ in range(500):
        ctx = rng.standard_normal((1, HIDDEN)).astype(np.float32) * 2
        _, n = decode_ref(*params, ctx, 1)
        if (n < MAX_LEN) == want_eos:
            return ctx
    raise AssertionError("no such context")


@pytest.mark.parametrize("level", LEVELS)
def test_greedy_decode_matches_numpy_and_pynative(level):
    _level(level)
    net, params = _decoder()
    rng = np.random.default_rng(1)
    for want_eos in (True, False):
        ctx = _contexts(params, want_eos, rng)
        tokens, n = net(Tensor(ctx), Tensor(np.array(1, np.int32)))
        ref_tokens, ref_n = decode_ref(*params, ctx, 1)
        np.testing.assert_array_equal(tokens.asnumpy(), ref_tokens)
        assert int(n.asnumpy()) == ref_n
        ms.set_context(mode=ms.PYNATIVE_MODE)
        py_tokens, py_n = net(Tensor(ctx), Tensor(np.array(1, np.int32)))
        ms.set_context(mode=ms.GRAPH_MODE)
        np.testing.assert_array_equal(tokens.asnumpy(), py_tokens.asnumpy())
        assert int(n.asnumpy()) == int(py_n.asnumpy())


# ------------------------------------------------------------------ trip counts differ, one compiled program

class Collatz(nn.Cell):
    """Steps of the Collatz sequence from x to 1: the trip count is the data's."""

    def construct(self, x):
        steps = ops.zeros((), ms.int32)
        while x != 1:
            half = ops.floor_div(x, 2)
            x = ops.select(x - half * 2 == 0, half, x * 3 + 1)
            steps = steps + 1
        return steps, x


def collatz_ref(x: int) -> int:
    n = 0
    while x != 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        n += 1
    return n


@pytest.mark.parametrize("level", LEVELS)
def test_trip_count_differs_per_call_and_the_phase_cache_hits(ex, level):
    _level(level)
    net = Collatz()
    PHASE_CACHE.clear()
    compiled, hits = [], PHASE_CACHE.hits
    for start in (6, 7, 1, 27):
        steps, last = net(Tensor(np.array(start, np.int32)))
        assert int(steps.asnumpy()) == collatz_ref(start)
        assert int(last.asnumpy()) == 1
        compiled.append(ex.graphs_compiled)
    assert PHASE_CACHE.hits - hits == 3
    # the parts compiled (or came from the graph cache) on the first call: never again for a trip count
    assert compiled[1:] == [compiled[0]] * 3


# ------------------------------------------------------------------ IR, split, trace

def test_the_loop_is_one_while_node_with_cond_and_body_graphs():
    from ascendemu.frontend.capture import trace
    from ascendemu.frontend.common import parse

    net = Collatz()
    graph, _ = trace(parse.convert(Collatz.construct).__get__(net), (Tensor(np.array(6, np.int32)),), "collatz")
    loops = [n for n in graph.nodes if isinstance(n, WhileNode)]
    assert len(loops) == 1 and loops[0].carried == 2
    assert loops[0].where.endswith(f"test_control_flow_while.py:{Collatz.construct.__code__.co_firstlineno + 2}")
    assert [loops[0].cond.values[v].to_json() for v in loops[0].cond.outputs] == [{"shape": [], "dtype": "bool"}]
    program = split(graph)
    assert [type(p) for p in program.parts] == [Segment, Loop] or [type(p) for p in program.parts] == [Loop]
    # the hash covers the loop's graphs: another body is another graph
    assert graph.structure_hash() == graph.copy().structure_hash()


def test_loop_control_tasks_in_the_chrome_trace(ex):
    _level("O2")
    x = Tensor(np.array(6, np.int32))
    Collatz()(x)                      # compiled and warm: the traced call runs the loop only
    ex.rt.start_trace()
    try:
        steps, _ = Collatz()(x)
        events = ex.rt.trace_events()
    finally:
        ex.rt.node.attach_trace(None)
    trips = collatz_ref(6)
    assert int(steps.asnumpy()) == trips
    switches = [e for e in events if e.get("name") == "LabelSwitch" and e.get("ph") == "X"]
    gotos = [e for e in events if e.get("name") == "LabelGoto" and e.get("ph") == "X"]
    assert len(switches) == trips + 1 and len(gotos) == trips
    assert [s["args"]["taken"] for s in switches] == [True] * trips + [False]
    assert all(s["dur"] == pytest.approx(LABEL_SWITCH_S * 1e6) for s in switches)
    assert all(g["dur"] == pytest.approx(LABEL_GOTO_S * 1e6) for g in gotos)


class HalveTowards(nn.Cell):
    """A loop reading a loop-invariant input ``w`` every trip (cond and body) without assigning it."""

    def construct(self, x, w, n):
        i = n * 0
        while i < n:
            x = x * 0.5 + w[:4].sum()
            i = i + 1
        return x


@pytest.mark.parametrize("level", LEVELS)
def test_parts_read_the_programs_buffers_so_only_carried_values_are_copied(ex, level):
    """graph.part_runner binds each part to the program's buffers: the loop-invariant ``w`` (256 B) is
    never copied; the D2D copies are, by hand: x and i into the carried buffers at the loop's entry, the
    body's x and i over them on each of the 3 trips (the body reads them), and x into the output."""
    _level(level)
    x, w = np.ones(4, np.float32), np.arange(64, dtype=np.float32) / 64
    args = (Tensor(x), Tensor(w), Tensor(np.array(3, np.int32)))
    HalveTowards()(*args)
    ex.rt.start_trace()
    try:
        out = HalveTowards()(*args).asnumpy()
        events = ex.rt.trace_events()
    finally:
        ex.rt.node.attach_trace(None)
    want = x
    for _ in range(3):
        want = want * 0.5 + w[:4].sum()
    np.testing.assert_allclose(out, want, rtol=1e-6)
    d2d = [e["args"]["bytes"] for e in events if e.get("cat") == "copy" and e["args"].get("kind") == "D2D"]
    assert d2d == [16, 4] + [16, 4] * 3 + [16]


# ------------------------------------------------------------------ errors

class Runaway(nn.Cell):
    def construct(self, x):
        while x > 0:
            x = x + 1
        return x


@pytest.mark.parametrize("level", ("O0", "O1", "O2"))
def test_a_runaway_loop_ends_with_a_typed_error_naming_its_line(monkeypatch, level):
    _level(level)
    monkeypatch.setattr(program_runner, "MAX_LOOP_TRIPS", 5)
    with pytest.raises(LoopTripLimitError, match=r"test_control_flow_while.py:\d+.*after 5 trips"):
        Runaway()(Tensor(np.array(1, np.int32)))


def test_a_loop_variable_must_keep_its_shape():
    class Grows(nn.Cell):
        def construct(self, x):
            while x.sum() < 10:
                x = ops.concat((x, x))
            return x

    with pytest.raises(TypeError, match="Shape Join Failed.*'x'"):
        Grows()(Tensor(np.ones(2, np.float32)))


def test_gradient_through_a_device_loop():
    """x doubled n times: d sum / dx = 2**n (more in tests/test_control_flow_while_grad.py)."""
    def f(x, n):
        while n > 0:
            x = x * 2
            n = n - 1
        return x.sum()

    grad = ms.grad(f)(Tensor(np.ones(3, np.float32)), Tensor(np.array(2, np.int32)))
    np.testing.assert_array_equal(grad.asnumpy(), np.full(3, 4.0, np.float32))


# ------------------------------------------------------------------ record and replay (last: it finalises the runtime)

SCRIPT = '''
import numpy as np
import mindspore as ms
from mindspore import Tensor, nn, ops

ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "%s"})


class Collatz(nn.Cell):
    def construct(self, x):
        steps = ops.zeros((), ms.int32)
        while x != 1:
            half = ops.floor_div(x, 2)
            x = ops.select(x - half * 2 == 0, half, x * 3 + 1)
            steps = steps + 1
        return steps, x


net = Collatz()
for start in (6, 7):
    print(int(net(Tensor(np.array(start, np.int32)))[0].asnumpy()))
'''


@pytest.mark.parametrize("level", LEVELS)
def test_record_then_replay_reproduces_a_run_with_device_loops(tmp_path, monkeypatch, ascendemu_kernel_cache,
                                                               capsys, level):
    monkeypatch.setenv("MS_COMPILER_CACHE_PATH", str(ascendemu_kernel_cache))
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "collatz.py"
    script.write_text(SCRIPT % level)
    printed, records = record_and_replay(script, tmp_path / "run.aetrace", capsys)
    assert printed.split()[:2] == [str(collatz_ref(6)), str(collatz_ref(7))]
    switches = [r for r in records if isinstance(r, fmt.LabelSwitch)]
    assert sum(r.taken for r in switches) == collatz_ref(6) + collatz_ref(7)
    assert sum(not r.taken for r in switches) == 2


def test_dry_run_refuses_a_device_loop_naming_its_line(tmp_path):
    from ascendemu.frontend.capture import trace
    from ascendemu.frontend.common import parse
    from ascendemu.graph.executor import DeviceExecutor
    from ascendemu.hal.runtime import get_runtime

    net = Collatz()
    graph, _ = trace(parse.convert(Collatz.construct).__get__(net), (Tensor(np.array(6, np.int32)),), "collatz")
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    try:
        dry = DeviceExecutor(cache_root=str(tmp_path), dry_run=True, progress=False)
        with pytest.raises(FeatureNotSupportedError, match=r"test_control_flow_while.py:\d+.*DryRun"):
            dry.run_graph(graph, [np.array(6, np.int32)], "O0")
    finally:
        rt.finalize()
