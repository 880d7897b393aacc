"""Record a script's run and replay it: the replay must reproduce the run's simulated device and host
times and every figure, bit for bit (the oracle for device control flow in `.aetrace`: a LabelSwitch's
recorded branch is taken without reading memory).

``record_and_replay`` runs ``script`` under ``ascendemu run --quiet --record`` on a fresh runtime,
replays the trace, checks it, and returns what the run printed and the trace's records for the
caller's own checks. The caller sets the cwd and the kernel cache (monkeypatch).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ascendemu.cli.run import main as run_main
from ascendemu.hal.runtime import get_runtime
from ascendemu.replay.compare import differences
from ascendemu.replay.replayer import replay
from ascendemu.traces import aetrace as fmt


def record_and_replay(script: Path, trace: Path, capsys: pytest.CaptureFixture) -> tuple[str, list]:
    rt = get_runtime()
    if rt.node is not None:
        rt.finalize()
    try:
        assert run_main(["--quiet", "--record", str(trace), str(script)]) == 0
        printed = capsys.readouterr().out
        live = (rt.device_time(), rt.host_time())
        rt.finalize()
        records = list(fmt.read_trace(trace))
        result = replay(str(trace))
        assert result.stop is None
        assert (result.figures["device_time_s"], result.figures["host_time_s"]) == live
        assert differences(result.recorded.figures, result.figures) == []
        return printed, records
    finally:
        if rt.node is not None:
            rt.finalize()
