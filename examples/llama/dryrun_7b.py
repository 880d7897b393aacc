"""DryRun one training step of Llama-2-7B (MindFormers' pretrain_llama2_7b.yaml model: 32 layers, hidden
4096, 32 heads, seq 4096, vocab 32000, float16 weights and compute, flash attention) on one device:

    ascendemu run --dry-run examples/llama/dryrun_7b.py [--num_layers 4] [--seq_length 4096]

The step is MindFormers' training cell: AdamWeightDecay under a dynamic loss scale. The run's DryRun lines
(used and actual peak memory) and its summary (simulated step time) come from ascendemu run; this script
prints its own host time and peak RSS. At 32 layers one 910A (32 GiB) cannot hold the weights, gradients
and optimizer states without sharding: the step then fails with the device's out-of-memory error, printed.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import mindspore as ms  # noqa: E402
from mindspore import Tensor, nn  # noqa: E402

from llama import LlamaForCausalLM  # noqa: E402
from llama_config import llama2_7b  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num_layers", type=int, default=32)
    parser.add_argument("--seq_length", type=int, default=4096)
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--use_attn_mask_compression", action="store_true")
    parser.add_argument("--no_flash_attention", action="store_true",
                        help="compose the attention (BatchMatMul, Softmax) instead of FlashAttentionScore")
    args = parser.parse_args()
    start = time.perf_counter()
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O2"})
    config = llama2_7b(num_layers=args.num_layers, seq_length=args.seq_length, batch_size=args.batch_size,
                       use_attn_mask_compression=args.use_attn_mask_compression,
                       use_flash_attention=not args.no_flash_attention)
    net = LlamaForCausalLM(config)
    params = sum(int(np.prod(p.shape)) for p in net.trainable_params())
    optimizer = nn.AdamWeightDecay(net.trainable_params(), learning_rate=1e-5, weight_decay=0.1)
    step = nn.TrainOneStepWithLossScaleCell(net, optimizer,
                                            scale_sense=nn.DynamicLossScaleUpdateCell(2.0 ** 16, 2, 1000))
    input_ids = Tensor(np.ones((args.batch_size, args.seq_length + 1), np.int32))
    print(f"Llama-2-7B shape: {args.num_layers} layers, {params / 1e9:.2f} B parameters, seq {args.seq_length}, "
          f"batch {args.batch_size}")
    try:
        step(input_ids)
        outcome = "step done"
    except Exception as error:        # the DryRun's verdict: it does not fit
        outcome = f"step failed: {type(error).__name__}: {error}"
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{outcome}\nhost time {time.perf_counter() - start:.1f} s, host peak RSS {rss_mib:.0f} MiB")


if __name__ == "__main__":
    main()
