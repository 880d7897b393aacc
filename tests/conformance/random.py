"""Random specs: MindSpore's CPU samplers (StandardNormal, UniformReal, UniformInt, RandomChoiceWithMask)
and the functions built on them. The emulator draws MindSpore 2.10 CPU's very numbers, so the values are compared: primitives
with an explicit seed pair, functions after ``set_seed`` inside the sample (``_get_graph_seed`` then
gives each call its pair). Two calls of one primitive check that the stream continues (an odd count
drops the polar method's spare value, as MindSpore's fresh distribution per launch does)."""
from __future__ import annotations

from .core import T, op

I32 = dict(dtype="int32")


def _prim(name: str):
    """ops.<Name>(seed, seed2)(*operands) with the shape as the first operand."""
    return lambda ms, *xs, seed=0, seed2=0, shape=(): getattr(ms.ops, name)(seed, seed2)(shape, *xs)


def _twice(name: str):
    """Two calls of one primitive: the second continues the first's stream."""
    def run(ms, *xs, seed=0, seed2=0, shape=()):
        p = getattr(ms.ops, name)(seed, seed2)
        return p(shape, *xs), p(shape, *xs)
    return run


def _twice_choice(ms, x, count=256, seed=0, seed2=0):
    p = ms.ops.RandomChoiceWithMask(count, seed, seed2)
    return p(x) + p(x)


def _per_shape(name: str):
    """x, y, x again through one primitive: each input shape has its own kernel (MindSpore's PyNative
    kernel cache), the third call continues the first's engine."""
    def run(ms, x, y, seed=0, seed2=0):
        p = getattr(ms.ops, name)(seed, seed2)
        return p(x), p(y), p(x)
    return run


def _per_shape_sampler(name: str):
    """Shapes (2,), (3,), (2,) through one sampler: the third call continues the first's engine."""
    def run(ms, seed=0, seed2=0):
        p = getattr(ms.ops, name)(seed, seed2)
        return p((2,)), p((3,)), p((2,))
    return run


def _seeded(name: str, global_seed: int = 5):
    """ops.<name>(*xs, **kw) right after set_seed(global_seed); ``dtype`` kwargs name an ms dtype."""
    def run(ms, *xs, **kw):
        ms.set_seed(global_seed)
        if "dtype" in kw:
            kw["dtype"] = getattr(ms, kw["dtype"])
        return getattr(ms.ops, name)(*xs, **kw)
    return run


def _shaped(name: str):
    """ops.<name>(shape, *xs, **kw) after set_seed(5) (normal, uniform: the shape comes first)."""
    def run(ms, *xs, shape=(), **kw):
        ms.set_seed(5)
        if "dtype" in kw:
            kw["dtype"] = getattr(ms, kw["dtype"])
        return getattr(ms.ops, name)(shape, *xs, **kw)
    return run


def _sized(name: str):
    """ops.rand/randn(*size, **kw) after set_seed(5)."""
    def run(ms, size=(), **kw):
        ms.set_seed(5)
        if "dtype" in kw:
            kw["dtype"] = getattr(ms, kw["dtype"])
        return getattr(ms.ops, name)(*size, **kw)
    return run


def _bounds(low: int, high: int) -> list:
    return [T((), "int32", values=low), T((), "int32", values=high)]


SPECS = [
    op("mindspore.ops.StandardNormal", _prim("StandardNormal"), shapes=[[]], grad=False,
       kwargs=[{"seed": 1, "seed2": 2, "shape": (2, 3)}, {"seed": 0, "seed2": 7, "shape": (5,)},
               {"seed": 3, "seed2": 0, "shape": ()}, {"seed": 1, "seed2": 2, "shape": (2, 0)}],
       errors=[([], {"seed": -1, "seed2": 0, "shape": (2,)}), ([], {"seed": 1, "seed2": 2, "shape": (2, -1)}),
               ([], {"seed": 1, "seed2": 2, "shape": [2, 3]}), ([], {"seed": 1.0, "seed2": 2, "shape": (2,)})]),
    op("mindspore.ops.StandardNormal", _twice("StandardNormal"), shapes=[[]], grad=False,
       kwargs={"seed": 3, "seed2": 4, "shape": (3,)}),
    op("mindspore.ops.UniformReal", _prim("UniformReal"), shapes=[[]], grad=False,
       kwargs=[{"seed": 1, "seed2": 2, "shape": (2, 3)}, {"seed": 9, "seed2": 0, "shape": (7,)}],
       errors=[([], {"seed": 1, "seed2": 2, "shape": (2, -1)}), ([], {"seed": 1, "seed2": -2, "shape": (2,)})]),
    op("mindspore.ops.UniformReal", _twice("UniformReal"), shapes=[[]], grad=False,
       kwargs={"seed": 1, "seed2": 2, "shape": (2, 2)}),
    op("mindspore.ops.UniformInt", _prim("UniformInt"), shapes=[_bounds(0, 10), _bounds(-5, 1000003)], grad=False,
       kwargs={"seed": 1, "seed2": 2, "shape": (2, 4)},
       errors=[([T((), "int64", values=0), T((), "int64", values=5)], {"seed": 1, "seed2": 2, "shape": (2,)}),
               ([T((1,), "int32", values=[0]), T((1,), "int32", values=[5])], {"seed": 1, "seed2": 2, "shape": (2,)})]),
    op("mindspore.ops.UniformInt", _twice("UniformInt"), shapes=[_bounds(3, 7)], grad=False,
       kwargs={"seed": 2, "seed2": 1, "shape": (5,)}),
    op("mindspore.ops.RandomChoiceWithMask",
       lambda ms, x, count=256, seed=0, seed2=0: ms.ops.RandomChoiceWithMask(count, seed, seed2)(x),
       shapes=[T((3, 4), "bool"), T((50,), "bool"), T((2, 3, 4), "bool")], grad=False,
       kwargs=[{"count": 6, "seed": 1, "seed2": 2}],
       errors=[(T((3,)), {"count": 2}), (T((), "bool"), {"count": 2})]),
    op("mindspore.ops.RandomChoiceWithMask",
       lambda ms, x, count=256, seed=0, seed2=0: ms.ops.RandomChoiceWithMask(count, seed, seed2)(x),
       shapes=[T((8,), "bool")], grad=False, kwargs=[{"count": 10, "seed": 3, "seed2": 4}],
       errors=[(T((4,), "bool"), {"count": 0}), (T((4,), "bool"), {"count": 2.0})]),
    op("mindspore.ops.RandomChoiceWithMask", _twice_choice, shapes=[T((5, 5), "bool")], grad=False,
       kwargs={"count": 7, "seed": 5, "seed2": 6}),
    op("mindspore.ops.RandomShuffle", lambda ms, x, seed=0, seed2=0: ms.ops.RandomShuffle(seed, seed2)(x),
       shapes=[(6,), (4, 3), (), (1, 5)], dtypes=("float32", "int32", "float16", "bool"), grad=False,
       kwargs={"seed": 1, "seed2": 2}),
    op("mindspore.ops.RandomShuffle", _per_shape("RandomShuffle"), shapes=[[T((6,)), T((7,))]], grad=False,
       kwargs={"seed": 1, "seed2": 2}),
    op("mindspore.ops.StandardNormal", _per_shape_sampler("StandardNormal"), shapes=[[]], grad=False,
       kwargs={"seed": 1, "seed2": 2}),
    op("mindspore.ops.shuffle", _seeded("shuffle"), shapes=[(5, 2)], dtypes=("float32", "int64"), grad=False,
       kwargs=[{}, {"seed": 3}]),
    op("mindspore.ops.choice_with_mask", _seeded("choice_with_mask"), shapes=[T((4, 6), "bool")], grad=False,
       kwargs=[{"count": 5}, {"count": 30, "seed": 2}]),
    op("mindspore.ops.standard_normal", _seeded("standard_normal"), shapes=[[]], grad=False,
       kwargs=[{"shape": (2, 3)}, {"shape": (4,), "seed": 3}],
       errors=[([], {"shape": (2, -1)}), ([], {"shape": (2,), "seed": -1})]),
    op("mindspore.ops.normal", _shaped("normal"), shapes=[[T((3,)), T(())], [T((4, 1, 1)), T((), low=0.5, high=2.0)]],
       kwargs=[{"shape": (2, 3)}, {"shape": (2, 3), "seed": 3}],
       errors=[([T((3,)), T(())], {"shape": (2, -3)}), ([T((3,)), T(())], {"shape": [2, 3]})]),
    op("mindspore.ops.uniform", _shaped("uniform"), shapes=[[T((), values=0.5), T((), values=2.0)]], grad=False,
       kwargs=[{"shape": (2, 3)}, {"shape": (4,), "seed": 2}],
       errors=[([T((), values=0.0), T((), "int32", values=1)], {"shape": (2,)})]),
    op("mindspore.ops.uniform", _shaped("uniform"), shapes=[_bounds(1, 7)], grad=False,
       kwargs={"shape": (6,), "dtype": "int32"}),
    op("mindspore.ops.randn", _sized("randn"), shapes=[[]], grad=False,
       kwargs=[{"size": (2, 3)}, {"size": ((2, 3),), "seed": 3}, {"size": ([4],)}, {"size": ()},
               {"size": (2,), "dtype": "float16"}],
       errors=[([], {"size": (2, 3), "dtype": "int32"}), ([], {"size": (2, -1)})]),
    op("mindspore.ops.rand", _sized("rand"), shapes=[[]], grad=False,
       kwargs=[{"size": (2, 3)}, {"size": (4,), "seed": 1}, {"size": (3,), "dtype": "float64"}],
       errors=[([], {"size": (2,), "dtype": "int32"})]),
    op("mindspore.ops.randint", _seeded("randint"), shapes=[[]], grad=False,
       kwargs=[{"low": 0, "high": 10, "size": (6,)}, {"low": -3, "high": 4, "size": (2, 3), "seed": 1,
                                                      "dtype": "int8"}],
       errors=[([], {"low": 0, "high": 5, "size": [2]}), ([], {"low": 0.0, "high": 5, "size": (2,)}),
               ([], {"low": 0, "high": 5, "size": (2,), "dtype": "float32"})]),
    op("mindspore.ops.rand_like", _seeded("rand_like"), shapes=[T((2, 3))], dtypes=("float32", "float16"),
       grad=False, errors=[(T((2,), "int32"), {})]),
    op("mindspore.ops.randn_like", _seeded("randn_like"), shapes=[T((2, 3))], dtypes=("float32", "int32"),
       grad=False, kwargs=[{}, {"seed": 2}]),
    op("mindspore.ops.randint_like", _seeded("randint_like"), shapes=[T((2, 3), "int32")], grad=False,
       kwargs={"low": 0, "high": 4},
       errors=[(T((2,)), {"low": 0, "high": 4})]),
    # the Generator ops (below): MindSpore 2.10 serves them on Ascend only
]


# --- the Generator ops -----------------------------------------------------------------------------------
# MindSpore 2.10 serves them on Ascend only (its CPU build raises RuntimeError: the kernel UniformExt /
# InplaceUniform / InplaceNormal ... unregistered), and Ascend's Philox numbers are not reproduced here. So
# each sample returns what a draw shows whatever the generator's numbers (``facts``): zeros of the draw's
# shape and dtype, whether every value lies in the documented support, and (``moments``) the mean and
# standard deviation of a few thousand draws, compared within 5 standard errors of the difference of two
# independent estimates (``moment_tol``). The recorder runs an ``oracle``: the same draw from the MindSpore
# CPU sampler of the same distribution (UniformReal, StandardNormal, ...), summarised the same way.
DRAWS = 4000


def facts(ms, y, low=None, high=None, whole=False, moments=False):
    """(zeros like y, every value in [low, high) [and a whole number], mean and std of y as float32)."""
    out = [ms.ops.zeros_like(y)]
    if low is not None:
        inside = ms.ops.logical_and(y >= low, y < high)
        if whole:
            inside = ms.ops.logical_and(inside, y == y.floor())
        out.append(inside.all())
    if moments:
        f = y.astype(ms.float32)
        out += [f.mean(), f.std()]
    return tuple(out)


def moment_tol(sd, n=DRAWS):
    """(rtol, atol) for the moments of two independent samples of ``n`` draws of standard deviation
    ``sd``: 5 standard errors of the difference of their means (the std's standard error is below the
    mean's for the uniform, normal and Bernoulli laws; the exponential's is sqrt(2) times it: pass
    sqrt(2) sd)."""
    return (0.0, 5.0 * (2.0 ** 0.5) * sd / n ** 0.5)


def draws(ms, n=DRAWS):
    """A float32 tensor of ``n`` zeros for an in-place draw (made inside the sample: nothing recorded)."""
    return ms.ops.zeros((n,), ms.float32)


def generator_note(name, kernel, oracle):
    return (f"MindSpore 2.10 CPU has no kernel for {name} ({kernel}, Ascend-only): the sample returns what a draw "
            f"shows whatever the generator (shape, dtype, support, moments within 5 standard errors); recorded "
            f"through {oracle}, the MindSpore CPU sampler of the same distribution")


def _uniform(ms, shape, a, b):
    return ms.ops.uniform(shape, ms.Tensor(float(a)), ms.Tensor(float(b)), dtype=ms.float32)


def _normal(ms, shape, mean, std):
    return ms.ops.normal(shape, ms.Tensor(float(mean)), ms.Tensor(float(std)))


def _generator(name, kernel, oracle_text, fn, oracle, shapes=([],), tol=None):
    return op(name, fn, shapes=list(shapes), grad=False, oracle=oracle, tol=tol,
              note=generator_note(name, kernel, oracle_text))


def _seeded_facts(draw, **how):
    """A sample (or its oracle): set_seed(5), ``draw(ms, *xs)``, then its facts."""
    def run(ms, *xs):
        ms.set_seed(5)
        return facts(ms, draw(ms, *xs), **how)
    return run


def _like_facts(like, moments=True, **support):
    """A ``*_like`` sample (or its oracle): set_seed(5), the facts of ``like(ms, x)`` (x's shape and dtype,
    the support), then (``moments``) the moments of ``like`` of a few thousand float32 zeros."""
    def run(ms, x):
        ms.set_seed(5)
        out = facts(ms, like(ms, x), **support)
        return out + facts(ms, like(ms, draws(ms)), moments=True)[1:] if moments else out
    return run


SPECS += [
    _generator("mindspore.Tensor.uniform", "UniformExt", "ops.uniform (UniformReal)",
               _seeded_facts(lambda ms: draws(ms).uniform(-1.0, 1.0), low=-1.0, high=1.0, moments=True),
               _seeded_facts(lambda ms: _uniform(ms, (DRAWS,), -1.0, 1.0), low=-1.0, high=1.0, moments=True),
               tol=moment_tol(2.0 / 12 ** 0.5)),
    _generator("mindspore.Tensor.uniform_", "InplaceUniform", "ops.uniform (UniformReal)",
               _seeded_facts(lambda ms: draws(ms).uniform_(0.5, 2.0), low=0.5, high=2.0, moments=True),
               _seeded_facts(lambda ms: _uniform(ms, (DRAWS,), 0.5, 2.0), low=0.5, high=2.0, moments=True),
               tol=moment_tol(1.5 / 12 ** 0.5)),
    _generator("mindspore.Tensor.normal_", "InplaceNormal", "ops.normal (StandardNormal)",
               _seeded_facts(lambda ms: draws(ms).normal_(1.0, 0.5), moments=True),
               _seeded_facts(lambda ms: _normal(ms, (DRAWS,), 1.0, 0.5), moments=True), tol=moment_tol(0.5)),
    _generator("mindspore.ops.uniform_", "InplaceUniform", "ops.uniform (UniformReal)",
               _seeded_facts(lambda ms: ms.ops.uniform_(draws(ms), 0, 3), low=0.0, high=3.0, moments=True),
               _seeded_facts(lambda ms: _uniform(ms, (DRAWS,), 0, 3), low=0.0, high=3.0, moments=True),
               tol=moment_tol(3.0 / 12 ** 0.5)),
    _generator("mindspore.ops.normal_", "InplaceNormal", "ops.normal (StandardNormal)",
               _seeded_facts(lambda ms: ms.ops.normal_(draws(ms), 0, 2), moments=True),
               _seeded_facts(lambda ms: _normal(ms, (DRAWS,), 0, 2), moments=True), tol=moment_tol(2.0)),
    # x (2, 3) gives the draw's shape and dtype; a few thousand draws of its like give the moments
    _generator("mindspore.mint.rand_like", "InplaceUniform", "ops.rand_like (UniformReal)",
               _like_facts(lambda ms, x: ms.mint.rand_like(x), low=0.0, high=1.0),
               _like_facts(lambda ms, x: ms.ops.rand_like(x), low=0.0, high=1.0),
               shapes=[(2, 3)], tol=moment_tol(1.0 / 12 ** 0.5)),
]
