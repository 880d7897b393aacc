"""The differential conformance suite's machinery, shared by the recorder (real MindSpore) and the test
(the emulator): a spec per qualified name, its samples, how a sample's inputs are made, and how one
sample runs on a ``mindspore`` module and what it gives back.

Both sides run exactly this code with their own ``mindspore`` module (``ms``): real MindSpore 2.10 in
``tools/record_conformance.py``, ``ascendemu.frontend`` in ``tests/test_conformance.py``. Nothing here
imports either one, so the recorder never imports ascendemu and the test never needs MindSpore.

A spec is declarative: ``op("mindspore.ops.add", lambda ms, x, y: ms.ops.add(x, y), shapes=[...],
dtypes=(...))`` expands into one sample per (inputs, dtype, kwargs); a Cell spec builds the Cell from
the sample's kwargs and sets every parameter from the sample, so MindSpore's initialisers never matter.
"""
from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

FLOAT_DTYPES = ("float16", "float32", "float64", "bfloat16")
# default input ranges: floats uniform in [-2, 2), ints in [-5, 6)
FLOAT_RANGE = (-2.0, 2.0)
INT_RANGE = (-5, 6)
# output tolerances per dtype (rtol, atol): the emulator computes float32 with numba's libm, MindSpore CPU
# with its own kernels (a few ulp apart on transcendental functions); float16 ops may compute in float32
# and round once, or accumulate in float16 (a reduction over a few elements: a few float16 ulp)
TOLERANCES: dict[str, tuple[float, float]] = {"float32": (1e-4, 1e-5), "float16": (1e-2, 1e-2),
                                              "float64": (1e-7, 1e-9), "bfloat16": (2e-2, 2e-2),
                                              "complex64": (1e-4, 1e-5), "complex128": (1e-7, 1e-9)}
# gradients: the sum of every float output, differentiated by the framework (float32 samples only)
GRAD_TOLERANCE = (1e-3, 1e-4)
# the builtin exception an error sample's exception is compared by (MindSpore raises these; our typed
# errors subclass them where MindSpore's does), most specific first
ERROR_TYPES = (IndexError, KeyError, ZeroDivisionError, NotImplementedError, TypeError, ValueError,
               AttributeError, RuntimeError)


@dataclass(frozen=True)
class T:
    """A tensor input: ``shape`` and ``dtype`` (None: the sample's swept dtype), values uniform in
    [low, high) (ints: randint), or the given ``values``."""
    shape: tuple = ()
    dtype: str | None = None
    low: float | None = None
    high: float | None = None
    values: Any = None

    def describe(self, dtype: str) -> str:
        if self.values is not None:
            return f"T({np.asarray(self.values).tolist()!r},{self.dtype or dtype})"
        return f"T({tuple(self.shape)},{self.dtype or dtype},{self.low},{self.high})"


@dataclass(frozen=True)
class Py:
    """A positional input that is a Python value (a scalar operand, a shape tuple), not a tensor."""
    value: Any

    def describe(self, dtype: str) -> str:
        return f"Py({self.value!r})"


def _as_input(item: Any) -> T | Py:
    """A spec's input: a T, a Py, or a bare shape tuple (a tensor of the swept dtype)."""
    if isinstance(item, (T, Py)):
        return item
    if isinstance(item, tuple) and all(isinstance(d, int) for d in item):
        return T(item)
    raise TypeError(f"a spec input is a T, a Py or a shape tuple, got {item!r}")


@dataclass(frozen=True)
class Sample:
    """One run of a spec: inputs, the dtype swept into them, the call's (or the Cell's) kwargs; ``error``
    marks a sample MindSpore refuses (the recorded exception type is what the emulator must raise)."""
    inputs: tuple
    dtype: str = "float32"
    kwargs: dict = field(default_factory=dict)
    error: bool = False
    # the op function (or a Cell spec's builder) when it is not the spec's: specs of one name merge
    fn: Callable | None = field(default=None, compare=False)
    # check this sample's gradient (float32 samples MindSpore accepts; the spec's ``grad`` option)
    grad: bool = field(default=True, compare=False)
    # what the recorder runs on real MindSpore instead of ``fn`` (the spec's ``oracle`` option)
    oracle: Callable | None = field(default=None, compare=False)

    def describe(self) -> str:
        """The sample's fingerprint: the fixture stores it, so a changed spec is caught as stale."""
        ins = ",".join(i.describe(self.dtype) for i in self.inputs)
        return f"({ins}) {sorted(self.kwargs.items())!r}{' error' if self.error else ''}"


@dataclass
class Spec:
    """Samples of one qualified name. ``fn(ms, *inputs, **kwargs)`` for ops and methods; for Cells
    ``cell(ms, **kwargs)`` builds the Cell and the sample's inputs are its call's. ``grad``: check the
    gradient of the sum of float outputs w.r.t. the float inputs (and a Cell's trainable parameters);
    ``graph``: also run it in GRAPH_MODE; ``tol``: (rtol, atol) instead of the dtype's; ``note``: what
    the fixture should say (e.g. where MindSpore's Ascend behaviour differs from its CPU one).
    ``oracle(ms, *inputs, **kwargs)``: what the recorder runs on real MindSpore instead of ``fn`` where
    MindSpore 2.10 CPU cannot run the name itself (an Ascend-only kernel: its documented CPU equivalent;
    a collective on one rank: its documented single-rank result, computed with numpy); ``note`` must
    then say which oracle answered."""
    name: str
    fn: Callable | None = None
    cell: Callable | None = None
    samples: list[Sample] = field(default_factory=list)
    grad: bool = True
    graph: bool = True
    train: bool = False
    tol: tuple[float, float] | None = None
    grad_tol: tuple[float, float] | None = None
    note: str = ""
    oracle: Callable | None = None
    family: str = ""

    def sample_ids(self) -> list[str]:
        return [f"{self.name}#{i}" for i in range(len(self.samples))]


def _kwargs_list(kwargs: Any) -> list[dict]:
    if kwargs is None:
        return [{}]
    if isinstance(kwargs, dict):
        return [kwargs]
    return list(kwargs)


def op(name: str, fn: Callable, shapes: Any = (), dtypes: tuple[str, ...] = ("float32",), kwargs: Any = None,
       errors: Any = (), **options: Any) -> Spec:
    """A spec from a sweep: every input list in ``shapes`` (a list of inputs, or one input) x ``dtypes`` x
    ``kwargs`` (a dict or a list of dicts); ``errors``: (inputs, kwargs) pairs MindSpore refuses (float32)."""
    samples = []
    if not shapes and not errors:          # a call without inputs (a scenario): one sample, not none
        shapes = ([],)
    grad, oracle = options.get("grad", True), options.get("oracle")
    if oracle is not None and not options.get("note"):
        raise ValueError(f"{name}: a spec with an oracle needs a note saying which oracle answered")
    for inputs, dtype, kw in itertools.product(shapes, dtypes, _kwargs_list(kwargs)):
        if not isinstance(inputs, list):
            inputs = [inputs]
        samples.append(Sample(tuple(_as_input(i) for i in inputs), dtype, dict(kw), fn=fn, grad=grad, oracle=oracle))
    for inputs, kw in errors:
        if not isinstance(inputs, list):
            inputs = [inputs]
        samples.append(Sample(tuple(_as_input(i) for i in inputs), "float32", dict(kw), error=True, fn=fn,
                              oracle=oracle))
    return Spec(name, fn=fn, samples=samples, **options)


def cell(name: str, build: Callable, shapes: Any = (), dtypes: tuple[str, ...] = ("float32",), kwargs: Any = None,
         errors: Any = (), **options: Any) -> Spec:
    """A Cell spec: ``build(ms, **kwargs)`` makes the Cell; the samples are its call's inputs."""
    spec = op(name, build, shapes, dtypes, kwargs, errors, **options)
    spec.fn, spec.cell = None, build
    return spec


def merged(specs: list[Spec]) -> list[Spec]:
    """Specs of one name merged into the first (its options, everyone's samples, each with its own fn)."""
    out: dict[str, Spec] = {}
    for spec in specs:
        if spec.name in out:
            out[spec.name].samples.extend(spec.samples)
        else:
            out[spec.name] = spec
    return list(out.values())


# --- making inputs --------------------------------------------------------------------------------

def seed_of(text: str) -> int:
    """A deterministic seed from a sample id (never Python's salted hash)."""
    return zlib.crc32(text.encode())


def make_array(t: T, dtype: str, rng: np.random.RandomState) -> np.ndarray:
    """A tensor input's values (numpy; the caller wraps them in its Tensor)."""
    dtype = t.dtype or dtype
    np_dtype = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    if t.values is not None:
        return np.asarray(t.values, dtype=np_dtype)
    if dtype == "bool":
        return np.asarray(rng.rand(*t.shape) > 0.5)
    if np.issubdtype(np_dtype, np.integer):
        low = INT_RANGE[0] if t.low is None else int(t.low)
        high = INT_RANGE[1] if t.high is None else int(t.high)
        return np.asarray(rng.randint(low, high, size=t.shape)).astype(np_dtype)
    low = FLOAT_RANGE[0] if t.low is None else t.low
    high = FLOAT_RANGE[1] if t.high is None else t.high
    if np.issubdtype(np_dtype, np.complexfloating):      # real and imaginary parts each in [low, high)
        parts = rng.uniform(low, high, size=(2,) + tuple(t.shape))
        return (parts[0] + 1j * parts[1]).astype(np_dtype)
    return np.asarray(rng.uniform(low, high, size=t.shape)).astype(np_dtype)


def make_inputs(sample_id: str, sample: Sample) -> list[np.ndarray | None]:
    """The sample's tensor inputs in order (None where the input is a Py value)."""
    rng = np.random.RandomState(seed_of(sample_id))
    return [make_array(i, sample.dtype, rng) if isinstance(i, T) else None for i in sample.inputs]


def make_param(sample_id: str, name: str, shape: tuple, dtype: str) -> np.ndarray:
    """A Cell parameter's values: variances positive, everything else uniform in [-1, 1)."""
    rng = np.random.RandomState(seed_of(f"{sample_id}/{name}"))
    low, high = (0.5, 1.5) if "variance" in name else (-1.0, 1.0)
    return rng.uniform(low, high, size=shape).astype(dtype)


# --- running one sample on a mindspore module ------------------------------------------------------

@dataclass
class Outcome:
    """What one sample gave: outputs as (kind, dtype text, array), gradients, a Cell's parameter names,
    or the exception it raised."""
    outputs: list[tuple[str, str, np.ndarray]] = field(default_factory=list)
    grads: list[np.ndarray] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    error: BaseException | None = None


def error_kind(exc: BaseException) -> str:
    """The builtin exception type an exception is (its MindSpore-visible type), or its own name."""
    for kind in ERROR_TYPES:
        if isinstance(exc, kind):
            return kind.__name__
    return type(exc).__name__


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "asnumpy") and hasattr(value, "dtype")


def tensors_of(value: Any) -> list:
    """Every tensor in an output (tuples and lists flattened in order)."""
    if _is_tensor(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_of(v)]
    return []


def normalize(value: Any) -> list[tuple[str, str, np.ndarray]]:
    """An output as comparable pieces: tensors (kind "tensor", dtype text), numpy arrays, Python values
    (their type name) and dtypes (their text); tuples and lists flattened unless all Python numbers."""
    if _is_tensor(value):
        return [("tensor", str(value.dtype), np.asarray(value.asnumpy()))]
    if isinstance(value, np.ndarray):
        return [("ndarray", str(value.dtype), value)]
    if isinstance(value, (bool, int, float)):
        return [("py", type(value).__name__, np.asarray(value))]
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, (bool, int, float)) for v in value):
            return [("py", type(value).__name__, np.asarray(value))]
        return [piece for v in value for piece in normalize(v)]
    if value is None:
        return [("none", "None", np.zeros(0))]
    return [("value", str(value), np.zeros(0))]


def _float_tensor(ms: Any, value: Any) -> bool:
    return _is_tensor(value) and value.dtype in (ms.float16, ms.float32)


def build_call(ms: Any, spec: Spec, sample: Sample, params: dict[str, np.ndarray] | None,
               oracle: bool = False) -> tuple[Callable, Any]:
    """The sample's callable and its Cell (None for an op); a Cell's parameters set from ``params``
    (name -> values; None: left as built, the recorder then reads their names and shapes). ``oracle``:
    the recorder's side, the sample's oracle where it has one."""
    chosen = sample.oracle if oracle and sample.oracle is not None else sample.fn
    if spec.cell is None:
        fn = chosen or spec.fn
        return (lambda *xs: fn(ms, *xs, **sample.kwargs)), None
    net = (chosen or spec.cell)(ms, **sample.kwargs)
    net.set_train(spec.train)
    if params is not None:
        for p in net.get_parameters():
            if p.name in params:
                p.set_data(ms.Tensor(params[p.name]))
    return net, net


def graph_wrapper(ms: Any, call: Callable, net: Any) -> Any:
    """A Cell whose construct is the call: calling it in GRAPH_MODE traces the op into a graph."""
    class Wrapper(ms.nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            if net is not None:
                self.net = net

        def construct(self, *xs):
            return call(*xs)
    return Wrapper()


def run_sample(ms: Any, spec: Spec, sample: Sample, arrays: list[np.ndarray | None],
               params: dict[str, np.ndarray] | None, grad: bool, graph: bool = False, oracle: bool = False) -> Outcome:
    """Run one sample on ``ms``: outputs, then (``grad``) the gradient of the sum of float outputs w.r.t.
    the float inputs and a Cell's trainable parameters. ``graph``: through a wrapping Cell (the caller
    sets GRAPH_MODE); ``oracle``: run the sample's oracle (the recorder). An exception is returned in the
    Outcome, never raised."""
    result = Outcome()
    try:
        call, net = build_call(ms, spec, sample, params, oracle)
        if net is not None:
            result.params = [p.name for p in net.get_parameters()]
        if graph:
            call = graph_wrapper(ms, call, net)
        inputs = [ms.Tensor(a) if a is not None else i.value for a, i in zip(arrays, sample.inputs)]
        out = call(*inputs)
        result.outputs = normalize(out)
        if not grad or not any(_float_tensor(ms, t) for t in tensors_of(out)):
            return result
        positions = tuple(k for k, x in enumerate(inputs) if _float_tensor(ms, x))
        weights = net.trainable_params() if net is not None else None
        if not positions and not weights:
            return result

        def total(*xs):
            out = None
            for t in tensors_of(call(*xs)):
                if _float_tensor(ms, t):
                    s = t.astype(ms.float32).sum()
                    out = s if out is None else out + s
            return out
        grads = ms.grad(total, grad_position=positions or None, weights=weights)(*inputs)
        result.grads = [np.asarray(g.asnumpy()) for g in tensors_of(grads)]
    except Exception as exc:             # noqa: BLE001 - the exception is the sample's outcome
        result.error = exc
    return result


# --- fixture storage --------------------------------------------------------------------------------

def pack(arrays: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, list]]:
    """Many small arrays as one flat array per dtype (an npz member costs ~200 bytes of headers each):
    the blobs and, per key, [dtype, offset, shape]."""
    flat: dict[str, list[np.ndarray]] = {}
    sizes: dict[str, int] = {}
    table = {}
    for key, a in arrays.items():
        a = np.asarray(a)
        dtype = str(a.dtype)
        table[key] = [dtype, sizes.get(dtype, 0), list(a.shape)]
        flat.setdefault(dtype, []).append(a.ravel())
        sizes[dtype] = sizes.get(dtype, 0) + a.size
    return {d: np.concatenate(parts) for d, parts in flat.items()}, table


def unpack(blobs: Any, table: dict[str, list], key: str) -> np.ndarray:
    """One array back from :func:`pack`'s blobs and table."""
    dtype, offset, shape = table[key]
    size = int(np.prod(shape, dtype=np.int64))
    return blobs[dtype][offset:offset + size].reshape(shape)


def ops_call(name: str) -> Callable:
    """A spec's call of ``ops.<name>(*xs, **kw)``, or for a Primitive name ``ops.<Name>(**kw)(*xs)``."""
    if name[0].isupper():
        return lambda ms, *xs, **kw: getattr(ms.ops, name)(**kw)(*xs)
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


def method_call(name: str) -> Callable:
    """A spec's call of the Tensor method ``x.<name>(*args, **kw)``."""
    return lambda ms, x, *args, **kw: getattr(x, name)(*args, **kw)
