"""Record tests/fixtures/summary/mindspore_2_10.summary with real MindSpore 2.10 (CPU), once:

    cd /tmp && /work/msvenv/bin/python /work/main/tools/record_summary.py

The values are tests/test_summary.py's SAMPLE (kept in step with it by hand): one event of a scalar, a
tensor, a histogram and an image at step 3 from the summary primitives, one of add_value's scalar at step 4.
"""
import glob
import os
import shutil
import tempfile

import numpy as np
import mindspore as ms
from mindspore import Tensor, ops
from mindspore.train import SummaryRecord

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "summary", "mindspore_2_10.summary")

with tempfile.TemporaryDirectory() as d:
    with SummaryRecord(d) as rec:
        ops.ScalarSummary()("loss", Tensor(np.float32(1.5)))
        ops.TensorSummary()("t", Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)))
        ops.HistogramSummary()("h", Tensor(np.array([0., 1., 2., 3.], np.float32)))
        ops.ImageSummary()("img", Tensor(np.random.RandomState(0).rand(1, 3, 4, 5).astype(np.float32)))
        rec.record(3)
        rec.add_value("scalar", "lr", Tensor(np.float32(0.25)))
        rec.record(4)
    shutil.copy(glob.glob(os.path.join(d, "events*"))[0], OUT)
print("wrote", OUT, ms.__version__)
