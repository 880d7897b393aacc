"""DryRun one training step of Llama-2-7B (MindFormers' pretrain_llama2_7b.yaml model: 32 layers, hidden
4096, 32 heads, seq 4096, vocab 32000, float16 weights and compute, flash attention) on one device:

    ascendemu run --dry-run examples/llama/dryrun_7b.py [--num_layers 4] [--seq_length 4096]
    RANK_SIZE=8 RANK_ID=r ascendemu run --dry-run examples/llama/dryrun_7b.py --dp 8 --mp 1
    ascendemu msrun --sim_level 1 --worker_num 8 examples/llama/dryrun_7b.py --dp 1 --mp 8
    # Llama-2-70B's shape (pretrain_llama2_70b.yaml's model) on one rank of 1024
    RANK_SIZE=1024 RANK_ID=r ascendemu run --dry-run examples/llama/dryrun_7b.py --num_layers 80 \
        --hidden_size 8192 --num_heads 64 --n_kv_heads 8 --intermediate_size 28672 --dp 128 --mp 8
    RANK_SIZE=8 RANK_ID=r ascendemu run --dry-run examples/llama/dryrun_7b.py --dp 2 --mp 2 --pp 2 \
        --micro_batch_num 4 --train_cell plain
    # issue 24's configurations combined (all of them: bench/bench_dryrun_scale.py --configs)
    RANK_SIZE=1024 RANK_ID=r ascendemu run --dry-run examples/llama/dryrun_7b.py --num_layers 80 \
        --hidden_size 8192 --num_heads 64 --n_kv_heads 8 --intermediate_size 28672 --dp 16 --mp 8 --pp 8 \
        --micro_batch_num 16 --optimizer_shard --recompute full

On more than one rank the step runs under SEMI_AUTO_PARALLEL with MindFormers' parallel_config (dp x mp =
RANK_SIZE, full_batch, the global batch batch_size * dp as MindFormers' yaml makes it); with --pp, dp x mp x pp,
MindFormers' pipeline stages and micro-batches (global batch batch_size * dp * micro_batch_num).

The step is MindFormers' training cell: AdamWeightDecay under a dynamic loss scale (``--train_cell
loss_scale``), or TrainOneStepCell with the same optimizer and the loss scale as a static sens (``--train_cell
plain``: the one real MindSpore's DryRun runs, at ``--jit_level O0``). The run's DryRun lines
(used and actual peak memory) and its summary (simulated step time) come from ascendemu run; this script
prints its own host time and peak RSS. At 32 layers one 910A (32 GiB) cannot hold the weights, gradients
and optimizer states without sharding: the DryRun then reports the whole peak and by how much it exceeds
the HBM (on hardware the step would run out of memory).
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
from mindspore.communication import init  # noqa: E402
from mindspore.nn.wrap.cell_wrapper import _TrainGradAccuStepCell, _VirtualDatasetCell  # noqa: E402

from llama import LlamaForCausalLM  # noqa: E402
from llama_config import TransformerOpParallelConfig, TransformerRecomputeConfig, llama2_7b  # noqa: E402

# MindFormers' initial loss scale (its yaml's runner_wrapper scale_sense: loss_scale_value 65536)
LOSS_SCALE = 2.0 ** 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num_layers", type=int, default=32)
    parser.add_argument("--seq_length", type=int, default=4096)
    parser.add_argument("--hidden_size", type=int, default=4096)
    parser.add_argument("--num_heads", type=int, default=32)
    parser.add_argument("--n_kv_heads", type=int, default=None, help="grouped-query attention's key/value heads")
    parser.add_argument("--intermediate_size", type=int, default=None, help="the FFN's width (default: Llama's rule)")
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--use_attn_mask_compression", action="store_true")
    parser.add_argument("--dp", type=int, default=1, help="parallel_config.data_parallel")
    parser.add_argument("--mp", type=int, default=1, help="parallel_config.model_parallel")
    parser.add_argument("--vocab_emb_dp", type=int, default=1, help="MindFormers' vocab_emb_dp (1: yes)")
    parser.add_argument("--pp", type=int, default=1, help="parallel_config.pipeline_stage (pipeline stages)")
    parser.add_argument("--micro_batch_num", type=int, default=1, help="parallel_config.micro_batch_num (pp > 1)")
    parser.add_argument("--optimizer_shard", action="store_true",
                        help="optimizer parallel as MindFormers' yaml sets it: parallel.enable_parallel_optimizer with "
                             "parallel_optimizer_config {gradient_accumulation_shard: False, threshold 64 KB}")
    parser.add_argument("--jit_level", default="O2", help="O0 for real MindSpore's DryRun (level 1)")
    parser.add_argument("--no_flash_attention", action="store_true",
                        help="compose the attention (BatchMatMul, Softmax) instead of FlashAttentionScore")
    parser.add_argument("--train_cell", choices=("loss_scale", "plain"), default="loss_scale",
                        help="loss_scale: TrainOneStepWithLossScaleCell (MindFormers'); plain: TrainOneStepCell "
                             "with the static loss scale folded into sens (real MindSpore's DryRun runs at jit O0, "
                             "kernel by kernel, and refuses the loss-scale cell's tensor `if`)")
    parser.add_argument("--recompute", choices=("none", "full", "select"), default="none",
                        help="MindFormers' recompute_config: full (recompute=True: each decoder layer) or select "
                             "(select_recompute=True: the FFN's SwiGLU)")
    args = parser.parse_args()
    start = time.perf_counter()
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": args.jit_level})
    parallel = None
    recompute = TransformerRecomputeConfig(recompute=args.recompute == "full",
                                           select_recompute=args.recompute == "select")
    ranks = args.dp * args.mp * args.pp
    if ranks > 1:
        init()
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL, device_num=ranks,
                                     full_batch=True, pipeline_stages=args.pp)
        if args.optimizer_shard:
            ms.set_auto_parallel_context(enable_parallel_optimizer=True, parallel_optimizer_config={
                "gradient_accumulation_shard": False, "parallel_optimizer_threshold": 64})
    if ranks > 1 or args.recompute != "none":
        parallel = TransformerOpParallelConfig(args.dp, args.mp, vocab_emb_dp=bool(args.vocab_emb_dp),
                                               recompute=recompute, optimizer_shard=args.optimizer_shard,
                                               pipeline_stage=args.pp, micro_batch_num=args.micro_batch_num)
    micro = args.micro_batch_num if args.pp > 1 else 1
    batch = args.batch_size * args.dp * micro          # MindFormers' global batch
    config = llama2_7b(num_layers=args.num_layers, seq_length=args.seq_length, batch_size=batch,
                       hidden_size=args.hidden_size, num_heads=args.num_heads, n_kv_heads=args.n_kv_heads,
                       intermediate_size=args.intermediate_size,
                       use_attn_mask_compression=args.use_attn_mask_compression,
                       use_flash_attention=not args.no_flash_attention, parallel_config=parallel)
    net = LlamaForCausalLM(config)
    params = sum(int(np.prod(p.shape)) for p in net.trainable_params())
    optimizer = nn.AdamWeightDecay(net.trainable_params(), learning_rate=1e-5, weight_decay=0.1)
    train_net = net
    if args.pp > 1:              # as MindFormers wraps a pipeline: micro-batches, then the dataset marker
        train_net = _VirtualDatasetCell(nn.PipelineCell(net, args.micro_batch_num))
    if args.train_cell == "plain":
        cell = _TrainGradAccuStepCell if args.pp > 1 else nn.TrainOneStepCell
        step = cell(train_net, optimizer, sens=LOSS_SCALE)
    else:
        step = nn.TrainOneStepWithLossScaleCell(train_net, optimizer,
                                                scale_sense=nn.DynamicLossScaleUpdateCell(LOSS_SCALE, 2, 1000))
    # Model.train's training cell is set to training (amp.build_train_network: `.set_train()`), as MindFormers'
    # Trainer's is; without the flag MindSpore 2.10 compiles the cell with its training flag off (an inference
    # graph: under pipeline stages it keeps every stage's Parameters on every rank)
    step.set_train()
    input_ids = Tensor(np.ones((batch, args.seq_length + 1), np.int32))
    print(f"Llama-2-7B shape: {args.num_layers} layers, {params / 1e9:.2f} B parameters, seq {args.seq_length}, "
          f"global batch {batch}, dp {args.dp} x mp {args.mp} x pp {args.pp} ({micro} micro-batches), "
          f"recompute {args.recompute}, "
          f"optimizer shard {args.optimizer_shard}")
    try:
        step(input_ids)
        outcome = "step done"
    except Exception as error:        # the DryRun's verdict: it does not fit
        outcome = f"step failed: {type(error).__name__}: {error}"
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{outcome}\nhost time {time.perf_counter() - start:.1f} s, host peak RSS {rss_mib:.0f} MiB")


if __name__ == "__main__":
    main()
