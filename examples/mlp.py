"""A 784-256-128-10 ReLU MLP on the emulated Ascend 910A, checked against numpy.

    ascendemu run examples/mlp.py [--steps 5] [--batch 32]
"""
import sys

from harness import parse_args, run_checked
from networks import MLP
from reference import mlp

if __name__ == "__main__":
    args = parse_args(__doc__.splitlines()[0], steps=5, batch=32)
    if run_checked("MLP", MLP(), (args.batch, 784), args.steps, mlp):
        sys.exit(1)
