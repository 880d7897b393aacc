"""AUTO_PARALLEL (issue 24, item 3): the strategy search (graph/parallel/auto_strategy.py), Cell.shard and
MindSpore's strategy checkpoint (frontend/parallel/_auto_parallel.py).

Oracles: real MindSpore 2.10's Ascend DryRun (stub CANN) of tests/fixtures/msdryrun/auto_mlp.py and
auto_attention.py, recorded by tools/record_auto_parallel.py into auto_parallel_dryrun.json: the
strategy each MatMul gets (its strategy checkpoint), each Parameter's layout and one step's collectives;
hand-computed redistribution costs; float64 numpy (test_semi_auto_parallel._reference) for an MLP
trained on 2 mpiexec ranks.
"""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

from ascendemu.frontend.parallel import node_strategy_pb2 as pb
from ascendemu.frontend.parallel._auto_parallel import StrategyCkptError, load_strategy_ckpt, save_strategy_ckpt
from ascendemu.frontend.parallel._cell_shard import CellShardTypeError
from ascendemu.graph.parallel.auto_strategy import SearchModeError, StrategySearch, redistribution_cost
from ascendemu.graph.parallel.layout import Layout
from test_collectives import mpiexec, outside_mpi
from test_semi_auto_parallel import EXTRA_LOSS_GRAD, _reference

FIXTURES = Path(__file__).parent / "fixtures"
MSDRYRUN = FIXTURES / "msdryrun"
RECORDED = json.loads((MSDRYRUN / "auto_parallel_dryrun.json").read_text())["runs"]
WORKER = FIXTURES / "ranks" / "auto_worker.py"
# where our search and MindSpore's part, by (script, search_mode, SHARD): nowhere now. The scripts set their
# training cell to training (``set_train()``, as ``Model.train`` does); recorded without it (before session 38)
# MindSpore compiled an inference graph and its search differed: the attention block with layer 0's query MatMul
# shard (dp, 1), (1, mp) gave the output projection (dp, 1), (1, 1) (now the row-parallel (2, 2), (2, 1) ours
# gives), and the unshard MLP (and the embedding MLP) ran whole. A training graph's propagation starts from the
# _VirtualDataset's batch split as well (data parallel MatMuls; the full_batch attention block stays whole), as
# ours does since (StrategySearch._propagate).
DIFFERENT: dict[tuple[str, str, str], dict] = {}


def _ours(tmp: Path, run: dict, extra: dict | None = None) -> tuple[dict, dict, Counter]:
    """Our DryRun of the recorded configuration: its strategy checkpoint (strategies, layouts) and collectives."""
    shutil.copy(MSDRYRUN / run["script"], tmp / run["script"])
    env = {**outside_mpi(), **run["env"], "RANK_SIZE": str(run["rank_size"]), "RANK_ID": str(run["rank_id"]),
           "STRATEGY_FILE": str(tmp / "ours.ckpt"), **(extra or {})}
    env.pop("MS_COMPILER_CACHE_PATH", None)
    proc = subprocess.run([sys.executable, "-m", "ascendemu", "run", "--dry-run", run["script"]], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp / f"rank_{run['rank_id']}" / "execute_order" / "comm_execute_order.csv") as f:
        comms = Counter((r["primitive"], tuple(int(x) for x in r["comm_rank"].split()), r["input_shape"],
                         r["output_shape"]) for r in csv.DictReader(f))
    ckpt = pb.ParallelStrategyMap()
    ckpt.ParseFromString((tmp / "ours.ckpt").read_bytes())
    layouts = {i.param_name: {"dev_matrix": list(i.parallel_layouts.dev_matrix[0].dim),
                              "tensor_map": list(i.parallel_layouts.tensor_map[0].dim)}
               for i in ckpt.parallel_layout_item}
    assert ckpt.current_stage == run["current_stage"]
    return load_strategy_ckpt(str(tmp / "ours.ckpt")), layouts, comms


def _theirs(run: dict) -> dict:
    return {name: tuple(tuple(s) for s in strategy) for name, strategy in run["strategies"].items()}


@pytest.mark.parametrize("run", RECORDED, ids=lambda r: f"{r['script'][:-3]}-{r['rank_size']}-{r['env']}")
def test_search_picks_mindspores_strategies_and_collectives(run, tmp_path):
    """Every MatMul's strategy is the one MindSpore 2.10 picks (propagated from a Primitive.shard or a
    Cell.shard, both directions; recursive programming's data parallel),
    except the one documented in DIFFERENT; where they agree, each Parameter's layout in the checkpoint and
    one step's collectives (kind, group, shapes) are MindSpore's, plus the documented extra AllReduce of the
    loss's backward when the loss is split (test_semi_auto_parallel.EXTRA_LOSS_GRAD)."""
    strategies, layouts, comms = _ours(tmp_path, run)
    differ = DIFFERENT.get((run["script"], run["env"]["SEARCH"], run["env"]["SHARD"]), {})
    assert strategies == {**_theirs(run), **differ}
    if differ:
        return
    assert layouts == run["layouts"]
    theirs = Counter((c["primitive"], tuple(c["ranks"]), c["input_shape"], c["output_shape"])
                     for c in run["step_collectives"])
    extra = comms - theirs
    assert theirs - comms == Counter()
    assert all((kind, shape_in, shape_out) == EXTRA_LOSS_GRAD for kind, _, shape_in, shape_out in extra), extra


def test_a_loaded_mindspore_checkpoint_gives_its_strategies(tmp_path):
    """strategy_ckpt_config's load_file: MindSpore's checkpoint of the propagated MLP (written by MindSpore,
    read by our schema) makes the unshard MLP take its strategies, and so the same collectives."""
    recorded = next(r for r in RECORDED if r["script"] == "auto_mlp.py" and r["env"]["SHARD"] == "mm1" and
                    r["rank_size"] == 4)
    (tmp_path / "ms.ckpt").write_bytes(bytes.fromhex(recorded["ckpt_hex"]))
    assert load_strategy_ckpt(str(tmp_path / "ms.ckpt")) == _theirs(recorded)
    unshard = {**recorded, "env": {**recorded["env"], "SHARD": "none"}}
    strategies, _, comms = _ours(tmp_path, unshard, {"LOAD_FILE": str(tmp_path / "ms.ckpt")})
    assert strategies == _theirs(recorded)
    assert Counter((c["primitive"], tuple(c["ranks"]), c["input_shape"], c["output_shape"])
                   for c in recorded["step_collectives"]) - comms == Counter()
    # and the checkpoint we wrote holds MindSpore's items byte for byte (in another order)
    theirs, ours = pb.ParallelStrategyMap(), pb.ParallelStrategyMap()
    theirs.ParseFromString(bytes.fromhex(recorded["ckpt_hex"]))
    ours.ParseFromString((tmp_path / "ours.ckpt").read_bytes())
    for field in ("parallel_strategy_item", "parallel_layout_item"):
        assert sorted(i.SerializeToString() for i in getattr(ours, field)) == \
            sorted(i.SerializeToString() for i in getattr(theirs, field))


def test_checkpoint_layouts_are_written_as_mindspore_numbers_them(tmp_path):
    """A layout's device matrix loses its size-1 axes and its tensor map counts axes from the right: a
    MatMul ((2, 1), (1, 2)) on 4 devices leaves w1 (k, n) on (m=2, k=1, n=2) -> dev [2, 2], map [-1, 0]."""
    save_strategy_ckpt(str(tmp_path / "s.ckpt"), {"MatMul_w1": ((2, 1), (1, 2))},
                       {"w1": Layout((2, 1, 2), (1, 2)), "b": Layout((4,), (-1,))})
    ckpt = pb.ParallelStrategyMap()
    ckpt.ParseFromString((tmp_path / "s.ckpt").read_bytes())
    got = {i.param_name: (list(i.parallel_layouts.dev_matrix[0].dim), list(i.parallel_layouts.tensor_map[0].dim))
           for i in ckpt.parallel_layout_item}
    assert got == {"w1": ([2, 2], [-1, 0]), "b": ([4], [-1])}
    assert load_strategy_ckpt(str(tmp_path / "s.ckpt")) == {"MatMul_w1": ((2, 1), (1, 2))}


def test_a_missing_or_foreign_checkpoint_is_a_typed_error(tmp_path):
    with pytest.raises(StrategyCkptError, match="give a file written by save_file"):
        load_strategy_ckpt(str(tmp_path / "none.ckpt"))
    (tmp_path / "bad.ckpt").write_bytes(b"\xff\xff\xff")
    with pytest.raises(StrategyCkptError, match="cannot be read as a strategy checkpoint"):
        load_strategy_ckpt(str(tmp_path / "bad.ckpt"))


def test_redistribution_cost_by_hand():
    """(8, 4) float32 on 4 ranks: the same layout or a whole tensor costs nothing; rows split 2 -> 4 (each
    rank's rows a part of its pair's block) a tenth of the (2, 4) slice, 0.1 x 32 B; rows 4 -> 2 an
    AllGather and its backward, 2 x the (4, 4) slice, 2 x 64 B; rows 2 by the other stride: gathered."""
    rows4 = Layout((4,), (0, -1))
    rows2 = Layout((2, 2), (0, -1))          # ranks 0, 1 hold block 0
    rows2_other = Layout((2, 2), (1, -1))    # ranks 0, 2 hold block 0
    assert redistribution_cost(rows4, rows4, (8, 4), 4) == 0
    assert redistribution_cost(Layout.replicated(4, 2), rows4, (8, 4), 4) == 0
    assert redistribution_cost(rows2, rows4, (8, 4), 4) == pytest.approx(0.1 * 32)
    assert redistribution_cost(rows4, rows2, (8, 4), 4) == 2 * 64
    assert redistribution_cost(rows2_other, rows4, (8, 4), 4) == 2 * 32


def test_dynamic_programming_is_refused_with_the_supported_modes():
    with pytest.raises(SearchModeError, match="sharding_propagation, recursive_programming") as e:
        StrategySearch([], 4).run("dynamic_programming")
    assert isinstance(e.value, ValueError)


def test_cell_shard_checks_its_arguments_as_mindspore(monkeypatch):
    """MindSpore 2.10's ``Shard`` texts (mindspore/parallel/shard.py), on more than one rank."""
    from ascendemu.frontend import nn
    from ascendemu.frontend.communication import management
    monkeypatch.setattr(management.GlobalComm, "INITED", True)
    monkeypatch.setattr(management, "get_group_size", lambda group=None: 4)
    cell = nn.ReLU()
    with pytest.raises(CellShardTypeError, match="the 'in_strategy' should be a tuple, but got list"):
        cell.shard([(2, 1)])
    with pytest.raises(TypeError, match="should be a tuple\\(tuple\\(int\\)\\) or tuple\\(mindspore.parallel.Layout"):
        cell.shard(([2, 1],))
    with pytest.raises(TypeError, match="the 'out_strategy' should be None or tuple, but got int"):
        cell.shard(((2, 1),), 3)
    with pytest.raises(TypeError, match="the 'parameter_plan' should be a dict or None, but got list"):
        cell.shard(((2, 1),), None, [])
    cell.shard(((2, 1),))
    assert cell._in_strategy == ((2, 1),)


@pytest.mark.parametrize("seed", ["mm1", "plan"])
def test_auto_parallel_mlp_on_2_ranks_trains_as_one_device(tmp_path, seed, ascendemu_kernel_cache):
    """Column parallel over 2 ranks from the first MatMul's strategy (``mm1``) or from w1's parameter_plan
    (``plan``: Cell.shard of the net, its input whole), the rest propagated (the ReLU split alike, the second
    MatMul row parallel): every rank prints the float64 single-device losses and holds its slice of the
    trained weights (w1's columns, w2's rows, by its rank)."""
    losses, w1, w2 = _reference()
    proc, ranks = mpiexec(2, WORKER, tmp_path, "sharding_propagation", seed,
                          env={"MS_COMPILER_CACHE_PATH": str(ascendemu_kernel_cache)})
    assert proc.returncode == 0 and sorted(ranks) == [0, 1], proc.stderr[-3000:]
    for rank, result in ranks.items():
        np.testing.assert_allclose(result["losses"], losses, rtol=2e-6)
        np.testing.assert_allclose(result["w1"], w1[:, 4 * rank:4 * rank + 4], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(result["w2"], w2[4 * rank:4 * rank + 4], rtol=1e-5, atol=1e-6)


EMBEDDING = json.loads((MSDRYRUN / "auto_embedding_dryrun.json").read_text())["runs"]


def _elements(shape: str) -> int:
    return int(np.prod([int(d) for d in shape.strip("()").split(",") if d.strip()]))


@pytest.mark.parametrize("run", EMBEDDING, ids=lambda r: f"{r['env']['SEARCH']}-{r['env']['SHARD']}")
def test_search_splits_an_embeddings_indices_as_mindspore(run, tmp_path):
    """nn.Embedding's Gather searched (auto_embedding.py, tools/record_auto_parallel.py --embedding): its indices
    split as MindSpore 2.10 splits them, the table whole (propagated from mm1: the batch by dp 2; recursive: by
    all 4; nothing shard: whole), the MatMuls' strategies and every layout MindSpore's; one step's collectives by
    kind, group and elements (MindSpore gathers the (16, 8) ids before nn.Embedding flattens them, ours the
    (128,) flattened ones: the same bytes), plus the documented loss-backward AllReduce."""
    strategies, layouts, comms = _ours(tmp_path, run)
    assert strategies == _theirs(run)
    assert layouts == run["layouts"]
    ours = Counter((kind, ranks, _elements(a), _elements(b)) for (kind, ranks, a, b), k in comms.items()
                   for _ in range(k))
    theirs = Counter((c["primitive"], tuple(c["ranks"]), _elements(c["input_shape"]), _elements(c["output_shape"]))
                     for c in run["step_collectives"])
    assert theirs - ours == Counter()
    assert all((kind, a, b) == ("AllReduce", 1, 1) for kind, _, a, b in ours - theirs), ours - theirs
