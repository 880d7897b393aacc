"""LeNet-5 exported with ``mindspore.export`` to ONNX and run by onnxruntime (``pip install
onnxruntime``). Exporting captures the network in eval mode and builds no kernel; tests/
test_export_onnx.py checks such files against the emulated device and numpy.

    ascendemu run examples/export_onnx.py

Writes ./lenet.onnx (read-only, as MindSpore leaves it).
"""
import numpy as np
import onnxruntime as ort

import mindspore as ms
from mindspore import Tensor
from networks import LeNet5

if __name__ == "__main__":
    ms.set_seed(1)
    net = LeNet5()
    x = np.random.default_rng(0).standard_normal((2, 1, 32, 32)).astype(np.float32)
    ms.export(net, Tensor(x), file_name="lenet", file_format="ONNX")

    session = ort.InferenceSession("lenet.onnx", providers=["CPUExecutionProvider"])
    (inp,), (out,) = session.get_inputs(), session.get_outputs()
    print(f"lenet.onnx: input {inp.name} {inp.shape} {inp.type}, output {out.name} {out.shape} {out.type}")
    logits = session.run(None, {inp.name: x})[0]
    print("onnxruntime classes:", logits.argmax(axis=1).tolist())
