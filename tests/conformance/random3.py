"""Random specs, round 3: Multinomial and Bernoulli, which the emulator draws as MindSpore 2.10 CPU does
(values compared): primitives with an explicit seed, functions after ``set_seed`` inside the sample.
Probabilities are fixed values (``values=``) so a sample's weights do not depend on the generator."""
from __future__ import annotations

from .core import T, op

PROBS = T((4,), values=[0.1, 0.2, 0.3, 0.4])
ROWS = T((2, 4), values=[[0.1, 0.2, 0.3, 0.4], [0.5, 0.0, 0.25, 0.25]])


def _multinomial(ms, x, count=3, seed=0, seed2=0, dtype=None, twice=False):
    """ops.Multinomial(seed, seed2[, dtype])(x, count), once or twice (the second call continues)."""
    p = ms.ops.Multinomial(seed, seed2) if dtype is None else ms.ops.Multinomial(seed, seed2, getattr(ms, dtype))
    return (p(x, count), p(x, count)) if twice else p(x, count)


def _seeded(name: str, global_seed: int = 5):
    """ops.<name>(*xs, **kw) right after set_seed(global_seed)."""
    def run(ms, *xs, **kw):
        ms.set_seed(global_seed)
        return getattr(ms.ops, name)(*xs, **kw)
    return run


def _twice_prim(name: str):
    """ops.<Name>(seed, seed2)(shape) twice: the second call continues the engine."""
    def run(ms, seed=0, seed2=0, shape=()):
        p = getattr(ms.ops, name)(seed, seed2)
        return p(shape), p(shape)
    return run


def _categorical(ms, logits, count=3, seed=0, dtype=None, twice=False):
    """ops.RandomCategorical([dtype])(logits, count, seed), once or twice (the second continues)."""
    p = ms.ops.RandomCategorical() if dtype is None else ms.ops.RandomCategorical(getattr(ms, dtype))
    return (p(logits, count, seed), p(logits, count, seed)) if twice else p(logits, count, seed)


def _randperm_prim(ms, n=4, seed=0, offset=0, dtype=None):
    p = ms.ops.RandpermV2(seed, offset) if dtype is None else ms.ops.RandpermV2(seed, offset, getattr(ms, dtype))
    return p(n)


def _randperm(ms, n=4, **kw):
    if "dtype" in kw:
        kw["dtype"] = getattr(ms, kw["dtype"])
    return ms.ops.randperm(n, **kw)


def _shaped(name: str):
    """ops.<name>(shape, *xs, **kw) after set_seed(5)."""
    def run(ms, *xs, shape=(), **kw):
        ms.set_seed(5)
        return getattr(ms.ops, name)(shape, *xs, **kw)
    return run


LOGITS = T((2, 3), values=[[-1.6, -1.2, -0.7], [0.5, 0.1, -2.0]])


def _bernoulli_prim(ms, x, p, seed=0, offset=0):
    """ops.Bernoulli(seed, offset)(x, p) twice: an explicit seed repeats its numbers every call."""
    prim = ms.ops.Bernoulli(seed, offset)
    return prim(x, p), prim(x, p)


SPECS = [
    op("mindspore.ops.Multinomial", _multinomial, shapes=[[ROWS], [PROBS]], grad=False,
       kwargs=[{"count": 6, "seed": 0, "seed2": 5}, {"count": 4, "seed": 7, "seed2": 0, "dtype": "int64"},
               {"count": 0, "seed": 1, "seed2": 2}],
       errors=[([PROBS], {"count": -1, "seed": 1}), ([T((2, 2, 2), values=1.0)], {"count": 2, "seed": 1}),
               ([PROBS], {"count": 2.0, "seed": 1})]),
    op("mindspore.ops.Multinomial", _multinomial, shapes=[[ROWS]], grad=False,
       kwargs={"count": 5, "seed": 3, "seed2": 4, "twice": True}),
    op("mindspore.ops.Multinomial", _multinomial, shapes=[[T((3,), "float64", values=[1.0, 2.0, 5.0])]], grad=False,
       kwargs={"count": 8, "seed": 2, "seed2": 9}),
    op("mindspore.ops.multinomial", _seeded("multinomial"), shapes=[[PROBS], [ROWS]], grad=False,
       kwargs=[{"num_samples": 5}, {"num_samples": 3, "replacement": False}, {"num_samples": 4, "seed": 3}],
       errors=[([PROBS], {"num_samples": 5, "replacement": False}), ([T((2, 2, 2), values=1.0)], {"num_samples": 2})]),
    op("mindspore.ops.Bernoulli", _bernoulli_prim, shapes=[[T((8,)), T((), values=0.5)]], grad=False,
       kwargs=[{"seed": 5}, {"seed": 7, "offset": 3}]),
    op("mindspore.ops.Bernoulli", _bernoulli_prim,
       shapes=[[T((2, 3), "float64"), T((2, 3), "float64", values=[[0.1, 0.5, 0.9], [0.0, 1.0, 0.3]])],
               [T((4,), "int32"), T((1,), values=[0.25])]], grad=False,
       kwargs={"seed": 11},
       errors=[([T((4,)), T((2,), values=[0.1, 0.2])], {"seed": 1}), ([T((4,)), T((), values=1.5)], {"seed": 1}),
               ([T((4,), "float16"), T((), values=0.5)], {"seed": 1})]),
    op("mindspore.ops.bernoulli", lambda ms, x, **kw: ms.ops.bernoulli(x, **kw), shapes=[T((6,)), T((2, 3), "int32")],
       grad=False, kwargs=[{"p": 0.3, "seed": 2}, {"p": 0.7, "seed": 9}],
       errors=[(T((4,)), {"p": 1.5, "seed": 2}), (T((4,)), {"p": 0.5, "seed": 2.0})]),
    op("mindspore.ops.StandardLaplace", _twice_prim("StandardLaplace"), shapes=[[]], grad=False,
       kwargs=[{"seed": 5, "seed2": 0, "shape": (5,)}, {"seed": 1, "seed2": 2, "shape": (2, 3)}],
       errors=[([], {"seed": 1, "seed2": 2, "shape": (2, -1)}), ([], {"seed": -1, "seed2": 0, "shape": (2,)})]),
    op("mindspore.ops.standard_laplace", _shaped("standard_laplace"), shapes=[[]], grad=False,
       kwargs=[{"shape": (2, 3)}, {"shape": (4,), "seed": 3}]),
    op("mindspore.ops.laplace", _shaped("laplace"), shapes=[[T((3,)), T((), values=2.0)]], grad=False,
       kwargs=[{"shape": (2, 3)}, {"shape": (2, 3), "seed": 4}],
       errors=[([T((3,), "float64"), T((), values=2.0)], {"shape": (2, 3)})]),
    op("mindspore.ops.RandomCategorical", _categorical, shapes=[[LOGITS]], grad=False,
       kwargs=[{"count": 6, "seed": 2}, {"count": 4, "seed": 7, "dtype": "int32", "twice": True},
               {"count": 3, "seed": 2, "dtype": "int16"}],
       errors=[([T((3,))], {"count": 2, "seed": 1}), ([LOGITS], {"count": 2.0, "seed": 1})]),
    op("mindspore.ops.RandomCategorical", _categorical, shapes=[[T((3, 5), "float64")]], grad=False,
       kwargs={"count": 5, "seed": 9}),
    op("mindspore.ops.random_categorical", lambda ms, x, *a, **kw: ms.ops.random_categorical(x, *a, **kw),
       shapes=[[LOGITS]], grad=False, kwargs=[{"num_sample": 6, "seed": 2}, {"num_sample": 3, "seed": 11}]),
    op("mindspore.ops.RandpermV2", _randperm_prim, shapes=[[]], grad=False,
       kwargs=[{"n": 5, "seed": 1}, {"n": 40, "seed": 7, "offset": 3}, {"n": 6, "seed": 2, "dtype": "float32"},
],
       errors=[([], {"n": -1, "seed": 1}), ([], {"n": 3, "seed": -2}), ([], {"n": 0, "seed": 1})]),
    op("mindspore.ops.randperm", _randperm, shapes=[[]], grad=False,
       kwargs=[{"n": 5, "seed": 1}, {"n": 8, "seed": 1, "offset": 2}, {"n": 6, "dtype": "int32"}],
       errors=[([], {"n": 4, "dtype": "bool_"})]),
    op("mindspore.Tensor.multinomial", lambda ms, x, **kw: (ms.set_seed(5), x.multinomial(**kw))[1],
       shapes=[[ROWS]], grad=False, kwargs=[{"num_samples": 5, "seed": 3}, {"num_samples": 2, "replacement": False}]),
    op("mindspore.Tensor.random_categorical", lambda ms, x, **kw: x.random_categorical(**kw), shapes=[[LOGITS]],
       grad=False, kwargs={"num_sample": 5, "seed": 2}),
    # the Generator forms: MindSpore 2.10 serves them on Ascend only (its CPU build raises RuntimeError: the
    # kernel BernoulliExt / RandpermExt / InplaceUniform ... unregistered); KNOWN_MISMATCHES lists them
    op("mindspore.Tensor.bernoulli", lambda ms, x: x.bernoulli(), shapes=[T((4,), values=[0.0, 1.0, 0.5, 1.0])],
       grad=False),
    op("mindspore.Tensor.bernoulli_", lambda ms, x: x.bernoulli_(0.5), shapes=[(4,)], grad=False),
    op("mindspore.ops.bernoulli_", lambda ms, x: ms.ops.bernoulli_(x, 0.5), shapes=[(4,)], grad=False),
    op("mindspore.Tensor.exponential_", lambda ms, x: x.exponential_(2.0), shapes=[(4,)], grad=False),
    op("mindspore.ops.exponential_", lambda ms, x: ms.ops.exponential_(x, 0.5), shapes=[(4,)], grad=False),
    op("mindspore.Tensor.random_", lambda ms, x: x.random_(0, 5), shapes=[(4,)], grad=False),
    op("mindspore.ops.random_", lambda ms, x: ms.ops.random_(x, 2, 4), shapes=[(4,)], grad=False),
    op("mindspore.ops.bernoulli_ext", lambda ms, x: ms.ops.bernoulli_ext(x), shapes=[T((4,), values=0.5)],
       grad=False),
    op("mindspore.mint.bernoulli", lambda ms, x: ms.mint.bernoulli(x), shapes=[T((4,), values=0.5)], grad=False),
    op("mindspore.mint.multinomial", lambda ms, x: ms.mint.multinomial(x, 2), shapes=[[PROBS]], grad=False),
    op("mindspore.mint.normal", lambda ms: ms.mint.normal(0.0, 1.0, (3,)), shapes=[[]], grad=False),
    op("mindspore.mint.rand", lambda ms: ms.mint.rand(2, 3), shapes=[[]], grad=False),
    op("mindspore.mint.randn", lambda ms: ms.mint.randn(2, 3), shapes=[[]], grad=False),
    op("mindspore.mint.randint", lambda ms: ms.mint.randint(0, 5, (4,)), shapes=[[]], grad=False),
    op("mindspore.mint.randint_like", lambda ms, x: ms.mint.randint_like(x, 5), shapes=[T((4,), "int32")],
       grad=False),
    op("mindspore.mint.randn_like", lambda ms, x: ms.mint.randn_like(x), shapes=[(2, 3)], grad=False),
    op("mindspore.mint.randperm", lambda ms: ms.mint.randperm(5), shapes=[[]], grad=False),
]
