"""Record what real MindSpore 2.10's AUTO_PARALLEL search picks for the scripts auto_mlp.py and
auto_attention.py of tests/fixtures/msdryrun/ (its Ascend DryRun on the stub CANN of
/work/shared/msdryrun/make_fakecann.sh) into tests/fixtures/msdryrun/auto_parallel_dryrun.json: per
configuration, its strategy checkpoint decoded (each op's strategy, each Parameter's layout), the
checkpoint's bytes (hex: our writer must read it) and the collectives of the step's execute order.
With --plan: Cell.shard's parameter_plan (plan_mlp.py's PLANs, and what plan_errors.py's bad plans raise or
warn) into plan_dryrun.json; with --pipeline: pipeline stages under AUTO_PARALLEL (auto_pipeline.py, a rank of
each stage) into auto_pipeline_dryrun.json; with --embedding: the Gather of an nn.Embedding-fed MLP
(auto_embedding.py) into auto_embedding_dryrun.json.

    python tools/record_auto_parallel.py /work/msvenv/bin/python /tmp/p8/fakecann [--plan | --pipeline | --embedding]
"""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_msdryrun_parallel import FIXTURES, dryrun_output  # noqa: E402

# (script, RANK_SIZE, RANK_ID, environment)
CONFIGS = [("auto_mlp.py", 4, 1, {"SEARCH": "sharding_propagation", "SHARD": shard}) for shard in ("mm1", "mm2", "cell",
                                                                                                   "none")] + \
          [("auto_mlp.py", 4, 1, {"SEARCH": "recursive_programming", "SHARD": "none"}),
           ("auto_mlp.py", 8, 5, {"SEARCH": "sharding_propagation", "SHARD": "mm1", "DP": "4", "MP": "2"}),
           ("auto_attention.py", 4, 1, {"SEARCH": "sharding_propagation", "SHARD": "q"}),
           ("auto_attention.py", 4, 1, {"SEARCH": "sharding_propagation", "SHARD": "none"}),
           ("auto_attention.py", 4, 1, {"SEARCH": "recursive_programming", "SHARD": "none"})]

# --plan: (script, RANK_SIZE, RANK_ID, environment) and plan_errors.py's CASEs
PLAN = [("plan_mlp.py", 4, 1, {"PLAN": plan}) for plan in ("cols", "rows", "both", "layout", "missing")]
PLAN_ERRORS = ["length", "divisible", "value_type", "key_type", "missing", "twice", "not_dict"]
# what plan_errors.py prints: the exception, or OK and the Parameter's param_strategy; and MindSpore's warnings
OUTCOME = re.compile(r"^(RAISED (\w+) \| (.*)|OK .*)$", re.M)
SHARD_WARNING = re.compile(r"^\[WARNING\] ME\(.*?\[mindspore/(?:parallel/shard|nn/cell)\.py:\d+\] (.*)$", re.M)
# --pipeline: a rank of each stage, 8 ranks dp2 x mp2 x pp2 propagated from mm1, 4 ranks pp2 searched
PIPELINE = [("auto_pipeline.py", 8, rank, {"SEARCH": "sharding_propagation", "SHARD": "mm1", "DP": "2", "MP": "2",
                                            "PP": "2", "MICRO": "2"}) for rank in (1, 6)] + \
           [("auto_pipeline.py", 4, rank, {"SEARCH": "recursive_programming", "SHARD": "none", "PP": "2",
                                            "MICRO": "2"}) for rank in (0, 3)]
# --embedding: nn.Embedding's Gather searched
EMBEDDING = [("auto_embedding.py", 4, 1, {"SEARCH": search, "SHARD": shard})
             for search, shard in (("sharding_propagation", "mm1"), ("sharding_propagation", "none"),
                                   ("recursive_programming", "none"))]

# run by MindSpore's python: its own protobuf module decodes the checkpoint
DECODE = """
import json, sys
from mindspore.train.node_strategy_pb2 import ParallelStrategyMap
m = ParallelStrategyMap(); m.ParseFromString(open(sys.argv[1], 'rb').read())
print(json.dumps({"current_stage": m.current_stage,
    "strategies": {i.node_name: [list(s.dim) for s in i.parallel_strategys.parallel_strategy]
                   for i in m.parallel_strategy_item},
    "layouts": {i.param_name: {"dev_matrix": list(i.parallel_layouts.dev_matrix[0].dim),
                               "tensor_map": list(i.parallel_layouts.tensor_map[0].dim)}
                for i in m.parallel_layout_item}}))
"""


def record(python: str, cann: Path, script: str, size: int, rank: int, extra: dict[str, str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = Path(tmp) / "strategy.ckpt"
        code, text = dryrun_output(python, cann, script, tmp, {**extra, "RANK_SIZE": str(size), "RANK_ID": str(rank),
                                                               "STRATEGY_FILE": str(ckpt)})
        if code != 0:
            raise RuntimeError(f"{script} {extra}: exit {code}\n{text[-2000:]}")
        with open(Path(tmp) / f"rank_{rank}" / "execute_order" / "comm_execute_order.csv") as f:
            rows = list(csv.DictReader(f))
        decoded = json.loads(subprocess.run([python, "-c", DECODE, str(ckpt)], capture_output=True, text=True,
                                            check=True, cwd=tmp).stdout)
        raw = ckpt.read_bytes().hex()
    return {"script": script, "rank_size": size, "rank_id": rank, "env": extra, **decoded, "ckpt_hex": raw,
            "step_collectives": [{"primitive": r["primitive"], "ranks": [int(x) for x in r["comm_rank"].split()],
                                  "input_shape": r["input_shape"], "output_shape": r["output_shape"],
                                  **({"peer": int(r["src_rank"] or r["dest_rank"])}
                                     if r["src_rank"] or r["dest_rank"] else {})} for r in rows]}


def record_plan_error(python: str, cann: Path, case: str) -> dict:
    """plan_errors.py's CASE: what MindSpore's Cell.shard raised (type, text) or warned."""
    with tempfile.TemporaryDirectory() as tmp:
        _, text = dryrun_output(python, cann, "plan_errors.py", tmp, {"CASE": case, "RANK_SIZE": "4", "RANK_ID": "1"})
    outcome = OUTCOME.search(text)
    if outcome is None:
        raise RuntimeError(f"plan_errors.py {case}: no outcome\n{text[-2000:]}")
    return {"case": case, "error": outcome.group(2), "message": outcome.group(3),
            "warnings": SHARD_WARNING.findall(text)}


def main() -> None:
    python, cann = sys.argv[1], Path(sys.argv[2])
    version = subprocess.run([python, "-c", "import mindspore; print(mindspore.__version__)"], capture_output=True,
                             text=True, check=True, cwd="/tmp").stdout.strip()
    if "--plan" in sys.argv:
        out, configs = "plan_dryrun.json", PLAN
        extra = {"errors": [record_plan_error(python, cann, case) for case in PLAN_ERRORS]}
    elif "--pipeline" in sys.argv:
        out, configs, extra = "auto_pipeline_dryrun.json", PIPELINE, {}
    elif "--embedding" in sys.argv:
        out, configs, extra = "auto_embedding_dryrun.json", EMBEDDING, {}
    else:
        out, configs, extra = "auto_parallel_dryrun.json", CONFIGS, {}
    runs = [record(python, cann, *config) for config in configs]
    (FIXTURES / out).write_text(json.dumps({"mindspore": version, "runs": runs, **extra}, indent=1) + "\n")
    for r in runs:
        print(r["script"], r["env"], r["strategies"], len(r["step_collectives"]))


if __name__ == "__main__":
    main()
