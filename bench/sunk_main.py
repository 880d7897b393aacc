"""The command line bench/'s MindSpore-API network scripts share (unet.py, wide_deep.py, ncf.py): build the
network and one batch of its inputs, then train that batch ``--steps`` times in one sunk epoch, as the
zoo's train.py runs it (GRAPH_MODE, dataset sink mode). One home, so the scripts differ only in what
they build."""
import argparse

import mindspore as ms
import mindspore.dataset as ds
from mindspore import context


def train_sunk(description: str, build, default_batch: int, columns: list, label: str) -> None:
    """Parse ``--batch`` (default ``default_batch``) and ``--steps``; ``build(batch)`` -> (Model or training
    cell, input arrays named ``columns``); train them sunk and print one line naming ``label``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--batch", type=int, default=default_batch, help=f"batch size (default {default_batch})")
    parser.add_argument("--steps", type=int, default=2, help="sunk steps (default 2)")
    args = parser.parse_args()
    context.set_context(mode=context.GRAPH_MODE)
    model, batch = build(args.batch)
    model = model if isinstance(model, ms.Model) else ms.Model(model)
    data = ds.GeneratorDataset(lambda: (tuple(batch) for _ in range(args.steps)), columns)
    model.train(1, data, dataset_sink_mode=True)
    print(f"{label}: {args.steps} step(s), batch {args.batch}")
