"""Host speed against real MindSpore's CPU back end, side by side in one run (issue 13's speed goals):

1. The first run of a model-zoo CNN script (bench/zoo_forward.py: the zoo's ResNet-18 CIFAR-10 and
   MobileNetV2, batch 32, 3 forward steps): the whole process, from an empty kernel cache (cold, what a
   new user waits for) and again with it filled (warm), against the same script on MindSpore CPU.
2. A LeNet-5 training step, batch 32 (Momentum; tests/fixtures/oracles/training/train_oracle.py, which
   runs unchanged on both): the steady-state step, as the difference of two whole runs of N1 and N2
   steps divided by N2 - N1, so start-up, graph compile and kernel builds cancel out.
3. A new user's first run over nine tutorial and zoo-style scripts (issue 21), each run unchanged on both:
   the three beginner tutorials (tests/fixtures/tutorials: quick_start, autograd, train; MNIST replaced by
   the tests' learnable MNIST-format stand-in, 1,024 + 256 images), LeNet-5 training (train_oracle.py,
   5 steps), ResNet-18 and MobileNetV2 forward (zoo_forward.py), a Transformer encoder layer, an LSTM and
   a GRAPH_MODE MLP under amp O2 (zoo_train.py, 3 training steps each). Per script, the whole process's
   CPU time (user + sys of the child and the build workers it waits for: getrusage(RUSAGE_CHILDREN)
   deltas) and wall time, ours from an empty kernel cache (cold), ours again (warm) and MindSpore's;
   the sums and their ratio; then, per script, the kernels the cold run built and their build CPU by
   op (the cache's .build.log), the costliest first.

The peer is a Python with real MindSpore: ``--peer-python`` (or $ASCENDEMU_PEER_PYTHON; it needs
numpy<2 beside mindspore, and pyyaml: the zoo's ResNet reads its config with it), else this interpreter
when it can import real MindSpore. Without one the recorded peer figures below are printed and named so.
Every figure is the best of ``--repeats`` runs (wall clock: a shared machine only adds time).

    python bench/bench_speed.py [--peer-python /path/to/python] [--repeats 2] [--only first-run|zoo|step]
                                [--scripts SUBSTRING ...]   (first-run rows whose name contains one)
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, NamedTuple

from ascendemu.cache.store import DIR_ENV as STORE_DIR_ENV, MODE_ENV as STORE_MODE_ENV

BENCH = Path(__file__).resolve().parent
TESTS = BENCH.parent / "tests"
TRAINING = TESTS / "fixtures" / "oracles" / "training"
NETS = ("resnet18", "mobilenetv2")
STEPS = (5, 45)                      # LeNet-5 runs whose difference is the steady-state step
# real MindSpore 2.10 CPU on this 2-core machine (2026-11-22), used when no peer Python is given
RECORDED_PEER = {"resnet18": 7.62, "mobilenetv2": 3.76, "lenet_step_ms": 75.0}


def timed(cmd: list[str], cwd: Path, env: dict | None = None) -> float:
    """Wall seconds of one whole process; fails loudly with its stderr."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return wall


def cpu_and_wall(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float]:
    """CPU seconds (user + sys of the child and every process it waited for, e.g. the kernel build
    workers) and wall seconds of one whole process; fails loudly with its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(cmd, cwd, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def ours(script: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "ascendemu", "run", "--quiet", script, *args]


def first_runs(work: Path, peer: str | None, repeats: int) -> None:
    print("First run of a model-zoo CNN script (bench/zoo_forward.py, batch 32, 3 forward steps; whole process, s)")
    print("| network | ours cold | ours warm | MindSpore CPU | cold / MindSpore |")
    print("|---|---|---|---|---|")
    script = str(BENCH / "zoo_forward.py")
    for net in NETS:
        cold = warm = float("inf")
        for _ in range(repeats):
            shutil.rmtree(work / "rank_0", ignore_errors=True)      # an empty kernel and graph cache
            cold = min(cold, timed(ours(script, net), work))
            warm = min(warm, timed(ours(script, net), work))
        if peer:
            theirs = min(timed([peer, script, net], work) for _ in range(repeats))
            label = f"{theirs:.2f}"
        else:
            theirs = RECORDED_PEER[net]
            label = f"{theirs:.2f} (recorded)"
        print(f"| {net} | {cold:.2f} | {warm:.2f} | {label} | {cold / theirs:.2f}x |")


def training_step(work: Path, peer: str | None, repeats: int) -> None:
    for name in ("train_oracle.py", "lenet_momentum.npz"):
        shutil.copyfile(TRAINING / name, work / name)
    n1, n2 = STEPS

    def step_ms(cmd_of) -> float:
        runs = {n: min(timed(cmd_of(n), work) for _ in range(repeats)) for n in (n1, n2)}
        return (runs[n2] - runs[n1]) / (n2 - n1) * 1e3

    mine = step_ms(lambda n: ours("train_oracle.py", "lenet_momentum", "Ascend", str(n)))
    if peer:
        theirs = step_ms(lambda n: [peer, "train_oracle.py", "lenet_momentum", "CPU", str(n)])
        label = f"{theirs:.1f}"
    else:
        theirs = RECORDED_PEER["lenet_step_ms"]
        label = f"{theirs:.1f} (recorded)"
    print(f"\nLeNet-5 training step, batch 32 (steady state: runs of {n1} and {n2} steps, ms/step)")
    print("| ours (O2, emulated 910A) | MindSpore CPU | ours / MindSpore |")
    print("|---|---|---|")
    print(f"| {mine:.1f} | {label} | {mine / theirs:.2f}x |")


class FirstRun(NamedTuple):
    """One script of the first-run table: its name, the script and arguments (ours add the device
    target where the script takes one) and what it needs in the work directory first."""
    name: str
    script: str
    args: tuple[str, ...]
    peer_args: tuple[str, ...]
    setup: Callable[[Path], None]


TUTORIAL_IMAGES = (1024, 256)          # learnable MNIST stand-in (train, test), as tests/test_tutorials.py
LENET_STEPS = "5"


def tutorial_setup(name: str) -> Callable[[Path], None]:
    def setup(work: Path) -> None:
        sys.path.insert(0, str(TESTS))
        from datafiles import learnable_mnist
        from test_tutorials import script
        (work / f"{name}.py").write_text(script(name))
        if not (work / "MNIST_Data").exists():
            learnable_mnist(work / "MNIST_Data", *TUTORIAL_IMAGES)
    return setup


def training_setup(work: Path) -> None:
    for name in ("train_oracle.py", "lenet_momentum.npz"):
        shutil.copyfile(TRAINING / name, work / name)


def nothing(work: Path) -> None:
    pass


FIRST_RUNS = (
    *(FirstRun(f"tutorial {t}", f"{t}.py", (), (), tutorial_setup(t)) for t in ("quick_start", "autograd", "train")),
    FirstRun("LeNet-5 training, 5 steps", "train_oracle.py", ("lenet_momentum", "Ascend", LENET_STEPS),
             ("lenet_momentum", "CPU", LENET_STEPS), training_setup),
    *(FirstRun(f"{n} forward", str(BENCH / "zoo_forward.py"), (n,), (n,), nothing) for n in NETS),
    *(FirstRun(f"{n} training", str(BENCH / "zoo_train.py"), (n,), (n,), nothing)
      for n in ("transformer", "lstm", "amp_mlp")),
)


BUILD_RANK_OPS = 6                   # ops named per script in the build ranking (the most CPU first)


def build_ranking(work: Path) -> str:
    """The cold run's kernel builds by op from the cache's ``.build.log``: entries and build CPU-s, total
    and the costliest ops (what to make dynamic-shape or cheaper next)."""
    from ascendemu.cache.entry import builds_by_op
    from ascendemu.cache.layout import KERNEL_META

    ops = builds_by_op(work / "rank_0" / KERNEL_META)
    count, cpu = sum(n for n, _ in ops.values()), sum(c for _, c in ops.values())
    top = ", ".join(f"{op} {n} / {c:.1f}" for op, (n, c) in list(ops.items())[:BUILD_RANK_OPS])
    return f"{count} | {cpu:.1f} | {top}"


def first_run_table(work: Path, peer: str | None, repeats: int, only: list[str] | None = None) -> None:
    """Per script: cold (nothing cached anywhere: the user's kernel store off), warm, cold again with the
    user's kernel store (cache/store.py) as the scripts before it in this table left it (empty at the
    table's start: a new user's first session of scripts, one after another), and the peer."""
    print("First run of nine tutorial and zoo-style scripts (whole process; CPU s = user + sys incl. build "
          f"workers; best of {repeats}; load {os.getloadavg()[0]:.1f})")
    print("| script | ours cold CPU / wall | ours warm CPU / wall | ours cold, store of the scripts above CPU / wall "
          "| MindSpore CPU / wall | cold / MindSpore (CPU) | cold with store / MindSpore |")
    print("|---|---|---|---|---|---|---|")
    store = work / "atc_data"
    shutil.rmtree(store, ignore_errors=True)
    session = {**os.environ, STORE_MODE_ENV: "enable", STORE_DIR_ENV: str(store)}
    total = {"cold": [0.0, 0.0], "warm": [0.0, 0.0], "store": [0.0, 0.0], "peer": [0.0, 0.0]}
    builds = []
    for case in FIRST_RUNS:
        if only and not any(part in case.name for part in only):
            continue
        case.setup(work)
        best = {key: (float("inf"), float("inf")) for key in total}
        runs = (("cold", ours(case.script, *case.args), None), ("warm", ours(case.script, *case.args), None),
                ("store", ours(case.script, *case.args), session),
                ("peer", [peer, case.script, *case.peer_args] if peer else None, None))
        for _ in range(repeats):
            for key, cmd, env in runs:
                if key in ("cold", "store"):
                    shutil.rmtree(work / "rank_0", ignore_errors=True)      # an empty kernel and graph cache
                if cmd is not None:
                    best[key] = min(best[key], cpu_and_wall(cmd, work, env))
                if key == "cold":
                    ranking = build_ranking(work)
        builds.append(f"| {case.name} | {ranking} |")
        for key, (cpu, wall) in best.items():
            total[key] = [total[key][0] + cpu, total[key][1] + wall]
        row = " | ".join(f"{c:.2f} / {w:.2f}" if c != float("inf") else "-" for c, w in best.values())
        ratio = f"{best['cold'][0] / best['peer'][0]:.2f}x | {best['store'][0] / best['peer'][0]:.2f}x" if peer \
            else "- | -"
        print(f"| {case.name} | {row} | {ratio} |", flush=True)
    sums = " | ".join(f"**{c:.1f} / {w:.1f}**" if c != float("inf") else "-" for c, w in total.values())
    ratio = (f"**{total['cold'][0] / total['peer'][0]:.2f}x** (warm {total['warm'][0] / total['peer'][0]:.2f}x) | "
             f"**{total['store'][0] / total['peer'][0]:.2f}x**" if peer else "- | -")
    print(f"| sum | {sums} | {ratio} |")
    print("\nKernels built by the (last) cold run, from the cache's .build.log (CPU-s in the building thread)")
    print("| script | kernels built | build CPU-s | costliest ops: kernels / CPU-s |")
    print("|---|---|---|---|")
    print("\n".join(builds))


def with_bytecode(prefix: Path) -> None:
    """Our runs import compiled bytecode, as an installed package's (pip compiles it; MindSpore's
    site-packages have it) whatever PYTHONDONTWRITEBYTECODE says here: the package is compiled once into
    ``prefix``, which every child then reads (without it each of our processes compiles ~300 modules
    from source, ~0.9 CPU-s)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-x", r"/(\.venv|tests|bench|tools|\.git)/",
                    str(BENCH.parent)], check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-python", default=os.environ.get("ASCENDEMU_PEER_PYTHON"),
                        help="a Python with real MindSpore (default: $ASCENDEMU_PEER_PYTHON)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--only", choices=("first-run", "zoo", "step"), help="one table only")
    parser.add_argument("--scripts", nargs="+", help="first-run rows whose name contains one of these")
    args = parser.parse_args()
    # cold means nothing cached anywhere: the user's kernel store is off but where a column says otherwise
    os.environ[STORE_MODE_ENV] = "disable"
    peer = args.peer_python
    if peer is None and importlib.util.find_spec("mindspore") is not None:
        peer = sys.executable                # real MindSpore here (ascendemu serves `mindspore` only under `run`)
    if peer and subprocess.run([peer, "-c", "import mindspore, yaml"], capture_output=True).returncode:
        raise SystemExit(f"{peer} cannot import mindspore and yaml; give a Python with real MindSpore (numpy<2, "
                         f"pyyaml)")
    print(f"peer: {'real MindSpore via ' + peer if peer else 'recorded figures (no --peer-python)'}; "
          f"best of {args.repeats} runs each\n")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with_bytecode(work / "pycache")
        if args.only in (None, "zoo"):
            first_runs(work, peer, args.repeats)
        if args.only in (None, "step"):
            training_step(work, peer, args.repeats)
        if args.only in (None, "first-run"):
            first_run_table(work, peer, args.repeats, args.scripts)


if __name__ == "__main__":
    main()
