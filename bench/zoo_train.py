"""A first run of a small training script of three more kinds: a Transformer encoder layer, an LSTM and a
GRAPH_MODE MLP under automatic mixed precision O2. MindSpore API only, no device target set, so the same
file runs on real MindSpore (its CPU back end) and under ``ascendemu run`` (the emulated Ascend 910A);
bench/bench_speed.py times both as whole processes (its first-run table over nine scripts).

    python bench/zoo_train.py transformer|lstm|amp_mlp [--steps 3]

Each builds its network with ``ms.set_seed(1)``, trains ``--steps`` steps of ``nn.TrainOneStepCell``
(``amp.build_train_network(level="O2")`` for amp_mlp) on fixed random data and prints each step's loss,
as a user's first training script does.
"""
import argparse
import time

import numpy as np

BATCH = 16                      # small: the first run's cost is start-up and building, not the steps
SEQ, D_MODEL, HEADS, FFN = 16, 64, 4, 128
HIDDEN, FEATURES, CLASSES = 64, 32, 10


def transformer(ms, nn, rng):
    """One encoder layer (MultiheadAttention + feed-forward, post-norm) and a mean-pooled classifier."""
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, batch_first=True)
            self.head = nn.Dense(D_MODEL, CLASSES)

        def construct(self, x):
            return self.head(self.layer(x).mean(axis=1))

    x = rng.standard_normal((BATCH, SEQ, D_MODEL)).astype(np.float32)
    return Net(), x


def lstm(ms, nn, rng):
    """A one-layer LSTM over a sequence, its last hidden state classified."""
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(FEATURES, HIDDEN, num_layers=1, batch_first=True)
            self.head = nn.Dense(HIDDEN, CLASSES)

        def construct(self, x):
            _, (h, _) = self.rnn(x)
            return self.head(h[0])

    x = rng.standard_normal((BATCH, SEQ, FEATURES)).astype(np.float32)
    return Net(), x


def amp_mlp(ms, nn, rng):
    """A three-layer MLP (the quick start's shape, smaller)."""
    net = nn.SequentialCell(nn.Dense(FEATURES * 4, 256), nn.ReLU(), nn.Dense(256, 256), nn.ReLU(),
                            nn.Dense(256, CLASSES))
    x = rng.standard_normal((BATCH, FEATURES * 4)).astype(np.float32)
    return net, x


NETS = {"transformer": transformer, "lstm": lstm, "amp_mlp": amp_mlp}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("net", choices=tuple(NETS))
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    start = time.perf_counter()
    import mindspore as ms
    from mindspore import nn
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(1)
    rng = np.random.default_rng(0)
    net, x = NETS[args.net](ms, nn, rng)
    labels = ms.Tensor(rng.integers(0, CLASSES, BATCH).astype(np.int32))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    if args.net == "amp_mlp":
        step = ms.amp.build_train_network(net, opt, loss_fn, level="O2", loss_scale_manager=None)
    else:
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    step.set_train()
    for i in range(1, args.steps + 1):
        loss = step(ms.Tensor(x), labels)
        print(f"step {i}: loss {float(loss.asnumpy()):.6f}")
    print(f"script wall {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
