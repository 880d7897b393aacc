"""LeNet-5 (the MindSpore model zoo's) on the emulated Ascend 910A, checked against numpy.

    ascendemu run examples/lenet.py [--steps 5] [--batch 32]

The first run builds the network's kernels into ./rank_0/kernel_meta (or
$MS_COMPILER_CACHE_PATH/rank_$RANK_ID/kernel_meta); the next runs reuse them.
"""
import sys

from harness import parse_args, run_checked
from networks import LeNet5
from reference import lenet5

if __name__ == "__main__":
    args = parse_args(__doc__.splitlines()[0], steps=5, batch=32)
    if run_checked("LeNet-5", LeNet5(), (args.batch, 1, 32, 32), args.steps, lenet5):
        sys.exit(1)
