"""AdamWeightDecay on a float16 Parameter: the update runs as Ascend's backend expands MindSpore 2.10's
AdamWeightDecay (param, m, v and the gradient cast to float32, AdamApplyOneWithDecay in float32 with float32
betas, each result cast back: the kernels of its DryRun's memory_block.csv), for its memory (docs/ARCHITECTURE.md,
DryRun memory). Oracle: that formula in numpy, float32, rounded once to float16. (MindSpore's CPU backend runs its
fused AdamWeightDecay kernel in float16 with float16 betas instead: not the Ascend numerics.)"""
from __future__ import annotations

import numpy as np

import ascendemu.frontend as ms
from ascendemu.frontend import Parameter, Tensor, nn, ops

LR, WD, EPS, B1, B2 = 0.05, 0.1, 1e-6, 0.9, 0.999


class _Linear(nn.Cell):
    """loss = sum(w * c): the gradient of w is c exactly, in float16."""

    def __init__(self, w0: np.ndarray, c: np.ndarray):
        super().__init__()
        self.w = Parameter(Tensor(w0), name="w")
        self.c = Tensor(c)

    def construct(self):
        return ops.reduce_sum(self.w * self.c)


def test_adamw_float16_steps_are_the_float32_update_rounded_once(ex, restore_context):
    """On the module's emulated device (conftest's ``ex``: the session's kernel cache, never ./rank_0)."""
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
    rng = np.random.default_rng(7)
    w0 = rng.standard_normal((3, 4)).astype(np.float16)
    c = rng.standard_normal((3, 4)).astype(np.float16)
    net = _Linear(w0, c)
    opt = nn.AdamWeightDecay(net.trainable_params(), learning_rate=LR, weight_decay=WD, eps=EPS)
    step = nn.TrainOneStepCell(net, opt)
    w, m, v = w0, np.zeros_like(w0), np.zeros_like(w0)
    f32 = np.float32
    for _ in range(3):
        step()
        g = c.astype(f32)
        m32 = f32(B1) * m.astype(f32) + (f32(1.0) - f32(B1)) * g
        v32 = f32(B2) * v.astype(f32) + (f32(1.0) - f32(B2)) * g * g
        update = m32 / (f32(EPS) + np.sqrt(v32)) + f32(WD) * w.astype(f32)
        w, m, v = (w.astype(f32) - f32(LR) * update).astype(np.float16), m32.astype(np.float16), \
            v32.astype(np.float16)
        assert net.w.dtype == ms.float16
        np.testing.assert_allclose(net.w.asnumpy(), w, rtol=2 ** -10, atol=0)
        np.testing.assert_allclose(opt.moments1[0].asnumpy(), m, rtol=2 ** -10, atol=0)
        np.testing.assert_allclose(opt.moments2[0].asnumpy(), v, rtol=2 ** -10, atol=0)
