"""Record real MindSpore's gradients through `while` loops on a tensor condition (GRAPH_MODE, CPU) into
tests/fixtures/while_grad.npz, for tests/test_control_flow_while_grad.py.

Run once with an installed MindSpore 2.10 (never a dependency of ascendemu):
    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_while_grad.py /work/main/tests/fixtures/while_grad.npz
The fixture holds the inputs and, per case, MindSpore's loss and gradients of (x, h, w);
``train_losses``: a 3-step TrainOneStepCell run over a loop.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fixtures"))
import while_grad_nets  # noqa: E402

from while_grad_nets import B, H, T  # noqa: E402

RNN, Nested, Tagger = while_grad_nets.networks(ms)


def train_losses(steps: int = 3) -> np.ndarray:
    """A TrainOneStepCell (Momentum) over the loop, trip count k + 2 at step k: each step's loss."""
    net = Tagger()
    step = nn.TrainOneStepCell(net, nn.Momentum(net.trainable_params(), learning_rate=0.5, momentum=0.9))
    h, target = np.ones((B, H), np.float32), np.full((B, H), 0.3, np.float32)
    return np.array([step(Tensor(h), Tensor(np.array(k + 2, np.int32)), Tensor(target)).asnumpy()
                     for k in range(steps)])


def main(out: str) -> None:
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((H, H)) * 0.5).astype(np.float32)
    x = rng.standard_normal((T, B, H)).astype(np.float32)
    h = rng.standard_normal((B, H)).astype(np.float32)
    record = {"w": w, "x": x, "h": h}
    cases = {"rnn_n3": (RNN, (3,)), "rnn_n0": (RNN, (0,)), "nested_n3_m2": (Nested, (3, 2))}
    for name, (cls, counts) in cases.items():
        net = cls(w)
        fn = ms.value_and_grad(net, grad_position=(0, 1), weights=net.trainable_params())
        args = [Tensor(x), Tensor(h)] + [Tensor(np.array(c, np.int32)) for c in counts]
        loss, ((dx, dh), (dw,)) = fn(*args)
        record.update({f"{name}_loss": loss.asnumpy(), f"{name}_dx": dx.asnumpy(), f"{name}_dh": dh.asnumpy(),
                       f"{name}_dw": dw.asnumpy()})
    record["train_losses"] = train_losses()
    np.savez(out, **record)
    print("wrote", out, sorted(record))


if __name__ == "__main__":
    main(sys.argv[1])
