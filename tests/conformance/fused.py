"""Fused transformer/LLM ops, RNN primitives and the mask dropouts (breadth round 2). MindSpore 2.10 CPU
runs only FastGeLU/fast_gelu/FastGelu/Gelu and Dropout2D/3D (at keep_prob 1 and 0, where the output is
fixed); the others are Ascend-only kernels ("unregistered" on CPU), so their samples are the argument
checks MindSpore makes before choosing a kernel (types, ranges, layouts, head counts, operand counts;
ReshapeAndCache has no backend kernel at all in MindSpore, only its Python signature).
Their numbers are checked against numpy in tests/test_rnn_fused_breadth.py."""
from __future__ import annotations

from .core import Py, T, op

F = ("float32", "float16")
H = dict(dtype="float16")
I32 = dict(dtype="int32")


def _f(name: str):
    if name[0].isupper():
        return lambda ms, *xs, **kw: getattr(ms.ops, name)(**kw)(*xs)
    return lambda ms, *xs, **kw: getattr(ms.ops, name)(*xs, **kw)


def _bnsd(name: str, heads_kw: str):
    """An attention function on BNSD inputs with ``heads`` heads passed as ``heads_kw``."""
    def run(ms, q, k, v, heads=2, **kw):
        return getattr(ms.ops, name)(q, k, v, **{heads_kw: heads}, **kw)
    return run


def _incre(ms, q, k, v, **kw):
    return ms.ops.incre_flash_attention(q, [k], [v], **kw)


def _lstm(ms, x, h, c, w, input_size=4, has_bias=True, proj_size=0):
    """ops.LSTM's output, h_n and c_n (its reserve and state are MindSpore's kernel workspace)."""
    return ms.ops.LSTM(input_size, 5, 1, has_bias, False, 0.0, proj_size)(x, h, c, w)[:3]


QKV = [T((1, 2, 3, 16), **H), T((1, 2, 3, 16), **H), T((1, 2, 3, 16), **H)]
LSTM_IN = [T((3, 2, 4), **H), T((9, 20), **H), T((20,), **H), T((1, 2, 5), **H), T((1, 2, 5), **H)]
GRU_IN = [T((3, 2, 4), **H), T((4, 15), **H), T((5, 15), **H), T((15,), **H), T((15,), **H)]

SPECS = [
    # CPU kernels: values (and FastGeLU's gradient)
    op("mindspore.ops.FastGeLU", _f("FastGeLU"), shapes=[(2, 5), (3,)], dtypes=F, errors=[(T((2, 3), **I32), {})]),
    op("mindspore.ops.fast_gelu", _f("fast_gelu"), shapes=[(2, 5)], dtypes=F),
    op("mindspore.ops.FastGelu", _f("FastGelu"), shapes=[(2, 5)], dtypes=F),
    op("mindspore.ops.Gelu", _f("Gelu"), shapes=[(2, 5)], dtypes=F),
    op("mindspore.ops.Dropout2D", _f("Dropout2D"), shapes=[(2, 3, 2, 2)],
       kwargs=[{"keep_prob": 1.0}, {"keep_prob": 0.0}], grad=False, errors=[((2, 3, 2), {"keep_prob": 1.0}), ((2, 3, 2, 2), {"keep_prob": 1}),
                           ((2, 3, 2, 2), {"keep_prob": 1.5})]),
    op("mindspore.ops.LSTM", _lstm, shapes=[[(3, 2, 4), (1, 2, 5), (1, 2, 5), T((200, 1, 1), low=-0.5, high=0.5)]],
       kwargs=[{}], errors=[([(3, 2, 4), (1, 2, 5), (1, 2, 5), (200, 1, 1)], {"input_size": 0}),
                            ([(3, 2, 4), (1, 2, 5), (1, 2, 5), (200, 1, 1)], {"has_bias": 1}),
                            ([(3, 2, 4), (1, 2, 5), (1, 2, 5), (200, 1, 1)], {"proj_size": 5})]),
    op("mindspore.ops.LSTM", _lstm, shapes=[[(3, 2, 4), (1, 2, 5), (1, 2, 5), T((180, 1, 1), low=-0.5, high=0.5)]],
       kwargs=[{"has_bias": False}]),
    op("mindspore.ops.Dropout3D", _f("Dropout3D"), shapes=[(2, 3, 2, 2, 2)], kwargs=[{"keep_prob": 1.0}], grad=False,
       errors=[((2, 3, 2, 2), {"keep_prob": 1.0})]),
    # Ascend-only kernels: MindSpore's argument checks
    op("mindspore.ops.RmsNorm", _f("RmsNorm"), errors=[([(2, 3), (3,)], {"epsilon": "a"}), ([(2, 3)], {})]),
    op("mindspore.ops.rms_norm", _f("rms_norm"), errors=[([(2, 3), (3,), Py("a")], {}), ([(2, 3)], {})]),
    op("mindspore.ops.add_rms_norm", _f("add_rms_norm"), errors=[([(2, 3), (2, 3)], {})]),
    op("mindspore.ops.swiglu", _f("swiglu"), errors=[([(2, 4), Py("a")], {})]),
    op("mindspore.ops.rotary_position_embedding", _f("rotary_position_embedding"),
       errors=[([(1, 2, 2, 4), (1, 2, 1, 4), (1, 2, 1, 4), Py("a")], {})]),
    op("mindspore.ops.flash_attention_score", _bnsd("flash_attention_score", "head_num"),
       errors=[(QKV, {"heads": 3, "input_layout": "BNSD"}), (QKV, {"input_layout": "XYZ"})]),
    op("mindspore.ops.prompt_flash_attention", _bnsd("prompt_flash_attention", "num_heads"),
       errors=[(QKV, {"heads": 3, "input_layout": "BNSD"}), (QKV, {"input_layout": "XYZ"}),
               ([(1, 2, 3, 16), (1, 2, 3, 16), (1, 2, 3, 16)], {"input_layout": "BNSD"})]),
    op("mindspore.ops.incre_flash_attention", _incre,
       errors=[([T((1, 2, 1, 16), **H), T((1, 2, 3, 16), **H), T((1, 2, 3, 16), **H)],
                {"num_heads": 2, "input_layout": "XYZ"}),
               ([T((1, 2, 1, 16), **H), T((1, 2, 3, 16), **H), T((1, 2, 3, 16), **H)],
                {"num_heads": 2, "input_layout": "BNSD", "scale_value": "a"})]),
    op("mindspore.ops.fused_infer_attention_score", _bnsd("fused_infer_attention_score", "num_heads"),
       errors=[(QKV, {"input_layout": "XYZ"})]),
    op("mindspore.ops.moe_token_permute", _f("moe_token_permute"),
       errors=[([(4,), T((4,), **I32)], {}), ([(4, 3), T((4, 2), **I32)], {"padded_mode": True}),
               ([(4, 3), T((4, 2), **I32)], {"num_out_tokens": "a"})]),
    op("mindspore.ops.moe_token_unpermute", _f("moe_token_unpermute"), errors=[([(4, 3)], {})]),
    op("mindspore.ops.DynamicRNN", lambda ms, x, w, b, h, c, **kw: ms.ops.DynamicRNN(**kw)(x, w, b, None, h, c),
       errors=[([(3, 2, 4)] + LSTM_IN[1:], {}), (LSTM_IN, {"forget_bias": 1}), (LSTM_IN, {"cell_type": "GRU"}),
               (LSTM_IN, {"time_major": False})]),
    op("mindspore.ops.DynamicGRUV2",
       lambda ms, x, wi, wh, bi, bh, **kw: ms.ops.DynamicGRUV2(**kw)(x, wi, wh, bi, bh, None,
                                                                      ms.ops.zeros((2, 5), ms.float16)),
       errors=[(GRU_IN, {"gate_order": "hzr"}), (GRU_IN, {"keep_prob": 1}), (GRU_IN, {"direction": "BIDIRECTIONAL"})]),
    op("mindspore.ops.BasicLSTMCell", _f("BasicLSTMCell"),
       errors=[([(2, 4), (2, 5), (2, 5), (9, 20), (20,)], {"activation": "relu"}),
               ([(2, 4), (2, 5), (2, 5), (9, 20), (20,)], {"keep_prob": 2.0}),
               ([(2, 4), (2, 5), (2, 5), (9, 20), (20,)], {"forget_bias": 1})]),
    op("mindspore.ops.DropoutGenMask", lambda ms, **kw: ms.ops.DropoutGenMask(**kw)((2, 3), ms.Tensor(0.5, ms.float32)),
       errors=[([], {"Seed0": 1.5})]),
    op("mindspore.ops.DropoutDoMask", _f("DropoutDoMask"), errors=[([(2, 3)], {})]),
    op("mindspore.ops.ReshapeAndCache", _f("ReshapeAndCache"), errors=[([], {})]),
]
