"""mindspore.train (issue 10): Model, callbacks, metrics and dataset sink mode.

Oracles: a hand-written TrainOneStepCell loop over the same batches (Model.train must give the same
losses and weights bit for bit, sunk or not), numpy (logits, losses and metrics computed by hand),
MindSpore's documented metric examples and printed lines (REFERENCE-training.md 3.2), files read back
with load_checkpoint, and the runtime's own call record (graph launches per sink). The runtime is
strict, so any device access the sunk loop leaves unordered between its streams raises RaceError.
A zoo-style LeNet script runs unchanged under ``ascendemu run``.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
import ascendemu.frontend.dataset as ds
import ascendemu.frontend.dataset.transforms as T
import ascendemu.frontend.dataset.vision as V
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError
from ascendemu.frontend import Tensor, nn
from ascendemu.frontend.train.serialization import load_checkpoint
from ascendemu.frontend.train import (F1, MAE, MSE, Accuracy, Callback, CheckpointConfig, DynamicLossScaleManager,
                                      EarlyStopping, History, LambdaCallback, LearningRateScheduler, Loss,
                                      LossMonitor, Model, ModelCheckpoint, Precision, Recall,
                                      Top1CategoricalAccuracy, Top5CategoricalAccuracy, TimeMonitor,
                                      TopKCategoricalAccuracy)
from ascendemu.frontend.unsupported import UnsupportedOpError
from ascendemu.graph import runners as runners_module
from ascendemu.cli.pytest_plugin import emulated_device
from ascendemu.device.cost import GETNEXT_S
from datafiles import write_idx
from test_run_cli import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from examples import reference as ref  # noqa: E402

N, FEATURES, CLASSES, BATCH = 20, 4, 3, 5
STEPS_PER_EPOCH = N // BATCH
RNG = np.random.default_rng(7)
X = RNG.standard_normal((N, FEATURES)).astype(np.float32)
Y = RNG.integers(0, CLASSES, N).astype(np.int32)
W0 = (RNG.standard_normal((CLASSES, FEATURES)) * 0.5).astype(np.float32)
B0 = (RNG.standard_normal(CLASSES) * 0.1).astype(np.float32)
LR, MOMENTUM = 0.1, 0.9


@pytest.fixture(scope="module")
def ex(ascendemu_kernel_cache):
    with emulated_device(ascendemu_kernel_cache, strict=True) as executor:
        yield executor


@pytest.fixture(autouse=True)
def graph_mode(ex):
    saved = {k: ms.get_context(k) for k in ("mode", "jit_config")}
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O2"})
    yield
    ms.set_context(**saved)


def dataset() -> ds.Dataset:
    return ds.NumpySlicesDataset({"x": X, "y": Y}, shuffle=False).batch(BATCH)


def network() -> nn.Dense:
    net = nn.Dense(FEATURES, CLASSES)
    net.weight.set_data(Tensor(W0))
    net.bias.set_data(Tensor(B0))
    return net


def loss_fn() -> nn.Cell:
    return nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")


def model(metrics=None, **kwargs) -> tuple[nn.Dense, Model]:
    net = network()
    opt = nn.Momentum(net.trainable_params(), LR, MOMENTUM)
    return net, Model(net, loss_fn(), opt, metrics=metrics, **kwargs)


def manual(batch_order: list[int], lr_at_step=None) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """The same training written out: TrainOneStepCell(WithLossCell) over the batches in order."""
    net = network()
    opt = nn.Momentum(net.trainable_params(), LR, MOMENTUM)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn()), opt)
    step.set_train()
    losses = []
    for k, b in enumerate(batch_order):
        rows = slice(b * BATCH, (b + 1) * BATCH)
        losses.append(step(Tensor(X[rows]), Tensor(Y[rows])).asnumpy())
        if lr_at_step is not None:
            opt.learning_rate.set_data(np.float32(lr_at_step(k + 1)))
    return losses, {"weight": net.weight.asnumpy(), "bias": net.bias.asnumpy()}


class Recorder(Callback):
    """Every hook call, in order, with (cur_epoch_num, cur_step_num) and the step's loss."""

    def __init__(self):
        self.calls, self.losses, self.params = [], [], []

    def _note(self, hook, run_context):
        p = run_context.original_args()
        self.calls.append((hook, p.get("cur_epoch_num"), p.get("cur_step_num")))

    def on_train_begin(self, rc): self._note("train_begin", rc)
    def on_train_epoch_begin(self, rc): self._note("epoch_begin", rc)
    def on_train_step_begin(self, rc): self._note("step_begin", rc)
    def on_train_epoch_end(self, rc): self._note("epoch_end", rc)
    def on_train_end(self, rc): self._note("train_end", rc)

    def on_train_step_end(self, rc):
        self._note("step_end", rc)
        p = rc.original_args()
        out = p.net_outputs
        self.losses.append((out[0] if isinstance(out, tuple) else out).asnumpy())
        self.params.append(dict(p))


def weights(net: nn.Dense) -> dict[str, np.ndarray]:
    return {"weight": net.weight.asnumpy(), "bias": net.bias.asnumpy()}


def assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


# ------------------------------------------------------------------------------------------ training

def test_train_matches_a_manual_train_step_loop_bit_for_bit_with_mindspores_callback_order_and_params():
    net, m = model()
    train_set, rec = dataset(), Recorder()
    m.train(2, train_set, callbacks=[rec])
    want_losses, want = manual([0, 1, 2, 3] * 2)
    np.testing.assert_array_equal(np.array(rec.losses), np.array(want_losses))
    assert_same(weights(net), want)
    assert len(set(np.round(np.array(want_losses), 6))) > 4, "the loss must change as it trains"
    per_epoch = lambda e: ([("epoch_begin", e, 4 * (e - 1))] + [c for s in range(4 * e - 3, 4 * e + 1) for c in (
        ("step_begin", e, s), ("step_end", e, s))] + [("epoch_end", e, 4 * e)])
    assert rec.calls == [("train_begin", None, 0), *per_epoch(1), *per_epoch(2), ("train_end", 2, 8)]
    p = rec.params[-1]
    assert (p["cur_epoch_num"], p["cur_step_num"], p["batch_num"], p["epoch_num"]) == (2, 8, 4, 2)
    assert p["train_network"] is m.train_network and isinstance(m.train_network, nn.TrainOneStepCell)
    assert p["optimizer"] is m.train_network.optimizer and isinstance(p["loss_fn"], nn.SoftmaxCrossEntropyWithLogits)
    assert (p["mode"], p["dataset_sink_mode"], p["parallel_mode"], p["device_number"]) == ("train", False,
                                                                                            "stand_alone", 1)
    assert p["train_dataset"] is train_set and p["network"] is net
    assert [t.shape for t in p["train_dataset_element"]] == [(BATCH, FEATURES), (BATCH,)]


def test_old_callback_names_request_stop_and_lambda_callback():
    """A 1.x callback (step_end) is called by the new hooks; request_stop in step 3 ends the epoch
    there and skips epoch 2, with epoch_end and train_end still called."""
    seen = []

    class Old(Callback):
        def step_end(self, run_context):
            seen.append(run_context.original_args().cur_step_num)
            if run_context.original_args().cur_step_num == 3:
                run_context.request_stop()

    ends = []
    _, m = model()
    m.train(2, dataset(), callbacks=[Old(), LambdaCallback(on_train_epoch_end=lambda rc: ends.append("epoch"),
                                                           on_train_end=lambda rc: ends.append("train"))])
    assert seen == [1, 2, 3] and ends == ["epoch", "train"]


def test_loss_monitor_and_time_monitor_print_mindspores_lines(capsys):
    _, m = model()
    rec = Recorder()
    m.train(2, dataset(), callbacks=[rec, LossMonitor(per_print_times=3), TimeMonitor()])
    out = capsys.readouterr().out.splitlines()
    loss_lines = [line for line in out if line.startswith("epoch:")]
    # per_print_times=3 over steps 1..8: steps 3 and 6; "step" counts within the epoch
    assert loss_lines == [f"epoch: 1 step: 3, loss is {float(np.mean(rec.losses[2]))}",
                          f"epoch: 2 step: 2, loss is {float(np.mean(rec.losses[5]))}"]
    assert re.fullmatch(r"epoch: 1 step: 3, loss is \d\.\d{6,}", loss_lines[0])
    times = [re.fullmatch(r"Train epoch time: (\d+\.\d{3}) ms, per step time: (\d+\.\d{3}) ms", line)
             for line in out if "epoch time" in line]
    assert len(times) == 2 and all(times)
    for t in times:
        assert float(t.group(2)) == pytest.approx(float(t.group(1)) / STEPS_PER_EPOCH, abs=1e-3)


def test_loss_monitor_stops_on_nan_with_mindspores_message():
    class NanLoss(nn.Cell):
        def construct(self, logits, label):
            return ms.ops.mean(logits) * Tensor(np.float32(np.nan))

    net = network()
    m = Model(net, NanLoss(), nn.Momentum(net.trainable_params(), LR, MOMENTUM))
    with pytest.raises(ValueError, match=r"^In epoch: 1 step: 1, loss is NAN or INF, training process cannot "
                                         r"continue, terminating training\.$"):
        m.train(1, dataset(), callbacks=[LossMonitor()])


# ------------------------------------------------------------------------------------ dataset sink mode

def test_sink_mode_runs_each_epoch_as_one_launch_with_callbacks_per_sink_and_the_same_weights(ex, capsys):
    rt = ex.rt
    launches = []
    record = lambda name, *_: launches.append(name) if name in ("launch_graph", "synchronize_stream") else None
    net, m = model()
    rec = Recorder()
    rt.recorders.append(record)
    try:
        m.train(2, dataset(), callbacks=[rec, LossMonitor()], dataset_sink_mode=True)
    finally:
        rt.recorders.remove(record)
    want_losses, want = manual([0, 1, 2, 3] * 2)
    assert_same(weights(net), want)
    # one step_end per sink, cur_step_num advanced by the sink size, the sink's last loss
    assert [c for c in rec.calls if c[0] == "step_end"] == [("step_end", 1, 4), ("step_end", 2, 8)]
    np.testing.assert_array_equal(np.array(rec.losses), np.array([want_losses[3], want_losses[7]]))
    assert rec.params[-1]["dataset_sink_mode"] is True and rec.params[-1]["batch_num"] == 4
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("epoch:")]
    assert lines == [f"epoch: 1 step: 4, loss is {float(want_losses[3])}",
                     f"epoch: 2 step: 4, loss is {float(want_losses[7])}"]
    # two sinks: two graph launches, not eight
    assert launches.count("launch_graph") == 2
    sink = ex._sinks[("TrainOneStepCell", "O2")]
    assert (sink.steps, sink.sinks) >= (8, 2)
    stepwise = ex._totals[("TrainOneStepCell", "O2")]
    # a sunk step this small waits for GetNext's per-batch cost (device/cost.py GETNEXT_S, issue 23), which
    # a step-by-step run has no device queue to pay: here the sink saves API calls, not host time
    assert sink.host_s / sink.steps > GETNEXT_S > stepwise.host_s / stepwise.runs
    line = next(s for s in ex.summary() if "dataset sink mode" in s)
    saved = re.search(r"host time saved (-?\d+\.\d+) ms/step", line)
    assert saved, line
    assert float(saved.group(1)) == pytest.approx((stepwise.host_s / stepwise.runs - sink.host_s / sink.steps) * 1e3,
                                                  abs=1e-3)


def test_sink_size_makes_an_epoch_that_many_steps_and_the_data_carries_on(capsys):
    net, m = model()
    rec = Recorder()
    m.train(3, dataset(), callbacks=[rec, LossMonitor()], dataset_sink_mode=True, sink_size=3)
    want_losses, want = manual([0, 1, 2, 3, 0, 1, 2, 3, 0])
    assert_same(weights(net), want)
    assert [c[2] for c in rec.calls if c[0] == "step_end"] == [3, 6, 9]
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("epoch:")]
    assert lines == [f"epoch: {e} step: 3, loss is {float(want_losses[3 * e - 1])}" for e in (1, 2, 3)]


def test_a_queue_shallower_than_the_sink_reuses_its_slots(ex, monkeypatch):
    """Two slots for four steps: each push waits until GetNext took the batch before it (strict mode
    checks the ordering)."""
    monkeypatch.setattr(runners_module, "QUEUE_DEPTH", 2)
    net, m = model()
    m.train(2, dataset(), dataset_sink_mode=True)
    assert_same(weights(net), manual([0, 1, 2, 3] * 2)[1])
    assert [p.queue.depth for p in ex._prepared.values() if p.queue is not None] == [2]


def test_a_short_last_batch_gets_a_sunk_loop_of_its_own():
    net, m = model()
    odd = ds.NumpySlicesDataset({"x": X[:18], "y": Y[:18]}, shuffle=False).batch(BATCH)    # 5, 5, 5, 3
    m.train(1, odd, dataset_sink_mode=True)
    ref_net = network()
    step = nn.TrainOneStepCell(nn.WithLossCell(ref_net, loss_fn()), nn.Momentum(ref_net.trainable_params(), LR,
                                                                                 MOMENTUM))
    for rows in (slice(0, 5), slice(5, 10), slice(10, 15), slice(15, 18)):
        step(Tensor(X[rows]), Tensor(Y[rows]))
    assert_same(weights(net), weights(ref_net))


# ------------------------------------------------------------------------------------------ checkpoints

def test_model_checkpoint_names_keeps_max_appends_info_and_renames_a_taken_prefix(tmp_path):
    snapshots = {}

    class Snap(Callback):
        def on_train_step_end(self, rc):
            snapshots[rc.original_args().cur_step_num] = weights(net)

    net, m = model()
    config = CheckpointConfig(save_checkpoint_steps=3, keep_checkpoint_max=2,
                              append_info=["epoch_num", "step_num", {"tag": 7}])
    ckpt = ModelCheckpoint(directory=str(tmp_path), config=config)
    m.train(2, dataset(), callbacks=[Snap(), ckpt])
    # saves at steps 3 (1_3), 6 (2_2) and the last, 8 (2_4); keeping two removed the oldest
    assert sorted(os.listdir(tmp_path)) == ["CKP-2_2.ckpt", "CKP-2_4.ckpt"]
    assert ckpt.latest_ckpt_file_name == str(tmp_path / "CKP-2_4.ckpt")
    last = load_checkpoint(str(tmp_path / "CKP-2_4.ckpt"))
    names = list(last)
    assert names[:2] == ["weight", "bias"] and names[-3:] == ["epoch_num", "step_num", "tag"]
    assert {"global_step", "learning_rate", "momentum", "moments.weight", "moments.bias"} <= set(names)
    assert (int(last["epoch_num"].asnumpy()), int(last["step_num"].asnumpy()), int(last["tag"].asnumpy())) == (2, 8, 7)
    assert_same({k: last[k].asnumpy() for k in ("weight", "bias")}, snapshots[8])
    middle = load_checkpoint(str(tmp_path / "CKP-2_2.ckpt"))
    assert_same({k: middle[k].asnumpy() for k in ("weight", "bias")}, snapshots[6])
    assert int(middle["global_step"].asnumpy().reshape(())) == 6
    # a second and third callback on the same prefix and directory: CKP_1, CKP_2
    assert ModelCheckpoint(directory=str(tmp_path))._prefix == "CKP_1"
    _, m2 = model()
    m2.train(1, dataset(), callbacks=[ModelCheckpoint(directory=str(tmp_path),
                                                      config=CheckpointConfig(save_checkpoint_steps=4))])
    assert "CKP_1-1_4.ckpt" in os.listdir(tmp_path)
    assert ModelCheckpoint(directory=str(tmp_path))._prefix == "CKP_2"


def test_exception_save_writes_a_breakpoint_checkpoint(tmp_path):
    class Boom(Callback):
        def on_train_step_end(self, rc):
            if rc.original_args().cur_step_num == 2:
                raise RuntimeError("boom")

    net, m = model()
    ckpt = ModelCheckpoint(prefix="net", directory=str(tmp_path),
                           config=CheckpointConfig(save_checkpoint_steps=10, exception_save=True))
    with pytest.raises(RuntimeError, match="boom"):
        m.train(1, dataset(), callbacks=[ckpt, Boom()])
    saved = load_checkpoint(str(tmp_path / "net-1_2_breakpoint.ckpt"))
    assert_same({k: saved[k].asnumpy() for k in ("weight", "bias")}, weights(net))


# ------------------------------------------------------------------------------------------ evaluation

def numpy_logits() -> np.ndarray:
    return X.astype(np.float64) @ W0.T.astype(np.float64) + B0


def test_eval_metrics_match_numpy_sunk_or_not():
    net = network()
    metrics = {"acc": Accuracy(), "loss": Loss(), "top1": Top1CategoricalAccuracy(), "top2": TopKCategoricalAccuracy(2),
               "precision": Precision(), "recall": Recall(), "f1": F1()}
    m = Model(net, loss_fn(), metrics=metrics)
    logits = numpy_logits()
    pred = logits.argmax(1)
    shifted = logits - logits.max(1, keepdims=True)
    ce = np.log(np.exp(shifted).sum(1)) - shifted[np.arange(N), Y]
    top2 = np.argsort(-logits, 1)[:, :2]
    tp = np.array([np.sum((pred == c) & (Y == c)) for c in range(CLASSES)], np.float64)
    predicted = np.array([np.sum(pred == c) for c in range(CLASSES)], np.float64)
    actual = np.array([np.sum(Y == c) for c in range(CLASSES)], np.float64)
    for sink in (False, True):
        result = m.eval(dataset(), dataset_sink_mode=sink)
        assert result["acc"] == result["top1"] == np.mean(pred == Y)
        assert result["loss"] == pytest.approx(ce.reshape(STEPS_PER_EPOCH, BATCH).mean(1).mean(), rel=1e-6)
        assert result["top2"] == np.mean([Y[i] in top2[i] for i in range(N)])
        np.testing.assert_allclose(result["precision"], tp / predicted)
        np.testing.assert_allclose(result["recall"], tp / actual)
        np.testing.assert_allclose(result["f1"], 2 * tp / (predicted + actual))
    assert isinstance(result["acc"], float) and repr({"acc": result["acc"]}) == f"{{'acc': {result['acc']!r}}}"


def test_metric_names_and_a_custom_eval_network_with_eval_indexes():
    net = network()
    m = Model(net, loss_fn(), metrics={"accuracy", "loss", "top_1_accuracy"})
    result = m.eval(dataset())
    assert sorted(result) == ["accuracy", "loss", "top_1_accuracy"]
    assert result["top_1_accuracy"] == result["accuracy"] == np.mean(numpy_logits().argmax(1) == Y)
    with pytest.raises(InvalidParamError, match="k=5 is more than the 3 classes"):
        Model(net, loss_fn(), metrics={"top_5_accuracy"}).eval(dataset())

    class Swapped(nn.Cell):                       # (label, logits, loss)
        def __init__(self):
            super().__init__()
            self.net, self.loss = net, loss_fn()

        def construct(self, x, y):
            logits = self.net(x)
            return y, logits, self.loss(logits, y)

    custom = Model(net, metrics={"acc": Accuracy(), "loss": Loss()}, eval_network=Swapped(), eval_indexes=[2, 1, 0])
    assert custom.eval(dataset()) == {"acc": result["accuracy"], "loss": result["loss"]}


@pytest.mark.parametrize("metric, inputs, want", [
    # MindSpore's documented examples (mindspore.train.* docstrings)
    (Accuracy("classification"), ([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]], [1, 0, 1]), 0.6666666666666666),
    (Precision("classification"), ([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]], [1, 0, 1]), [0.5, 1.0]),
    (Recall("classification"), ([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]], [1, 0, 1]), [1.0, 0.5]),
    (F1(), ([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]], [1, 0, 1]), [0.66666667, 0.66666667]),
    (TopKCategoricalAccuracy(3), ([[0.2, 0.5, 0.3, 0.6, 0.2], [0.1, 0.35, 0.5, 0.2, 0.], [0.9, 0.6, 0.2, 0.01, 0.3]],
                                  [2, 0, 1]), 0.6666666666666666),
    (Top1CategoricalAccuracy(), ([[0.2, 0.5, 0.3, 0.6, 0.2], [0.1, 0.35, 0.5, 0.2, 0.], [0.9, 0.6, 0.2, 0.01, 0.3]],
                                 [2, 0, 1]), 0.0),
    (Top5CategoricalAccuracy(), ([[0.2, 0.5, 0.3, 0.6, 0.2], [0.1, 0.35, 0.5, 0.2, 0.], [0.9, 0.6, 0.2, 0.01, 0.3]],
                                 [2, 0, 1]), 1.0),
    (MAE(), ([0.1, 0.2, 0.6, 0.9], [0.1, 0.25, 0.7, 0.9]), 0.037499990314245224),
    (MSE(), ([0.1, 0.2, 0.6, 0.9], [0.1, 0.25, 0.5, 0.9]), 0.0031250009778887033),
    (Loss(), (0.2,), 0.20000000298023224),
    (Accuracy("multilabel"), ([[0, 1, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 1]]), 0.5),
])
def test_metrics_reproduce_mindspores_documented_examples(metric, inputs, want):
    tensors = [Tensor(np.array(a, np.float32)) for a in inputs]
    metric.clear()
    metric.update(*tensors)
    np.testing.assert_allclose(metric.eval(), want, rtol=1e-7)
    assert metric(*tensors) == pytest.approx(metric.eval())        # __call__ = clear, update, eval


def test_metrics_accumulate_over_batches_and_take_one_hot_labels():
    logits = RNG.standard_normal((12, 4))
    labels = RNG.integers(0, 4, 12)
    acc = Accuracy()
    for rows in (slice(0, 5), slice(5, 12)):
        acc.update(logits[rows], np.eye(4)[labels[rows]])            # one-hot labels
    assert acc.eval() == np.mean(logits.argmax(1) == labels)
    err = MSE()
    err.update(logits[:6], logits[6:])
    err.update(logits[6:], logits[:6])
    assert err.eval() == pytest.approx(2 * ((logits[:6] - logits[6:]) ** 2).sum() / 12)
    with pytest.raises(InvalidParamError, match="number of samples is 0"):
        Accuracy().eval()
    with pytest.raises(UnsupportedOpError, match="dice"):
        Model(network(), loss_fn(), metrics={"dice"})


# ------------------------------------------------------------------- learning rate, early stopping, fit

def test_learning_rate_scheduler_changes_the_rate_the_next_step_reads():
    halve_every_two = lambda lr, step: lr * 0.5 if step % 2 == 0 else lr
    net, m = model()
    m.train(1, dataset(), callbacks=[LearningRateScheduler(halve_every_two)])
    _, want = manual([0, 1, 2, 3], lr_at_step=lambda step: LR * 0.5 ** (step // 2))
    assert_same(weights(net), want)
    assert float(m.train_network.optimizer.learning_rate.asnumpy()) == np.float32(LR * 0.25)


def test_early_stopping_on_the_training_loss_and_history():
    history = History()
    stop = EarlyStopping(monitor="loss", min_delta=10.0, patience=1, verbose=True)
    _, m = model()
    m.train(5, dataset(), callbacks=[stop, history])
    # epoch 1 improves on +inf; epoch 2 does not by min_delta=10: wait 1 >= patience 1 -> stop
    assert history.epoch == {"epoch": [1, 2]} and stop.stopped_epoch == 2
    assert len(history.history["net_output"]) == 2


def test_fit_evaluates_each_epoch_and_early_stopping_restores_the_best_weights(capsys):
    after_epoch = {}

    class Snap(Callback):
        def on_train_epoch_end(self, rc):
            after_epoch[rc.original_args().cur_epoch_num] = weights(net)

    net, m = model(metrics={"acc"})
    history = History()
    stop = EarlyStopping(monitor="eval_loss", min_delta=10.0, patience=1, restore_best_weights=True)
    m.fit(5, dataset(), dataset(), callbacks=[Snap(), LossMonitor(per_print_times=0), history, stop])
    assert stop.stopped_epoch == 2 and sorted(after_epoch) == [1, 2]
    assert_same(weights(net), after_epoch[1])                     # restored to the best (first) epoch
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Eval result")]
    assert printed == [f"Eval result: epoch {e}, metrics: {{'acc': {a!r}}}" for e, a in
                       zip((1, 2), history.history["acc"])]


# --------------------------------------------------------------------------------------- mixed precision

def test_amp_o2_with_a_loss_scale_manager_trains_sunk_or_not():
    """O2: float16 network, TrainOneStepWithLossScaleCell; the host-side manager (Model updates it
    each step) and the device-side scale follow MindSpore's rule: x2 every scale_window clean steps."""
    results = {}
    for sink in (False, True):
        net = network()
        manager = DynamicLossScaleManager(init_loss_scale=2.0 ** 10, scale_window=2)
        m = Model(net, loss_fn(), nn.Momentum(net.trainable_params(), LR, MOMENTUM), amp_level="O2",
                  loss_scale_manager=manager)
        rec = Recorder()
        m.train(1, dataset(), callbacks=[rec], dataset_sink_mode=sink)
        assert isinstance(m.train_network, nn.TrainOneStepWithLossScaleCell)
        assert float(m.train_network.scale_sense.asnumpy()) == 2.0 ** 12
        assert manager.get_loss_scale() == (2.0 ** 12 if not sink else 2.0 ** 10)   # sink mode: device only
        results[sink] = weights(net)
    assert_same(results[False], results[True])
    assert np.abs(results[False]["weight"] - W0).max() > 1e-3


# ------------------------------------------------------------------------------------ bad input, names

def test_bad_arguments_get_typed_errors_that_say_what_to_do():
    net = network()
    opt = nn.Momentum(net.trainable_params(), LR, MOMENTUM)
    with pytest.raises(InvalidParamError, match="network must be a Cell"):
        Model("net")
    with pytest.raises(InvalidParamError, match="needs an optimizer"):
        Model(net, loss_fn(), amp_level="O2")
    with pytest.raises(InvalidParamError, match="metrics need an eval_network, or a loss_fn"):
        Model(net, metrics={"acc"})
    with pytest.raises(FeatureNotSupportedError, match="boost_level"):
        Model(net, loss_fn(), opt, boost_level="O1")
    # as MindSpore's AutoBoost: at boost level O0 the boost config is not used (the zoo's ResNet passes one)
    assert isinstance(Model(net, loss_fn(), opt, boost_level="O0", boost_config_dict={"grad_freeze": {}}
                            )._train_network, nn.TrainOneStepCell)
    m = Model(net, loss_fn(), opt)
    with pytest.raises(InvalidParamError, match="has no metrics"):
        m.eval(dataset())
    with pytest.raises(InvalidParamError, match="epoch"):
        m.train(0, dataset())
    with pytest.raises(InvalidParamError, match="sink_size"):
        m.train(1, dataset(), dataset_sink_mode=True, sink_size=0)
    three = ds.NumpySlicesDataset({"x": X, "y": Y, "z": Y}, shuffle=False).batch(BATCH)
    with pytest.raises(InvalidParamError, match="must give 2 columns"):
        m.train(1, three)
    with pytest.raises(InvalidParamError, match="Callback"):
        m.train(1, dataset(), callbacks=[print])
    with pytest.raises(InvalidParamError, match="can't be all None or 0"):
        CheckpointConfig(0, 0, 0, 0)
    with pytest.raises(InvalidParamError, match="prefix"):
        ModelCheckpoint(prefix="a/b")
    with pytest.raises(UnsupportedOpError, match="SummaryCollector"):
        ms.train.callback.SummaryCollector("./summary")


def test_import_paths_are_mindspores():
    import ascendemu.frontend.nn.metrics as nn_metrics
    import ascendemu.frontend.train.callback as callback
    import ascendemu.frontend.train.metrics as metrics
    assert ms.Model is ms.train.Model is Model
    assert callback.LossMonitor is ms.LossMonitor is ms.train.LossMonitor
    assert nn.Accuracy is nn_metrics.Accuracy is metrics.Accuracy is ms.train.Accuracy
    assert ms.train.serialization.save_checkpoint is ms.save_checkpoint
    from ascendemu.frontend.train.model import ParallelMode      # ResNet's and ViT's train.py import it so
    assert ParallelMode is ms.ParallelMode and ParallelMode.DATA_PARALLEL == "data_parallel"
    assert metrics.names() == ["F1", "acc", "accuracy", "loss", "mae", "mse", "precision", "recall",
                               "top_1_accuracy", "top_5_accuracy"]
    with pytest.raises(UnsupportedOpError, match="train.Foo"):
        ms.train.Foo


# --------------------------------------------------------------------------- a zoo script, unchanged

LENET_SCRIPT = '''\
"""LeNet-5 on MNIST as the model zoo writes it: train with Model and callbacks, evaluate a checkpoint."""
import argparse
import os

import mindspore.dataset as ds
import mindspore.dataset.transforms.c_transforms as C
import mindspore.dataset.vision.c_transforms as CV
import mindspore.nn as nn
from mindspore import context
from mindspore.common import dtype as mstype
from mindspore.common.initializer import Normal
from mindspore.dataset.vision import Inter
from mindspore.nn.metrics import Accuracy
from mindspore.train import Model
from mindspore.train.callback import CheckpointConfig, LossMonitor, ModelCheckpoint, TimeMonitor
from mindspore.train.serialization import load_checkpoint, load_param_into_net


def create_dataset(data_path, batch_size=32, repeat_size=1, num_parallel_workers=1):
    mnist_ds = ds.MnistDataset(data_path)
    resize_op = CV.Resize((32, 32), interpolation=Inter.LINEAR)
    rescale_nml_op = CV.Rescale(1 / 0.3081, -1 * 0.1307 / 0.3081)
    rescale_op = CV.Rescale(1.0 / 255.0, 0.0)
    hwc2chw_op = CV.HWC2CHW()
    type_cast_op = C.TypeCast(mstype.int32)
    mnist_ds = mnist_ds.map(operations=type_cast_op, input_columns="label", num_parallel_workers=num_parallel_workers)
    mnist_ds = mnist_ds.map(operations=resize_op, input_columns="image", num_parallel_workers=num_parallel_workers)
    mnist_ds = mnist_ds.map(operations=rescale_op, input_columns="image", num_parallel_workers=num_parallel_workers)
    mnist_ds = mnist_ds.map(operations=rescale_nml_op, input_columns="image", num_parallel_workers=num_parallel_workers)
    mnist_ds = mnist_ds.map(operations=hwc2chw_op, input_columns="image", num_parallel_workers=num_parallel_workers)
    mnist_ds = mnist_ds.shuffle(buffer_size=10000)
    mnist_ds = mnist_ds.batch(batch_size, drop_remainder=True)
    mnist_ds = mnist_ds.repeat(repeat_size)
    return mnist_ds


class LeNet5(nn.Cell):
    def __init__(self, num_class=10, num_channel=1):
        super(LeNet5, self).__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode='valid')
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode='valid')
        self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
        self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
        self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        x = self.fc3(x)
        return x


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description='MindSpore Lenet Example')
    parser.add_argument('--device_target', type=str, default="Ascend", choices=['Ascend', 'GPU', 'CPU'])
    parser.add_argument('--data_path', type=str, default="./MNIST_Data")
    parser.add_argument('--ckpt_path', type=str, default="./ckpt")
    args = parser.parse_args()
    context.set_context(mode=context.GRAPH_MODE, device_target=args.device_target)

    ds_train = create_dataset(os.path.join(args.data_path, "train"), batch_size=4)
    network = LeNet5(10)
    net_loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    net_opt = nn.Momentum(network.trainable_params(), 0.01, 0.9)
    time_cb = TimeMonitor(data_size=ds_train.get_dataset_size())
    config_ck = CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=2)
    ckpoint_cb = ModelCheckpoint(prefix="checkpoint_lenet", directory=args.ckpt_path, config=config_ck)
    model = Model(network, net_loss, net_opt, metrics={"Accuracy": Accuracy()})
    print("============== Starting Training ==============")
    model.train(1, ds_train, callbacks=[time_cb, ckpoint_cb, LossMonitor()], dataset_sink_mode=False)

    print("============== Starting Testing ==============")
    param_dict = load_checkpoint(os.path.join(args.ckpt_path, "checkpoint_lenet-1_5.ckpt"))
    load_param_into_net(network, param_dict)
    ds_eval = create_dataset(os.path.join(args.data_path, "test"), batch_size=4)
    acc = model.eval(ds_eval, dataset_sink_mode=False)
    print("============== {} ==============".format(acc))
'''


def test_zoo_lenet_script_trains_checkpoints_and_evaluates_unchanged(tmp_path, ascendemu_kernel_cache):
    """Five steps of LeNet-5 on 20 MNIST images (IDX files), checkpoints every 2 steps keeping 2, then
    the final checkpoint evaluated on 8 test images: the printed accuracy is numpy's, computed from
    that checkpoint's weights on the same preprocessed images."""
    rng = np.random.default_rng(0)
    write_idx(tmp_path / "MNIST_Data" / "train", "train", rng.integers(0, 256, (20, 28, 28)), rng.integers(0, 10, 20))
    test_images, test_labels = rng.integers(0, 256, (8, 28, 28)), rng.integers(0, 10, 8)
    write_idx(tmp_path / "MNIST_Data" / "test", "t10k", test_images, test_labels)
    (tmp_path / "train.py").write_text(LENET_SCRIPT)
    proc = run_cli(tmp_path, "train.py", MS_COMPILER_CACHE_PATH=str(ascendemu_kernel_cache))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout.splitlines()
    assert [re.sub(r"loss is \S+", "loss is L", line) for line in out if line.startswith("epoch:")] == [
        f"epoch: 1 step: {s}, loss is L" for s in range(1, 6)]
    assert any(re.fullmatch(r"Train epoch time: \d+\.\d{3} ms, per step time: \d+\.\d{3} ms", line) for line in out)
    assert sorted(os.listdir(tmp_path / "ckpt")) == ["checkpoint_lenet-1_4.ckpt", "checkpoint_lenet-1_5.ckpt"]
    params = {k: p.asnumpy().astype(np.float64)
              for k, p in load_checkpoint(str(tmp_path / "ckpt" / "checkpoint_lenet-1_5.ckpt")).items()}
    images = ds.MnistDataset(str(tmp_path / "MNIST_Data" / "test"), shuffle=False).map(
        [V.Resize((32, 32), interpolation=V.Inter.LINEAR), V.Rescale(1.0 / 255.0, 0.0),
         V.Rescale(1 / 0.3081, -1 * 0.1307 / 0.3081), V.HWC2CHW()], input_columns="image").map(
        T.TypeCast(ms.int32), input_columns="label")
    x, labels = map(np.stack, zip(*images.create_tuple_iterator(output_numpy=True)))
    accuracy = np.mean(ref.lenet5(params, x.astype(np.float64)).argmax(1) == labels)
    assert f"============== {{'Accuracy': {accuracy.item()!r}}} ==============" in out
