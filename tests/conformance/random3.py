"""Random specs, round 3: Multinomial and Bernoulli, which the emulator draws as MindSpore 2.10 CPU does
(values compared): primitives with an explicit seed, functions after ``set_seed`` inside the sample.
Probabilities are fixed values (``values=``) so a sample's weights do not depend on the generator."""
from __future__ import annotations

from .core import T, op
from .random import DRAWS, _generator, _like_facts, _normal, draws, facts, moment_tol

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
    # the Generator forms: below
]

# --- the Generator forms --------------------------------------------------------------------------------
# MindSpore 2.10 serves them on Ascend only (its CPU build raises RuntimeError: the kernel BernoulliExt /
# RandpermExt / InplaceUniform ... unregistered, or "not supported on this device"), and Ascend's Philox
# numbers are not reproduced here (see ARCHITECTURE "Round 3 samplers"). So, as random.py's Generator ops,
# each sample returns what a draw shows whatever the generator (``facts``: shape and dtype, support,
# moments), recorded through the MindSpore CPU sampler of the same distribution (``oracle``).
HALF = T((4,), values=[0.0, 1.0, 0.5, 1.0])   # probabilities 0 and 1 give known draws


def _coin_facts(draw):
    """Bernoulli draws of HALF's probabilities: their facts (0 or 1 each) and the draws where p is 0 or 1."""
    def run(ms, p):
        ms.set_seed(5)
        y = draw(ms, p)
        known = ms.ops.select(p == 0.5, ms.ops.zeros_like(y), y)
        return facts(ms, y, low=0.0, high=2.0, whole=True) + (known,)
    return run


def _coin_oracle(ms, p):
    """ops.bernoulli (Bernoulli, CPU) of zeros with probabilities p: the input's dtype, as BernoulliExt's."""
    return ms.ops.bernoulli(ms.ops.zeros_like(p), p=p)


def _moments_of(draw, **support):
    """A sample (or its oracle): set_seed(5), the facts of ``draw(ms, *xs)`` with its moments."""
    def run(ms, *xs):
        ms.set_seed(5)
        return facts(ms, draw(ms, *xs), moments=True, **support)
    return run


EXPONENTIAL_ORACLE = "-log(1 - U) / lambd of ops.uniform (UniformReal)"


def _exponential(ms, n, lambd):
    """Exp(lambd) by inversion of MindSpore CPU's UniformReal: -log(1 - U) / lambd."""
    return -ms.ops.log(1 - ms.ops.uniform((n,), ms.Tensor(0.0), ms.Tensor(1.0), dtype=ms.float32)) / lambd


def _whole(ms, n, low, high):
    """Whole numbers uniform in [low, high) as float32: MindSpore CPU's UniformInt (ops.randint) cast."""
    return ms.ops.randint(low, high, (n,)).astype(ms.float32)


def _multinomial_facts(draw):
    """Two draws without replacement from PROBS: their facts (int64, in [0, 4)) and whether they differ."""
    def run(ms, x):
        ms.set_seed(5)
        y = draw(ms, x)
        return facts(ms, y, low=0, high=4) + (y[0] != y[1],)
    return run


def _sorted(draw):
    def run(ms):
        ms.set_seed(5)
        y = draw(ms)
        return ms.ops.zeros_like(y), ms.ops.sort(y.astype(ms.float32))[0]
    return run


_SD_COIN = 0.5                                   # a fair coin's standard deviation


def _uniform_sd(width):
    return width / 12 ** 0.5


def _whole_sd(count):
    """The standard deviation of a whole number uniform over ``count`` values."""
    return ((count * count - 1) / 12) ** 0.5


SPECS += [
    _generator("mindspore.Tensor.bernoulli", "BernoulliExt", "ops.bernoulli (Bernoulli) with p the input",
               _coin_facts(lambda ms, p: p.bernoulli()), _coin_facts(_coin_oracle), shapes=[HALF]),
    _generator("mindspore.ops.bernoulli_ext", "BernoulliExt", "ops.bernoulli (Bernoulli) with p the input",
               _coin_facts(lambda ms, p: ms.ops.bernoulli_ext(p)), _coin_facts(_coin_oracle), shapes=[HALF]),
    _generator("mindspore.mint.bernoulli", "BernoulliExt", "ops.bernoulli (Bernoulli) with p the input",
               _coin_facts(lambda ms, p: ms.mint.bernoulli(p)), _coin_facts(_coin_oracle), shapes=[HALF]),
    _generator("mindspore.Tensor.bernoulli_", "InplaceBernoulliScalar", "ops.bernoulli (Bernoulli)",
               _moments_of(lambda ms: draws(ms).bernoulli_(0.5), low=0.0, high=2.0, whole=True),
               _moments_of(lambda ms: ms.ops.bernoulli(draws(ms), 0.5), low=0.0, high=2.0, whole=True),
               tol=moment_tol(_SD_COIN)),
    _generator("mindspore.ops.bernoulli_", "InplaceBernoulliScalar", "ops.bernoulli (Bernoulli)",
               _moments_of(lambda ms: ms.ops.bernoulli_(draws(ms), 0.5), low=0.0, high=2.0, whole=True),
               _moments_of(lambda ms: ms.ops.bernoulli(draws(ms), 0.5), low=0.0, high=2.0, whole=True),
               tol=moment_tol(_SD_COIN)),
    _generator("mindspore.Tensor.exponential_", "InplaceExponential", EXPONENTIAL_ORACLE,
               _moments_of(lambda ms: draws(ms).exponential_(2.0), low=0.0, high=float("inf")),
               _moments_of(lambda ms: _exponential(ms, DRAWS, 2.0), low=0.0, high=float("inf")),
               tol=moment_tol(2 ** 0.5 / 2.0)),
    _generator("mindspore.ops.exponential_", "InplaceExponential", EXPONENTIAL_ORACLE,
               _moments_of(lambda ms: ms.ops.exponential_(draws(ms), 0.5), low=0.0, high=float("inf")),
               _moments_of(lambda ms: _exponential(ms, DRAWS, 0.5), low=0.0, high=float("inf")),
               tol=moment_tol(2 ** 0.5 / 0.5)),
    _generator("mindspore.Tensor.random_", "InplaceRandom", "ops.randint (UniformInt) cast to the input's float32",
               _moments_of(lambda ms: draws(ms).random_(0, 5), low=0.0, high=5.0, whole=True),
               _moments_of(lambda ms: _whole(ms, DRAWS, 0, 5), low=0.0, high=5.0, whole=True),
               tol=moment_tol(_whole_sd(5))),
    _generator("mindspore.ops.random_", "InplaceRandom", "ops.randint (UniformInt) cast to the input's float32",
               _moments_of(lambda ms: ms.ops.random_(draws(ms), 2, 4), low=2.0, high=4.0, whole=True),
               _moments_of(lambda ms: _whole(ms, DRAWS, 2, 4), low=2.0, high=4.0, whole=True),
               tol=moment_tol(_whole_sd(2))),
    _generator("mindspore.mint.multinomial", "MultinomialExt",
               "ops.multinomial without replacement (Multinomial), its int32 indices as mint's int64",
               _multinomial_facts(lambda ms, x: ms.mint.multinomial(x, 2)),
               _multinomial_facts(lambda ms, x: ms.ops.multinomial(x, 2, replacement=False).astype(ms.int64)),
               shapes=[[PROBS]]),
    _generator("mindspore.mint.normal", "NormalFloatFloat", "ops.normal (StandardNormal)",
               _moments_of(lambda ms: ms.mint.normal(1.0, 2.0, (DRAWS,))),
               _moments_of(lambda ms: _normal(ms, (DRAWS,), 1.0, 2.0)), tol=moment_tol(2.0)),
    _generator("mindspore.mint.rand", "InplaceUniform", "ops.rand (UniformReal)",
               _moments_of(lambda ms: ms.mint.rand(2, DRAWS // 2), low=0.0, high=1.0),
               _moments_of(lambda ms: ms.ops.rand(2, DRAWS // 2), low=0.0, high=1.0), tol=moment_tol(_uniform_sd(1))),
    _generator("mindspore.mint.randn", "InplaceNormal", "ops.randn (StandardNormal)",
               _moments_of(lambda ms: ms.mint.randn(2, DRAWS // 2)),
               _moments_of(lambda ms: ms.ops.randn(2, DRAWS // 2)), tol=moment_tol(1.0)),
    _generator("mindspore.mint.randint", "InplaceRandom", "ops.randint (UniformInt)",
               _moments_of(lambda ms: ms.mint.randint(0, 5, (DRAWS,)), low=0, high=5),
               _moments_of(lambda ms: ms.ops.randint(0, 5, (DRAWS,)), low=0, high=5), tol=moment_tol(_whole_sd(5))),
    _generator("mindspore.mint.randint_like", "InplaceRandom", "ops.randint_like (UniformInt)",
               _like_facts(lambda ms, x: ms.mint.randint_like(x, 5), moments=False, low=0, high=5),
               _like_facts(lambda ms, x: ms.ops.randint_like(x, 0, 5), moments=False, low=0, high=5),
               shapes=[T((4,), "int32")]),
    _generator("mindspore.mint.randn_like", "InplaceNormal", "ops.randn_like (StandardNormal)",
               _like_facts(lambda ms, x: ms.mint.randn_like(x)), _like_facts(lambda ms, x: ms.ops.randn_like(x)),
               shapes=[(2, 3)], tol=moment_tol(1.0)),
    _generator("mindspore.mint.randperm", "RandpermExt", "ops.randperm (RandpermV2)",
               _sorted(lambda ms: ms.mint.randperm(5)), _sorted(lambda ms: ms.ops.randperm(5))),
]
