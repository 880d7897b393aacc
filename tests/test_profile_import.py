"""Real Ascend profiles on the emulated device (``ascendemu profile replay|fidelity``): MindSpore's
kernel_details.csv and msprof's op_summary csv read by column name, replayed with their recorded
durations (per-stream times checked against sums of the fixture's durations by hand), and compared
with the cost model. The round trip is the oracle for fidelity: a Level1 profile of our own run
carries the durations the cost model gave, so re-pricing each kernel from its row alone (op type and
shapes, attributes recovered from the recorded outputs) must give them back."""
from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest

import ascendemu.frontend as ms
from ascendemu.cli.main import main
from ascendemu.cli.pytest_plugin import emulated_device
from ascendemu.device.spec import get_spec
from ascendemu.errors import InvalidFileError
from ascendemu.frontend import Tensor, nn, ops
from ascendemu.frontend.profiler import Profiler, ProfilerLevel
from ascendemu.replay.ascend_profile import read_profile, replay
from ascendemu.replay.fidelity import fidelity

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"
KERNEL_DETAILS = FIXTURES / "kernel_details.csv"
OP_SUMMARY = FIXTURES / "op_summary_0_1_1.csv"
# MindSpore 2.10's kernel_details.csv header at Level1 (OpSummaryHeaders renamed, Device_id dropped)
LEVEL1_HEADER = ["Step ID", "Model Name", "Model ID", "Task ID", "Stream ID", "Name", "Type", "Accelerator Core",
                 "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Num", "Mix Block Num", "HF32 Eligible",
                 "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types",
                 "Output Formats", "Context ID"]
KERNEL_META = "Kernel Meta Name"     # ours, last: the kernel_meta entry that ran (MindSpore's columns come first)


class Net(nn.Cell):
    """Kernels whose attributes show only in their output shapes (a strided 'same' convolution, a
    pooling window, Dense's transposed MatMul, a reduction over one axis), large enough that their
    durations are not just the fixed per-task costs."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, pad_mode="same")
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(8 * 16 * 16, 10)
        self.softmax = nn.Softmax()
        self.sum = ops.ReduceSum()

    def construct(self, x):
        return self.sum(self.softmax(self.fc(self.flatten(self.pool(self.relu(self.conv(x)))))), 0)


def test_a_level1_profile_of_our_run_reads_back_and_reprices_to_its_own_durations(ascendemu_kernel_cache, tmp_path):
    with emulated_device(ascendemu_kernel_cache, dry_run=True):          # DryRun: planned and priced, not built
        ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"})
        net, x = Net(), Tensor(np.ones((8, 3, 64, 64), np.float32))
        net(x)
        profiler = Profiler(output_path=str(tmp_path / "prof"), profiler_level=ProfilerLevel.Level1)
        net(x)
        net(x)
        out = profiler.analyse()
    with open(out / "kernel_details.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == LEVEL1_HEADER + [KERNEL_META]
    conv = next(r for r in rows if r["Type"] == "Conv2D")
    assert (conv["Input Shapes"], conv["Input Data Types"], conv["Input Formats"]) == ("8,3,64,64;8,3,3,3",
                                                                                      "FLOAT;FLOAT", "ND;ND")
    assert (conv["Output Shapes"], conv["Output Data Types"]) == ("8,8,32,32", "FLOAT")

    profile = read_profile(tmp_path / "prof")                      # a directory: its kernel_details.csv
    assert profile.path == out / "kernel_details.csv" and len(profile.tasks) == len(rows)
    kernels = fidelity(profile, get_spec())
    assert {k.type for k in kernels} == {"Conv2D", "ReLU", "MaxPool", "MatMul", "BiasAdd", "Softmax", "ReduceSum"}
    assert all(k.reason is None and len(k.recorded_us) == 2 for k in kernels)
    for k in kernels:                                              # durations are written to 3 decimals
        assert abs(k.model_us - k.mean_us) <= 5e-4 + 1e-9, (k.type, k.model_us, k.mean_us)
    sig = {k.type: k.plan.sig for k in kernels}
    assert (sig["Conv2D"].attr("stride"), sig["Conv2D"].attr("pad_mode")) == (2, "same")
    assert sig["MatMul"].attr("transpose_b") is True
    assert (sig["MaxPool"].attr("kernel_size"), sig["MaxPool"].attr("strides")) == (2, 2)
    assert sig["ReduceSum"].attr("axis") == (0,)

    (stream,) = replay(profile, get_spec())
    assert stream.tasks == len(rows)
    assert stream.replayed_us == pytest.approx(sum(float(r["Duration(us)"]) for r in rows), abs=1e-6)


def test_profiler_level_outside_mindsporess_levels_warns_and_writes_level0(ascendemu_kernel_cache, tmp_path, capsys):
    with emulated_device(ascendemu_kernel_cache, dry_run=True):
        profiler = Profiler(output_path=str(tmp_path), profiler_level="Level9")
        ops.ReLU()(Tensor(np.ones((4, 4), np.float32)))
        out = profiler.analyse()
    assert "profiler_level must be one of ['Level0', 'Level1', 'Level2'], got 'Level9'" in capsys.readouterr().err
    with open(out / "kernel_details.csv") as f:
        assert next(csv.reader(f)) == LEVEL1_HEADER[:12] + [KERNEL_META]


def test_kernel_details_fixture_replays_with_its_durations_per_stream(capsys, tmp_path):
    streams = {s.stream: s for s in replay(read_profile(KERNEL_DETAILS), get_spec())}
    # sums of the fixture's durations by stream, and its first start to last end
    assert streams["2"].tasks == 6 and streams["2"].replayed_us == pytest.approx(3.2 + 12.5 + 2.1 + 4.0 + 6.75 + 13.5)
    assert streams["2"].recorded_span_us == pytest.approx(1040 + 13.5 - 1000)
    assert streams["3"].tasks == 3 and streams["3"].replayed_us == pytest.approx(5.0 + 20.0 + 2.5)
    assert streams["3"].recorded_span_us == pytest.approx(1029 + 2.5 - 1003)
    assert streams["N/A"].tasks == 1 and streams["N/A"].replayed_us == pytest.approx(15.0)   # the HCCL row

    assert main(["profile", "replay", str(KERNEL_DETAILS), "--trace", str(tmp_path / "replay.json")]) == 0
    out = capsys.readouterr().out
    assert "10 task(s) on 3 stream(s)" in out and "simulated device time: 42.050 us (the longest stream)" in out
    assert "       2      6         42.050             53.500             11.450" in out


def test_op_summary_fixture_in_msprof_columns_replays_and_prices(capsys, tmp_path):
    profile = read_profile(OP_SUMMARY)
    mul = next(t for t in profile.tasks if t.type == "Mul")
    assert [t.shape for t in mul.inputs] == [(1, 1000), ()]          # "1,1000;": a scalar second input
    streams = {s.stream: s.replayed_us for s in replay(profile, get_spec())}
    assert streams == pytest.approx({"5": 1.56 + 8.44 + 2.0, "6": 3.0})
    kernels = fidelity(profile, get_spec())
    assert [k.reason for k in kernels] == [None] * 4                  # DT_ dtypes, FORMAT_ND, SoftmaxV2 read
    assert {k.plan.sig.op for k in kernels} == {"Cast", "MatMul", "Mul", "Softmax"}
    assert main(["profile", "fidelity", str(OP_SUMMARY), "--csv", str(tmp_path / "f.csv")]) == 0
    assert "priced 4 kernel(s) in 4 task(s)" in capsys.readouterr().out


def test_fidelity_ranks_priced_kernels_by_error_and_names_the_rest(capsys, tmp_path):
    kernels = fidelity(read_profile(KERNEL_DETAILS), get_spec())
    priced = [k for k in kernels if k.reason is None]
    assert [abs(k.error) for k in priced] == sorted((abs(k.error) for k in priced), reverse=True)
    fc1 = next(k for k in priced if k.inputs[1].shape == (120, 784))
    assert fc1.lines == [3, 11] and fc1.mean_us == pytest.approx(13.0) and fc1.block_nums == {8}
    assert fc1.plan.sig.op == "MatMul" and fc1.plan.sig.attr("transpose_b") is True    # MatMulV2, B transposed
    assert fc1.plan.cost.cube_flops == 2 * 32 * 784 * 120                              # 2 M N K
    assert fc1.error == pytest.approx((fc1.model_us - 13.0) / 13.0)
    conv = next(k for k in priced if k.type == "Conv2D")
    assert (conv.plan.sig.attr("stride"), conv.plan.sig.attr("pad_mode")) == (2, "same")
    assert conv.plan.cost.cube_flops == 2 * (8 * 16 * 16 * 16) * (3 * 3 * 3)           # 2 x outputs x window
    reduce = next(k for k in priced if k.type == "ReduceSum")
    assert (reduce.plan.sig.attr("axis"), reduce.plan.sig.attr("keep_dims")) == ((0,), False)
    skipped = {k.type: (k.lines, k.reason) for k in kernels if k.reason is not None}
    assert skipped["TransData"][0] == [7] and "unknown op type 'TransData' (column 'Type')" in skipped["TransData"][1]
    assert skipped["Gather"][0] == [9] and "data type 'INT64'" in skipped["Gather"][1]
    assert skipped["HcomAllReduce"][0] == [10]

    report = tmp_path / "fidelity.csv"
    assert main(["profile", "fidelity", str(KERNEL_DETAILS), "--csv", str(report), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "... 3 more in" in out and "not priced: TransData (line(s) 7): unknown op type" in out
    with open(report) as f:
        rows = list(csv.DictReader(f))
    assert [r["Rank"] for r in rows] == ["1", "2", "3", "4", "5", "6", "", "", ""]
    assert [r["Status"] for r in rows].count("priced") == 6
    fc1_row = next(r for r in rows if r["Lines"] == "3 11")
    assert (fc1_row["Op"], fc1_row["Count"], fc1_row["Recorded Mean(us)"]) == ("MatMul", "2", "13.000")
    assert float(fc1_row["Error(%)"]) == pytest.approx(100 * fc1.error, abs=0.01)


HEADER = "Name,Type,Stream ID,Start Time(us),Duration(us),Block Num,Input Shapes,Input Data Types\n"


@pytest.mark.parametrize("text, message", [
    (HEADER + 'k,Add,1,0,abc,1,"2,2;2,2",FLOAT;FLOAT\n',
     r"line 2, column 'Duration\(us\)': 'abc' is not a number of microseconds"),
    (HEADER + 'k,Add,1,0,1,1,"2,2;2,2",FLOAT;FLOAT\nk,Add,1,-5,1,1,"2,2",FLOAT\n',
     r"line 3, column 'Start Time\(us\)': '-5' is not a finite, non-negative"),
    (HEADER + 'k,Add,1,0,1,one,"2,2;2,2",FLOAT;FLOAT\n', r"line 2, column 'Block Num': 'one' is not a block count"),
    (HEADER + 'k,Add,1,0,1,1,"2,x;2,2",FLOAT;FLOAT\n',
     r"line 2, column 'Input Shapes': shape '2,x' is not a comma-separated list"),
    (HEADER + 'k,Add,1,0,1,1,"2,2;2,2",FLOAT\n',
     r"line 2, column 'Input Data Types': 1 entries for the 2 tensors of column 'Input Shapes'"),
    (HEADER + 'k,Add,1,0,1\n', r"line 2 has 5 cells, the header has 8"),
    (HEADER, r"no task rows under the header"),
    ("Name,Type,Start Time(us)\nk,Add,0\n",
     r"no column for stream \('Stream ID'\), duration \('Duration\(us\)' or 'Task Duration\(us\)' or 'Task Duration'\)"),
])
def test_unreadable_profiles_are_errors_naming_line_and_column(tmp_path, capsys, text, message):
    path = tmp_path / "kernel_details.csv"
    path.write_text(text)
    with pytest.raises(InvalidFileError, match=message):
        read_profile(path)
    assert main(["profile", "replay", str(path)]) == 2
    assert f"[100003] {path}" in capsys.readouterr().err


def test_a_directory_with_two_profiles_asks_which(tmp_path):
    for rank in (0, 1):
        (tmp_path / f"rank{rank}").mkdir()
        shutil.copy(KERNEL_DETAILS, tmp_path / f"rank{rank}" / "kernel_details.csv")
    with pytest.raises(InvalidFileError, match="holds 2 kernel_details.csv files"):
        read_profile(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidFileError, match="holds no kernel_details.csv or op_summary"):
        read_profile(tmp_path / "empty")
