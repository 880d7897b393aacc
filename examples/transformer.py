"""A Transformer encoder layer (4-head self-attention, GeLU feed-forward, post-LayerNorm) on the
emulated Ascend 910A, checked against numpy.

    ascendemu run examples/transformer.py [--steps 5] [--batch 4] [--seq 16]
"""
import argparse
import sys

from harness import run_checked
from networks import TransformerEncoderLayer
from reference import transformer_encoder_layer

D_MODEL, NHEAD, DIM_FEEDFORWARD = 64, 4, 256

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5, help="forward steps to run (default 5)")
    parser.add_argument("--batch", type=int, default=4, help="batch size (default 4)")
    parser.add_argument("--seq", type=int, default=16, help="sequence length (default 16)")
    args = parser.parse_args()
    net = TransformerEncoderLayer(D_MODEL, NHEAD, DIM_FEEDFORWARD)
    if run_checked("Transformer encoder layer", net, (args.batch, args.seq, D_MODEL), args.steps,
                   lambda params, x: transformer_encoder_layer(params, x, NHEAD)):
        sys.exit(1)
