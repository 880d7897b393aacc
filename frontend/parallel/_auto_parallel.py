"""The front end's side of AUTO_PARALLEL: the strategy search (``ascendemu.graph.parallel.auto_strategy``)
run between a capture's recording and its sharded capture, MindSpore's strategy checkpoint
(``strategy_ckpt_config={"save_file": ..., "load_file": ...}``: its protobuf, ``node_strategy_pb2``);
``Cell.shard`` is ``_cell_shard``.

The checkpoint holds, as MindSpore's does, the strategy of each op that reads a trainable Parameter, keyed
``<op>_<parameter name>`` (``MatMul_w1``), and each trainable Parameter's layout (its optimizer states' too):
the device matrix without its size-1 axes and the tensor map counted from the right (MindSpore's
numbering). A loaded strategy is given to the op of its key as if the script had shard it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError

from ascendemu.errors import InvalidValueError
from ascendemu.graph.parallel.auto_strategy import RecordingPass, StrategySearch
from ascendemu.graph.parallel.layout import Layout
from ascendemu.graph.parallel.sharding import PLAN_OP
from ascendemu.graph.parallel.strategy import LayoutStrategy, Strategy

from .. import context
from . import node_strategy_pb2 as pb

__all__ = ["search", "save_strategy_ckpt", "load_strategy_ckpt"]

# MindSpore 2.10 writes this in every strategy checkpoint's current_stage (recorded, whatever the stages)
CURRENT_STAGE = 2


class StrategyCkptError(InvalidValueError):
    """A strategy checkpoint to load that is missing or is not one."""


def _ckpt_file(key: str) -> str:
    config = context.get_auto_parallel_context("strategy_ckpt_config") or {}
    return config.get(key) or context.get_auto_parallel_context(f"strategy_ckpt_{key}") or ""


def search(recording: RecordingPass) -> dict[int, tuple[str, Strategy]]:
    """The strategies of the recorded capture's ops: loaded from ``load_file``, given by the script, or
    searched (``search_mode``); written to ``save_file`` when the context names one."""
    records = recording.records
    planned = recording.planned
    keys = {i: _key(rec.op, [None if p in planned else p for p in rec.params]) for i, rec in enumerate(records)}
    loaded = {}
    load = _ckpt_file("load_file")
    if load:
        stored = load_strategy_ckpt(load)
        for i, rec in enumerate(records):
            if rec.given is None and keys[i] in stored:
                rec.given = loaded[i] = stored[keys[i]]
    searcher = StrategySearch(records, recording.n, frozenset(planned))
    chosen = searcher.run(context.get_auto_parallel_context("search_mode"))
    chosen.update({i: (records[i].op, s) for i, s in loaded.items()})
    save = _ckpt_file("save_file")
    if save:
        trainable = recording.trainable
        states = {p for rec in records if rec.update and rec.params[:1] and rec.params[0] in trainable
                  for p, shape in zip(rec.params, rec.shapes) if p is not None and shape == rec.shapes[0]}
        # this rank's stage's ops and Parameters, as MindSpore writes a checkpoint per stage
        stage = None if recording.pipeline is None else recording.pipeline.stage
        here = {p for rec in records if rec.stage in (None, stage) for p in rec.params if p is not None}
        strategies = {keys[i]: s for i, s in searcher.strategies.items() if keys[i] is not None and
                      records[i].stage in (None, stage) and
                      next(p for p in records[i].params if p is not None and p not in planned) in trainable}
        # a planned Parameter is read through MindSpore's AShardIdentity: the plan is that op's strategy
        strategies.update({f"{PLAN_OP}_{name}": plan for name, plan in planned.items() if name in trainable and
                           name in here})
        save_strategy_ckpt(save, strategies, {name: lay for name, lay in searcher.param_layouts.items()
                                              if (name in trainable or name in states) and name in here})
    return chosen


def _key(op: str, params: list[str | None]) -> str | None:
    """MindSpore's checkpoint key of an op reading a Parameter: ``<op>_<its first Parameter's name>`` (a planned
    Parameter's reader reads an AShardIdentity, not the Parameter: no key)."""
    name = next((p for p in params if p is not None), None)
    return None if name is None else f"{op}_{name}"


def save_strategy_ckpt(path: str, strategies: dict[str, Strategy], layouts: dict[str, Layout]) -> None:
    """Write MindSpore's strategy checkpoint (``ParallelStrategyMap``); a dim split over several device axes
    (an ``ms.Layout`` tuple entry) is written by its first."""
    ckpt = pb.ParallelStrategyMap(current_stage=CURRENT_STAGE)
    for name, strategy in strategies.items():
        item = ckpt.parallel_strategy_item.add(node_name=name)
        item.parallel_strategys.stage = 0
        for dims in strategy.splits() if isinstance(strategy, LayoutStrategy) else strategy:
            item.parallel_strategys.parallel_strategy.add(dim=list(dims))
    for name, lay in layouts.items():
        item = ckpt.parallel_layout_item.add(param_name=name)
        out = item.parallel_layouts
        kept = [a for a, size in enumerate(lay.dev_matrix) if size > 1]
        out.dev_matrix.add(dim=[lay.dev_matrix[a] for a in kept] or [1])
        firsts = [next((a for a in lay.axes(d) if a in kept), -1) for d in range(len(lay.tensor_map))]
        out.tensor_map.add(dim=[-1 if a < 0 else len(kept) - 1 - kept.index(a) for a in firsts])
        out.param_split_shape.add()
        out.indices_offset.add()
        out.field, out.opt_weight_shard_step, out.opt_weight_shard_size = 0, 0, 0
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(ckpt.SerializeToString())


def load_strategy_ckpt(path: str) -> dict[str, Strategy]:
    """The op strategies of a strategy checkpoint (ours or MindSpore's), by key."""
    ckpt = pb.ParallelStrategyMap()
    try:
        ckpt.ParseFromString(Path(path).read_bytes())
    except (OSError, DecodeError) as e:
        raise StrategyCkptError(f"strategy_ckpt_config load_file {path!r} cannot be read as a strategy checkpoint "
                                f"({e}); give a file written by save_file (ascendemu's or MindSpore's)") from e
    return {item.node_name: tuple(tuple(s.dim) for s in item.parallel_strategys.parallel_strategy)
            for item in ckpt.parallel_strategy_item}
