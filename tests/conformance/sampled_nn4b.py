"""Specs of ``sampled_nn4b`` (issue 21, part C): the stateful ``nn`` names, each sampled where one call
gives deterministic outputs: an optimizer's two steps on a fixed Parameter and gradient (the updated
values), a learning-rate schedule's value at a step, a loss-scale update, one training-wrapper step on a
Dense with fixed weights (PyNative: the Parameters are made per call)."""
from __future__ import annotations

from .core import T, cell, op

M23 = (2, 3)
STEP = T(values=3, dtype="int32")
STATEFUL = dict(grad=False, graph=False)


def _optim(name: str):
    """Two steps of ``nn.<name>`` on one Parameter: its new values."""
    def fn(ms, w, g, **kw):
        p = ms.Parameter(w, name="w")
        opt = getattr(ms.nn, name)([p], **kw)
        opt((g,))
        opt((g,))
        return p * 1
    return fn


def _schedule(name: str):
    return lambda ms, **kw: getattr(ms.nn, name)(**kw)


def _dense(ms, w, b):
    return ms.nn.Dense(3, 2, weight_init=w, bias_init=b)


def _train_step(ms, x, y, w, b, **kw):
    """One TrainOneStepCell step of an MSE Dense under SGD: the loss and the updated weights."""
    net = _dense(ms, w, b)
    opt = ms.nn.SGD(net.trainable_params(), learning_rate=0.1)
    step = ms.nn.TrainOneStepCell(ms.nn.WithLossCell(net, ms.nn.MSELoss()), opt, **kw)
    loss = step(x, y)
    return loss, net.weight * 1, net.bias * 1


def _loss_scale_update(name: str):
    """``nn.<name>`` updating a loss-scale Parameter once after an overflow flag: output and new scale."""
    def fn(ms, scale, overflow, **kw):
        p = ms.Parameter(scale, name="loss_scale")
        out = getattr(ms.nn, name)(**kw)(p, overflow)
        return out, p * 1
    return fn


def _with(name: str):
    """``nn.<name>(Dense, MSELoss)`` called on (x, y)."""
    def fn(ms, x, y, w, b):
        return getattr(ms.nn, name)(_dense(ms, w, b), ms.nn.MSELoss())(x, y)
    return fn


def _forward_value_and_grad(ms, x, y, w, b):
    net = ms.nn.WithLossCell(_dense(ms, w, b), ms.nn.MSELoss())
    return ms.nn.ForwardValueAndGrad(net, weights=net.trainable_params(), get_by_list=True)(x, y)


def _parameter_update(ms, w, new):
    p = ms.Parameter(w, name="w")
    ms.nn.ParameterUpdate(p)(new)
    return p * 1


def _jvp(name: str):
    return lambda ms, x, v: getattr(ms.nn, name)(ms.nn.Tanh())(x, v)


def _wrapped_dense(name: str, *args):
    """``nn.<name>(Dense, *args)`` (a parallel wrapper; one device: standalone) called on x."""
    return lambda ms, x, w, b: getattr(ms.nn, name)(_dense(ms, w, b), *args)(x)


def _triple(ms, a, b, c):
    """VirtualDatasetCellTriple over a Cell of three inputs."""
    class Net(ms.nn.Cell):
        def construct(self, x, y, z):
            return x * y + z
    return ms.nn.VirtualDatasetCellTriple(Net())(a, b, c)


W_G = [[M23, M23]]
DENSE_IO = [[(4, 3), (4, 2), (2, 3), (2,)]]
SPECS = [
    # optimizers
    op("mindspore.nn.Adam", _optim("Adam"), shapes=W_G,
       kwargs=[{"learning_rate": 0.1}, {"learning_rate": 0.1, "use_nesterov": True, "weight_decay": 0.1}],
       errors=[(W_G[0], {"beta1": 1.0})], **STATEFUL),
    op("mindspore.nn.Momentum", _optim("Momentum"), shapes=W_G,
       kwargs=[{"learning_rate": 0.1, "momentum": 0.9}, {"learning_rate": 0.1, "momentum": 0.9, "use_nesterov": True}],
       errors=[(W_G[0], {"learning_rate": 0.1, "momentum": -0.5})], **STATEFUL),
    op("mindspore.nn.SGD", _optim("SGD"), shapes=W_G,
       kwargs=[{"learning_rate": 0.1}, {"learning_rate": 0.1, "momentum": 0.9, "dampening": 0.1}],
       errors=[(W_G[0], {"learning_rate": 0.1, "nesterov": True})], **STATEFUL),
    op("mindspore.nn.AdamWeightDecay", _optim("AdamWeightDecay"), shapes=W_G,
       kwargs=[{"learning_rate": 0.1, "weight_decay": 0.1}], errors=[(W_G[0], {"eps": 0.0})], **STATEFUL),
    op("mindspore.nn.RMSProp", _optim("RMSProp"), shapes=W_G,
       kwargs=[{"learning_rate": 0.1}, {"learning_rate": 0.1, "centered": True, "momentum": 0.5}],
       errors=[(W_G[0], {"decay": -1.0})], **STATEFUL),
    op("mindspore.nn.Adagrad", _optim("Adagrad"), shapes=W_G, kwargs=[{"learning_rate": 0.1}],
       errors=[(W_G[0], {"accum": -1.0})], **STATEFUL),
    op("mindspore.nn.ASGD", _optim("ASGD"), shapes=W_G, kwargs=[{"learning_rate": 0.1}], **STATEFUL),
    op("mindspore.nn.AdaFactor", _optim("AdaFactor"), shapes=W_G,
       kwargs=[{"learning_rate": 0.1, "relative_step": False, "scale_parameter": False, "warmup_init": False}],
       **STATEFUL),
    op("mindspore.nn.AdaMax", _optim("AdaMax"), shapes=W_G, kwargs=[{"learning_rate": 0.1}], **STATEFUL),
    op("mindspore.nn.Adadelta", _optim("Adadelta"), shapes=W_G, kwargs=[{"learning_rate": 0.1}], **STATEFUL),
    op("mindspore.nn.FTRL", _optim("FTRL"), shapes=W_G, kwargs=[{"learning_rate": 0.1}],
       errors=[(W_G[0], {"lr_power": 0.5})], **STATEFUL),
    op("mindspore.nn.LazyAdam", _optim("LazyAdam"), shapes=W_G, kwargs=[{"learning_rate": 0.1}], **STATEFUL),
    op("mindspore.nn.ProximalAdagrad", _optim("ProximalAdagrad"), shapes=W_G,
       kwargs=[{"learning_rate": 0.1, "l1": 0.01, "l2": 0.01}], **STATEFUL),
    op("mindspore.nn.Rprop", _optim("Rprop"), shapes=W_G, kwargs=[{"learning_rate": 0.1}],
       errors=[(W_G[0], {"etas": (1.5, 0.5)})], **STATEFUL),
    # learning-rate schedules at a step
    cell("mindspore.nn.PolynomialDecayLR", _schedule("PolynomialDecayLR"), shapes=[STEP],
         kwargs=[{"learning_rate": 0.1, "end_learning_rate": 0.01, "decay_steps": 4, "power": 0.5},
                 {"learning_rate": 0.1, "end_learning_rate": 0.01, "decay_steps": 2, "power": 2.0, "update_decay_steps": True}],
         errors=[(STEP, {"learning_rate": 0.1, "end_learning_rate": 0.01, "decay_steps": 0, "power": 0.5})]),
    cell("mindspore.nn.ExponentialDecayLR", _schedule("ExponentialDecayLR"), shapes=[STEP],
         kwargs=[{"learning_rate": 0.1, "decay_rate": 0.9, "decay_steps": 2},
                 {"learning_rate": 0.1, "decay_rate": 0.9, "decay_steps": 2, "is_stair": True}]),
    cell("mindspore.nn.CosineDecayLR", _schedule("CosineDecayLR"), shapes=[STEP],
         kwargs=[{"min_lr": 0.01, "max_lr": 0.1, "decay_steps": 4}],
         errors=[(STEP, {"min_lr": 0.2, "max_lr": 0.1, "decay_steps": 4})]),
    cell("mindspore.nn.InverseDecayLR", _schedule("InverseDecayLR"), shapes=[STEP],
         kwargs=[{"learning_rate": 0.1, "decay_rate": 0.5, "decay_steps": 2},
                 {"learning_rate": 0.1, "decay_rate": 0.5, "decay_steps": 2, "is_stair": True}]),
    cell("mindspore.nn.NaturalExpDecayLR", _schedule("NaturalExpDecayLR"), shapes=[STEP],
         kwargs=[{"learning_rate": 0.1, "decay_rate": 0.5, "decay_steps": 2}]),
    cell("mindspore.nn.WarmUpLR", _schedule("WarmUpLR"), shapes=[STEP, T(values=7, dtype="int32")],
         kwargs=[{"learning_rate": 0.1, "warmup_steps": 4}]),
    # loss scale
    op("mindspore.nn.DynamicLossScaleUpdateCell", _loss_scale_update("DynamicLossScaleUpdateCell"),
       shapes=[[T(values=1024.0), T(values=True, dtype="bool")], [T(values=1024.0), T(values=False, dtype="bool")]],
       kwargs=[{"loss_scale_value": 1024.0, "scale_factor": 2, "scale_window": 1}], **STATEFUL),
    op("mindspore.nn.FixedLossScaleUpdateCell", _loss_scale_update("FixedLossScaleUpdateCell"),
       shapes=[[T(values=128.0), T(values=True, dtype="bool")]], kwargs=[{"loss_scale_value": 128.0}], **STATEFUL),
    # training wrappers on a Dense with fixed weights
    op("mindspore.nn.TrainOneStepCell", _train_step, shapes=DENSE_IO, kwargs=[{}, {"sens": 2.0}], **STATEFUL),
    op("mindspore.nn.WithLossCell", _with("WithLossCell"), shapes=DENSE_IO, **STATEFUL),
    op("mindspore.nn.WithEvalCell", _with("WithEvalCell"), shapes=DENSE_IO, **STATEFUL),
    op("mindspore.nn.WithGradCell", _with("WithGradCell"), shapes=DENSE_IO, **STATEFUL),
    op("mindspore.nn.ForwardValueAndGrad", _forward_value_and_grad, shapes=DENSE_IO, **STATEFUL),
    op("mindspore.nn.MicroBatchInterleaved", _wrapped_dense("MicroBatchInterleaved", 2), shapes=[[(4, 3), (2, 3), (2,)]],
       **STATEFUL),
    op("mindspore.nn.GradAccumulationCell", _wrapped_dense("GradAccumulationCell", 2), shapes=[[(4, 3), (2, 3), (2,)]],
       **STATEFUL),
    op("mindspore.nn.VirtualDatasetCellTriple", _triple, shapes=[[M23, M23, M23]], **STATEFUL),
    op("mindspore.mint.distributed.is_initialized", lambda ms: ms.mint.distributed.is_initialized(), shapes=[[]],
       **STATEFUL),
    op("mindspore.nn.ParameterUpdate", _parameter_update, shapes=W_G, **STATEFUL),
    op("mindspore.nn.Jvp", _jvp("Jvp"), shapes=W_G, grad=False),
    op("mindspore.nn.Vjp", _jvp("Vjp"), shapes=W_G, grad=False),
]
