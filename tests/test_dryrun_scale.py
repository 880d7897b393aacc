"""One rank of a 1024-rank cluster, simulated alone, and msrun's distinct parallel positions (issue 24 item 4).

Oracles: the interconnect model's formula for the one AllReduce of a data-parallel step (hand-placed ranks:
128 Atlas 800 servers), a rank's own DryRun against the figures msrun gave it from another rank's simulation,
and hand-worked topologies for which ranks share a position (cli/positions.py). Small shapes only.
"""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from limits import SUBPROCESS_TIMEOUT_S
from test_launch import ascendemu_msrun, clean_env, table_rows

from ascendemu.cli.cluster import dryrun_figures
from ascendemu.cli.positions import family_blocks, position_keys
from ascendemu.device.comm_overlap import uncovered_length, union_length
from ascendemu.device.interconnect import (HalvingDoubling, Hierarchical, Mesh, Ring, Single, choose_algorithm,
                                           hccs_link, reduction_gamma, roce_link)
from ascendemu.device.spec import get_spec
from ascendemu.device.system import Node
from ascendemu.errors import MemoryAllocationError
from ascendemu.graph.modes import DryRun
from ascendemu.units import MiB

WORLD = 1024
DP_ALLREDUCE = """
import numpy as np
import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore.communication import init

init()
ms.set_context(mode=ms.GRAPH_MODE)
ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(64, 256)
        self.all_reduce = ops.AllReduce()

    def construct(self, x):
        return self.all_reduce(self.dense(x))


Net()(Tensor(np.ones((32, 64), np.float32)))
"""
ALL_REDUCE_BYTES = 32 * 256 * 4


def test_interval_unions_by_hand():
    """Communication time is the union of the collectives' intervals; exposed is the part no kernel covers."""
    comm = [(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)]
    compute = [(0.5, 1.0), (2.5, 5.5)]
    assert union_length(comm) == 4.0
    assert uncovered_length(comm, compute) == pytest.approx(0.5 + 1.5 + 0.5)    # [0,.5) [1,2.5) [5.5,6)
    assert uncovered_length(comm, []) == 4.0 and uncovered_length([], compute) == 0.0


def test_a_dry_run_device_grows_past_its_hbm_and_reports_the_whole_peak():
    """A backed 64 MiB device refuses 48 + 48 MiB; the DryRun device (no backing) is its twin until then, then
    holds both, so its peak is the sum, and the DryRun lines say by how much the HBM is exceeded."""
    spec = get_spec(hbm_bytes=64 * MiB, pool_expand_unit=32 * MiB)
    backed, bare = (Node(spec, 1, backing=b).devices[0].memory for b in (True, False))
    first = [mem.malloc(48 * MiB) for mem in (backed, bare)]
    assert first[0] == first[1] and backed.stats() == bare.stats()
    with pytest.raises(MemoryAllocationError):
        backed.malloc(48 * MiB)
    bare.malloc(48 * MiB)
    stats = bare.stats()
    assert stats.used == stats.peak_used == 2 * (48 * MiB + 512)     # ACL's 32-byte pad, 512-byte aligned
    lines = DryRun().summary_tail({**dataclasses.asdict(stats), "hbm": spec.hbm_bytes}, None)
    assert lines[0] == "DryRun: Device HBM memory size: 64.00M"
    assert lines[1] == "DryRun: Used peak memory usage (without fragments): 96.00M"
    over = stats.actual_peak - 64 * MiB
    assert lines[3].startswith(f"DryRun: Actual peak exceeds the device's HBM by {over / MiB:.2f}M")


def test_layout_groups_and_shard_comparison_match_the_walk_over_every_rank():
    """graph.parallel.layout answers without walking the world (a 1024-rank capture asked ~10^7 coordinates):
    its groups and same-shard tests equal the definitions, checked over every rank of small worlds."""
    import itertools
    from ascendemu.graph.parallel.layout import Layout

    def walk_group(lay, rank, axes):
        base = lay.coord(rank)
        return tuple(r for r in range(lay.device_num)
                     if all(lay.coord(r)[a] == base[a] for a in range(len(base)) if a not in axes))

    matrices = [(8,), (2, 4), (4, 2), (2, 2, 2), (1, 8), (2, 1, 4)]
    for dm_a, dm_b in itertools.product(matrices, repeat=2):
        for ta, tb in itertools.product(itertools.product(range(-1, len(dm_a)), repeat=2),
                                        itertools.product(range(-1, len(dm_b)), repeat=2)):
            a, b = Layout(dm_a, ta), Layout(dm_b, tb)
            for d in range(2):
                walked = a.shards(d) == b.shards(d) and all(a.index(r, d) == b.index(r, d) for r in range(8))
                assert a.same_dim(b, d) == walked, (a, b, d)
        for axes in itertools.chain.from_iterable(itertools.combinations(range(len(dm_a)), k)
                                                  for k in range(len(dm_a) + 1)):
            for rank in range(8):
                assert Layout(dm_a, (0,)).group(rank, axes) == walk_group(Layout(dm_a, (0,)), rank, axes)


def _doc(groups, world=WORLD, mode="semi_auto_parallel", stages=1):
    return {"rank": 0, "world": world, "parallel_mode": mode, "pipeline_stages": stages, "device": "Ascend910A",
            "groups": groups}


def test_dp128_mp8_on_1024_ranks_is_one_position():
    """Every mp group of 8 fills one server (two HCCS groups of 4), every dp group takes one chip of each of the
    128 servers: the same algorithms for every rank, so rank 0 stands for all 1024."""
    spec = get_spec()
    mp, dp = list(range(8)), list(range(0, WORLD, 8))
    keys = position_keys(_doc([mp, dp, list(range(WORLD))]), range(WORLD))
    assert len(set(keys.values())) == 1
    stage, (alg_mp, alg_dp, alg_world) = keys[777]
    assert stage == 0
    assert alg_mp == Hierarchical(Mesh(4, hccs_link(spec)), HalvingDoubling(2, roce_link(spec)))
    assert alg_dp == Hierarchical(Single(), HalvingDoubling(128, roce_link(spec)))
    assert alg_world == Hierarchical(Mesh(4, hccs_link(spec)), HalvingDoubling(256, roce_link(spec)))


def test_positions_split_by_topology_and_stage():
    """Groups of 3 in a world of 6: {0,1,2} is one HCCS group (a mesh), {3,4,5} straddles the two groups of
    server 0 (chip 3 in the first, 4 and 5 in the second: a flat ring over RoCE), so two positions. Pipeline
    stages split a world as MindSpore does (rank // (world / stages))."""
    spec = get_spec()
    keys = position_keys(_doc([[0, 1, 2]], world=6), range(6))
    assert keys[0] == keys[1] == keys[2] == (0, (Mesh(3, hccs_link(spec)),))
    assert keys[3] == keys[4] == keys[5] == (0, (Ring(3, roce_link(spec)),))
    staged = position_keys(_doc([list(range(0, WORLD, 8))], stages=2), range(WORLD))
    assert {staged[r][0] for r in range(512)} == {0} and {staged[r][0] for r in range(512, WORLD)} == {1}
    assert staged[0][1] == staged[1023][1]


def test_no_position_without_a_tiling_family_or_in_stand_alone_mode():
    """A group whose translates do not tile the world, or a stand-alone script (it may build another network
    on each rank): every rank is simulated."""
    assert family_blocks([0, 1, 5], 8) is None
    assert family_blocks([0, 2], 8) == [0, 1, 0, 1, 2, 3, 2, 3]
    assert set(position_keys(_doc([[0, 1, 5]], world=8), range(8)).values()) == {None}
    assert set(position_keys(_doc([list(range(8))], world=8, mode="stand_alone"), range(8)).values()) == {None}


def test_msrun_simulates_one_position_of_1024_ranks(ascendemu_kernel_cache, tmp_path):
    """msrun --sim_level 1 of a 1024-rank data-parallel step runs rank 0 only and prints all 1024 rows; the
    communication time is the model's AllReduce over 128 servers, all of it exposed (the step ends with it),
    and rank 777 simulated on its own gives the figures the table gave it."""
    (tmp_path / "dp.py").write_text(DP_ALLREDUCE)
    env = clean_env(ascendemu_kernel_cache)
    proc = ascendemu_msrun(tmp_path, env, "--worker_num", str(WORLD), "--log_dir", "logs", "--join", "True",
                           "--sim_level", "1", "dp.py")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert f"of {WORLD} rank(s), RANK_SIZE={WORLD}, 1 distinct position(s) simulated" in proc.stdout
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["scheduler.log", "worker_0.log"]
    rows = table_rows(proc.stdout, WORLD)
    assert [int(r[0]) for r in rows] == list(range(WORLD)) and {tuple(r[1:]) for r in rows} == {tuple(rows[0][1:])}
    spec = get_spec()
    modelled_ms = choose_algorithm(range(WORLD), spec).all_reduce(ALL_REDUCE_BYTES,
                                                                   reduction_gamma(spec, "float32")) * 1e3
    assert float(rows[777][5]) == pytest.approx(modelled_ms, abs=0.0015)     # the table rounds to 1 us
    assert rows[777][7] == rows[777][5] and rows[777][9] == "0"
    alone = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", "dp.py"], cwd=tmp_path,
                           env={**env, "RANK_SIZE": str(WORLD), "RANK_ID": "777"}, capture_output=True, text=True,
                           timeout=SUBPROCESS_TIMEOUT_S)
    assert alone.returncode == 0, alone.stdout[-3000:] + alone.stderr[-3000:]
    assert dryrun_figures(alone.stdout) == dryrun_figures((tmp_path / "logs" / "worker_0.log").read_text())


def test_a_tiny_llama_under_the_loss_scale_cell_on_1024_ranks(ascendemu_kernel_cache, tmp_path):
    """MindFormers' training cell (dynamic loss scale: each update is Select(overflow, old, new)) on rank 1000 of
    dp 128 x mp 8: every update keeps its Parameter's slice (it took the batch default over all 1024 ranks, so
    the updates were 1/1024 of the Parameter and the step failed copying them back)."""
    script = Path(__file__).resolve().parent.parent / "examples" / "llama" / "dryrun_7b.py"
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", str(script), "--num_layers", "1",
                           "--hidden_size", "256", "--num_heads", "8", "--n_kv_heads", "8", "--seq_length", "64",
                           "--dp", "128", "--mp", "8"], cwd=tmp_path,
                          env={**clean_env(ascendemu_kernel_cache), "RANK_SIZE": str(WORLD), "RANK_ID": "1000"},
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0 and "step done" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "is not a parameter update of the same size" not in proc.stderr
    figures = dryrun_figures(proc.stdout)
    assert 0 < float(figures["exposed"].split()[0]) <= float(figures["comm"].split()[0]) \
        < float(figures["step"].split()[0])
