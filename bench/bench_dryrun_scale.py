"""DryRun of one rank of a large cluster: host CPU time and peak RSS vs layers, parameters and ranks.

Each point is one child process, ``RANK_SIZE=N RANK_ID=0 ascendemu run --dry-run examples/llama/dryrun_7b.py``
(MindFormers' Llama, one AdamWeightDecay training step under a dynamic loss scale, seq 4096, SEMI_AUTO_PARALLEL
dp x mp, full batch): the child's CPU seconds (user + sys, from wait4) and peak RSS, and the DryRun's per-rank
figures (used peak, simulated step time, communication, exposed communication). Three sweeps:

* layers 2 / 4 / 8 / 16 / 80 of the Llama-2-70B shape (hidden 8192, 64 heads, 8 kv heads, ffn 28672) on
  1024 ranks (dp 128 x mp 8): CPU time beside the line through the 2- and 16-layer points (linear in layers?);
* parameters: ~125M (12 layers, hidden 768), Llama-2-7B (32 layers), Llama-2-70B (80 layers), 1024 ranks;
* ranks: the 7B shape at 4 layers, mp 8 x dp 1 / 16 / 128 (8 / 128 / 1024 ranks).

* ``--configs``: issue 24's "Done when" configurations (:func:`configs_sweep`).

    .venv/bin/python bench/bench_dryrun_scale.py [--only layers|params|ranks] [--configs]
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from dryrun_child import run_dryrun

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "llama" / "dryrun_7b.py"
L70B = ["--hidden_size", "8192", "--num_heads", "64", "--n_kv_heads", "8", "--intermediate_size", "28672"]
L125M = ["--hidden_size", "768", "--num_heads", "12"]
SHAPES = {"125M": (12, L125M, 4), "7B": (32, [], 8), "70B": (80, L70B, 8)}     # layers, flags, mp
RANKS = 1024


def dryrun(layers: int, flags: list[str], dp: int, mp: int, pp: int = 1, rank: int = 0) -> dict:
    """One DryRun of rank ``rank`` of dp * mp * pp ranks in a fresh process: its CPU s, peak RSS and DryRun
    figures."""
    from ascendemu.cli.cluster import dryrun_figures

    child = run_dryrun(SCRIPT, ["--num_layers", str(layers), *flags, "--dp", str(dp), "--mp", str(mp), "--pp", str(pp)],
                       {"RANK_SIZE": str(dp * mp * pp), "RANK_ID": str(rank), "TE_PARALLEL_COMPILER": "1"})
    log = child.log
    params = re.search(r"([\d.]+) B parameters", log)
    figures = dryrun_figures(log)
    used = figures.get("used", "-") + ("(>HBM)" if "over_hbm" in figures else "")
    failed = re.search(r"step failed: .*", log)
    if failed:                        # the script's verdict (out of memory, or a bug): shown, not hidden
        print(failed.group(0)[:300], flush=True)
    return {"cpu_s": child.cpu_s, "rss_mib": child.rss_mib,
            "params_b": float(params.group(1)) if params else float("nan"), "used": used,
            "step": figures.get("step", "-"), "comm": figures.get("comm", "-"), "exposed": figures.get("exposed", "-")}


def row(label: str, r: dict, extra: str = "") -> None:
    print(f"{label:<28} {r['params_b']:7.2f} B {r['cpu_s']:8.1f} {r['rss_mib']:8.0f}  {r['used']:>14} "
          f"{r['step']:>13} {r['comm']:>12} {r['exposed']:>12}  {extra}", flush=True)


def header(title: str) -> None:
    print(f"\n{title}\n{'point':<28} {'params':>9} {'CPU s':>8} {'RSS MiB':>8}  {'used peak':>14} {'step':>13} "
          f"{'comm':>12} {'exposed':>12}", flush=True)


def layers_sweep() -> dict[int, dict]:
    header(f"Llama-2-70B shape on {RANKS} ranks (dp 128 x mp 8) vs layers; CPU s beside the line through 2 and 16")
    points = {}
    for n in (2, 4, 8, 16, 80):
        points[n] = dryrun(n, L70B, RANKS // 8, 8)
        extra = ""
        if 2 in points and 16 in points:
            slope = (points[16]["cpu_s"] - points[2]["cpu_s"]) / 14
            extra = f"linear: {points[2]['cpu_s'] + slope * (n - 2):.1f} s"
        row(f"{n} layers", points[n], extra)
    return points


def params_sweep(seventy: dict | None) -> None:
    header(f"parameters (Llama shapes, full depth) on {RANKS} ranks")
    for name, (layers, flags, mp) in SHAPES.items():
        r = seventy if name == "70B" and seventy is not None else dryrun(layers, flags, RANKS // mp, mp)
        row(f"{name}: {layers} layers, mp {mp}", r)


def ranks_sweep() -> None:
    header("ranks: Llama-2-7B shape, 4 layers, mp 8")
    for dp in (1, 16, 128):
        row(f"{dp * 8} ranks (dp {dp} x mp 8)", dryrun(4, [], dp, 8))


# issue 24's "Done when": Llama-2-7B (MindFormers' pretrain_llama2_7b.yaml: batch_size 1, optimizer shard on,
# recompute off) on 8 ranks, each layout plain / + optimizer shard / + shard and full recompute; pipelines with
# 4 micro-batches; the 70B shape on 1024 ranks (dp 16 x mp 8 x pp 8, 16 micro-batches), first and last stage.
# A pipeline's last stage also runs with the plain cell (`--train_cell plain`: _TrainGradAccuStepCell under a
# pipeline, Model.train's cell without a loss scale; its accu_grads on their stage, sliced as their weights).
FEATURES = {"plain": [], "shard": ["--optimizer_shard"], "shard+full": ["--optimizer_shard", "--recompute", "full"]}
LAYOUTS_7B = ((8, 1, 1), (1, 8, 1), (2, 2, 2))
PLAIN_CELL = ["--train_cell", "plain"]


def configs_sweep() -> None:
    header("issue 24 configurations: Llama-2-7B seq 4096 on 8 ranks (rank 0), 70B shape on 1024 ranks")
    for dp, mp, pp in LAYOUTS_7B:
        micro = ["--micro_batch_num", "4"] if pp > 1 else []
        for name, flags in FEATURES.items():
            row(f"7B {dp}x{mp}x{pp} {name}", dryrun(32, micro + flags, dp, mp, pp))
    row("7B 2x2x2 shard+full r7", dryrun(32, ["--micro_batch_num", "4", *FEATURES["shard+full"]], 2, 2, 2, 7))
    row("  same, plain cell", dryrun(32, ["--micro_batch_num", "4", *FEATURES["shard+full"], *PLAIN_CELL], 2, 2, 2, 7))
    flags = L70B + ["--micro_batch_num", "16", *FEATURES["shard+full"]]
    row("70B 16x8x8 shard+full r0", dryrun(80, flags, 16, 8, 8, 0))
    row("70B 16x8x8 shard+full r1023", dryrun(80, flags, 16, 8, 8, 1023))
    row("  same, plain cell", dryrun(80, flags + PLAIN_CELL, 16, 8, 8, 1023))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("layers", "params", "ranks"))
    parser.add_argument("--configs", action="store_true", help="only issue 24's configurations (configs_sweep)")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f} (1 min), CPU s = user + sys of the DryRun process")
    if args.configs:
        configs_sweep()
        return
    seventy = None
    if args.only in (None, "layers"):
        seventy = layers_sweep()[80]
    if args.only in (None, "params"):
        params_sweep(seventy)
    if args.only in (None, "ranks"):
        ranks_sweep()


if __name__ == "__main__":
    main()
